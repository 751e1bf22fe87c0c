"""The public functions of the neural-network entries of the op table (convolution,
pooling, normalization, nll_loss, gelu), with PyTorch's signatures: ``agrad.conv2d``,
``agrad.max_pool2d``, ... (`agrad.nn.functional` re-exports them). They normalize the
arguments (an int or a pair, 'same' padding, unbatched inputs) and apply the entry.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import AgradAutogradError, AgradValueError
from . import shaping
from .args import first
from .creation import tensor
from .grad_mode import no_grad
from .ops.core import TABLE, apply
from .ops.pooling import first_max
from .ops.windows import ints, pairs
from .promotion import check_conv
from .public import public
from .tensor import Tensor

OP = TABLE


def _unbatched(x: Tensor, batched_ndim: int, fn: Any) -> Tensor:
    """Run ``fn`` on ``x`` with a sample axis added when it has none (PyTorch accepts both)."""
    if x.ndim == batched_ndim - 1:
        return shaping.squeeze(fn(shaping.unsqueeze(x, 0)), 0)
    return fn(x)


def _conv(name: str, d: int):
    def fn(
        input: Any,  # noqa: A002 - PyTorch's name
        weight: Any,
        bias: Any = None,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
    ) -> Tensor:
        x, w = first(input), first(weight)
        strides = ints(stride, d, f"{name}: stride")
        dilations = ints(dilation, d, f"{name}: dilation")
        if isinstance(padding, str):
            pads = _named_padding(name, padding, tuple(w.shape[2:]), strides, dilations)
        else:
            pads = pairs(padding, d, f"{name}: padding")
        operands = (w,) if bias is None else (w, first(bias))
        check_conv(x, w, operands[1] if len(operands) > 1 else None)

        def run(x4: Tensor) -> Tensor:
            return apply(
                OP[name],
                x4,
                *operands,
                stride=strides,
                padding=pads,
                dilation=dilations,
                groups=int(groups),
            )

        return _unbatched(x, d + 2, run)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"{d}-D convolution as PyTorch's {name}: ``input`` (N, C, ...) or unbatched, "
        "``weight`` (out, C/groups, kernel...), padding an int, a tuple, 'valid' or 'same'."
    )
    return public()(fn)


def _named_padding(name: str, padding: str, kernel: tuple, stride: tuple, dilation: tuple):
    if padding == "valid":
        return tuple((0, 0) for _ in kernel)
    if padding != "same":
        raise AgradValueError(f"{name}: padding must be an int, a tuple, 'valid' or 'same'")
    if any(s != 1 for s in stride):
        raise AgradValueError(f"{name}: padding='same' is not supported for strided convolutions")
    totals = [dl * (k - 1) for k, dl in zip(kernel, dilation, strict=True)]
    return tuple((t // 2, t - t // 2) for t in totals)


conv1d = _conv("conv1d", 1)
conv2d = _conv("conv2d", 2)


def _pool_args(kernel_size: Any, stride: Any, padding: Any, name: str):
    kernel = ints(kernel_size, 2, f"{name}: kernel_size")
    strides = kernel if stride is None or stride == [] or stride == () else ints(stride, 2, name)
    return kernel, strides, ints(padding, 2, f"{name}: padding")


@public()
def max_pool2d(
    input: Any,  # noqa: A002
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """2-D max pooling as PyTorch's; the gradient goes to each window's first maximum.
    With ``return_indices``, also the flat (row·W + column) index of each maximum."""
    x = first(input)
    kernel, strides, pads = _pool_args(kernel_size, stride, padding, "max_pool2d")
    dil = ints(dilation, 2, "max_pool2d: dilation")
    params = dict(kernel=kernel, stride=strides, padding=pads, dilation=dil, ceil_mode=ceil_mode)
    out = apply(OP["max_pool2d"], x, **params)
    if not return_indices:
        return out
    return out, _max_indices(np.asarray(x), **params)


def _max_indices(x: np.ndarray, kernel, stride, padding, dilation, ceil_mode) -> Tensor:
    which, _ = first_max(x, kernel, stride, padding, dilation, ceil_mode)
    rows, cols = np.divmod(which, kernel[1])  # the offset within each window
    oh, ow = which.shape[-2:]
    row = np.arange(oh)[:, None] * stride[0] - padding[0] + rows * dilation[0]
    col = np.arange(ow)[None, :] * stride[1] - padding[1] + cols * dilation[1]
    return tensor((row * x.shape[-1] + col).astype(np.int64))


@public()
def avg_pool2d(
    input: Any,  # noqa: A002
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: Any = None,
) -> Tensor:
    """2-D average pooling as PyTorch's (padding counted unless count_include_pad=False)."""
    kernel, strides, pads = _pool_args(kernel_size, stride, padding, "avg_pool2d")
    return apply(
        OP["avg_pool2d"],
        first(input),
        kernel=kernel,
        stride=strides,
        padding=pads,
        ceil_mode=bool(ceil_mode),
        count_include_pad=bool(count_include_pad),
        divisor_override=divisor_override,
    )


