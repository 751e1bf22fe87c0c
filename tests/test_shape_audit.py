"""The shape rules, audited from the table against PyTorch: for every entry and each of its
configurations, each operand in turn gets a wrong shape (a dimension dropped, the last one
grown, an empty first dimension, 0-d, an extra leading or trailing dimension) and each
axis-like parameter a wrong value (out of range either way, a tuple where one axis is
meant, class indices out of range or of the wrong shape or dtype). Where PyTorch refuses,
agrad must refuse too, with its own clean error (an `AgradError`; an IndexError where
PyTorch's is one for a dimension or index out of range), never a NumPy broadcast that
computes something; where both compute, the shapes agree. Through the CLI, such a program
exits 2 with one ``error:`` line."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import require_torch
from opinfo import INFO, torch_fn

import agrad
from agrad.engine.ops import TABLE, apply
from agrad.errors import AgradError

# Parameters the public face computes from the operand itself (a normalised index, the
# target shape of a squeeze, the vector/matrix reading of solve's B): another operand with
# the same parameters is not something a user can give, so only the parameters are varied.
FROM_OPERAND = {"index", "unbind", "setitem", "as_strided", "copy_slices", "unsqueeze",
                "squeeze", "solve", "reshape", "expand", "permute"}  # fmt: skip
# Where agrad refuses, cleanly, what PyTorch computes (all reported in the README).
REFUSED = {
    ("conv1d", "drop dim"): "the entry is batched; agrad.conv1d/conv2d add the batch axis",
    ("conv2d", "drop dim"): "the entry is batched; agrad.conv1d/conv2d add the batch axis",
    ("batch_norm", "empty"): "batch statistics of no samples (PyTorch: an empty result)",
    ("einsum", "extra dim 1"): "einsum does not broadcast a size-1 index (PyTorch does)",
    ("prod", "axis dup"): "PyTorch has no prod over several axes (the oracle chains them)",
}
INDEX_ERRORS = ("Dimension out of range", "out of bounds", "non-zero size")
# Where PyTorch computes the forward but its backward fails and agrad differentiates (its
# gradients there are checked by finite differences in tests/test_ops_generated.py).
BEYOND_PYTORCH = {
    "clamp_tensor": "PyTorch's clamp backward builds its masks in place, and fails on "
    "bounds broadcast beyond x (which of them depends on which inputs require grad)",
}


def shape_variants(shape):
    out = {"extra dim": (2, *shape), "extra dim 1": (*shape, 1)}
    if shape:
        grown = list(shape)
        grown[-1] += 1
        out.update({"drop dim": shape[1:], "last+1": tuple(grown), "empty": (0, *shape[1:]),
                    "0-d": ()})  # fmt: skip
    return out


def param_variants(params, shapes):
    nd = max(len(shapes[0]), 1) if shapes else 1
    out = {}
    if params.get("axis") is not None:
        out["axis=ndim"] = {**params, "axis": nd}
        out["axis=-ndim-1"] = {**params, "axis": -nd - 1}
        if isinstance(params["axis"], int) and shapes[0]:
            out["axis dup"] = {**params, "axis": (params["axis"], params["axis"])}
    for key in ("dim0", "dim1"):
        if key in params:
            out[f"{key}=ndim"] = {**params, key: nd}
    if "target" in params:
        t = np.asarray(params["target"])
        out["target out of range"] = {**params, "target": t + 10}
        out["target shape"] = {**params, "target": np.concatenate([t.ravel(), t.ravel()])}
        out["target float"] = {**params, "target": t.astype(np.float64)}
    return out


def trials(op):
    rng = np.random.default_rng(0)
    for case in op.cases:
        base = [rng.uniform(*op.domain_of(i), size=s) for i, s in enumerate(case.shapes)]
        for i in op.nondiff:
            base[i] = (base[i] > 0).astype(np.float64)
        if op.name not in FROM_OPERAND:
            for i, shape in enumerate(case.shapes):
                for name, bad in shape_variants(shape).items():
                    arrays = list(base)
                    arrays[i] = rng.uniform(*op.domain_of(i), size=bad)
                    if i in op.nondiff:
                        arrays[i] = (arrays[i] > 0).astype(np.float64)
                    yield (
                        name,
                        f"{case.shapes} {case.params}: input {i} -> {bad}",
                        arrays,
                        case.params,
                    )
        for name, params in param_variants(case.params, case.shapes).items():
            yield name, f"{case.shapes} {case.params}: {name}", base, params


def _run(lib, op, arrays, params):
    wanted = op.differentiable_inputs(len(arrays)) if op.vjp is not None else []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if lib is agrad:
                xs = [agrad.tensor(a, requires_grad=i in wanted) for i, a in enumerate(arrays)]
                out = apply(op, *xs, **params)
            else:
                xs = [lib.tensor(a, dtype=lib.float64, requires_grad=i in wanted)
                      for i, a in enumerate(arrays)]  # fmt: skip
                out = torch_fn(op.name)(lib, *xs, **params)
        except Exception as exc:  # noqa: BLE001 - a refusal is the outcome compared
            return exc
        try:
            if out.requires_grad:  # the backward pass must refuse cleanly too, or run
                lib.autograd.grad(out.sum(), [xs[i] for i in wanted], allow_unused=True)
        except Exception as exc:  # noqa: BLE001 - as above
            exc.in_backward = True  # type: ignore[attr-defined]
            return exc
    return tuple(out.shape)


def problems(op):
    torch = require_torch()
    found = []
    for name, label, arrays, params in trials(op):
        ours, theirs = _run(agrad, op, arrays, params), _run(torch, op, arrays, params)
        if isinstance(ours, Exception) and not isinstance(ours, AgradError):
            found.append((label, f"internal error {type(ours).__name__}: {ours}"))
        elif isinstance(theirs, Exception) and not isinstance(ours, Exception):
            if not (op.name in BEYOND_PYTORCH and getattr(theirs, "in_backward", False)):
                found.append((label, f"computed {ours} where PyTorch refuses: {theirs}"))
        elif isinstance(theirs, Exception):
            indexing = isinstance(theirs, IndexError) and any(
                w in str(theirs) for w in INDEX_ERRORS
            )
            if indexing and not isinstance(ours, IndexError):
                found.append((label, f"{type(ours).__name__} where PyTorch's is IndexError"))
        elif isinstance(ours, Exception):
            if (op.name, name) not in REFUSED:
                found.append((label, f"refused ({ours}) where PyTorch gives shape {theirs}"))
        elif ours != theirs:
            found.append((label, f"shape {ours} where PyTorch's is {theirs}"))
    return found


AUDITED = [op for op in TABLE.values() if not INFO[op.name].vjp_only]


@pytest.mark.parametrize("op", AUDITED, ids=[op.name for op in AUDITED])
def test_bad_shapes_are_refused_as_pytorch_refuses_them(op):
    assert problems(op) == []


def test_the_audit_reaches_the_families_and_their_bad_parameters():
    labels = {name for op in AUDITED for name, *_ in trials(op)}
    assert {"drop dim", "0-d", "empty", "axis=ndim", "axis dup", "target out of range"} <= labels
    assert len(AUDITED) >= 90


# ---- through the CLI: exit 2, one error line -----------------------------------------------

CLI_CASES = [
    ("matmul, misaligned", "sum(A @ x)", {"A": "ones(2, 3)", "x": "[1, 2]"}),
    ("broadcasting failure", "sum(x + y)", {"x": "[1, 2, 3]", "y": "[1, 2]"}),
    ("where, three shapes", "sum(where(x > 0, x, y))", {"x": "[1, 2, 3]", "y": "[1, 2]"}),
    ("axis out of range", "sum(x, axis=2)", {"x": "[1, 2]"}),
    ("softmax axis of a number", "softmax(x, axis=1)", {"x": "2"}),
    ("cumsum axis", "sum(cumsum(x, axis=-3))", {"x": "ones(2, 2)"}),
    ("class index out of range", "cross_entropy(m, t)", {"m": "ones(2, 3)", "t": "[0, 3]"}),
    ("negative class index", "cross_entropy(m, t)", {"m": "ones(2, 3)", "t": "[0, -1]"}),
    ("targets of the wrong shape", "cross_entropy(m, t)", {"m": "ones(2, 3)", "t": "[0, 1, 2]"}),
    ("fractional class index", "cross_entropy(m, t)", {"m": "ones(2, 3)", "t": "[0, 1.5]"}),
    ("det of a vector", "det(x)", {"x": "[1, 2]"}),
    ("solve, mismatched", "sum(solve(A, b))", {"A": "eye(3)", "b": "[1, 2]"}),
    ("trace of a batch", "sum(trace(A))", {"A": "ones(2, 3, 3)"}),
    ("reshape, wrong count", "sum(reshape(x, [4]))", {"x": "[1, 2, 3]"}),
    ("concat, mismatched", "sum(concat([A, x]))", {"A": "ones(2, 2)", "x": "[1, 2, 3]"}),
    ("stack, mismatched", "sum(stack([x, y]))", {"x": "[1, 2, 3]", "y": "[1, 2]"}),
    ("index out of range", "x[5]", {"x": "[1, 2]"}),
    ("too many indices", "x[0, 0]", {"x": "[1, 2]"}),
    ("max over an empty axis", "max(x, axis=0)", {"x": "zeros(0)"}),
    ("conv2d channels", "sum(conv2d(I, w))", {"I": "ones(1, 2, 4, 4)", "w": "ones(1, 3, 2, 2)"}),
    ("max_pool2d of a vector", "sum(max_pool2d(x, 2))", {"x": "[1, 2, 3]"}),
]


@pytest.mark.parametrize("program, sets", [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES])
@pytest.mark.parametrize("command", ["eval", "check"])
def test_a_bad_shape_in_a_program_exits_2_with_one_error_line(cli, command, program, sets):
    argv = [command, program, *(f for k, v in sets.items() for f in ("--set", f"{k}={v}"))]
    names = [n for n in sets if n not in ("t",)]
    result = cli([*argv, "--wrt", ",".join(names)])
    assert result.code == 2, (result.out, result.err)
    lines = result.err.splitlines()
    assert sum(line.startswith("error:") for line in lines) == 1, result.err
    assert lines[0].startswith("error:") and "Traceback" not in result.err
    assert result.out == ""
