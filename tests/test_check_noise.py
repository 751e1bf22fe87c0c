"""f noisier than its rounding model: large terms that cancel (QA, 2026-12-02).

sum(c + g(x)) - c·n is quantized to the ulps of c·n (~1e-10 for 1e6) while |f| is ~0, so
the ladder's model of rounding (eps·|f|) sees nothing. Its central differences at
power-of-two steps come out as exact multiples of the quantum over h, stable from level to
level, so Ridders' error estimate called them converged: right gradients failed as "the
rule is wrong" and a claim of 0 passed where the derivative is 2.9. The noise is measured
now (ECnoise, `agrad.check.noise`) and the ladder's rounding widened to it.

Oracle: algebra (the derivative of sin(x)·x² is cos(x)·x² + 2x·sin(x)); the measured
noise against a quantum known by construction.
"""

from __future__ import annotations

import numpy as np
import pytest

from agrad.check import check_numpy
from agrad.check import noise as N
from agrad.check import steps as S
from agrad.check.targets import Variable
from agrad.check.verdict import VERDICTS

X = np.linspace(-3, 3, 400)


def _quantized(c):
    return lambda x: np.sum(c + np.sin(x) * x**2) - c * x.size


def _right(x):
    return np.cos(x) * x**2 + 2 * x * np.sin(x)


def _verdicts(report):
    return np.array([VERDICTS[c] for c in report.variables["x"].verdicts.reshape(-1)])


@pytest.mark.parametrize("c, passing", [(1e3, 0.95), (1e5, 0.75), (3e6, 0.0)])
def test_a_right_gradient_of_a_cancelling_sum_passes(c, passing):
    # (at 3e6, f is quantized to 2.4e-7: most elements cannot be resolved to 1e-5; at 1e5 a
    # fifth are resolved only to about 2.3e-5, and an element is decided at its best
    # resolution only where that is within 8 times its rtol part since QA rounds 10-11:
    # before, within 1e-4 of the row's scale, which passed a 20% error in a small element)
    report = check_numpy(_quantized(c), _right, {"x": X})
    verdicts = _verdicts(report)
    assert not (verdicts == "fail").any(), np.nonzero(verdicts == "fail")[0]
    assert (verdicts == "pass").mean() >= passing


@pytest.mark.parametrize(
    "c, corrupt",
    [(c, k) for c in (1e3, 1e5) for k in ("zero", "relative 1e-3", "sign")]
    + [(3e6, "zero"), (3e6, "sign")],  # (1e-3 of an element is within what 2.4e-7 resolves)
)
def test_a_wrong_gradient_of_a_cancelling_sum_fails_where_it_is_wrong(c, corrupt):
    wrong = np.zeros(X.size, dtype=bool)
    wrong[::7] = True
    wrong &= np.abs(_right(X)) > 1e-2  # (where 0 would be right, or nearly)

    def claim(x):
        g = _right(x)
        bad = {"zero": 0 * g, "relative 1e-3": g * (1 + 1e-3), "sign": -g}[corrupt]
        return np.where(wrong, bad, g)

    verdicts = _verdicts(check_numpy(_quantized(c), claim, {"x": X}))
    assert not (verdicts[wrong] == "pass").any(), np.nonzero(wrong & (verdicts == "pass"))[0]
    assert not (verdicts[~wrong] == "fail").any(), np.nonzero(~wrong & (verdicts == "fail"))[0]
    assert (verdicts[wrong] == "fail").mean() > 0.6  # (undecided where noise hides it)


def _variable(f, x):
    x = np.asarray(x, dtype=np.float64)
    return Variable(x, lambda points: np.array([[f(p)] for p in points]))


def _measured(f, x):
    var = _variable(f, x)
    elements = np.arange(var.size)
    sigma, size, taken, *_ = N._measure(var.along_coordinates(), var.value(), elements,
                                    S.element_scale(var.base))  # fmt: skip
    assert taken > 0
    return sigma[0]


