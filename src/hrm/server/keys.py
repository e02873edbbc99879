"""API keys of `hrm serve`: created and revoked by the person, checked on every request.

A key is ``sk-hrm-<id>-<secret>``: the id finds its entry, the secret (256 random bits) is
checked against a salted SHA-256 of it. A slow password hash (scrypt, argon2) protects
passwords people choose; a key with 256 random bits cannot be guessed from its hash, and a
fast check keeps a request's overhead in microseconds (D201). The ``sk-`` prefix is the one the
secret scrubber already knows, so a key pasted into a chat is scrubbed before any write.

The entries live in ``<home>/server/keys.json`` (0600, its directory 0700), written atomically
under a file lock so that the CLI can create and revoke keys while servers read them. Each
creation and revocation is first a record in the governance ledger (who, which stack, never the
key or its hash). A server re-reads the file when it changes, so a revoked key stops working at
its next request, in every worker.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import secrets
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from hrm._atomic import atomic_write
from hrm._private import make_private_dirs
from hrm.errors import HRMError
from hrm.home import HRMHome, parse_agent_class
from hrm.storage.ledger import Ledger

__all__ = ["KEY_PREFIX", "ApiKey", "CreatedKey", "KeyStore", "Principal", "server_dir"]

KEY_PREFIX = "sk-hrm-"
_ID_BYTES = 6
_SECRET_BYTES = 32


def server_dir(home: HRMHome) -> Path:
    """Where the server keeps its keys and session secret (created 0700)."""
    path = home.root / "server"
    make_private_dirs(path)  # the home too, if it is new: 0700 from the start, never loosened
    with contextlib.suppress(OSError):
        path.chmod(0o700)
    return path


@dataclass(frozen=True, kw_only=True)
class Principal:
    """Who a request acts for: one key's user and the one stack that key maps to."""

    user: str
    agent_class: str
    """``RESIDENT:<user>`` for a user key, ``ADMIN`` for an admin key (D202)."""
    admin: bool
    key_id: str
    """The key's id (``-`` with ``--no-auth``)."""


@dataclass(frozen=True, kw_only=True)
class ApiKey:
    """One stored key: everything but the secret, which is kept only as a salted hash."""

    id: str
    user: str
    admin: bool
    agent_class: str
    salt: str
    digest: str
    created_at: str
    revoked_at: str | None = None

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def listed(self) -> dict[str, object]:
        """What `hrm serve keys list` shows: never the salt or the digest."""
        return {
            "id": self.id, "user": self.user, "admin": self.admin,
            "agent_class": self.agent_class, "created_at": self.created_at,
            "revoked_at": self.revoked_at,
        }

    def principal(self) -> Principal:
        return Principal(
            user=self.user, agent_class=self.agent_class, admin=self.admin, key_id=self.id
        )


@dataclass(frozen=True, kw_only=True)
class CreatedKey:
    """A new key: the entry stored and the key itself, shown once and never stored."""

    entry: ApiKey
    token: str

    def __repr__(self) -> str:  # the token must never reach a log line or a traceback
        return f"CreatedKey(entry={self.entry!r}, token='sk-hrm-…')"


