"""Transposed convolutions, PyTorch's F.conv_transpose1d/2d and nn.ConvTranspose1d/2d: the
adjoint of a convolution, composed of one matrix product per group (each input pixel times
the kernel) and the op table's col2im entry (``windows_backward``, which sums the
overlapping windows), so the gradient is those entries' gradients."""

from __future__ import annotations

from typing import Any

from ..engine import functions as F
from ..engine.args import first
from ..engine.ops import TABLE, apply
from ..engine.ops.windows import ints
from ..engine.promotion import check_conv
from ..engine.tensor import Tensor
from ..errors import AgradShapeError

__all__ = ["conv_transpose1d", "conv_transpose2d"]


def conv_transpose2d(
    input: Any,  # noqa: A002
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """(N, C_in, H, W) with weight (C_in, C_out/groups, kh, kw) -> (N, C_out, H', W'),
    H' = (H - 1)·stride - 2·padding + dilation·(kh - 1) + output_padding + 1."""
    x, w = first(input), first(weight)
    check_conv(x, w, None if bias is None else first(bias))
    unbatched = x.ndim == 3
    if unbatched:
        x = F.unsqueeze(x, 0)
    if x.ndim != 4 or w.ndim != 4:
        raise AgradShapeError(
            f"conv_transpose2d: expected a 3D or 4D input and a 4D weight, got {x.shape} and "
            f"{w.shape}"
        )
    s, d = (
        ints(stride, 2, "conv_transpose2d: stride"),
        ints(dilation, 2, "conv_transpose2d: dilation"),
    )
    p = ints(padding, 2, "conv_transpose2d: padding")
    op = ints(output_padding, 2, "conv_transpose2d: output_padding")
    n, c_in, h, wd = x.shape
    if groups <= 0 or c_in % groups or w.shape[0] != c_in:
        raise AgradShapeError(
            f"conv_transpose2d: input with {c_in} channels does not fit weight of shape "
            f"{tuple(w.shape)} and groups={groups}"
        )
    if any(o >= max(si, di) for o, si, di in zip(op, s, d, strict=True)):
        raise AgradShapeError(
            f"output padding must be smaller than either stride or dilation, but got "
            f"output_padding={op}, stride={s}, dilation={d}"
        )
    if any(o >= si for o, si in zip(op, s, strict=True)):
        raise NotImplementedError(
            "conv_transpose2d: agrad supports output_padding smaller than stride only"
        )
    kh, kw = w.shape[2:]
    c_out = w.shape[1] * groups
    size = tuple(
        (n_ - 1) * si - 2 * pi + di * (k - 1) + o + 1
        for n_, si, pi, di, k, o in zip((h, wd), s, p, d, (kh, kw), op, strict=True)
    )
    if any(v <= 0 for v in size):
        raise AgradShapeError(f"conv_transpose2d: the output size {size} is not positive")
    pixels = F.permute(x, (0, 2, 3, 1))  # (N, H, W, C_in)
    per_in, per_out = c_in // groups, c_out // groups
    parts = []
    for g in range(groups):
        kernel = F.reshape(w[g * per_in : (g + 1) * per_in], (per_in, per_out * kh * kw))
        parts.append(F.matmul(pixels[..., g * per_in : (g + 1) * per_in], kernel))
    cols = parts[0] if groups == 1 else F.cat(parts, -1)  # (N, H, W, C_out·kh·kw)
    win = F.permute(F.reshape(cols, (n, h, wd, c_out, kh, kw)), (0, 3, 1, 2, 4, 5))
    out = apply(
        TABLE["windows_backward"], win, spatial=size, kernel=(kh, kw), stride=s,
        padding=tuple((pi, pi) for pi in p), dilation=d,
    )  # fmt: skip
    if bias is not None:
        out = F.add(out, F.reshape(first(bias), (-1, 1, 1)))
    return F.squeeze(out, 0) if unbatched else out


def conv_transpose1d(
    input: Any,  # noqa: A002
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """(N, C_in, L) with weight (C_in, C_out/groups, k) -> (N, C_out, L')."""
    x, w = first(input), first(weight)
    check_conv(x, w, None if bias is None else first(bias))
    if x.ndim not in (2, 3) or w.ndim != 3:
        raise AgradShapeError(
            f"conv_transpose1d: expected a 2D or 3D input and a 3D weight, got {x.shape} and "
            f"{w.shape}"
        )

    def one(v: Any, fill: int) -> tuple[int, int]:
        return (fill, ints(v, 1, "conv_transpose1d")[0])

    out = conv_transpose2d(
        F.unsqueeze(x, -2), F.unsqueeze(w, -2), bias, one(stride, 1), one(padding, 0),
        one(output_padding, 0), groups, one(dilation, 1),
    )  # fmt: skip
    return F.squeeze(out, -2)
