"""`hrm memory learn|search|show|decay|export|import|confirm` end to end on a throwaway home."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hrm.cli.learnings import app
from hrm.home import HRMHome

runner = CliRunner()


def run(home: HRMHome, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, [*args, "--home", str(home.root)])
    return result.exit_code, result.stdout, result.stderr


def run_json(home: HRMHome, *args: str) -> object:
    code, out, err = run(home, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def learn(home: HRMHome, text: str, *extra: str) -> str:
    data = run_json(home, "learn", text, "--type", "error_fix", "--embeddings", "off", *extra)
    assert isinstance(data, dict)
    return str(data["id"])


def test_learn_search_show_round_trip(home: HRMHome) -> None:
    learning_id = learn(home, "Pin numpy below 2 for the old wheels", "--tag", "deps")
    found = run_json(home, "search", "numpy wheels", "--embeddings", "off", "--tag", "deps")
    assert isinstance(found, dict)
    assert [r["id"] for r in found["results"]] == [learning_id]
    assert found["mode"] == "fts" and found["total_count"] == 1
    assert found["results"][0]["highlights"] == ["numpy", "wheels"]
    shown = run_json(home, "show", learning_id)
    assert isinstance(shown, dict)
    assert (shown["type"], shown["tags"], shown["access_count"]) == ("ERROR_FIX", ["deps"], 1)


def test_human_output_is_a_table(home: HRMHome, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HRM_FORCE_TTY", "1")
    learn(home, "Use ruff for linting")
    code, out, _ = run(home, "search", "ruff", "--embeddings", "off")
    assert code == 0 and "Use ruff for linting" in out and "ERROR_FIX" in out
    assert "│" in out and "1 of 1" in out
    code, out, _ = run(home, "search", "nothing-like-this", "--embeddings", "off")
    assert code == 0 and "No matching learnings" in out


def test_piped_search_is_tab_separated_with_a_header(home: HRMHome) -> None:
    learning_id = learn(home, "Use ruff\tfor linting")
    code, out, _ = run(home, "search", "ruff", "--embeddings", "off")
    assert code == 0
    header, row = out.splitlines()
    assert header.split("\t") == ["score", "id", "type", "conf", "content"]
    assert row.split("\t")[1:] == [learning_id, "ERROR_FIX", "MEDIUM", "Use ruff\\tfor linting"]
    code, out, _ = run(home, "search", "nothing-like-this", "--embeddings", "off")
    assert code == 0 and out == "score\tid\ttype\tconf\tcontent\n"


def test_duplicate_fails_naming_the_existing_id(home: HRMHome) -> None:
    first = learn(home, "Set TZ=UTC in CI")
    code, out, err = run(home, "learn", "set tz = utc in ci", "-t", "ERROR_FIX", "--embeddings", "off")
    assert code != 0 and out == ""
    assert "duplicate_detected" in err and first in err.replace("\n", "")


def test_bad_type_and_bad_limit_fail(home: HRMHome) -> None:
    code, _, err = run(home, "learn", "x", "--type", "hunch", "--embeddings", "off")
    assert code != 0 and "hunch" in err
    code, _, err = run(home, "search", "x", "--limit", "500", "--embeddings", "off")
    assert code != 0 and "limit" in err


def test_expiry_filters_and_include_expired(home: HRMHome) -> None:
    learning_id = learn(home, "temporary freeze on deploys", "--expires", "2000-01-01T00:00:00Z")
    found = run_json(home, "search", "freeze deploys", "--embeddings", "off")
    assert isinstance(found, dict) and found["results"] == []
    found = run_json(home, "search", "freeze", "--include-expired", "--embeddings", "off")
    assert isinstance(found, dict) and [r["id"] for r in found["results"]] == [learning_id]


def test_decay_uses_given_weights_and_validates(home: HRMHome) -> None:
    learn(home, "something to decay")
    data = run_json(home, "decay", "--age-weight", "0.2", "--access-weight", "0.3")
    assert data == {"memories_decayed": 1, "memories_pruned": 0, "average_age_days": pytest.approx(0, abs=1e-3)}
    code, _, err = run(home, "decay", "--age-weight", "0.8", "--access-weight", "0.8")
    assert code != 0 and "at most 1.0" in err


def test_export_import_between_homes(home: HRMHome, tmp_path: Path) -> None:
    learning_id = learn(home, "carry me over")
    dump = tmp_path / "learnings.jsonl"
    assert run_json(home, "export", str(dump)) == {"exported": 1, "file": str(dump)}
    code, out, _ = run(home, "export")
    assert code == 0 and json.loads(out.splitlines()[0])["id"] == learning_id
    other = HRMHome(tmp_path / "other")
    assert run_json(other, "import", str(dump)) == {"imported": 1, "skipped": 0}
    assert run_json(other, "import", str(dump)) == {"imported": 0, "skipped": 1}


def test_import_reports_the_bad_line(home: HRMHome, tmp_path: Path) -> None:
    dump = tmp_path / "bad.jsonl"
    dump.write_text('{"content": "ok", "type": "ERROR_FIX"}\n{not json\n', encoding="utf-8")
    code, _, err = run(home, "import", str(dump))
    assert code == 3 and "bad.jsonl:2" in err


def test_confirm_activates_a_pending_preference(home: HRMHome) -> None:
    data = run_json(home, "learn", "seems to prefer short answers", "-t", "user_preference",
                    "--embeddings", "off")
    assert isinstance(data, dict) and data["status"] == "pending_confirmation"
    confirmed = run_json(home, "confirm", str(data["id"]))
    assert isinstance(confirmed, dict) and confirmed["status"] == "active"


def test_show_unknown_id_fails(home: HRMHome) -> None:
    code, _, err = run(home, "show", "lrn-nope")
    assert code != 0 and "lrn-nope" in err


@pytest.mark.parametrize("command", ["learn", "search", "show", "decay", "export", "import", "confirm"])
def test_every_command_has_help(command: str) -> None:
    result = runner.invoke(app, [command, "--help"])
    assert result.exit_code == 0 and "--home" in result.stdout


@pytest.mark.parametrize("where", ["a-directory", "missing/dir/x.jsonl"])
def test_export_to_a_bad_destination_names_it_and_writes_nothing(
    home: HRMHome, tmp_path: Path, where: str
) -> None:
    (tmp_path / "a-directory").mkdir()
    run(home, "learn", "keep the test database isolated", "--type", "WORKING_SOLUTION")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    code, out, err = run(home, "export", str(tmp_path / where))
    assert code == 3, err
    assert err.startswith("error: ") and "Traceback" not in out + err
    assert str(tmp_path / where) in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
