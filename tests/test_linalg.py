"""Matrix calculus as a researcher checks it: identities of known truth through the CLI
(`agrad check --expect`), PyTorch's names and values, and the edges (singular matrices,
non-square ones, a string where a tensor belongs). The op entries themselves are tested by
being in the table (test_ops_generated, test_batching, test_check, test_saved_values)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import require_torch

import agrad

A = "[[2, 1, 0.5], [0.3, 3, -1], [0.2, 0.4, 1.5]]"  # not symmetric: a transpose shows
B = "[[1, -2], [0.5, 1], [2, 0.25]]"
SPD = "[[4, 1, 0.5], [1, 3, 0.2], [0.5, 0.2, 2]]"


def _check(cli, program, wrt, expect, **sets):
    argv = ["check", program, "--wrt", wrt, "--expect", expect, "--format", "json"]
    for name, value in sets.items():
        argv += ["--set", f"{name}={value}"]
    return cli(argv)


# Identities of matrix calculus (The Matrix Cookbook, eqs. 49, 57, 61, 100, 124), by algebra.
IDENTITIES = [
    ("logdet(A)", "A", "A=inv(A).T", {"A": SPD}),
    ("log(abs(det(A)))", "A", "A=inv(A).T", {"A": A}),
    ("det(A)", "A", "A=det(A) * inv(A).T", {"A": A}),
    ("trace(A @ B @ B.T)", "A", "A=B @ B.T", {"A": A, "B": B}),
    ("trace(inv(A) @ B @ B.T)", "A", "A=-(inv(A) @ B @ B.T @ inv(A)).T", {"A": A, "B": B}),
    ("sum(solve(A, B))", "B", "B=inv(A).T @ ones(3, 2)", {"A": A, "B": B}),
    ('einsum("ij,jk->", A, B)', "B", "B=A.T @ ones(3, 2)", {"A": A, "B": B}),
    ("sum(kron(A, B))", "A", "A=sum(B) * ones(3, 3)", {"A": A, "B": B}),
    ("trace(tril(A) @ triu(A))", "A", "A=tril(triu(A).T) + triu(tril(A).T)", {"A": A}),
]


@pytest.mark.parametrize("program, wrt, expect, sets", IDENTITIES, ids=[i[0] for i in IDENTITIES])
def test_matrix_calculus_identities_pass_with_expect(cli, program, wrt, expect, sets):
    result = _check(cli, program, wrt, expect, **sets)
    assert (result.code, result.err) == (0, "")
    report = json.loads(result.out)["variables"][wrt]
    assert report["ok"] and report["expect"]["ok"], report


WRONG = [  # the classic slips: a missing transpose, a missing factor
    ("logdet(A)", "A", "A=inv(A)", {"A": A}),
    ("det(A)", "A", "A=inv(A).T", {"A": A}),
    ("trace(A @ B @ B.T)", "A", "A=2 * B @ B.T", {"A": A, "B": B}),
]


@pytest.mark.parametrize("program, wrt, expect, sets", WRONG, ids=[w[0] for w in WRONG])
def test_wrong_matrix_derivatives_fail(cli, program, wrt, expect, sets):
    result = _check(cli, program, wrt, expect, **sets)
    assert result.code == 1, result.err
    assert json.loads(result.out)["ok"] is False


def test_logdet_expect_table_at_80_columns(cli):
    result = cli(["check", "logdet(A)", "--wrt", "A", "--set", f"A={SPD}", "--expect",
                  "A=inv(A).T"])  # fmt: skip
    assert result.code == 0 and result.err == ""
    assert "formula, autograd and finite differences agree" in result.out
    assert max(len(line) for line in result.out.splitlines()) <= 80


@pytest.mark.parametrize(
    "program, words",
    [
        ("inv([[1, 2], [2, 4]] * a)", ["inv", "Singular"]),
        ("cholesky([[1, 2], [2, 1]] * a)", ["cholesky", "positive definite"]),
        ("det([[1, 2, 3], [4, 5, 6]] * a)", ["det", "square", "(2, 3)"]),
        ("trace(a * [1, 2])", ["trace", "matrix", "(2,)"]),
        ('einsum("ij,jk", eye(2) * a, ones(3, 2))', ["einsum", "index 'j'", "size"]),
        ("solve(eye(2) * a, ones(3))", ["solve", "(2, 2)", "(3,)"]),
    ],
)
def test_bad_matrices_are_clear_errors(cli, program, words):
    result = cli(["eval", program, "--wrt", "a", "--set", "a=1"])
    assert result.code == 2 and result.out == ""
    first = result.err.splitlines()[0]
    assert first.startswith("error: ") and "Traceback" not in result.err
    for word in words:
        assert word in result.err, result.err


@pytest.mark.parametrize(
    "matrix, cofactors",
    [
        ([[1.0, 2.0], [2.0, 4.0]], [[4.0, -2.0], [-2.0, 1.0]]),  # [[d, -c], [-b, a]]
        ([[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]),
        ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]],  # rank 2: cofactors by hand
         [[-3.0, 6.0, -3.0], [6.0, -12.0, 6.0], [-3.0, 6.0, -3.0]]),
    ],
)  # fmt: skip
def test_det_gradient_at_a_singular_matrix_is_the_cofactor_matrix(matrix, cofactors):
    """The class of a rule that divides by det(A): at singular matrices the gradient is
    still defined (the adjugate's transpose; finite differences agree, below). PyTorch
    2.13 returns zeros at an exactly singular matrix: a documented difference."""
    a = agrad.tensor(matrix, requires_grad=True)
    agrad.det(a).backward()
    np.testing.assert_allclose(a.grad.data, cofactors, atol=1e-12)
    batch = agrad.tensor([matrix, np.eye(len(matrix)).tolist()], requires_grad=True)
    agrad.det(batch).sum().backward()
    np.testing.assert_allclose(batch.grad.data[0], cofactors, atol=1e-12)
    np.testing.assert_allclose(batch.grad.data[1], np.eye(len(matrix)), atol=1e-12)


def test_check_of_det_at_a_singular_matrix_passes(cli):
    result = cli(["check", "det(A)", "--wrt", "A", "--set", "A=[[1, 2], [2, 4]]", "--expect",
                  "A=[[A[1, 1], -A[1, 0]], [-A[0, 1], A[0, 0]]]"])  # fmt: skip
    assert (result.code, result.err) == (0, ""), result.out


# ---- the Python API: PyTorch's names, values and gradients ---------------------------------


def _pair(text):
    torch = require_torch()
    a = np.array(json.loads(text), dtype=np.float64)
    return a, agrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


FACES = [  # (agrad/torch expression on X, a 3x3 matrix; V, a vector)
    "X.trace()", "X.diag()", "X.diagonal(1)", "V.diag()", "V.diag_embed()", "X.det()",
    "X.logdet()", "X.slogdet()[1]", "X.inverse()", "X.cholesky()", "X.tril(-1)", "X.triu()",
    "X.kron(V)", "lib.linalg.det(X)", "lib.linalg.slogdet(X).logabsdet", "lib.linalg.inv(X)",
    "lib.linalg.solve(X, V)", "lib.linalg.solve(X, X)", "lib.linalg.cholesky(X, upper=True)",
    "lib.einsum('ij,j->i', X, V)", "lib.einsum('ii', X)", "lib.einsum('ij,ij->', [X, X])",
    "lib.trace(X @ X)", "lib.diag(V, 1)", "lib.diagonal(X, -1)", "lib.kron(X, X)",
]  # fmt: skip


@pytest.mark.parametrize("expression", FACES)
def test_faces_match_pytorch(expression):
    torch = require_torch()
    _, x, tx = _pair(SPD)
    _, v, tv = _pair("[0.5, -1, 2]")
    ours = eval(expression, {"lib": agrad, "X": x, "V": v})  # noqa: S307 - test expressions
    theirs = eval(expression, {"lib": torch, "X": tx, "V": tv})  # noqa: S307
    np.testing.assert_allclose(ours.data, theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
    (ours**2).sum().backward()
    (theirs**2).sum().backward()
    for ag, tg in ((x.grad, tx.grad), (v.grad, tv.grad)):
        assert (ag is None) == (tg is None)
        if tg is not None:
            np.testing.assert_allclose(ag.data, tg.numpy(), rtol=1e-10, atol=1e-12)


def test_logdet_hessian_matches_pytorch():
    """d²/dA² logdet(A) = -inv(A)ᵀ ⊗ inv(A) (the second derivative through the VJP)."""
    torch = require_torch()
    a, _, _ = _pair(SPD)
    ours = agrad.autograd.functional.hessian(agrad.logdet, agrad.tensor(a))
    theirs = torch.autograd.functional.hessian(torch.logdet, torch.tensor(a))
    np.testing.assert_allclose(ours.data, theirs.numpy(), rtol=1e-10, atol=1e-12)


def test_logdet_of_a_negative_determinant_is_nan_as_in_pytorch():
    torch = require_torch()
    a = np.array([[0.0, 1.0], [1.0, 0.0]])
    assert np.isnan(agrad.logdet(agrad.tensor(a)).item())
    assert np.isnan(torch.logdet(torch.tensor(a)).item())
    sign, logabs = agrad.slogdet(agrad.tensor(a))
    assert sign.item() == -1.0 and logabs.item() == pytest.approx(0.0)


def test_cholesky_of_a_non_symmetric_matrix_factors_its_symmetric_part():
    """agrad's documented difference: PyTorch reads the lower triangle only."""
    a = np.array([[4.0, 1.0], [3.0, 5.0]])
    sym = (a + a.T) / 2
    np.testing.assert_allclose(agrad.cholesky(agrad.tensor(a)).data, np.linalg.cholesky(sym))