@pytest.mark.parametrize("quantum", [2.0**-20, 2.0**-33, 2.0**-40])
def test_the_noise_of_a_quantized_function_is_measured_near_its_quantum(quantum):
    # Rounding to a grid of `quantum`: its error is uniform, σ = quantum/√12.
    sigma = _measured(lambda p: np.round(np.sum(np.sin(p) * p**2) / quantum) * quantum,
                      np.linspace(-2, 2, 24))  # fmt: skip
    truth = quantum / np.sqrt(12)
    assert np.all((sigma > truth / 4) & (sigma < truth * 4)), sigma / truth


@pytest.mark.parametrize(
    "f, x",
    [
        (lambda p: np.sum(np.maximum(p, 0)), [0.0, 0.0, 1.0]),  # kinks at the point
        (lambda p: np.sum(np.abs(p)) * 1e3, [0.0, -0.5]),
        (lambda p: np.sum(p**2 + (p > 0.5)), [0.5, 0.5]),  # a jump at the point
        (lambda p: np.sum(1 / p), [1e-7, 2.0]),  # a pole beside the stencil
        (lambda p: np.sum(p**3 - 2 * p), [1.0, 0.5, -2.0]),  # exact at dyadic points
        (lambda p: np.sum(np.exp(50 * p)), [0.0, 0.1]),  # high curvature
    ],
)
def test_kinks_jumps_poles_and_smooth_functions_are_not_noise(f, x):
    sigma = _measured(f, x)
    size = max(1.0, abs(f(np.asarray(x, dtype=np.float64))))
    assert not np.any(sigma > N.ABOVE_MODEL * S.EPS * size * 64), sigma


def test_no_element_is_measured_where_a_random_direction_finds_no_noise():
    var = _variable(lambda p: np.sum(np.tanh(p) * p), np.linspace(-1, 1, 50))
    noise, taken, _ = N.element_noise(var, var.value(), np.arange(50), S.element_scale(var.base),
                                   np.random.default_rng(0))  # fmt: skip
    assert noise is None and taken <= N.ROUNDS * 2 * N.OFFSETS.size


# Vector outputs computed by cancellation (QA round 17 F1): residuals X @ w - y of a
# nearly fitted model are 1e-9 beside terms of 1, so each output rounds to ulps of its
# terms. Elements the noise probe measured in one round lost their σ when a later round
# (re-measuring the element for its other outputs) happened on a coincidence, and noise
# between 2 and 16 times eps·|f| was dropped where elements were measured one by one: the
# ladder then took rounding for a regime's end, descended to steps of 1e-14 and failed
# the exact Jacobian X ("-1.25614 vs -1.25, error estimate 4e-11"). Oracle: algebra (the
# Jacobian of X @ w - y is X).


def _residual_case(rows, cols, misfit):
    rng = np.random.default_rng(rows * 100 + cols)
    X, w = rng.normal(size=(rows, cols)), rng.normal(size=cols)
    return {"X": X, "w": w, "y": X @ w + misfit * rng.normal(size=rows)}


@pytest.mark.parametrize("rows, cols", [(8, 8), (32, 16), (64, 32)])
@pytest.mark.parametrize("misfit", [1e-9, 1e-3, 1.0])
def test_the_exact_jacobian_of_residuals_passes_at_every_misfit(rows, cols, misfit):
    values = _residual_case(rows, cols, misfit)
    report = check_numpy(lambda X, w, y: X @ w - y, lambda X, w, y: X, values, wrt=["w"])
    verdicts = np.array([VERDICTS[c] for c in report.variables["w"].verdicts.reshape(-1)])
    assert report.ok and (verdicts == "pass").all(), np.unique(verdicts, return_counts=True)


