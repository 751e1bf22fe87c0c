"""Values for ``--set NAME=VALUE``: a constant agrad expression, or ``@PATH`` to load a file.

Files: .npy (pickles refused), .npz with ``@file.npz:key``, .csv, .txt
(whitespace-separated), .json (numbers or nested lists; ``@file.json:key`` for
an object's field). Every failure is an `AgradValueError` that names the option,
the file and what to do instead.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import AgradError, AgradValueError

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


def split_assignment(option: str) -> tuple[str, str]:
    """``"x=[1,2]"`` -> ``("x", "[1,2]")``, or an error that shows the expected form."""
    name, sep, value = option.partition("=")
    name = name.strip()
    if not sep or not value.strip():
        raise AgradValueError(f"--set {option!r}: expected NAME=VALUE, e.g. --set x=[1,2]")
    if not _NAME.match(name):
        raise AgradValueError(f"--set {option!r}: {name!r} is not a variable name")
    return name, value.strip()


def parse_value(text: str, option: str = "--set", *, seed: int | None = 0) -> np.ndarray:
    """The array a ``--set`` value denotes (float64; the run casts to its dtype)."""
    if text.startswith("@"):
        return load_file(text[1:], option)
    from .program import Program  # the language is only loaded when a value needs it

    try:
        program = Program.compile(text)
    except AgradError as exc:
        raise type(exc)(f"{option}: in the value {text!r}: {exc}") from None
    if program.free:
        raise AgradValueError(
            f"{option}: the value must be constant, but it uses {program.free[0]!r}; "
            "write numbers, lists or calls such as randn(3)"
        )
    try:
        value = program.run(seed=seed).output
    except AgradError as exc:
        raise type(exc)(f"{option}: in the value {text!r}: {exc}") from None
    return np.asarray(value.data, dtype=np.float64)


def load_file(spec: str, option: str = "--set") -> np.ndarray:
    """Load ``path`` or ``path:key`` by its extension."""
    path, key = _split_key(spec)
    where = f"{option}=@{spec}"
    suffix = Path(path).suffix.lower()
    loaders = {".npy": _npy, ".npz": _npz, ".csv": _csv, ".txt": _txt, ".json": _json}
    if suffix not in loaders:
        raise AgradValueError(
            f"{where}: unknown file type {suffix or '(none)'!r}; use .npy, "
            ".npz, .csv, .txt or .json"
        )
    if not Path(path).is_file():
        raise AgradValueError(f"{where}: no such file {path!r}")
    try:
        data = loaders[suffix](path, key)
    except AgradValueError as exc:
        raise AgradValueError(f"{where}: {exc}") from None
    except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError) as exc:
        raise AgradValueError(f"{where}: cannot read {path!r}: {_reason(exc)}") from None
    array = np.asarray(data)
    if array.dtype.kind not in "biuf":
        raise AgradValueError(f"{where}: {path!r} holds {array.dtype} data; agrad needs numbers")
    return array.astype(np.float64)


def _split_key(spec: str) -> tuple[str, str | None]:
    for ext in (".npz:", ".json:"):
        at = spec.lower().rfind(ext)
        if at != -1:
            return spec[: at + len(ext) - 1], spec[at + len(ext) :]
    return spec, None


def _reason(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if "allow_pickle" in text:
        return "it holds pickled Python objects, which agrad refuses to load; save plain numbers"
    return text


def _no_key(path: str, key: str | None) -> None:
    if key:
        raise AgradValueError(f"{path!r} has no named arrays; drop ':{key}'")


def _npy(path: str, key: str | None) -> np.ndarray:
    _no_key(path, key)
    with open(path, "rb") as handle:
        if handle.read(6) != b"\x93NUMPY":
            raise AgradValueError(f"{path!r} is not a .npy file (no NumPy header)")
    return np.load(path, allow_pickle=False)


def _npz(path: str, key: str | None) -> np.ndarray:
    with np.load(path, allow_pickle=False) as archive:
        names = list(archive.files)
        if key is None:
            if len(names) != 1:
                raise AgradValueError(
                    f"{path!r} holds {len(names)} arrays ({', '.join(names)}); "
                    f"pick one with @{path}:NAME"
                )
            key = names[0]
        if key not in names:
            raise AgradValueError(f"{path!r} has no array {key!r}; it has {', '.join(names)}")
        return archive[key]


def _csv(path: str, key: str | None) -> np.ndarray:
    _no_key(path, key)
    return _text_table(path, ",")


def _txt(path: str, key: str | None) -> np.ndarray:
    _no_key(path, key)
    return _text_table(path, None)


def _text_table(path: str, delimiter: str | None) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy warns about an empty file; we say it below
        data = np.loadtxt(path, delimiter=delimiter, ndmin=1)
    if data.size == 0:
        raise AgradValueError(f"{path!r} holds no numbers")
    return data


def _json(path: str, key: str | None) -> Any:
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if key is not None:
        if not isinstance(data, dict) or key not in data:
            raise AgradValueError(f"{path!r} has no field {key!r}")
        data = data[key]
    if isinstance(data, dict):
        raise AgradValueError(f"{path!r} holds an object; pick a field with @{path}:FIELD")
    if any(v is None for v in np.asarray(data, dtype=object).reshape(-1)):
        raise AgradValueError(f"{path!r} holds null values; agrad needs numbers")
    try:
        return np.asarray(data, dtype=np.float64)
    except (ValueError, TypeError):
        raise AgradValueError(
            f"{path!r} must hold a number or (nested) lists of numbers of equal lengths"
        ) from None
