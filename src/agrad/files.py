"""Reading and writing the files a user names, safely.

Reading: programs, suites and data come from regular files only (a FIFO or
``/dev/zero`` would block or never end), are bounded in size before they are
read, and must be UTF-8 where they are text. Errors say what and where, never
what the file holds.

Writing (JUnit reports, golden values): a regular file is replaced atomically —
a temporary file beside it, then a rename — so a reader sees the old file or the
whole new one, and its permissions are kept. A pipe or a character device
(``/dev/null``, ``/dev/stdout``) is written through, since renaming over it
would replace the device with a file. Anything else (a symbolic link to a file,
a folder, a block device) is refused, and so is a file the run reads (the suite
itself). A run killed mid-write leaves ``.NAME.PID.agrad-tmp`` behind, which the
next write to the same file removes once that process is gone.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from .errors import AgradLimitError, AgradValueError

MAX_TEXT_BYTES = 16 * 2**20  # a program or a suite: a 100,000-term sum is 200 KB
_TMP_SUFFIX = ".agrad-tmp"


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n:,} bytes"


# ---- reading ----------------------------------------------------------------------------


def open_regular(path: str | os.PathLike, what: str, max_bytes: int) -> BinaryIO:
    """``path`` opened for binary reading, if it is a regular file of at most ``max_bytes``.

    Opened without blocking, so a FIFO is refused instead of waiting for a writer.
    """
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise AgradValueError(f"{what}: cannot read {name!r}: no such file") from None
    except OSError as exc:
        raise AgradValueError(f"{what}: cannot read {name!r}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise AgradValueError(f"{what}: cannot read {name!r}: it is a folder; name a file")
        if not stat.S_ISREG(info.st_mode):
            raise AgradValueError(
                f"{what}: cannot read {name!r}: it is not a regular file (but a device, pipe "
                "or socket); agrad reads programs and data from regular files only"
            )
        if info.st_size > max_bytes:
            raise AgradLimitError(
                f"{what}: {name!r} is {_size(info.st_size)}, more than the {_size(max_bytes)} "
                "agrad reads from such a file"
            )
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_bytes(path: str | os.PathLike, what: str, max_bytes: int = MAX_TEXT_BYTES) -> bytes:
    with open_regular(path, what, max_bytes) as handle:
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise AgradValueError(
                f"{what}: cannot read {os.fspath(path)!r}: {exc.strerror}"
            ) from None
    if len(data) > max_bytes:  # it grew after the check
        raise AgradLimitError(f"{what}: {os.fspath(path)!r} is larger than {_size(max_bytes)}")
    return data


def read_text(path: str | os.PathLike, what: str, max_bytes: int = MAX_TEXT_BYTES) -> str:
    """A regular file's text (UTF-8, a byte-order mark dropped)."""
    return decode(read_bytes(path, what, max_bytes), what, repr(os.fspath(path)))


def decode(data: bytes, what: str, name: str) -> str:
    """UTF-8 text, or an error that says where the first bad byte is (not what it is)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise AgradValueError(
            f"{what}: {name} is not UTF-8 text (line {line}, byte {exc.start + 1}); "
            "save it as UTF-8"
        ) from None


def read_stream(
    stream, what: str, command: str = "COMMAND", max_bytes: int = MAX_TEXT_BYTES
) -> str:
    """All of a text stream such as sys.stdin, bounded (``< /dev/zero`` must end)."""
    if stream is None:
        raise AgradValueError(
            f"{what}: standard input is closed; pipe the program in (echo 'sum(x)' | agrad "
            f"{command} - ...) or pass it as an argument"
        )
    try:
        raw = getattr(stream, "buffer", None)
        data = raw.read(max_bytes + 1) if raw is not None else stream.read(max_bytes + 1)
    except (OSError, ValueError) as exc:  # ValueError: the stream object was closed
        reason = getattr(exc, "strerror", None) or "it is closed"
        raise AgradValueError(f"{what}: cannot read standard input: {reason}") from None
    except UnicodeDecodeError:
        raise AgradValueError(f"{what}: standard input is not UTF-8 text") from None
    if len(data) > max_bytes:
        raise AgradLimitError(
            f"{what}: standard input holds more than {_size(max_bytes)}; agrad reads programs "
            "up to that size"
        )
    return decode(data, what, "standard input") if isinstance(data, bytes) else data


# ---- writing ----------------------------------------------------------------------------


def write_output(
    path: str | os.PathLike,
    text: str,
    what: str,
    *,
    protected: Iterable[str | os.PathLike] = (),
    make_parents: bool = False,
) -> None:
    """Write ``text`` to ``path`` as described in the module docstring; errors name ``what``."""
    target = Path(path)
    name = str(target)
    try:
        info = os.stat(target)  # follows a symbolic link
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise AgradValueError(f"{what}: cannot write {name!r}: {exc.strerror}") from None
    linked = target.is_symlink()
    if info is None:
        if linked:
            raise AgradValueError(f"{what}: {name!r} is a symbolic link to nothing; name a file")
    elif stat.S_ISREG(info.st_mode):
        if linked:
            raise AgradValueError(
                f"{what}: {name!r} is a symbolic link; agrad replaces files atomically and "
                f"would replace the link, so name the file itself ({os.path.realpath(target)!r})"
            )
        for other in protected:
            if _same_file(target, other):
                raise AgradValueError(
                    f"{what}: {name!r} is {os.fspath(other)!r}, a file this run reads; "
                    "name another file"
                )
    elif stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode):
        _write_through(target, text, what)
        return
    elif stat.S_ISDIR(info.st_mode):
        raise AgradValueError(f"{what}: {name!r} is a folder; name a file in it")
    else:
        raise AgradValueError(
            f"{what}: {name!r} is not a regular file, a pipe or a terminal; name a file"
        )
    if make_parents:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise AgradValueError(
                f"{what}: cannot create the folder {str(target.parent)!r}: {exc.strerror}"
            ) from None
    _replace_atomically(target, text.encode("utf-8"), what, None if info is None else info)


def _same_file(a: Path, b: str | os.PathLike) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _write_through(target: Path, text: str, what: str) -> None:
    try:
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise AgradValueError(f"{what}: cannot write {str(target)!r}: {exc.strerror}") from None


def _replace_atomically(target: Path, data: bytes, what: str, old: os.stat_result | None) -> None:
    folder = target.parent
    remove_stale_temporaries(target)
    tmp = folder / f".{target.name}.{os.getpid()}{_TMP_SUFFIX}"
    mode = 0o666 if old is None else stat.S_IMODE(old.st_mode)
    try:
        tmp.unlink(missing_ok=True)  # our own pid's leftover from an earlier, killed run
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            if old is not None:
                os.chmod(tmp, mode)  # os.open applied the umask; keep the file's own mode
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise AgradValueError(
            f"{what}: cannot write {str(target)!r}: {exc.strerror}; it was left as it was"
        ) from None


def remove_stale_temporaries(target: Path) -> None:
    """Delete temporaries of ``target`` left by writers that no longer run."""
    prefix = f".{target.name}."
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return
    for entry in entries:
        if not (entry.name.startswith(prefix) and entry.name.endswith(_TMP_SUFFIX)):
            continue
        pid = entry.name[len(prefix) : -len(_TMP_SUFFIX)]
        if pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(OSError):  # someone else removed it first
                os.unlink(entry.path)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # our own leftover: this process is not writing it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True
