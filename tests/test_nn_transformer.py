"""nn.TransformerEncoderLayer/DecoderLayer, TransformerEncoder/Decoder and Transformer
against PyTorch with every parameter copied (the names must agree for the copy to load):
outputs and the gradients of the inputs and of every parameter, float64 to 1e-10; post-norm
and norm_first, relu/gelu/a callable activation, bias=False, batch_first, causal and padding
masks (bool and float, and a float causal mask recognised as the is_causal hint), and the
bad calls PyTorch rejects. The snippets mirror a small encoder-decoder translation model
and a GPT-style decoder-only stack built from encoder layers with a causal mask. (Dropout is
0: its masks come from agrad's generator.)"""

from __future__ import annotations

import numpy as np
import pytest
from nn_oracle import compare

import agrad

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(13)


def _x(*shape):
    return RNG.standard_normal(shape)


def _lib(module):
    return torch if isinstance(module, torch.nn.Module) else agrad


def _pair(name, *args, **kwargs):
    kwargs.setdefault("dropout", 0.0)
    made = []
    for lib in (torch, agrad):
        kw = dict(kwargs)
        if kw.get("activation") == "silu":
            kw["activation"] = lib.nn.functional.silu  # a callable, as PyTorch allows
        made.append(getattr(lib.nn, name)(*args, **kw).double())
    tm, am = made
    with torch.no_grad():
        for p in tm.parameters():
            p.add_(torch.randn(p.shape, dtype=p.dtype) * 0.1)  # no zero or one left as is
    return tm, am


def _causal_bool(n):
    return np.triu(np.ones((n, n), dtype=bool), 1)


def _padding(batch, n):
    pad = np.zeros((batch, n), dtype=bool)
    pad[0, n - 2 :] = True
    return pad


ENCODER_LAYER_CASES = {
    "post_norm": ({}, False),
    "norm_first": ({"norm_first": True}, False),
    "gelu_batch_first": ({"activation": "gelu", "batch_first": True}, True),
    "callable_activation": ({"activation": "silu"}, False),
    "no_bias": ({"bias": False, "layer_norm_eps": 1e-3}, False),
}


@pytest.mark.parametrize("case", list(ENCODER_LAYER_CASES))
@pytest.mark.parametrize("masks", [False, True])
def test_encoder_layer_matches_pytorch(case, masks):
    kwargs, batch_first = ENCODER_LAYER_CASES[case]
    tm, am = _pair("TransformerEncoderLayer", 8, 2, 16, **kwargs)
    x = _x(3, 5, 8) if batch_first else _x(5, 3, 8)
    if not masks:
        compare(tm, am, [x])
    else:

        def call(module, x, mask, pad):
            return module(x, src_mask=mask, src_key_padding_mask=pad)

        compare(tm, am, [x, _causal_bool(5), _padding(3, 5)], call)
    assert repr(am) == repr(tm)


def test_decoder_only_stack_with_a_float_causal_mask():
    # a GPT-style stack: encoder layers, a float causal mask (recognised as is_causal)
    tm, am = _pair("TransformerEncoderLayer", 8, 2, 16, batch_first=True, norm_first=True)
    te = torch.nn.TransformerEncoder(tm, 2, torch.nn.LayerNorm(8).double())
    ae = agrad.nn.TransformerEncoder(am, 2, agrad.nn.LayerNorm(8).double())

    def call(module, x):
        lib = _lib(module)
        mask = lib.nn.Transformer.generate_square_subsequent_mask(x.shape[1], dtype=lib.float64)
        return module(x, mask=mask)

    compare(te, ae, [_x(2, 6, 8)], call)
    assert repr(ae) == repr(te)


def test_encoder_with_padding_and_explicit_hint():
    tm, am = _pair("TransformerEncoderLayer", 8, 4, 16)
    te, ae = torch.nn.TransformerEncoder(tm, 2), agrad.nn.TransformerEncoder(am, 2)

    def call(module, x, mask, pad):
        return module(x, mask=mask, src_key_padding_mask=pad, is_causal=True)

    compare(te, ae, [_x(5, 3, 8), _causal_bool(5), _padding(3, 5)], call)


