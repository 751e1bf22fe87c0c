"""Properties of every op's VJP, with hypothesis choosing the op, its case and the values:
the gradient has its input's shape, and the VJP is linear in the cotangent."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_ops_generated import all_cases, differentiable_inputs, forward, make_inputs, vjp

CASES = [p.values for p in all_cases(differentiable_only=True, smooth=True)]


@settings(max_examples=150, deadline=None)
@given(
    which=st.integers(0, len(CASES) - 1),
    seed=st.integers(0, 2**31 - 1),
    a=st.floats(-3, 3, allow_nan=False),
    b=st.floats(-3, 3, allow_nan=False),
)
def test_vjp_is_linear_in_the_cotangent_and_keeps_shapes(which, seed, a, b):
    op, case = CASES[which]
    arrays = make_inputs(op, case, seed=seed % 1000)
    out_shape = forward(op, arrays, case.params).shape
    rng = np.random.default_rng(seed)
    u, v = rng.standard_normal(out_shape), rng.standard_normal(out_shape)
    gu = vjp(op, arrays, case.params, u)[2]
    gv = vjp(op, arrays, case.params, v)[2]
    mixed = vjp(op, arrays, case.params, a * u + b * v)[2]
    for i, g_u, g_v, g_m in zip(differentiable_inputs(op, arrays), gu, gv, mixed, strict=True):
        if g_m is None:
            assert g_u is None and g_v is None
            continue
        assert np.shape(g_m) == arrays[i].shape
        expected = a * np.asarray(g_u) + b * np.asarray(g_v)
        np.testing.assert_allclose(g_m, expected, rtol=1e-9, atol=1e-9)
