"""Pattern evidence: its own table, in order, migrated from the JSON column."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path


def test_evidence_kept_in_its_own_table_in_order(tmp_path: Path) -> None:
    from hrm.learning.patterns import Pattern, PatternStore
    from hrm.storage.sqlite import Database

    db = Database(tmp_path / "p.db")
    store = PatternStore(db, "ADMIN")
    pid = store.add_pattern(Pattern(id="", pattern_type="strategy",
                                    input_signature={"complexity": "simple"},
                                    recommended_action={"strategy": "quick_answer"},
                                    confidence=0.6, evidence_ids=["e1", "e2"],
                                    created_at=datetime(2026, 1, 1, tzinfo=UTC),
                                    last_matched_at=None, match_count=0))
    for i in range(3, 8):
        store.strengthen(pid, f"e{i}")
    store.strengthen(pid, "e3")  # linking twice is a no-op
    assert db.one("SELECT evidence_ids FROM learning_patterns WHERE id = ?", (pid,))[0] == "[]"
    assert store.get_pattern(pid).evidence_ids == [f"e{i}" for i in range(1, 8)]  # type: ignore[union-attr]
    fresh = PatternStore(Database(tmp_path / "p.db"), "ADMIN")
    assert fresh.get_pattern(pid).evidence_ids == [f"e{i}" for i in range(1, 8)]  # type: ignore[union-attr]
    assert fresh.search({"complexity": "simple"})[0].evidence_count == 7


def test_migration_moves_json_evidence_into_the_table(tmp_path: Path) -> None:
    from hrm.learning.patterns import MIGRATIONS, PatternStore
    from hrm.storage.sqlite import Database

    db = Database(tmp_path / "old.db")
    db.migrate("learning.patterns", MIGRATIONS[:1])
    with db.transaction():
        db.execute(
            "INSERT INTO learning_patterns (id, scope, pattern_type, signature_key, strategy,"
            " input_signature, recommended_action, confidence, evidence_ids, created_at,"
            " match_count) VALUES ('p1', 'ADMIN', 'strategy', 'k', 'quick_answer', '{}', '{}',"
            " 0.5, '[\"b\", \"a\", \"c\"]', '2026-01-01T00:00:00+00:00', 0)"
        )
    store = PatternStore(db, "ADMIN")
    assert store.get_pattern("p1").evidence_ids == ["b", "a", "c"]  # type: ignore[union-attr]
