"""gradcheck's replay of the recorded graph (`agrad.check.recorded`): used only where the
recording proves the graph is the function, and never a weaker check.

The oracle of which gradients are right is PyTorch (its gradcheck in float64 on the same
function, written once for both libraries) and algebra; agrad's own output never sets an
expectation. Each lost gradient is also checked with the replay's defences switched off
one by one: every layer alone still catches it, and with all of them off the replay
would pass it (so the tests are not vacuous).
"""

from __future__ import annotations

import copy
import textwrap

import numpy as np
import pytest
from cube import cube

import agrad
import agrad.check.callables as callables
import agrad.check.recorded as recorded
from agrad.check.callables import AgradCallableTarget
from agrad.check.checker import check_target
from agrad.check.options import CheckOptions
from agrad.check.verdict import PASS
from agrad.engine.escapes import ESCAPES

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")

X = [0.3, -1.2, 2.0, 0.7]


def _bisection_sqrt(T):
    """sqrt(x) by bisection on Python bools: the result reaches x only as a fraction of
    it, so autograd's gradient is that fraction, not 1/(2 sqrt x) (lost through bool)."""

    def f(x):
        lo, hi = x * 0, x * 1
        for _ in range(40):
            mid = (lo + hi) / 2
            if mid * mid > x:
                hi = mid
            else:
                lo = mid
        return mid.sum()

    return f


# (name, the function of the library T, whether the recorded graph is the function)
RIGHT = {
    "sin_x2": (lambda T: lambda x: (x.sin() * x**2).sum(), True),
    "softmax": (
        lambda T: lambda x: (T.softmax(x, dim=0) * T.arange(4.0, dtype=x.dtype)).sum(),
        True,
    ),  # fmt: skip
    "vector": (lambda T: lambda x: T.exp(x) * x[0], True),
    # A mask or indices read from the values are constants of the recording (a replay
    # cannot see the jumps they make: tests/test_gradcheck_derived_values.py): called.
    "where": (lambda T: lambda x: T.where(x > 0, x * x, T.tanh(x)).sum(), False),
    "max_dim": (lambda T: lambda x: x.reshape(2, 2).max(dim=1).values.sum() * x.sum(), False),
    "relu": (lambda T: lambda x: (T.relu(x) * x).sum(), True),  # a kink the replay recomputes
    "in_place": (lambda T: _in_place, True),
    "branch_far": (lambda T: lambda x: (x**2).sum() if x.sum() > 0 else (x**3).sum(), False),
    "printed": (lambda T: _printed, False),
}


def _in_place(x):  # torch-style in-place edits the graph records
    y = x * 1
    y.mul_(x)
    y[0] = y[1] * 3
    y[2:].add_(x[:2].sin())
    return y.sum()


def _printed(x):  # a value read into Python that changes nothing
    s = x.sum()
    _ = f"{s.item():.3f}"
    return (x * x).sum()


WRONG = {
    "detach": lambda T: lambda x: (x * x.detach()).sum(),
    "item": lambda T: lambda x: (x * x.sum().item()).sum(),
    "float": lambda T: lambda x: (x * float(x[0])).sum(),
    "numpy": lambda T: lambda x: (x * T.tensor(x.detach().numpy() ** 2)).sum(),
    "tolist": lambda T: lambda x: (x * T.tensor(x.tolist())).sum(),
    "data": lambda T: lambda x: (x * x.data).sum(),
    "no_grad": lambda T: _no_grad(T),
    "bisection": _bisection_sqrt,
    "inner_grad": lambda T: _inner_grad(T),
    "deepcopy": lambda T: lambda x: (x * copy.deepcopy(x)).sum(),  # a separate leaf
    "in_place_unrecorded": lambda T: _in_place_unrecorded(T),
}


def _in_place_unrecorded(T):
    def f(x):  # a torch-style in-place edit made where no graph records it
        y = x * 1
        with T.no_grad():
            y[0] = x[1] * 3
        return (y * x).sum()

    return f


