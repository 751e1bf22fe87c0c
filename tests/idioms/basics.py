"""PyTorch "Learn the Basics": autogradqs_tutorial.py and tensorqs_tutorial.py."""

from __future__ import annotations

from ._registry import idiom, printed, raised, val


def _one_layer(torch):
    x = torch.ones(5)
    w = torch.linspace(-1.0, 1.0, 15).reshape(5, 3).requires_grad_()
    b = torch.tensor([0.1, -0.2, 0.3], requires_grad=True)
    return x, w, b


@idiom('PyTorch basics autogradqs_tutorial.py, "Computing Gradients" with a squared-error loss')
def basics_one_layer_gradients(torch):
    x, w, b = _one_layer(torch)
    z = torch.matmul(x, w) + b
    loss = ((z - torch.zeros(3)) ** 2).mean()
    loss.backward()
    return {"w_grad": val(w.grad), "b_grad": val(b.grad), "z_grad_fn": z.grad_fn.name()}


@idiom('PyTorch basics autogradqs_tutorial.py, print(f"Gradient function for z = {z.grad_fn}")')
def basics_grad_fn_fstring(torch):
    x, w, b = _one_layer(torch)
    z = torch.matmul(x, w) + b
    text = f"Gradient function for z = {z.grad_fn}"
    return {"prefix": text.split(" object at ")[0]}


@idiom(
    'PyTorch basics autogradqs_tutorial.py, "Computing Gradients" '
    "(binary_cross_entropy_with_logits)",
    nn=True,
)
def basics_bce_with_logits(torch):
    x, w, b = _one_layer(torch)
    z = torch.matmul(x, w) + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, torch.zeros(3))
    loss.backward()
    return {"loss": loss.item(), "w_grad": val(w.grad), "grad_fn": loss.grad_fn.name()}


@idiom('PyTorch basics autogradqs_tutorial.py, "Disabling Gradient Tracking": no_grad and detach')
def basics_disable_tracking(torch):
    x, w, b = _one_layer(torch)
    z = torch.matmul(x, w) + b
    tracked = z.requires_grad
    with torch.no_grad():
        z = torch.matmul(x, w) + b
    untracked = z.requires_grad
    z_det = (torch.matmul(x, w) + b).detach()
    return {"tracked": tracked, "no_grad": untracked, "detached": z_det.requires_grad}


@idiom(
    'PyTorch basics autogradqs_tutorial.py, "Tensor Gradients and Jacobian Products" (eye(4, 5))'
)
def basics_jacobian_products_accumulate(torch):
    inp = torch.eye(4, 5, requires_grad=True)
    out = (inp + 1).pow(2).t()
    out.backward(torch.ones_like(out), retain_graph=True)
    first = printed(lambda: print(f"First call\n{inp.grad}"))
    out.backward(torch.ones_like(out), retain_graph=True)
    second = val(inp.grad)
    inp.grad.zero_()
    out.backward(torch.ones_like(out), retain_graph=True)
    return {"first": first, "second": second, "after_zero": val(inp.grad)}


@idiom("PyTorch basics autogradqs_tutorial.py, note: backward twice needs retain_graph=True")
def basics_second_backward_fails(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (x.exp() * x).sum()
    loss.backward()
    exc = raised(loss.backward)
    return {
        "is_runtime_error": isinstance(exc, RuntimeError),
        "names": "retain_graph=True" in str(exc),
    }


@idiom('PyTorch basics tensorqs_tutorial.py, "In-place operations": tensor.add_(5) and printing')
def basics_tensor_inplace_print(torch):
    tensor = torch.ones(4, 4)
    tensor[:, 1] = 0
    t = printed(lambda: print(tensor, "\n"))
    tensor.add_(5)
    return {"before": t, "after": repr(tensor)}


@idiom('PyTorch basics tensorqs_tutorial.py, "Joining tensors" and arithmetic (@, matmul, out=)')
def basics_tensor_arithmetic(torch):
    tensor = torch.arange(16.0).reshape(4, 4)
    t1 = torch.cat([tensor, tensor, tensor], dim=1)
    y1 = tensor @ tensor.T
    y2 = tensor.matmul(tensor.T)
    y3 = torch.rand_like(y1)
    torch.matmul(tensor, tensor.T, out=y3)
    z1 = tensor * tensor
    agg = tensor.sum()
    return {
        "t1_shape": list(t1.shape),
        "y": [val(y1), val(y2), val(y3)],
        "z1": val(z1),
        "agg_item": agg.item(),
        "agg_type": type(agg.item()).__name__,
    }


@idiom('PyTorch basics tensorqs_tutorial.py, "Attributes of a Tensor" (shape, dtype, device)')
def basics_tensor_attributes(torch):
    tensor = torch.zeros(3, 4)
    return {
        "shape": str(tensor.shape),
        "dtype": str(tensor.dtype),
        "device": str(tensor.device),
    }
