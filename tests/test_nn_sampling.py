"""1-D pooling, padding modules, pixel (un)shuffle, interpolate/Upsample, Unfold/Fold and
channel/alpha dropout against PyTorch: values and input gradients (float64 to 1e-10, and
float32), odd sizes, ties in max pooling, downsampling as well as upsampling, reprs, and
the bad calls PyTorch rejects. The snippets mirror a U-Net decoder's Upsample, an ESPCN
head's PixelShuffle, a 1-D CNN's pooling over a sequence and ReflectionPad in a ResNet
generator."""

from __future__ import annotations

import numpy as np
import pytest

import agrad

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)


def _run(lib, fn, x):
    t = lib.tensor(x, requires_grad=True)
    out = fn(lib, t)
    if isinstance(out, tuple):
        out, extra = out[0], [o.numpy() for o in out[1:]]
    else:
        extra = []
    w = lib.tensor(np.sin(np.arange(out.numel()) + 0.3).reshape(tuple(out.shape)))
    (out * w.to(out.dtype)).sum().backward()
    return [out.detach().numpy(), t.grad.numpy(), *extra]


def _agree(fn, x, tol=1e-10):
    got, want = _run(agrad, fn, x), _run(torch, fn, x)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


X3 = RNG.standard_normal((2, 3, 11))
X4 = RNG.standard_normal((2, 3, 5, 7))
TIES = np.array([[[1.0, 1.0, 0.0, 2.0, 2.0, 2.0, -1.0]]])

CASES_1D = {
    "max_pool1d": lambda L, x: L.nn.functional.max_pool1d(x, 3),
    "max_pool1d_all": lambda L, x: L.nn.functional.max_pool1d(x, 3, 2, 1, 2, True, True),
    "max_pool1d_module": lambda L, x: L.nn.MaxPool1d(4, stride=3, padding=2)(x),
    "avg_pool1d": lambda L, x: L.nn.functional.avg_pool1d(x, 3),
    "avg_pool1d_pad": lambda L, x: L.nn.AvgPool1d(3, 2, 1, ceil_mode=True)(x),
    "avg_pool1d_no_count_pad": lambda L, x: L.nn.functional.avg_pool1d(x, 4, 3, 2, False, False),
    "adaptive_avg_pool1d": lambda L, x: L.nn.AdaptiveAvgPool1d(4)(x),
    "adaptive_avg_pool1d_up": lambda L, x: L.nn.functional.adaptive_avg_pool1d(x, 13),
    "unbatched_pool": lambda L, x: L.nn.MaxPool1d(2)(x[0]),
    "zero_pad1d": lambda L, x: L.nn.ZeroPad1d((2, 1))(x),
    "constant_pad1d": lambda L, x: L.nn.ConstantPad1d(3, -2.5)(x),
    "reflection_pad1d": lambda L, x: L.nn.ReflectionPad1d((3, 1))(x),
    "replication_pad1d": lambda L, x: L.nn.ReplicationPad1d(4)(x),
    "nearest_1d": lambda L, x: L.nn.functional.interpolate(x, scale_factor=2),
    "nearest_1d_down": lambda L, x: L.nn.functional.interpolate(x, size=4),
    "nearest_1d_odd": lambda L, x: L.nn.functional.interpolate(x, scale_factor=1.7),
    "nearest_exact_1d": lambda L, x: L.nn.functional.interpolate(x, size=7, mode="nearest-exact"),
    "linear": lambda L, x: L.nn.functional.interpolate(x, size=17, mode="linear"),
    "linear_corners": lambda L, x: L.nn.functional.interpolate(
        x, size=17, mode="linear", align_corners=True
    ),
    "linear_down": lambda L, x: L.nn.functional.interpolate(x, scale_factor=0.4, mode="linear"),
    "linear_to_one": lambda L, x: L.nn.functional.interpolate(
        x, size=1, mode="linear", align_corners=True
    ),
    "area_1d": lambda L, x: L.nn.functional.interpolate(x, size=4, mode="area"),
    "dropout1d_eval": lambda L, x: L.nn.functional.dropout1d(x, 0.5, training=False),
}

