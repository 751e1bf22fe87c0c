"""The tensor API that autograd tutorials lean on: d2l "Data Manipulation" and "Linear Algebra",
PyTorch's tensor tutorials, and how tensors print (tutorials compare printed text)."""

from __future__ import annotations

from ._registry import idiom, printed, val


@idiom('d2l "Data Manipulation": arange(12), numel(), reshape(3, 4), x.shape printed')
def tensor_d2l_data_manipulation(torch):
    x = torch.arange(12, dtype=torch.float32)
    X = x.reshape(3, 4)
    return {
        "numel": x.numel(),
        "shape": repr(x.shape),
        "X": repr(X),
        "neg": list(x.reshape(-1, 4).shape),
    }


@idiom('d2l "Data Manipulation": cat((X, Y), dim=0/1), X == Y, X.sum(), broadcasting')
def tensor_d2l_operations(torch):
    X = torch.arange(12, dtype=torch.float32).reshape((3, 4))
    Y = torch.tensor([[2.0, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]])
    a = torch.arange(3).reshape((3, 1))
    b = torch.arange(2).reshape((1, 2))
    return {
        "cat0": list(torch.cat((X, Y), dim=0).shape),
        "cat1": val(torch.cat((X, Y), dim=1)),
        "eq": val(X == Y),
        "sum": repr(X.sum()),
        "broadcast": val(a + b),
        "exp": val(torch.exp(torch.tensor([0.0, 1.0]))),
    }


@idiom('d2l "Data Manipulation": X[-1], X[1:3], X[1, 2] = 17, X[:2, :] = 12')
def tensor_d2l_indexing_assignment(torch):
    X = torch.arange(12, dtype=torch.float32).reshape((3, 4))
    last, middle = val(X[-1]), val(X[1:3])
    X[1, 2] = 17
    X[:2, :] = 12
    return {"last": last, "middle": middle, "X": val(X)}


@idiom('d2l "Data Manipulation", "Saving Memory": id(Y) after Y = Y + X, Z[:] = X + Y, X += Y')
def tensor_d2l_saving_memory(torch):
    X = torch.ones(2, 3)
    Y = torch.full((2, 3), 2.0)
    before = id(Y)
    Y = Y + X
    rebinds = id(Y) == before
    Z = torch.zeros_like(Y)
    z_id = id(Z)
    Z[:] = X + Y
    before = id(X)
    X += Y
    return {
        "rebinds": rebinds,
        "slice_keeps": id(Z) == z_id,
        "iadd_keeps": id(X) == before,
        "X": val(X),
    }


@idiom(
    'd2l "Data Manipulation", "Conversion": A = X.numpy(); B = torch.from_numpy(A); '
    "a.item(), float(a), int(a)"
)
def tensor_d2l_conversion(torch):
    X = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    A = X.numpy()
    B = torch.from_numpy(A)
    a = torch.tensor([3.5])
    return {
        "types": [type(A).__name__, type(B).__name__],
        "scalars": [repr(a), a.item(), float(a), int(a)],
    }


@idiom('d2l "Linear Algebra": A.T, A == A.T, A.clone(), A * B, sum(axis=0), mean, keepdims, cumsum')
def tensor_d2l_linear_algebra(torch):
    A = torch.arange(6, dtype=torch.float32).reshape(3, 2)
    B = A.clone()
    S = torch.tensor([[1, 2, 3], [2, 0, 4], [3, 4, 5]])
    return {
        "T": val(A.T),
        "symmetric": val(S == S.T),
        "hadamard": val(A * B),
        "sum0": val(A.sum(axis=0)),
        "sum01": A.sum(axis=[0, 1]).item(),
        "mean": [A.mean().item(), (A.sum() / A.numel()).item()],
        "keep": val(A.sum(axis=1, keepdims=True)),
        "norm": val(A / A.sum(axis=1, keepdims=True)),
        "cumsum": val(A.cumsum(axis=0)),
    }


