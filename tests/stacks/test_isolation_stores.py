"""Stack isolation below the ledgers (issue 31 item 7, D320–D323): one stack's handles, and
every connection they hold, read nothing of another stack's data; only the meta agent and HO3
read across, through `CrossStackReader`, and each such read is in the governance ledger."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from hrm import HRM
from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome, initialize
from hrm.learning.patterns import Pattern
from hrm.memory.bus import MemoryBus
from hrm.memory.types import EpisodeEntry, SynthesizedPattern
from hrm.stacks.visibility import ROLE_HO3, ROLE_META, CrossStackReader
from hrm.storage import Database, Ledger
from hrm.storage.rebuild import table_dump

B, C = "RESIDENT:b", "RESIDENT:c"
MARK = "bravo"
"""Every piece of data written to stack b carries this word; no read by another stack may."""


@dataclass(frozen=True)
class Written:
    """The ids and keys of what was written to stack b."""

    canon_key: str
    problem_id: str
    commitment_id: str
    episode_id: str
    synthesis_id: str
    pattern_id: str
    signature: dict[str, Any]
    outcome_ids: tuple[str, ...]


def write_everything(home: HRMHome) -> Written:
    """Data of every kind in stack b: turns through the facade, then each store directly."""
    with HRM.open(home.root, B, "offline") as hrm:
        hrm.turn("Remember that the bravo vault opens at nine")
        hrm.turn("Let's plan the bravo migration of the billing tables")
        hrm.turn("What should we check next about the bravo migration?")
        canon_key = next(k for k in hrm.stack.canon() if MARK in k)
        problem = hrm.focus.problem_registry.create(f"{MARK} rollout", description=MARK)
        commitment = hrm.focus.commitments.create(problem.id, f"{MARK} lease", 3)
        hrm.bus.write_to_working(problem.id, f"{MARK}-key", f"{MARK}-value")
        episode = hrm.bus.log_episode(
            EpisodeEntry(entry_type="observation", content={"note": f"{MARK} episode"})
        )
        synthesis = hrm.bus.synthesis.add_pattern(SynthesizedPattern(
            pattern_type="strategy", description=f"{MARK} synthesis", evidence_ids=[episode],
            confidence=0.6,
        ))
        hrm.bus.synthesis.weaken(synthesis, f"{MARK} miss")
        signature = {"domain": MARK, "intent": "question"}
        pattern = hrm.patterns.add_pattern(Pattern(
            id="", pattern_type="strategy", input_signature=signature,
            recommended_action={"strategy": f"{MARK}_strategy"}, confidence=0.7,
            evidence_ids=[episode], created_at=datetime.now(UTC),
        ))
        outcomes = tuple(o.id for o in hrm.feedback.outcomes())
        assert outcomes, "the turns recorded learning outcomes"
    return Written(canon_key, problem.id, commitment.id, episode, synthesis, pattern, signature,
                   outcomes)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> tuple[HRMHome, Written]:
    home = HRMHome(initialize(tmp_path_factory.mktemp("iso") / "home").path)
    for agent_class in ("ADMIN", C):
        with HRM.open(home.root, agent_class, "offline") as hrm:
            hrm.turn(f"Hello from {agent_class}")
    return home, write_everything(home)


def connections(hrm: HRM) -> Iterator[tuple[str, Database]]:
    """Every database connection a stack's handle holds, by the store that holds it."""
    s = hrm.stack
    focus = s.focus
    stores: dict[str, Any] = {
        "stack": s, "bus": s.bus, "working": s.bus.working, "shared": s.bus.shared,
        "episodic": s.bus.episodic, "synthesis": s.bus.synthesis,
        "problems": focus.problem_registry, "commitments": focus.commitments,
        "stance": focus.stance, "patterns": s.patterns, "feedback": s.feedback.store,
        "learnings": s.learnings(),
    }
    for name, store in stores.items():
        db = getattr(store, "db", None) or getattr(store, "_db", None)
        assert isinstance(db, Database), name
        yield name, db


def tables_of(db: Database) -> list[str]:
    """Every table in the database's schema (virtual tables and FTS shadows included)."""
    return [str(r[0]) for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    )]


def every_row(db: Database) -> Iterator[tuple[str, tuple[Any, ...]]]:
    """`SELECT *` of every table in the database's schema, on the store's own connection."""
    for table in tables_of(db):
        for row in db.execute(f'SELECT * FROM "{table}"'):
            yield table, tuple(row)


def leaks(value: object, written: Written) -> bool:
    text = repr(value).lower()
    ids = (written.problem_id, written.commitment_id, written.episode_id,
           written.synthesis_id, written.pattern_id, written.canon_key, *written.outcome_ids)
    return MARK in text or B.lower() in text or any(i.lower() in text for i in ids)


