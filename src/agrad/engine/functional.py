"""torch.autograd.functional: jacobian, hessian, vjp, jvp — built on one backward pass.

A Jacobian takes ONE backward pass: the identity is pushed through the VJPs as a
batch of one-hot cotangents (a leading batch dimension every rule carries), not
one Python-level backward per output element.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .autograd import grad, run_backward
from .functional_strict import check_jacobian_block, check_requires_grad, fill_in_zeros
from .grad_mode import STATE, set_grad_enabled
from .ops import TABLE, apply
from .tensor import Tensor, wrap


def _prepare(inputs: Any, create_graph: bool = False) -> tuple[tuple[Tensor, ...], bool]:
    """The inputs as tensors to differentiate with respect to: fresh leaves, or with
    ``create_graph`` (and an input that requires grad) a copy still connected to the
    caller's tensor, so the result can be differentiated further — as PyTorch does."""
    if type(inputs) is Tensor and not create_graph:  # (the common call: one tensor)
        array = inputs._array
        return (wrap(array, array.dtype.kind in "fc"),), False
    is_tuple = isinstance(inputs, (tuple, list))
    items = tuple(inputs) if is_tuple else (inputs,)
    prepared = []
    for x in items:
        if not isinstance(x, Tensor):
            raise TypeError(f"expected Tensors as inputs, got {type(x).__name__}")
        if create_graph and x.requires_grad:
            with set_grad_enabled(True):
                prepared.append(apply(TABLE["clone"], x))
        else:
            prepared.append(wrap(x._array, x._array.dtype.kind in "fc"))
    return tuple(prepared), is_tuple


