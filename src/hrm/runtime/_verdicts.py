"""Screening verdicts remembered by text, so a hook need not load the screening to repeat one.

Loading the injection screening (its modules, its phrasings) costs a hook process ~20 ms, as
much as the rest of a prompt's hook; the learnings a prompt recalls are mostly ones an earlier
hook already judged. This file, in the home's cache directory, maps a digest of each judged
line to whether it was flagged, stamped with the phrasings' files (size and modification time),
so an edit to the phrasings or an upgrade of hrm judges everything afresh. A text never judged,
or judged under other phrasings, is screened as usual (D142).

The hook path imports this module: standard library only, BLAKE2b and ``json`` on use.
"""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False  # hook processes import this module: no typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

__all__ = ["VerdictCache"]

_DATA = Path(__file__).resolve().parent.parent / "data" / "injection"
_MAX_ENTRIES = 20_000
"""Verdicts kept; past this the file starts afresh (a digest is 32 characters, a verdict one)."""


class VerdictCache:
    """Verdicts in one JSON file, loaded on first use and written back only when they grew.

    Not shared between threads; a lost write (two hooks saving at once) only costs a later
    hook a screening.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._verdicts: dict[str, bool] | None = None
        self._stamp = ""
        self._dirty = False

    def get(self, text: str) -> bool | None:
        """Whether ``text`` was flagged, or ``None`` when it was never judged."""
        return self._load().get(_digest(text))

    def put(self, text: str, flagged: bool) -> None:
        """Remember a verdict (written by `save`)."""
        verdicts = self._load()
        if len(verdicts) >= _MAX_ENTRIES:
            verdicts.clear()
        key = _digest(text)
        if verdicts.get(key) is not flagged:
            verdicts[key] = flagged
            self._dirty = True

    def save(self) -> None:
        """Write the verdicts if any were added: a private file, replaced atomically."""
        if not self._dirty or self._verdicts is None:
            return
        import json

        body = json.dumps({"phrasings": self._stamp, "flagged": self._verdicts})
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, body.encode("ascii"))
        finally:
            os.close(fd)
        os.replace(temporary, self.path)
        self._dirty = False

    def _load(self) -> dict[str, bool]:
        if self._verdicts is not None:
            return self._verdicts
        self._stamp = _phrasings_stamp()
        self._verdicts = {}
        try:
            raw = self.path.read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError):
            return self._verdicts
        import json

        try:
            data = json.loads(raw)
        except ValueError:
            return self._verdicts
        if isinstance(data, dict) and data.get("phrasings") == self._stamp:
            flagged = data.get("flagged")
            if isinstance(flagged, dict):
                self._verdicts = {k: v for k, v in flagged.items() if isinstance(v, bool)}
        return self._verdicts


def _digest(text: str) -> str:
    digest: str = _blake2b()(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return digest


def _blake2b() -> Any:
    """BLAKE2b from CPython's own `_blake2` module when it has one: `hashlib` loads OpenSSL
    (`_hashlib`) first, 2.3 ms of a prompt hook's ~33 (measured with ``-X importtime``), for a
    hash it then takes from `_blake2` anyway."""
    try:
        from _blake2 import blake2b
    except ImportError:  # another Python: the public module
        from hashlib import blake2b
    return blake2b


def _phrasings_stamp(files: Iterable[Path] | None = None) -> str:
    """Size and modification time of every phrasing file and of the screening's code."""
    here = Path(__file__).resolve().parent
    code = [here / name for name in ("injection.py", "_phrasings.py", "normalise.py")]
    parts = []
    for path in [*sorted(files if files is not None else _DATA.iterdir()), *code]:
        try:
            stat = path.stat()
        except OSError:
            continue
        parts.append(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return ";".join(parts)
