"""The data the decisions API returns and the web view shows: what ``hrm … --json`` prints.

Each function is blocking (SQLite, ledger files) and runs in a turn thread. Reads open the
stack's stores read-side, as the CLI's commands do, without opening the stack (no session
starts for a look). Changes (resolve a problem, roll canon back) go through the stack's open
`HRM`, with the stack's slot held, so they are ordered with its turns.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrm.cli.why import read_turn
from hrm.config import load_config
from hrm.errors import HRMError
from hrm.governance.preferences import is_retracted
from hrm.governance.problems import ProblemRegistry, ProblemStatus
from hrm.home import HRMHome
from hrm.memory.bus import MemoryBus
from hrm.storage.ledger import Ledger
from hrm.storage.stack_db import open_stack_db

if TYPE_CHECKING:
    from hrm.pipeline import HRM
    from hrm.server.keys import Principal

__all__ = [
    "CanonStatus",
    "canon",
    "canon_entry",
    "canon_status",
    "ledgers_of",
    "list_problems",
    "recent_turns",
    "resolve_problem",
    "rollback_canon",
    "search_learnings",
    "turn_why",
    "verify_ledgers",
    "working_sets",
]

_RECORDS_PER_TURN = 40
"""Ledger records read back per turn wanted (a turn appends a few dozen at most)."""


def recent_turns(home: HRMHome, agent_class: str, limit: int = 20) -> list[dict[str, Any]]:
    """The stack's last turns, oldest first: as `HRM.history` and ``/history`` give them."""
    path = home.decision_ledger(agent_class)
    if not path.is_file():
        return []
    with Ledger(path, read_only=True) as ledger:
        records = [r for r in ledger.tail(limit * _RECORDS_PER_TURN) if r.kind == "turn"]
    return [
        {
            "turn": r.data.get("turn"), "ts": r.ts, "input": r.data.get("input"),
            "response": r.data.get("response"), "action": r.data.get("action"),
            "asked": bool(r.data.get("asked")), "seq": r.seq, "hash": r.hash,
        }
        for r in records[-limit:]
    ]


def turn_why(home: HRMHome, agent_class: str, turn: int | None) -> dict[str, Any]:
    """One turn's decision record, events and explanation: `hrm why N --json`."""
    return read_turn(home.decision_ledger(agent_class), agent_class, turn).to_dict()


def list_problems(
    home: HRMHome, agent_class: str, *, include_resolved: bool = False
) -> list[dict[str, Any]]:
    """The stack's problems, the active one first: `hrm problems list --json`."""
    db = open_stack_db(home, agent_class)
    try:
        problems = [
            p.to_record() for p in ProblemRegistry(db, agent_class).list()
            if include_resolved or p.status is not ProblemStatus.RESOLVED
        ]
    finally:
        db.close()
    problems.sort(key=lambda p: p["status"] != "active")
    return problems


def resolve_problem(hrm: HRM, problem_id: str) -> dict[str, Any]:
    """Resolve a problem through the stack (recorded in its ledger): `hrm problems resolve`."""
    record: dict[str, Any] = hrm.resolve_problem(problem_id).to_record()
    return record


class CanonStatus(StrEnum):
    """What a canon entry's latest version says: the ``status`` of ``/v1/hrm/canon``.

    Canon is append-only, so taking an entry back is a new version whose value marks it
    retracted (``{"retracted": true, "forgotten": "<what the person said>"}``, as `hrm memory
    shared list --json` prints it): a client must not read that marker as the entry's value.
    """

    CURRENT = "current"
    """The value is in force."""
    FORGOTTEN = "forgotten"
    """The person asked hrm to forget it (D77); rolling back to an earlier version restores it."""
    REPLACED = "replaced"
    """A preference the person replaced with another (D70), named by ``replaced_by``."""
    RETRACTED = "retracted"
    """Taken back for another reason."""