def tolerant_grad(outputs: Any, inputs: tuple[Tensor, ...], grad_outputs: Any = None,
                  **kwargs: Any) -> tuple[Any, ...]:  # fmt: skip
    """autograd.grad over the outputs that require grad only (None for every input when
    none does): what torch.autograd.functional uses, so a constant output gives zeros."""
    outs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    seeds = grad_outputs if isinstance(grad_outputs, (tuple, list)) else [grad_outputs] * len(outs)
    kept = [(o, g) for o, g in zip(outs, seeds, strict=True) if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    return grad([o for o, _ in kept], inputs, grad_outputs=[g for _, g in kept],
                allow_unused=True, **kwargs)  # fmt: skip


def _outputs(func: Callable, inputs: tuple[Tensor, ...]) -> tuple[tuple[Tensor, ...], bool]:
    enabled = STATE.enabled  # (as `with set_grad_enabled(True)`, without its objects: this
    STATE.enabled = True  # runs on every Jacobian; switching on has no guards to run)
    try:
        out = func(*inputs)
    finally:
        STATE.enabled = enabled
    if type(out) is Tensor:
        return (out,), False
    is_tuple = isinstance(out, (tuple, list))
    return (tuple(out) if is_tuple else (out,)), is_tuple


def batched_jacobian(
    out: Tensor, inputs: tuple[Tensor, ...], create_graph: bool = False, retain_graph: bool = True
) -> list[Any]:
    """d out / d input for each input, shaped out.shape + input.shape (None if unused)."""
    if not out._rg:
        return [None for _ in inputs]
    n = out._array.size
    seed = np.zeros((n, n), dtype=out._array.dtype)  # the identity (np.eye's Python costs
    seed.reshape(-1)[:: n + 1] = 1  # more than this at small n)
    seed = seed.reshape((n, *out._array.shape))
    seed_arg = wrap(seed) if create_graph else seed
    grads = run_backward(
        [out],
        [seed_arg],
        retain_graph=retain_graph,
        create_graph=create_graph,
        inputs=list(inputs),
        batch=1,
        fresh_seeds=True,  # the identity block is ours: no defensive copy
    )
    result: list[Any] = []
    for x, g in zip(inputs, grads, strict=True):  # type: ignore[arg-type]
        if g is None:
            result.append(None)
            continue
        shape = out._array.shape + x._array.shape  # (plain tuples: cheaper than Size objects)
        if type(g) is np.ndarray:
            result.append(wrap(g if g.shape == shape else g.reshape(shape)))
        else:  # a tensor (create_graph), or a NumPy scalar
            shaped = g.reshape(shape)
            result.append(shaped if isinstance(shaped, Tensor) else wrap(np.asarray(shaped)))
    return result


def _zeros_for(out: Tensor, x: Tensor) -> Tensor:
    return wrap(np.zeros(out.shape + x.shape, dtype=np.result_type(out._array, x._array)))


def jacobian(
    func: Callable,
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of ``func`` at ``inputs``: shape output.shape + input.shape."""
    ins, in_tuple = _prepare(inputs, create_graph)
    outs, out_tuple = _outputs(func, ins)
    if strict:  # (the checks only raise in strict mode: no calls otherwise)
        check_requires_grad(outs, "outputs", strict)
    rows = []
    for i, out in enumerate(outs):
        blocks = batched_jacobian(out, ins, create_graph)
        if strict:
            for j, block in enumerate(blocks):
                check_jacobian_block(block, i, j, strict, create_graph)
        row = []  # (a loop: a generator costs a frame, on every call)
        for x, block in zip(ins, blocks, strict=True):
            row.append(_zeros_for(out, x) if block is None else block)
        rows.append(tuple(row))
    if not out_tuple:
        return rows[0] if in_tuple else rows[0][0]
    return tuple(r if in_tuple else r[0] for r in rows)


def hessian(
    func: Callable,
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of a scalar ``func``: shape input.shape + input.shape."""
    ins, in_tuple = _prepare(inputs, create_graph)
    outs, _ = _outputs(func, ins)
    check_requires_grad(outs, "outputs", strict)
    (out,) = outs
    if out._array.size != 1:
        raise RuntimeError("The function given to hessian should return a single element Tensor")
    out = out.reshape(())
    grads = tolerant_grad(out, ins, create_graph=True)
    check_requires_grad(fill_in_zeros(grads, ins, False, False, "back"), "jacobian", strict)
    rows = []
    for i, (x, g) in enumerate(zip(ins, grads, strict=True)):
        if g is None or not g._rg:
            rows.append(tuple(wrap(np.zeros(x.shape + y.shape, dtype=x.dtype)) for y in ins))
            continue
        blocks = batched_jacobian(g, ins, create_graph)
        for j, block in enumerate(blocks):
            check_jacobian_block(block, i, j, strict, create_graph)
        rows.append(
            tuple(_zeros_for(g, y) if b is None else b for y, b in zip(ins, blocks, strict=True))
        )
    return tuple(rows) if in_tuple else rows[0][0]


def vjp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple[Any, Any]:
    """(func(inputs), v^T J): a vector-Jacobian product."""
    ins, in_tuple = _prepare(inputs, create_graph)
    outs, out_tuple = _outputs(func, ins)
    check_requires_grad(outs, "outputs", strict)
    vs = list(v) if isinstance(v, (tuple, list)) else [v] * len(outs)
    grads = tolerant_grad(outs, ins, vs, create_graph=create_graph, retain_graph=True)
    grads = fill_in_zeros(grads, ins, strict, create_graph, "back")
    shown = _postprocess(outs, create_graph)
    return (shown if out_tuple else shown[0]), (grads if in_tuple else grads[0])


def _postprocess(outs: tuple[Tensor, ...], create_graph: bool) -> tuple[Tensor, ...]:
    """The function's outputs as returned: still in the graph when ``create_graph`` (so
    they can be differentiated further, as PyTorch's), detached otherwise."""
    return outs if create_graph else tuple(o.detach() for o in outs)


def jvp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple[Any, Any]:
    """(func(inputs), J v): a Jacobian-vector product, by differentiating a VJP in its
    cotangent (the VJP is linear in it, so its derivative is exactly J v)."""
    ins, in_tuple = _prepare(inputs, create_graph)
    outs, out_tuple = _outputs(func, ins)
    vs = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    if v is None:
        vs = tuple(wrap(np.ones_like(x._array)) for x in ins)
    check_requires_grad(outs, "outputs", strict)
    dummies = [wrap(np.zeros_like(o._array), True) for o in outs]
    g = tolerant_grad(outs, ins, dummies, create_graph=True)
    check_requires_grad(g, "grad_inputs", strict)
    pairs = [(gi, vi) for gi, vi in zip(g, vs, strict=True) if gi is not None and gi._rg]
    if pairs:
        results = grad(
            [p[0] for p in pairs],
            dummies,
            grad_outputs=[p[1] for p in pairs],
            create_graph=create_graph,
            allow_unused=True,
        )
    else:
        results = (None,) * len(outs)
    jv = fill_in_zeros(results, outs, strict, create_graph, "back_trick")
    shown = _postprocess(outs, create_graph)
    return (shown if out_tuple else shown[0]), (jv if out_tuple else jv[0])
