"""A program run's settings (its --dtype, --seed and --max-elements) belong to the thread
that runs it, while the Python API's default dtype is process-global as PyTorch's is
(checked against PyTorch below): a float32 session in one thread must not make another
thread's tensors float32, bound its allocations, or reseed its generator.

Each test holds one thread inside a run (its input's ``__array__`` waits on an event,
which NumPy calls while the run converts its bindings) and looks from another thread,
so an overlap is certain, not left to the scheduler."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest
from conftest import require_torch

import agrad
from agrad.lang import gcpause
from agrad.lang.gcpause import paused_gc
from agrad.lang.program import Program


class _Held:
    """An input whose conversion to an array waits until the test releases it."""

    def __init__(self, value):
        self.value = np.asarray(value, dtype=np.float64)
        self.inside = threading.Event()
        self.release = threading.Event()

    def __array__(self, dtype=None, copy=None):
        self.inside.set()
        self.release.wait(10)
        return self.value if dtype is None else self.value.astype(dtype)


def _run_held(source, held, results, **options):
    def body():
        results["run"] = Program.compile(source).run({"x": held}, **options)

    worker = threading.Thread(target=body)
    worker.start()
    assert held.inside.wait(10), "the run never converted its input"
    return worker


@pytest.fixture
def default_float64():
    agrad.set_default_dtype(agrad.float64)
    yield
    agrad.set_default_dtype(agrad.float64)


def test_the_default_dtype_is_process_global_as_in_pytorch(default_float64):
    torch = require_torch()
    seen = {}

    def worker(lib, key, dtype):
        lib.set_default_dtype(dtype)
        seen[key] = lib.get_default_dtype()

    before = torch.get_default_dtype()
    try:
        thread = threading.Thread(target=worker, args=(torch, "torch", torch.float64))
        thread.start()
        thread.join(10)
        torch_after = torch.tensor(1.0).dtype  # the thread's choice reached this thread
    finally:
        torch.set_default_dtype(before)
    thread = threading.Thread(target=worker, args=(agrad, "agrad", agrad.float32))
    thread.start()
    thread.join(10)
    assert torch_after == torch.float64 and seen["torch"] == torch.float64
    assert agrad.tensor(1.0).dtype == agrad.float32  # the same for agrad
    assert str(agrad.get_default_dtype()) == "torch.float32"


def test_a_float32_session_does_not_reach_another_thread(default_float64):
    held, results = _Held([1.0, 2.0]), {}
    worker = _run_held("x * 2 + 1", held, results, dtype=np.float32)
    try:
        # While the other thread's float32 run is under way, this thread keeps float64:
        assert agrad.get_default_dtype() == agrad.float64
        assert agrad.tensor([1.0]).dtype == agrad.float64
        mine = Program.compile("x * 2 + 1").run({"x": [1.0, 2.0]}).output
        assert mine.dtype == agrad.float64
    finally:
        held.release.set()
        worker.join(10)
    assert results["run"].output.dtype == agrad.float32
    assert results["run"].output.tolist() == [3.0, 5.0]
    assert agrad.get_default_dtype() == agrad.float64  # and nothing is left changed


def test_a_session_reads_its_own_dtype_not_the_one_another_thread_sets(default_float64):
    held, results = _Held([0.5]), {}
    worker = _run_held("y = x * 3; ones(2)", held, results, dtype=np.float64)
    try:
        agrad.set_default_dtype(agrad.float32)  # the process's default, mid-run
    finally:
        held.release.set()
        worker.join(10)
    assert results["run"].output.dtype == agrad.float64


def test_a_sessions_element_limit_does_not_bound_another_thread():
    held, results = _Held([1.0]), {}
    worker = _run_held("x * ones(3)", held, results, max_elements=10)
    try:
        assert agrad.zeros(1000).shape == (1000,)  # the Python API sets no limit
        big = agrad.ones(40, 40) @ agrad.ones(40, 40)
        assert float(big[0, 0]) == 40.0
    finally:
        held.release.set()
        worker.join(10)
    assert results["run"].output.tolist() == [1.0, 1.0, 1.0]


def test_a_seeded_run_neither_reseeds_nor_shares_another_threads_generator():
    alone = Program.compile("x * 0 + randn(3)").run({"x": [0.0]}, seed=3).output.tolist()
    agrad.manual_seed(5)
    expected = [agrad.randn(2).tolist() for _ in range(2)]
    held, results = _Held([0.0]), {}
    agrad.manual_seed(5)
    first = agrad.randn(2).tolist()
    worker = _run_held("x * 0 + randn(3)", held, results, seed=3)
    try:
        second = agrad.randn(2).tolist()  # drawn while the seeded run is under way
    finally:
        held.release.set()
        worker.join(10)
    assert [first, second] == expected
    assert results["run"].output.tolist() == alone


def test_overlapping_collector_pauses_restore_the_collector_once_all_end(monkeypatch):
    monkeypatch.setattr(gcpause, "_ALLOWED", [True])  # as in the CLI's process
    assert gc.isenabled()
    a, b = paused_gc(), paused_gc()
    a.__enter__()
    b.__enter__()
    a.__exit__(None, None, None)
    assert not gc.isenabled()  # the other run is still inside its pause
    b.__exit__(None, None, None)
    assert gc.isenabled()