@pytest.mark.parametrize("misfit", [1e-9, 1.0])
@pytest.mark.parametrize("relative", [1e-3, -1.0])  # one entry 0.1% off; one sign flipped
def test_a_wrong_entry_of_the_residuals_jacobian_fails_there(misfit, relative):
    values = _residual_case(32, 16, misfit)
    wrong = values["X"].copy()
    wrong[14, 10] *= 1 + relative
    report = check_numpy(lambda X, w, y: X @ w - y, lambda X, w, y: wrong, values, wrt=["w"])
    verdicts = report.variables["w"].verdicts.reshape(32, 16)
    assert VERDICTS[verdicts[14, 10]] == "fail"
    assert not report.ok and (np.delete(verdicts.reshape(-1), 14 * 16 + 10) == 0).all()


def _softmax_ce_gradient(W, X, Y):
    """A hand-written gradient of mean softmax cross-entropy in W: a vector function whose
    outputs sum terms that cancel (p - y over a batch), the function gradgradcheck checks."""
    z = X @ W
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return X.T @ (p - Y) / X.shape[0]


def test_the_jacobian_of_a_hand_written_gradient_matches_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    X, W = rng.normal(size=(16, 8)), rng.normal(size=(8, 4))
    Y = np.eye(4)[rng.integers(0, 4, size=16)]

    def torch_gradient(w):
        z = torch.from_numpy(X) @ w
        return torch.from_numpy(X).T @ (torch.softmax(z, 1) - torch.from_numpy(Y)) / 16

    truth = torch.autograd.functional.jacobian(torch_gradient, torch.from_numpy(W)).numpy()
    values = {"W": W, "X": X, "Y": Y}
    right = check_numpy(_softmax_ce_gradient, lambda W, X, Y: truth, values, wrt=["W"])
    assert right.ok, right.variables["W"].verdicts
    halved = truth.copy()
    halved[..., 1, 2] /= 2  # one column of the Jacobian (W[1, 2]) off by a factor of two
    wrong = check_numpy(_softmax_ce_gradient, lambda W, X, Y: halved, values, wrt=["W"])
    failed = wrong.variables["W"].verdicts.reshape(32, 32) == 1
    column = 1 * 4 + 2
    assert failed[np.abs(truth.reshape(32, 32)[:, column]) > 1e-6, column].all()
    assert not np.delete(failed, column, axis=1).any()


def _per_output(x):
    # each output cancels a large term (rounding to ulps of 1e3) and depends on one element
    return (1e3 + np.sin(x) * x**2) - 1e3


def test_an_output_that_does_not_depend_on_an_element_does_not_keep_it_measured():
    # An elementwise f: along element j, every output but f_j stays exactly still. The
    # probe measured each element for five rounds waiting for them (QA round 17 F2:
    # gradgradcheck of an LSTM cell took 38 s, nine tenths of it in the probe); it stops
    # once they have not moved beyond the ladder's first step.
    x = np.linspace(0.5, 2.5, 12)
    var = _variable(_per_output, x)
    noise, taken, _ = N.element_noise(var, var.value(), np.arange(12), S.element_scale(var.base),
                                   np.random.default_rng(0))  # fmt: skip
    per_element = 3 * N.OFFSETS.size
    assert taken <= N.ROUNDS * per_element + 3 * per_element * 12, taken
    quantum = np.spacing(1e3)  # f_j's rounding: σ about quantum/√12 (uniform rounding)
    diagonal = np.diag(noise)
    assert np.all((diagonal > quantum / 16) & (diagonal < quantum * 4)), diagonal / quantum
    assert not np.any(noise[~np.eye(12, dtype=bool)])
    report = check_numpy(_per_output, lambda x: np.diag(np.cos(x) * x**2 + 2 * x * np.sin(x)),
                         {"x": x})  # fmt: skip
    assert report.ok


def test_an_output_quantized_coarser_than_its_moves_is_still_measured():
    # Beside outputs that move along every element (x itself), a sum quantized to 2.4e-7
    # whose derivative is 1.7e-4 at one element: it stays still over the probe's first
    # spacings. Taken for independent there, its noise went unmeasured and its right
    # derivative failed as a wrong rule; it is undecided (its moves are below its quantum).
    c = 3e6

    def f(x):
        return np.concatenate([[np.sum(c + np.sin(x) * x**2) - c * x.size], x])

    def claim(x):
        return np.concatenate([[np.cos(x) * x**2 + 2 * x * np.sin(x)], np.eye(x.size)])

    report = check_numpy(f, claim, {"x": X})
    verdicts = report.variables["x"].verdicts
    assert not (verdicts == 1).any(), np.argwhere(verdicts == 1)
    assert (verdicts[1:] == 0).all()


