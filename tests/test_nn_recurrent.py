"""nn.RNN, nn.LSTM, nn.GRU and their cells against PyTorch with weights copied from the
torch module, float64 to 1e-10: output, h_n (and c_n), and the gradients of the input, of
h0/c0 and of every parameter (backpropagation through time), for num_layers, bidirectional,
batch_first, bias=False, relu, proj_size, length-1 sequences, a batch of 1, unbatched
inputs, float32, dropout between layers (eval, and p=1 in training, where it is
deterministic), and the bad calls PyTorch rejects. The snippets mirror a sequence
classifier (a 2-layer bidirectional LSTM over a batch_first batch) and a character-level
language model's GRU step loop with GRUCell."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nn_oracle import compare

import agrad

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(5)


def _x(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


def _pair(name, *args, dtype="float64", **kwargs):
    tm = getattr(torch.nn, name)(*args, **kwargs)
    am = getattr(agrad.nn, name)(*args, **kwargs)
    return (tm.double(), am.double()) if dtype == "float64" else (tm.float(), am.float())


def _with_h0(module, x, *states):
    if isinstance(module, (torch.nn.LSTM, agrad.nn.LSTM)):
        return module(x, (states[0], states[1]))
    return module(x, states[0])


LAYER_CASES = {
    "rnn": ("RNN", (3, 4), {}, (5, 2, 3)),
    "rnn_relu": ("RNN", (3, 4), {"nonlinearity": "relu"}, (5, 2, 3)),
    "rnn_relu_positional": ("RNN", (3, 4, 2, "relu"), {}, (4, 2, 3)),
    "rnn_deep_bi": ("RNN", (3, 4, 3), {"bidirectional": True}, (4, 2, 3)),
    "lstm": ("LSTM", (3, 5), {}, (6, 2, 3)),
    "lstm_deep_bi_batch_first": (
        "LSTM",
        (3, 4, 2),
        {"bidirectional": True, "batch_first": True},
        (2, 5, 3),
    ),
    "lstm_no_bias": ("LSTM", (2, 3), {"bias": False}, (4, 3, 2)),
    "lstm_proj": ("LSTM", (3, 5, 2), {"proj_size": 2, "bidirectional": True}, (4, 2, 3)),
    "gru": ("GRU", (3, 4), {}, (5, 2, 3)),
    "gru_deep_bi": ("GRU", (2, 3, 2), {"bidirectional": True}, (3, 2, 2)),
    "gru_batch_first_no_bias": ("GRU", (3, 4), {"batch_first": True, "bias": False}, (2, 4, 3)),
    "length_one": ("LSTM", (3, 4, 2), {"bidirectional": True}, (1, 2, 3)),
    "batch_of_one": ("GRU", (3, 4, 2), {}, (5, 1, 3)),
    "unbatched_lstm": ("LSTM", (3, 4, 2), {"bidirectional": True}, (5, 3)),
    "unbatched_gru": ("GRU", (3, 4), {}, (4, 3)),
    "eval_with_dropout": ("LSTM", (3, 4, 3), {"dropout": 0.5}, (4, 2, 3)),
}


@pytest.mark.parametrize("case", list(LAYER_CASES))
def test_layer_matches_pytorch(case):
    name, args, kwargs, shape = LAYER_CASES[case]
    tm, am = _pair(name, *args, **kwargs)
    if kwargs.get("dropout"):
        tm.eval(), am.eval()
    compare(tm, am, [_x(*shape)])
    assert repr(am) == repr(tm)
    assert [n for n, _ in am.named_parameters()] == [n for n, _ in tm.named_parameters()]


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("batched", [True, False])
def test_given_initial_states_get_gradients(name, batched):
    tm, am = _pair(name, 3, 4, 2, bidirectional=True, batch_first=True)
    batch = (2,) if batched else ()
    x = _x(*batch, 5, 3) if batched else _x(5, 3)
    states = [_x(4, *batch, 4) for _ in range(2 if name == "LSTM" else 1)]
    got = compare(tm, am, [x, *states], _with_h0)
    assert set(got["grads"]) >= {"input0", "input1"}  # the input's and h0's gradients


def test_lstm_proj_initial_states():
    tm, am = _pair("LSTM", 3, 5, 2, proj_size=2)
    compare(tm, am, [_x(4, 2, 3), _x(2, 2, 2), _x(2, 2, 5)], _with_h0)


def test_float32():
    tm, am = _pair("LSTM", 3, 4, 2, bidirectional=True, dtype="float32")
    got = compare(tm, am, [_x(5, 2, 3, dtype="float32")], tol=3e-5)
    assert got["outs"][0].dtype == np.float32


def test_dropout_between_layers_in_training():
    # p = 1 drops every output of layer 0: deterministic, so PyTorch can be the oracle
    for name in ("RNN", "LSTM", "GRU"):
        tm, am = _pair(name, 3, 4, 2, dropout=1.0)
        compare(tm, am, [_x(4, 2, 3)])
    # p = 0.5: the first layer's output is dropped by agrad's generator (vs. eval: differs)
    _, am = _pair("GRU", 3, 4, 2, dropout=0.5)
    x = agrad.tensor(_x(4, 2, 3))
    agrad.manual_seed(0)
    trained = am(x)[0].detach().numpy()
    am.eval()
    assert not np.allclose(trained, am(x)[0].detach().numpy())


def test_long_sequence_gradients_stay_pytorchs():
    # backpropagation through 60 steps (the gradient of the first input is a product of
    # 60 Jacobians): no drift from PyTorch's
    tm, am = _pair("LSTM", 2, 3)
    compare(tm, am, [_x(60, 1, 2)])


CELL_CASES = {
    "rnn_cell": ("RNNCell", (3, 4), {}),
    "rnn_cell_relu_no_bias": ("RNNCell", (3, 4), {"bias": False, "nonlinearity": "relu"}),
    "lstm_cell": ("LSTMCell", (3, 5), {}),
    "gru_cell": ("GRUCell", (3, 4), {}),
    "gru_cell_no_bias": ("GRUCell", (2, 3), {"bias": False}),
}


@pytest.mark.parametrize("case", list(CELL_CASES))
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_state", [True, False])
def test_cells_match_pytorch(case, batched, with_state):
    name, args, kwargs = CELL_CASES[case]
    tm, am = _pair(name, *args, **kwargs)
    hidden = args[1]
    batch = (3,) if batched else ()
    x = _x(*batch, args[0])
    states = [_x(*batch, hidden) for _ in range(2 if name == "LSTMCell" else 1)]

    def call(module, x, *states):
        if not states:
            return module(x)
        return module(x, tuple(states) if len(states) == 2 else states[0])

    compare(tm, am, [x, *states] if with_state else [x], call)
    assert repr(am) == repr(tm)


def test_cell_loop_as_a_language_model_writes_it():
    # for t in range(L): h = cell(x[t], h) — the unrolled loop against PyTorch's
    tm, am = _pair("GRUCell", 3, 4)

    def unrolled(module, x):
        h, outs = None, []
        for t in range(x.shape[0]):
            h = module(x[t], h)
            outs.append(h)
        return outs

    compare(tm, am, [_x(6, 2, 3)], unrolled)


def test_initialisation_is_uniform_in_pytorchs_bound():
    for module in (agrad.nn.LSTM(3, 16, 2, bidirectional=True), agrad.nn.GRUCell(3, 16)):
        for name, p in module.named_parameters():
            values = p.detach().numpy()
            assert np.abs(values).max() <= 1 / math.sqrt(16), name
            assert values.std() > 0.5 / math.sqrt(16) / math.sqrt(3), name  # not constant


def test_bad_calls_raise_as_pytorch():
    for lib in (torch, agrad):
        nn = lib.nn
        with pytest.raises(ValueError):
            nn.RNN(3, 4, nonlinearity="sigmoid")
        with pytest.raises(ValueError):
            nn.LSTM(3, 4, dropout=1.5)
        with pytest.raises(ValueError):
            nn.GRU(3, 4, proj_size=2)
        with pytest.raises(ValueError):
            nn.LSTM(3, 4, proj_size=4)
        with pytest.raises(ValueError):
            nn.LSTM(3, 0)
        with pytest.raises(RuntimeError):  # (PyTorch checks it when called)
            nn.RNNCell(3, 4, nonlinearity="gelu")(lib.ones(2, 3))
        m = nn.GRU(3, 4, 2).double()
        with pytest.raises(RuntimeError):  # the wrong input width
            m(lib.tensor(_x(5, 2, 2)))
        with pytest.raises(RuntimeError):  # h0 of the wrong shape
            m(lib.tensor(_x(5, 2, 3)), lib.tensor(_x(1, 2, 4)))
        with pytest.raises(ValueError):  # 4-D input
            m(lib.tensor(_x(5, 2, 3, 1)))
        with pytest.raises(ValueError):  # float32 input into a float64 module
            m(lib.tensor(_x(5, 2, 3, dtype="float32")))
        with pytest.raises(RuntimeError):  # unbatched input, batched h0
            m(lib.tensor(_x(5, 3)), lib.tensor(_x(2, 1, 4)))
        cell = nn.LSTMCell(3, 4).double()
        with pytest.raises(ValueError):  # 3-D input to a cell
            cell(lib.tensor(_x(2, 2, 3)))
        with pytest.raises(RuntimeError):  # inconsistent hidden size
            cell(lib.tensor(_x(2, 3)), (lib.tensor(_x(2, 5)), lib.tensor(_x(2, 5))))
