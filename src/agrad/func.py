"""torch.func's function transforms — grad, grad_and_value, vjp, jvp, jacrev, jacfwd,
hessian, vmap — built on agrad's reverse mode.

A transform differentiates a function of tensors and returns tensors. When an input
already requires grad (an outer transform, or ordinary autograd around the call), the
result stays in the graph, so transforms nest (``jacrev(jacrev(f))`` is the Hessian) and
compose with ``backward``, as in PyTorch. ``jacfwd`` gives the same numbers as ``jacrev``
(agrad has no forward mode; the Jacobian is one batched backward pass either way), and
``vmap`` runs the function once per slice and stacks the results: the same values as
PyTorch's vectorised map, without its speed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .engine import functional as _functional
from .engine.args import as_tensor
from .engine.functional_strict import fill_in_zeros
from .engine.shaping import stack
from .engine.tensor import Tensor

__all__ = ["grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "vjp", "vmap"]


def _wants_graph(values: Sequence[Any]) -> bool:
    return any(isinstance(v, Tensor) and v.requires_grad for v in values)


def _selected(argnums: int | tuple[int, ...], n: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for k in nums:
        if not -n <= k < n:
            raise RuntimeError(f"Got argnums={argnums}, but only {n} positional inputs were given")
    return tuple(k % n for k in nums)


def _split(func: Callable, args: tuple, argnums: Any, has_aux: bool):
    """The function of the selected arguments alone, and where the aux output goes."""
    picked = _selected(argnums, len(args))
    aux: list[Any] = []

    def of_selected(*chosen: Any) -> Any:
        full = list(args)
        for k, value in zip(picked, chosen, strict=True):
            full[k] = value
        out = func(*full)
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("has_aux=True: the function must return a tuple (output, aux)")
            out, extra = out
            aux.append(extra)
        return out

    return picked, of_selected, aux


def _shaped(argnums: Any, results: tuple) -> Any:
    return results[0] if isinstance(argnums, int) else tuple(results)


def grad_and_value(func: Callable, argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:  # fmt: skip
    """``(gradient, value)`` of a function that returns one number."""

    def transformed(*args: Any) -> Any:
        picked, of_selected, aux = _split(func, args, argnums, has_aux)
        chosen = tuple(as_tensor(args[k]) for k in picked)
        keep = _wants_graph(chosen)
        output: list[Tensor] = []

        def scalar(*xs: Any) -> Tensor:
            out = of_selected(*xs)
            if not isinstance(out, Tensor) or out.numel() != 1 or out.ndim != 0:
                dims = out.ndim if isinstance(out, Tensor) else "no"
                raise RuntimeError(
                    f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                    f"got tensor with {dims} dims. Maybe you wanted to use the vjp or jacrev "
                    "APIs instead?"
                )
            output.append(out)
            return out

        value, grads = _functional.vjp(scalar, chosen, None, create_graph=keep)
        grads = grads if isinstance(grads, tuple) else (grads,)
        result = _shaped(argnums, grads)
        shown = output[0] if keep else value
        return (result, (shown, aux[0])) if has_aux else (result, shown)

    return transformed


def grad(func: Callable, argnums: int | tuple[int, ...] = 0,
         has_aux: bool = False) -> Callable[..., Any]:  # fmt: skip
    """The gradient of a function that returns one number, with respect to ``argnums``."""
    both = grad_and_value(func, argnums, has_aux)

    def transformed(*args: Any) -> Any:
        gradient, value = both(*args)
        return (gradient, value[1]) if has_aux else gradient

    return transformed


def jacrev(func: Callable, argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None) -> Callable[..., Any]:  # fmt: skip
    """The Jacobian (output shape + input shape) with respect to ``argnums``."""

    def transformed(*args: Any) -> Any:
        picked, of_selected, aux = _split(func, args, argnums, has_aux)
        chosen = tuple(as_tensor(args[k]) for k in picked)
        jac = _functional.jacobian(of_selected, chosen, create_graph=_wants_graph(chosen))
        if isinstance(jac, tuple) and jac and isinstance(jac[0], tuple):
            result: Any = tuple(_shaped(argnums, row) for row in jac)  # several outputs
        else:
            result = _shaped(argnums, jac if isinstance(jac, tuple) else (jac,))
        return (result, aux[0]) if has_aux else result

    return transformed


def jacfwd(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False,
           *, randomness: str = "error") -> Callable[..., Any]:  # fmt: skip
    """The same Jacobian as `jacrev` (agrad computes it by reverse mode)."""
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func: Callable, argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """The Hessian of a function that returns one number: the Jacobian of its gradient."""
    return jacrev(jacrev(func, argnums), argnums)


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` gives one gradient per primal."""
    inputs = tuple(as_tensor(p) for p in primals)
    keep = _wants_graph(inputs)
    leaves = _functional._prepare(inputs, True)[0]  # in the graph, so vjp_fn can run later
    aux: list[Any] = []
    out = func(*leaves)
    if has_aux:
        out, extra = out
        aux.append(extra)

    def vjp_fn(cotangents: Any, *more: Any) -> tuple[Any, ...]:
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        # vjp_fn(ct) for one output, vjp_fn((ct1, ct2)) or vjp_fn(ct1, ct2) for several
        seeds = (
            list(cotangents) if isinstance(cotangents, tuple) and not more else [cotangents, *more]
        )
        grads = _functional.tolerant_grad(outs, leaves, seeds, create_graph=keep,
                                          retain_graph=True)  # fmt: skip
        return fill_in_zeros(grads, leaves, False, keep, "back")

    shown = out if keep else _detached(out)
    return (shown, vjp_fn, aux[0]) if has_aux else (shown, vjp_fn)


