"""PyTorch functions that are compositions of the op table's entries, with PyTorch's
argument checks and formulas: bmm, baddbmm, addmm, addmv, addcmul, addcdiv, lerp, narrow,
movedim, broadcast_tensors, meshgrid, diff, cdist, deg2rad, rad2deg, var_mean, std_mean,
aminmax; and the boolean tests isnan, isinf, isfinite, isposinf, isneginf and
count_nonzero (no gradient).

Each gradient is that of the ops it is made of (their generated tests cover them); the
grad_fn shown is the last op's, not PyTorch's fused kernel's (AddmmBackward0 & co.).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import AgradDtypeError, AgradIndexError, AgradShapeError, AgradValueError
from . import shaping
from .args import as_tensor, first
from .escapes import read_values
from .grad_attr import scalar_type_name
from .ops.core import normalize_axis
from .promotion import check_addmm, mixed_floats
from .public import API, public
from .return_types import named_result
from .tensor import Tensor, wrap

ALL = "isnan", "isinf", "isfinite", "isposinf", "isneginf"
AMINMAX = named_result("aminmax", ("min", "max"))


def _f(name: str) -> Any:
    return API[name]  # a generated face (add, mul, matmul, ...), looked up when called


@public(method=True)
def bmm(input: Any, mat2: Any) -> Tensor:  # noqa: A002
    """Batched matrix product of two 3-D tensors with the same batch size."""
    a, b = first(input), first(mat2)
    if a.ndim != 3:
        raise AgradShapeError(f"bmm: batch1 must be a 3D tensor, got shape {list(a.shape)}",
                              torch="batch1 must be a 3D tensor")  # fmt: skip
    if b.ndim != 3:
        raise AgradShapeError(f"bmm: batch2 must be a 3D tensor, got shape {list(b.shape)}",
                              torch="batch2 must be a 3D tensor")  # fmt: skip
    if b.shape[:2] != (a.shape[0], a.shape[2]):
        raise AgradShapeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}]."
        )
    return _f("matmul")(a, b)


def _scaled_sum(input: Any, product: Tensor, beta: Any, alpha: Any) -> Tensor:
    """beta·input + alpha·product; with beta = 0 input is ignored (nan and inf in it too),
    as PyTorch's BLAS-style functions do, though it must still broadcast."""
    x = first(input)
    if alpha != 1:
        product = _f("mul")(product, alpha)
    shape = np.broadcast_shapes(x.shape, product.shape)
    if tuple(shape) != tuple(product.shape):
        raise AgradShapeError(
            f"the input of shape {list(x.shape)} does not broadcast to the product's shape "
            f"{list(product.shape)}"
        )
    if beta == 0:
        return product
    return _f("add")(x if beta == 1 else _f("mul")(x, beta), product)


