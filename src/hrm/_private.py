"""Owner-only files and folders: everything in the hrm home is 0700 (folders) or 0600 (files).

The home holds conversations, learnings and ledgers; issue 32 found ``memory.db`` created 0644
and read by another local user. Modes are set when a thing is created, whatever the umask:
``mkdir``/``open`` ask for the private mode (the umask can only take bits away) and a
``chmod`` puts back exactly that mode, since a umask may also take the owner's own bits. SQLite
creates its database with 0644 and its ``-wal`` and ``-shm`` files with the database's mode, so
the database is created here first, 0600, and SQLite's sidecars follow it.

On open, a home or a database found looser than that is tightened, with one warning (through
`logging`, never print: a hook's stdout is its protocol's).
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False  # `hrm hook` opens the home through here: only `os` at import time
if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "PRIVATE_DIR_MODE",
    "PRIVATE_FILE_MODE",
    "make_private_dirs",
    "open_new_private",
    "prepare_private_file",
    "tighten_home",
    "write_private",
]

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
_SQLITE_SIDECARS = ("-wal", "-shm", "-journal")


def make_private_dirs(path: str | os.PathLike[str]) -> None:
    """``mkdir -p`` whose every created folder is 0700, whatever the umask.

    Folders that already exist are left as they are (`tighten_home` deals with a loose home).
    """
    missing: list[str] = []
    current = os.fspath(path)
    while current and not os.path.isdir(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_DIR_MODE)
        except FileExistsError:
            continue  # another process made it first
        os.chmod(folder, PRIVATE_DIR_MODE)


def open_new_private(path: str | os.PathLike[str]) -> int:
    """Create `path` (which must not exist) 0600 and return a descriptor open for writing."""
    fd = os.open(
        path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
        PRIVATE_FILE_MODE,
    )
    os.fchmod(fd, PRIVATE_FILE_MODE)
    return fd


def write_private(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to `path` (created or truncated) as an owner-only file; not atomic.

    For temporary files renamed into place by the caller, where `hrm._atomic` would import
    `tempfile` (too slow for a hook) and fsync (not needed for a cache).
    """
    fd = os.open(
        path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0),
        PRIVATE_FILE_MODE,
    )
    try:
        os.fchmod(fd, PRIVATE_FILE_MODE)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def prepare_private_file(path: str | os.PathLike[str]) -> None:
    """Before SQLite opens `path`: its folder made, the file created 0600 if missing, and the
    file and its ``-wal``/``-shm`` sidecars tightened if another user could read them."""
    try:
        make_private_dirs(os.path.dirname(os.path.abspath(path)))
        if not os.path.exists(path):
            # SQLite reads an empty file as an empty database.
            _create_private(path)
    except OSError:
        return  # a read-only or full disk: SQLite's own error will say so
    loosened = [
        candidate
        for candidate in (os.fspath(path), *(os.fspath(path) + s for s in _SQLITE_SIDECARS))
        if _tighten(candidate, PRIVATE_FILE_MODE)
    ]
    if loosened:
        _warn(
            "%s was readable by other users; made it owner-only (%s)",
            os.fspath(path), ", ".join(os.path.basename(p) for p in loosened),
        )


def _create_private(path: str | os.PathLike[str]) -> bool:
    try:
        os.close(open_new_private(path))
    except FileExistsError:
        return False
    return True


def tighten_home(root: str | os.PathLike[str] | Path, *, warn: bool = True) -> int:
    """Make a home found looser than 0700 owner-only, with everything in it; return how many
    paths changed (0 when the home was private already, the usual case: one ``stat``).

    Symlinks are not followed: what one points at is not the home's.
    """
    base = os.fspath(root)
    try:
        mode = os.stat(base).st_mode
    except OSError:
        return 0
    if not mode & 0o077:
        return 0
    changed = int(_tighten(base, PRIVATE_DIR_MODE))
    for folder, dirs, files in os.walk(base):
        changed += sum(_tighten(os.path.join(folder, d), PRIVATE_DIR_MODE) for d in dirs)
        changed += sum(_tighten(os.path.join(folder, f), PRIVATE_FILE_MODE) for f in files)
    if warn:
        _warn(
            home_tightened_message(base, stat.S_IMODE(mode), changed),
        )
    return changed


def home_tightened_message(root: str, mode: int, changed: int) -> str:
    """The one warning `tighten_home` gives (a hook writes it to its own log instead)."""
    return (
        f"hrm home {root} was open to other users (mode {oct(mode)}); made it and "
        f"{max(changed - 1, 0)} paths in it owner-only"
    )


def _tighten(path: str, private: int) -> bool:
    """Take group and other bits off `path` (not through a symlink); True if any were set."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISLNK(info.st_mode) or not info.st_mode & 0o077:
        return False
    mode = PRIVATE_DIR_MODE if stat.S_ISDIR(info.st_mode) else private
    try:
        os.chmod(path, mode)
    except OSError:
        return False
    return True


def _warn(message: str, *args: object) -> None:
    import logging  # deferred: the hook path imports it only when there is something to say

    logging.getLogger("hrm.home").warning(message, *args)
