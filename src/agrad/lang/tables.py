"""A verified JSON cache of the parser's LALR tables, so a command starts without rebuilding them.

Building the LALR(1) tables from the grammar costs about 30 ms per process. Lark can
cache them, but its cache is a pickle, and agrad loads no pickles. This cache is
plain JSON in the user's cache directory: ``$XDG_CACHE_HOME/agrad/`` (by default
``~/.cache/agrad/``), one file ``grammar-<hash>.json`` per grammar.

The tables decide what a program means, so they are verified before use: the
file's first line records the hash of what they were built from (the grammar,
Lark's version and Python's) and the SHA-256 of the tables that follow; a file
whose tables do not hash to that value, or that was built from anything else, is
ignored and rebuilt. This catches damage and edits (an edited cache once made
``3-1`` print 3); it is not a signature against someone who can write to your
cache directory, who could as well edit your shell's start-up files. Anything
wrong with the cache — missing, stale, damaged, unwritable — only means the
tables are built from the grammar as usual.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lark import Lark
from lark import __version__ as lark_version
from lark.grammar import Rule
from lark.lexer import TerminalDef

FORMAT = 2  # of the file: a header line, then the tables
# Options that hold live objects: passed again when loading, never stored.
_LIVE_OPTIONS = ("transformer", "postlex", "lexer_callbacks", "edit_terminals", "tree_class")


def cached_parser(grammar: str, build: Callable[[], Lark], **live: Any) -> Lark:
    """The parser for ``grammar``: from the cache when it verifies, else ``build()`` (and
    then cache it). ``live`` are the options holding objects (transformer, postlex)."""
    source = source_hash(grammar)
    path = cache_path(source)
    if path is not None:
        stored = _load(path, source)
        if stored is not None:
            try:
                return Lark._load_from_dict(stored["data"], stored["memo"], **live)
            except Exception:  # noqa: BLE001 - tables that verify but do not load: rebuild
                pass
    parser = build()
    if path is not None:
        _store(parser, path, source)
    return parser


def source_hash(grammar: str) -> str:
    """What the tables are built from: the grammar, Lark's version, Python's, this format."""
    key = f"{grammar}\0{lark_version}\0{sys.version_info[:2]}\0{FORMAT}"
    return hashlib.sha256(key.encode()).hexdigest()


def cache_path(source: str) -> Path | None:
    try:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    except RuntimeError:  # no home directory: no cache
        return None
    return Path(base) / "agrad" / f"grammar-{source[:16]}.json"


def _load(path: Path, source: str) -> dict | None:
    """The stored tables, if the file's header matches ``source`` and their hash."""
    try:
        with open(path, "rb") as handle:
            header = json.loads(handle.readline())
            tables = handle.read()
        if header.get("source") != source:
            return None
        if header.get("sha256") != hashlib.sha256(tables).hexdigest():
            return None
        return json.loads(tables, object_pairs_hook=_int_keys)
    except (OSError, ValueError, AttributeError):  # missing, unreadable, not our format
        return None


def _int_keys(pairs: list[tuple[str, Any]]) -> dict:
    # JSON object keys are strings; Lark's tables key states and memo entries by int.
    return {int(k) if k.isdigit() else k: v for k, v in pairs}


def _store(parser: Lark, path: Path, source: str) -> None:
    from ..errors import AgradError
    from ..files import write_output

    try:
        data, memo = parser.memo_serialize([TerminalDef, Rule])
        data["options"] = {k: v for k, v in data["options"].items() if k not in _LIVE_OPTIONS}
        tables = json.dumps({"data": data, "memo": memo}).encode()
        header = {"format": FORMAT, "source": source, "sha256": hashlib.sha256(tables).hexdigest()}
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        text = json.dumps(header) + "\n" + tables.decode()
        write_output(path, text, "the parser cache")  # atomic: the old file or the new one
    except (OSError, TypeError, ValueError, AgradError):
        pass  # no cache this time (read-only home, or options JSON cannot hold)
