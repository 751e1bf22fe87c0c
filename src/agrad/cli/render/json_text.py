"""JSON text of a large float array, written with NumPy instead of one `repr` per number.

``json.dumps(to_json(array))`` spends about a microsecond on each float (Python's
shortest round-trip `repr`, then the list walk): 34 ms for a 200x200 Jacobian. `array_text`
writes the same characters, byte for byte, from whole-array arithmetic: each element as
`to_json` makes it (a whole number below 2**53 as an int, nan and ±inf as strings, any
other float as ``repr(float(v))``), nested lists with json.dumps' ", " separators.

The shortest digits are found as Steele & White / Gay's dtoa (Python's repr) defines them:
the fewest significant digits whose decimal rounds back to the float, and of those the
one nearest to it. With ``X = |v| * 10**s`` scaled into [1e16, 1e17), X is computed
exactly enough (an error-free product with a double-double 10**s, error below 1e-14 in
units of X) to decide, for j = 0, 1, 2, ..., whether the multiple of 10**j nearest to X
lies inside v's rounding interval (half an ulp either side); the largest such j gives the
digits. Any decision closer to its threshold than the error bound (a tie, an endpoint) is
left to `repr`, as are the values outside the range where the arithmetic is safe
(subnormal and near-overflow magnitudes, powers of two, whose interval is lopsided): the
text is then the same by construction. tests/test_cli_json_text.py compares it with
json.dumps on millions of values.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

__all__ = ["RawArray", "array_text", "dumps"]

_CHUNK = 65536  # elements formatted at a time (bounds the temporaries: 65536 x 48 bytes)
MIN_SIZE = 64  # below this, json.dumps of to_json is as fast
_FIELD = 44  # the slots of one number (see _digit_texts)
_TINY, _HUGE = 1e-270, 1e270  # where 10**s and the splitting products stay normal
_POW10 = np.array([10**j for j in range(19)], dtype=np.int64)
_TOL = 1e-9  # in units of X: far above the arithmetic's error (about 1e-14)
_SPLIT = 134217729.0  # 2**27 + 1 (Dekker's splitting constant)
_DD_CACHE: dict[int, tuple[float, float]] = {}


class RawArray:
    """An array that `dumps` writes with `array_text` (the renderer's payloads hold it
    where `to_json` would have put the nested lists)."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray) -> None:
        self.array = array


def json_array(value: Any) -> Any:
    """What `to_json` gives for ``value``, or a `RawArray` for `dumps` to write when it is a
    large real array (the same text either way)."""
    from ...check.serial import to_json

    if (
        isinstance(value, np.ndarray)
        and value.dtype.kind in "fiub"
        and value.ndim >= 1
        and value.size >= MIN_SIZE
    ):
        return RawArray(value.astype(np.float64, copy=False))
    return to_json(value)


def dumps(payload: Any, nonfinite: str = "string") -> str:
    """``json.dumps(payload)`` where each `RawArray` stands for its `to_json` lists."""
    if isinstance(payload, RawArray):
        return array_text(payload.array, nonfinite)
    if isinstance(payload, dict):
        parts = [f"{_key(k)}: {dumps(v, nonfinite)}" for k, v in payload.items()]
        return "{" + ", ".join(parts) + "}"
    if isinstance(payload, list | tuple) and any(
        isinstance(v, RawArray | dict | list | tuple) for v in payload
    ):
        return "[" + ", ".join(dumps(v, nonfinite) for v in payload) + "]"
    return json.dumps(payload)


def _key(key: Any) -> str:
    text = json.dumps({key: 0})  # json's own conversion of a non-string key
    return text[1 : -len(": 0}")]


