"""Progress: the library's callbacks count up to their total, and change nothing else; the CLI
draws a bar on stderr only on a terminal and never with --json."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from hrm.cli.app import app
from hrm.continuity.learnings import LearningsRepository
from hrm.home import HRMHome
from hrm.storage import Database, LedgerIndex
from hrm.storage.ledger import Ledger

_BAR = "━"


def _assert_counts_up(calls: list[tuple[int, int]], total: int) -> None:
    assert calls, "progress was never reported"
    done = [d for d, _ in calls]
    assert done == sorted(done) and all(0 <= d <= t for d, t in calls)
    assert calls[-1] == (total, total)


def _ledger(path: Path, records: int) -> Path:
    with Ledger(path) as ledger:
        for n in range(records):
            ledger.append("note", {"n": n, "text": "some words " * 5})
    return path


def test_verify_reports_bytes_up_to_the_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _ledger(tmp_path / "a.jsonl", 40)
    monkeypatch.setattr("hrm.storage.ledger.PROGRESS_BYTES", 500)
    calls: list[tuple[int, int]] = []
    with Ledger(path, read_only=True) as ledger:
        quiet = ledger.verify()
        report = ledger.verify(progress=lambda done, total: calls.append((done, total)))
    assert report == quiet and report.ok
    _assert_counts_up(calls, path.stat().st_size)
    assert len(calls) > 3


def _without_memory(counts: dict[str, int]) -> dict[str, int]:
    return {name: n for name, n in counts.items() if not name.endswith("memory.jsonl")}


def test_rebuild_reports_bytes_over_every_ledger(home: HRMHome, monkeypatch: pytest.MonkeyPatch) -> None:
    _ledger(home.decision_ledger("ADMIN"), 30)
    _ledger(home.execution_ledger("ADMIN"), 10)
    monkeypatch.setattr("hrm.storage.ledger_index._BATCH", 4)
    calls: list[tuple[int, int]] = []
    with Database(home.memory_db) as db:
        index = LedgerIndex(db, home=home)
        quiet = index.rebuild()
        before = sum(p.stat().st_size for p in home.all_ledgers())
        report = index.rebuild(progress=lambda done, whole: calls.append((done, whole)))
    # The first rebuild journals its schema to the memory ledger, so the second counts one
    # record more there; every other ledger must be counted alike with and without progress.
    assert report.ok and quiet.ok and report.total >= 40
    assert _without_memory(report.counts) == _without_memory(quiet.counts)
    total = calls[-1][1]  # the bytes there were when the scan began: every ledger, whole
    assert total >= before
    _assert_counts_up(calls, total)
    assert len(calls) > len(home.all_ledgers())


def test_import_reports_items_after_each_transaction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("hrm.continuity._learnings_writes._IMPORT_CHUNK", 2)
    items = [{"content": f"learning number {n}", "type": "ERROR_FIX"} for n in range(5)]
    items.append(dict(items[0]))  # a duplicate still counts as handled
    calls: list[tuple[int, int]] = []
    with Database(":memory:") as db:
        repo = LearningsRepository(db)
        assert repo.import_(items, progress=lambda d, t: calls.append((d, t))) == (5, 1)
    assert calls == [(2, 6), (4, 6), (6, 6)]


class _FakeEmbedder:
    """Three numbers a text; enough to store vectors without the embeddings extra's model."""

    model_id = "fake-3"
    dimension = 3

    def encode(self, texts: Sequence[str]) -> Any:
        import numpy as np

        return np.array([[1.0, len(t) % 7, 0.5] for t in texts], dtype=np.float32)


def test_reembed_reports_learnings_embedded() -> None:
    pytest.importorskip("numpy")
    items = [{"content": f"learning number {n}", "type": "ERROR_FIX"} for n in range(7)]
    calls: list[tuple[int, int]] = []
    with Database(":memory:") as db:
        LearningsRepository(db).import_(items)
        repo = LearningsRepository(db, embedder=_FakeEmbedder())  # type: ignore[arg-type]
        assert repo.reembed(batch_size=3, progress=lambda d, t: calls.append((d, t))) == 7
        assert repo.reembed(progress=lambda d, t: calls.append((d, t))) == 0
    assert calls == [(3, 7), (6, 7), (7, 7)]


def _verify(home: HRMHome, *extra: str, env: dict[str, str] | None = None) -> Any:
    _ledger(home.decision_ledger("ADMIN"), 20)
    return CliRunner().invoke(app, ["ledger", "verify", "--home", str(home.root), *extra], env=env)


def test_a_terminal_sees_a_bar_on_stderr_and_the_same_stdout(home: HRMHome) -> None:
    piped = _verify(home)
    shown = _verify(home, env={"HRM_FORCE_TTY": "1"})
    assert shown.exit_code == piped.exit_code == 0
    last = home.all_ledgers()[-1].relative_to(home.root).as_posix()
    assert _BAR in shown.stderr and last in shown.stderr  # the bar names the ledger it checks
    assert _BAR not in piped.stderr and piped.stderr == ""
    assert "ok  HO2/ledger/ADMIN/workorder.jsonl" in shown.stdout


def test_json_output_never_draws_a_bar(home: HRMHome) -> None:
    result = _verify(home, "--json", env={"HRM_FORCE_TTY": "1"})
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout.lstrip().startswith("{")


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["ledger", "reindex"], id="reindex"),
        pytest.param(["memory", "import", "{file}"], id="import"),
    ],
)
def test_long_commands_draw_their_bar_on_a_terminal(args: list[str], home: HRMHome, tmp_path: Path) -> None:
    _ledger(home.decision_ledger("ADMIN"), 5)
    learnings = tmp_path / "learnings.jsonl"
    learnings.write_text('{"content": "pin numpy", "type": "ERROR_FIX"}\n', encoding="utf-8")
    argv = [a.replace("{file}", str(learnings)) for a in args]
    result = CliRunner().invoke(app, [*argv, "--home", str(home.root)], env={"HRM_FORCE_TTY": "1"})
    assert result.exit_code == 0, result.output
    assert _BAR in result.stderr


def test_meta_analysis_reports_stacks_read(tmp_path: Path) -> None:
    from hrm.pipeline import HRM
    from hrm.stacks.meta import MetaAgent

    home = HRMHome(tmp_path / "home")
    for stack in ("ADMIN", "RESIDENT:ana"):
        with HRM.open(home, stack, "offline") as hrm:
            hrm.turn("How do I rename a git branch?")
    calls: list[tuple[int, int]] = []
    quiet = MetaAgent(home).analyze()
    report = MetaAgent(home).analyze(progress=lambda d, t: calls.append((d, t)))
    assert report.records_read == quiet.records_read and len(report.stacks) == 2
    assert calls == [(1, 2), (2, 2)]