@public(method=True)
def addmm(input: Any, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:  # noqa: A002
    """beta·input + alpha·(mat1 @ mat2)."""
    check_addmm(first(input), first(mat1), first(mat2))
    return _scaled_sum(input, API["mm"](mat1, mat2), beta, alpha)


@public(method=True)
def addmv(input: Any, mat: Any, vec: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:  # noqa: A002
    """beta·input + alpha·(mat @ vec)."""
    m, v = first(mat), first(vec)
    if m.ndim != 2 or v.ndim != 1:
        raise AgradShapeError(
            f"addmv: expects a matrix and a vector, got shapes {list(m.shape)} and {list(v.shape)}"
        )
    x = first(input)
    dtypes = (x._array.dtype, m._array.dtype, v._array.dtype)
    if not dtypes[0] == dtypes[1] == dtypes[2] and not mixed_floats(*dtypes):
        names = ", ".join(scalar_type_name(t._array.dtype) for t in (x, m))
        raise AgradDtypeError(
            "addmv input tensors must have the same dtype, but got "
            f"{names}, and {scalar_type_name(v._array.dtype)}"
        )
    return _scaled_sum(input, _f("matmul")(m, v), beta, alpha)


@public(method=True)
def baddbmm(input: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:  # noqa: A002
    """beta·input + alpha·bmm(batch1, batch2)."""
    return _scaled_sum(input, bmm(batch1, batch2), beta, alpha)


@public(method=True)
def addcmul(input: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:  # noqa: A002
    """input + value·tensor1·tensor2."""
    term = _f("mul")(tensor1, tensor2)
    return _f("add")(input, term if value == 1 else _f("mul")(term, value))


@public(method=True)
def addcdiv(input: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:  # noqa: A002
    """input + value·tensor1/tensor2."""
    term = _f("div")(tensor1, tensor2)
    return _f("add")(input, term if value == 1 else _f("mul")(term, value))


@public(method=True)
def lerp(input: Any, end: Any, weight: Any) -> Tensor:  # noqa: A002
    """input + weight·(end - input), from the nearer end as PyTorch's kernel (weight >= 0.5
    computes end - (end - input)·(1 - weight)): exact at weight 1, within an ulp elsewhere."""
    a, b = first(input), first(end)
    span = _f("sub")(b, a)
    w = weight._array if isinstance(weight, Tensor) else np.asarray(weight)
    near_start = np.abs(w) < 0.5
    low = _f("add")(a, _f("mul")(span, weight))
    if np.all(near_start):
        return low
    high = _f("sub")(b, _f("mul")(span, _f("rsub")(weight, 1.0)))
    return API["where"](near_start, low, high)


@public(method=True)
def narrow(input: Any, dim: int, start: Any, length: int) -> Tensor:  # noqa: A002
    """The slice start:start+length along ``dim`` (a view, as PyTorch's)."""
    x = first(input)
    if x.ndim == 0:
        raise AgradShapeError("narrow() cannot be applied to a 0-dim tensor.")
    d = normalize_axis(dim, x.ndim, "narrow")
    size = x.shape[d]
    begin = int(start._array if isinstance(start, Tensor) else start)
    if not -size <= begin <= size:
        raise AgradIndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {begin})"
        )
    begin %= size if size else 1
    if length < 0 or begin + length > size:
        raise AgradShapeError(
            f"start ({begin}) + length ({length}) exceeds dimension size ({size})."
        )
    return shaping.index(x, (slice(None),) * d + (slice(begin, begin + length),))


@public("moveaxis", method=True)
def movedim(input: Any, source: Any, destination: Any) -> Tensor:  # noqa: A002
    """``input`` with the dims ``source`` moved to the positions ``destination``."""
    x = first(input)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise AgradShapeError(
            f"movedim: Invalid source or destination dims: source ({src} dims) should "
            f"contain the same number of dims as destination ({dst} dims)"
        )
    n = max(x.ndim, 1)
    src = [normalize_axis(s, n, "movedim") for s in src]
    dst = [normalize_axis(s, n, "movedim") for s in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise AgradShapeError("movedim: repeated dim in `source` or `destination`")
    if x.ndim == 0:
        return shaping.reshape(x, ())
    rest = iter(d for d in range(x.ndim) if d not in src)
    where = dict(zip(dst, src, strict=True))
    return shaping.permute(x, *[where[k] if k in where else next(rest) for k in range(x.ndim)])


@public()
def broadcast_tensors(*tensors: Any) -> tuple[Tensor, ...]:
    """The tensors expanded to their common broadcast shape (views)."""
    ts = [first(t) if isinstance(t, Tensor) else as_tensor(t) for t in tensors]
    shape = _broadcast_shape(ts)
    return tuple(t if tuple(t.shape) == shape else t.expand(*shape) for t in ts)


def _broadcast_shape(ts: list[Tensor]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*(t.shape for t in ts)))
    except ValueError:
        shapes = ", ".join(str(list(t.shape)) for t in ts)
        raise AgradShapeError(f"broadcast_tensors: shapes {shapes} do not broadcast") from None


@public()
def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids of 1-D tensors ('ij', PyTorch's default, or 'xy')."""
    ts = list(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else \
        list(tensors)  # fmt: skip
    ts = [first(t) if isinstance(t, Tensor) else as_tensor(t) for t in ts]
    mode = "ij" if indexing is None else indexing
    if mode not in ("ij", "xy"):
        raise AgradValueError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {mode}'
        )
    if any(t.ndim > 1 for t in ts):
        raise AgradShapeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list")
    ts = [shaping.reshape(t, (-1,)) for t in ts]
    swap = mode == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.shape[0] for t in ts)
    grids = []
    for k, t in enumerate(ts):
        lined = shaping.reshape(t, tuple(-1 if j == k else 1 for j in range(len(ts))))
        grids.append(lined.expand(*shape))
    if swap:  # 'xy': the first two inputs' roles are exchanged, then their grids back
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


@public(method=True)
def diff(input: Any, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Tensor:  # noqa: A002
    """The n-th forward difference along ``dim`` (after prepend/append are joined)."""
    x = first(input)
    if x.ndim == 0:
        raise AgradShapeError("diff expects input to be at least one-dimensional")
    d = normalize_axis(dim, x.ndim, "diff")
    parts = [as_tensor(p) for p in (prepend,) if p is not None]
    parts += [x] + [as_tensor(a) for a in (append,) if a is not None]
    if len(parts) > 1:
        x = API["cat"](parts, d)
    for _ in range(int(n)):
        lead = (slice(None),) * d
        x = _f("sub")(shaping.index(x, lead + (slice(1, None),)),
                      shaping.index(x, lead + (slice(None, -1),)))  # fmt: skip
    return x


@public()
def cdist(x1: Any, x2: Any, p: float = 2.0, compute_mode: Any = None) -> Tensor:
    """The p-norm distances between the rows of x1 and of x2 (batched over leading dims)."""
    a, b = first(x1), first(x2)
    if a.ndim < 2 or b.ndim < 2:
        raise AgradShapeError(
            f"cdist only supports at least 2D tensors, X1 got: {a.ndim}D",
            torch=f"cdist only supports at least 2D tensors, X1 got: {a.ndim}D",
        )
    if a.shape[-1] != b.shape[-1]:
        raise AgradShapeError(
            f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} X2: {b.shape[-1]}"
        )
    gaps = _f("sub")(shaping.unsqueeze(a, -2), shaping.unsqueeze(b, -3))
    return API["norm"](gaps, p, dim=-1)


def _with_mean(name: str):
    def fn(input: Any, dim: Any = None, *flags: Any, correction: Any = 1,  # noqa: A002
           keepdim: bool = False, unbiased: Any = None) -> tuple[Tensor, Tensor]:  # fmt: skip
        x = first(input)
        # (PyTorch's positional forms, as var's and std's: (input, unbiased) and
        # (input, dim, unbiased, keepdim))
        if isinstance(dim, bool) and not flags:
            dim, unbiased = None, dim
        elif flags:
            unbiased = flags[0]
            keepdim = flags[1] if len(flags) > 1 else keepdim
        kw = {} if unbiased is None else {"unbiased": unbiased}
        spread = API[name](x, dim, keepdim=keepdim, correction=correction, **kw)
        return spread, API["mean"](x, dim, keepdim)

    fn.__name__ = fn.__qualname__ = f"{name}_mean"
    fn.__doc__ = f"({name}, mean) over ``dim``, as PyTorch's {name}_mean."
    return public()(fn)


var_mean, std_mean = _with_mean("var"), _with_mean("std")


@public(method=True)
def aminmax(input: Any, *, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A002
    """(min, max) over ``dim`` (all elements by default)."""
    x = first(input)
    if dim is None:
        return AMINMAX(API["amin"](x), API["amax"](x))
    return AMINMAX(API["amin"](x, dim, keepdim), API["amax"](x, dim, keepdim))


@public(method=True)
def deg2rad(input: Any) -> Tensor:  # noqa: A002
    """Degrees to radians (times π/180)."""
    return _f("mul")(first(input), np.pi / 180.0)


@public(method=True)
def rad2deg(input: Any) -> Tensor:  # noqa: A002
    """Radians to degrees (times 180/π)."""
    return _f("mul")(first(input), 180.0 / np.pi)


def _test(name: str, fn: Any) -> None:
    def test(input: Any) -> Tensor:  # noqa: A002
        read_values(first(input))
        return wrap(fn(first(input)._array))

    test.__name__ = test.__qualname__ = name
    test.__doc__ = f"Elementwise {name} (a boolean tensor, no gradient)."
    public(method=True)(test)


for _name in ALL:
    _test(_name, getattr(np, _name))


@public(method=True)
def count_nonzero(input: Any, dim: Any = None) -> Tensor:  # noqa: A002
    """The number of nonzero elements (over ``dim``), an int64 tensor."""
    x = first(input)
    axis = None if dim is None else tuple(dim) if isinstance(dim, (list, tuple)) else int(dim)
    read_values(x)
    return wrap(np.asarray(np.count_nonzero(x._array, axis=axis), dtype=np.int64))