def _digest(salt: str, secret: str) -> str:
    return hashlib.sha256(bytes.fromhex(salt) + secret.encode("utf-8")).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class KeyStore:
    """The home's API keys. Thread-safe; several processes may share one home.

    Args:
        home: The hrm home.
    """

    def __init__(self, home: HRMHome) -> None:
        self.home = home
        self.path = server_dir(home) / "keys.json"
        self._lock_path = self.path.with_name("keys.lock")
        self._mutex = threading.Lock()
        self._seen: tuple[int, int, int] | None = None
        self._keys: dict[str, ApiKey] = {}

    # ── the person's commands ──────────────────────────────────────────────

    def create(self, user: str, *, admin: bool = False) -> CreatedKey:
        """Make a key for `user` (``RESIDENT:<user>``, or ADMIN with `admin`); return it once.

        Raises:
            HRMError: ``VALIDATION_FAILED`` for a user name that is no valid resident name.
        """
        agent_class = "ADMIN" if admin else f"RESIDENT:{user}"
        parse_agent_class(f"RESIDENT:{user}")  # the name must be one a stack can carry
        key_id = secrets.token_hex(_ID_BYTES)
        secret = secrets.token_urlsafe(_SECRET_BYTES)
        salt = secrets.token_hex(16)
        entry = ApiKey(
            id=key_id, user=user, admin=admin, agent_class=agent_class, salt=salt,
            digest=_digest(salt, secret), created_at=_now(),
        )
        with self._locked() as keys:
            self._record("serve_key_created", entry)
            keys[key_id] = entry
            self._write(keys)
        return CreatedKey(entry=entry, token=f"{KEY_PREFIX}{key_id}-{secret}")

    def revoke(self, key_id_or_user: str) -> list[ApiKey]:
        """Revoke one key by id, or every active key of a user; return the keys revoked.

        Raises:
            HRMError: ``NOT_FOUND`` when no active key has that id or user.
        """
        with self._locked() as keys:
            chosen = [
                k for k in keys.values()
                if k.is_active and key_id_or_user in (k.id, k.user)
            ]
            if not chosen:
                raise HRMError.not_found(
                    "active key", key_id_or_user, "`hrm serve keys list` shows the keys"
                )
            revoked = []
            for entry in chosen:
                done = ApiKey(**{**asdict(entry), "revoked_at": _now()})
                self._record("serve_key_revoked", done)
                keys[entry.id] = done
                revoked.append(done)
            self._write(keys)
        return revoked

    def list(self) -> list[ApiKey]:
        """Every key, active and revoked, oldest first."""
        with self._mutex:
            self._refresh()
            return sorted(self._keys.values(), key=lambda k: (k.created_at, k.id))

    # ── the server's check ─────────────────────────────────────────────────

    def verify(self, token: str) -> Principal | None:
        """The principal of an active key, or None for anything else (never raises)."""
        if not token.startswith(KEY_PREFIX):
            return None
        key_id, _, secret = token[len(KEY_PREFIX):].partition("-")
        if not key_id or not secret:
            return None
        with self._mutex:
            try:
                self._refresh()
            except HRMError:
                return None  # an unreadable store admits no one
            entry = self._keys.get(key_id)
        if entry is None or not entry.is_active:
            return None
        if not hmac.compare_digest(_digest(entry.salt, secret), entry.digest):
            return None
        return entry.principal()

    def principal_of(self, key_id: str) -> Principal | None:
        """The principal of an active key by id (a signed-in browser carries only the id)."""
        with self._mutex:
            try:
                self._refresh()
            except HRMError:
                return None
            entry = self._keys.get(key_id)
        return entry.principal() if entry is not None and entry.is_active else None

    def count_active(self) -> int:
        return sum(1 for k in self.list() if k.is_active)

    # ── storage ────────────────────────────────────────────────────────────

    def _refresh(self) -> None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._seen, self._keys = None, {}
            return
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if stamp == self._seen:
            return
        self._keys = self._read()
        self._seen = stamp

    def _read(self) -> dict[str, ApiKey]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            return {item["id"]: ApiKey(**item) for item in raw["keys"]}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise HRMError.parse_error(
                f"the key store cannot be read ({exc}); restore it, or remove it and create "
                "the keys again",
                path=self.path,
            ) from exc

    def _write(self, keys: dict[str, ApiKey]) -> None:
        payload = {"keys": [asdict(k) for k in sorted(keys.values(), key=lambda k: k.created_at)]}
        atomic_write(self.path, json.dumps(payload, indent=1) + "\n")  # mkstemp: 0600

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, ApiKey]]:
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            with self._mutex:
                keys = self._read()
                yield keys
                self._seen = None
        finally:
            os.close(fd)  # closing drops the flock

    def _record(self, kind: str, entry: ApiKey) -> None:
        with Ledger(self.home.governance_ledger) as ledger:
            ledger.append(kind, {
                "key_id": entry.id, "user": entry.user, "agent_class": entry.agent_class,
                "admin": entry.admin,
            })