@idiom('d2l "Linear Algebra": torch.dot, torch.mv, torch.mm, A@B, torch.norm, abs().sum()')
def tensor_d2l_products_norms(torch):
    x = torch.arange(3, dtype=torch.float32)
    y = torch.ones(3, dtype=torch.float32)
    A = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    B = torch.ones(3, 4, dtype=torch.float32)
    u = torch.tensor([3.0, -4.0])
    return {
        "dot": [torch.dot(x, y).item(), torch.sum(x * y).item()],
        "mv": [val(torch.mv(A, x)), val(A @ x)],
        "mm": [val(torch.mm(A, B)), val(A @ B)],
        "norm": [
            torch.norm(u).item(),
            torch.abs(u).sum().item(),
            torch.norm(torch.ones((4, 9))).item(),
        ],
    }


@idiom("PyTorch blitz tensor_tutorial.py: x.view(-1, 8), x.size() prints torch.Size([...])")
def tensor_blitz_view_size(torch):
    x = torch.arange(16.0).reshape(4, 4)
    y = x.view(16)
    z = x.view(-1, 8)
    return {
        "printed": printed(lambda: print(x.size(), y.size(), z.size())),
        "tuple": tuple(z.size()) == (2, 8),
    }


@idiom("PyTorch blitz tensor_tutorial.py: torch.add(x, y, out=result) and y.add_(x)")
def tensor_blitz_add_out(torch):
    x = torch.ones(5, 3)
    y = torch.full((5, 3), 2.0)
    result = torch.empty(5, 3)
    torch.add(x, y, out=result)
    y.add_(x)
    return {"result": val(result), "y": val(y)}


@idiom("PyTorch tensor printing: a long row wraps at 80 columns as PyTorch lays it out")
def tensor_print_wrapping(torch):
    x = torch.linspace(0.0, 1.0, 30, requires_grad=True)
    y = x * 2
    return {"x": repr(x), "y": repr(y)}


@idiom("PyTorch tensor printing: more than 1000 elements are summarised with ...")
def tensor_print_summarised(torch):
    return {"big": repr(torch.arange(2000.0)), "matrix": str(torch.ones(40, 40))}


@idiom(
    "PyTorch tensor printing: dtype= shown for a non-default dtype; dtype prints as torch.float32"
)
def tensor_print_dtypes(torch):
    a = torch.tensor([1.0, 2.0], dtype=torch.float32)
    b = torch.tensor([1, 2])
    c = torch.tensor([True, False])
    return {"a": repr(a), "b": repr(b), "c": repr(c), "dtype": str(a.dtype), "bdtype": str(b.dtype)}


@idiom("PyTorch torch.set_printoptions docstring: precision=2, then the default restored")
def tensor_set_printoptions(torch):
    torch.set_printoptions(precision=2)
    short = repr(torch.tensor([1.12345, 2.5]))
    torch.set_printoptions(profile="default")
    return {"short": short, "default": repr(torch.tensor([1.12345, 2.5]))}


@idiom("PyTorch tensorqs_tutorial.py: ones_like, rand_like(dtype=torch.float), rand(shape) shapes")
def tensor_like_constructors(torch):
    x_data = torch.tensor([[1, 2], [3, 4]])
    x_ones = torch.ones_like(x_data)
    x_rand = torch.rand_like(x_data, dtype=torch.float)
    shape = (2, 3)
    return {
        "ones": repr(x_ones),
        "rand": [list(x_rand.shape), str(x_rand.dtype), bool(((x_rand >= 0) & (x_rand < 1)).all())],
        "zeros": repr(torch.zeros(shape)),
        "rand_shape": list(torch.rand(shape).shape),
    }


@idiom("Tutorial tensor utilities: sort, topk, argsort with values/indices named results")
def tensor_sort_topk(torch):
    x = torch.tensor([3.0, 1.0, 4.0, 1.5, 9.0, 2.6], requires_grad=True)
    s = torch.sort(x, descending=True)
    t = x.topk(2)
    (s.values[:3].sum() + t.values.sum()).backward()
    return {
        "sorted": [val(s.values), val(s.indices)],
        "top": val(t.indices),
        "argsort": val(x.argsort()),
        "grad": val(x.grad),
    }


@idiom(
    "Tutorial tensor utilities: chunk, split, repeat, tile, flip, roll on a differentiable tensor"
)
def tensor_reshaping_utilities(torch):
    x = torch.arange(6.0, requires_grad=True)
    a, b = x.chunk(2)
    parts = torch.split(x, [2, 4])
    y = torch.cat([a.flip(0), b.roll(1), x.repeat(2)[:3], x.tile((2,))[-2:], parts[0]])
    (y * torch.arange(y.numel() * 1.0)).sum().backward()
    return {"y": val(y), "grad": val(x.grad)}