CASES_2D = {
    "zero_pad2d": lambda L, x: L.nn.ZeroPad2d((1, 0, 2, 3))(x),
    "zero_pad2d_crop": lambda L, x: L.nn.ZeroPad2d((-1, 2, 0, -2))(x),
    "constant_pad2d": lambda L, x: L.nn.ConstantPad2d(1, 4.0)(x),
    "reflection_pad2d": lambda L, x: L.nn.ReflectionPad2d((2, 1, 4, 3))(x),
    "replication_pad2d": lambda L, x: L.nn.ReplicationPad2d((0, 5, 1, 2))(x),
    "pixel_shuffle": lambda L, x: L.nn.PixelShuffle(2)(
        x.reshape(1, 210)[:, :200].reshape(1, 8, 5, 5)
    ),
    "pixel_shuffle_3": lambda L, x: L.nn.functional.pixel_shuffle(
        x.reshape(1, 210)[:, :180].reshape(2, 9, 2, 5), 3
    ),
    "pixel_unshuffle": lambda L, x: L.nn.PixelUnshuffle(2)(x[:, :, :4, :6]),
    "round_trip": lambda L, x: L.nn.functional.pixel_shuffle(
        L.nn.functional.pixel_unshuffle(x[:, :, :4, :6], 2), 2
    ),
    "upsample_nearest": lambda L, x: L.nn.Upsample(scale_factor=2)(x),
    "nearest_size": lambda L, x: L.nn.functional.interpolate(x, size=(3, 10)),
    "nearest_factors": lambda L, x: L.nn.functional.interpolate(x, scale_factor=(1.5, 0.6)),
    "nearest_recompute": lambda L, x: L.nn.functional.interpolate(
        x, scale_factor=1.3, recompute_scale_factor=True
    ),
    "nearest_exact": lambda L, x: L.nn.functional.interpolate(
        x, scale_factor=2.5, mode="nearest-exact"
    ),
    "bilinear": lambda L, x: L.nn.Upsample(scale_factor=2, mode="bilinear")(x),
    "bilinear_corners": lambda L, x: L.nn.Upsample(
        size=(9, 4), mode="bilinear", align_corners=True
    )(x),
    "bilinear_down": lambda L, x: L.nn.functional.interpolate(
        x, size=(2, 3), mode="bilinear", align_corners=False
    ),
    "bilinear_factor": lambda L, x: L.nn.functional.interpolate(
        x, scale_factor=(1.7, 0.8), mode="bilinear"
    ),
    "area_2d": lambda L, x: L.nn.functional.interpolate(x, size=(2, 3), mode="area"),
    "unfold": lambda L, x: L.nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=2)(x),
    "fold": lambda L, x: L.nn.Fold((4, 5), 2, stride=1)(
        x.reshape(2, 105)[:, :96].reshape(2, 8, 12)
    ),
    "dropout2d_eval": lambda L, x: L.nn.Dropout2d(0.3).eval()(x),
    "dropout2d_zero": lambda L, x: L.nn.functional.dropout2d(x, 0.0),
    "alpha_dropout_eval": lambda L, x: L.nn.AlphaDropout(0.3).eval()(x),
}


@pytest.mark.parametrize("name", list(CASES_1D))
def test_1d_matches_pytorch(name):
    _agree(CASES_1D[name], X3)


@pytest.mark.parametrize("name", list(CASES_2D))
def test_2d_matches_pytorch(name):
    _agree(CASES_2D[name], X4)


def test_max_pool1d_ties_and_indices():
    for fn in (
        lambda L, x: L.nn.functional.max_pool1d(x, 2, 1, return_indices=True),
        lambda L, x: L.nn.MaxPool1d(3, 2, 1, return_indices=True)(x),
    ):
        _agree(fn, TIES)


@pytest.mark.parametrize("name", ["bilinear", "nearest_factors", "reflection_pad2d", "area_2d"])
def test_float32(name):
    _agree(CASES_2D[name], X4.astype(np.float32), tol=2e-6)


@pytest.mark.parametrize(
    "name", ["avg_pool1d_pad", "adaptive_avg_pool1d", "area_1d", "max_pool1d_all", "linear"]
)
def test_float32_1d(name):
    # (the average-pooling entries promote float32 to float64; the result is cast back)
    _agree(CASES_1D[name], X3.astype(np.float32), tol=2e-6)