def _no_grad(T):
    def f(x):
        with T.no_grad():
            s = (x * x).sum()
        return x.sum() * s

    return f


def _inner_grad(T):
    def f(x):  # an inner gradient without create_graph is a constant to autograd
        (g,) = T.autograd.grad((x**3).sum(), x)
        return (g * x).sum()

    return f


def _inputs(values=X, dtype=np.float64):
    array = np.array(values, dtype=dtype)
    return (agrad.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True))


def _path(f, x) -> str:
    target = AgradCallableTarget(f, (x,))
    target.function(target.names[0])
    return "replay" if target._replay[0] is not None else "calls"


def _torch_verdict(f, x, **kw) -> bool:
    return torch.autograd.gradcheck(f, (x,), raise_exception=False, **kw)


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("name", list(RIGHT))
def test_right_gradients_pass_as_in_pytorch_and_replay_only_when_proved(name, fast):
    make, replayable = RIGHT[name]
    xa, xt = _inputs([0.3, -1.2, 2.0, 0.7] if name != "bisection" else [2.0])
    assert _torch_verdict(make(torch), xt, fast_mode=fast)
    assert agrad.autograd.gradcheck(make(agrad), (xa,), fast_mode=fast)
    assert _path(make(agrad), xa) == ("replay" if replayable else "calls")


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("name", list(WRONG))
def test_lost_gradients_fail_as_in_pytorch_and_are_never_replayed(name, fast):
    xa, xt = _inputs([2.0] if name == "bisection" else X)
    assert not _torch_verdict(WRONG[name](torch), xt, fast_mode=fast)
    f = WRONG[name](agrad)
    assert not agrad.autograd.gradcheck(f, (xa,), fast_mode=fast, raise_exception=False)
    assert _path(f, xa) == "calls"


# ---- each defence alone -------------------------------------------------------------------


def _never_moved():
    import contextlib

    @contextlib.contextmanager
    def quiet():
        yield lambda: False

    return quiet


LAYERS = ["escapes", "same_tape", "cross_check", "ladder_samples"]


def _switch_off(monkeypatch, layers):
    if "escapes" in layers:
        monkeypatch.setattr(callables, "escapes", _never_moved())
    if "same_tape" in layers:
        monkeypatch.setattr(callables, "same_tape", lambda a, b: True)
    if "cross_check" in layers:
        monkeypatch.setattr(recorded.Replay, "cross_check", lambda self, *a: True)
    if "ladder_samples" in layers:
        monkeypatch.setattr(recorded, "SAMPLES", 0)
        monkeypatch.setattr(recorded.Replay, "checked_batch",
                            lambda self, k: (self.batch(k), lambda points: None))  # fmt: skip


# An inner autograd.grad and a deep copy move no counter (the value is copied inside the
# engine, or by Python): the second recording and the cross-checks catch them.
UNCOUNTED = {"inner_grad", "deepcopy"}
ALONE = [(name, layer) for name in ["detach", "item", "no_grad", "inner_grad", "data", "deepcopy"]
         for layer in LAYERS if not (name in UNCOUNTED and layer == "escapes")]  # fmt: skip


@pytest.mark.parametrize("name, kept", ALONE)
def test_each_defence_alone_catches_a_lost_gradient(monkeypatch, name, kept):
    _switch_off(monkeypatch, [layer for layer in LAYERS if layer != kept])
    xa, _ = _inputs()
    assert not agrad.autograd.gradcheck(WRONG[name](agrad), (xa,), raise_exception=False)
    assert not agrad.autograd.gradcheck(WRONG[name](agrad), (xa,), raise_exception=False,
                                        fast_mode=True)  # fmt: skip


def test_with_every_defence_off_the_replay_would_pass_a_lost_gradient(monkeypatch):
    """What the defences are for: the bare replay agrees with autograd's own view."""
    _switch_off(monkeypatch, LAYERS)
    xa, _ = _inputs()
    assert agrad.autograd.gradcheck(WRONG["detach"](agrad), (xa,), raise_exception=False)


