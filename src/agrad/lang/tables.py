"""A JSON cache of the parser's LALR tables, so a command starts without rebuilding them.

Building the LALR(1) tables from the grammar costs about 30 ms per process. Lark can
cache them, but its cache is a pickle, and agrad loads no pickles. This cache is
plain JSON in the user's cache directory (``$XDG_CACHE_HOME/agrad`` or
``~/.cache/agrad``), keyed by a hash of the grammar, Lark's version and Python's.
Anything wrong with it — missing, stale, unreadable, unwritable — just means the
tables are built from the grammar as usual.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lark import Lark
from lark import __version__ as lark_version
from lark.grammar import Rule
from lark.lexer import TerminalDef

# Options that hold live objects: passed again when loading, never stored.
_LIVE_OPTIONS = ("transformer", "postlex", "lexer_callbacks", "edit_terminals", "tree_class")


def cached_parser(grammar: str, build: Callable[[], Lark], **live: Any) -> Lark:
    """The parser for ``grammar``: from the JSON cache when valid, else ``build()`` (and
    then cache it). ``live`` are the options holding objects (transformer, postlex)."""
    path = _cache_path(grammar)
    if path is not None and path.is_file():
        try:
            stored = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_int_keys)
            return Lark._load_from_dict(stored["data"], stored["memo"], **live)
        except Exception:  # noqa: BLE001 - any damage to the cache: rebuild it
            pass
    parser = build()
    if path is not None:
        _store(parser, path)
    return parser


def _int_keys(pairs: list[tuple[str, Any]]) -> dict:
    # JSON object keys are strings; Lark's tables key states and memo entries by int.
    return {int(k) if k.isdigit() else k: v for k, v in pairs}


def _cache_path(grammar: str) -> Path | None:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    digest = hashlib.sha256(
        f"{grammar}\0{lark_version}\0{sys.version_info[:2]}".encode()
    ).hexdigest()[:16]
    return Path(base) / "agrad" / f"grammar-{digest}.json"


def _store(parser: Lark, path: Path) -> None:
    try:
        data, memo = parser.memo_serialize([TerminalDef, Rule])
        data["options"] = {k: v for k, v in data["options"].items() if k not in _LIVE_OPTIONS}
        text = json.dumps({"data": data, "memo": memo})
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)  # atomic: a reader sees the old file or the whole new one
    except (OSError, TypeError, ValueError):
        pass  # no cache this time (read-only home, or options JSON cannot hold)
