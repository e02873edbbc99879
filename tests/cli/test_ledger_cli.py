"""`hrm ledger verify | tail | reindex | quarantine`: exit codes, stderr lines and JSON output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hrm.cli._common import EXIT_INPUT
from hrm.cli.ledger import app
from hrm.home import HRMHome
from hrm.storage import Database, Ledger, LedgerIndex

runner = CliRunner()
DECISIONS = "HO2/ledger/ADMIN/workorder.jsonl"


def fill(path: Path, count: int) -> None:
    with Ledger(path) as ledger:
        for i in range(count):
            ledger.append("turn", {"i": i, "text": f"message {i}"})


@pytest.fixture
def filled(home: HRMHome) -> HRMHome:
    fill(home.decision_ledger("ADMIN"), 3)
    fill(home.execution_ledger("ADMIN"), 2)
    return home


def damage(path: Path, line: int) -> None:
    lines = path.read_text().splitlines(keepends=True)
    lines[line - 1] = lines[line - 1].replace("message", "massage")
    path.write_text("".join(lines))


def test_verify_all_reports_every_ledger(filled: HRMHome) -> None:
    result = runner.invoke(app, ["verify", "--all", "--home", str(filled.root)])
    assert result.exit_code == 0, result.output
    assert f"ok  {DECISIONS}  3 records" in result.stdout
    assert "ok  HO1/ledger/ADMIN/worker.jsonl  2 records" in result.stdout


def test_verify_without_arguments_checks_the_whole_home(filled: HRMHome) -> None:
    result = runner.invoke(app, ["verify", "--home", str(filled.root)])
    assert result.exit_code == 0
    # The two written, and the governance ledger that records their creation (the manifest).
    assert result.stdout.count("ok  ") == 3
    assert "ok  HOT/ledger/governance.jsonl  2 records" in result.stdout


def test_verify_an_empty_home(home: HRMHome) -> None:
    result = runner.invoke(app, ["verify", "--home", str(home.root)])
    assert result.exit_code == 0
    assert "No ledgers" in result.stdout


def test_verify_names_the_first_bad_record_on_stderr(filled: HRMHome) -> None:
    path = filled.decision_ledger("ADMIN")
    damage(path, 2)
    result = runner.invoke(app, ["verify", DECISIONS, "--home", str(filled.root)])
    assert result.exit_code == EXIT_INPUT
    assert f"{path}:2 seq 2: hash mismatch" in result.stderr
    assert result.stdout == ""


def test_verify_json_lists_each_ledger(filled: HRMHome) -> None:
    damage(filled.decision_ledger("ADMIN"), 3)
    result = runner.invoke(app, ["verify", "--all", "--json", "--home", str(filled.root)])
    assert result.exit_code == EXIT_INPUT
    payload = json.loads(result.stdout)
    assert payload["ok"] is False
    by_ok = {Path(item["path"]).name: item for item in payload["ledgers"]}
    assert by_ok["worker.jsonl"]["ok"] is True
    assert by_ok["workorder.jsonl"]["first_error"] == {
        "line": 3, "seq": 3, "reason": "hash mismatch: the record's content was altered",
        "offset": by_ok["workorder.jsonl"]["first_error"]["offset"],
    }


def test_verify_reports_a_torn_tail_on_stderr(filled: HRMHome) -> None:
    path = filled.decision_ledger("ADMIN")
    with path.open("a") as fh:
        fh.write('{"data":{"half')
    result = runner.invoke(app, ["verify", str(path), "--home", str(filled.root)])
    assert result.exit_code == 0
    assert "torn final line found (not cut: read-only)" in result.stderr
    assert result.stderr.count("torn final line") == 1
    assert f"ok  {DECISIONS}  3 records" in result.stdout


def test_verify_a_path_and_all_together_is_refused(filled: HRMHome) -> None:
    result = runner.invoke(app, ["verify", DECISIONS, "--all", "--home", str(filled.root)])
    assert result.exit_code != 0
    assert "not both" in result.stderr


def test_verify_a_missing_ledger(home: HRMHome) -> None:
    result = runner.invoke(app, ["verify", "nope.jsonl", "--home", str(home.root)])
    assert result.exit_code != 0
    assert "No ledger 'nope.jsonl'" in result.stderr


def test_tail_prints_the_last_records(filled: HRMHome) -> None:
    result = runner.invoke(app, ["tail", DECISIONS, "-n", "2", "--home", str(filled.root)])
    assert result.exit_code == 0, result.output
    assert "message 1" in result.stdout and "message 2" in result.stdout
    assert "message 0" not in result.stdout


def test_tail_json(filled: HRMHome) -> None:
    result = runner.invoke(
        app, ["tail", DECISIONS, "--lines", "5", "--json", "--home", str(filled.root)]
    )
    assert result.exit_code == 0
    records = json.loads(result.stdout)
    assert [r["seq"] for r in records] == [1, 2, 3]
    assert records[0]["data"] == {"i": 0, "text": "message 0"}


def test_tail_of_a_damaged_ledger_fails_naming_the_record(filled: HRMHome) -> None:
    damage(filled.decision_ledger("ADMIN"), 3)
    result = runner.invoke(app, ["tail", DECISIONS, "--home", str(filled.root)])
    assert result.exit_code == EXIT_INPUT
    assert "ledger_corrupt" in result.stderr
    assert "jsonl:3, sequence 3: hash mismatch" in result.stderr.replace("\n", "")


def test_reindex_rebuilds_from_the_ledgers(filled: HRMHome) -> None:
    result = runner.invoke(app, ["reindex", "--json", "--home", str(filled.root)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] and report["errors"] == {}
    assert report["counts"][DECISIONS] == 3
    assert report["counts"]["HO1/ledger/ADMIN/worker.jsonl"] == 2
    assert report["indexed"] == sum(report["counts"].values())
    with Database(filled.memory_db) as db:
        assert LedgerIndex(db, home=filled).count(DECISIONS) == 3
    human = runner.invoke(app, ["reindex", "--home", str(filled.root)])
    assert "memory.db rebuilt from" in human.stdout
    assert "the old database is at memory.db.replaced-" in human.stdout


def test_reindex_names_a_damaged_ledger(filled: HRMHome) -> None:
    damage(filled.decision_ledger("ADMIN"), 2)
    result = runner.invoke(app, ["reindex", "--home", str(filled.root)])
    assert result.exit_code == EXIT_INPUT
    assert f"{DECISIONS}: [ledger_corrupt]" in result.stderr


@pytest.mark.parametrize("command", ["verify", "tail", "reindex", "quarantine"])
def test_every_command_has_help(command: str) -> None:
    result = runner.invoke(app, [command, "-h"])
    assert result.exit_code == 0
    assert "--json" in result.stdout


def test_verify_uses_the_index_as_a_second_anchor(filled: HRMHome) -> None:
    assert runner.invoke(app, ["reindex", "--home", str(filled.root)]).exit_code == 0
    path = filled.decision_ledger("ADMIN")
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:2]))
    path.with_name(path.name + ".anchor").unlink()
    result = runner.invoke(app, ["verify", "--home", str(filled.root)])
    assert result.exit_code == EXIT_INPUT
    # The manifest remembers the third record (so does the index): the cut shows.
    assert f"{path}:3 seq 3: the ledger ends at seq 2 but its anchor vouches for seq 3" in (
        result.stderr.replace("\n", "")
    )
    assert "the manifest says seq 3 was committed" in result.stderr


def test_verify_and_tail_never_change_the_file_they_are_given(home: HRMHome, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"line one\nline two, no trailing newline")
    data = tmp_path / "data.jsonl"
    data.write_bytes(b'{"a": 1}\n{"b": 2')
    for path in (notes, data):
        before = path.read_bytes()
        verify = runner.invoke(app, ["verify", str(path), "--home", str(home.root)])
        tail = runner.invoke(app, ["tail", str(path), "--home", str(home.root)])
        assert verify.exit_code == EXIT_INPUT
        assert tail.exit_code == EXIT_INPUT
        assert path.read_bytes() == before


def test_verify_reports_a_torn_tail_and_leaves_it_for_the_next_writer(filled: HRMHome) -> None:
    path = filled.root / DECISIONS
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"seq": 4, "torn')
    result = runner.invoke(app, ["verify", str(path), "--home", str(filled.root)])
    assert result.exit_code == 0, result.output
    assert "not cut" in result.output
    assert path.read_bytes() == whole + b'{"seq": 4, "torn'
    with Ledger(path) as writer:  # a writer repairs what a crash left
        writer.append("turn", {"i": 4})
    assert path.read_bytes().startswith(whole) and b"torn" not in path.read_bytes()


def test_a_read_only_ledger_refuses_appends(filled: HRMHome) -> None:
    from hrm.errors import ErrorCode, HRMError

    with Ledger(filled.root / DECISIONS, read_only=True) as ledger:
        assert ledger.last() is not None
        with pytest.raises(HRMError) as info:
            ledger.append("turn", {"i": 9})
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert "read-only" in info.value.message


def test_quarantine_sets_the_damage_aside_and_the_home_verifies_again(filled: HRMHome) -> None:
    home = str(filled.root)
    assert runner.invoke(app, ["reindex", "--home", home]).exit_code == 0
    path = filled.decision_ledger("ADMIN")
    damage(path, 2)
    original = path.read_bytes()
    assert runner.invoke(app, ["verify", "--home", home]).exit_code == EXIT_INPUT

    result = runner.invoke(app, ["quarantine", "--home", home])

    assert result.exit_code == 0, result.output
    assert f"quarantined  {DECISIONS}" in result.stdout
    assert "line 2: hash mismatch" in result.stdout
    assert "kept 1 records, salvaged 1 after the damage" in result.stdout
    assert "ok           HO1/ledger/ADMIN/worker.jsonl" in result.stdout
    assert "Rebuilt the ledger index:" in result.stdout
    (copy,) = path.parent.glob("workorder.jsonl.quarantined-*[0-9]Z")
    assert copy.read_bytes() == original
    after = runner.invoke(app, ["verify", "--home", home])
    assert after.exit_code == 0, after.output
    assert f"ok  {DECISIONS}  3 records" in after.stdout


def test_quarantine_dry_run_and_json(filled: HRMHome) -> None:
    home = str(filled.root)
    path = filled.decision_ledger("ADMIN")
    damage(path, 3)
    before = path.read_bytes()
    dry = runner.invoke(app, ["quarantine", DECISIONS, "--dry-run", "--home", home])
    assert dry.exit_code == 0, dry.output
    assert f"would cut    {DECISIONS}" in dry.stdout and "would keep 2 records" in dry.stdout
    assert path.read_bytes() == before

    result = runner.invoke(app, ["quarantine", DECISIONS, "--json", "--home", home])
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.stdout)["ledgers"]
    assert report["quarantined"] and not report["dry_run"]
    assert report["damage"]["line"] == 3 and report["kept_records"] == 2
    assert report["record_seq"] == 3 and Path(report["copy"]).read_bytes() == before


def test_quarantine_records_what_only_the_index_remembers(filled: HRMHome) -> None:
    """Records cut together with the anchor: only the index knows; the loss goes on record."""
    home = str(filled.root)
    assert runner.invoke(app, ["reindex", "--home", home]).exit_code == 0
    path = filled.decision_ledger("ADMIN")
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:2]))
    path.with_name(path.name + ".anchor").unlink()

    result = runner.invoke(app, ["quarantine", "--home", home])

    assert result.exit_code == 0, result.output
    assert "committed records were cut from the end" in result.stdout
    assert "cut 0 bytes" in result.stdout
    assert runner.invoke(app, ["verify", "--home", home]).exit_code == 0
    with Ledger(path, read_only=True) as ledger:
        last = ledger.last()
    assert last is not None and last.kind == "ledger_quarantine" and last.seq == 3


def test_quarantine_of_a_sound_home_changes_nothing(filled: HRMHome) -> None:
    path = filled.decision_ledger("ADMIN")
    before = path.read_bytes()
    result = runner.invoke(app, ["quarantine", "--home", str(filled.root)])
    assert result.exit_code == 0
    assert result.stdout.count("ok           ") == 3 and "Rebuilt" not in result.stdout
    assert path.read_bytes() == before


def test_a_damaged_ledger_error_points_at_quarantine(filled: HRMHome) -> None:
    damage(filled.decision_ledger("ADMIN"), 2)
    result = runner.invoke(app, ["tail", DECISIONS, "--home", str(filled.root)])
    assert result.exit_code == EXIT_INPUT
    assert "hrm ledger quarantine" in result.stderr
