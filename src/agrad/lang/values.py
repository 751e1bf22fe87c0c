"""Values for ``--set NAME=VALUE``: a constant agrad expression, or ``@PATH`` to load a file.

Files: .npy (pickles refused), .npz with ``@file.npz:key``, .csv, .txt
(whitespace-separated), .json (numbers or nested lists; ``@file.json:key`` for
an object's field). Every failure is an `AgradValueError` that names the option,
the file and what to do instead — and never quotes what the file holds.

Everything is bounded by ``max_elements`` before it is allocated: an expression
runs under that limit, a .npy or .npz member's header is read (and its size
checked) before its data, and text files are capped in bytes.
"""

from __future__ import annotations

import io
import json
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import AgradError, AgradLimitError, AgradValueError
from ..files import decode, open_regular

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
DEFAULT_MAX_ELEMENTS = 10**8  # as agrad.lang.program.MAX_ELEMENTS (not imported: start-up)
MAX_TABLE_BYTES = 256 * 2**20  # .csv, .txt: larger data belongs in .npy
MAX_JSON_BYTES = 128 * 2**20  # Python objects take ~25 times the text's size
_FLOAT_MAX = float(np.finfo(np.float64).max)


def split_assignment(option: str) -> tuple[str, str]:
    """``"x=[1,2]"`` -> ``("x", "[1,2]")``, or an error that shows the expected form."""
    name, sep, value = option.partition("=")
    name = name.strip()
    if not sep or not value.strip():
        raise AgradValueError(f"--set {option!r}: expected NAME=VALUE, e.g. --set 'x=[1,2]'")
    if not _NAME.match(name):
        raise AgradValueError(f"--set {option!r}: {name!r} is not a variable name")
    return name, value.strip()


def parse_value(
    text: str,
    option: str = "--set",
    *,
    seed: int | None = 0,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
) -> np.ndarray:
    """The array a ``--set`` value denotes: float64, or a .npy/.npz's own integers or
    booleans (a run casts it to its dtype; a --python function gets it as it is)."""
    if text.startswith("@"):
        return load_file(text[1:], option, max_elements)
    from .program import Program  # the language is only loaded when a value needs it

    context = f"{option}: in the value {text!r}"
    try:
        program = Program.compile(text)
    except AgradError as exc:
        raise exc.with_prefix(context) from None
    if program.free:
        raise AgradValueError(
            f"{option}: the value must be constant, but it uses {program.free[0]!r}; "
            "write numbers, lists or calls such as randn(3)"
        )
    try:
        value = program.run(seed=seed, max_elements=max_elements).output
    except AgradError as exc:
        raise exc.with_prefix(context) from None
    return np.asarray(value._array, dtype=np.float64)


def load_file(spec: str, option: str = "--set", max_elements: int = DEFAULT_MAX_ELEMENTS) -> Any:
    """Load ``path`` or ``path:key`` by its extension."""
    path, key = split_key(spec)
    where = f"{option}=@{spec}"
    suffix = Path(path).suffix.lower()
    loaders = {".npy": _npy, ".npz": _npz, ".csv": _csv, ".txt": _txt, ".json": _json}
    if suffix not in loaders:
        raise AgradValueError(
            f"{where}: unknown file type {suffix or '(none)'!r}; use .npy, "
            ".npz, .csv, .txt or .json"
        )
    if key and suffix not in (".npz", ".json"):
        raise AgradValueError(f"{where}: {path!r} has no named arrays; drop ':{key}'")
    try:
        array = loaders[suffix](path, key, where, max_elements)
    except AgradError:
        raise
    except MemoryError:
        raise AgradLimitError(
            f"{where}: out of memory loading {path!r}; use a smaller file, or a lower "
            "--max-elements so that such files are refused before loading"
        ) from None
    except Exception as exc:  # anything a damaged file makes a reader raise
        raise AgradValueError(f"{where}: cannot read {path!r}: {_reason(exc)}") from None
    if array.dtype.kind not in "biuf":
        raise AgradValueError(f"{where}: {path!r} holds {array.dtype} data; agrad needs numbers")
    _check_count(array.size, where, path, max_elements)
    if suffix in (".npy", ".npz") and array.dtype.kind in "biu":
        # integers and booleans stored as such stay so: a --python function's class labels
        # (a program casts every value to its dtype when it binds it)
        return array
    return array.astype(np.float64)