def array_text(array: np.ndarray, nonfinite: str = "string") -> str:
    """``json.dumps(to_json(array))`` for a float64 array of one or more dimensions;
    ``nonfinite="null"`` writes nan and ±inf as null (what --nonfinite null asks)."""
    shape = array.shape
    if array.size == 0 or array.ndim == 0:
        from ...check.serial import to_json

        value = to_json(array)
        return json.dumps(_nulled(value) if nonfinite == "null" else value)
    flat = np.ascontiguousarray(array, dtype=np.float64).reshape(-1)
    # In chunks, so that the temporaries stay a few MB however large the array.
    rows = np.empty((_CHUNK, _FIELD + 2 * len(shape)), dtype=np.uint8)
    parts = []
    for start in range(0, flat.size, _CHUNK):
        chunk = flat[start : start + _CHUNK]
        these = rows[: chunk.size]
        these[:] = 0
        with np.errstate(all="ignore"):  # nan and inf are sorted out by mask, not warnings
            _numbers(chunk, these, nonfinite)
        _separators(shape, start, flat.size, these[:, _FIELD:])
        text = these.reshape(-1)
        parts.append(text[text != 0].tobytes())
    return "[" * len(shape) + b"".join(parts).decode("ascii") + "]" * len(shape)


def _nulled(value: Any) -> Any:
    if isinstance(value, list):
        return [_nulled(v) for v in value]
    return None if isinstance(value, str) else value


def _numbers(flat: np.ndarray, rows: np.ndarray, nonfinite: str) -> None:
    """Each element's text in ``rows[i, :_FIELD]``; 0 bytes are dropped afterwards."""
    magnitude = np.abs(flat)
    finite = np.isfinite(flat)
    whole = finite & (magnitude < 2.0**53) & (flat == np.floor(flat))
    rows[:, 0] = np.where(np.signbit(flat) & ~whole, ord("-"), 0)  # ints: sign below
    _whole_numbers(flat[whole], rows, np.flatnonzero(whole))
    mantissa, _ = np.frexp(magnitude)
    fast = finite & ~whole & (magnitude >= _TINY) & (magnitude < _HUGE) & (mantissa != 0.5)
    where = np.flatnonzero(fast)
    left = _shortest_numbers(magnitude[where], rows, where)
    rest = np.flatnonzero(finite & ~whole & ~fast)
    for i in [*rest.tolist(), *where[left].tolist()]:
        _put(rows, i, repr(float(flat[i])))
    for i in np.flatnonzero(~finite).tolist():
        v = flat[i]
        word = "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")
        _put(rows, i, "null" if nonfinite == "null" else f'"{word}"')


def _put(rows: np.ndarray, i: int, text: str) -> None:
    rows[i, :_FIELD] = 0
    rows[i, : len(text)] = np.frombuffer(text.encode("ascii"), dtype=np.uint8)


def _whole_numbers(values: np.ndarray, rows: np.ndarray, where: np.ndarray) -> None:
    """Whole numbers below 2**53 as ints (to_json's int(v): -0.0 is 0), right-aligned in
    rows[:, 1:18], the sign just before the first digit."""
    if not values.size:
        return
    ints = np.abs(values).astype(np.int64)
    count = np.maximum(np.searchsorted(_POW10, ints, side="right"), 1)  # 0 is "0"
    cells = _digit_cells(ints)
    first = 17 - count
    cells[np.arange(17) < first[:, None]] = 0
    rows[where, 1:18] = cells
    negative = values < 0
    rows[where[negative], first[negative]] = ord("-")


