"""Recurrent layers, PyTorch's: nn.RNN (tanh or relu), nn.LSTM (with proj_size) and nn.GRU —
num_layers, bidirectional, batch_first, dropout between layers, unbatched inputs, h0/c0 —
with PyTorch's parameter names (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0,
weight_hr_l0, ..._reverse), initialisation U(-1/√hidden, 1/√hidden) and repr.

Each step is composed of matmul, sigmoid, tanh (relu) and elementwise ops, the input's
projection for all steps taken as one matmul per layer and direction; the gradient is
backpropagation through time by the op table's entries. (PackedSequence is not supported.)
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable
from typing import Any

from ..engine import functions as F
from ..engine.args import first
from ..engine.creation import empty, zeros
from ..engine.tensor import Tensor
from ..errors import AgradShapeError, AgradValueError
from . import init
from .functional import dropout
from .module import Module
from .parameter import Parameter

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _linear(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    y = F.matmul(x, F.transpose(w, 0, 1))
    return y if b is None else F.add(y, b)


def rnn_step(act: Callable, gx: Tensor, h: Tensor, w_hh: Tensor, b_hh: Any) -> Tensor:
    """h' = act(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh), with ``gx`` the input's part."""
    return act(F.add(gx, _linear(h, w_hh, b_hh)))


def lstm_step(
    gx: Tensor, h: Tensor, c: Tensor, w_hh: Tensor, b_hh: Any, w_hr: Any
) -> tuple[Tensor, Tensor]:
    """Gates i, f, g, o (PyTorch's order) from the input's and the state's parts; then
    c' = f c + i g, h' = o tanh(c') (projected by W_hr when there is one)."""
    gates = F.add(gx, _linear(h, w_hh, b_hh))
    n = c.shape[-1]
    i, f, g, o = (gates[..., k * n : (k + 1) * n] for k in range(4))
    c_new = F.add(F.mul(F.sigmoid(f), c), F.mul(F.sigmoid(i), F.tanh(g)))
    h_new = F.mul(F.sigmoid(o), F.tanh(c_new))
    return (h_new if w_hr is None else _linear(h_new, w_hr, None)), c_new


def gru_step(gx: Tensor, h: Tensor, w_hh: Tensor, b_hh: Any) -> Tensor:
    """r, z from the sum of both parts; n = tanh(x_n + r (h W_hnᵀ + b_hn));
    h' = (1 - z) n + z h."""
    gh = _linear(h, w_hh, b_hh)
    n_ = h.shape[-1]
    xr, xz, xn = (gx[..., k * n_ : (k + 1) * n_] for k in range(3))
    hr, hz, hn = (gh[..., k * n_ : (k + 1) * n_] for k in range(3))
    r = F.sigmoid(F.add(xr, hr))
    z = F.sigmoid(F.add(xz, hz))
    n = F.tanh(F.add(xn, F.mul(r, hn)))
    return F.add(F.mul(F.rsub(z, 1.0), n), F.mul(z, h))


class RNNBase(Module):
    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if (
            not isinstance(dropout, numbers.Number)
            or isinstance(dropout, bool)
            or not 0 <= float(dropout) <= 1  # type: ignore[arg-type]
        ):
            raise AgradValueError(
                "dropout should be a number in range [0, 1] representing the probability of "
                "an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:  # type: ignore[operator]
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                f"num_layers={num_layers}",
                stacklevel=2,
            )
        for name, value in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} should be of type bool, got: {type(value).__name__}")
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(value, int):
                raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
            if value <= 0:
                raise AgradValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise AgradValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise AgradValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise AgradValueError("proj_size has to be smaller than hidden_size")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional  # type: ignore[arg-type]
        self.proj_size = proj_size
        gate_size = _GATES[mode] * hidden_size
        out_size = proj_size if proj_size > 0 else hidden_size
        names = []
        for layer in range(num_layers):
            for suffix in ("", "_reverse")[: 2 if bidirectional else 1]:
                width = input_size if layer == 0 else out_size * (2 if bidirectional else 1)
                shapes = {
                    f"weight_ih_l{layer}{suffix}": (gate_size, width),
                    f"weight_hh_l{layer}{suffix}": (gate_size, out_size),
                }
                if bias:
                    shapes[f"bias_ih_l{layer}{suffix}"] = (gate_size,)
                    shapes[f"bias_hh_l{layer}{suffix}"] = (gate_size,)
                if proj_size > 0:
                    shapes[f"weight_hr_l{layer}{suffix}"] = (proj_size, hidden_size)
                for name, shape in shapes.items():
                    self.register_parameter(name, Parameter(empty(*shape, dtype=dtype)))
                    names.append(name)
        self._flat_weights_names = names
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list[Tensor]:
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Tensor]]:
        per = len(self._flat_weights_names) // (self.num_layers * (1 + self.bidirectional))
        w = self._flat_weights
        return [w[i : i + per] for i in range(0, len(w), per)]

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ---- forward -----------------------------------------------------------------------------

    def _weights(self, layer: int, suffix: str) -> tuple[Any, ...]:
        def get(kind: str) -> Any:
            return self._parameters.get(f"{kind}_l{layer}{suffix}")

        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"), get("weight_hr")

    def _check(self, x: Tensor, hx: Any) -> None:
        if not isinstance(x, Tensor):
            raise NotImplementedError(
                f"{type(self).__name__}: agrad takes a Tensor input (PackedSequence is not "
                "supported); pad the sequences and pass their lengths' mask yourself"
            )
        if x.ndim not in (2, 3):
            raise AgradValueError(
                f"{type(self).__name__}: Expected input to be 2D or 3D, got {x.ndim}D tensor "
                "instead"
            )
        w = self._flat_weights[0]
        if x.dtype != w.dtype:
            raise AgradValueError(
                f"RNN input dtype ({x.dtype}) does not match weight dtype ({w.dtype}). "
                f"Convert input: input.to({w.dtype}), or convert model: model.to({x.dtype})"
            )
        if x.shape[-1] != self.input_size:
            raise AgradShapeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                f"got {x.shape[-1]}"
            )
        for h in hx if isinstance(hx, tuple) else (hx,):
            if h is not None and first(h).ndim != x.ndim:
                kind = "unbatched 2-D" if x.ndim == 2 else "batched 3-D"
                raise AgradShapeError(
                    f"For {kind} input, hx should also be {x.ndim}-D but got "
                    f"{first(h).ndim}-D tensor"
                )

    def _states(self, hx: Any, batch: int, dtype: Any) -> list[tuple[Tensor, ...]]:
        """Initial states per (layer, direction): (h,) or (h, c), each (N, H)."""
        d = 2 if self.bidirectional else 1
        out_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        sizes = {"h": out_size, "c": self.hidden_size}
        kinds = ("h", "c") if self.mode == "LSTM" else ("h",)
        if self.mode == "LSTM" and hx is not None and not isinstance(hx, tuple):
            raise AgradValueError("LSTM: hx must be a tuple (h_0, c_0)")
        given = hx if isinstance(hx, tuple) else (hx,) * len(kinds)
        if len(given) != len(kinds):
            raise AgradValueError(f"{type(self).__name__}: hx must be a tuple of {len(kinds)}")
        stacks = []
        for kind, h in zip(kinds, given, strict=True):
            want = (self.num_layers * d, batch, sizes[kind])
            if h is None:
                h = zeros(*want, dtype=dtype)
            h = first(h)
            if tuple(h.shape) != want:
                what = "cell size" if kind == "c" else "hidden size"
                raise AgradShapeError(f"Expected {what} {want}, got {list(h.shape)}")
            stacks.append(h)
        return [tuple(s[i] for s in stacks) for i in range(self.num_layers * d)]

    def _run(self, gx: Tensor, state: tuple, weights: tuple, reverse: bool) -> tuple:
        _, w_hh, _, b_hh, w_hr = weights
        steps = range(gx.shape[0] - 1, -1, -1) if reverse else range(gx.shape[0])
        outs: list[Tensor] = []
        for t in steps:
            if self.mode == "LSTM":
                state = lstm_step(gx[t], state[0], state[1], w_hh, b_hh, w_hr)
            elif self.mode == "GRU":
                state = (gru_step(gx[t], state[0], w_hh, b_hh),)
            else:
                act = F.tanh if self.mode == "RNN_TANH" else F.relu
                state = (rnn_step(act, gx[t], state[0], w_hh, b_hh),)
            outs.append(state[0])
        if reverse:
            outs.reverse()
        return F.stack(outs, 0), state

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Any]:  # noqa: A002
        x = input
        self._check(x, hx)
        unbatched = x.ndim == 2
        if unbatched:
            x = F.unsqueeze(x, 1)
            if isinstance(hx, tuple):
                hx = tuple(F.unsqueeze(first(h), 1) for h in hx)
            elif hx is not None:
                hx = F.unsqueeze(first(hx), 1)
        elif self.batch_first:
            x = F.transpose(x, 0, 1)
        states = self._states(hx, x.shape[1], x.dtype)
        directions = ("", "_reverse")[: 2 if self.bidirectional else 1]
        finals: list[tuple] = []
        for layer in range(self.num_layers):
            if layer > 0 and self.training and self.dropout > 0:
                x = dropout(x, self.dropout, True)  # between layers, in training
            outputs = []
            for k, suffix in enumerate(directions):
                weights = self._weights(layer, suffix)
                gx = _linear(x, weights[0], weights[2])  # every step's input part at once
                index = layer * len(directions) + k
                out, final = self._run(gx, states[index], weights, bool(suffix))
                outputs.append(out)
                finals.append(final)
            x = outputs[0] if len(outputs) == 1 else F.cat(outputs, -1)
        output = F.squeeze(x, 1) if unbatched else (F.transpose(x, 0, 1) if self.batch_first else x)
        stacked = [F.stack([f[i] for f in finals], 0) for i in range(len(finals[0]))]
        if unbatched:
            stacked = [F.squeeze(s, 1) for s in stacked]
        return output, (tuple(stacked) if self.mode == "LSTM" else stacked[0])


class RNN(RNNBase):
    """An Elman RNN: RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh',
    bias=True, batch_first=False, dropout=0.0, bidirectional=False)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise AgradValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity, args = args[3], args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if nonlinearity not in modes:
            raise AgradValueError(
                f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(modes[nonlinearity], *args, **kwargs)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise AgradValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)