def test_a_replay_caught_disagreeing_mid_check_starts_the_variable_again(monkeypatch):
    """Proof and up-front cross-check off: a ladder point checked against a real call
    raises ReplayMismatch, and the variable is checked again by calling the function."""
    _switch_off(monkeypatch, ["escapes", "same_tape", "cross_check"])
    xa, _ = _inputs()
    target = AgradCallableTarget(WRONG["item"](agrad), (xa,))
    report = check_target(target, CheckOptions())
    assert target._replay[0] is not None and not report.ok
    assert report.variables["input 0"].diagnosis is not None


# ---- the replay's verdicts are the calls' verdicts -------------------------------------------


def _kink_near(x):
    return (x - 1e-9).abs().sum() + (x * x).sum()


def _jump_near(x):
    return (x**2).sum() if x.sum() > 0 else (x**2).sum() + 1.0


SAME_VERDICTS = {
    "sin_x2": (RIGHT["sin_x2"][0](agrad), X, np.float64),
    "vector": (RIGHT["vector"][0](agrad), X, np.float64),
    "kink_near": (_kink_near, [0.0, 1.0, -2.0], np.float64),
    "kink_at": (lambda x: x.relu().sum() * x[1], [0.0, 1.0, -2.0], np.float64),
    "jump_near": (_jump_near, [0.5, -0.5 + 1e-9], np.float64),
    "float32": (lambda x: (agrad.tanh(x) * x).sum(), X, np.float32),
    "float32_vector": (lambda x: agrad.exp(x) * x.sum(), X, np.float32),
    "pole_near": (lambda x: (1 / (x - 2.0 + 1e-7)).sum(), [1.0, 2.0], np.float64),
    # kinks a replay would hide (a comparison's mask, max's indices are constants of the
    # tape, read from the values): the calls decide; amax's forward is re-run (np.amax),
    # so a near tie is replayed
    "mask_near": (lambda x: (x * (x > 0)).sum(), [1e-9, 1.0, -2.0], np.float64),
    "where_near": (lambda x: agrad.where(x > 0, x, 0.5 * x).sum(), [1e-9, 1.0], np.float64),
    "max_tie_near": (
        lambda x: x.reshape(2, 2).max(dim=1).values.sum(),
        [1.0, 1.0 + 1e-9, 0.5, -0.5],
        np.float64,
    ),  # fmt: skip
    "amax_tie_near": (
        lambda x: x.reshape(2, 2).amax(dim=1).sum(),
        [1.0, 1.0 + 1e-9, 0.5, -0.5],
        np.float64,
    ),  # fmt: skip
}


CALLED = {"jump_near", "mask_near", "where_near", "max_tie_near"}  # replays refused


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("name", list(SAME_VERDICTS))
def test_the_replay_judges_every_element_as_the_calls_do(monkeypatch, name, fast):
    f, values, dtype = SAME_VERDICTS[name]
    options = CheckOptions(fast=fast)

    def run():
        x = agrad.tensor(np.array(values, dtype=dtype), requires_grad=True)
        target = AgradCallableTarget(f, (x,))
        return target, check_target(target, options).variables["input 0"]

    replayed_target, replayed = run()
    monkeypatch.setattr(AgradCallableTarget, "_record_replay", lambda self: None)
    _, called = run()
    assert replayed.ok == called.ok
    np.testing.assert_array_equal(replayed.verdicts, called.verdicts)
    np.testing.assert_array_equal(replayed.reasons, called.reasons)
    assert (replayed_target._replay[0] is None) == (name in CALLED)


# ---- custom Functions: the user's own code, called point by point -------------------------------