def _pow10_dd(exponents: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """10**s as a double-double (hi + lo, |error| < 2**-104 relative) for each s."""
    low, high = int(exponents.min()), int(exponents.max())
    table = np.array([_pow10_pair(s) for s in range(low, high + 1)])
    index = exponents - low
    return table[index, 0], table[index, 1]


def _pow10_pair(s: int) -> tuple[float, float]:
    if s not in _DD_CACHE:
        if s >= 0:
            exact = 10**s
            top = float(exact)  # int to float: correctly rounded
            _DD_CACHE[s] = (top, float(exact - int(top)))
        else:
            top = 1 / 10**-s  # int true division: correctly rounded
            num, den = top.as_integer_ratio()
            _DD_CACHE[s] = (top, (den - num * 10**-s) / (den * 10**-s))
    return _DD_CACHE[s]


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p + e == a * b exactly (Dekker; no FMA in NumPy)."""
    p = a * b
    ta = a * _SPLIT
    a_hi = ta - (ta - a)
    a_lo = a - a_hi
    tb = b * _SPLIT
    b_hi = tb - (tb - b)
    b_lo = b - b_hi
    e = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    return p, e


def _scaled(v: np.ndarray):
    """For positive normal v: s; X = v * 10**s in [1e16, 1e17) as an integer part xi
    (int64) and a fraction xf in [0, 1); h, half an ulp of v in units of X; and where
    the scaling failed (left to repr)."""
    s = 16 - np.floor(np.log10(v)).astype(np.int64)
    for attempt in range(3):  # log10 can be one off next to a power of ten
        hi, lo = _pow10_dd(s)
        p, e1 = _two_product(v, hi)
        shift = (p >= 1e17).astype(np.int64) - (p < 1e16)
        if attempt == 2 or not shift.any():
            break
        s = s - shift
    error = e1 + v * lo  # X - p, |error| < 20
    whole = np.floor(error)
    xi = p.astype(np.int64) + whole.astype(np.int64)
    _, exponent = np.frexp(v)
    half_ulp = np.ldexp(hi, exponent - 54)  # v = m * 2**(exponent - 53), m < 2**53
    # Where 10**s is a double (0 <= s <= 22), X = p + e1 and h are exact: an endpoint of
    # the interval can then be told exactly (it rounds back to v iff v's mantissa is even).
    exact = (lo == 0) & (e1 == error)
    return s, xi, error - whole, half_ulp, shift != 0, exact


def _shortest_numbers(v: np.ndarray, rows: np.ndarray, where: np.ndarray) -> np.ndarray:
    """Write repr(v) for positive normal floats v (signs are already in rows); return the
    positions (into v) left undecided, for `repr` itself."""
    if not v.size:
        return np.zeros(0, dtype=np.int64)
    s, xi, xf, h, unsure, exact = _scaled(v)
    even = exact & (v.view(np.int64) % 2 == 0)
    digits = np.zeros(v.size, dtype=np.int64)
    power = np.zeros(v.size, dtype=np.int64)  # v's digits times 10**(power - s)
    tied = np.zeros(v.size, dtype=bool)  # the accepted candidate had an equidistant twin
    active = np.flatnonzero(~unsure)
    for j in range(18):
        pw = _POW10[j]
        q, r = np.divmod(xi[active], pw)
        down = r + xf[active]  # X - q * 10**j, exactly enough where it matters
        up = (pw - r) - xf[active]
        tol = _TOL + pw * 2.0**-50
        tie = np.abs(down - up) <= tol
        d = q + (down > up)
        # An exact tie (X halfway between two multiples, both sums exact) goes to the even
        # candidate, as dtoa's round-half-even does; any other near-tie stays repr's.
        resolved = tie & exact[active] & (down == up) & (down - r == xf[active])
        resolved &= (pw - r) - up == xf[active]
        if resolved.any():
            d = np.where(resolved, q + q % 2, d)
            tie &= ~resolved
        dist = np.minimum(down, up)
        inside = dist < h[active] - _TOL
        edge = np.abs(dist - h[active]) <= _TOL
        # An exact sum (checked by undoing it) on exact X and h settles an edge: inside
        # below h, and at h exactly when v's mantissa is even (round-half-even reads it back).
        undone = np.where(down <= up, down - r, (pw - r) - up)
        sure = edge & exact[active] & (undone == xf[active])
        if sure.any():
            inside |= sure & ((dist < h[active]) | ((dist == h[active]) & even[active]))
            edge &= ~sure
        # A distance at the interval's edge is repr's to settle; so is a tie between two
        # candidates inside, unless a shorter one is inside too (then neither is the
        # answer). At j = 0 the nearest integer to X is always inside.
        bad = edge if j else edge | ~inside
        unsure[active[bad]] = True
        ended = active[~inside & ~bad]
        unsure[ended] |= tied[ended]  # the search ends on the previous j
        keep = inside & ~bad
        digits[active[keep]] = d[keep]
        power[active[keep]] = j
        tied[active[keep]] = tie[keep]
        active = active[keep]
        if not active.size:
            break
    unsure[active] |= tied[active]
    unsure |= (digits % 10 == 0) & (power < 17)  # the search ends on a nonzero digit
    unsure |= digits >= _POW10[17]
    good = np.flatnonzero(~unsure)
    _digit_texts(digits[good], power[good] - s[good], rows, where[good])
    return np.flatnonzero(unsure)


def _digit_texts(d: np.ndarray, exp10: np.ndarray, rows: np.ndarray, where: np.ndarray) -> None:
    """rows[where, 1:44] = repr's text of d * 10**exp10 (d without trailing zeros).

    Every element gets the same slots, each filled or left 0 (dropped later): "0.000" for
    0.000ddd, then the 17 digits with a slot before each for the decimal point, then the
    exponent "e-308". So one layout serves all three of repr's forms, with no per-form
    or per-exponent loop."""
    if not d.size:
        return
    count = np.searchsorted(_POW10, d, side="right")  # digits in d
    cells = _digit_cells(d * _POW10[17 - count])  # left-aligned: "0" after d's digits
    x = count - 1 + exp10  # the leading digit's decimal exponent
    positional = (x >= -4) & (x < 16)  # repr's rule
    integral = positional & (x >= 0)  # ddd.ddd (at least one digit after the point)
    small = positional & (x < 0)  # 0.000ddd
    shown = np.where(integral, np.maximum(count, x + 2), count)
    block = np.zeros((d.size, 43), dtype=np.uint8)
    cells[np.arange(17) >= shown[:, None]] = 0
    block[:, 5:38:2] = cells
    at = np.flatnonzero(small)
    block[at, 0] = ord("0")
    block[at, 1] = ord(".")
    for k in range(3):  # 0.0001 has three zeros after the point
        zeros = at[-x[at] - 1 > k]
        block[zeros, 2 + k] = ord("0")
    point = np.where(integral, x + 1, np.where(~positional & (count > 1), 1, 0))
    at = np.flatnonzero(point)
    block[at, 4 + 2 * point[at]] = ord(".")  # the slot before digit number `point`
    at = np.flatnonzero(~positional)
    e = x[at]
    size = np.abs(e)
    block[at, 38] = ord("e")
    block[at, 39] = np.where(e < 0, ord("-"), ord("+"))
    block[at, 40] = np.where(size >= 100, size // 100 + ord("0"), 0)
    block[at, 41] = size // 10 % 10 + ord("0")
    block[at, 42] = size % 10 + ord("0")
    rows[where, 1:44] = block


def _digit_cells(numbers: np.ndarray) -> np.ndarray:
    """The 17 decimal digits (ASCII) of each number below 10**17, most significant first:
    column by column in two 9-digit halves, so that NumPy divides by a scalar (uint32)."""
    cells = np.empty((numbers.size, 17), dtype=np.uint8)
    high, low = np.divmod(numbers, 10**9)
    for half, digits, first in ((high.astype(np.uint32), 8, 0), (low.astype(np.uint32), 9, 8)):
        for k in range(digits):
            column = half // np.uint32(10 ** (digits - 1 - k)) % np.uint32(10)
            cells[:, first + k] = column
    cells += ord("0")
    return cells


def _separators(shape: tuple[int, ...], start: int, total: int, cells: np.ndarray) -> None:
    """After each element but the last: the lists it closes, ", ", the lists it opens
    (``cells`` holds elements ``start...`` of ``total``)."""
    n = cells.shape[0]
    depth = len(shape) - 1
    after = np.arange(start + 1, start + n + 1)
    closes = np.zeros(n, dtype=np.int64)
    block = 1
    for size in reversed(shape[1:]):
        block *= size
        closes += after % block == 0
    brackets = np.arange(depth)
    cells[:, :depth] = np.where(brackets < closes[:, None], ord("]"), 0)
    cells[:, depth] = ord(",")
    cells[:, depth + 1] = ord(" ")
    cells[:, depth + 2 :] = np.where(brackets < closes[:, None], ord("["), 0)
    if start + n == total:
        cells[-1] = 0
