"""Custom torch.autograd.Function: its docstrings, the "Extending PyTorch" notes and the
"Double Backward with Custom Functions" tutorial."""

from __future__ import annotations

from ._registry import idiom, raised, val


@idiom("PyTorch autograd.Function docstring: class Exp with save_for_backward(result)")
def function_exp_docstring(torch):
    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result

    x = torch.tensor([0.0, 1.0, -1.0], requires_grad=True)
    output = Exp.apply(x)
    output.sum().backward()
    return {"out": val(output), "grad": val(x.grad), "grad_fn": type(output.grad_fn).__name__}


@idiom(
    'PyTorch notes "Extending PyTorch": LinearFunction with needs_input_grad and an optional bias'
)
def function_linear_needs_input_grad(torch):
    class Affine(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, b=None):
            ctx.save_for_backward(x, w, b)
            y = x.mm(w.t())
            return y if b is None else y + b.unsqueeze(0).expand_as(y)

        @staticmethod
        def backward(ctx, gy):
            x, w, b = ctx.saved_tensors
            gx = gy.mm(w) if ctx.needs_input_grad[0] else None
            gw = gy.t().mm(x) if ctx.needs_input_grad[1] else None
            gb = gy.sum(0) if b is not None and ctx.needs_input_grad[2] else None
            return gx, gw, gb

    x = torch.linspace(-1.0, 1.0, 6).reshape(2, 3)
    w = torch.linspace(0.5, 1.5, 12).reshape(4, 3).requires_grad_()
    b = torch.tensor([0.1, 0.2, 0.3, 0.4], requires_grad=True)
    out = Affine.apply(x, w, b)
    out.pow(2).sum().backward()
    return {"out": val(out), "w_grad": val(w.grad), "b_grad": val(b.grad), "x_grad": x.grad}


@idiom(
    'PyTorch notes "Extending PyTorch": MulConstant keeps a non-tensor on ctx, returns None for it'
)
def function_mul_constant(torch):
    class MulConstant(torch.autograd.Function):
        @staticmethod
        def forward(ctx, tensor, constant):
            ctx.constant = constant
            return tensor * constant

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.constant, None

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    MulConstant.apply(x, 5.5).sum().backward()
    return {"grad": val(x.grad)}


@idiom(
    'PyTorch notes "Extending PyTorch": gradcheck(LinearFunction.apply, input, eps=1e-6, atol=1e-4)'
)
def function_gradcheck_custom(torch):
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, grad_out):
            (x,) = ctx.saved_tensors
            return grad_out * 3 * x**2

    x = torch.linspace(-1.0, 1.0, 6).reshape(2, 3).requires_grad_()
    ok = torch.autograd.gradcheck(Cube.apply, (x,), eps=1e-6, atol=1e-4)
    return {"ok": ok}


@idiom("PyTorch custom_function_double_backward_tutorial.py: Square, gradcheck and gradgradcheck")
def function_double_backward_square(torch):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**2

        @staticmethod
        def backward(ctx, grad_out):
            (x,) = ctx.saved_tensors
            return grad_out * 2 * x

    x = torch.linspace(0.1, 0.9, 9).reshape(3, 3).requires_grad_()
    first = torch.autograd.gradcheck(Square.apply, x)
    second = torch.autograd.gradgradcheck(Square.apply, x)
    y = torch.tensor(1.0, requires_grad=True).clone()
    out = Square.apply(y)
    (grad_x,) = torch.autograd.grad(out, y, create_graph=True)
    return {"checks": [first, second], "grad_x": grad_x.item(), "grad_x_rg": grad_x.requires_grad}