def test_module_reprs_match_pytorch():
    makers = [
        lambda nn: nn.Dropout1d(),
        lambda nn: nn.Dropout2d(0.3, True),
        lambda nn: nn.AlphaDropout(0.2),
        lambda nn: nn.MaxPool1d(3, 2, 1, 2, True, True),
        lambda nn: nn.AvgPool1d(3, 2, 1, True, False),
        lambda nn: nn.AdaptiveAvgPool1d(4),
        lambda nn: nn.ZeroPad2d(2),
        lambda nn: nn.ConstantPad1d(2, 3.5),
        lambda nn: nn.ConstantPad2d((1, 2, 0, 1), 1),
        lambda nn: nn.ReflectionPad2d((1, 1, 2, 0)),
        lambda nn: nn.ReplicationPad1d(1),
        lambda nn: nn.PixelShuffle(2),
        lambda nn: nn.PixelUnshuffle(3),
        lambda nn: nn.Upsample(scale_factor=2),
        lambda nn: nn.Upsample(size=(3, 4), mode="bilinear", align_corners=True),
        lambda nn: nn.Upsample(scale_factor=(2, 3), mode="nearest"),
        lambda nn: nn.Unfold(2, padding=1),
        lambda nn: nn.Fold((4, 5), 2),
    ]
    for make in makers:
        assert repr(make(agrad.nn)) == repr(make(torch.nn))


def test_channel_dropout_zeroes_whole_channels_with_agrads_generator():
    x = agrad.tensor(RNG.standard_normal((4, 6, 5, 3)) + 5.0, requires_grad=True)
    agrad.manual_seed(2)
    out = agrad.nn.functional.dropout2d(x, 0.5)
    kept = out.detach().numpy() != 0
    per_channel = kept.reshape(4, 6, -1)
    assert np.all(per_channel.all(-1) | ~per_channel.any(-1))  # a channel is kept or gone
    assert 0 < per_channel.all(-1).sum() < 24
    np.testing.assert_allclose(out.detach().numpy()[kept], 2 * x.detach().numpy()[kept])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.where(kept, 2.0, 0.0))
    seq = agrad.nn.Dropout1d(0.5)(agrad.ones(3, 4, 7))  # (N, C, L): whole rows
    rows = seq.numpy()
    assert np.all((rows == 0).all(-1) | (rows == 2).all(-1))


def test_alpha_dropout_by_pytorchs_formula():
    x = agrad.tensor(RNG.standard_normal((200, 50)))
    agrad.manual_seed(4)
    out = agrad.nn.functional.alpha_dropout(x, 0.2, training=True).numpy()
    agrad.manual_seed(4)
    keep = (agrad.rand(200, 50).numpy() >= 0.2).astype(float)
    alpha = 1.6732632423543772 * 1.0507009873554805
    a = ((alpha**2 * 0.2 + 1) * 0.8) ** -0.5
    expected = x.numpy() * keep * a + (keep - 1) * alpha * a + alpha * a * 0.2
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    # a standard normal input keeps (about) zero mean and unit variance: what it is for
    z = agrad.tensor(np.random.default_rng(0).standard_normal(200_000))
    y = agrad.nn.functional.alpha_dropout(z, 0.3, training=True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02


def test_bad_calls_raise_as_pytorch():
    x3, x4 = X3, X4
    for lib in (torch, agrad):
        F = lib.nn.functional
        with pytest.raises(ValueError):  # align_corners with nearest
            F.interpolate(lib.tensor(x4), scale_factor=2, align_corners=True)
        with pytest.raises(ValueError):  # size and scale_factor
            F.interpolate(lib.tensor(x4), size=3, scale_factor=2)
        with pytest.raises(ValueError):  # neither
            F.interpolate(lib.tensor(x4))
        with pytest.raises(NotImplementedError):  # bilinear on 1-D
            F.interpolate(lib.tensor(x3), scale_factor=2, mode="bilinear")
        with pytest.raises(RuntimeError):  # channels not divisible by r²
            F.pixel_shuffle(lib.tensor(x4), 2)
        with pytest.raises(ValueError):
            lib.nn.Dropout2d(1.5)
        with pytest.raises(RuntimeError):  # a kernel larger than the padded input
            F.max_pool1d(lib.tensor(x3), 20)


def test_unsupported_options_raise():
    with pytest.raises(NotImplementedError, match="antialias"):
        agrad.nn.functional.interpolate(agrad.ones(1, 1, 4, 4), size=2, antialias=True)
    with pytest.raises(NotImplementedError, match="bicubic"):
        agrad.nn.functional.interpolate(agrad.ones(1, 1, 4, 4), size=2, mode="bicubic")
