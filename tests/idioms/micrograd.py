"""karpathy/micrograd: the PyTorch halves of test/test_engine.py and of the micrograd lecture."""

from __future__ import annotations

from ._registry import idiom


@idiom("karpathy/micrograd test/test_engine.py test_sanity_check: torch.Tensor([-4.0]).double()")
def micrograd_sanity_check(torch):
    x = torch.Tensor([-4.0]).double()
    x.requires_grad = True
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    return {"y": y.data.item(), "x_grad": x.grad.item()}


@idiom("karpathy/micrograd test/test_engine.py test_more_ops: c + c + 1, (b - a).relu(), 10.0 / f")
def micrograd_more_ops(torch):
    a = torch.Tensor([-4.0]).double()
    b = torch.Tensor([2.0]).double()
    a.requires_grad = True
    b.requires_grad = True
    c = a + b
    d = a * b + b**3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g = g + 10.0 / f
    g.backward()
    return {"g": g.data.item(), "a_grad": a.grad.item(), "b_grad": b.grad.item()}


@idiom(
    "karpathy/micrograd test/test_engine.py test_unary_tensor_fns: torch.Tensor.tanh, .exp unbound"
)
def micrograd_unary_unbound_methods(torch):
    out = []
    for tensor_fn in (torch.Tensor.tanh, torch.Tensor.exp):
        for x in (-1.0, 0.123, 2.0):
            xt = torch.Tensor([x]).double()
            xt.requires_grad = True
            yt = tensor_fn(xt)
            yt.backward()
            out.append([yt.data.item(), xt.grad.item()])
    return {"values": out}


@idiom(
    "karpathy nn-zero-to-hero micrograd lecture: one neuron o = tanh(x1*w1 + x2*w2 + b) in torch"
)
def micrograd_lecture_neuron(torch):
    x1 = torch.Tensor([2.0]).double()
    x1.requires_grad = True
    x2 = torch.Tensor([0.0]).double()
    x2.requires_grad = True
    w1 = torch.Tensor([-3.0]).double()
    w1.requires_grad = True
    w2 = torch.Tensor([1.0]).double()
    w2.requires_grad = True
    b = torch.Tensor([6.8813735870195432]).double()
    b.requires_grad = True
    n = x1 * w1 + x2 * w2 + b
    o = torch.tanh(n)
    o.backward()
    grads = {name: t.grad.item() for name, t in [("x2", x2), ("w2", w2), ("x1", x1), ("w1", w1)]}
    return {"o": o.data.item(), "grads": grads}


@idiom("karpathy nn-zero-to-hero micrograd lecture: torch.Tensor legacy constructor and its dtype")
def micrograd_legacy_constructor(torch):
    t = torch.Tensor([[1, 2], [3, 4]])
    e = torch.Tensor(2, 3)
    return {"dtype": str(t.dtype), "value": t.tolist(), "shape": list(e.shape), "leaf": t.is_leaf}