def attempt(call: Callable[[], object]) -> object:
    """A read's result, or the error it refused with (a refusal returns nothing)."""
    try:
        return call()
    except HRMError as exc:
        assert exc.code in (ErrorCode.NOT_FOUND, ErrorCode.VALIDATION_FAILED), exc
        return None


def public_reads(hrm: HRM, w: Written) -> dict[str, Callable[[], object]]:
    """Every store's public read methods, asked with stack b's ids and keys."""
    bus, focus, patterns = hrm.bus, hrm.focus, hrm.patterns
    return {
        "shared.get": lambda: bus.shared.get(w.canon_key),
        "shared.history": lambda: bus.shared.history(w.canon_key),
        "shared.list_versions": lambda: bus.shared.list_versions(w.canon_key),
        "shared.keys": bus.shared.keys,
        "shared.latest": bus.shared.latest,
        "shared.cite": lambda: bus.shared.cite(w.canon_key),
        "working.get": lambda: bus.working.get(w.problem_id),
        "working.list_active": bus.working.list_active,
        "working.export_summary": lambda: bus.working.export_summary(w.problem_id),
        "episodic.get": lambda: bus.episodic.get(w.episode_id),
        "episodic.get_many": lambda: bus.episodic.get_many([w.episode_id]),
        "episodic.query": lambda: bus.episodic.query(),
        "synthesis.get_pattern": lambda: bus.synthesis.get_pattern(w.synthesis_id),
        "synthesis.has": lambda: bus.synthesis.has(w.synthesis_id),
        "synthesis.search": lambda: bus.synthesis.search(),
        "synthesis.weakenings": lambda: bus.synthesis.weakenings(w.synthesis_id),
        "synthesis.evidence": lambda: bus.synthesis.get_evidence_chain(w.synthesis_id),
        "problems.get": lambda: focus.problem_registry.get(w.problem_id),
        "problems.list": focus.problem_registry.list,
        "problems.find_similar": lambda: focus.problem_registry.find_similar(
            f"{MARK} migration rollout"),
        "commitments.get": lambda: focus.commitments.get(w.commitment_id),
        "commitments.history": focus.commitments.history,
        "patterns.get_pattern": lambda: patterns.get_pattern(w.pattern_id),
        "patterns.peek": lambda: patterns.peek(w.pattern_id),
        "patterns.all_patterns": patterns.all_patterns,
        "patterns.search": lambda: patterns.search(w.signature),
        "feedback.outcomes": hrm.feedback.outcomes,
        "stack.canon": lambda: dict(hrm.stack.canon()),
    }


@pytest.mark.parametrize("observer", ["ADMIN", C])
def test_no_store_of_another_stack_reads_b_by_its_methods(
    shared: tuple[HRMHome, Written], observer: str
) -> None:
    home, written = shared
    with HRM.open(home.root, observer, "offline") as hrm:
        results = {name: attempt(read) for name, read in public_reads(hrm, written).items()}
        assert {name: got for name, got in results.items() if leaks(got, written)} == {}
        # Reads whose answer names nothing: none of b's versions, no such pattern.
        assert not results["shared.list_versions"] and not results["synthesis.has"]
        with HRM.open(home.root, B, "offline") as own:  # the same reads do find b's data
            found = {name: attempt(read) for name, read in public_reads(own, written).items()}
    assert [name for name, got in found.items() if not got] == []


@pytest.mark.parametrize("observer", ["ADMIN", C])
def test_no_connection_of_another_stack_reads_b_by_raw_sql(
    shared: tuple[HRMHome, Written], observer: str
) -> None:
    home, written = shared
    with HRM.open(home.root, observer, "offline") as hrm:
        seen: set[str] = set()
        for store, db in connections(hrm):
            seen.update(tables_of(db))
            for table, row in every_row(db):
                assert not leaks(row, written), (store, table, row)
    assert {"shared_references", "problems", "learnings"} <= seen  # the tables were read


def test_the_meta_agent_and_ho3_read_b_through_the_reader_and_it_is_recorded(
    shared: tuple[HRMHome, Written],
) -> None:
    home, written = shared
    for role in (ROLE_META, ROLE_HO3):
        reader = CrossStackReader(home, role, purpose="isolation test")
        with reader.open_db(B) as view:
            rows = view.execute("SELECT * FROM shared_references")
            assert any(leaks(tuple(r), written) for r in rows)
            with pytest.raises(HRMError):
                view.execute("DELETE FROM problems")  # read-only: SQLite refuses
    with Ledger(home.governance_ledger, read_only=True) as gov:
        reads = [r.data for r in gov.records() if r.kind == "cross_stack_read"]
    assert {(r["role"], r["agent_class"], r["ledger"]) for r in reads} >= {
        (ROLE_META, B, "memory.db"), (ROLE_HO3, B, "memory.db"),
    }