def _cube(T, scale):
    Cube = cube(T, scale)
    return lambda x: Cube.apply(x).sin().sum()


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("scale", [1.0, 1.01, -1.0, 1.001])
def test_custom_functions_are_called_and_judged_as_pytorch_judges_them(scale, dtype, fast):
    """Right when the backward is 3x² (algebra); PyTorch agrees except at 0.1% off, which
    its rtol of 1e-3 lets through (a false pass of PyTorch's, not an expectation)."""
    xa, _ = _inputs(dtype=dtype)
    _, xt = _inputs()  # PyTorch's verdict in float64: its float32 gradcheck is unreliable
    right = scale == 1.0
    if scale != 1.001:
        assert _torch_verdict(_cube(torch, scale), xt, fast_mode=fast) is right
    f = _cube(agrad, scale)
    assert agrad.autograd.gradcheck(f, (xa,), fast_mode=fast, raise_exception=False) is right
    assert _path(f, xa) == "calls"


def test_random_draws_are_never_replayed():
    xa, _ = _inputs()
    assert _path(lambda x: (x * agrad.rand(4, dtype=x.dtype)).sum(), xa) == "calls"
    seeded = agrad.Generator().manual_seed(0)
    assert _path(lambda x: (x * agrad.rand(4, generator=seeded, dtype=x.dtype)).sum(),
                 xa) == "calls"  # fmt: skip


def test_a_function_with_state_of_its_own_is_never_replayed():
    calls = [0]

    def f(x):
        calls[0] += 1
        return x.sum() * calls[0]

    xa, _ = _inputs()
    assert _path(f, xa) == "calls"
    assert not agrad.autograd.gradcheck(f, (xa,), raise_exception=False)


def test_gradgradcheck_agrees_with_pytorch_through_the_same_machinery():
    for scale, expected in ((1.0, True), (1.01, False)):

        def first(T, s=scale):
            return lambda x: (x.sin() * x).sum() if s == 1.0 else _cube(T, s)(x)

        xa, xt = _inputs()
        assert torch.autograd.gradgradcheck(first(torch), (xt,), raise_exception=False) is expected
        assert agrad.autograd.gradgradcheck(first(agrad), (xa,), raise_exception=False) is expected


# ---- the escape counter ----------------------------------------------------------------------

ESCAPING = {
    "item": lambda x: x.sum().item(),
    "tolist": lambda x: x.tolist(),
    "numpy": lambda x: x.detach().numpy(),
    "array": lambda x: np.asarray(x.detach()),
    "bool": lambda x: bool(x.sum() > 0),
    "float": lambda x: float(x[0]),
    "int": lambda x: int(x[0]),
    "detach": lambda x: x.detach(),
    "data": lambda x: x.data,
    "tensor": lambda x: agrad.tensor(x),
    "randn": lambda x: agrad.randn(3),
    "randint": lambda x: agrad.randint(0, 3, (2,)),
    "dropout": lambda x: agrad.nn.functional.dropout(x, 0.5, training=True),
    # values read to make what the graph does not record (masks, indices, integers)
    "comparisons": lambda x: agrad.where(x > 0, x, -x) + (x >= 0).sum(),
    "argmax": lambda x: x.argmax(),
    "max_dim": lambda x: x.reshape(2, 2).max(dim=1).values,
    "sort": lambda x: x.sort().values,
    "argsort": lambda x: x.argsort(),
    "topk": lambda x: x.topk(2).values,
    "kthvalue": lambda x: x.kthvalue(2).values,
    "median": lambda x: x.median(),
    "quantile": lambda x: agrad.quantile(x, 0.5),
    "cummax": lambda x: x.cummax(0).values,
    "nonzero": lambda x: (x * 1).nonzero(),
    "long": lambda x: x.long(),
    "isnan": lambda x: x.isnan(),
    "isclose": lambda x: agrad.isclose(x, x * 1),
    "signbit": lambda x: x.signbit(),
    "fmax": lambda x: agrad.fmax(x, x * 0.5),
    "searchsorted": lambda x: agrad.searchsorted(agrad.tensor([0.0, 1.0]), x),
    "unique": lambda x: agrad.unique(x),
    "count_nonzero": lambda x: agrad.count_nonzero(x),
}

