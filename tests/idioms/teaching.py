"""Other well-known teaching code: yunjey/pytorch-tutorial basics, the PyTorch 0.4 migration guide,
"What is torch.nn really?" (its from-scratch half), Raschka's "PyTorch in One Hour"."""

from __future__ import annotations

import math

from ._registry import idiom, raised, val


@idiom("yunjey/pytorch-tutorial 01-basics/pytorch_basics: y = w * x + b; print(x.grad) etc.")
def teaching_yunjey_basic_autograd(torch):
    x = torch.tensor(1.0, requires_grad=True)
    w = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(3.0, requires_grad=True)
    y = w * x + b
    y.backward()

    def show():
        print(x.grad)
        print(w.grad)
        print(b.grad)

    from ._registry import printed

    return {"printed": printed(show)}


@idiom("yunjey/pytorch-tutorial 01-basics: torch.from_numpy(x) and y.numpy() round trip")
def teaching_yunjey_numpy(torch):
    import numpy as np

    x = np.array([[1, 2], [3, 4]])
    y = torch.from_numpy(x)
    z = y.numpy()
    return {"dtype": str(y.dtype), "z": z.tolist()}


@idiom("PyTorch 0.4 migration guide: Variable(tensor, requires_grad=True) returns a Tensor")
def teaching_variable_wrapper(torch):
    Variable = torch.autograd.Variable

    x = Variable(torch.ones(2), requires_grad=True)
    y = (x * 3).sum()
    y.backward()
    return {"is_tensor": isinstance(x, torch.Tensor), "grad": val(x.grad)}


@idiom("PyTorch 0.4 migration guide: loss.item() accumulation instead of loss.data[0]")
def teaching_item_accumulation(torch):
    total_loss = 0
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    for i in range(3):
        loss = ((w - i) ** 2).sum()
        total_loss += loss.item()
    return {"total": total_loss, "type": type(total_loss).__name__}


@idiom("PyTorch 0.4 migration guide: x.type() strings and isinstance(x, torch.DoubleTensor)")
def teaching_type_strings(torch):
    x = torch.DoubleTensor([1, 1, 1])
    return {
        "type": x.type(),
        "isinstance": isinstance(x, torch.DoubleTensor),
        "float": torch.zeros(2).float().type(),
    }


@idiom(
    "PyTorch 0.4 migration guide: new_* constructors x.new_ones, new_zeros, new_tensor, new_full"
)
def teaching_new_constructors(torch):
    x = torch.tensor([[1.0, 2.0]], dtype=torch.float64)
    a = x.new_ones(2)
    b = x.new_zeros((1, 3))
    c = x.new_tensor([1, 2])
    d = x.new_full((2,), 7)
    return {
        "vals": [val(a), val(b), val(c), val(d)],
        "dtypes": [str(t.dtype) for t in (a, b, c, d)],
    }


@idiom("PyTorch 0.4 migration guide: torch.tensor(1).item() scalars and 0-d indexing")
def teaching_zero_dim(torch):
    t = torch.tensor([1.0, 2.0, 3.0])
    s = t.sum()
    return {
        "dim": s.dim(),
        "size": list(s.size()),
        "item": s.item(),
        "elem": t[0].item(),
        "repr": repr(t[1]),
    }


def _mnist_like(torch, n=16, d=12, k=4):
    x = torch.cos(torch.arange(n * d * 1.0)).reshape(n, d)
    y = torch.arange(n) % k
    return x, y


@idiom(
    'PyTorch "What is torch.nn really?", "Neural net from scratch": log_softmax, nll, accuracy loop'
)
def teaching_nn_really_from_scratch(torch):
    x_train, y_train = _mnist_like(torch)
    n, d = x_train.shape
    weights = torch.linspace(-0.5, 0.5, d * 4).reshape(d, 4) / math.sqrt(d)
    weights.requires_grad_()
    bias = torch.zeros(4, requires_grad=True)

    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def model(xb):
        return log_softmax(xb @ weights + bias)

    def nll(input, target):
        return -input[range(target.shape[0]), target].mean()

    def accuracy(out, yb):
        preds = torch.argmax(out, dim=1)
        return (preds == yb).float().mean()

    bs, lr, log = 4, 0.5, []
    for _epoch in range(2):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            loss = nll(model(xb), yb)
            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()
        log.append([nll(model(x_train), y_train).item(), accuracy(model(x_train), y_train).item()])
    return {"log": log}


