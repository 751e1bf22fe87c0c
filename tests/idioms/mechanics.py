"""PyTorch docs, notes/autograd.rst ("Autograd mechanics") and the Tensor docstrings it cites."""

from __future__ import annotations

import warnings

from ._registry import idiom, raised, val


@idiom('PyTorch notes "Autograd mechanics", "requires_grad": a = x + y; b = a + z')
def mechanics_requires_grad_propagates(torch):
    x = torch.ones(5, 5)
    y = torch.zeros(5, 5)
    z = torch.full((5, 5), 3.0, requires_grad=True)
    a = x + y
    b = a + z
    return {"a": a.requires_grad, "b": b.requires_grad, "b_leaf": b.is_leaf, "a_leaf": a.is_leaf}


@idiom('PyTorch notes "Autograd mechanics", "Setting requires_grad" on a non-leaf raises')
def mechanics_set_requires_grad_on_nonleaf(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2

    def unset():
        y.requires_grad = False

    exc = raised(unset)
    return {"is_runtime_error": isinstance(exc, RuntimeError), "message": str(exc)}


@idiom('PyTorch notes "Autograd mechanics", "Inference Mode": tensors made there need no grad')
def mechanics_inference_mode(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.inference_mode():
        y = x * x
    return {"requires_grad": y.requires_grad, "value": val(y), "enabled": torch.is_grad_enabled()}


@idiom('PyTorch notes "Autograd mechanics", "In-place correctness checks": version counter')
def mechanics_inplace_on_saved_output(torch):
    a = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    b = a.sigmoid()
    b.mul_(2)
    exc = raised(lambda: b.sum().backward())
    return {
        "is_runtime_error": isinstance(exc, RuntimeError),
        "modified_inplace": "modified by an inplace operation" in str(exc),
    }


@idiom('PyTorch notes "Autograd mechanics", in-place on a leaf that requires grad')
def mechanics_inplace_on_leaf(torch):
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    exc = raised(lambda: w.add_(1))
    return {"is_runtime_error": isinstance(exc, RuntimeError), "message": str(exc)}


@idiom('PyTorch notes "Autograd mechanics", "Saved tensors": y.grad_fn._saved_result.equal(y)')
def mechanics_saved_result(torch):
    x = torch.tensor([0.5, 1.5], requires_grad=True)
    y = x.pow(2)
    z = x.exp()
    return {
        "self_is_x": y.grad_fn._saved_self is x,
        "exponent": y.grad_fn._saved_exponent,
        "result_equal": z.grad_fn._saved_result.equal(z),
        "result_is_z": z.grad_fn._saved_result is z,
    }


@idiom(
    'PyTorch notes "Autograd mechanics", "Gradients for non-differentiable functions": relu at 0'
)
def mechanics_nondifferentiable_points(torch):
    x = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    (torch.relu(x).sum() + torch.abs(x).sum() + torch.sqrt(x * x + 1).sum()).backward()
    return {"grad": val(x.grad)}


@idiom(
    'PyTorch notes "Autograd mechanics", "Backward Hooks execution": '
    "tensor hooks before accumulation"
)
def mechanics_hook_order(torch):
    calls = []
    a = torch.tensor(2.0, requires_grad=True)
    b = a * 3
    b.register_hook(lambda g: calls.append(("b", g.item())))
    a.register_hook(lambda g: calls.append(("a", g.item())))
    b.backward()
    return {"calls": calls, "grad": a.grad.item()}


@idiom('PyTorch notes "Autograd mechanics", a hook that returns a new gradient replaces it')
def mechanics_hook_replaces_gradient(torch):
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a * a
    b.register_hook(lambda g: g * 10)
    b.sum().backward()
    return {"grad": val(a.grad)}


@idiom("PyTorch Tensor.grad docstring: reading .grad of a non-leaf warns and gives None")
def mechanics_nonleaf_grad_warns(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.sum().backward()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = y.grad
    return {"grad": g, "warned": any("not a leaf Tensor" in str(w.message) for w in caught)}


@idiom("PyTorch Tensor.retain_grad / retains_grad docstrings: an intermediate keeps its .grad")
def mechanics_retain_grad(torch):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x**2
    y.retain_grad()
    z = (y * 3).sum()
    z.backward()
    return {
        "y_grad": val(y.grad),
        "x_grad": val(x.grad),
        "retains": [y.retains_grad, x.retains_grad],
    }


@idiom("PyTorch Tensor.is_leaf docstring: which of a, c, e are leaves")
def mechanics_is_leaf_docstring(torch):
    a = torch.ones(10, requires_grad=True)
    c = torch.ones(10, requires_grad=True) + 2
    d = torch.ones(10)
    e = torch.ones(10).requires_grad_()
    return {"leaves": [a.is_leaf, c.is_leaf, d.is_leaf, e.is_leaf], "c_grad_fn": c.grad_fn.name()}


@idiom("PyTorch Tensor.requires_grad_ docstring: preprocess loaded weights, then requires_grad_()")
def mechanics_requires_grad_docstring(torch):
    saved_weights = [0.1234, 0.5678, 0.9012, 0.3456]
    loaded_weights = torch.tensor(saved_weights)

    def preprocess(t):
        return (t - t.mean()) / t.std()

    weights = preprocess(loaded_weights)
    before = weights.requires_grad
    weights.requires_grad_()
    out = weights.pow(2).sum()
    out.backward()
    return {"before": before, "grad": val(weights.grad)}


@idiom('PyTorch notes "Autograd mechanics": detach() shares storage; x.data changes are untracked')
def mechanics_data_vs_detach(torch):
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = a.sigmoid()
    c = out.data
    c.zero_()
    out.sum().backward()
    first = val(a.grad)
    a.grad = None
    out = a.sigmoid()
    d = out.detach()
    d.zero_()
    exc = raised(lambda: out.sum().backward())
    return {"data_path_grad": first, "detach_path_error": isinstance(exc, RuntimeError)}


@idiom('PyTorch notes "Autograd mechanics": frozen part of a computation (requires_grad=False)')
def mechanics_frozen_part(torch):
    frozen = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    trained = torch.tensor([0.5, -0.5], requires_grad=True)
    frozen.requires_grad = False
    out = (frozen @ trained).tanh().sum()
    out.backward()
    return {"frozen_grad": frozen.grad, "trained_grad": val(trained.grad)}


@idiom('PyTorch notes "Autograd mechanics", "Multithreaded Autograd": train_fn in threads')
def mechanics_threads(torch):
    import threading

    results = []

    def train_fn():
        x = torch.ones(5, 5, requires_grad=True)
        y = (x + 3) * (x + 4) * 0.5
        y.sum().backward()
        results.append(x.grad.sum().item())

    threads = [threading.Thread(target=train_fn) for _ in range(4)]
    for p in threads:
        p.start()
    for p in threads:
        p.join()
    return {"results": results}