@idiom(
    "PyTorch custom_function_double_backward_tutorial.py: intermediates (exp(x), exp(-x)) "
    "returned as extra outputs so that double backward sees them (the tutorial's sinh; here cosh)"
)
def function_double_backward_intermediates(torch):
    class Cosh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            e_pos, e_neg = torch.exp(x), torch.exp(-x)
            ctx.save_for_backward(e_pos, e_neg)
            return (e_pos + e_neg) / 2, e_pos, e_neg

        @staticmethod
        def backward(ctx, g_out, g_pos, g_neg):
            e_pos, e_neg = ctx.saved_tensors
            g_in = g_out * (e_pos - e_neg) / 2
            g_in = g_in + g_pos * e_pos
            g_in = g_in - g_neg * e_neg
            return g_in

    def cosh(x):
        return Cosh.apply(x)[0]

    x = torch.linspace(-0.8, 0.9, 4).requires_grad_()
    checks = [torch.autograd.gradcheck(cosh, x), torch.autograd.gradgradcheck(cosh, x)]
    (g,) = torch.autograd.grad(cosh(x).sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    return {"checks": checks, "grad": val(g), "second": val(gg)}


@idiom(
    "PyTorch custom_function_double_backward_tutorial.py: a backward that is itself a custom "
    "Function with its own backward (the tutorial's Cube/CubeBackward; here x**4)"
)
def function_double_backward_nested(torch):
    class QuarticGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, g_out, x):
            ctx.save_for_backward(g_out, x)
            return 4 * g_out * x**3

        @staticmethod
        def backward(ctx, gg):
            g_out, x = ctx.saved_tensors
            return 4 * gg * x**3, 12 * gg * g_out * x**2

    class Quartic(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**4

        @staticmethod
        def backward(ctx, g_out):
            (x,) = ctx.saved_tensors
            return QuarticGrad.apply(g_out, x)

    x = torch.tensor(1.5, requires_grad=True, dtype=torch.double)
    checks = [
        torch.autograd.gradcheck(Quartic.apply, x),
        torch.autograd.gradgradcheck(Quartic.apply, x),
    ]
    (g,) = torch.autograd.grad(Quartic.apply(x), x, create_graph=True)
    (gg,) = torch.autograd.grad(g, x)
    return {"checks": checks, "g": g.item(), "gg": gg.item()}


@idiom("PyTorch FunctionCtx.mark_non_differentiable docstring: sort values and indices")
def function_mark_non_differentiable(torch):
    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out, idx = x.sort()
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(x, idx)
            return out, idx

        @staticmethod
        def backward(ctx, g1, g2):
            x, idx = ctx.saved_tensors
            grad_input = torch.zeros_like(x)
            grad_input.index_add_(0, idx, g1)
            return grad_input

    x = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
    out, idx = Func.apply(x)
    (out * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
    return {"out": val(out), "idx": val(idx), "idx_rg": idx.requires_grad, "grad": val(x.grad)}


@idiom("PyTorch FunctionCtx.set_materialize_grads docstring: None gradients when not materialized")
def function_set_materialize_grads(torch):
    seen = []

    class SimpleFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x.clone(), x.clone()

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append([g1 is None, g2 is None])
            x = torch.zeros(2)
            if g1 is not None:
                x = x + g1
            if g2 is not None:
                x = x + g2
            return x

    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b, _ = SimpleFunc.apply(a)
    b.sum().backward()
    return {"seen": seen, "grad": val(a.grad)}


@idiom("PyTorch FunctionCtx.mark_dirty docstring: an in-place custom Function")
def function_mark_dirty(torch):
    class Inplace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x_npy = x.numpy()
            x_npy += 1
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    a = torch.tensor([1.0, 2.0], requires_grad=True).clone()
    b = a * a
    Inplace.apply(a)
    exc = raised(lambda: b.sum().backward())
    return {"a": val(a), "raised": isinstance(exc, RuntimeError)}


@idiom("PyTorch autograd.function docstrings: once_differentiable refuses double backward")
def function_once_differentiable(torch):
    once_differentiable = torch.autograd.function.once_differentiable

    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * 2 * x

    x = torch.tensor([1.0, 3.0], requires_grad=True)
    (g,) = torch.autograd.grad(Twice.apply(x).sum(), x, create_graph=True)
    exc = raised(lambda: g.sum().backward())
    return {"g": val(g), "raised": isinstance(exc, RuntimeError)}


@idiom("PyTorch autograd.Function docstring (2.0 style): forward without ctx plus setup_context")
def function_setup_context_style(torch):
    class MyCube(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x**3, 3 * x**2

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            _, dx = output
            ctx.save_for_backward(dx)

        @staticmethod
        def backward(ctx, grad_output, grad_dx):
            (dx,) = ctx.saved_tensors
            return grad_output * dx

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y, _ = MyCube.apply(x)
    y.sum().backward()
    return {"grad": val(x.grad)}


@idiom(
    "PyTorch FunctionCtx.save_for_backward docstring: inputs, an intermediate and the output "
    "saved, a non-tensor kept on ctx, None returned for it"
)
def function_save_for_backward_docstring(torch):
    class Mix(torch.autograd.Function):
        @staticmethod
        def forward(ctx, p, q, k):
            pq = p * q
            out = pq * k + q * q
            ctx.save_for_backward(p, q, pq, out)
            ctx.k = k
            return out

        @staticmethod
        def backward(ctx, g):
            p, q, pq, out = ctx.saved_tensors
            k = ctx.k
            return g * q * k, g * (p * k + 2 * q), None

    a = torch.tensor(1.5, requires_grad=True, dtype=torch.double)
    b = torch.tensor(-2.0, requires_grad=True, dtype=torch.double)
    d = Mix.apply(a, b, 3)
    d.backward()
    return {"d": d.item(), "a_grad": a.grad.item(), "b_grad": b.grad.item()}