@public()
def adaptive_avg_pool2d(input: Any, output_size: Any) -> Tensor:  # noqa: A002
    """Average pooling to ``output_size`` (an int, or a pair whose None keeps that size)."""
    x = first(input)
    sizes = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,)
    sizes = sizes * 2 if len(sizes) == 1 else sizes
    if len(sizes) != 2:
        raise AgradValueError(f"adaptive_avg_pool2d: output_size must be 1 or 2 sizes, got {sizes}")
    size = tuple(int(x.shape[i - 2]) if s is None else int(s) for i, s in enumerate(sizes))
    if size == (1, 1) and x.ndim in (3, 4):  # as PyTorch: a mean (MeanBackward1)
        return apply(OP["mean"], x, axis=(-2, -1), keepdims=True)
    return apply(OP["adaptive_avg_pool2d"], x, output_size=size)


def _filled(value: Any, n: int | tuple, like: Tensor, fill: float) -> Any:
    shape = (n,) if isinstance(n, int) else tuple(n)
    return first(value) if value is not None else np.full(shape, fill, dtype=like.dtype)


@public()
def batch_norm(
    input: Any,  # noqa: A002
    running_mean: Any,
    running_var: Any,
    weight: Any = None,
    bias: Any = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Batch normalization as PyTorch's: batch statistics in training (and the running ones
    updated in place, with ``momentum`` and the unbiased variance), the running ones in
    evaluation."""
    x = first(input)
    channels = x.shape[1] if x.ndim > 1 else 0
    w, b = _filled(weight, channels, x, 1.0), _filled(bias, channels, x, 0.0)
    not_differentiable("native_batch_norm", running_mean=running_mean, running_var=running_var)
    stats = {}
    if not training or running_mean is None:
        stats = {"running_mean": _array(running_mean), "running_var": _array(running_var)}
    out = apply(OP["batch_norm"], x, w, b, training=bool(training), eps=float(eps), **stats)
    if training and running_mean is not None:
        _update_running(x, running_mean, running_var, float(momentum))
    return out


def not_differentiable(function: str, **arguments: Any) -> None:
    """PyTorch's refusal of a tensor that requires grad where its function reads values it
    does not differentiate (a batch norm's running statistics, nll_loss's class weights):
    their gradient would be lost in silence, and a check would agree with the loss."""
    for name, value in arguments.items():
        if isinstance(value, Tensor) and value.requires_grad:
            raise AgradAutogradError(
                f"The function '{function}' is not differentiable with respect to argument "
                f"'{name}'. This input cannot have requires_grad True."
            )


def _array(t: Any) -> Any:
    return None if t is None else np.asarray(t)


def _update_running(x: Tensor, mean: Tensor, var: Tensor, momentum: float) -> None:
    data = np.asarray(x)
    axes = (0, *range(2, data.ndim))
    n = math.prod(data.shape) // data.shape[1]
    batch_mean = np.mean(data, axis=axes)
    unbiased = np.var(data, axis=axes) * (n / max(n - 1, 1))
    with no_grad():
        mean.copy_((1.0 - momentum) * np.asarray(mean) + momentum * batch_mean)
        if var is not None:
            var.copy_((1.0 - momentum) * np.asarray(var) + momentum * unbiased)


@public()
def layer_norm(
    input: Any,  # noqa: A002
    normalized_shape: Any,
    weight: Any = None,
    bias: Any = None,
    eps: float = 1e-5,
) -> Tensor:
    """Layer normalization over the trailing ``normalized_shape`` dimensions."""
    x = first(input)
    shape = (
        (int(normalized_shape),)
        if np.ndim(normalized_shape) == 0
        else tuple(int(n) for n in normalized_shape)
    )
    w, b = _filled(weight, shape, x, 1.0), _filled(bias, shape, x, 0.0)
    return apply(OP["layer_norm"], x, w, b, normalized_shape=shape, eps=float(eps))


@public()
def nll_loss(
    input: Any,  # noqa: A002
    target: Any,
    weight: Any = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """The negative log-likelihood of class indices ``target`` under log-probabilities."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    not_differentiable("nll_loss_forward", weight=weight)
    indices = np.asarray(target)
    if indices.dtype.kind == "f" and np.all(indices == np.round(indices)):
        indices = indices.astype(np.int64)  # (the language's numbers are floats)
    return apply(
        OP["nll_loss"],
        first(input),
        target=indices,
        weight=_array(weight),
        ignore_index=int(ignore_index),
        reduction=reduction,
    )


def legacy_reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    """PyTorch's deprecated size_average/reduce flags, as the reduction they mean."""
    if size_average is None and reduce is None:
        return reduction
    if reduce is False:
        return "none"
    return "mean" if size_average is None or size_average else "sum"


@public()
def gelu(input: Any, approximate: str = "none") -> Tensor:  # noqa: A002
    """x·Φ(x) (approximate='tanh': PyTorch's tanh approximation)."""
    return apply(OP["gelu"], first(input), approximate=approximate)


__all__ = [
    "adaptive_avg_pool2d",
    "avg_pool2d",
    "batch_norm",
    "conv1d",
    "conv2d",
    "gelu",
    "layer_norm",
    "legacy_reduction",
    "max_pool2d",
    "nll_loss",
]