@idiom('PyTorch "What is torch.nn really?": F.cross_entropy replaces log_softmax + nll', nn=True)
def teaching_nn_really_functional(torch):
    F = torch.nn.functional

    x_train, y_train = _mnist_like(torch)
    weights = torch.linspace(-0.5, 0.5, 12 * 4).reshape(12, 4).requires_grad_()
    bias = torch.zeros(4, requires_grad=True)
    loss = F.cross_entropy(x_train @ weights + bias, y_train)
    loss.backward()
    return {"loss": loss.item(), "bias_grad": val(bias.grad)}


@idiom(
    'PyTorch "What is torch.nn really?": refactor with nn.Module, nn.Parameter, model.parameters()',
    nn=True,
)
def teaching_nn_really_module(torch):
    class Mnist_Logistic(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = torch.nn.Parameter(torch.linspace(-0.5, 0.5, 48).reshape(12, 4))
            self.bias = torch.nn.Parameter(torch.zeros(4))

        def forward(self, xb):
            return xb @ self.weights + self.bias

    x_train, y_train = _mnist_like(torch)
    model = Mnist_Logistic()
    loss = torch.nn.functional.cross_entropy(model(x_train), y_train)
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= p.grad * 0.5
        model.zero_grad()
    return {"names": [n for n, _ in model.named_parameters()], "bias": val(model.bias)}


@idiom(
    'Raschka "PyTorch in One Hour": grad(loss, w1, retain_graph=True) with F.binary_cross_entropy',
    nn=True,
)
def teaching_raschka_grad(torch):
    F = torch.nn.functional
    grad = torch.autograd.grad

    y = torch.tensor([1.0])
    x1 = torch.tensor([1.1])
    w1 = torch.tensor([2.2], requires_grad=True)
    b = torch.tensor([0.0], requires_grad=True)
    z = x1 * w1 + b
    a = torch.sigmoid(z)
    loss = F.binary_cross_entropy(a, y)
    grad_L_w1 = grad(loss, w1, retain_graph=True)
    grad_L_b = grad(loss, b, retain_graph=True)
    loss.backward()
    return {
        "w1": val(grad_L_w1[0]),
        "b": val(grad_L_b[0]),
        "same": torch.equal(w1.grad, grad_L_w1[0]),
    }


@idiom('Raschka "PyTorch in One Hour": the same loss written by hand, torch.autograd.grad tuples')
def teaching_raschka_grad_by_hand(torch):
    grad = torch.autograd.grad

    y = torch.tensor([1.0])
    x1 = torch.tensor([1.1])
    w1 = torch.tensor([2.2], requires_grad=True)
    b = torch.tensor([0.0], requires_grad=True)
    a = torch.sigmoid(x1 * w1 + b)
    loss = -(y * torch.log(a) + (1 - y) * torch.log(1 - a)).mean()
    grad_L_w1 = grad(loss, w1, retain_graph=True)
    grad_L_b = grad(loss, b, retain_graph=True)
    return {"w1": val(grad_L_w1[0]), "b": val(grad_L_b[0]), "type": type(grad_L_w1).__name__}


@idiom(
    "PyTorch forum idiom: x.grad.data.zero_() and p.data.add_(p.grad.data, alpha=-lr) (old style)"
)
def teaching_old_style_data_updates(torch):
    p = torch.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        loss = (p**2).sum()
        if p.grad is not None:
            p.grad.data.zero_()
        loss.backward()
        p.data.add_(p.grad.data, alpha=-0.1)
    return {"p": val(p), "grad": val(p.grad)}


@idiom("PyTorch forum idiom: sum of losses with Python sum() over a list of 0-d tensors")
def teaching_python_sum_of_losses(torch):
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    losses = [((w - k) ** 2).sum() for k in range(3)]
    total = sum(losses)
    total.backward()
    return {"total": total.item(), "grad": val(w.grad), "grad_fn": total.grad_fn.name()}


@idiom(
    "PyTorch recipes, zeroing_out_gradients (autograd half): optimizer.zero_grad() sets None",
    nn=False,
)
def teaching_zero_grad_set_to_none(torch):
    p = torch.tensor([1.0, 2.0], requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.1)
    (p * p).sum().backward()
    opt.zero_grad()
    none_default = p.grad is None
    (p * p).sum().backward()
    opt.zero_grad(set_to_none=False)
    return {"none_default": none_default, "zeros": val(p.grad)}


@idiom("PyTorch forum idiom: torch.autograd.grad of a non-scalar needs grad_outputs", nn=False)
def teaching_grad_nonscalar_refused(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    exc = raised(lambda: torch.autograd.grad(y, x))
    (g,) = torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y))
    return {"message": str(exc), "g": val(g)}
