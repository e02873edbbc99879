"""Web sessions ended by "Sign out", kept on the home so that no server accepts them again.

A session cookie is signed, not stored: any server on the home accepts it until it expires.
Signing out must end it everywhere, at once and after a restart too, so each server checks the
cookie against this list: ``<home>/server/sessions-revoked.json`` (0600), one entry per signed-out
session until the cookie would have expired anyway. An entry holds a digest of the session's
nonce, never the cookie, and its expiry. The file is rewritten whole under a file lock, and
re-read by a server only when it changed (one ``stat`` a request), as the key store is.

A list that cannot be read (edited by hand, a disk fault) is logged and read as empty, and the
next sign-out rewrites it: refusing every session would lock everyone out of the web view with
no way back in, while the key — the credential a session stands for — can still be revoked.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from hrm._atomic import atomic_write

__all__ = ["RevokedSessions"]

logger = logging.getLogger(__name__)


def _digest(nonce: str) -> str:
    return hashlib.sha256(nonce.encode("ascii")).hexdigest()


class RevokedSessions:
    """The signed-out sessions of one home. Thread-safe; shared by every server on the home.

    Args:
        path: The list's file (its directory must exist, owner-only).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock_path = path.with_name(f"{path.stem}.lock")
        self._mutex = threading.Lock()
        self._seen: tuple[int, int, int] | None = None
        self._revoked: dict[str, int] = {}

    def revoke(self, nonce: str, expires: int) -> None:
        """End the session `nonce` (valid until `expires`) for every server, from now on."""
        now = time.time()
        with self._locked():
            entries = {d: e for d, e in self._read().items() if e >= now}  # expired: moot
            entries[_digest(nonce)] = expires
            atomic_write(self.path, json.dumps({"revoked": entries}, indent=0) + "\n")
            self._seen = None

    def is_revoked(self, nonce: str) -> bool:
        """Whether the session `nonce` was signed out."""
        with self._mutex:
            self._refresh()
            return _digest(nonce) in self._revoked

    def _refresh(self) -> None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._seen, self._revoked = None, {}
            return
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if stamp != self._seen:
            self._revoked = self._read()
            self._seen = stamp

    def _read(self) -> dict[str, int]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            return {str(d): int(e) for d, e in raw["revoked"].items()}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            logger.error(
                "the list of signed-out web sessions %s cannot be read (%s): read as empty; "
                "the next sign-out rewrites it", self.path, exc,
            )
            return {}

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            with self._mutex:
                yield
        finally:
            os.close(fd)  # closing drops the flock
