"""Reading files whose path hrm did not choose: regular files only, bounded, inside a root.

A path from a hook payload (``transcript_path``, a tool's ``file_path``), a project's files, a
command's ``--file`` or the home's own listing is data. Opening it must never hang the reader
and never wander off: a FIFO with no writer blocks ``open`` forever, ``/dev/zero`` never ends,
and a symlink can lead out of the folder the path was meant to stay in. So every such read
here opens without blocking (``O_NONBLOCK``), checks what it opened (``fstat``: a regular file,
nothing else), checks where it really is (the opened descriptor's path, so a swapped symlink
cannot slip past) when a root applies, and reads at most a bound.

Failures are `HRMError`s naming the path and what to do; callers that must never fail (hooks)
catch them like any other error.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False  # `hrm hook` reads its config through here: only `os` at import time
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import BinaryIO, TypeAlias

    Root: TypeAlias = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]
    """One folder a path must stay in, or several it may be in any of."""


__all__ = [
    "DEFAULT_MAX_BYTES",
    "is_within",
    "open_regular",
    "read_bytes",
    "read_text",
]

DEFAULT_MAX_BYTES = 4 << 20
"""The default bound of a read: 4 MB, far above any config, definition or rules file."""

_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def _real(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(path))


def is_within(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    """True if `path`, with every symlink resolved, is `root` or lies under it."""
    real, base = _real(path), _real(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def _opened_path(fd: int, path: str | os.PathLike[str]) -> str:
    """Where the opened descriptor really points (Linux), else where `path` resolves now."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return _real(path)


def open_regular(
    path: str | os.PathLike[str],
    *,
    root: Root | None = None,
    what: str = "file",
) -> BinaryIO:
    """Open `path` for reading if it is a regular file (inside `root`, when given).

    Never blocks: a FIFO, a device or a socket is refused, not read.

    Raises:
        HRMError: ``SOURCE_NOT_FOUND`` when it does not exist; ``PERMISSION_DENIED`` when it
            cannot be read or resolves outside `root`; ``UNKNOWN_FORMAT`` when it is not a
            regular file.
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError as exc:
        from hrm.errors import ErrorCode, HRMError

        raise HRMError(
            ErrorCode.SOURCE_NOT_FOUND, f"No {what} at '{path}'", recoverable=False,
            context={"path": str(path)},
        ) from exc
    except OSError as exc:
        from hrm.errors import ErrorCode, HRMError

        raise HRMError(
            ErrorCode.PERMISSION_DENIED,
            f"Cannot open {what} '{path}': {exc.strerror or exc}",
            recoverable=False,
            context={"path": str(path)},
        ) from exc
    try:
        _check_opened(fd, path, root, what)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _check_opened(
    fd: int, path: str | os.PathLike[str], root: Root | None, what: str
) -> None:
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        from hrm.errors import ErrorCode, HRMError

        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise HRMError(
            ErrorCode.UNKNOWN_FORMAT,
            f"The {what} '{path}' is {kind}; hrm reads only regular files",
            recoverable=False,
            context={"path": str(path)},
        )
    if root is None:
        return
    real = _opened_path(fd, path)
    bases = [_real(r) for r in _roots(root)]
    if not any(real == base or real.startswith(base.rstrip(os.sep) + os.sep) for base in bases):
        from hrm.errors import ErrorCode, HRMError

        where = " or ".join(f"'{base}'" for base in bases)
        raise HRMError(
            ErrorCode.PERMISSION_DENIED,
            f"The {what} '{path}' leads to '{real}', outside {where}; hrm reads it only "
            "inside (replace a link with the file itself)",
            recoverable=False,
            context={"path": str(path), "real_path": real, "roots": bases},
        )


def _roots(root: Root) -> list[str | os.PathLike[str]]:
    return [root] if isinstance(root, str | os.PathLike) else list(root)


def read_bytes(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    root: Root | None = None,
    what: str = "file",
    truncate: bool = False,
) -> bytes:
    """The content of a regular file, at most `max_bytes` of it.

    Args:
        path: The file.
        max_bytes: The bound.
        root: When given, the file (its symlinks resolved) must lie under it (or under one of
            several).
        what: What the file is, for messages ("transcript", "agent definition").
        truncate: Return the first `max_bytes` of a larger file instead of refusing it.

    Raises:
        HRMError: as `open_regular`, and ``PARSE_ERROR`` for a file over the bound.
    """
    with open_regular(path, root=root, what=what) as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        from hrm.errors import HRMError

        if truncate:
            return data[:max_bytes]
        raise HRMError.parse_error(
            f"the {what} is larger than the {max_bytes:,} bytes hrm reads", path=os.fspath(path)
        )
    return data


def read_text(
    path: str | os.PathLike[str] | Path,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    root: Root | None = None,
    what: str = "file",
) -> str:
    """`read_bytes` decoded as UTF-8 (a byte-order mark is dropped).

    Raises:
        HRMError: as `read_bytes`, and ``PARSE_ERROR`` when the file is not UTF-8 text.
    """
    data = read_bytes(path, max_bytes=max_bytes, root=root, what=what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        from hrm.errors import HRMError

        raise HRMError.parse_error(
            f"the {what} is not UTF-8 text (byte {exc.start})", path=os.fspath(path)
        ) from exc
