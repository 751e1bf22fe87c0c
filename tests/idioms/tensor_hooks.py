"""Tensor hooks: Tensor.register_hook and register_post_accumulate_grad_hook docstrings, and the
optimizer_step_in_backward tutorial's hook pattern (on plain tensors)."""

from __future__ import annotations

from ._registry import idiom, val


@idiom("PyTorch Tensor.register_hook docstring: v.register_hook(lambda grad: grad * 2); h.remove()")
def hooks_register_hook_docstring(torch):
    v = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
    h = v.register_hook(lambda grad: grad * 2)
    v.backward(torch.tensor([1.0, 2.0, 3.0]))
    doubled = val(v.grad)
    h.remove()
    v.grad = None
    v.backward(torch.tensor([1.0, 2.0, 3.0]))
    return {"doubled": doubled, "after_remove": val(v.grad)}


@idiom("PyTorch forum idiom: a hook that records intermediate gradients in a dict")
def hooks_record_intermediate(torch):
    grads = {}

    def save_grad(name):
        def hook(grad):
            grads[name] = grad.tolist()

        return hook

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = 3 * x
    z = y * y
    y.register_hook(save_grad("y"))
    z.register_hook(save_grad("z"))
    z.sum().backward()
    return {"grads": grads, "x": val(x.grad)}


@idiom(
    "PyTorch Tensor.register_post_accumulate_grad_hook docstring: sees p.grad after accumulation"
)
def hooks_post_accumulate(torch):
    seen = []
    p = torch.tensor([1.0, 2.0], requires_grad=True)
    p.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (p * 3).sum().backward()
    (p * 3).sum().backward()
    return {"seen": seen}


@idiom(
    "PyTorch optimizer_step_in_backward_tutorial.py: one optimizer per parameter, stepped in a hook"
)
def hooks_optimizer_step_in_backward(torch):
    params = [torch.tensor([1.0, -1.0], requires_grad=True), torch.tensor(0.5, requires_grad=True)]
    optimizer_dict = {p: torch.optim.SGD([p], lr=0.1) for p in params}

    def optimizer_hook(parameter):
        optimizer_dict[parameter].step()
        optimizer_dict[parameter].zero_grad()

    for p in params:
        p.register_post_accumulate_grad_hook(optimizer_hook)
    x = torch.tensor([2.0, 3.0])
    for _ in range(3):
        ((params[0] * x).sum() * params[1]).backward()
    return {"params": [val(p) for p in params], "grads": [p.grad for p in params]}


@idiom("PyTorch forum idiom: gradient clipping through a hook, grad.clamp(-1, 1)")
def hooks_clamp_gradient(torch):
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w.register_hook(lambda g: g.clamp(-1, 1))
    (w**3).sum().backward()
    return {"grad": val(w.grad)}
