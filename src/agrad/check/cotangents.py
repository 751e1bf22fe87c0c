"""Is the backward linear in its cotangent? A claim assembled from one-hot cotangents
(or, for a single-number output, from the cotangent 1) cannot tell a backward that
forgets to multiply by ``grad_output`` (``return 2*x``), squares it (``g*g*2*x``) or adds
a constant from a right one: for those cotangents they give the same numbers. In use,
the cotangent is anything (``0.5 * SumSq.apply(x)``) and such a gradient is wrong.
PyTorch's gradcheck tests the zero cotangent; here one VJP with a random cotangent ``w``
must equal ``w`` times the claim, which a zero, a factor or a square all fail; then
±`LARGE`·|w| and `SMALL`·w (a backward that clips grad_output to [-1, 1], as clipped
estimators do, is linear for every |w| < 1, QA round 28), and the zero cotangent, which
must give zero or nan (0·inf) — a backward that returns something else for it (``if (g ==
0).all(): return ones``) is right for every other cotangent and wrong where an output is
unused. (gradcheck's check_undefined_grad needs no test of its own for those values.)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import steps as S
from .verdict import COTANGENT, FAIL, REENTRANT, ROUNDED_ULPS, ZERO, rounding_size


def cotangent_test(
    vjp: Callable[[np.ndarray], np.ndarray],
    grads: np.ndarray,
    rng: np.random.Generator,
    dtype: str,
    basis: np.ndarray | None = None,
    nondet_tol: float = 0.0,
    size: np.ndarray | None = None,
) -> tuple[np.ndarray, dict | None]:
    """``grads`` (k, n): the VJPs of the cotangents in ``basis`` (k, m; the one-hot ones
    when None). Returns which of the n input elements break linearity, and the evidence
    (None when none does). The VJP is taken twice: a backward must give the same numbers
    for the same cotangent, within ``nondet_tol`` (PyTorch's "reentrant" test). ``size``
    (m,): |f| per output, whose ulps a backward computed at f's size rounds to."""
    k, n = grads.shape
    bad = np.zeros(n, dtype=bool)
    if k == 0 or n == 0:
        return bad, None
    # (one cotangent: away from 0 and 1, where a forgotten or squared one hides, and
    # negative, where |g| does)
    w = -rng.uniform(0.25, 0.75, 1) if k == 1 else rng.standard_normal(k)
    u = w if basis is None else w @ basis
    got = np.asarray(vjp(u), dtype=np.float64).reshape(-1)
    again = np.asarray(vjp(u), dtype=np.float64).reshape(-1)
    with np.errstate(all="ignore"):
        same = (got == again) | (np.abs(got - again) <= nondet_tol)  # (inf == inf too)
        differs = ~same & ~(np.isnan(got) & np.isnan(again))
    if differs.any():
        j = int(np.argmax(differs))
        return differs, {"reason": REENTRANT, "element": j, "with_cotangent": float(got[j]),
                         "again": float(again[j]), "nondet_tol": nondet_tol}  # fmt: skip
    finite = np.isfinite(grads)
    known = np.where(finite, grads, 0.0)  # (a non-finite claim is judged elsewhere)
    tried = [(w, "a random cotangent")]
    for factor in LARGE:  # (both signs, above 1: clipping either way shows)
        large = factor * np.abs(w)
        tried += [(large, f"a large positive cotangent ({factor:g} times the random one's "
                           "magnitude)"),
                  (-large, f"a large negative cotangent (-{factor:g} times the random one's "
                            "magnitude)")]  # fmt: skip
    tried.append((SMALL * w, f"a small cotangent ({SMALL:g} times the random one)"))
    for wk, which in tried:
        if wk is not w:
            u = wk if basis is None else wk @ basis
            got = np.asarray(vjp(u), dtype=np.float64).reshape(-1)
        # (a backward's noise grows with its cotangent: nondet_tol is the random one's)
        ratio = float(np.max(np.abs(wk)) / max(float(np.max(np.abs(w))), 1e-300))
        noise = nondet_tol * max(1.0, ratio)
        bad, evidence = _linear(got, known, finite, wk, u, dtype, size, which, noise)
        if evidence is not None:
            return bad, evidence
    got = np.asarray(vjp(np.zeros_like(u)), dtype=np.float64).reshape(-1)
    # (within an ulp of the claim's scale: an iterative backward leaves 8.7e-22 there, far
    # below the rounding the other cotangents are allowed, QA round 29)
    residue = max(nondet_tol, float(np.finfo(np.float64).eps) * float(np.abs(known).max()))
    bad = ~((np.abs(got) <= residue) | np.isnan(got)) & finite.all(axis=0)
    if not bad.any():
        return bad, None
    j = int(np.argmax(bad))
    zero = "the zero cotangent"
    return bad, {"reason": COTANGENT, "element": j, "with_cotangent": float(got[j]),
                 "expected": 0.0, "cotangent_scale": 0.0, "which": zero}  # fmt: skip


# The next cotangents: the random one's magnitudes times these, either sign (5 alone let a
# backward clipping grad_output at 4 or 10 pass, QA round 29), and the random one times
# SMALL (a backward that zeroes cotangents below 1e-3 passed).
LARGE = (5.0, 100.0)
SMALL = 1e-4
SUBNORMAL = float(np.finfo(np.float32).tiny) * 2.0**24  # (gradients below: not tested there)


def _linear(got, known, finite, w, u, dtype, size, which, nondet_tol=0.0) -> tuple:
    """Whether ``got``, the VJP of the cotangent ``u`` (``w`` in the claim's basis), is ``w``
    times the claim (n elements: which are not, and the evidence)."""
    with np.errstate(all="ignore"):
        want, scale = w @ known, np.abs(w) @ np.abs(known)
        # Rounding: the same backward with another cotangent rounds differently; a
        # backward that is not linear is off by a part of the whole (a factor, a square).
        eps = np.finfo(np.dtype(dtype)).eps
        root = np.sqrt(eps)
        # (the claim's whole numbers are float32's too: a float32 backward of 3·x, QA 30)
        float32 = S.in_float32(got, large=True) and S.in_float32(known, whole=True)
        if float32:  # (a float32 backward for float64 inputs, mixed precision: it rounds
            # at float32's eps, QA round 21; 64 of its ulps, not its square root, 3.5e-4,
            # which passed a backward 1e-4 nonlinear in grad_output, QA round 22)
            eps = max(eps, float(np.finfo(np.float32).eps))
            root = max(root, 64 * eps)
        # (and the noise a backward may have, nondet_tol: at a small cotangent it is a
        # larger part of the gradient; and ulps of the cotangent itself, which a zero
        # gradient's residues round at: (x - mean(x)).sum() gives 4e-16 for a cotangent of
        # 2, where its claim is 1e-16, QA round 30)
        # (and what the verdicts take for a zero gradient, ZERO per unit of cotangent: a
        # zero gradient's residues round at its terms' scale, which no value here shows:
        # layer_norm(x).sum() at x ~ 1e-3 rounds at 1/σ = 1e3, and a right backward was
        # "not linear" by 2e-18 at a cotangent of 1e-4, QA round 33)
        floor = (ROUNDED_ULPS * eps + ZERO) * float(np.max(np.abs(u), initial=0.0))
        allowed = root * (scale + 1e-6 * scale.max()) + nondet_tol + floor
        if size is not None:  # (softmax at [30, 0, 1]: s·(w - s·w) cancels to ulps of s,
            # which the chain rule amplifies: see verdict.ROUNDED_ULPS)
            allowed = allowed + ROUNDED_ULPS * eps * float(np.abs(u) @ rounding_size(size))
        # (where the cotangent times the claim overflows, 5 × exp(709.78), nothing to test;
        # nor where only the larger cotangent overflows inside the backward, g·e^2x/e^x at
        # 354.85, QA round 29: a fragile backward, not one nonlinear in grad_output)
        testable = finite.all(axis=0) & np.isfinite(want)
        if which != "a random cotangent":
            testable &= np.isfinite(got)
            # (nor where the small cotangent's gradient is subnormal in float32, 1e-42: its
            # precision is gone there, QA round 30)
            testable &= ~(np.abs(want) < SUBNORMAL) | (want == 0)
        bad = ~(np.abs(got - want) <= allowed) & testable
    if not bad.any():
        return bad, None
    j = int(np.argmax(np.where(bad, np.nan_to_num(np.abs(got - want), nan=np.inf), -1.0)))
    evidence = {"reason": COTANGENT, "element": j, "with_cotangent": float(got[j]),
                "expected": float(want[j]), "cotangent_scale": float(np.abs(u).max()),
                "which": which}  # fmt: skip
    return bad, evidence


def mark(verdicts: np.ndarray, reasons: np.ndarray, bad: np.ndarray, found: dict | None):
    """Fail the compared elements of the input elements ``bad`` (n,): every output's."""
    if found is not None:
        verdicts[:, bad] = FAIL
        reasons[:, bad] = found["reason"]


def nondet_tol(target: object) -> float:
    """How far two backward passes may differ: gradcheck's ``nondet_tol`` (0: not at all;
    only `AgradCallableTarget` is given one)."""
    return float(getattr(target, "nondet_tol", 0.0))
