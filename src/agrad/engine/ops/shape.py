"""Shape ops: reshape and its aliases, permute/transpose, expand, dtype casts, sum_to.
(Indexing, indexed assignment and concat/stack are in `indexing`.)

VJPs address axes from the end, so that a cotangent with leading batch
dimensions (a block of Jacobian rows) flows through unchanged.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import AgradShapeError
from .. import batching, kernels
from .core import NOTHING, Case, Op, batch_of, normalize_axis, register, same_shape

# ---- reshape family ---------------------------------------------------------------------


def _reshape_forward(x, shape):
    return np.reshape(x, shape)


def _reshape_vjp(ns, g, out, x, shape):
    return (g.reshape(batch_of(g, out.ndim) + tuple(x.shape)),)


def _reshape_shape(shape, shape_to):
    size = math.prod(shape)
    target = list(shape_to)
    if target.count(-1) > 1:
        raise AgradShapeError(f"reshape: only one dimension can be -1, got {tuple(target)}")
    known = math.prod(n for n in target if n != -1)
    if -1 in target:
        if known == 0 or size % known:
            raise AgradShapeError(
                f"reshape: cannot reshape a tensor of shape {tuple(shape)} ({size} elements) "
                f"into {tuple(shape_to)}",
                torch=f"shape '{list(shape_to)}' is invalid for input of size {size}",
            )
        target[target.index(-1)] = size // known
    elif known != size:
        raise AgradShapeError(
            f"reshape: cannot reshape a tensor of shape {tuple(shape)} ({size} elements) into "
            f"{tuple(shape_to)} ({known} elements); the sizes must match",
            torch=f"shape '{list(shape_to)}' is invalid for input of size {size}",
        )
    return tuple(target)


def _reshape_rule(in_shape, shape):
    return _reshape_shape(in_shape, shape)


def _permute_forward(x, axes):
    return np.transpose(x, axes)


def _permute_vjp(ns, g, out, x, axes):
    nb = g.ndim - out.ndim
    inverse = np.argsort(axes)
    return (ns.permute(g, tuple(range(nb)) + tuple(nb + int(i) for i in inverse)),)


def _permute_shape(shape, axes):
    n = len(shape)
    if len(axes) == n:
        normalized = [normalize_axis(a, n, "permute") for a in axes]
        if len(set(normalized)) != n:
            raise AgradShapeError(
                f"permute: axes {tuple(axes)} repeat a dimension",
                torch="permute(): duplicate dims are not allowed.",
            )
    if sorted(a % max(n, 1) for a in axes) != list(range(n)):
        raise AgradShapeError(
            f"permute: axes {tuple(axes)} are not a permutation of the {len(shape)} "
            f"dimensions of a tensor of shape {tuple(shape)}"
        )
    return tuple(shape[a] for a in axes)


def _transpose_forward(x, dim0, dim1):
    if np.ndim(x) == 0:  # PyTorch: a 0-d tensor's dims 0 and -1 swap with themselves
        _transpose_shape((), dim0, dim1)  # (and others are out of range)
        return x
    return np.swapaxes(x, dim0, dim1)


def _transpose_vjp(ns, g, out, x, dim0, dim1):
    n = x.ndim
    if n == 0:
        return (g,)
    return (ns.swapaxes(g, dim0 % n - n, dim1 % n - n),)


def _transpose_shape(shape, dim0, dim1):
    d0, d1 = (normalize_axis(d, len(shape), "transpose") for d in (dim0, dim1))
    if not shape:
        return ()
    out = list(shape)
    out[d0], out[d1] = out[d1], out[d0]
    return tuple(out)


def _expand_forward(x, shape):
    return np.broadcast_to(x, shape)


def _expand_vjp(ns, g, out, x, shape):
    return (g,)  # the backward loop sums it back to x's shape


def _torch_expand_text(have: tuple, target: tuple) -> str | None:
    if len(target) < len(have):
        return None  # (PyTorch's text names its tensor type: torch.FloatTensor{...})
    lead = len(target) - len(have)
    for i in range(len(have) - 1, -1, -1):
        if have[i] != 1 and have[i] != target[lead + i] and target[lead + i] != -1:
            return (
                f"The expanded size of the tensor ({target[lead + i]}) must match the existing "
                f"size ({have[i]}) at non-singleton dimension {lead + i}.  Target sizes: "
                f"{list(target)}.  Tensor sizes: {list(have)}"
            )
    return None


def _expand_shape(in_shape, shape):
    target = tuple(shape)
    try:
        result = np.broadcast_shapes(in_shape, target)
    except ValueError:
        result = None
    if result != target:
        raise AgradShapeError(
            f"expand: a tensor of shape {tuple(in_shape)} cannot be broadcast to {target}",
            torch=_torch_expand_text(tuple(in_shape), target),
        )
    return target


def _sum_to_shape(in_shape, shape):
    _expand_shape(tuple(shape), tuple(in_shape))
    return tuple(shape)


def _astype_forward(x, dtype):
    return np.asarray(x).astype(dtype)


def _astype_complex(x, dtype):
    # A cast to a real dtype would drop the imaginary part the complex step carries.
    return np.asarray(x).astype(np.result_type(dtype, np.complex64))


def _astype_vjp(ns, g, out, x, dtype):
    return (ns.astype(g, x.dtype),)


def _sum_to_vjp(ns, g, out, x, shape):
    batch = batch_of(g, out.ndim)
    lead = (1,) * (x.ndim - len(shape))
    return (ns.broadcast_to(g.reshape(batch + lead + tuple(shape)), batch + tuple(x.shape)),)


RESHAPE_CASES = (
    Case(((2, 3),), {"shape": (3, 2)}),
    Case(((2, 3),), {"shape": (6,)}),
    Case(((6,),), {"shape": (1, 2, 3)}),
    Case(((),), {"shape": (1,)}),
)

register(
    Op("reshape", "ViewBackward0", _reshape_forward, _reshape_vjp, _reshape_rule, view=True,
       saves=NOTHING, explain="reshape the gradient back", batch=batching.reshape,
       cases=RESHAPE_CASES),
    Op("unsqueeze", "UnsqueezeBackward0", _reshape_forward, _reshape_vjp, _reshape_rule,
       view=True, explain="reshape the gradient back", saves=NOTHING, batch=batching.reshape,
       cases=(Case(((2, 3),), {"shape": (2, 1, 3)}),)),
    Op("squeeze", "SqueezeBackward1", _reshape_forward, _reshape_vjp, _reshape_rule,
       view=True, explain="reshape the gradient back", saves=NOTHING, batch=batching.reshape,
       cases=(Case(((2, 1, 3),), {"shape": (2, 3)}),)),
    Op("permute", "PermuteBackward0", _permute_forward, _permute_vjp, _permute_shape,
       view=True, explain="permute the gradient back", saves=NOTHING, batch=batching.permute,
       cases=(Case(((2, 3),), {"axes": (1, 0)}), Case(((2, 3, 4),), {"axes": (2, 0, 1)}))),
    Op("transpose", "TransposeBackward0", _transpose_forward, _transpose_vjp, _transpose_shape,
       view=True, explain="transpose the gradient back", saves=NOTHING, batch=batching.transpose,
       aliases=("swapaxes",),
       cases=(Case(((2, 3),), {"dim0": 0, "dim1": 1}),
              Case(((2, 3, 4),), {"dim0": -1, "dim1": 0}))),
    Op("expand", "ExpandBackward0", _expand_forward, _expand_vjp, _expand_shape, view=True,
       saves=NOTHING, explain="sum the gradient over the expanded axes",
       batch=batching.expand, grows=True,
       cases=(Case(((3,),), {"shape": (2, 3)}), Case(((2, 1),), {"shape": (2, 4)}))),
    Op("astype", "ToCopyBackward0", _astype_forward, _astype_vjp, same_shape, saves=NOTHING,
       explain="cast the gradient back", method=False, complex_forward=_astype_complex,
       cases=(Case(((2, 3),), {"dtype": np.dtype("float64")}),)),
    Op("sum_to", "SumToSizeBackward0", kernels.sum_to, _sum_to_vjp, _sum_to_shape,
       explain="broadcast the gradient back", saves=NOTHING, public=False, method=False,
       cases=(Case(((2, 3),), {"shape": (3,)}), Case(((2, 3),), {"shape": (2, 1)}))),
)  # fmt: skip
