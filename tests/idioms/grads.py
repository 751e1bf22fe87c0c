"""torch.autograd.grad / backward docstrings and the higher-order, anomaly, profiler and
forward-mode examples of PyTorch's docs and tutorials."""

from __future__ import annotations

from ._registry import idiom, raised, val, vals


@idiom("PyTorch autograd.grad docstring: several outputs and inputs, grad_outputs")
def grads_multiple_inputs(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor([3.0, 4.0], requires_grad=True)
    out = x * y + x**2
    gx, gy = torch.autograd.grad(out, (x, y), grad_outputs=torch.ones(2))
    return {"gx": val(gx), "gy": val(gy), "x_grad_untouched": x.grad}


@idiom("PyTorch autograd.grad docstring: allow_unused=True gives None, materialize_grads zeros")
def grads_allow_unused(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    unused = torch.tensor([5.0], requires_grad=True)
    out = (x**2).sum()
    exc = raised(lambda: torch.autograd.grad(out, (x, unused), retain_graph=True))
    g = torch.autograd.grad(out, (x, unused), allow_unused=True, retain_graph=True)
    m = torch.autograd.grad(out, (x, unused), materialize_grads=True)
    return {"refused": isinstance(exc, RuntimeError), "allow": vals(g), "materialized": vals(m)}


@idiom(
    "PyTorch forum and tutorials: a gradient penalty, grad(..., create_graph=True) then backward"
)
def grads_gradient_penalty(torch):
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = torch.tanh(w * x).sum()
    (g,) = torch.autograd.grad(out, x, create_graph=True)
    penalty = (g.norm(2) - 1) ** 2
    penalty.backward()
    return {"g": val(g), "w_grad": val(w.grad)}


@idiom("PyTorch autograd docs: second derivative of x**3 by grad of grad")
def grads_second_derivative(torch):
    x = torch.tensor(3.0, requires_grad=True)
    y = x**3
    (dy,) = torch.autograd.grad(y, x, create_graph=True)
    (d2y,) = torch.autograd.grad(dy, x)
    return {"dy": dy.item(), "d2y": d2y.item()}


@idiom("PyTorch autograd docs: Hessian-vector product by double backward")
def grads_hessian_vector_double_backward(torch):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = torch.tensor([1.0, 0.0, -1.0])
    f = (x**2 * x.roll(1)).sum()
    (g,) = torch.autograd.grad(f, x, create_graph=True)
    (hv,) = torch.autograd.grad(g, x, grad_outputs=v)
    return {"hv": val(hv)}


@idiom("PyTorch autograd.backward docstring: torch.autograd.backward(tensors, grad_tensors)")
def grads_autograd_backward_function(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y1 = x * 2
    y2 = (x**2).sum()
    torch.autograd.backward([y1, y2], [torch.tensor([1.0, 1.0]), torch.tensor(1.0)])
    return {"grad": val(x.grad)}


@idiom("PyTorch Tensor.backward docstring: inputs= restricts which leaves accumulate")
def grads_backward_inputs(torch):
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    (a * b).sum().backward(inputs=[a])
    return {"a": val(a.grad), "b": val(b.grad)}


@idiom("PyTorch autograd.gradcheck docstring: double inputs, eps and atol, fast_mode")
def grads_gradcheck_docstring(torch):
    def fn(a, b):
        return (a * b.sin()).sum(), a.exp()

    inputs = (
        torch.linspace(0.1, 1.0, 4).requires_grad_(),
        torch.linspace(-1.0, 1.0, 4).requires_grad_(),
    )
    ok = torch.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-4)
    fast = torch.autograd.gradcheck(fn, inputs, fast_mode=True)
    return {"ok": ok, "fast": fast}


@idiom("PyTorch autograd.gradcheck docstring: a wrong backward raises GradcheckError")
def grads_gradcheck_catches_wrong_backward(torch):
    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.cos() * 1.01

    x = torch.linspace(0.1, 1.0, 3).requires_grad_()
    quiet = torch.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)
    exc = raised(lambda: torch.autograd.gradcheck(Wrong.apply, (x,)))
    return {"quiet": quiet, "raised": type(exc).__name__}


@idiom("PyTorch autograd.detect_anomaly docstring: a nan in backward names the forward op")
def grads_detect_anomaly(torch):
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    with torch.autograd.detect_anomaly():
        y = torch.sqrt(x) * 0.0
        exc = raised(lambda: (y.sum()).backward())
    return {"raised": isinstance(exc, RuntimeError), "returned_nan": "nan" in str(exc)}


@idiom("PyTorch autograd.set_detect_anomaly docstring: as a function and a context manager")
def grads_set_detect_anomaly(torch):
    before = torch.is_anomaly_enabled()
    with torch.autograd.set_detect_anomaly(True):
        inside = torch.is_anomaly_enabled()
    return {"flags": [before, inside, torch.is_anomaly_enabled()]}


@idiom("PyTorch autograd.profiler.profile docstring: key_averages().table() over y = x ** 2")
def grads_profiler(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.autograd.profiler.profile() as prof:
        for _ in range(10):
            y = x**2
            y.sum().backward()
    table = prof.key_averages().table(sort_by="self_cpu_time_total")
    return {"has_pow": "aten::pow" in table}


@idiom("PyTorch forward_ad tutorial (forward_ad_usage.py): make_dual, unpack_dual in dual_level")
def grads_forward_ad(torch):
    fwAD = torch.autograd.forward_ad

    primal = torch.tensor([0.5, 1.0, 2.0])
    tangent = torch.tensor([1.0, 0.0, 1.0])
    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        dual_output = torch.sin(dual_input) * dual_input
        jvp = fwAD.unpack_dual(dual_output).tangent
    return {"jvp": val(jvp)}


@idiom("PyTorch jacobians_hessians tutorial: torch.func.jacrev and hessian on a small function")
def grads_torch_func(torch):
    grad, hessian, jacrev = torch.func.grad, torch.func.hessian, torch.func.jacrev

    def f(x):
        return (x.sin() * x).sum()

    x = torch.tensor([0.5, 1.0, 2.0])
    return {"grad": val(grad(f)(x)), "jac": val(jacrev(torch.sin)(x)), "hess": val(hessian(f)(x))}


@idiom("PyTorch autograd docs: backward on a non-scalar is refused; sum() or a gradient fixes it")
def grads_nonscalar_backward(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    exc = raised(y.backward)
    y.backward(torch.ones_like(y), retain_graph=True)
    y.sum().backward()
    return {"message": str(exc), "grad": val(x.grad)}


@idiom("PyTorch Tensor.backward docs: retain_graph=True lets a graph be walked twice")
def grads_retain_graph_twice(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (x.sin() * x).sum()
    loss.backward(retain_graph=True)
    first = val(x.grad)
    loss.backward()
    return {"first": first, "accumulated": val(x.grad)}