# A quantized part beside a smooth part in another element (QA round 18 F1):
# f = (C + a·b0) - C + g(b1) is quantized to q = ulp(C). Along the noise probe's random
# direction the quantized part froze at the third stencil (its spacing over 4,096) while
# g(b1) still moved there, so its noise "faded" as a feature finer than the stencil's
# would; where its rounding errors drifted alike along the stencil, or it moved less than
# a quantum per spacing, no stencil saw it at all. No element was measured, the ladder
# descended below the quantum, where the quantized part's differences are exactly 0, and
# the claim 0 for b0 passed in 21 of 27 settings while the right claim failed. Oracle:
# algebra (∂f/∂b0 = a, ∂f/∂b1 = g'(b1); a companion in b0 itself adds g'(b0) to ∂f/∂b0).

COMPANIONS = {"x": (lambda t: t, lambda t: 1.0), "x²": (lambda t: t * t, lambda t: 2 * t),
              "sin": (np.sin, np.cos)}  # fmt: skip
QUANTIZED = [pytest.param(c, a, g, id=f"C={c:g},a={a:g},{g}")
             for c in (1e4, 1e6, 1e8) for a in (1e-2, 1e-3, 1e-4) for g in COMPANIONS]  # fmt: skip
B = np.array([0.7, 0.3])


def _quantized_beside(c, a, g, same):
    smooth, slope = COMPANIONS[g]
    if same:  # (and b1 smooth on its own)
        return (lambda b: (c + a * b[0]) - c + smooth(b[0]) + b[1] ** 3,
                np.array([a + slope(B[0]), 3 * B[1] ** 2]))  # fmt: skip
    return lambda b: (c + a * b[0]) - c + smooth(b[1]), np.array([a, slope(B[1])])


def _b_verdicts(f, claim):
    report = check_numpy(f, lambda b: claim, {"b": B})
    return [VERDICTS[v] for v in report.variables["b"].verdicts.reshape(-1)]


@pytest.mark.parametrize("same", [False, True], ids=["other", "same"])
@pytest.mark.parametrize("c, a, g", QUANTIZED)
def test_the_noise_of_a_quantized_part_beside_a_smooth_part_is_measured(c, a, g, same):
    f, _ = _quantized_beside(c, a, g, same)
    var = Variable(B, lambda points: np.array([[f(p)] for p in points]))
    noise, _, _ = N.element_noise(var, var.value(), np.arange(2), S.element_scale(B),
                               np.random.default_rng(20111))  # fmt: skip
    assert noise is not None
    truth = np.spacing(c) / np.sqrt(12)  # (uniform rounding to the quantum)
    assert truth / 4 < noise[0, 0] < truth * 4, noise[0, 0] / truth
    assert noise[0, 1] == 0  # (b1 moves only smooth parts)


@pytest.mark.parametrize("same", [False, True], ids=["other", "same"])
@pytest.mark.parametrize("c, a, g", QUANTIZED)
def test_a_dropped_or_doubled_quantized_term_never_passes_and_the_right_one_never_fails(
    c, a, g, same
):
    f, right = _quantized_beside(c, a, g, same)
    assert "fail" not in _b_verdicts(f, right)
    # (a·h/q: the quantized part's moves over the ladder's first step, in quanta; where it
    # moves a few quanta only, the finite differences cannot resolve a to decide)
    resolved = a * S.START / np.spacing(c) >= 64
    for wrong in (right - [a, 0.0], right + [a, 0.0]):
        verdicts = _b_verdicts(f, wrong)
        assert verdicts[0] == "fail" if resolved else verdicts[0] != "pass", verdicts
        assert verdicts[1] == "pass"