@idiom("Tutorial tensor utilities: masked_fill, where(cond) with one argument, nonzero")
def tensor_masking_utilities(torch):
    x = torch.tensor([[1.0, -2.0], [0.0, 3.0]], requires_grad=True)
    y = x.masked_fill(x < 0, 0.0)
    y.sum().backward()
    return {
        "y": val(y),
        "grad": val(x.grad),
        "where": [val(t) for t in torch.where(x > 0)],
        "nonzero": val((x > 0).nonzero()),
    }


@idiom(
    "Tutorial tensor utilities: allclose, isclose, log10, log2, floor, ceil, round, trunc, "
    "rsqrt, //, %"
)
def tensor_elementwise_extras(torch):
    x = torch.tensor([0.5, 2.25, 7.5])
    return {
        "allclose": torch.allclose(x, x + 1e-9),
        "isclose": val(torch.isclose(x, torch.tensor([0.5, 2.0, 7.5]))),
        "logs": [val(torch.log10(x)), val(torch.log2(x))],
        "rounding": [val(x.floor()), val(x.ceil()), val(x.round()), val(x.trunc())],
        "rsqrt": val(x.rsqrt()),
        "floordiv_mod": [val(x // 2), val(x % 2)],
    }


@idiom(
    "PyTorch keyword spellings: sum(input, dim=, keepdim=), matmul(input=, other=), randn(size=)"
)
def tensor_keyword_spellings(torch):
    x = torch.arange(6.0).reshape(2, 3)
    return {
        "sum": val(torch.sum(x, dim=1, keepdim=True)),
        "matmul": val(torch.matmul(input=x, other=x.T)),
        "randn": list(torch.randn(size=(2, 2)).shape),
        "max": val(torch.max(x, dim=0).values),
    }


@idiom("PyTorch legacy constructors: torch.FloatTensor, LongTensor, DoubleTensor and their dtypes")
def tensor_legacy_typed_constructors(torch):
    return {
        "float": str(torch.FloatTensor([1, 2]).dtype),
        "long": str(torch.LongTensor([1, 2]).dtype),
        "double": str(torch.DoubleTensor([1, 2]).dtype),
    }


@idiom("PyTorch torch.manual_seed docstring: returns a torch.Generator; same seed, same numbers")
def tensor_manual_seed(torch):
    g = torch.manual_seed(0)
    a = torch.rand(3)
    torch.manual_seed(0)
    b = torch.rand(3)
    return {"generator": isinstance(g, torch.Generator), "same": bool(torch.equal(a, b))}


@idiom("PyTorch Tensor.dot docstring: dot of 2-D tensors is refused (1D tensors expected)")
def tensor_dot_2d_refused(torch):
    A = torch.ones(2, 2)
    try:
        A.dot(A)
        out = "no error"
    except RuntimeError as exc:
        out = str(exc)
    return {"error": out}


@idiom("PyTorch broadcasting semantics note: incompatible shapes raise with the size message")
def tensor_broadcast_error_message(torch):
    try:
        torch.ones(2) + torch.ones(3)
        out = "no error"
    except RuntimeError as exc:
        out = str(exc)
    return {"error": out}


@idiom("PyTorch torch.max/torch.sort docstrings: the named result printed, torch.return_types.max")
def tensor_return_types_printed(torch):
    a = torch.tensor([[0.5, -1.25, 2.0], [3.0, 0.75, -0.5]])
    return {
        "max": printed(lambda: print(torch.max(a, 1))),
        "sort": repr(torch.sort(a, dim=0, descending=True)),
        "indices": val(a.topk(2).indices),
    }


@idiom("PyTorch tensor docs: in-place variants (x.exp_(), x.sqrt_()) on a tensor under no_grad")
def tensor_inplace_unary_variants(torch):
    w = torch.tensor([0.25, 1.0, 4.0], requires_grad=True)
    with torch.no_grad():
        w.sqrt_()
        w.exp_()
    (w * w).sum().backward()
    return {"w": val(w), "grad": val(w.grad), "leaf": w.is_leaf}