def _detached(out: Any) -> Any:
    if isinstance(out, (tuple, list)):
        return type(out)(_detached(o) for o in out)
    return out.detach() if isinstance(out, Tensor) else out


def jvp(func: Callable, primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple[Any, ...]:  # fmt: skip
    """``(func(*primals), J·tangents)``: a Jacobian-vector product."""
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to be tuples. E.g. "
            "jvp(f, (x,), (t,))"
        )
    aux: list[Any] = []

    def plain(*xs: Any) -> Any:
        out = func(*xs)
        if has_aux:
            out, extra = out
            aux.append(extra)
        return out

    inputs = tuple(as_tensor(p) for p in primals)
    out, product = _functional.jvp(plain, inputs, tangents, create_graph=_wants_graph(inputs))
    return (out, product, aux[0]) if has_aux else (out, product)


def vmap(func: Callable, in_dims: Any = 0, out_dims: int = 0, randomness: str = "error",
         *, chunk_size: int | None = None) -> Callable[..., Any]:  # fmt: skip
    """``func`` over slices along ``in_dims`` (an int, or one int/None per argument), the
    results stacked along ``out_dims``: a loop, with the values of PyTorch's vmap."""

    def transformed(*args: Any) -> Any:
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(
                f"vmap(f, in_dims={in_dims})(...): in_dims has {len(dims)} entries for "
                f"{len(args)} arguments"
            )
        sizes = {a.shape[d] for a, d in zip(args, dims, strict=True) if d is not None}
        if len(sizes) != 1:
            raise ValueError(
                "vmap: Expected all tensors to have the same size in the mapped dimension, "
                f"got sizes {sorted(sizes)} for the mapped dimension"
            )
        (size,) = sizes
        rows = []
        for i in range(size):
            sliced = [a if d is None else a.select(d, i) for a, d in zip(args, dims, strict=True)]
            rows.append(func(*sliced))
        return _stacked(rows, out_dims)

    return transformed


def _stacked(rows: list, dim: int) -> Any:
    first = rows[0]
    if isinstance(first, (tuple, list)):
        return type(first)(_stacked([r[k] for r in rows], dim) for k in range(len(first)))
    return stack([as_tensor(r) for r in rows], dim)
