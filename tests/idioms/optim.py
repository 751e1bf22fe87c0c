"""torch.optim as autograd tutorials use it on plain tensors (no modules): schedulers, AdamW,
parameter groups, the momentum formula."""

from __future__ import annotations

from ._registry import idiom, val


def _quadratic(torch, p):
    return ((p - torch.tensor([3.0, -1.0])) ** 2).sum()


@idiom('PyTorch optim docs, "How to adjust learning rate": StepLR(optimizer, step_size, gamma)')
def optim_step_lr(torch):
    p = torch.tensor([0.0, 0.0], requires_grad=True)
    optimizer = torch.optim.SGD([p], lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)
    lrs = []
    for _ in range(8):
        optimizer.zero_grad()
        _quadratic(torch, p).backward()
        optimizer.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
    return {"lrs": lrs, "p": val(p)}


@idiom("PyTorch optim docs: ExponentialLR and CosineAnnealingLR on the same loop")
def optim_exponential_cosine(torch):
    out = {}
    for name in ("ExponentialLR", "CosineAnnealingLR"):
        p = torch.tensor([0.0, 0.0], requires_grad=True)
        optimizer = torch.optim.SGD([p], lr=0.1, momentum=0.9)
        if name == "ExponentialLR":
            scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)
        else:
            scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=5)
        for _ in range(5):
            optimizer.zero_grad()
            _quadratic(torch, p).backward()
            optimizer.step()
            scheduler.step()
        out[name] = [val(p), optimizer.param_groups[0]["lr"]]
    return out


@idiom("PyTorch optim docs: optim.AdamW(params, lr, weight_decay)")
def optim_adamw(torch):
    p = torch.tensor([0.0, 0.0], requires_grad=True)
    optimizer = torch.optim.AdamW([p], lr=0.1, weight_decay=0.01)
    for _ in range(20):
        optimizer.zero_grad()
        _quadratic(torch, p).backward()
        optimizer.step()
    return {"p": val(p)}


@idiom(
    'PyTorch optim docs, "Per-parameter options": param groups with their own lr, add_param_group'
)
def optim_param_groups(torch):
    a = torch.tensor([0.0, 0.0], requires_grad=True)
    b = torch.tensor([1.0], requires_grad=True)
    c = torch.tensor([2.0], requires_grad=True)
    optimizer = torch.optim.SGD(
        [{"params": [a]}, {"params": [b], "lr": 0.01}], lr=0.1, momentum=0.9
    )
    optimizer.add_param_group({"params": [c], "lr": 0.5})
    for _ in range(5):
        optimizer.zero_grad()
        (_quadratic(torch, a) + (b**2).sum() + (c**2).sum()).backward()
        optimizer.step()
    return {"a": val(a), "b": val(b), "c": val(c), "groups": len(optimizer.param_groups)}


@idiom("PyTorch optim docs: param_groups[0]['lr'] edited by hand to decay the learning rate")
def optim_manual_lr_decay(torch):
    p = torch.tensor([0.0, 0.0], requires_grad=True)
    optimizer = torch.optim.SGD([p], lr=0.2)
    for epoch in range(6):
        optimizer.zero_grad()
        _quadratic(torch, p).backward()
        optimizer.step()
        if epoch % 2 == 1:
            for g in optimizer.param_groups:
                g["lr"] *= 0.5
    return {"p": val(p), "lr": optimizer.param_groups[0]["lr"]}


@idiom("PyTorch optim docs: optimizer.step(closure) re-evaluating the loss")
def optim_closure(torch):
    p = torch.tensor([0.0, 0.0], requires_grad=True)
    optimizer = torch.optim.SGD([p], lr=0.1)

    def closure():
        optimizer.zero_grad()
        loss = _quadratic(torch, p)
        loss.backward()
        return loss

    losses = [optimizer.step(closure).item() for _ in range(5)]
    return {"losses": losses, "p": val(p)}


@idiom("PyTorch examples_nn/polynomial_optim.py: RMSprop over four polynomial coefficients")
def optim_rmsprop_polynomial(torch):
    x = torch.linspace(-1.0, 1.0, 50)
    y = torch.sin(x)
    coefficients = [torch.tensor(0.1 * k, requires_grad=True) for k in range(4)]
    optimizer = torch.optim.RMSprop(coefficients, lr=1e-2)
    losses = []
    for _ in range(60):
        a, b, c, d = coefficients
        loss = ((a + b * x + c * x**2 + d * x**3 - y) ** 2).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return {"losses": losses[::10], "coefficients": [k.item() for k in coefficients]}