def canon_status(value: Any) -> CanonStatus:
    """The status of a canon version's value."""
    if not is_retracted(value):
        return CanonStatus.CURRENT
    if "forgotten" in value:
        return CanonStatus.FORGOTTEN
    if "replaced_by" in value:
        return CanonStatus.REPLACED
    return CanonStatus.RETRACTED


def _with_status(ref: dict[str, Any]) -> dict[str, Any]:
    """`hrm memory shared … --json`'s object, and its ``status``."""
    return {**ref, "status": canon_status(ref.get("value")).value}


def canon(home: HRMHome, agent_class: str) -> list[dict[str, Any]]:
    """Every shared reference with its latest version (`hrm memory shared list --json`) and
    its status: ``current``, or ``forgotten``… when that version takes it back."""
    bus = MemoryBus.open(home, agent_class)
    try:
        return [
            _with_status(bus.shared.get(key).to_dict())
            for key in bus.shared.keys()  # noqa: SIM118
        ]
    finally:
        bus.close()


def canon_entry(home: HRMHome, agent_class: str, key: str) -> dict[str, Any]:
    """One reference's versions (`hrm memory shared history`) and citation (`… cite`)."""
    bus = MemoryBus.open(home, agent_class)
    try:
        versions = bus.shared.history(key)
        if not versions:
            raise HRMError.not_found(
                "shared reference", key, f"it was never set for {agent_class}"
            )
        return {
            "key": key,
            "status": canon_status(versions[-1].value).value,
            "versions": [v.to_dict() for v in versions],
            "citation": bus.shared.cite(key),
        }
    finally:
        bus.close()


def rollback_canon(hrm: HRM, key: str, version: int, *, source: str) -> dict[str, Any]:
    """Restore `version` of `key` as a new version: `hrm memory shared rollback --json`."""
    hrm.bus.rollback_shared(key, version, source=source)
    hrm.bus.commit()
    return _with_status(hrm.bus.shared.get(key).to_dict())


def working_sets(home: HRMHome, agent_class: str) -> list[dict[str, Any]]:
    """The live working sets: `hrm memory working list --json`."""
    bus = MemoryBus.open(home, agent_class)
    try:
        return [w.to_dict() for w in bus.working.list_active()]
    finally:
        bus.close()


def search_learnings(home: HRMHome, text: str, *, limit: int = 10) -> dict[str, Any]:
    """Learnings matching `text`, best first: `hrm memory search TEXT --json`."""
    from hrm.continuity.learnings import LearningsRepository
    from hrm.continuity.learnings_types import SearchQuery

    mode = load_config(home).config.continuity.embeddings
    with LearningsRepository.open(home, embeddings=mode) as repo:
        results: dict[str, Any] = repo.search_memories(
            SearchQuery(text=text, limit=limit)
        ).to_dict()
    return results


def ledgers_of(home: HRMHome, principal: Principal) -> list[Path]:
    """The ledgers a key may verify: every ledger for an admin, its own stack's for a user."""
    if principal.admin:
        return home.all_ledgers()
    own = (
        home.decision_ledger(principal.agent_class),
        home.execution_ledger(principal.agent_class),
        home.episodic_ledger(principal.agent_class),
        home.stack_memory_ledger(principal.agent_class),  # its own database's journal (D321)
    )
    return [path for path in own if path.is_file()]


def verify_ledgers(home: HRMHome, paths: list[Path]) -> dict[str, Any]:
    """Each ledger's chain checked: `hrm ledger verify --json`, paths relative to the home."""
    reports = []
    for path in paths:
        with Ledger(path, read_only=True) as ledger:
            report = ledger.verify().to_dict()
        report["path"] = _relative(path, home)
        reports.append(report)
    return {"ok": all(r["ok"] for r in reports), "ledgers": reports}


def _relative(path: Path, home: HRMHome) -> str:
    try:
        return str(path.relative_to(home.root))
    except ValueError:
        return str(path)