STAYING = {
    "arithmetic": lambda x: (x.sin() * x + 2) / 3,
    "reductions": lambda x: x.sum() + x.mean() + x.max() + x.std(),
    "indexing": lambda x: x[1:] * x[0] + x[[0, 1]].sum(),
    "shapes": lambda x: x.reshape(2, 2).T @ x.reshape(2, 2),
    "in_place": lambda x: (x * 1).mul_(2).add_(x),
    "nn": lambda x: agrad.nn.functional.softmax(x, dim=0) + agrad.relu(x),
}


@pytest.mark.parametrize("name", list(ESCAPING))
def test_every_way_a_value_leaves_the_graph_moves_the_counter(name):
    x = agrad.tensor(X, requires_grad=True)
    before = ESCAPES[0]
    ESCAPING[name](x)
    assert ESCAPES[0] > before


@pytest.mark.parametrize("name", list(STAYING))
def test_ops_that_stay_in_the_graph_leave_the_counter_alone(name):
    x = agrad.tensor(X, requires_grad=True)
    before = ESCAPES[0]
    STAYING[name](x)
    assert ESCAPES[0] == before


# ---- agrad check --python: the same machinery --------------------------------------------------

LOST = """
import agrad as torch

def loss(x):
    return (x * x.detach()).sum()

def right(x):
    return (x * x).sum()
"""


@pytest.mark.parametrize("name, code", [("right", 0), ("loss", 1)])
def test_agrad_check_python_replays_only_what_is_proved(cli, tmp_path, monkeypatch, name, code):
    (tmp_path / "lost.py").write_text(textwrap.dedent(LOST))
    monkeypatch.chdir(tmp_path)
    result = cli(["check", "--python", f"lost.py:{name}", "--set", "x=[0.5, -1.5, 2.0]"])
    assert result.code == code, result.out + result.err
    assert "Traceback" not in result.err


# ---- calls with grad mode off: a stand-in proved, then checked, like the replay ----------------

N = 40  # enough elements that the check outlives callables.LONG points and uses them


def _long(seed=1):
    array = np.random.default_rng(seed).uniform(-2, 2, N)
    return agrad.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)


@pytest.mark.parametrize("scale", [1.0, 1.01])
def test_a_custom_function_called_without_grad_mode_is_judged_as_with_it(scale):
    modes: list[bool] = []

    def f(x, T=agrad):
        modes.append(T.is_grad_enabled())
        return _cube(T, scale)(x)

    xa, xt = _long()
    assert _torch_verdict(lambda x: f(x, torch), xt) is (scale == 1.0)
    modes.clear()
    assert agrad.autograd.gradcheck(f, (xa,), raise_exception=False) is (scale == 1.0)
    assert False in modes and True in modes  # the stand-in took over from real calls


def test_a_function_that_reads_grad_mode_is_called_with_it_on():
    """Its value differs with grad mode off: the stand-in is refused (used, it would be a
    false alarm: the numeric side would differentiate another function)."""

    def f(x, T=agrad):
        scale = 2.0 if T.is_grad_enabled() else 3.0
        return _cube(T, 1.0)(x) * scale

    xa, xt = _long()
    assert _torch_verdict(lambda x: f(x, torch), xt)
    assert agrad.autograd.gradcheck(f, (xa,))


def test_a_function_that_differentiates_inside_is_called_with_grad_mode_on():
    def f(x, T=agrad):
        y = _cube(T, 1.0)(x)
        (g,) = T.autograd.grad(y, x, create_graph=True)
        return (g * g).sum()

    xa, xt = _long()
    assert _torch_verdict(lambda x: f(x, torch), xt)
    assert agrad.autograd.gradcheck(f, (xa,))


