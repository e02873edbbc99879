"""A full disk: writes fail cleanly, nothing is half-written, nothing acknowledged is lost.

Mounts a small tmpfs (only as root; the fault is skipped otherwise), builds a home in it,
fills the rest of the space, and then keeps writing — turns through the facade, learnings,
ledger appends — until each fails. While the disk is full, `verify_home` must work (it writes
nothing). Then the filler is removed and the home must verify, hold every acknowledged write,
and rebuild to an equal memory.db.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class FullDiskResult:
    """What happened when the disk filled up."""

    ran: bool = False
    reason: str = ""
    acknowledged: int = 0
    refused: dict[str, str] = field(default_factory=dict)
    """Per writer: the error that refused its next write (one line)."""
    lost: int = 0
    verified_while_full: bool | None = None
    verified_after: bool | None = None
    rebuild_equal: bool | None = None

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def can_mount() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("mount") is not None


def run(root: Path, *, size_mb: int = 8) -> FullDiskResult:
    result = FullDiskResult()
    if not can_mount():
        result.reason = "skipped: mounting a tmpfs needs root"
        return result
    mount = root / "tmpfs"
    mount.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(mount)],
                   check=True)
    try:
        _fill_and_write(mount, result)
    finally:
        subprocess.run(["umount", str(mount)], check=False)
    result.ran = True
    return result


def _fill_and_write(mount: Path, result: FullDiskResult) -> None:
    from sigkill import rebuild_equal

    from hrm import HRM
    from hrm.errors import HRMError
    from hrm.home import HRMHome, initialize
    from hrm.storage.home_verify import verify_home

    home = HRMHome(initialize(mount / "home").path)
    acked_turns: list[int] = []
    with HRM.open(home.root, llm="offline") as hrm:
        for n in range(3):
            hrm.turn(f"Warm-up {n}: how do I tag a release?")
            acked_turns.append(hrm.turn_number)
        filler = _fill(mount, leave=384 * 1024)
        for n in range(400):
            try:
                hrm.turn(f"[full-{n}] What should we check next about the cache?")
                acked_turns.append(hrm.turn_number)
            except HRMError as exc:
                result.refused["turn"] = f"{exc.code.value}: {exc.message[:120]}"
                break
        result.refused.setdefault("turn", "never refused: the disk did not fill")
    acked_learnings = _learn_until_full(home, result)
    result.acknowledged = len(acked_turns) + len(acked_learnings)
    result.verified_while_full = verify_home(home).ok
    filler.unlink()
    result.verified_after = verify_home(home).ok
    result.lost = _lost(home, acked_turns, acked_learnings)
    result.rebuild_equal = rebuild_equal(home.root)


def _fill(mount: Path, *, leave: int) -> Path:
    """Fill the filesystem but `leave` bytes; returns the filler file."""
    stat = os.statvfs(mount)
    free = stat.f_bavail * stat.f_frsize
    filler = mount / "filler"
    with open(filler, "wb", buffering=0) as fh:
        remaining = max(0, free - leave)
        try:
            while remaining > 0:
                chunk = min(remaining, 1 << 16)
                remaining -= fh.write(b"\0" * chunk) or chunk
        except OSError:  # the filesystem counts blocks its own way: full is full
            pass
    return filler


def _learn_until_full(home: object, result: FullDiskResult) -> list[str]:
    from hrm.continuity.learnings import LearningsRepository
    from hrm.continuity.learnings_types import LearningInput
    from hrm.errors import HRMError

    acked: list[str] = []
    try:
        with LearningsRepository.open(home, embeddings="off") as repo:  # type: ignore[arg-type]
            for n in range(2000):
                text = f"Full disk learning {n}: retry with backoff {n * 7919 % 1000}"
                acked.append(repo.store_learning(
                    LearningInput(content=text, type="WORKING_SOLUTION")).id)
    except HRMError as exc:
        result.refused["learning"] = f"{exc.code.value}: {exc.message[:120]}"
    return acked


def _lost(home: object, turns: list[int], learnings: list[str]) -> int:
    from hrm.storage import Database, Ledger

    with Ledger(home.decision_ledger("ADMIN"), read_only=True) as ledger:  # type: ignore[attr-defined]
        numbers = {int(r.data["turn"]) for r in ledger.records() if r.kind == "turn"}
    with Database(home.memory_db) as db:  # type: ignore[attr-defined]
        with db.transaction():
            pass
        ids = {str(r["id"]) for r in db.execute("SELECT id FROM learnings")}
    return sum(t not in numbers for t in turns) + sum(i not in ids for i in learnings)
