"""Several kinks at one point: which gradients are valid, and who decides (QA round 17 F3).

A ReLU layer with zero biases and an all-zero (padding) sample has every unit of that
sample at relu's kink at once. PyTorch's relu'(0) = 0 gives the gradient of the piece
where all of them are off: a valid (Clarke) gradient. The checker tested the claim along
directions through the kinks, demanding its slope between the one-sided directional
derivatives; that holds for a convex (or concave) f only. With kinks of both kinds
(relu(b0) - relu(b1)), the piece b < 0's gradient is outside them along (1, -1): the right
gradient failed as "not a subgradient". A claim is now certified from the gradients
measured around the point (within their hull: for separate kinks, the box of the
coordinates' intervals); where kinks are not separate (|x0 - x1|, max at a tie), claims
outside the hull still fail along directions (see also test_check_kink_hull.py).

Oracle: algebra. Each function's pieces and their gradients are written out below.
"""

from __future__ import annotations

import numpy as np
import pytest

from agrad.check import check_numpy
from agrad.check.verdict import REASONS, VERDICTS


def _verdicts(f, claim, x):
    report = check_numpy(f, lambda b: np.asarray(claim, dtype=np.float64),
                         {"b": np.asarray(x, dtype=np.float64)})  # fmt: skip
    v = report.variables["b"]
    return report.ok, [VERDICTS[c] for c in v.verdicts.ravel()], v


def _mixed(b):
    # a convex kink in b0 (slopes 0.3 | 1.3), a concave one in b1 (0.2 | -0.8)
    return np.maximum(b[0], 0) - np.maximum(b[1], 0) + 0.3 * b[0] + 0.2 * b[1]


def _abs_difference(b):
    return np.abs(b[0]) - np.abs(b[1])  # its pieces' gradients: (s0, -s1), every sign pair s


# The four pieces' gradients at 0, and points of the box between them.
MIXED_VALID = [(0.3, 0.2), (1.3, 0.2), (0.3, -0.8), (1.3, -0.8), (0.8, 0.2), (0.8, -0.3)]
MIXED_WRONG = [(0.3, 0.5), (1.5, 0.2), (0.3, -1.0), (0.0, 0.0), (-0.3, -0.2)]


@pytest.mark.parametrize("claim", MIXED_VALID)
def test_every_gradient_of_the_box_passes_where_kinks_are_separate(claim):
    ok, verdicts, _ = _verdicts(_mixed, claim, [0.0, 0.0])
    assert ok and verdicts == ["kink", "kink"], verdicts


@pytest.mark.parametrize("claim", MIXED_WRONG)
def test_a_gradient_outside_the_box_fails(claim):
    ok, verdicts, v = _verdicts(_mixed, claim, [0.0, 0.0])
    assert not ok and "fail" in verdicts
    assert {REASONS[r] for r in v.reasons.ravel() if r} == {"not a subgradient"}


@pytest.mark.parametrize("claim, valid", [((0, 0), True), ((1, 1), True), ((-1, 1), True),
                                          ((2, 0), False), ((0, 1.5), False)])  # fmt: skip
def test_abs_of_both_signs_is_judged_by_its_box(claim, valid):
    ok, _, _ = _verdicts(_abs_difference, claim, [0.0, 0.0])
    assert ok == valid


@pytest.mark.parametrize(
    "f, x, claim, valid",
    [
        # |x0 - x1| at a tie: valid gradients t·(1, -1), |t| <= 1; each coordinate's interval
        # is [-1, 1], so (1, 1) passes them: only a direction ((1, 1)) shows it is wrong.
        (lambda b: np.abs(b[0] - b[1]), [0.5, 0.5], (1, 1), False),
        (lambda b: np.abs(b[0] - b[1]), [0.5, 0.5], (1, -1), True),
        (lambda b: np.abs(b[0] - b[1]), [0.5, 0.5], (0.5, 0.5), False),
        # max at a tie: valid gradients are convex weights on the tied entries
        (lambda b: np.max(b), [1.0, 1.0, 0.0], (1, 1, 0), False),
        (lambda b: np.max(b), [1.0, 1.0, 0.0], (0.5, 0.5, 0), True),
        (lambda b: np.max(b), [1.0, 1.0, 0.0], (1, 0, 0), True),
    ],
)
def test_kinks_that_are_not_separate_are_still_judged_along_directions(f, x, claim, valid):
    ok, _, _ = _verdicts(f, claim, x)
    assert ok == valid


def _relu_net(x, W1, b1, W2, Y):
    z = x @ W1 + b1
    s = np.maximum(z, 0) @ W2
    s = s - s.max(axis=1, keepdims=True)
    return -np.sum(Y * (s - np.log(np.exp(s).sum(axis=1, keepdims=True)))) / x.shape[0]


def _relu_net_gradient(x, W1, b1, W2, Y, *, at_zero=0.0):
    z = x @ W1 + b1
    a = np.maximum(z, 0)
    s = a @ W2
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    dz = ((p - Y) / x.shape[0]) @ W2.T * np.where(z == 0, at_zero, z > 0)
    return {"W1": x.T @ dz, "b1": dz.sum(axis=0)}


@pytest.mark.parametrize("units", [2, 16])
def test_a_relu_layer_with_zero_biases_and_a_padding_sample(units):
    # relu'(0) = 0 (PyTorch's) and relu'(0) = 1 are both gradients of pieces (and any
    # mix, the box between them); a gradient outside a unit's interval is wrong.
    rng = np.random.default_rng(units)
    x = rng.normal(size=(4, 3))
    x[1] = 0.0
    values = {"x": x, "W1": rng.normal(size=(3, units)), "b1": np.zeros(units),
              "W2": rng.normal(size=(units, 3)), "Y": np.eye(3)[[0, 2, 1, 1]]}  # fmt: skip
    for at_zero in (0.0, 1.0):
        report = check_numpy(
            _relu_net,
            lambda at_zero=at_zero, **v: _relu_net_gradient(**v, at_zero=at_zero),
            values,
            wrt=["W1", "b1"],
        )
        assert report.ok, (at_zero, report.variables["b1"].verdicts)

    low, high = (_relu_net_gradient(**values, at_zero=a)["b1"][0] for a in (0.0, 1.0))

    def wrong(**v):
        g = _relu_net_gradient(**v)
        g["b1"][0] = min(low, high) - (abs(high - low) + 0.01)  # beyond the unit's interval
        return g

    report = check_numpy(_relu_net, wrong, values, wrt=["W1", "b1"])
    assert not report.ok and VERDICTS[report.variables["b1"].verdicts[0, 0]] == "fail"


def test_a_failing_kink_shows_its_interval_not_nan(cli, tmp_path):
    # (QA round 17 F5c: the table said numeric nan, abs error nan, then "max abs error 0")
    path = tmp_path / "tie.py"
    path.write_text(
        "import numpy as np\n"
        "def f(x):\n    return np.max(x[:2])\n"
        "def claim(x):\n    return np.array([1.0, 1.0])\n"
    )
    result = cli(["check", "--python", f"{path}:f", "--grad", f"{path}:claim",
                  "--set", "x=[1,1]"])  # fmt: skip
    assert result.code == 1
    assert "kink [0, 1]" in result.out and "nan" not in result.out
    assert "max abs error" not in result.out and "no error to measure" in result.out
