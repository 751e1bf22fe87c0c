"""A backward must be linear in its cotangent (grad_output), and the check must see it.

A claim assembled from one-hot cotangents (a single-number output: the cotangent 1)
cannot tell a backward that forgets grad_output (`return 2*x`), squares it (`g*g*2*x`)
or adds a constant from a right one; in use (`0.5 * SumSq.apply(x)`) their gradients are
wrong. Both passed agrad's gradcheck and `agrad check --python` (QA, 2026-12-02; PyTorch's
gradcheck fails the first, its fast mode the second). Now one VJP with a random cotangent
must equal the cotangent times the claimed Jacobian.

Oracles: each wrong backward's gradient in a composed use (computed here, in agrad and in
PyTorch alike) differs from the true one, by algebra; right backwards, written the same
way, pass in agrad and in PyTorch.
"""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

import agrad
from agrad.autograd.gradcheck import GradcheckError

# backward bodies: (x saved, g the cotangent) -> the gradient; the forward is sum(x**2)
# for a single-number output, x**2 for a vector one.
WRONG = {
    "forgets g": "2 * x",
    "squares g": "g * g * 2 * x",
    "adds a constant": "g * 2 * x + 1e-3",
    "uses |g|": "g.abs() * 2 * x",
}
RIGHT = {"g times 2x": "g * 2 * x", "2x times g": "2 * x * g"}


def _function(lib, body: str, scalar: bool):
    namespace: dict = {}
    forward = "(x ** 2).sum()" if scalar else "x ** 2"
    code = f"""
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return {forward}

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return {body}
    """
    exec(textwrap.dedent(code), {"lib": lib}, namespace)  # test-side source, written here
    return namespace["F"]


def _libraries():
    libs = [agrad]
    try:
        import torch

        libs.append(torch)
    except ImportError:  # pragma: no cover - the oracle is installed in CI
        pass
    return libs


@pytest.mark.parametrize("scalar", [True, False], ids=["scalar", "vector"])
@pytest.mark.parametrize("bug", sorted(WRONG))
def test_the_wrong_backward_is_wrong_in_use(bug, scalar):
    # The independent reason these must fail: composed with -0.5*, the gradient is not -x.
    for lib in _libraries():
        fn = _function(lib, WRONG[bug], scalar)
        x = lib.tensor([0.5, 1.5, -2.0], dtype=lib.float64, requires_grad=True)
        (-0.5 * fn.apply(x)).sum().backward()
        assert not np.allclose(np.asarray(x.grad.tolist()), [-0.5, -1.5, 2.0], rtol=1e-6)


@pytest.mark.parametrize("fast", [False, True], ids=["slow", "fast"])
@pytest.mark.parametrize("scalar", [True, False], ids=["scalar", "vector"])
@pytest.mark.parametrize("bug", sorted(WRONG))
def test_gradcheck_fails_a_backward_not_linear_in_its_cotangent(bug, scalar, fast):
    fn = _function(agrad, WRONG[bug], scalar)
    x = agrad.tensor([0.5, 1.5, -2.0], dtype=agrad.float64, requires_grad=True)
    assert not agrad.autograd.gradcheck(fn.apply, (x,), fast_mode=fast, raise_exception=False)
    with pytest.raises(Exception, match="grad_output"):
        agrad.autograd.gradcheck(fn.apply, (x,), fast_mode=fast)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("fast", [False, True], ids=["slow", "fast"])
@pytest.mark.parametrize("scalar", [True, False], ids=["scalar", "vector"])
@pytest.mark.parametrize("body", sorted(RIGHT))
def test_a_right_backward_passes(body, scalar, fast, dtype):
    fn = _function(agrad, RIGHT[body], scalar)
    rng = np.random.default_rng(3)
    x = agrad.tensor(rng.standard_normal(7), dtype=getattr(agrad, dtype), requires_grad=True)
    assert agrad.autograd.gradcheck(fn.apply, (x,), fast_mode=fast, raise_exception=False,
                                    atol=1e-3 if dtype == "float32" else 1e-5)  # fmt: skip


@pytest.mark.parametrize("m", [3, 64, 65, 200])
@pytest.mark.parametrize("fast", [False, True], ids=["slow", "fast"])
def test_many_outputs_right_passes_and_squared_fails(m, fast):
    x = agrad.tensor(np.linspace(-2, 2, m), dtype=agrad.float64, requires_grad=True)
    right, wrong = _function(agrad, "g * 2 * x", False), _function(agrad, "g * g * 2 * x", False)
    assert agrad.autograd.gradcheck(right.apply, (x,), fast_mode=fast, raise_exception=False)
    assert not agrad.autograd.gradcheck(wrong.apply, (x,), fast_mode=fast, raise_exception=False)