@pytest.mark.parametrize("kwargs", [{}, {"norm_first": True, "batch_first": True}])
def test_decoder_layer_and_decoder_match_pytorch(kwargs):
    tm, am = _pair("TransformerDecoderLayer", 8, 2, 16, **kwargs)
    bf = kwargs.get("batch_first", False)
    tgt, memory = (_x(3, 4, 8), _x(3, 6, 8)) if bf else (_x(4, 3, 8), _x(6, 3, 8))

    def call(module, tgt, memory, mask, tpad, mpad):
        return module(
            tgt, memory, tgt_mask=mask, tgt_key_padding_mask=tpad, memory_key_padding_mask=mpad
        )

    arrays = [tgt, memory, _causal_bool(4), _padding(3, 4), _padding(3, 6)]
    compare(tm, am, arrays, call)
    td = torch.nn.TransformerDecoder(tm, 2, torch.nn.LayerNorm(8).double())
    ad = agrad.nn.TransformerDecoder(am, 2, agrad.nn.LayerNorm(8).double())
    compare(td, ad, arrays, call)
    assert repr(ad) == repr(td)


def test_transformer_matches_pytorch():
    # a small translation model: source padding, causal target mask
    tm, am = _pair(
        "Transformer", d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
        dim_feedforward=16,
    )  # fmt: skip

    def call(module, src, tgt, src_pad):
        lib = _lib(module)
        mask = lib.nn.Transformer.generate_square_subsequent_mask(tgt.shape[0], dtype=lib.float64)
        return module(
            src, tgt, tgt_mask=mask, src_key_padding_mask=src_pad,
            memory_key_padding_mask=src_pad,
        )  # fmt: skip

    compare(tm, am, [_x(6, 2, 8), _x(4, 2, 8), _padding(2, 6)], call)
    assert repr(am) == repr(tm)


def test_transformer_initialisation_is_xavier_on_matrices():
    model = agrad.nn.Transformer(16, 2, 1, 1, 32)
    w = model.encoder.layers[0].linear1.weight.detach().numpy()  # (32, 16)
    bound = np.sqrt(6 / (16 + 32))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    layers = model.encoder.layers  # clones, not one shared layer
    assert layers[0].linear1.weight is not model.decoder.layers[0].linear1.weight
    mask = agrad.nn.Transformer.generate_square_subsequent_mask(3).numpy()
    np.testing.assert_array_equal(
        mask, torch.nn.Transformer.generate_square_subsequent_mask(3).numpy()
    )


def test_bad_calls_raise_as_pytorch():
    for lib in (torch, agrad):
        with pytest.raises(RuntimeError):
            lib.nn.TransformerEncoderLayer(8, 2, activation="tanh")
        model = lib.nn.Transformer(8, 2, 1, 1, 16).double()
        with pytest.raises(RuntimeError):  # batch sizes differ
            model(lib.tensor(_x(4, 2, 8)), lib.tensor(_x(3, 3, 8)))
        with pytest.raises(RuntimeError):  # not d_model wide
            model(lib.tensor(_x(4, 2, 6)), lib.tensor(_x(3, 2, 6)))
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16).double()
        with pytest.raises(RuntimeError):  # the causal hint without its mask
            layer(lib.tensor(_x(4, 2, 8)), is_causal=True)


def test_stack_clones_start_without_the_layers_gradient():
    # a layer used (and backpropagated) before it is stacked: PyTorch's clones have no .grad
    for lib in (torch, agrad):
        layer = lib.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0).double()
        layer(lib.tensor(_x(3, 2, 4))).sum().backward()
        stack = lib.nn.TransformerEncoder(layer, 2)
        assert all(p.grad is None for p in stack.parameters())
        assert layer.linear1.weight.grad is not None
