"""Forgetting for real: after a forget no byte of the text is left under the home, and the
home still verifies (issue 32 §9, issue 31 §9)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hrm import HRM
from hrm.home import HRMHome, initialize
from hrm.storage.forget import forget
from hrm.storage.home_verify import verify_home
from hrm.storage.rebuild import rebuild, table_dump

runner = CliRunner()


def hits(root: Path, text: str) -> list[str]:
    """Every file under `root` whose bytes hold `text` in any case (WAL and shm included)."""
    needle = text.lower().encode()
    found = []
    for directory, _, files in os.walk(root):
        for name in files:
            path = Path(directory) / name
            if not path.is_symlink() and needle in path.read_bytes().lower():
                found.append(str(path.relative_to(root)))
    return sorted(found)


@pytest.fixture
def home(tmp_path: Path) -> HRMHome:
    return HRMHome(initialize(tmp_path / "home").path)


def talk(home: HRMHome, *messages: str) -> None:
    with HRM.open(home.root, llm="offline") as hrm:
        for text in messages:
            hrm.turn(text)


@pytest.mark.parametrize(
    ("said", "forgotten"),
    [
        pytest.param("Remember that I live in Lisbon", "I live in Lisbon", id="canon-fact"),
        pytest.param("I prefer a formal tone in answers", "formal tone", id="preference"),
    ],
)
def test_a_forgotten_canon_entry_leaves_no_byte_under_the_home(
    home: HRMHome, said: str, forgotten: str
) -> None:
    talk(home, said, "How do I rename a git branch?", "What's still open?")
    assert hits(home.root, forgotten)  # it was stored: the memory, the turn, the journal
    report = forget(home, [forgotten])
    assert report.ok and report.found
    assert hits(home.root, forgotten) == []
    assert hits(home.root, forgotten.replace(" ", "-")) == []  # the key it was kept under
    assert verify_home(home).ok
    talk(home, "What do you know about me?")  # the home works on
    assert hits(home.root, forgotten) == []
    assert verify_home(home).ok


def test_a_forget_is_kept_by_a_rebuild(home: HRMHome) -> None:
    talk(home, "Remember that I live in Lisbon", "Remember that our API is at api.example.org")
    forget(home, ["I live in Lisbon"])
    stack_db = home.stack_memory_db("ADMIN")  # canon is the stack's, in its own database
    before = table_dump(stack_db)
    home_before = table_dump(home.memory_db)
    rebuild(home)
    assert table_dump(stack_db) == before
    assert table_dump(home.memory_db) == home_before
    assert hits(home.root, "I live in Lisbon") == [
        # the database the rebuild moved aside: the forget ran before it was made
    ] or all(".replaced-" in h for h in hits(home.root, "I live in Lisbon"))
    keys = [row for row in before.get("shared_references", []) if "api" in repr(row)]
    assert keys  # what was not forgotten is still there


def test_handoffs_logs_caches_and_quarantine_copies_are_swept(home: HRMHome) -> None:
    from hrm.storage import Ledger, quarantine_damage

    talk(home, "Remember that I live in Lisbon")
    handoff = home.handoffs_dir / "s1" / "20261127T000000Z.yaml"
    handoff.parent.mkdir(parents=True)
    long_line = "word " * 30 + "and I live in Lisbon, " + "more " * 30
    handoff.write_text(f"goal: {json.dumps(long_line)}\nnext_steps:\n- pack\n", encoding="utf-8")
    (home.root / "logs").mkdir(exist_ok=True)
    (home.root / "logs" / "hooks.log").write_text("prompt was: I live in Lisbon\n")
    (home.cache_dir).mkdir(exist_ok=True)
    (home.cache_dir / "rules.json").write_text('{"from": "I live in Lisbon"}')
    side = home.root / "HO2" / "ledger" / "ADMIN" / "notes.jsonl"
    with Ledger(side) as ledger:
        ledger.append("note", {"text": "I live in Lisbon"})
        ledger.append("note", {"text": "other"})
    side.write_bytes(side.read_bytes().replace(b"other", b"othxr"))  # damaged
    quarantine_damage(side)

    report = forget(home, ["I live in Lisbon"])

    assert hits(home.root, "I live in Lisbon") == []
    assert "handoffs/s1/20261127T000000Z.yaml" in report.files
    assert "cache/rules.json" in report.removed
    assert any(".quarantined-" in f for f in report.files)
    import yaml

    doc = yaml.safe_load(handoff.read_text(encoding="utf-8"))
    assert doc["next_steps"] == ["pack"] and "[forgotten]" in doc["goal"]


def test_hrm_memory_forget_deletes_a_learning_and_session_start_no_longer_shows_it(
    home: HRMHome, tmp_path: Path
) -> None:
    from hrm.cli.learnings import app

    text = "Always run the integration tests before merging"
    args = ["--home", str(home.root)]
    learned = runner.invoke(app, ["learn", text, "--type", "USER_PREFERENCE", *args])
    assert learned.exit_code == 0, learned.output
    runner.invoke(app, ["learn", "Deploys happen on Tuesdays", "--type", "WORKING_SOLUTION",
                        *args])
    assert text in session_start(home, tmp_path)

    result = runner.invoke(app, ["forget", "integration tests", "--json", *args])

    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["id"].startswith("lrn-") and payload["forgotten"]["ok"]
    assert text not in json.dumps(payload)
    assert text not in session_start(home, tmp_path)
    assert "Deploys happen on Tuesdays" in runner.invoke(
        app, ["search", "deploys", "--json", *args]
    ).stdout
    assert hits(home.root, text) == []
    assert verify_home(home).ok


def test_forget_by_a_query_that_matches_several_names_them_and_deletes_nothing(
    home: HRMHome,
) -> None:
    from hrm.cli.learnings import app

    args = ["--home", str(home.root)]
    for text in ("Retry the upload on timeout", "Retry the download on 503"):
        runner.invoke(app, ["learn", text, "--type", "ERROR_FIX", *args])
    result = runner.invoke(app, ["forget", "retry the", *args])
    assert result.exit_code != 0
    assert "2 learnings hold these words" in result.stderr
    assert hits(home.root, "Retry the upload on timeout")


def session_start(home: HRMHome, project: Path) -> str:
    payload = {"hook_event_name": "SessionStart", "session_id": "s", "source": "startup",
               "cwd": str(project)}
    done = subprocess.run(
        [sys.executable, "-m", "hrm", "hook", "session-start"],
        input=json.dumps(payload).encode(), capture_output=True, cwd=project, check=True,
        env={**os.environ, "HRM_HOME": str(home.root)},
    )
    out = json.loads(done.stdout or b"{}")
    return str(out.get("hookSpecificOutput", {}).get("additionalContext", ""))


def test_a_forget_in_the_middle_of_a_session_leaves_the_session_working(home: HRMHome) -> None:
    """What the turn loop will do for "Forget that I live in Lisbon": forget with its own
    open database while its ledgers stay open, then go on taking turns."""
    with HRM.open(home.root, llm="offline") as hrm:
        hrm.turn("Remember that I live in Lisbon")
        for n in range(70):  # past the episodic index's batch of 64
            hrm.turn(f"Question {n}: how do we cache the billing report?")
        report = forget(home, ["I live in Lisbon"], db=hrm.db)
        assert report.ok and "HO2/ledger/ADMIN/workorder.jsonl" in report.ledgers
        for n in range(70):
            hrm.turn(f"Next {n}: what else should we check in the billing job?")
        assert hrm.turn_number == 141
    assert hits(home.root, "I live in Lisbon") == []
    assert verify_home(home).ok


def test_hrm_memory_erase_says_where_then_erases_what_a_forget_only_retracted(
    home: HRMHome,
) -> None:
    """D450: "forget that I live in Lisbon" retracts the canon entry (its history keeps it);
    `hrm memory erase` is how the person takes it out of every file for good."""
    from hrm.cli.app import app

    talk(home, "Remember that I live in Lisbon. What's a good day trip from here?",
         "forget that I live in Lisbon", "and one for a weekend?")
    assert hits(home.root, "I live in Lisbon")
    where = runner.invoke(app, ["memory", "erase", "I live in Lisbon", "--home", str(home.root),
                                "--json"])
    assert where.exit_code == 0, where.output
    listed = json.loads(where.stdout)
    assert listed["erased"] is False
    assert "HO2/ledger/ADMIN/workorder.jsonl" in listed["found_in"]
    # every file holding it, as written or as a key made of it ("fact.i-live-in-lisbon")
    assert set(hits(home.root, "I live in Lisbon")) <= set(listed["found_in"])
    done = runner.invoke(app, ["memory", "erase", "i live in LISBON", "--yes",
                               "--home", str(home.root)])
    assert done.exit_code == 0, done.output
    assert "Erased: the text is found nowhere under the home any more." in done.stdout
    assert hits(home.root, "I live in Lisbon") == []
    assert verify_home(home).ok
    again = runner.invoke(app, ["memory", "erase", "I live in Lisbon", "--home", str(home.root)])
    assert "nothing to erase" in again.stdout
    short = runner.invoke(app, ["memory", "erase", "ab", "--yes", "--home", str(home.root)])
    assert short.exit_code != 0 and "at least 3 characters" in short.output


def test_hrm_memory_erase_finds_the_key_a_text_with_punctuation_was_kept_under(
    home: HRMHome,
) -> None:
    """D450: "12 Rua Augusta, Lisbon" was kept under fact.my-address-is-12-rua-augusta-lisbon,
    which the erase did not find, and still said nothing was left."""
    from hrm.cli.app import app

    talk(home, "Remember that my address is 12 Rua Augusta, Lisbon", "forget my address")
    done = runner.invoke(app, ["memory", "erase", "12 Rua Augusta, Lisbon", "--yes",
                               "--home", str(home.root), "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["erased"] is True
    assert hits(home.root, "rua augusta") == hits(home.root, "rua-augusta") == []
    assert verify_home(home).ok
