"""Random number generators: `Generator` (PyTorch's ``torch.Generator``) over NumPy's.

Seeded runs repeat, but the numbers are NumPy's PCG64 stream, not PyTorch's Mersenne
Twister: the same seed gives other values than in PyTorch. ``agrad.manual_seed`` seeds
the default generator and returns it, as PyTorch's does.

NumPy's generator is made when the first number is drawn, not when seeding: importing
agrad then costs no ``numpy.random`` (about 9 ms), and re-seeding before each run of a
program that draws nothing (``agrad fit`` does, every step) costs next to nothing.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from .escapes import ESCAPES


class Generator:
    """A seedable source of random numbers: ``g = agrad.Generator().manual_seed(42)``,
    then ``agrad.randn(3, generator=g)``."""

    _initial: int
    _numpy: np.random.Generator | None  # made from _initial on first use

    def __init__(self, device: Any = "cpu") -> None:
        self.device = device
        self.seed()

    @property
    def numpy(self) -> np.random.Generator:
        """The NumPy generator this one draws from (made from the seed on first use)."""
        if self._numpy is None:
            self._numpy = np.random.default_rng(self._initial)
        return self._numpy

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from ``seed``; returns the generator (for chaining)."""
        self._initial = int(seed)
        self._numpy = None
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy; returns the seed chosen."""
        self.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)  # 63 random bits
        return self._initial

    def initial_seed(self) -> int:
        return self._initial

    def get_state(self) -> dict:
        """The stream's state (NumPy's bit-generator state: not PyTorch's byte tensor)."""
        return dict(self.numpy.bit_generator.state)

    def set_state(self, state: dict) -> Generator:
        self.numpy.bit_generator.state = state
        return self

    def __repr__(self) -> str:
        return f"<agrad.Generator object at {id(self):#x}>"


default_generator = Generator()


class _Session(threading.local):
    """The generator a seeded program run draws from, in its own thread only: two threads
    running seeded programs must each get their seed's numbers, and neither may reseed the
    process's `default_generator` under the Python API's feet."""

    generator: Generator | None = None


_SESSION = _Session()


class session_seed:  # lower case: used as `with session_seed(seed):`
    """Within the block, this thread draws from a generator seeded with ``seed`` (None:
    from the default generator, as outside).
    (A class, not a generator function, and no entropy drawn for a generator about to be
    seeded: every run of a program enters it, ``agrad fit`` ten thousand times.)"""

    __slots__ = ("seed", "previous")

    def __init__(self, seed: int | None) -> None:
        self.seed = seed

    def __enter__(self) -> None:
        if self.seed is None:
            return
        seeded = Generator.__new__(Generator)
        seeded.device = "cpu"
        self.previous, _SESSION.generator = _SESSION.generator, seeded.manual_seed(self.seed)

    def __exit__(self, *exc: object) -> None:
        if self.seed is not None:
            _SESSION.generator = self.previous


def numpy_rng(generator: Generator | None = None) -> np.random.Generator:
    """The NumPy generator to draw from: ``generator``'s, else the session's or the default
    one."""
    ESCAPES[0] += 1  # a draw: a replay of the graph would repeat it (see escapes.py)
    if generator is None:
        return (_SESSION.generator or default_generator).numpy
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be an agrad.Generator, got {type(generator).__name__}")
    return generator.numpy


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (randn, rand, randint, ...); returns it, as PyTorch does."""
    return default_generator.manual_seed(seed)


def initial_seed() -> int:
    return default_generator.initial_seed()