def split_key(spec: str) -> tuple[str, str | None]:
    """``"data.npz:w"`` -> ``("data.npz", "w")``; other paths have no key."""
    for ext in (".npz:", ".json:"):
        at = spec.lower().rfind(ext)
        if at != -1:
            return spec[: at + len(ext) - 1], spec[at + len(ext) :]
    return spec, None


def _check_count(count: int, where: str, path: str, limit: int) -> None:
    if count > limit:
        raise AgradLimitError(
            f"{where}: {path!r} holds {count:,} elements, more than the limit of {limit:,}; "
            "use a smaller file or raise the limit with --max-elements"
        )


def _reason(exc: Exception) -> str:
    """A reader's complaint in words, without quoting the file's bytes."""
    from zipfile import BadZipFile

    if isinstance(exc, BadZipFile):
        return "it is not a valid .npz (zip) archive; it may be truncated or damaged"
    if isinstance(exc, (EOFError, OSError)):
        return getattr(exc, "strerror", None) or "it ends too early (truncated?)"
    text = str(exc).splitlines()[0] if str(exc) else ""
    if "allow_pickle" in text or "pickle" in text:
        return "it holds pickled Python objects, which agrad refuses to load; save plain numbers"
    return f"it is damaged or not in the format its name says ({type(exc).__name__})"


# ---- binary: the header first ------------------------------------------------------------


# Bytes a .npy of `limit` elements can need: 16 per element (the widest numbers agrad takes)
# plus a header; anything larger is refused before it is read.
def _npy_bytes(limit: int) -> int:
    return 16 * limit + 2**16


def _npy_header(stream, where: str, path: str, limit: int) -> tuple[tuple[int, ...], np.dtype]:
    from numpy.lib import format as npy_format

    if stream.read(6) != b"\x93NUMPY":
        raise AgradValueError(f"{where}: {path!r} is not a .npy file (no NumPy header)")
    stream.seek(0)
    version = npy_format.read_magic(stream)
    reader = (
        npy_format.read_array_header_1_0 if version == (1, 0) else npy_format.read_array_header_2_0
    )
    shape, _fortran, dtype = reader(stream)
    if dtype.hasobject:
        raise AgradValueError(
            f"{where}: {path!r} holds pickled Python objects, which agrad refuses to load; "
            "save plain numbers"
        )
    count = int(np.prod(shape, dtype=object))
    _check_count(count, where, path, limit)
    return shape, dtype


def _npy(path: str, key: str | None, where: str, limit: int) -> np.ndarray:
    with open_regular(path, where, _npy_bytes(limit)) as handle:
        _npy_header(handle, where, path, limit)
        handle.seek(0)
        return np.load(handle, allow_pickle=False)


def _npz(path: str, key: str | None, where: str, limit: int) -> np.ndarray:
    import zipfile

    from numpy.lib import format as npy_format

    with open_regular(path, where, _npy_bytes(limit)) as handle, zipfile.ZipFile(handle) as zf:
        members = {n[:-4]: n for n in zf.namelist() if n.endswith(".npy")}
        names = list(members)
        if key is None:
            if len(names) != 1:
                raise AgradValueError(
                    f"{where}: {path!r} holds {len(names)} arrays ({', '.join(names)}); "
                    f"pick one with @{path}:NAME"
                )
            key = names[0]
        if key not in members:
            raise AgradValueError(
                f"{where}: {path!r} has no array {key!r}; it has {', '.join(names) or 'none'}"
            )
        info = zf.getinfo(members[key])
        with zf.open(info) as member:
            stream = io.BufferedReader(member, buffer_size=2**16 + 16)  # to peek at the header
            header = stream.peek(2**16)[: 2**16]
            _npy_header(io.BytesIO(header), where, f"{path}:{key}", limit)
            if info.file_size > _npy_bytes(limit):  # what it says it inflates to
                raise AgradLimitError(
                    f"{where}: array {key!r} of {path!r} inflates to {info.file_size:,} bytes, "
                    "more than --max-elements allows; use a smaller file or raise the limit"
                )
            return npy_format.read_array(stream, allow_pickle=False)


