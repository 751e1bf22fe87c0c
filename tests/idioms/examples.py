"""PyTorch "Learning PyTorch with Examples" (beginner_source/examples_*): polynomial fits and nets.

The tutorials start from random weights; here the weights start at fixed values so the two
libraries can be compared number for number, and the loops are shorter.
"""

from __future__ import annotations

import math

from ._registry import idiom, raised, val


def _sine_data(torch, n=2000):
    x = torch.linspace(-math.pi, math.pi, n)
    return x, torch.sin(x)


@idiom(
    "PyTorch examples_tensor/polynomial_tensor.py: gradients written by hand, .sum() and .item()"
)
def examples_polynomial_manual_grads(torch):
    x, y = _sine_data(torch)
    a, b, c, d = 0.1, 0.2, -0.1, 0.05
    losses = []
    for _ in range(50):
        y_pred = a + b * x + c * x**2 + d * x**3
        losses.append((y_pred - y).pow(2).sum().item())
        grad_y_pred = 2.0 * (y_pred - y)
        a -= 1e-6 * grad_y_pred.sum().item()
        b -= 1e-6 * (grad_y_pred * x).sum().item()
        c -= 1e-6 * (grad_y_pred * x**2).sum().item()
        d -= 1e-6 * (grad_y_pred * x**3).sum().item()
    return {"losses": losses, "coefficients": [a, b, c, d]}


@idiom("PyTorch examples_autograd/polynomial_autograd.py: no_grad update, grads set to None")
def examples_polynomial_autograd(torch):
    x, y = _sine_data(torch)
    dtype = torch.double
    a = torch.tensor(0.1, dtype=dtype, requires_grad=True)
    b = torch.tensor(0.2, dtype=dtype, requires_grad=True)
    c = torch.tensor(-0.1, dtype=dtype, requires_grad=True)
    d = torch.tensor(0.05, dtype=dtype, requires_grad=True)
    losses = []
    for t in range(60):
        y_pred = a + b * x + c * x**2 + d * x**3
        loss = (y_pred - y).pow(2).sum()
        if t % 10 == 9:
            losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            a -= 1e-6 * a.grad
            b -= 1e-6 * b.grad
            c -= 1e-6 * c.grad
            d -= 1e-6 * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    # The tutorial prints f"Result: y = {a.item()} + {b.item()} x + ..."; full float reprs
    # differ in the last digit with summation order, so the numbers are compared instead.
    return {"losses": losses, "result": [a.item(), b.item(), c.item(), d.item()]}


@idiom("PyTorch examples_autograd/polynomial_autograd.py (a version): a.grad = 0. to reset")
def examples_grad_assigned_float(torch):
    a = torch.tensor(1.0, requires_grad=True)
    (a * 3).backward()

    def reset():
        a.grad = 0.0

    exc = raised(reset)
    return {"type": type(exc).__name__, "message": str(exc)}


@idiom("PyTorch examples_autograd/polynomial_custom_function.py: LegendrePolynomial3 Function")
def examples_legendre_custom_function(torch):
    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input**3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input**2 - 1)

    x, y = _sine_data(torch)
    a = torch.full((), 0.0, requires_grad=True)
    b = torch.full((), -1.0, requires_grad=True)
    c = torch.full((), 0.0, requires_grad=True)
    d = torch.full((), 0.3, requires_grad=True)
    losses = []
    for _ in range(30):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= 5e-6 * p.grad
                p.grad = None
    return {"losses": losses, "grad_fn": type(y_pred.grad_fn).__name__}


def _two_layer_data(torch):
    # Inputs chosen so that no pre-activation lies near relu's kink at 0.
    x = torch.sin(torch.arange(8 * 6.0) * 0.37 + 0.1).reshape(8, 6)
    y = torch.cos(torch.arange(8 * 2.0)).reshape(8, 2)
    w1 = (torch.arange(6 * 5.0).reshape(6, 5) % 7 - 3) / 10
    w2 = (torch.arange(5 * 2.0).reshape(5, 2) % 3 - 1) / 4
    return x, y, w1, w2


@idiom("PyTorch examples_tensor/two_layer_net_tensor.py: clamp, mm, .t(), grad_h[h < 0] = 0")
def examples_two_layer_manual_backprop(torch):
    x, y, w1, w2 = _two_layer_data(torch)
    losses = []
    for _ in range(20):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        losses.append((y_pred - y).pow(2).sum().item())
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h_relu = grad_y_pred.mm(w2.t())
        grad_h = grad_h_relu.clone()
        grad_h[h < 0] = 0
        grad_w1 = x.t().mm(grad_h)
        w1 -= 1e-2 * grad_w1
        w2 -= 1e-2 * grad_w2
    return {"losses": losses, "w2": val(w2)}


@idiom("PyTorch examples_autograd/two_layer_net_autograd.py: w1.grad.zero_() after a no_grad step")
def examples_two_layer_autograd(torch):
    x, y, w1, w2 = _two_layer_data(torch)
    w1.requires_grad_(True)
    w2.requires_grad_(True)
    losses = []
    for _ in range(20):
        y_pred = x.mm(w1).clamp(min=0).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            w1 -= 1e-2 * w1.grad
            w2 -= 1e-2 * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
    return {"losses": losses, "w1": val(w1)}


@idiom(
    "PyTorch examples_autograd/two_layer_net_custom_function.py: MyReLU with grad_input[input < 0]"
)
def examples_two_layer_custom_relu(torch):
    class MyReLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            grad_input = grad_output.clone()
            grad_input[input < 0] = 0
            return grad_input

    x, y, w1, w2 = _two_layer_data(torch)
    w1.requires_grad_(True)
    w2.requires_grad_(True)
    losses = []
    for _ in range(10):
        relu = MyReLU.apply
        loss = (relu(x.mm(w1)).mm(w2) - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            w1 -= 1e-2 * w1.grad
            w2 -= 1e-2 * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
    return {"losses": losses}


@idiom(
    "PyTorch examples_nn/polynomial_nn.py: x.unsqueeze(-1).pow(p), Sequential(Linear, Flatten)",
    nn=True,
)
def examples_polynomial_nn(torch):
    x, y = _sine_data(torch, 50)
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
    with torch.no_grad():
        model[0].weight.copy_(torch.tensor([[0.1, 0.0, -0.05]]))
        model[0].bias.fill_(0.0)
    loss_fn = torch.nn.MSELoss(reduction="sum")
    losses = []
    for _ in range(10):
        loss = loss_fn(model(xx), y)
        losses.append(loss.item())
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for param in model.parameters():
                param -= 1e-6 * param.grad
    return {"losses": losses}


@idiom(
    "PyTorch examples_nn/polynomial_module.py: a Module with four Parameter(tensor(()))", nn=True
)
def examples_polynomial_module(torch):
    class Polynomial3(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Parameter(torch.tensor(0.1))
            self.b = torch.nn.Parameter(torch.tensor(0.2))
            self.c = torch.nn.Parameter(torch.tensor(-0.1))
            self.d = torch.nn.Parameter(torch.tensor(0.05))

        def forward(self, x):
            return self.a + self.b * x + self.c * x**2 + self.d * x**3

    x, y = _sine_data(torch)
    model = Polynomial3()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
    losses = []
    for _ in range(10):
        loss = ((model(x) - y) ** 2).sum()
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return {"losses": losses}
