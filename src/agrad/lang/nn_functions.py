"""The language's neural-network functions: the functional forms that make sense in an
expression (convolution, pooling, normalization, losses, one_hot), so that ``agrad check``
and ``agrad eval --explain`` reach those op-table entries. Each calls `agrad.nn.functional`;
its signature (read by `agrad.lang.functions.Function`) is its usage line. The language
has no strings: cross_entropy's reduction is the mean, batch_norm's mode is ``training``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.args import astype
from ..engine.creation import tensor
from ..engine.dtypes import get_default_dtype
from ..engine.kernels import Array, Sizes
from ..engine.tensor import Tensor
from ..errors import AgradValueError


def _nn():
    """agrad.nn.functional, imported at the first call: importing agrad.nn loads every
    layer class, which a program that calls none of these does not need."""
    from ..nn import functional

    return functional


def conv2d(
    x: Array,
    weight: Array,
    bias: Array | None = None,
    stride: Sizes = 1,
    padding: Sizes = 0,
    dilation: Sizes = 1,
    groups: int = 1,
) -> Tensor:
    """2-D convolution of x (N, C, H, W) by weight (out, C/groups, kh, kw)"""
    return _nn().conv2d(x, weight, bias, stride, padding, dilation, groups)


def max_pool2d(
    x: Array,
    kernel_size: Sizes,
    stride: Sizes | None = None,
    padding: Sizes = 0,
    dilation: Sizes = 1,
    ceil_mode: bool = False,
) -> Tensor:
    """2-D max pooling over the last two axes (stride: kernel_size by default)"""
    return _nn().max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode)


def avg_pool2d(
    x: Array,
    kernel_size: Sizes,
    stride: Sizes | None = None,
    padding: Sizes = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """2-D average pooling over the last two axes (stride: kernel_size by default)"""
    return _nn().avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad)


def adaptive_avg_pool2d(x: Array, output_size: Sizes) -> Tensor:
    """average pooling of the last two axes to output_size"""
    return _nn().adaptive_avg_pool2d(x, output_size)


def batch_norm(
    x: Array,
    weight: Array | None = None,
    bias: Array | None = None,
    running_mean: Array | None = None,
    running_var: Array | None = None,
    training: bool = True,
    eps: float = 1e-5,
) -> Tensor:
    """batch normalization over every axis but 1 (training=false: by running_mean/var)"""
    if training and (running_mean is not None or running_var is not None):
        raise AgradValueError(
            "batch_norm: running_mean and running_var are used in evaluation; give "
            "training=false with them (training normalizes by the batch's own statistics)"
        )
    return _nn().batch_norm(x, running_mean, running_var, weight, bias, training, 0.0, eps)


def layer_norm(
    x: Array,
    normalized_shape: Sizes,
    weight: Array | None = None,
    bias: Array | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """layer normalization over the trailing normalized_shape axes"""
    return _nn().layer_norm(x, normalized_shape, weight, bias, eps)


def cross_entropy(
    x: Array,
    target: Array,
    weight: Array | None = None,
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
) -> Tensor:
    """mean cross-entropy of logits x (N, C) and class indices (N,) or probabilities (N, C)"""
    return _nn().cross_entropy(
        x,
        _classes_or_probabilities(x, target),
        weight,
        ignore_index=ignore_index,
        label_smoothing=label_smoothing,
    )


def _classes_or_probabilities(x: Tensor, target: Tensor) -> Any:
    """A target of x's shape holds probabilities; any other holds class indices, which the
    language writes as (whole) floats."""
    if target.shape == x.shape:
        return target
    values = np.asarray(target)
    if not np.all(values == np.round(values)):
        raise AgradValueError(
            f"cross_entropy: a target of shape {tuple(target.shape)} (not the input's "
            f"{tuple(x.shape)}) holds "
            "class indices, which must be whole numbers"
        )
    return values.astype(np.int64)


def mse_loss(x: Array, y: Array) -> Tensor:
    """mean of (x - y)²"""
    return _nn().mse_loss(x, y)


def gelu(x: Array) -> Tensor:
    """x·Φ(x), Φ the standard normal CDF"""
    return _nn().gelu(x)


def one_hot(x: Array, num_classes: int = -1) -> Tensor:
    """class indices as one-hot rows of num_classes 0/1 values (not differentiable)"""
    values = np.asarray(x.detach())
    if values.size and not np.all((values == np.round(values)) & (values >= 0)):
        raise AgradValueError("one_hot: the classes must be non-negative whole numbers")
    hot = _nn().one_hot(tensor(values.astype(np.int64)), num_classes)
    return astype(hot, get_default_dtype())


FUNCTIONS = (
    conv2d,
    max_pool2d,
    avg_pool2d,
    adaptive_avg_pool2d,
    batch_norm,
    layer_norm,
    cross_entropy,
    mse_loss,
    gelu,
    one_hot,
)
