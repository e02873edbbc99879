"""Salience anchors: HO3 records of what matters to a person (004 §9 Flow A, "priority probe").

An anchor is an append-only record in the governance ledger (``HOT/ledger/governance.jsonl``),
kind ``salience_anchor``; retiring one appends ``salience_anchor_retired``. Anchors may apply to
every stack or to one agent class; a ``must_mention`` anchor is always surfaced first by the
stacks whose attention templates probe for anchors (``ledger_query`` with
``filter: salience_anchors``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hrm._process import new_id
from hrm.errors import HRMError
from hrm.home import HRMHome, parse_agent_class
from hrm.storage.ledger import Ledger, LedgerRecord

__all__ = ["add_anchor", "read_anchors", "retire_anchor"]


def add_anchor(
    home: HRMHome,
    text: str,
    *,
    agent_class: str | None = None,
    must_mention: bool = False,
    tags: list[str] | None = None,
) -> dict[str, Any]:
    """Record a salience anchor in HO3; returns it (with its id ``anc_<hex>``)."""
    if not text.strip():
        raise HRMError.validation_failed("A salience anchor needs text", field="text")
    if agent_class is not None:
        parse_agent_class(agent_class)
    anchor = {
        "id": new_id("anc", 12),
        "text": text.strip()[:500],
        "agent_class": agent_class,
        "must_mention": must_mention,
        "tags": list(tags or []),
    }
    with Ledger(home.governance_ledger) as ledger:
        ledger.append("salience_anchor", anchor)
        ledger.commit()
    return anchor


def retire_anchor(home: HRMHome, anchor_id: str, reason: str = "") -> None:
    """Retire an anchor (a new record; nothing is edited or deleted)."""
    with Ledger(home.governance_ledger) as ledger:
        ledger.append("salience_anchor_retired", {"id": anchor_id, "reason": reason})
        ledger.commit()


def read_anchors(
    path: Path, *, kind: str = "salience_anchor", agent_class: str | None = None
) -> list[dict[str, Any]]:
    """Live anchors in a ledger that apply to `agent_class` (all when None), oldest first.

    A stack whose attention probes for anchors asks every turn, and the governance ledger
    grows with every stack opened and closed: the live anchors are kept per ledger and kind,
    and only records appended since are read (none while the file is unchanged). A ledger
    rewritten in place (a forget, a repair) is read again whole (D395).
    """
    try:
        stat = path.stat()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise HRMError.validation_failed(
            f"Cannot read {path}: {exc.strerror}", path=str(path)
        ) from exc
    key = (str(path), kind)
    stamp = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
    with _SEEN_LOCK:
        seen = _SEEN.get(key)
        if seen is None or seen.stamp != stamp:
            seen = _catch_up(path, kind, seen, stamp)
            _SEEN[key] = seen
        live = list(seen.anchors.values())
    return [
        dict(anchor) for anchor in live
        if agent_class is None or anchor.get("agent_class") in (None, agent_class)
    ]


@dataclass
class _Seen:
    """What one ledger held of one kind of anchor, as of its file's `stamp`."""

    stamp: tuple[int, int, int]
    last: LedgerRecord | None
    anchors: dict[str, dict[str, Any]] = field(default_factory=dict)


_SEEN: dict[tuple[str, str], _Seen] = {}
_SEEN_LOCK = threading.Lock()


def _catch_up(
    path: Path, kind: str, seen: _Seen | None, stamp: tuple[int, int, int]
) -> _Seen:
    """`seen` brought up to the ledger's end: the records after its last, or all of them when
    the file was replaced, shortened or changed before that record."""
    with Ledger(path) as ledger:
        if seen is not None and seen.last is not None and stamp[0] == seen.stamp[0] \
                and stamp[1] >= seen.stamp[1]:
            try:
                anchors = dict(seen.anchors)
                last = _apply(ledger.records_after(seen.last), kind, anchors, seen.last)
                return _Seen(stamp, last, anchors)
            except HRMError:
                pass  # rewritten before the record we knew: read it all
        anchors = {}
        last = _apply(ledger.records(), kind, anchors, None)
        return _Seen(stamp, last, anchors)


def _apply(
    records: Iterable[LedgerRecord],
    kind: str,
    anchors: dict[str, dict[str, Any]],
    last: LedgerRecord | None,
) -> LedgerRecord | None:
    for record in records:
        last = record
        if record.kind == kind:
            anchors[str(record.data.get("id"))] = dict(record.data)
        elif record.kind == f"{kind}_retired":
            anchors.pop(str(record.data.get("id")), None)
    return last