def test_long_chains_of_agrad_ops_round_within_the_allowance(check_json):
    # A right backward through many ops rounds differently for each cotangent: it must not
    # be taken for a nonlinear one (a 60-op chain, outputs of very different sizes).
    program = "y = x\n" + "y = sin(y) * 0.9 + cos(y) * 0.3\n" * 20 + "exp(3*y) * 1e6 + y"
    report = check_json("--wrt", "x", "--set", f"x={np.linspace(-1, 1, 9).tolist()}", program)
    assert report["ok"], report["variables"]["x"]["verdict"]


CLI_AGRAD = """
import agrad as torch

class SumSq(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x ** 2).sum()

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return BODY

def loss(x):
    return SumSq.apply(x)
"""


@pytest.mark.parametrize("lib", ["agrad", "torch"])
@pytest.mark.parametrize("body, ok", [("2 * x", False), ("grad_output * 2 * x", True)])
@pytest.mark.parametrize("fast", [False, True], ids=["slow", "fast"])
def test_check_python_sees_a_forgotten_grad_output(cli, tmp_path, monkeypatch, lib, body, ok,
                                                    fast):  # fmt: skip
    if lib == "torch":
        pytest.importorskip("torch")
    source = CLI_AGRAD.replace("BODY", body).replace("import agrad as torch", f"import {lib} "
                                                     "as torch" if lib == "torch" else
                                                     "import agrad as torch")  # fmt: skip
    (tmp_path / "loss.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    argv = ["check", "--python", "loss.py:loss", "--set", "x=[0.5,1.5,-2]", "--format", "json"]
    result = cli([*argv, *(["--fast"] if fast else [])])
    assert result.code == (0 if ok else 1), result.err
    report = json.loads(result.out)
    assert report["ok"] is ok
    if not ok:
        assert report["variables"]["x"]["diagnosis"]["kind"] == "cotangent"


# QA round 28: a backward linear only for small cotangents, or wrong only at zero. In use,
# 3 * F(x) sends the cotangent 3 (clipped to 1: a third of the gradient), and an output
# multiplied by 0, or unused beside another, sends 0 (the gradient must then be 0).
ONLY_SOMETIMES = {
    "clips g to [-1, 1]": ("g.clamp(-1, 1) * 2 * x", 3.0),
    "clips g above 1": ("g.clamp(max=1) * 2 * x", 3.0),
    "clips g below -1": ("g.clamp(min=-1) * 2 * x", -3.0),
    "gives ones for a zero g": ("torch.ones_like(x) if bool((g == 0).all()) else g * 2 * x", 0.0),
    # (QA round 29: clipping at 4 or 10 and zeroing small cotangents passed beside ±5|w|)
    "clips g to [-10, 10]": ("g.clamp(-10, 10) * 2 * x", 30.0),
    "zeroes g below 1e-3": ("torch.where(g.abs() < 1e-3, 0 * g, g) * 2 * x", 1e-4),
}


@pytest.mark.parametrize("scalar", [True, False], ids=["scalar", "vector"])
@pytest.mark.parametrize("bug", sorted(ONLY_SOMETIMES))
def test_a_backward_wrong_only_for_some_cotangents_is_wrong_in_use(bug, scalar):
    body, factor = ONLY_SOMETIMES[bug]
    for lib in _libraries():  # (PyTorch computes the same wrong gradient in use)
        fn = _function(lib, body.replace("torch.", "lib."), scalar)
        x = lib.tensor([0.5, 1.5, -2.0], dtype=lib.float64, requires_grad=True)
        (factor * fn.apply(x)).sum().backward()
        assert not np.allclose(np.asarray(x.grad.tolist()), factor * 2 * np.array([0.5, 1.5, -2.0]))


@pytest.mark.parametrize("fast", [False, True], ids=["slow", "fast"])
@pytest.mark.parametrize("scalar", [True, False], ids=["scalar", "vector"])
@pytest.mark.parametrize("bug", sorted(ONLY_SOMETIMES))
def test_gradcheck_fails_a_backward_wrong_only_for_some_cotangents(bug, scalar, fast):
    fn = _function(agrad, ONLY_SOMETIMES[bug][0].replace("torch.", "lib."), scalar)
    x = agrad.tensor([0.5, 1.5, -2.0], dtype=agrad.float64, requires_grad=True)
    for undefined in (True, False):  # (the zero cotangent is tested either way)
        assert not agrad.autograd.gradcheck(fn.apply, (x,), fast_mode=fast,
                                            check_undefined_grad=undefined,
                                            raise_exception=False)  # fmt: skip


@pytest.mark.parametrize("bug", sorted(ONLY_SOMETIMES))
def test_check_python_fails_a_backward_wrong_only_for_some_cotangents(cli, tmp_path, monkeypatch,
                                                                      bug):  # fmt: skip
    body = f"(lambda g: {ONLY_SOMETIMES[bug][0]})(grad_output)"
    (tmp_path / "loss.py").write_text(CLI_AGRAD.replace("BODY", body))
    monkeypatch.chdir(tmp_path)
    result = cli(["check", "--python", "loss.py:loss", "--set", "x=[0.5,1.5,-2]",
                  "--format", "json"])  # fmt: skip
    assert result.code == 1, result.err
    assert json.loads(result.out)["variables"]["x"]["diagnosis"]["kind"] == "cotangent"


RIGHT_BUT_FRAGILE = """
import agrad as torch

class Iterative(torch.autograd.Function):  # converges to 3g, leaving 1e-21 at g = 0
    @staticmethod
    def forward(ctx, a):
        return a * 3.0

    @staticmethod
    def backward(ctx, g):
        v = torch.ones_like(g) * 1e-3
        for _ in range(60):
            v = v - 0.5 * (v - 3.0 * g)
        return v

class Exp(torch.autograd.Function):  # e^x as g·e^2x/e^x: overflows for |g| > 2 at 354.85
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.exp(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.exp(2 * x) / torch.exp(x)

def iterative(x):
    return Iterative.apply(x)

def exp(x):
    return Exp.apply(x).sum()
"""


@pytest.mark.parametrize(("name", "point"), [("iterative", "[0.3, -1.2]"), ("exp", "[354.85]")])
def test_a_right_backward_fragile_at_the_new_cotangents_passes(cli, tmp_path, monkeypatch,
                                                               name, point):  # fmt: skip
    # (QA round 29: both failed as "not linear in grad_output"; PyTorch passes the second)
    (tmp_path / "f.py").write_text(RIGHT_BUT_FRAGILE)
    monkeypatch.chdir(tmp_path)
    result = cli(["check", "--python", f"f.py:{name}", "--set", f"x={point}"])
    assert result.code == 0, result.out


def test_a_float32_backward_of_large_gradients_rounds_as_float32(cli, tmp_path, monkeypatch):
    # gradients 2.7e7 and 1.9e7, whole numbers in float32 (from 2^23 up): the backward's
    # float32 rounding was taken for float64's and it "was not linear" (QA round 29)
    source = CLI_AGRAD.replace("(x ** 2).sum()", "(x ** 3).sum()").replace(
        "BODY", "(grad_output.float() * 3 * x.float() ** 2).double()")  # fmt: skip
    (tmp_path / "loss.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    result = cli(["check", "--python", "loss.py:loss", "--set", "x=[3000.5, 2500.25]"])
    assert result.code == 0, result.out


@pytest.mark.parametrize("fn", [
    lambda x: (x - x.mean()).sum(),  # a zero gradient autograd leaves as residues of 1e-16
    lambda x: agrad.nn.functional.layer_norm(x, (4,)).sum(),
])  # fmt: skip
def test_a_zero_gradients_residues_are_not_taken_for_a_nonlinear_backward(fn):
    # (QA round 30: "with a large positive cotangent it gives -4.4e-16 ... is 0")
    x = agrad.tensor([[0.1, 0.2, 0.7, -0.3]], dtype=agrad.float64, requires_grad=True)
    try:
        agrad.autograd.gradcheck(fn, (x,))
    except GradcheckError as exc:  # (undecided is possible there)
        assert "not linear" not in str(exc), str(exc)


def test_a_float32_backward_whole_jacobian_and_relative_noise_pass():
    # a float32 backward of 3·x (its claims whole numbers), and a backward whose noise is
    # relative to its cotangent within nondet_tol (QA round 30; PyTorch passes both)
    def make(noise):
        class F(agrad.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return 3 * x

            @staticmethod
            def backward(ctx, g):
                out = (g.float() * 3).double()
                return out * (1 + noise * float(np.random.default_rng().standard_normal()))

        return F.apply

    x = agrad.tensor([0.3, -1.7, 2.2], dtype=agrad.float64, requires_grad=True)
    assert agrad.autograd.gradcheck(make(0.0), (x,))
    assert agrad.autograd.gradcheck(make(1e-9), (x,), nondet_tol=1e-7, atol=1e-5)