def test_a_stack_role_cannot_read_across_and_the_attempt_is_recorded(
    shared: tuple[HRMHome, Written],
) -> None:
    home, _ = shared
    with pytest.raises(HRMError) as refused:
        CrossStackReader(home, C).open_db(B)
    assert refused.value.code is ErrorCode.VISIBILITY_DENIED
    with Ledger(home.governance_ledger, read_only=True) as gov:
        assert any(r.kind == "visibility_denied" and r.data["observer"] == C
                   for r in gov.records())


def test_the_home_database_holds_no_stack_rows(shared: tuple[HRMHome, Written]) -> None:
    home, written = shared
    dump = table_dump(home.memory_db, exclude_derived=False)
    assert not leaks(dump, written)
    assert {p.relative_to(home.root).as_posix() for p in home.memory_databases()} == {
        "memory.db", "HO2/ledger/ADMIN/memory.db", "HO2/ledger/RESIDENT_b/memory.db",
        "HO2/ledger/RESIDENT_c/memory.db",
    }


def test_a_stack_database_is_private_in_a_private_partition(
    shared: tuple[HRMHome, Written],
) -> None:
    home, _ = shared
    path = home.stack_memory_db(B)
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert home.stack_memory_ledger(B).stat().st_mode & 0o777 == 0o600


def test_a_stack_database_pointed_at_another_stacks_is_refused(tmp_path: Path) -> None:
    home = HRMHome(initialize(tmp_path / "home").path)
    write_everything(home)
    theirs = home.stack_memory_db(C)
    theirs.parent.mkdir(parents=True, exist_ok=True)
    theirs.symlink_to(home.stack_memory_db(B))
    with pytest.raises(HRMError) as refused:
        HRM.open(home.root, C, "offline")
    assert refused.value.code is ErrorCode.VISIBILITY_DENIED
    with pytest.raises(HRMError) as again:  # a reader that does not build the stack
        MemoryBus.open(home, C)
    assert again.value.code is ErrorCode.VISIBILITY_DENIED


def test_a_deleted_stack_database_is_rebuilt_from_its_own_ledger(tmp_path: Path) -> None:
    home = HRMHome(initialize(tmp_path / "home").path)
    written = write_everything(home)
    path = home.stack_memory_db(B)
    before = table_dump(path)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    with HRM.open(home.root, B, "offline") as hrm:
        assert hrm.bus.shared.get(written.canon_key).value
        assert hrm.focus.problem_registry.get(written.problem_id) is not None
    assert table_dump(path) == before


def test_reindex_rebuilds_every_database_from_its_own_ledger(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from hrm.cli.ledger import app

    home = HRMHome(initialize(tmp_path / "home").path)
    write_everything(home)
    with HRM.open(home.root, C, "offline") as hrm:
        hrm.turn("Remember that the charlie door is blue")
    before = {p: table_dump(p) for p in home.memory_databases()}
    result = CliRunner().invoke(app, ["reindex", "--home", str(home.root), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report["databases"]) == {
        p.relative_to(home.root).as_posix() for p in before
    }
    assert report["databases"]["HO2/ledger/RESIDENT_b/memory.db"] > 0
    assert {p: table_dump(p) for p in home.memory_databases()} == before


def test_a_deleted_stack_memory_ledger_is_reported_by_verify(tmp_path: Path) -> None:
    from hrm.storage.home_verify import verify_home

    home = HRMHome(initialize(tmp_path / "home").path)
    write_everything(home)
    assert verify_home(home).ok
    home.stack_memory_ledger(B).unlink()
    report = verify_home(home)
    assert not report.ok
    named = {p.ledger for p in report.problems if not p.warning}
    assert "HO2/ledger/RESIDENT_b/memory.jsonl" in named


def test_a_forget_reaches_every_stack_database(tmp_path: Path) -> None:
    from hrm.storage.forget import forget

    home = HRMHome(initialize(tmp_path / "home").path)
    write_everything(home)
    report = forget(home, ["bravo vault opens at nine"])
    assert report.ok and report.found
    for database in home.memory_databases():
        assert b"bravo vault opens at nine" not in database.read_bytes().lower()
    assert "HO2/ledger/RESIDENT_b/memory.jsonl" in report.ledgers