def test_a_stand_in_caught_disagreeing_mid_check_gives_way_to_real_calls(monkeypatch):
    """Proved at the base only, a stand-in that differs elsewhere is caught by the ladder's
    sampled points, and the variable is checked again with real calls: it passes, as the
    function with grad mode on (the one autograd differentiates) is right."""
    monkeypatch.setattr(callables, "PERTURBED", 0)  # the base only
    xa, _ = _long()
    base = xa.detach().numpy().copy()

    def f(x):
        values = x.detach().numpy()  # (a value read into Python: never replayed)
        off = 0.0 if agrad.is_grad_enabled() or np.array_equal(values, base) else 1e-3
        return (x * x).sum() + off * x.sum()

    assert agrad.autograd.gradcheck(f, (xa,))
    monkeypatch.setattr(recorded, "SAMPLES", 0)
    monkeypatch.setattr(callables, "checked", lambda run, real: (run, lambda points: None))
    assert not agrad.autograd.gradcheck(f, (xa,), raise_exception=False)  # what it guards


def test_a_proof_that_fails_to_run_leaves_the_check_to_real_calls(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("the tape cannot be built")

    monkeypatch.setattr(callables, "Tape", broken)
    xa, _ = _inputs()
    assert _path(RIGHT["sin_x2"][0](agrad), xa) == "calls"
    assert agrad.autograd.gradcheck(RIGHT["sin_x2"][0](agrad), (xa,))
    assert not agrad.autograd.gradcheck(WRONG["detach"](agrad), (xa,), raise_exception=False)


@pytest.mark.parametrize("at", range(12))
def test_a_mask_boundary_within_the_first_step_of_any_element_is_never_replayed(at):
    """The proof's points move every coordinate by exactly the ladder's first step, both
    ways: a comparison's mask that flips within it (here a jump at element ``at``, which
    the tape holds as a constant) is always crossed, whatever the element."""
    values = np.linspace(-2.0, 2.0, 12)
    values[at] = 1e-9 if at % 2 else 0.0  # at the jump, or just past it
    x = agrad.tensor(values, requires_grad=True)
    f = lambda v: (v + (v > 0)).sum()  # noqa: E731
    assert _path(f, x) == "calls"
    report = check_target(AgradCallableTarget(f, (x,)), CheckOptions()).variables["input 0"]
    if at % 2 == 0:  # at the jump itself, no derivative: not passed
        assert report.verdicts[0, at] != PASS


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("scale", [1.0, 1.01])
def test_several_inputs_and_outputs_and_a_0d_input_as_in_pytorch(scale, fast):
    """A 0-d and a vector input, two outputs: replayed when plain, called when one output
    goes through a custom Function; a wrong backward fails either way."""

    def make(T, custom):
        def f(a, b):
            second = _cube(T, scale)(b * a) if custom else ((b * a) ** 3).sin().sum()
            return a * b.sin(), second

        return f

    values = (0.7, [0.3, -1.0, 2.0])
    a, b = (agrad.tensor(v, dtype=agrad.float64, requires_grad=True) for v in values)
    at, bt = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values)
    expected = scale == 1.0
    assert torch.autograd.gradcheck(make(torch, True), (at, bt), fast_mode=fast,
                                    raise_exception=False) is expected  # fmt: skip
    got = agrad.autograd.gradcheck(make(agrad, True), (a, b), fast_mode=fast, raise_exception=False)
    assert got is expected
    assert agrad.autograd.gradcheck(make(agrad, False), (a, b), fast_mode=fast)
    target = AgradCallableTarget(make(agrad, False), (a, b))
    target.function("input 0")
    assert target._replay[0] is not None


def test_no_input_requiring_grad_raises_pytorchs_value_error():
    torch = pytest.importorskip("torch")
    texts = []
    for lib in (torch, agrad):
        x = lib.zeros(2, dtype=lib.float64)
        with pytest.raises(ValueError) as raised:
            lib.autograd.gradcheck(lambda a: a * 2, (x,))
        texts.append(str(raised.value))
    assert texts[0] == texts[1]
