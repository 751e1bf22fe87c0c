"""PyTorch torch.autograd.functional docstrings: jacobian, hessian, vjp, jvp, vhp, hvp."""

from __future__ import annotations

from ._registry import idiom, val, vals


def _inputs(torch, *shape):
    n = 1
    for s in shape:
        n *= s
    return torch.linspace(0.1, 0.9, n).reshape(*shape)


@idiom("PyTorch autograd.functional.jacobian docstring: exp_reducer, x.exp().sum(dim=1)")
def functional_jacobian_exp_reducer(torch):
    def exp_reducer(x):
        return x.exp().sum(dim=1)

    inputs = _inputs(torch, 2, 2)
    jac = torch.autograd.functional.jacobian(exp_reducer, inputs)
    return {"jacobian": val(jac), "shape": list(jac.shape)}


@idiom("PyTorch autograd.functional.jacobian docstring: create_graph=True gives a grad_fn")
def functional_jacobian_create_graph(torch):
    def exp_reducer(x):
        return x.exp().sum(dim=1)

    inputs = _inputs(torch, 2, 2)
    jac = torch.autograd.functional.jacobian(exp_reducer, inputs, create_graph=True)
    return {"jacobian": val(jac), "has_grad_fn": jac.grad_fn is not None}


@idiom("PyTorch autograd.functional.jacobian docstring: exp_adder(x, y) with a tuple of inputs")
def functional_jacobian_tuple_inputs(torch):
    def exp_adder(x, y):
        return 2 * x.exp() + 3 * y

    inputs = (_inputs(torch, 2), _inputs(torch, 2) + 1)
    jac = torch.autograd.functional.jacobian(exp_adder, inputs)
    return {"jacobians": vals(jac), "type": type(jac).__name__}


@idiom("PyTorch autograd.functional.jacobian docstring: vectorize=True and strategy keywords")
def functional_jacobian_vectorize(torch):
    def f(x):
        return x**2 + x.sum()

    x = _inputs(torch, 3)
    jac = torch.autograd.functional.jacobian(f, x, vectorize=True)
    fwd = torch.autograd.functional.jacobian(f, x, vectorize=True, strategy="forward-mode")
    return {"reverse": val(jac), "forward": val(fwd)}


@idiom("PyTorch autograd.functional.hessian docstring: pow_reducer, x.pow(3).sum()")
def functional_hessian_pow_reducer(torch):
    def pow_reducer(x):
        return x.pow(3).sum()

    inputs = _inputs(torch, 2, 2)
    hess = torch.autograd.functional.hessian(pow_reducer, inputs)
    return {"hessian": val(hess), "shape": list(hess.shape)}


@idiom("PyTorch autograd.functional.hessian docstring: pow_adder_reducer(x, y), tuple of tuples")
def functional_hessian_tuple_inputs(torch):
    def pow_adder_reducer(x, y):
        return (2 * x.pow(2) + 3 * y.pow(2)).sum()

    inputs = (_inputs(torch, 2), _inputs(torch, 2))
    hess = torch.autograd.functional.hessian(pow_adder_reducer, inputs)
    return {"blocks": [vals(row) for row in hess], "type": type(hess).__name__}


@idiom("PyTorch autograd.functional.vjp docstring: exp_reducer with v = ones(4)")
def functional_vjp_exp_reducer(torch):
    def exp_reducer(x):
        return x.exp().sum(dim=1)

    inputs = _inputs(torch, 4, 4)
    v = torch.ones(4)
    out, vjp = torch.autograd.functional.vjp(exp_reducer, inputs, v)
    return {"out": val(out), "vjp": val(vjp)}


@idiom(
    "PyTorch autograd.functional.vjp docstring: create_graph=True output has grad_fn SumBackward1"
)
def functional_vjp_create_graph(torch):
    def exp_reducer(x):
        return x.exp().sum(dim=1)

    inputs = _inputs(torch, 4, 4)
    out, vjp = torch.autograd.functional.vjp(exp_reducer, inputs, torch.ones(4), create_graph=True)
    return {
        "out_grad_fn": out.grad_fn.name() if out.grad_fn is not None else None,
        "vjp_requires_grad": vjp.requires_grad,
    }


@idiom("PyTorch autograd.functional.vjp docstring: adder(x, y) = 2x + 3y, tuple result")
def functional_vjp_adder(torch):
    def adder(x, y):
        return 2 * x + 3 * y

    inputs = (_inputs(torch, 2), _inputs(torch, 2))
    out, grads = torch.autograd.functional.vjp(adder, inputs, torch.ones(2))
    return {"out": val(out), "grads": vals(grads)}


@idiom("PyTorch autograd.functional.jvp docstring: exp_reducer and adder with v of ones")
def functional_jvp_docstring(torch):
    def exp_reducer(x):
        return x.exp().sum(dim=1)

    def adder(x, y):
        return 2 * x + 3 * y

    out, jvp = torch.autograd.functional.jvp(exp_reducer, _inputs(torch, 4, 4), torch.ones(4, 4))
    inputs = (_inputs(torch, 2), _inputs(torch, 2))
    out2, jvp2 = torch.autograd.functional.jvp(adder, inputs, (torch.ones(2), torch.ones(2)))
    return {"out": val(out), "jvp": val(jvp), "out2": val(out2), "jvp2": val(jvp2)}


@idiom("PyTorch autograd.functional.vhp docstring: pow_reducer and pow_adder_reducer")
def functional_vhp_docstring(torch):
    def pow_reducer(x):
        return x.pow(3).sum()

    def pow_adder_reducer(x, y):
        return (2 * x.pow(2) + 3 * y.pow(2)).sum()

    out, vhp = torch.autograd.functional.vhp(pow_reducer, _inputs(torch, 2, 2), torch.ones(2, 2))
    inputs = (_inputs(torch, 2), _inputs(torch, 2))
    v = (torch.zeros(2), torch.ones(2))
    out2, vhp2 = torch.autograd.functional.vhp(pow_adder_reducer, inputs, v)
    return {"out": val(out), "vhp": val(vhp), "out2": val(out2), "vhp2": vals(vhp2)}


@idiom("PyTorch autograd.functional.hvp docstring: pow_reducer with create_graph=True")
def functional_hvp_docstring(torch):
    def pow_reducer(x):
        return x.pow(3).sum()

    inputs = _inputs(torch, 2, 2)
    out, hvp = torch.autograd.functional.hvp(
        pow_reducer, inputs, torch.ones(2, 2), create_graph=True
    )
    return {"out": val(out), "hvp": val(hvp), "requires_grad": hvp.requires_grad}


@idiom(
    "PyTorch autograd.functional docstrings: strict=True refuses an output independent of an input"
)
def functional_strict_independent_input(torch):
    def f(x, y):
        return x * 2

    inputs = (_inputs(torch, 2), _inputs(torch, 2))
    lax = torch.autograd.functional.jacobian(f, inputs)
    try:
        torch.autograd.functional.jacobian(f, inputs, strict=True)
        strict = "no error"
    except RuntimeError:
        strict = "RuntimeError"
    return {"lax": vals(lax), "strict": strict}
