"""nn.RNNCell, nn.LSTMCell and nn.GRUCell, PyTorch's: one step of the recurrent layers
(the same step functions), parameters weight_ih, weight_hh, bias_ih, bias_hh initialised
U(-1/√hidden, 1/√hidden), batched (N, H_in) or unbatched (H_in,) inputs."""

from __future__ import annotations

import math
from typing import Any

from ..engine import functions as F
from ..engine.args import first
from ..engine.creation import empty, zeros
from ..engine.tensor import Tensor
from ..errors import AgradError, AgradShapeError, AgradValueError
from . import init
from .module import Module
from .parameter import Parameter
from .recurrent import _linear, gru_step, lstm_step, rnn_step


class UnknownNonlinearityError(AgradError, RuntimeError):
    """RNNCell's nonlinearity is neither tanh nor relu (PyTorch's RuntimeError, when called)."""


class RNNCellBase(Module):
    _gates = 1

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        gate_size = self._gates * hidden_size
        self.weight_ih = Parameter(empty(gate_size, input_size, dtype=dtype))
        self.weight_hh = Parameter(empty(gate_size, hidden_size, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(gate_size, dtype=dtype))
            self.bias_hh = Parameter(empty(gate_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def _prepare(self, input: Any, hx: Any, states: int) -> tuple[Tensor, list, bool]:  # noqa: A002
        x = first(input)
        name = type(self).__name__
        if x.ndim not in (1, 2):
            raise AgradValueError(f"{name}: Expected input to be 1D or 2D, got {x.ndim}D instead")
        given = list(hx) if isinstance(hx, tuple) else [hx] * states
        if len(given) != states:
            raise AgradValueError(f"{name}: hx must be a tuple of {states} tensors")
        for h in given:
            if h is not None and first(h).ndim != x.ndim:
                raise AgradShapeError(
                    f"{name}: Expected hidden to be {x.ndim}D, got {first(h).ndim}D instead"
                )
        unbatched = x.ndim == 1
        if unbatched:
            x = F.unsqueeze(x, 0)
            given = [None if h is None else F.unsqueeze(first(h), 0) for h in given]
        if x.shape[1] != self.input_size:
            raise AgradShapeError(
                f"input has inconsistent input_size: got {x.shape[1]} expected {self.input_size}"
            )
        want = (x.shape[0], self.hidden_size)
        out = []
        for h in given:
            h = zeros(*want, dtype=x.dtype) if h is None else first(h)
            if tuple(h.shape) != want:
                raise AgradShapeError(
                    f"hidden has inconsistent size: got {list(h.shape)}, expected {list(want)}"
                )
            out.append(h)
        return x, out, unbatched


class RNNCell(RNNCellBase):
    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, device, dtype)
        self.nonlinearity = nonlinearity  # (checked when called, as PyTorch does)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        x, (h,), unbatched = self._prepare(input, hx, 1)
        if self.nonlinearity not in ("tanh", "relu"):
            raise UnknownNonlinearityError(f"Unknown nonlinearity: {self.nonlinearity}")
        act = F.tanh if self.nonlinearity == "tanh" else F.relu
        out = rnn_step(
            act, _linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh
        )
        return F.squeeze(out, 0) if unbatched else out


class LSTMCell(RNNCellBase):
    _gates = 4

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Tensor]:  # noqa: A002
        x, (h, c), unbatched = self._prepare(input, hx, 2)
        gx = _linear(x, self.weight_ih, self.bias_ih)
        h, c = lstm_step(gx, h, c, self.weight_hh, self.bias_hh, None)
        return (F.squeeze(h, 0), F.squeeze(c, 0)) if unbatched else (h, c)


class GRUCell(RNNCellBase):
    _gates = 3

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        x, (h,), unbatched = self._prepare(input, hx, 1)
        out = gru_step(_linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return F.squeeze(out, 0) if unbatched else out
