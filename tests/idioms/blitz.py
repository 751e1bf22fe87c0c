"""PyTorch's "Deep Learning with PyTorch: A 60 Minute Blitz", autograd part (old and new)."""

from __future__ import annotations

from ._registry import idiom, printed, raised, val


@idiom('PyTorch blitz autograd_tutorial.py (old), "Tensor": ones(2, 2) + 2, printed')
def blitz_print_leaf_and_result(torch):
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    return {"x": repr(x), "y": repr(y), "grad_fn": type(y.grad_fn).__name__}


@idiom('PyTorch blitz autograd_tutorial.py (old), "z = y * y * 3; out = z.mean()", print(z, out)')
def blitz_mean_of_products_printed(torch):
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    return {"printed": printed(lambda: print(z, out))}


@idiom('PyTorch blitz autograd_tutorial.py (old), ".requires_grad_( ... )" on a computed tensor')
def blitz_requires_grad_inplace(torch):
    a = torch.linspace(-2.0, 2.0, 4).reshape(2, 2)
    a = (a * 3) / (a - 1)
    before = a.requires_grad
    a.requires_grad_(True)
    b = (a * a).sum()
    return {"before": before, "after": a.requires_grad, "grad_fn": b.grad_fn.name()}


@idiom('PyTorch blitz autograd_tutorial.py (old), "Gradients": out.backward(); print(x.grad)')
def blitz_backward_matrix_of_4_5(torch):
    x = torch.ones(2, 2, requires_grad=True)
    out = ((x + 2) * (x + 2) * 3).mean()
    out.backward()
    return {"grad": val(x.grad), "printed": printed(lambda: print(x.grad))}


@idiom('PyTorch blitz autograd_tutorial.py (old), "while y.data.norm() < 1000: y = y * 2"')
def blitz_while_data_norm(torch):
    x = torch.tensor([0.3, -0.2, 0.5], requires_grad=True)
    y = x * 2
    steps = 0
    while y.data.norm() < 1000:
        y = y * 2
        steps += 1
    gradients = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
    y.backward(gradients)
    return {"steps": steps, "y": val(y), "grad": val(x.grad)}


@idiom('PyTorch blitz autograd_tutorial.py (old), "stop tracking": print((x ** 2).requires_grad)')
def blitz_no_grad_printing_flags(torch):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)

    def show():
        print(x.requires_grad)
        print((x**2).requires_grad)
        with torch.no_grad():
            print((x**2).requires_grad)

    return {"printed": printed(show)}


@idiom('PyTorch blitz autograd_tutorial.py (new), "Differentiation in Autograd": Q = 3a^3 - b^2')
def blitz_external_grad(torch):
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    b = torch.tensor([6.0, 4.0], requires_grad=True)
    Q = 3 * a**3 - b**2
    external_grad = torch.tensor([1.0, 1.0])
    Q.backward(gradient=external_grad)
    return {
        "a_check": val(9 * a**2 == a.grad),
        "b_check": val(-2 * b == b.grad),
        "printed": printed(lambda: print(9 * a**2 == a.grad)),
    }


@idiom('PyTorch blitz autograd_tutorial.py (new), "Exclusion from the DAG": f-string of flags')
def blitz_exclusion_from_dag(torch):
    x = torch.zeros(5, 5)
    y = torch.ones(5, 5)
    z = torch.full((5, 5), 2.0, requires_grad=True)
    a = x + y
    b = x + z

    def show():
        print(f"Does `a` require gradients?: {a.requires_grad}")
        print(f"Does `b` require gradients?: {b.requires_grad}")

    return {"printed": printed(show)}


@idiom(
    'PyTorch blitz autograd_tutorial.py (new), "Vector Calculus using autograd": vector-Jacobian'
)
def blitz_vjp_without_gradient_fails(torch):
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    Q = 3 * a**3
    exc = raised(Q.backward)
    return {
        "is_runtime_error": isinstance(exc, RuntimeError),
        "message": str(exc),
    }


@idiom('PyTorch blitz tensor_tutorial.py, "Bridge to NumPy": t.numpy() shares memory after add_')
def blitz_numpy_bridge(torch):
    t = torch.ones(5)
    n = t.numpy()
    t.add_(1)
    return {"n": n.tolist(), "t": val(t)}
