"""Dive into Deep Learning (d2l.ai, PyTorch tab): autograd, calculus, linear and softmax regression
from scratch, MLP and dropout from scratch, weight decay. Data are deterministic here."""

from __future__ import annotations

import math

from ._registry import idiom, val


@idiom('d2l "Automatic Differentiation": x = arange(4.0), y = 2 * dot(x, x), x.grad == 4 * x')
def d2l_autograd_simple(torch):
    x = torch.arange(4.0)
    x.requires_grad_(True)
    before = x.grad
    y = 2 * torch.dot(x, x)
    y.backward()
    check = x.grad == 4 * x
    x.grad.zero_()
    y = x.sum()
    y.backward()
    return {"before": before, "y": repr(y), "check": val(check), "sum_grad": val(x.grad)}


@idiom(
    'd2l "Automatic Differentiation", "Backward for Non-Scalar Variables": gradient=ones(len(y))'
)
def d2l_autograd_nonscalar(torch):
    x = torch.arange(4.0, requires_grad=True)
    y = x * x
    y.backward(gradient=torch.ones(len(y)))
    first = val(x.grad)
    x.grad.zero_()
    y = x * x
    y.sum().backward()
    return {"first": first, "sum": val(x.grad)}


@idiom('d2l "Automatic Differentiation", "Detaching Computation": u = y.detach(); z = u * x')
def d2l_autograd_detach(torch):
    x = torch.arange(4.0, requires_grad=True)
    y = x * x
    u = y.detach()
    z = u * x
    z.sum().backward()
    first = val(x.grad == u)
    x.grad.zero_()
    y.sum().backward()
    return {"detached": first, "direct": val(x.grad == 2 * x)}


@idiom(
    'd2l "Automatic Differentiation", "Python Control Flow": while b.norm() < 1000, a.grad == d / a'
)
def d2l_autograd_control_flow(torch):
    def f(a):
        b = a * 2
        while b.norm() < 1000:
            b = b * 2
        if b.sum() > 0:  # noqa: SIM108 (the book's if/else)
            c = b
        else:
            c = 100 * b
        return c

    out = {}
    for start in (0.37, -1.3):
        a = torch.tensor(start, requires_grad=True)
        d = f(a)
        d.backward()
        out[str(start)] = [d.item(), a.grad.item(), (a.grad == d / a).item()]
    return out


@idiom('d2l "Automatic Differentiation": a = torch.randn(size=(), requires_grad=True) keywords')
def d2l_randn_size_keyword(torch):
    a = torch.randn(size=(), requires_grad=True)
    b = torch.zeros(size=(2, 3))
    return {"shape": list(a.shape), "rg": a.requires_grad, "b": list(b.shape)}


@idiom('d2l "Calculus": numerical limit of (f(x + h) - f(x)) / h for f(x) = 3x^2 - 4x')
def d2l_calculus_numerical_limit(torch):
    def f(x):
        return 3 * x**2 - 4 * x

    x = torch.tensor(1.0, requires_grad=True)
    f(x).backward()
    h = 0.1
    limits = []
    for _ in range(5):
        limits.append((f(torch.tensor(1.0 + h)) - f(torch.tensor(1.0))).item() / h)
        h *= 0.1
    return {"autograd": x.grad.item(), "limits": limits}


def _synthetic(torch, n=40):
    true_w = torch.tensor([2, -3.4])
    true_b = 4.2
    X = torch.stack(
        [torch.sin(torch.arange(n * 1.0)), torch.cos(torch.arange(n * 1.0) * 0.7)], dim=1
    )
    y = torch.matmul(X, true_w) + true_b
    y += 0.01 * torch.sin(torch.arange(n * 1.0) * 3.0)
    return X, y.reshape((-1, 1))


