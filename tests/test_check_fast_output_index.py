"""--fast names an element of a matrix output by its position in that matrix, as the full
check does (it named output (0, 2) of a 3x3 output "(2,)", QA round 21). f(A) = A @ A:
dF[i, j]/dA[k, l] = δ_ik·A[l, j] + A[i, k]·δ_jl, by hand; the wrong claim drops a term."""

from __future__ import annotations

import numpy as np

from agrad.check import check_numpy

A = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0], [0.7, 0.1, 1.5]])


def square(A):
    return A @ A


def one_term(A):
    return 2 * np.einsum("ik,lj->ijkl", np.eye(A.shape[0]), A)


def test_fast_reports_matrix_output_indices():
    for fast in (False, True):
        report = check_numpy(square, one_term, {"A": A}, fast=fast)
        assert not report.ok
        worst = report.to_dict()["variables"]["A"]["worst"]
        assert all(len(w["output_index"]) == 2 for w in worst), (fast, worst)
