"""F.scaled_dot_product_attention and nn.MultiheadAttention against PyTorch: values and the
gradients of query, key, value, a learnable float mask and every parameter (copied from the
torch module), float64 to 1e-10; masks that hide whole rows (PyTorch 2.13 gives 0 from
scaled_dot_product_attention and nan from MultiheadAttention's need_weights path), length-1
sequences, a batch of 1, float32, unbatched inputs, and the bad calls PyTorch rejects.
The snippets mirror a transformer block's self-attention with a causal mask and padding,
and encoder-decoder cross-attention with other key/value widths."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nn_oracle import compare

import agrad

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(11)


def _x(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


def _sdpa(lib, arrays, **kwargs):
    """Run both libraries' function; return the output and every float input's gradient."""
    leaves = [
        lib.tensor(a, requires_grad=a.dtype.kind == "f") if isinstance(a, np.ndarray) else a
        for a in arrays
    ]
    q, k, v, *mask = leaves
    out = lib.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=mask[0] if mask else None, **kwargs
    )
    weights = lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))
    (out * weights.to(out.dtype)).sum().backward()
    grads = [t.grad.numpy() for t in leaves if getattr(t, "requires_grad", False)]
    return [out.detach().numpy(), *grads]


def _agree(arrays, tol=1e-10, **kwargs):
    got, want = _sdpa(agrad, arrays, **kwargs), _sdpa(torch, arrays, **kwargs)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    return got


def _bool(*shape, p=0.7):
    return RNG.random(shape) < p


SDPA_CASES = {
    "plain": ([(2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7)], {}),
    "no_batch": ([(4, 5), (6, 5), (6, 2)], {}),
    "scale": ([(2, 4, 5), (2, 6, 5), (2, 6, 3)], {"scale": 0.3}),
    "causal_square": ([(2, 2, 5, 4), (2, 2, 5, 4), (2, 2, 5, 4)], {"is_causal": True}),
    "causal_wide": ([(1, 3, 4), (1, 6, 4), (1, 6, 4)], {"is_causal": True}),
    "length_one": ([(1, 1, 1, 3), (1, 1, 1, 3), (1, 1, 1, 2)], {}),
    "causal_length_one": ([(1, 1, 3), (1, 4, 3), (1, 4, 3)], {"is_causal": True}),
}


@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_sdpa_matches_pytorch(case):
    shapes, kwargs = SDPA_CASES[case]
    _agree([_x(*s) for s in shapes], **kwargs)


def test_sdpa_bool_mask_broadcast_over_batch_and_heads():
    _agree([_x(2, 3, 4, 5), _x(2, 3, 6, 5), _x(2, 3, 6, 5), _bool(4, 6)])
    _agree([_x(2, 3, 4, 5), _x(2, 3, 6, 5), _x(2, 3, 6, 5), _bool(2, 1, 4, 6)])


def test_sdpa_float_mask_gets_its_gradient():
    # a learnable additive bias (relative-position style): its gradient is PyTorch's too
    got = _agree([_x(2, 4, 5), _x(2, 6, 5), _x(2, 6, 3), _x(4, 6)])
    assert len(got) == 5


def test_sdpa_mask_with_is_causal_is_both():
    _agree([_x(1, 2, 5, 3), _x(1, 2, 5, 3), _x(1, 2, 5, 3), _bool(5, 5)], is_causal=True)


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_sdpa_row_with_every_key_masked_is_zero_as_pytorch(kind):
    hidden = np.ones((4, 6), dtype=bool)
    hidden[1] = False  # query 1 may attend to nothing
    hidden[3, :5] = False  # query 3 to the last key only
    mask = hidden if kind == "bool" else np.where(hidden, 0.0, -math.inf) + _x(4, 6)
    got = _agree([_x(2, 4, 5), _x(2, 6, 5), _x(2, 6, 3), mask])
    assert np.all(got[0][:, 1] == 0.0) and np.all(got[1][:, 1] == 0.0)  # value, dq
    assert np.all(np.isfinite(got[2])) and np.all(np.isfinite(got[3]))  # dk, dv


def test_sdpa_everything_masked():
    _agree([_x(1, 3, 4), _x(1, 2, 4), _x(1, 2, 4), np.zeros((3, 2), dtype=bool)])


def test_sdpa_float32():
    _agree(
        [_x(2, 3, 4, dtype="float32"), _x(2, 5, 4, dtype="float32")] * 1
        + [_x(2, 5, 2, dtype="float32")],
        tol=2e-6,
    )


def test_sdpa_grouped_query_attention():
    _agree([_x(1, 4, 3, 2), _x(1, 2, 5, 2), _x(1, 2, 5, 3)], enable_gqa=True)


def test_sdpa_dropout_uses_agrads_generator():
    q, k, v = (agrad.tensor(_x(2, 3, 4)) for _ in range(3))
    agrad.manual_seed(5)
    out = agrad.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.4)
    # the same draw, by hand: softmax weights, nn.functional.dropout, then the values
    agrad.manual_seed(5)
    w = agrad.softmax(q @ k.transpose(-2, -1) / 2.0, -1)
    by_hand = agrad.nn.functional.dropout(w, 0.4) @ v
    np.testing.assert_allclose(out.numpy(), by_hand.numpy(), rtol=1e-12)
    assert not np.allclose(out.numpy(), (w @ v).numpy())
    dropped_all = agrad.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=1.0)
    assert np.all(dropped_all.numpy() == 0.0)
    assert (
        torch.nn.functional.scaled_dot_product_attention(
            *(torch.tensor(t.numpy()) for t in (q, k, v)), dropout_p=1.0
        )
        .abs()
        .max()
        == 0
    )


def test_sdpa_bad_shapes_raise_runtime_error_as_pytorch():
    for lib in (torch, agrad):
        with pytest.raises(RuntimeError):  # an integer mask is neither kind
            lib.nn.functional.scaled_dot_product_attention(
                lib.ones(2, 3, 4), lib.ones(2, 5, 4), lib.ones(2, 5, 4),
                attn_mask=lib.ones(3, 5, dtype=lib.int64),
            )  # fmt: skip
        with pytest.raises(RuntimeError):
            lib.nn.functional.scaled_dot_product_attention(
                lib.ones(2, 3, 4), lib.ones(2, 5, 3), lib.ones(2, 5, 3)
            )


# ---- MultiheadAttention ----------------------------------------------------------------------


def _mha(*args, dtype="float64", **kwargs):
    tm = torch.nn.MultiheadAttention(*args, **kwargs)
    am = agrad.nn.MultiheadAttention(*args, **kwargs)
    with torch.no_grad():
        for p in tm.parameters():  # no zero biases: every parameter's gradient counts
            p.normal_(0.0, 0.5)
    return (tm.double(), am.double()) if dtype == "float64" else (tm.float(), am.float())


def _call(**kwargs):
    def call(module, q, k, v, *masks):
        names = [n for n in ("key_padding_mask", "attn_mask") if kwargs.get(n, False)]
        extra = {n: m for n, m in zip(names, masks, strict=True)}
        opts = {n: v for n, v in kwargs.items() if n not in ("key_padding_mask", "attn_mask")}
        return module(q, k, v, **extra, **opts)

    return call


def _self(length, batch, e, batch_first=False):
    x = _x(batch, length, e) if batch_first else _x(length, batch, e)
    return [x, x, x]


MHA_CASES = {
    "self": ((4, 2), {}, _self(5, 3, 4), {}),
    "batch_first": ((6, 3), {"batch_first": True}, _self(4, 2, 6, True), {}),
    "no_weights": ((4, 2), {}, _self(5, 3, 4), {"need_weights": False}),
    "per_head_weights": ((4, 2), {}, _self(3, 2, 4), {"average_attn_weights": False}),
    "no_bias": ((4, 1), {"bias": False}, _self(3, 2, 4), {}),
    "cross_kdim_vdim": (
        (4, 2),
        {"kdim": 3, "vdim": 5},
        [_x(3, 2, 4), _x(6, 2, 3), _x(6, 2, 5)],
        {},
    ),
    "cross_kdim_no_weights": (
        (4, 2),
        {"kdim": 3, "vdim": 5, "batch_first": True},
        [_x(2, 3, 4), _x(2, 6, 3), _x(2, 6, 5)],
        {"need_weights": False},
    ),
    "bias_kv_zero_attn": (
        (4, 2),
        {"add_bias_kv": True, "add_zero_attn": True},
        _self(3, 2, 4),
        {},
    ),
    "unbatched": ((4, 2), {}, [_x(3, 4), _x(5, 4), _x(5, 4)], {}),
    "batch_of_one_length_one": ((2, 2), {}, _self(1, 1, 2), {}),
}


@pytest.mark.parametrize("case", list(MHA_CASES))
def test_multihead_attention_matches_pytorch(case):
    args, kwargs, arrays, call_kwargs = MHA_CASES[case]
    tm, am = _mha(*args, **kwargs)
    compare(tm, am, arrays, _call(**call_kwargs))


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("float_masks", [False, True])
def test_multihead_attention_masks(need_weights, float_masks):
    tm, am = _mha(6, 2, batch_first=True)
    x = _x(3, 5, 6)
    padding = np.zeros((3, 5), dtype=bool)
    padding[0, 3:] = True  # sample 0 has 3 tokens
    causal = np.triu(np.ones((5, 5), dtype=bool), 1)  # True: hidden, as MHA's masks mean
    masks = [padding, causal]
    if float_masks:
        masks = [np.where(m, -math.inf, 0.0) for m in masks]
    call = _call(key_padding_mask=True, attn_mask=True, need_weights=need_weights)
    compare(tm, am, [x, x, x, *masks], call)


def test_multihead_attention_per_head_3d_mask_and_causal_hint():
    tm, am = _mha(4, 2)
    x = _x(4, 3, 4)
    causal = np.triu(np.ones((4, 4), dtype=bool), 1)
    per_head = np.broadcast_to(_bool(3 * 2, 4, 4, p=0.2) & ~np.eye(4, dtype=bool), (6, 4, 4))
    compare(tm, am, [x, x, x, np.ascontiguousarray(per_head)], _call(attn_mask=True))
    for need_weights in (True, False):
        call = _call(attn_mask=True, is_causal=True, need_weights=need_weights)
        compare(tm, am, [x, x, x, causal], call)


@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_fully_padded_sample(need_weights):
    # PyTorch: nan for the fully padded sample with need_weights (explicit softmax), 0 without
    tm, am = _mha(4, 2, batch_first=True)
    x = _x(2, 3, 4)
    padding = np.zeros((2, 3), dtype=bool)
    padding[1] = True
    got = compare(
        tm, am, [x, x, x, padding], _call(key_padding_mask=True, need_weights=need_weights)
    )
    assert np.isnan(got["outs"][0][1]).all() == need_weights


def test_multihead_attention_float32():
    tm, am = _mha(4, 2, dtype="float32")
    x = _x(3, 2, 4, dtype="float32")
    got = compare(tm, am, [x, x, x], _call(), tol=2e-5)
    assert got["outs"][0].dtype == np.float32


def test_multihead_attention_dropout_only_in_training():
    tm, am = _mha(4, 2, dropout=0.5)
    am.eval(), tm.eval()
    compare(tm, am, _self(3, 2, 4), _call())
    am.train()
    x = agrad.tensor(_x(3, 2, 4))
    agrad.manual_seed(0)
    a = am(x, x, x)[0]
    agrad.manual_seed(1)
    b = am(x, x, x)[0]
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())


def test_multihead_attention_names_init_and_repr():
    torch.manual_seed(0)
    for kwargs in ({}, {"kdim": 3, "vdim": 5, "add_bias_kv": True}, {"bias": False}):
        tm, am = (
            torch.nn.MultiheadAttention(8, 4, **kwargs),
            agrad.nn.MultiheadAttention(8, 4, **kwargs),
        )
        assert [(n, tuple(p.shape)) for n, p in am.named_parameters()] == [
            (n, tuple(p.shape)) for n, p in tm.named_parameters()
        ]
        assert repr(am) == repr(tm)
    am = agrad.nn.MultiheadAttention(8, 4)
    bound = math.sqrt(6.0 / (8 + 24))  # xavier_uniform_ on (3E, E)
    w = am.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.all(am.in_proj_bias.detach().numpy() == 0)
    assert np.all(am.out_proj.bias.detach().numpy() == 0)
    out_bound = 1 / math.sqrt(8)  # out_proj keeps Linear's kaiming_uniform_(a=√5)
    assert np.abs(am.out_proj.weight.detach().numpy()).max() <= out_bound


def test_multihead_attention_bad_calls_raise_as_pytorch():
    for lib in (torch, agrad):
        with pytest.raises(AssertionError):
            lib.nn.MultiheadAttention(5, 2)
        m = lib.nn.MultiheadAttention(4, 2).double()
        x = lib.tensor(_x(3, 2, 4))
        with pytest.raises(RuntimeError):  # the causal hint needs its mask
            m(x, x, x, is_causal=True)
        with pytest.raises(RuntimeError):  # a 2-D mask of the wrong size
            m(x, x, x, attn_mask=lib.zeros(3, 4, dtype=lib.bool))
        with pytest.raises(AssertionError):  # key 3-D, value 2-D
            m(x, x, x[0])
        with pytest.raises(AssertionError):  # the wrong padding-mask shape
            m(x, x, x, key_padding_mask=lib.zeros(3, 3, dtype=lib.bool))
        with pytest.raises(AssertionError):  # the wrong width
            m(lib.tensor(_x(3, 2, 5)), x, x)
        with pytest.raises(AssertionError):  # an integer padding mask
            m(x, x, x, key_padding_mask=lib.zeros(2, 3, dtype=lib.int64))