@idiom('d2l "Linear Regression from Scratch" (2nd ed.): data_iter, linreg, squared_loss, sgd')
def d2l_linear_regression_scratch(torch):
    features, labels = _synthetic(torch)

    def data_iter(batch_size, features, labels):
        num_examples = len(features)
        indices = list(range(num_examples))
        for i in range(0, num_examples, batch_size):
            batch_indices = torch.tensor(indices[i : min(i + batch_size, num_examples)])
            yield features[batch_indices], labels[batch_indices]

    def linreg(X, w, b):
        return torch.matmul(X, w) + b

    def squared_loss(y_hat, y):
        return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2

    def sgd(params, lr, batch_size):
        with torch.no_grad():
            for param in params:
                param -= lr * param.grad / batch_size
                param.grad.zero_()

    w = torch.zeros(size=(2, 1), requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    lr, batch_size, log = 0.03, 10, []
    for epoch in range(3):
        for X, y in data_iter(batch_size, features, labels):
            l = squared_loss(linreg(X, w, b), y)  # noqa: E741 (the book's name)
            l.sum().backward()
            sgd([w, b], lr, batch_size)
        with torch.no_grad():
            train_l = squared_loss(linreg(features, w, b), labels)
            log.append(f"epoch {epoch + 1}, loss {float(train_l.mean()):f}")
    return {"log": log, "w": val(w), "b": val(b)}


@idiom(
    'd2l "Linear Regression from Scratch" (3rd ed.): '
    "torch.normal(0, sigma, shape, requires_grad=True)"
)
def d2l_normal_init(torch):
    w = torch.normal(0, 0.01, (2, 1), requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    return {"shape": list(w.shape), "rg": [w.requires_grad, b.requires_grad], "leaf": w.is_leaf}


@idiom('d2l "Softmax Regression from Scratch": X.sum(0, keepdim=True), softmax by exp / partition')
def d2l_softmax_scratch(torch):
    X = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    sums = [val(X.sum(0, keepdim=True)), val(X.sum(1, keepdim=True))]

    def softmax(X):
        X_exp = torch.exp(X)
        partition = X_exp.sum(1, keepdim=True)
        return X_exp / partition

    X_prob = softmax(torch.linspace(-1.0, 1.0, 10).reshape(2, 5))
    return {"sums": sums, "prob": val(X_prob), "row_sums": val(X_prob.sum(1))}


@idiom('d2l "Softmax Regression from Scratch": cross_entropy via y_hat[range(len(y_hat)), y]')
def d2l_cross_entropy_indexing(torch):
    y = torch.tensor([0, 2])
    y_hat = torch.tensor([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]], requires_grad=True)
    picked = y_hat[[0, 1], y]

    def cross_entropy(y_hat, y):
        return -torch.log(y_hat[list(range(len(y_hat))), y])

    loss = cross_entropy(y_hat, y)
    loss.mean().backward()
    return {"picked": val(picked), "loss": val(loss), "grad": val(y_hat.grad)}


@idiom('d2l "Softmax Regression from Scratch": accuracy via argmax(axis=1) and .type(y.dtype)')
def d2l_accuracy(torch):
    y = torch.tensor([0, 2, 1])
    y_hat = torch.tensor([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5], [0.2, 0.7, 0.1]])

    def accuracy(y_hat, y):
        if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
            y_hat = y_hat.argmax(axis=1)
        cmp = y_hat.type(y.dtype) == y
        return float(cmp.type(y.dtype).sum())

    return {"accuracy": accuracy(y_hat, y) / len(y)}


@idiom(
    'd2l "Softmax Regression from Scratch": net(X) with X.reshape((-1, W.shape[0])) and training'
)
def d2l_softmax_training(torch):
    num_inputs, num_outputs = 6, 3
    W = torch.zeros(num_inputs, num_outputs, requires_grad=True)
    b = torch.zeros(num_outputs, requires_grad=True)
    X = torch.cos(torch.arange(8 * 6.0)).reshape(8, 2, 3)
    y = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])

    def softmax(X):
        X_exp = torch.exp(X)
        return X_exp / X_exp.sum(1, keepdim=True)

    def net(X):
        return softmax(torch.matmul(X.reshape((-1, W.shape[0])), W) + b)

    losses = []
    for _ in range(5):
        y_hat = net(X)
        loss = -torch.log(y_hat[range(len(y_hat)), y]).mean()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            for param in (W, b):
                param -= 0.5 * param.grad
                param.grad.zero_()
    return {"losses": losses}


@idiom('d2l "Multilayer Perceptrons from Scratch": relu(X) = torch.max(X, zeros_like(X))')
def d2l_relu_max(torch):
    X = torch.linspace(-2.0, 2.0, 5, requires_grad=True)

    def relu(X):
        a = torch.zeros_like(X)
        return torch.max(X, a)

    out = relu(X)
    out.sum().backward()
    return {"out": val(out), "grad": val(X.grad)}


@idiom('d2l "Dropout from Scratch": mask = (torch.rand(X.shape) > dropout).float()')
def d2l_dropout_scratch(torch):
    def dropout_layer(X, dropout):
        assert 0 <= dropout <= 1
        if dropout == 1:
            return torch.zeros_like(X)
        mask = (torch.rand(X.shape) > dropout).float()
        return mask * X / (1.0 - dropout)

    X = torch.arange(16, dtype=torch.float32).reshape((2, 8))
    kept = dropout_layer(X, 0.0)
    dropped = dropout_layer(X, 1.0)
    half = dropout_layer(X, 0.5)
    ok = bool(((half == 0) | (half == 2 * X)).all())
    return {"kept": val(kept), "dropped": val(dropped), "half_ok": ok, "dtype": str(half.dtype)}


@idiom('d2l "Weight Decay": l2_penalty(w) = torch.sum(w.pow(2)) / 2 added to the loss')
def d2l_weight_decay(torch):
    w = torch.tensor([[0.5], [-1.0]], requires_grad=True)
    X = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    y = torch.tensor([[1.0], [0.0]])

    def l2_penalty(w):
        return torch.sum(w.pow(2)) / 2

    lambd = 3
    loss = ((X @ w - y) ** 2 / 2).sum() + lambd * l2_penalty(w)
    loss.backward()
    return {"loss": loss.item(), "grad": val(w.grad), "norm": torch.norm(w).item()}


@idiom('d2l "Numerical Stability": sigmoid gradient vanishes, x.grad of sigmoid(x) over arange')
def d2l_sigmoid_vanishing(torch):
    x = torch.arange(-8.0, 8.0, 0.5, requires_grad=True)
    y = torch.sigmoid(x)
    y.backward(torch.ones_like(x))
    return {"grad": val(x.grad), "max": x.grad.max().item()}


@idiom('d2l "Gradient Descent": f(x) = x**2 with a hand-rolled update loop and math.exp schedule')
def d2l_gradient_descent(torch):
    x = torch.tensor(10.0, requires_grad=True)
    results = []
    for t in range(10):
        y = x**2
        y.backward()
        with torch.no_grad():
            x -= 0.2 * math.exp(-0.1 * t) * x.grad
        x.grad.zero_()
        results.append(float(x))
    return {"results": results}
