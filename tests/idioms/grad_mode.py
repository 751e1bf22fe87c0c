"""PyTorch torch.autograd.grad_mode docstrings: no_grad, enable_grad, set_grad_enabled and
inference_mode."""

from __future__ import annotations

from ._registry import idiom, raised, val


@idiom("PyTorch no_grad docstring: with-block, @torch.no_grad() and bare @torch.no_grad")
def grad_mode_no_grad_forms(torch):
    x = torch.tensor([1.0], requires_grad=True)
    with torch.no_grad():
        y = x * 2

    @torch.no_grad()
    def doubler(x):
        return x * 2

    @torch.no_grad
    def tripler(x):
        return x * 3

    return {
        "with": y.requires_grad,
        "call": doubler(x).requires_grad,
        "bare": tripler(x).requires_grad,
    }


@idiom("PyTorch no_grad docstring: factory functions inside no_grad still honour requires_grad")
def grad_mode_factory_inside_no_grad(torch):
    with torch.no_grad():
        a = torch.zeros(3, requires_grad=True)
    return {"requires_grad": a.requires_grad, "is_leaf": a.is_leaf}


@idiom("PyTorch enable_grad docstring: enable_grad inside no_grad, as block and decorator")
def grad_mode_enable_grad(torch):
    x = torch.tensor([1.0], requires_grad=True)
    with torch.no_grad(), torch.enable_grad():
        y = x * 2
    flag = y.requires_grad
    y.backward()

    @torch.enable_grad()
    def doubler(x):
        return x * 2

    with torch.no_grad():
        z = doubler(x)
    return {"inner": flag, "grad": val(x.grad), "decorated": z.requires_grad}


@idiom("PyTorch set_grad_enabled docstring: context manager and plain function call")
def grad_mode_set_grad_enabled(torch):
    x = torch.tensor([1.0], requires_grad=True)
    is_train = False
    with torch.set_grad_enabled(is_train):
        y = x * 2
    first = y.requires_grad
    _ = torch.set_grad_enabled(True)
    second = (x * 2).requires_grad
    _ = torch.set_grad_enabled(False)
    third = (x * 2).requires_grad
    torch.set_grad_enabled(True)
    return {"flags": [first, second, third]}


@idiom("PyTorch is_grad_enabled docstring and no_grad nesting")
def grad_mode_is_grad_enabled(torch):
    states = [torch.is_grad_enabled()]
    with torch.no_grad():
        states.append(torch.is_grad_enabled())
        with torch.enable_grad():
            states.append(torch.is_grad_enabled())
        states.append(torch.is_grad_enabled())
    states.append(torch.is_grad_enabled())
    return {"states": states}


@idiom("PyTorch inference_mode docstring: with-block and @torch.inference_mode() decorator")
def grad_mode_inference_mode_forms(torch):
    x = torch.ones(1, 2, 3, requires_grad=True)
    with torch.inference_mode():
        y = x * x

    @torch.inference_mode()
    def func(x):
        return x * x

    out = func(x)
    return {
        "y": y.requires_grad,
        "out": out.requires_grad,
        "enabled_inside": torch.is_inference_mode_enabled(),
    }


@idiom("PyTorch inference_mode docstring: an inference tensor cannot be saved for backward later")
def grad_mode_inference_tensor_in_autograd(torch):
    with torch.inference_mode():
        t = torch.ones(3)
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    exc = raised(lambda: (w * t).sum().backward())
    return {"inference": t.is_inference(), "raised": isinstance(exc, RuntimeError)}


@idiom(
    "PyTorch no_grad docstring: results of no_grad are leaves and can be used later in grad mode"
)
def grad_mode_no_grad_result_reused(torch):
    w = torch.tensor([1.0, -1.0], requires_grad=True)
    with torch.no_grad():
        scale = (w * 2).exp()
    loss = (w * scale).sum()
    loss.backward()
    return {"scale_leaf": scale.is_leaf, "grad": val(w.grad)}
