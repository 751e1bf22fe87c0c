"""`agrad.records.record` behaves as `dataclasses.dataclass` for what agrad uses of it.

Each behaviour is checked against a real dataclass of the same declaration (the oracle):
construction from positional and keyword arguments, the errors of a wrong call, defaults
and per-instance factories, init=False fields set by __post_init__, repr, equality,
hashing (frozen: by value; else none), frozen assignment, and replace.
"""

from __future__ import annotations

import dataclasses
import itertools
import subprocess
import sys

import pytest

from agrad import records
from agrad.records import field, record


def _pair(frozen: bool):
    """The same declaration as a dataclass and as a record."""

    def declare(decorate, make_field):
        @decorate
        class Point:
            x: int
            y: int = 2
            tags: list = make_field(default_factory=list)
            norm: int = make_field(init=False, default=0)

            def __post_init__(self) -> None:
                object.__setattr__(self, "norm", abs(self.x) + abs(self.y))

        return Point

    dc = declare(dataclasses.dataclass(frozen=frozen), dataclasses.field)
    rc = declare(record(frozen=frozen), field)
    return dc, rc


def _outcome(cls, args, kwargs):
    try:
        obj = cls(*args, **kwargs)
    except TypeError:
        return "TypeError"
    return ("ok", obj.x, obj.y, obj.tags, obj.norm, repr(obj).split("(", 1)[1])


ARGS = [(), (1,), (1, 3), (1, 3, ["a"]), (1, 3, ["a"], 9)]
KWARGS = [{}, {"x": 5}, {"y": 7}, {"tags": [1]}, {"norm": 4}, {"z": 1}, {"x": 1, "y": 1}]


@pytest.mark.parametrize("frozen", [False, True])
def test_construction_matches_dataclasses(frozen):
    dc, rc = _pair(frozen)
    for args, kwargs in itertools.product(ARGS, KWARGS):
        assert _outcome(rc, args, kwargs) == _outcome(dc, args, kwargs), (args, kwargs)


@pytest.mark.parametrize("frozen", [False, True])
def test_equality_hash_and_factories_match_dataclasses(frozen):
    dc, rc = _pair(frozen)
    for cls in (dc, rc):
        a, b, c = cls(1), cls(1), cls(2)
        assert a == b and a != c and (a == 1) is False
        assert a.tags is not b.tags  # a factory per instance
        with pytest.raises(TypeError):  # unfrozen: unhashable; frozen: a list field
            hash(a)
    if frozen:
        for cls in (dc, rc):
            with pytest.raises(AttributeError):
                cls(1).x = 3
            with pytest.raises(AttributeError):
                del cls(1).x


def test_a_frozen_record_hashes_by_value_as_a_frozen_dataclass():
    for decorate in (dataclasses.dataclass(frozen=True), record(frozen=True)):

        @decorate
        class Key:
            a: int
            b: str = "s"

        assert hash(Key(1)) == hash(Key(1, "s")) and {Key(1): 0}[Key(1)] == 0
        assert Key(1) != Key(2)


def test_replace_runs_post_init_again_as_dataclasses_does():
    dc, rc = _pair(True)
    for cls, replace in ((dc, dataclasses.replace), (rc, records.replace)):
        moved = replace(cls(1, 3), x=-10)
        assert (moved.x, moved.y, moved.norm) == (-10, 3, 13)


def test_a_required_field_after_a_default_is_refused_like_dataclasses():
    with pytest.raises(TypeError):

        @record
        class Bad:
            a: int = 1
            b: int


def test_the_start_up_path_defines_no_dataclass():
    # Every command imports these modules; a dataclass among them costs 1-4 ms of start-up.
    script = (
        "import dataclasses\n"
        "made = []\n"
        "real = dataclasses._process_class\n"
        "def spy(cls, *a, **k):\n"
        "    made.append(cls.__module__ + '.' + cls.__qualname__)\n"
        "    return real(cls, *a, **k)\n"
        "dataclasses._process_class = spy\n"
        "import agrad.cli.app, agrad.lang.session, agrad.cli.render.common\n"
        "import agrad.engine.functional\n"
        "print([m for m in made if m.startswith('agrad')])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
