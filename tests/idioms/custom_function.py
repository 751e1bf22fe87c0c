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
    class LinearFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_weight = grad_bias = None
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0)
            return grad_input, grad_weight, grad_bias

    x = torch.linspace(-1.0, 1.0, 6).reshape(2, 3)
    w = torch.linspace(0.5, 1.5, 12).reshape(4, 3).requires_grad_()
    b = torch.tensor([0.1, 0.2, 0.3, 0.4], requires_grad=True)
    out = LinearFunction.apply(x, w, b)
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
    "PyTorch custom_function_double_backward_tutorial.py: Sinh returning exp(x), exp(-x) as outputs"
)
def function_double_backward_sinh(torch):
    class Sinh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            expx = torch.exp(x)
            expnegx = torch.exp(-x)
            ctx.save_for_backward(expx, expnegx)
            return (expx - expnegx) / 2, expx, expnegx

        @staticmethod
        def backward(ctx, grad_out, grad_out_exp, grad_out_negexp):
            expx, expnegx = ctx.saved_tensors
            grad_input = grad_out * (expx + expnegx) / 2
            grad_input += grad_out_exp * expx
            grad_input -= grad_out_negexp * expnegx
            return grad_input

    def sinh(x):
        return Sinh.apply(x)[0]

    x = torch.linspace(0.1, 0.9, 4).requires_grad_()
    checks = [torch.autograd.gradcheck(sinh, x), torch.autograd.gradgradcheck(sinh, x)]
    (grad_x,) = torch.autograd.grad(sinh(x).sum(), x, create_graph=True)
    (second,) = torch.autograd.grad(grad_x.sum(), x)
    return {"checks": checks, "grad": val(grad_x), "second": val(second)}


@idiom("PyTorch custom_function_double_backward_tutorial.py: Cube with a CubeBackward Function")
def function_double_backward_cube(torch):
    class CubeBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, grad_out, x):
            ctx.save_for_backward(x, grad_out)
            return grad_out * 3 * x**2

        @staticmethod
        def backward(ctx, grad_out):
            x, sav_grad_out = ctx.saved_tensors
            dx = grad_out * sav_grad_out * 6 * x
            dgrad_out = grad_out * 3 * x**2
            return dgrad_out, dx

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, grad_out):
            (x,) = ctx.saved_tensors
            return CubeBackward.apply(grad_out, x)

    x = torch.tensor(2.0, requires_grad=True, dtype=torch.double)
    checks = [torch.autograd.gradcheck(Cube.apply, x), torch.autograd.gradgradcheck(Cube.apply, x)]
    (g,) = torch.autograd.grad(Cube.apply(x), x, create_graph=True)
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
    "PyTorch FunctionCtx.save_for_backward docstring: Func(x, y, z) saving x, y, w, out and ctx.z"
)
def function_save_for_backward_docstring(torch):
    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, z):
            w = x * y * z
            out = x * y + y * z + w * y
            ctx.save_for_backward(x, y, w, out)
            ctx.z = z
            return out

        @staticmethod
        def backward(ctx, grad_out):
            x, y, w, out = ctx.saved_tensors
            z = ctx.z
            gx = grad_out * (y + y * z)
            gy = grad_out * (x + z + w)
            gz = None
            return gx, gy, gz

    a = torch.tensor(1.0, requires_grad=True, dtype=torch.double)
    b = torch.tensor(2.0, requires_grad=True, dtype=torch.double)
    c = 4
    d = Func.apply(a, b, c)
    d.backward()
    return {"d": d.item(), "a_grad": a.grad.item(), "b_grad": b.grad.item()}
