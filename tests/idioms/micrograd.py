"""karpathy/micrograd: the PyTorch halves of test/test_engine.py and of the micrograd lecture."""

from __future__ import annotations

from ._registry import idiom


@idiom("karpathy/micrograd test/test_engine.py test_sanity_check: torch.Tensor([...]).double()")
def micrograd_sanity_check(torch):
    # The test's API and kinds of ops (relu of products, nodes reused), our own expression.
    x = torch.Tensor([-2.5]).double()
    x.requires_grad = True
    u = 3 * x + 1 - x
    v = (u * x).relu() + u * 2
    w = (u * u).relu() - v
    y = w * x + v + v * v
    y.backward()
    return {"y": y.data.item(), "x_grad": x.grad.item()}


@idiom("karpathy/micrograd test/test_engine.py test_more_ops: rebinding sums, relu, ** and 7.0 / f")
def micrograd_more_ops(torch):
    a = torch.Tensor([-3.0]).double()
    b = torch.Tensor([1.5]).double()
    a.requires_grad = True
    b.requires_grad = True
    c = a - b
    d = b * a + a**2
    c = c + 2 + c
    c = 1 + c + (-b) + c
    d = d * 3 + d + (a - b).relu()
    d = 2 * d + d + (b - a).relu()
    e = d - c
    f = e**2
    g = f / 4.0
    g = g + 7.0 / f
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
    x1 = torch.Tensor([1.5]).double()
    x1.requires_grad = True
    x2 = torch.Tensor([-0.5]).double()
    x2.requires_grad = True
    w1 = torch.Tensor([-2.0]).double()
    w1.requires_grad = True
    w2 = torch.Tensor([0.75]).double()
    w2.requires_grad = True
    b = torch.Tensor([3.25]).double()
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