# ---- text: bounded in bytes, messages without the content -------------------------------


def _text(path: str, where: str, cap: int, limit: int) -> str:
    with open_regular(path, where, min(cap, 64 * limit + 4096)) as handle:
        data = handle.read()
    return decode(data, where, repr(path))


def _csv(path: str, key: str | None, where: str, limit: int) -> np.ndarray:
    return _table(_text(path, where, MAX_TABLE_BYTES, limit), ",", where, path)


def _txt(path: str, key: str | None, where: str, limit: int) -> np.ndarray:
    return _table(_text(path, where, MAX_TABLE_BYTES, limit), None, where, path)


def _table(text: str, delimiter: str | None, where: str, path: str) -> np.ndarray:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumPy warns about an empty file; we say it below
            data = np.loadtxt(io.StringIO(text), delimiter=delimiter, ndmin=1)
    except ValueError as exc:
        raise AgradValueError(f"{where}: cannot read {path!r}: {_table_reason(exc)}") from None
    if data.size == 0:
        raise AgradValueError(f"{where}: {path!r} holds no numbers")
    return data


def _table_reason(exc: ValueError) -> str:
    message = str(exc)
    bad = re.search(r"at row (\d+), column (\d+)", message)
    if message.startswith("could not convert") and bad:
        row, column = int(bad.group(1)) + 1, int(bad.group(2))
        return f"row {row}, column {column} is not a number (comments and blank lines not counted)"
    changed = re.search(r"columns changed from (\d+) to (\d+) at row (\d+)", message)
    if changed:
        first, now, row = changed.groups()
        return f"rows have different lengths: row {row} has {now} columns, the first has {first}"
    return "it is not a table of numbers"


def _json(path: str, key: str | None, where: str, limit: int) -> np.ndarray:
    text = _text(path, where, MAX_JSON_BYTES, limit)
    try:
        data = json.loads(text, parse_int=_json_number, parse_float=_json_number)
    except RecursionError:
        raise AgradValueError(
            f"{where}: {path!r} nests lists too deeply; agrad takes at most 32 dimensions"
        ) from None
    except json.JSONDecodeError as exc:  # its message names a position, never the content
        raise AgradValueError(
            f"{where}: {path!r} is not valid JSON (line {exc.lineno}, column {exc.colno})"
        ) from None
    except AgradValueError as exc:  # a number out of range, from _json_number
        raise exc.with_prefix(f"{where}: {path!r}") from None
    if key is not None:
        if not isinstance(data, dict) or key not in data:
            raise AgradValueError(f"{where}: {path!r} has no field {key!r}")
        data = data[key]
    if isinstance(data, dict):
        raise AgradValueError(f"{where}: {path!r} holds an object; pick a field with @{path}:FIELD")
    _check_nested_numbers(data, where, path)
    try:
        return np.asarray(data, dtype=np.float64)
    except (ValueError, TypeError):
        raise AgradValueError(
            f"{where}: {path!r} must hold a number or (nested) lists of numbers of equal lengths"
        ) from None


def _json_number(text: str) -> float:
    value = float(text)
    if abs(value) > _FLOAT_MAX:  # float() of "1e400" or of a 400-digit integer is inf
        raise AgradValueError("it holds a number beyond the range of float64 (about 1.8e308)")
    return value


def _check_nested_numbers(data: Any, where: str, path: str) -> None:
    """Numbers or lists, at most 32 deep: walked with a stack, not recursion."""
    stack = [(data, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, list):
            if depth >= 32:
                raise AgradValueError(f"{where}: {path!r} nests lists more than 32 deep")
            stack.extend((x, depth + 1) for x in item)
        elif item is None:
            raise AgradValueError(f"{where}: {path!r} holds null values; agrad needs numbers")
        elif not isinstance(item, (int, float)):  # bool is an int: true/false count as 1/0
            raise AgradValueError(
                f"{where}: {path!r} holds {type(item).__name__} values; agrad needs numbers"
            )
