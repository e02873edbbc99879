"""`verify_home` and the manifest: deleted, cut and re-anchored ledgers show, read-only."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hrm.home import HRMHome, initialize
from hrm.storage import Database, Ledger
from hrm.storage.home_verify import verify_home
from hrm.storage.manifest import LEDGER_CREATED_KIND, read_manifest

DECISIONS = "HO2/ledger/ADMIN/workorder.jsonl"


@pytest.fixture
def home(tmp_path: Path) -> HRMHome:
    h = HRMHome(initialize(tmp_path / "home").path)
    for name, count in ((DECISIONS, 4), ("HO1/ledger/ADMIN/worker.jsonl", 2)):
        with Ledger(h.root / name) as ledger:
            for i in range(count):
                ledger.append("turn", {"i": i})
    return h


def problems(home: HRMHome) -> list[str]:
    report = verify_home(home)
    return [p.describe() for p in report.problems if not p.warning] + [
        r.describe() for r in report.ledgers if not r.ok
    ]


def cut(path: Path, keep: int) -> None:
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:keep]))


def test_a_sound_home_verifies_and_the_manifest_holds_every_head(home: HRMHome) -> None:
    assert verify_home(home).ok
    heads = read_manifest(home.root)
    assert heads is not None and heads[DECISIONS].seq == 4
    with Ledger(home.governance_ledger, read_only=True) as governance:
        created = [r.data["path"] for r in governance.records() if r.kind == LEDGER_CREATED_KIND]
    assert sorted(created) == ["HO1/ledger/ADMIN/worker.jsonl", DECISIONS]


def test_a_deleted_ledger_is_reported(home: HRMHome) -> None:
    path = home.root / DECISIONS
    path.unlink()
    path.with_name(path.name + ".anchor").unlink()
    assert any(f"{DECISIONS}: missing" in p for p in problems(home))


def test_a_deleted_ledger_is_reported_even_without_the_manifest(home: HRMHome) -> None:
    (home.root / DECISIONS).unlink()
    (home.root / "HOT/ledger/manifest.json").unlink()
    found = problems(home)
    assert any("governance ledger records its creation" in p for p in found), found


def test_a_cut_ledger_whose_anchor_was_deleted_is_reported(home: HRMHome) -> None:
    path = home.root / DECISIONS
    cut(path, 2)
    path.with_name(path.name + ".anchor").unlink()
    found = problems(home)
    assert any("records were cut from the end" in p for p in found), found
    assert any("vouches for seq 4" in p for p in found), found


def test_an_anchor_that_does_not_match_is_reported(home: HRMHome) -> None:
    path = home.root / DECISIONS
    anchor = path.with_name(path.name + ".anchor")
    data = json.loads(anchor.read_text())
    data["hash"] = "f" * 64
    anchor.write_text(json.dumps(data).ljust(255) + "\n")
    found = problems(home)
    assert any("does not match the hash its anchor recorded" in p for p in found), found


def test_a_ledger_rewritten_with_a_new_anchor_is_caught_by_the_manifest(home: HRMHome) -> None:
    path = home.root / DECISIONS
    elsewhere = home.root.parent / "forged.jsonl"
    with Ledger(elsewhere) as forged:  # a consistent new chain and anchor, made outside
        for i in range(4):
            forged.append("turn", {"i": f"forged {i}"})
    os.replace(elsewhere, path)
    os.replace(elsewhere.with_name("forged.jsonl.anchor"), path.with_name(path.name + ".anchor"))
    found = problems(home)
    assert any("does not match the hash the manifest recorded" in p for p in found), found


def test_verify_needs_no_memory_db_and_tolerates_a_damaged_one(home: HRMHome) -> None:
    assert not home.memory_db.exists() and verify_home(home).ok
    home.memory_db.write_bytes(b"SQLite format 3\x00" + b"\x07" * 4000)
    report = verify_home(home)
    assert report.ok
    assert any(p.warning and p.ledger == "memory.db" for p in report.problems)


def test_verify_writes_nothing(home: HRMHome) -> None:
    with Database(home.memory_db) as db:
        db.migrate("test.t", ["CREATE TABLE t (k TEXT PRIMARY KEY);"])
        db.execute("INSERT INTO t (k) VALUES ('a')")
    before = {p: p.stat().st_mtime_ns for p in home.root.rglob("*") if p.is_file()}
    assert verify_home(home).ok
    after = {p: p.stat().st_mtime_ns for p in home.root.rglob("*") if p.is_file()}
    assert after == before


def test_verify_reports_memory_db_ahead_of_its_ledger(home: HRMHome) -> None:
    with Database(home.memory_db) as db:
        db.migrate("test.t", ["CREATE TABLE t (k TEXT PRIMARY KEY);"])
        db.execute("INSERT INTO t (k) VALUES ('a')")
        db.execute("INSERT INTO t (k) VALUES ('b')")
    memory = home.root / "HOT/ledger/memory.jsonl"
    cut(memory, len(memory.read_bytes().splitlines()) - 1)
    memory.with_name("memory.jsonl.anchor").unlink()
    manifest = json.loads((home.root / "HOT/ledger/manifest.json").read_text())
    del manifest["ledgers"]["HOT/ledger/memory.jsonl"]
    (home.root / "HOT/ledger/manifest.json").write_text(json.dumps(manifest))
    found = problems(home)
    assert any("memory.db has applied record" in p for p in found), found


def _can_mount() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("mount") is not None


@pytest.mark.skipif(not _can_mount(), reason="mounting a small tmpfs needs root")
def test_verify_works_on_a_full_disk(tmp_path: Path) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], check=True)
    try:
        h = HRMHome(initialize(mount / "home").path)
        with Ledger(h.root / DECISIONS) as ledger:
            for i in range(5):
                ledger.append("turn", {"i": i})
        with Database(h.memory_db) as db:
            db.migrate("test.t", ["CREATE TABLE t (k TEXT PRIMARY KEY);"])
            db.execute("INSERT INTO t (k) VALUES ('a')")
        filler = mount / "filler"
        with open(filler, "wb") as fh, pytest.raises(OSError):
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        report = verify_home(h)
        assert report.ok, [p.describe() for p in report.problems]
        assert {r.path.name for r in report.ledgers} >= {"workorder.jsonl", "memory.jsonl"}
    finally:
        subprocess.run(["umount", str(mount)], check=False)
