"""einsum: one entry for every subscript equation.

When the op is applied, the equation is made explicit ("ij,jk" -> "ij,jk->ik", an ellipsis
spelt out in letters), so the VJP and the batching rule see only letters. The gradient of
an operand is another einsum — of the cotangent and the other operands — whose result has
that operand's subscripts: a letter only that operand sums over comes from a vector of
ones, a letter repeated in it (a diagonal, "ii->") from an identity matrix.
"""

from __future__ import annotations

import string

import numpy as np

from ...errors import AgradShapeError, AgradValueError
from .core import Op, register, special

LETTERS = string.ascii_letters


def _einsum_forward(*operands, equation: str):
    # NumPy's contraction-order search (and BLAS) pays off beyond small operands only.
    large = len(operands) > 1 and max(np.size(x) for x in operands) > 256
    return np.einsum(equation, *operands, optimize=large)


def _split(equation: str, count: int) -> tuple[list[str], str | None]:
    text = equation.replace(" ", "")
    inputs, arrow, output = text.partition("->")
    terms = inputs.split(",")
    if len(terms) != count:
        raise AgradValueError(
            f"einsum: the equation {equation!r} has {len(terms)} operand(s) before '->' but "
            f"{count} tensor(s) were given"
        )
    for term in [*terms, output]:
        bad = set(term.replace("...", "")) - set(LETTERS)
        if bad or term.count("...") > 1:
            raise AgradValueError(
                f"einsum: invalid subscripts {term!r} in {equation!r}: use letters, and at "
                "most one '...' per operand"
            )
    return terms, output if arrow else None


def normalize(equation: str, shapes: list[tuple]) -> str:
    """The equation with explicit output and letters for every ellipsis; sizes checked."""
    terms, output = _split(equation, len(shapes))
    used = set("".join(terms) + (output or ""))
    fresh = [c for c in LETTERS if c not in used]
    spans = []
    for term, shape in zip(terms, shapes, strict=True):
        named = len(term.replace("...", ""))
        if ("..." in term and len(shape) < named) or ("..." not in term and len(shape) != named):
            raise AgradShapeError(
                f"einsum: operand subscripts {term!r} do not fit a tensor of shape {shape}"
            )
        spans.append(len(shape) - named if "..." in term else 0)
    width = max(spans, default=0)
    ellipsis = "".join(fresh[:width])
    explicit = [t.replace("...", ellipsis[width - k :]) for t, k in zip(terms, spans, strict=True)]
    if output is None:
        counts = "".join(t.replace("...", "") for t in terms)
        output = ellipsis + "".join(sorted(c for c in set(counts) if counts.count(c) == 1))
    elif "..." in output:
        output = output.replace("...", ellipsis)
    sizes: dict[str, int] = {}
    for term, shape in zip(explicit, shapes, strict=True):
        for letter, n in zip(term, shape, strict=True):
            if sizes.setdefault(letter, n) != n:
                raise AgradShapeError(
                    f"einsum: index {letter!r} has size {sizes[letter]} in one place and {n} in "
                    f"another ({equation!r} with shapes {', '.join(map(str, shapes))})"
                )
    for letter in output:
        if letter not in sizes or output.count(letter) > 1:
            raise AgradValueError(
                f"einsum: output index {letter!r} of {equation!r} must appear in an operand, "
                "and only once in the output"
            )
    return ",".join(explicit) + "->" + output


def _einsum_shape(*shapes, equation: str):
    terms, output = normalize(equation, [tuple(s) for s in shapes]).split("->")
    sizes = {
        c: n
        for t, s in zip(terms.split(","), shapes, strict=True)
        for c, n in zip(t, s, strict=True)
    }
    return tuple(sizes[c] for c in output)


def _einsum_prepare(*operands, equation: str):
    return {"equation": normalize(equation, [np.shape(x) for x in operands])}


def _einsum_vjp(ns, g, out, *xs, equation):
    terms, output = equation.split("->")
    terms = terms.split(",")
    sizes = {c: n for t, x in zip(terms, xs, strict=True) for c, n in zip(t, x.shape, strict=True)}
    fresh = iter(c for c in LETTERS if c not in sizes)
    grads = []
    for i, term in enumerate(terms):
        others = [t for j, t in enumerate(terms) if j != i]
        available = set(output + "".join(others))
        target, extras, extra_terms = "", [], []
        for letter in term:
            if letter in target:  # repeated (a diagonal): a fresh letter tied by an identity
                twin = next(fresh)
                extras.append(np.eye(sizes[letter], dtype=g.dtype))
                extra_terms.append(letter + twin)
                target += twin
                continue
            if letter not in available:  # summed in this operand only: broadcast by ones
                extras.append(np.ones(sizes[letter], dtype=g.dtype))
                extra_terms.append(letter)
                available.add(letter)
            target += letter
        subscripts = ",".join(["..." + output, *others, *extra_terms]) + "->..." + target
        operands = [g, *(x for j, x in enumerate(xs) if j != i), *extras]
        grads.append(ns.einsum(*operands, equation=subscripts))
    return tuple(grads)


def _einsum_batch(op, values, params, size):
    terms, output = params["equation"].split("->")
    letter = next(c for c in LETTERS if c not in params["equation"])
    batched = [letter + t if b else t for t, (_, b) in zip(terms.split(","), values, strict=True)]
    equation = ",".join(batched) + "->" + letter + output
    return _einsum_forward(*(v for v, _ in values), equation=equation)


def _rng(*shape, seed=0):
    # Spread over (-2, 2) like uniform draws, without numpy.random at import (decomp._uniform).
    from .decomp import _uniform

    return 2.0 * _uniform(shape, seed)


def _case(equation, *shapes):
    return special(*(_rng(*s, seed=k) for k, s in enumerate(shapes)), equation=equation)


register(
    Op("einsum", "EinsumBackward0", _einsum_forward, _einsum_vjp, _einsum_shape, arity=-1,
       explain="d einsum/d(operand) = einsum of g and the other operands, to its subscripts",
       prepare=_einsum_prepare, batch=_einsum_batch, grows=True, method=False,
       doc="Einstein summation: einsum(\"ij,jk->ik\", A, B)",
       cases=(_case("ij,jk->ik", (2, 3), (3, 4)), _case("ii->", (3, 3)), _case("ii->i", (3, 3)),
              _case("ij->", (2, 3)), _case("ij,j->i", (2, 3), (3,)), _case("i,i", (3,), (3,)),
              _case("bij,bjk->bik", (2, 2, 3), (2, 3, 2)), _case("...ij,...j", (2, 2, 3), (3,)),
              _case("ij,ij,j->i", (2, 3), (2, 3), (3,)), _case("ij,kl->ikjl", (2, 2), (2, 3)))),
)  # fmt: skip
