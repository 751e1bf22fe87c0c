"""Shape errors from the Python API carry PyTorch's exception type and text; the CLI and the
language keep agrad's own text, which says what to do instead.

The calls are the mistakes people make with shapes (broadcasting, matmul/mm/dot, reshape
and view, dimensions and indices out of range, cat/stack, expand): each is made on PyTorch
and on agrad, and the class (RuntimeError or IndexError) and the message must agree.
"""

from __future__ import annotations

from typing import Any

import pytest

import agrad
from agrad.cli import run

torch = pytest.importorskip("torch")

BAD_CALLS = {
    "add_broadcast": lambda t: t.ones(2) + t.ones(3),
    "mul_broadcast_2d": lambda t: t.ones(2, 3) * t.ones(4, 3),
    "broadcast_last_dim_first": lambda t: t.ones(2, 3) + t.ones(4, 5),
    "broadcast_ranks": lambda t: t.ones(2, 3, 4) - t.ones(5, 4),
    "where_broadcast": lambda t: t.where(t.ones(2) > 0, t.ones(3), t.ones(2)),
    "matmul_2d": lambda t: t.ones(2, 3) @ t.ones(2, 3),
    "matmul_1d": lambda t: t.ones(3) @ t.ones(4),
    "matmul_mat_vec": lambda t: t.ones(2, 3) @ t.ones(2),
    "matmul_vec_mat": lambda t: t.ones(3) @ t.ones(2, 3),
    "matmul_0d": lambda t: t.matmul(t.ones(()), t.ones(3)),
    "mm": lambda t: t.mm(t.ones(2, 3), t.ones(2, 3)),
    "dot_2d": lambda t: t.ones(2, 2).dot(t.ones(2, 2)),
    "dot_2d_1d": lambda t: t.dot(t.ones(2, 2), t.ones(2)),
    "dot_lengths": lambda t: t.dot(t.ones(3), t.ones(4)),
    "view": lambda t: t.ones(2, 3).view(4),
    "view_infer": lambda t: t.ones(2, 3).view(-1, 4),
    "reshape": lambda t: t.ones(2, 3).reshape(7),
    "sum_dim": lambda t: t.ones(2, 3).sum(dim=3),
    "sum_negative_dim": lambda t: t.ones(2, 3).sum(-3),
    "softmax_dim": lambda t: t.ones(2, 3).softmax(2),
    "transpose_dim": lambda t: t.ones(2, 3).transpose(0, 2),
    "unsqueeze_dim": lambda t: t.ones(2, 3).unsqueeze(3),
    "unsqueeze_0d": lambda t: t.ones(()).unsqueeze(1),
    "unsqueeze_0d_negative": lambda t: t.ones(()).unsqueeze(-2),
    "squeeze_dim": lambda t: t.ones(2, 3).squeeze(2),
    "squeeze_0d_accepts_minus_one": lambda t: t.ones(()).squeeze(-1),
    "sum_0d_accepts_minus_one": lambda t: t.ones(()).sum(-1),
    "flatten_dim": lambda t: t.ones(2, 3).flatten(0, 5),
    "permute_repeats": lambda t: t.ones(2, 3).permute(0, 0),
    "permute_out_of_range": lambda t: t.ones(2, 3).permute(0, 2),
    "permute_negative_ok": lambda t: t.ones(2, 3).permute(-1, 0),
    "index_row": lambda t: t.ones(2, 3)[5],
    "index_column": lambda t: t.ones(2, 3)[:, 7],
    "index_negative": lambda t: t.ones(2, 3)[-3],
    "too_many_indices": lambda t: t.ones(2, 3)[0, 0, 0],
    "index_tensor": lambda t: t.ones(2, 3)[t.tensor([5])],
    "index_tensors_broadcast": lambda t: t.ones(2, 3)[t.tensor([0, 1]), t.tensor([0, 1, 2])],
    "cat": lambda t: t.cat([t.ones(2, 3), t.ones(2, 4)]),
    "cat_dim1": lambda t: t.cat([t.ones(2, 3), t.ones(3, 4)], dim=1),
    "stack": lambda t: t.stack([t.ones(2, 3), t.ones(3, 3)]),
    "expand": lambda t: t.ones(2, 3).expand(4, 3),
    "expand_more_dims": lambda t: t.ones(3).expand(2, 4),
    "index_add_count": lambda t: t.zeros(3, 4).index_add(0, t.tensor([0, 2]), t.ones(1, 4)),
    "index_add_bounds": lambda t: t.zeros(3, 4).index_add(0, t.tensor([0, 5]), t.ones(2, 4)),
    "index_add_source": lambda t: t.zeros(3, 4).index_add(0, t.tensor([0]), t.ones(1, 5)),
}


def _raised(lib: Any, call: Any) -> tuple[str, str]:
    try:
        call(lib)
    except IndexError as exc:
        return ("IndexError", str(exc))
    except RuntimeError as exc:
        return ("RuntimeError", str(exc))
    return ("no error", "")


@pytest.mark.parametrize("name", BAD_CALLS)
def test_python_api_shape_errors_are_pytorchs(name: str) -> None:
    assert _raised(agrad, BAD_CALLS[name]) == _raised(torch, BAD_CALLS[name])


def test_the_cli_keeps_agrads_wording(capsys: pytest.CaptureFixture[str]) -> None:
    code = run(["eval", "x + y", "--set", "x=[1, 2]", "--set", "y=[1, 2, 3]"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ")
    assert "cannot be broadcast together" in err and "The size of tensor a" not in err
    assert len(err.strip().splitlines()[0]) > 0


def test_the_language_from_python_keeps_agrads_wording() -> None:
    from agrad.lang.program import Program

    with pytest.raises(agrad.errors.AgradShapeError) as info:
        Program.compile("ones(2, 3) + ones(4, 3)").run()
    assert "cannot be broadcast together" in str(info.value)
    assert "The size of tensor a" not in str(info.value)


ZERO_D_ALONG_A_DIM = {
    "softmax": lambda t, x, d: t.softmax(x, d),
    "log_softmax": lambda t, x, d: t.log_softmax(x, d),
    "logsumexp": lambda t, x, d: t.logsumexp(x, d),
    "sum": lambda t, x, d: x.sum(d),
    "cumsum": lambda t, x, d: x.cumsum(d),
    "cumprod": lambda t, x, d: x.cumprod(d),
    "norm": lambda t, x, d: t.linalg.vector_norm(x, dim=d),
}


@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("name", ZERO_D_ALONG_A_DIM)
def test_a_0d_tensor_takes_dim_0_and_minus_1_as_pytorch(name: str, dim: int) -> None:
    results = []
    for lib in (torch, agrad):
        x = lib.tensor(-0.75, dtype=lib.float64, requires_grad=True)
        y = ZERO_D_ALONG_A_DIM[name](lib, x, dim)
        y.backward()
        results.append((y.item(), x.grad.item(), tuple(y.shape)))
    assert results[1][:2] == pytest.approx(results[0][:2]) and results[1][2] == results[0][2]
