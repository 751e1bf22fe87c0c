"""Custom autograd Functions (``agrad.autograd.Function``), against PyTorch's.

Each scenario is written once as ``scenario(torch)`` and run with ``import agrad as torch``
and with PyTorch itself (the oracle): values, gradients, which errors are raised. The two
tutorial-shaped tests mirror PyTorch's "polynomial with a custom Function" example (a
Legendre P3 Function fitted by gradient descent) and its "double backward with custom
Functions" tutorial; they are written for this repository, not copied.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from cube import cube

import agrad

torch = pytest.importorskip("torch")


def _array(x):
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return [_array(v) for v in x]
    if isinstance(x, (agrad.Tensor, torch.Tensor)):
        return np.array(x.detach().numpy(), dtype=np.float64)
    return x


def same(scenario, rtol=1e-6, atol=1e-9):
    """Run ``scenario`` with both libraries; every returned value must agree."""
    torch_before, agrad_before = torch.get_default_dtype(), agrad.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        expected = scenario(torch)
    finally:
        torch.set_default_dtype(torch_before)
    agrad.set_default_dtype(agrad.float64)
    try:
        got = scenario(agrad)
    finally:
        agrad.set_default_dtype(agrad_before)
    assert expected.keys() == got.keys()
    for key in expected:
        _agree(_array(expected[key]), _array(got[key]), key, rtol, atol)
    return got


def _agree(e, g, key, rtol, atol):
    if isinstance(e, list) and isinstance(g, list) and len(e) == len(g):
        for i, (ei, gi) in enumerate(zip(e, g, strict=True)):
            _agree(ei, gi, f"{key}[{i}]", rtol, atol)
    elif isinstance(e, (np.ndarray, float)) and not isinstance(e, bool):
        np.testing.assert_allclose(np.asarray(g, float), e, rtol=rtol, atol=atol, err_msg=key)
    else:
        assert g == e, key


def raises(fn):
    """The error's class name family: 'runtime' for RuntimeError (agrad's subclasses it)."""
    try:
        fn()
    except RuntimeError as exc:
        return "runtime: " + str(exc).split(" - ")[0][:60]
    except TypeError:
        return "type"
    return None


# ---- the tutorials ------------------------------------------------------------------------


def legendre_fit(torch):
    """Fit y = a + b·P3(c + d·x) to sin(x) with a hand-written P3 (PyTorch's polynomial
    example with a custom Function): the same losses and parameters step by step."""

    class P3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, u):
            ctx.save_for_backward(u)
            return 0.5 * (5 * u**3 - 3 * u)

        @staticmethod
        def backward(ctx, grad_output):
            (u,) = ctx.saved_tensors
            return grad_output * 1.5 * (5 * u**2 - 1)

    x = torch.linspace(-np.pi, np.pi, 500)
    y = torch.sin(x)
    a, b, c, d = (torch.full((), v, requires_grad=True) for v in (0.0, -1.0, 0.0, 0.3))
    losses = []
    for _ in range(150):
        y_pred = a + b * P3.apply(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= 2e-5 * p.grad
                p.grad = None
    return {"losses": losses, "params": [a, b, c, d]}


def test_the_legendre_fit_follows_pytorch_step_by_step():
    got = same(legendre_fit, rtol=1e-9)
    assert got["losses"][-1] < got["losses"][0] / 2  # it did learn


def double_backward(torch):
    """Functions whose backward is differentiable (saved input, saved output, saved
    intermediates as extra outputs) and one whose backward is itself a Function."""

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x

    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = torch.exp(x)
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, g):
            (result,) = ctx.saved_tensors
            return g * result

    class Sinh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            e, ne = torch.exp(x), torch.exp(-x)
            ctx.save_for_backward(e, ne)
            return (e - ne) / 2, e, ne

        @staticmethod
        def backward(ctx, g, g_e, g_ne):
            e, ne = ctx.saved_tensors
            return g * (e + ne) / 2 + g_e * e - g_ne * ne

    class CubeGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, g, x):
            ctx.save_for_backward(g, x)
            return g * 3 * x**2

        @staticmethod
        def backward(ctx, gg):
            g, x = ctx.saved_tensors
            return gg * 3 * x**2, gg * g * 6 * x

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return CubeGrad.apply(g, x)

    x = torch.tensor([0.3, -1.2, 2.0], requires_grad=True)
    out = {}
    for name, f in {"square": Square.apply, "exp": Exp.apply,
                    "sinh": lambda t: Sinh.apply(t)[0], "cube": Cube.apply}.items():  # fmt: skip
        y = f(x).sum()
        (g,) = torch.autograd.grad(y, x, create_graph=True)
        (gg,) = torch.autograd.grad(g.sum(), x)
        out[name], out[name + "''"] = g, gg
        out[name + " grad_fn"] = type(f(x).grad_fn).__name__
    out["gradcheck"] = torch.autograd.gradcheck(Square.apply, (x,))
    out["gradgradcheck"] = torch.autograd.gradgradcheck(Cube.apply, (x,))
    return out


def test_double_backward_through_custom_functions_matches_pytorch():
    got = same(double_backward)
    assert got["cube grad_fn"] == "CubeBackward"


# ---- ctx ----------------------------------------------------------------------------------


def ctx_facts(torch):
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor, w=None):
            ctx.factor = factor
            ctx.save_for_backward(x, w)
            return x * factor if w is None else x * factor * w

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            need = ctx.needs_input_grad
            gx = g * ctx.factor * (1 if w is None else w) if need[0] else None
            gw = g * ctx.factor * x if w is not None and need[2] else None
            return gx, None, gw

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, -1.0])
    y = Scale.apply(x, 2.5, w)
    y2 = Scale.apply(x, 2.5)  # the default w=None is bound, as PyTorch does
    (y.sum() + y2.sum()).backward()
    edges = [None if n is None else type(n).__name__ for n, _ in y.grad_fn.next_functions]
    with torch.no_grad():
        untracked = Scale.apply(x, 2.0)
    return {
        "y": y, "x.grad": x.grad, "needs": y.grad_fn.needs_input_grad, "edges": edges,
        "factor on grad_fn": y.grad_fn.factor, "untracked requires grad": untracked.requires_grad,
        "untracked grad_fn": untracked.grad_fn,
    }  # fmt: skip


def test_ctx_attributes_needs_input_grad_and_defaults_as_pytorch():
    same(ctx_facts)


def several_outputs(torch):
    class Split(torch.autograd.Function):
        @staticmethod
        def forward(x, n):  # the newer form: no ctx here, setup_context below
            return x * 2, n, (x * x).sum(), torch.argmax(x)

        @staticmethod
        def backward(ctx, g2, g_n, g_sq, g_idx):
            ctx.seen = (g2 is None, g_n is None, g_sq is None, g_idx is None)
            return g2 * 2 + g_sq * 2 * ctx.saved_x, None

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.saved_x = inputs[0]
            ctx.mark_non_differentiable(output[3])

    class Lazy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x + 1, x - 1

        @staticmethod
        def backward(ctx, ga, gb):
            ctx.seen = (ga is None, gb is None)
            return (ga if ga is not None else 0) + (-gb if gb is not None else 0)

    x = torch.tensor([0.5, 3.0, -1.0], requires_grad=True)
    doubled, n, sq, idx = Split.apply(x, 7)
    sq.backward(retain_graph=True)  # only the third output: the others get zeros (or None)
    first = x.grad.clone()
    (doubled * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    out = {
        "first": first, "both": x.grad, "n": n, "idx": idx, "idx requires": idx.requires_grad,
        "nrs": [doubled.output_nr, sq.output_nr], "seen": doubled.grad_fn.seen,
        "shared grad_fn": doubled.grad_fn is sq.grad_fn,
    }  # fmt: skip
    a, b = Lazy.apply(x)
    (gb,) = torch.autograd.grad(b.sum(), x)
    out["lazy"], out["lazy seen"] = gb, b.grad_fn.seen
    # retain_grad and hooks on one output of several; grad with respect to an output
    d2, _, s2, _ = Split.apply(x, 1)
    d2.retain_grad()
    s2.register_hook(lambda g: g * 10)
    (d2.sum() * 3 + s2).backward()
    out["retained"], out["hooked x.grad"] = d2.grad, x.grad
    d3, _, s3, _ = Split.apply(x, 1)
    loss = (d3 * s3).sum()
    out["grad wrt outputs"] = list(torch.autograd.grad(loss, [s3, d3]))
    return out


def test_several_outputs_non_differentiable_and_materialize_as_pytorch():
    same(several_outputs)


def large_outputs(torch):
    """Outputs big enough that the nodes consuming them keep only their shapes."""

    class Pair(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            return ga * 2 + gb * 3

    x = torch.linspace(-1, 1, 5000, requires_grad=True)
    a, b = Pair.apply(x)
    (a.sum() + (b * b).sum()).backward()
    return {"x.grad": x.grad}


def test_outputs_of_a_function_reach_it_through_stand_ins():
    same(large_outputs)


def broadcast_and_dtype(torch):
    class ExpandedGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return g.expand(4, 3)  # a shape x broadcasts to: summed back, as PyTorch

    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float32, requires_grad=True)
    ExpandedGrad.apply(x).backward()
    return {"grad": x.grad, "dtype": str(x.grad.dtype).split(".")[-1]}


def test_a_broadcast_gradient_is_summed_back_and_keeps_the_inputs_dtype():
    same(broadcast_and_dtype)


def batched(torch):
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * g

    def f(x):
        return Cube.apply(x) * torch.tensor([1.0, 2.0, 3.0])

    x = torch.tensor([0.5, -1.0, 2.0])
    jac = torch.autograd.functional.jacobian(f, x, vectorize=True)
    hess = torch.autograd.functional.hessian(lambda t: f(t).sum(), x)
    return {"jacobian": jac, "hessian": hess}


def test_jacobian_rows_and_hessians_through_a_function():
    same(batched)


# ---- errors, as PyTorch raises them -------------------------------------------------------


def errors(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)

    def make(backward, forward=lambda ctx, t, *rest: t * 2):
        return type("F", (torch.autograd.Function,), {
            "forward": staticmethod(forward), "backward": staticmethod(backward)})  # fmt: skip

    class Saves(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return 2 * t * g

    class Dirty(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            t.mul_(2)
            ctx.mark_dirty(t)
            return t

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    def twice():
        y = Saves.apply(x).sum()
        y.backward()
        y.backward()

    def twice_nothing_saved():
        y = make(lambda ctx, g: g * 2).apply(x).sum()
        y.backward()
        y.backward()

    def written_after_saving():
        t = x.clone()
        y = Saves.apply(t)
        t.add_(1)
        y.sum().backward()

    dirty = x.clone()
    Dirty.apply(dirty)
    return {
        "too many": raises(lambda: make(lambda ctx, g: (g, g)).apply(x).sum().backward()),
        "extra None ok": raises(lambda: make(lambda ctx, g: (g, None)).apply(x).sum().backward()),
        "bad shape": raises(lambda: make(lambda ctx, g: g[:1]).apply(x).sum().backward()),
        "scalar for vector": raises(lambda: make(lambda ctx, g: g.sum()).apply(x).sum().backward()),
        "grad for a number": raises(
            lambda: make(lambda ctx, g: (g, torch.ones(1)), lambda ctx, t, n: t * n)
            .apply(x, 3).sum().backward()
        ),
        "twice": raises(twice),
        "twice, nothing saved": raises(twice_nothing_saved),
        "written after saving": raises(written_after_saving),
        "dirty leaf": raises(lambda: Dirty.apply(x)),
        "dirty value": dirty,
        "dirty grad_fn": type(dirty.grad_fn).__name__,
        "legacy call": raises(lambda: make(lambda ctx, g: g)()(x)),
        "save a number": raises(
            lambda: make(lambda ctx, g: g, lambda ctx, t: ctx.save_for_backward(3)).apply(x)
        ),
    }  # fmt: skip


def test_misuse_raises_where_pytorch_raises():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        got = same(errors)
    assert got["too many"].startswith("runtime: function FBackward returned an incorrect number")
    assert got["bad shape"] == "runtime: Function FBackward returned an invalid gradient at index 0"


def test_once_differentiable_refuses_the_second_derivative_as_pytorch():
    def scenario(torch):
        once = torch.autograd.function.once_differentiable

        class Sq(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @once
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g

        x = torch.tensor([1.5, -2.0], requires_grad=True)
        # The gradient arriving at Sq depends on x, so its result would need a derivative.
        (g,) = torch.autograd.grad((Sq.apply(x) * x).sum(), x, create_graph=True)
        # A constant arriving gradient: the result is a constant (nothing to refuse).
        (c,) = torch.autograd.grad(Sq.apply(x).sum(), x, create_graph=True)
        return {"g": g, "requires": g.requires_grad, "c requires": c.requires_grad,
                "second": raises(lambda: g.sum().backward())}  # fmt: skip

    got = same(scenario)
    assert got["second"].startswith("runtime: trying to differentiate twice")


# ---- checking a Function: gradcheck and agrad check --python -------------------------------


WRONG_BY_ONE_PERCENT = """
import agrad as torch

class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2 * SCALE

def loss(x):
    return Cube.apply(x).sum()
"""


@pytest.mark.parametrize("scale, code", [("1.0", 0), ("1.01", 1)])
def test_agrad_check_python_judges_a_custom_function(cli, tmp_path, monkeypatch, scale, code):
    source = textwrap.dedent(WRONG_BY_ONE_PERCENT).replace("SCALE", scale)
    (tmp_path / "layer.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    result = cli(["check", "--python", "layer.py:loss", "--set", "x=[0.5, -1.5, 2.0]"])
    assert "Traceback" not in result.err
    assert result.code == code, result.out + result.err
    if code:
        assert "x: fail" in result.out


@pytest.mark.parametrize("scale, ok", [(1.0, True), (1.01, False), (-1.0, False)])
def test_gradcheck_passes_a_right_function_and_catches_a_wrong_one(scale, ok):
    Cube = cube(agrad, scale)
    x = agrad.tensor([0.5, -1.5, 2.0], dtype=agrad.float64, requires_grad=True)
    assert agrad.autograd.gradcheck(Cube.apply, (x,), raise_exception=False) is ok
