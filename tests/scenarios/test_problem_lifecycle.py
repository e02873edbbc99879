"""Problems end: the person resolves them, and ones left untouched for weeks are retired.

Every new topic becomes a problem. Without an end, a registry used daily grows by the hundreds,
each turn weighs the input against all of them, and a topic dropped weeks ago still claims
new inputs.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hrm.cli.app import app
from hrm.config import load_config
from hrm.demo import DemoClock
from hrm.errors import ErrorCode, HRMError
from hrm.governance.problems import ProblemStatus
from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.storage.ledger import Ledger


def _clock() -> DemoClock:
    return DemoClock(start=datetime(2026, 10, 1, 9, 0, tzinfo=UTC), step=timedelta(minutes=2))


def _decisions(home: HRMHome, kind: str) -> list[dict[str, object]]:
    with Ledger(home.decision_ledger("ADMIN")) as ledger:
        return [r.data for r in ledger.records() if r.kind == kind]


def test_resolving_the_active_problem_completes_its_commitment_and_is_recorded(
    home: HRMHome,
) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("Let's plan the v2 launch of our billing service")
        h.turn("Let's focus on the billing launch for the next 3 turns")
        active = h.focus.problem_registry.get_active()
        commitment = h.focus.commitments.get_active()
        assert active is not None and commitment is not None
        resolved = h.resolve_problem()
        assert resolved.id == active.id and resolved.status.value == "resolved"
        assert h.focus.problem_registry.get_active() is None
        assert h.focus.commitments.get_active() is None
        assert h.resolve_problem(active.id).status.value == "resolved"  # again: no change
        after = h.turn("What should we check first for the billing launch?")
        assert after.decision.arbitration.get("candidate_problem_id") != active.id
    [event] = _decisions(home, "problem_resolved")
    assert event["id"] == active.id and event["commitment_completed"] == commitment.id
    assert event["was"] == "active" and event["by"] == "person"
    with HRM.open(home, "ADMIN", "offline") as again:
        assert again.focus.commitments.history()[0].status == "completed"


def test_after_a_resolve_a_follow_up_goes_to_the_open_problem_it_carries_on(
    home: HRMHome,
) -> None:
    # D67: with nothing active, "what should the report cover?" became a problem of its own
    # beside the queued report it was about.
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("Our staging Postgres is out of disk space")
        report = h.turn("Separately, I need to write the Q3 board report by Friday").decision
        assert report.arbitration["disposition"] == "queue"
        h.resolve_problem()
        d = h.turn("what should the report cover?").decision
        assert d.arbitration["disposition"] == "switch"
        assert d.arbitration["candidate_problem_id"] == report.arbitration["candidate_problem_id"]
        assert d.arbitration["candidate_match"] == "follow-up in the conversation"
        assert [p.title for p in h.focus.problem_registry.list() if p.status.value != "resolved"] == [
            "I need to write the Q3 board report by Friday"
        ]


def test_after_a_resolve_a_follow_up_names_a_queued_problem_by_its_word(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("Our staging Postgres is out of disk space")
        report = h.turn("Separately, I need to write the Q3 board report by Friday").decision
        h.turn("back to the Postgres disk: which tables are largest?")
        h.resolve_problem()
        d = h.turn("How long should the board report be?").decision
        assert d.arbitration["candidate_problem_id"] == report.arbitration["candidate_problem_id"]
        # A new topic after a resolve is still its own problem.
        other = h.turn("Write a script that renames the stale git branches").decision
        assert other.arbitration["is_new_candidate"] is True


def test_resolving_an_unknown_or_missing_problem_is_a_clear_error(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        with pytest.raises(HRMError) as unknown:
            h.resolve_problem("prob_000000000000")
        assert unknown.value.code is ErrorCode.NOT_FOUND
        assert "prob_000000000000" in unknown.value.message
        with pytest.raises(HRMError) as nothing_active:
            h.resolve_problem()
        assert nothing_active.value.code is ErrorCode.NOT_FOUND
    assert _decisions(home, "problem_resolved") == []


def test_problems_untouched_for_weeks_are_retired_when_a_session_starts(home: HRMHome) -> None:
    clock = _clock()
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:
        h.turn("Let's plan the v2 launch of our billing service")
        h.turn("Unrelated: how do I rename a git branch?")  # a second topic: queued
        queued = [p.id for p in h.focus.problem_registry.list() if p.status.value == "queued"]
        active = h.focus.problem_registry.get_active()
        assert queued and active is not None
        clock.next_turn(60 * 24 * 29)  # 29 days: still kept
        h.turn("What should we check first for the billing launch?")
        assert _decisions(home, "problems_retired") == []
        clock.next_turn(60 * 24 * 31)
        h.turn("Back to the billing launch")  # a new session: the queued topic is retired
        statuses = {p.id: p.status.value for p in h.focus.problem_registry.list()}
    assert all(statuses[i] == "resolved" for i in queued)
    assert statuses[active.id] != "resolved"  # the active problem is never retired
    [retired] = _decisions(home, "problems_retired")
    assert retired["count"] == len(queued) and retired["untouched_days"] == 30
    assert [p["id"] for p in retired["problems"]] == queued  # type: ignore[union-attr]


def test_retirement_can_be_switched_off(home: HRMHome) -> None:
    HRM.open(home, "ADMIN", "offline").close()
    config = replace(load_config(home).config, problem_retire_days=0)
    clock = _clock()
    with HRM.open(home, "ADMIN", "offline", config=config, clock=clock) as h:
        h.turn("Let's plan the v2 launch of our billing service")
        h.turn("Unrelated: how do I rename a git branch?")
        clock.next_turn(60 * 24 * 365)
        h.turn("Back to the billing launch")
        assert "resolved" not in {p.status.value for p in h.focus.problem_registry.list()}


def test_problem_retire_days_must_not_be_negative(tmp_path: Path) -> None:
    home = HRMHome.resolve(tmp_path / "home")
    HRM.open(home, "ADMIN", "offline").close()
    home.config_path.write_text("problem_retire_days: -1\n")
    with pytest.raises(HRMError) as bad:
        load_config(home)
    assert "problem_retire_days" in bad.value.message


def test_hrm_problems_list_and_resolve(tmp_path: Path) -> None:
    runner = CliRunner()
    where = ["--home", str(tmp_path / "home")]
    for text in ("Let's plan the v2 launch of our billing service",
                 "Unrelated: how do I rename a git branch?"):
        assert runner.invoke(app, ["turn", text, *where, "--provider", "offline"]).exit_code == 0
    listed = runner.invoke(app, ["problems", "list", *where, "--json"])
    assert listed.exit_code == 0, listed.output
    problems = json.loads(listed.stdout)
    assert [p["status"] for p in problems] == ["active", "queued"]
    done = runner.invoke(app, ["problems", "resolve", problems[1]["id"], *where])
    assert done.exit_code == 0 and "Resolved" in done.stdout
    assert [p["id"] for p in json.loads(
        runner.invoke(app, ["problems", "list", *where, "--json"]).stdout
    )] == [problems[0]["id"]]
    every = json.loads(runner.invoke(app, ["problems", "list", *where, "--all", "--json"]).stdout)
    assert {p["status"] for p in every} == {"active", "resolved"}
    missing = runner.invoke(app, ["problems", "resolve", "prob_000000000000", *where])
    assert missing.exit_code == 3 and "No problem 'prob_000000000000'" in missing.stderr
    chat = runner.invoke(app, ["chat", *where, "--provider", "offline"], input="/resolve\n/problems\n/quit\n")
    assert chat.exit_code == 0, chat.output
    assert f"Resolved {problems[0]['id']}" in chat.stdout


def test_saying_the_work_is_fixed_and_asking_to_close_it_closes_the_one_named(
    home: HRMHome,
) -> None:
    """D459: "the ETL is fixed now, close it" was only asked about, even though it asks."""
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("the nightly ETL job fails with out of memory")
        h.turn("unrelated: our grafana dashboard shows no data")
        h.turn("switch to grafana")
        closed = h.turn("the ETL is fixed now, close it")
        assert closed.response == "Resolved ‘The nightly ETL job fails with out of memory’."
        statuses = {p.title: p.status for p in h.focus.problem_registry.list()}
    assert statuses["The nightly ETL job fails with out of memory"] is ProblemStatus.RESOLVED
    assert statuses["Our grafana dashboard shows no data"] is ProblemStatus.ACTIVE


@pytest.mark.parametrize(
    "report",
    [
        "The inspection is booked for June 3, close it.",
        "booked it for june 3, close it",
        "I paid the garage in advance, close this",
    ],
)
def test_any_report_of_it_done_then_close_it_closes_the_work_in_focus(
    home: HRMHome, report: str
) -> None:
    """D466: "The inspection is booked for June 3, close it." was kept as a decision."""
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("My car needs its annual inspection before July.")
        closed = h.turn(report)
        assert closed.action == "resolve"
        assert [p.status for p in h.focus.problem_registry.list()] == [ProblemStatus.RESOLVED]


def test_a_report_that_it_worked_then_close_this_closes_the_work_in_focus(
    home: HRMHome,
) -> None:
    """D459: "retried the export and it went through, close this" was passed over in silence."""
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("Urgent: the payroll export failed and people won't get paid!")
        h.turn("it's a timeout on the bank API")
        closed = h.turn("retried the export and it went through, close this")
        assert closed.action == "resolve"
        assert [p.status for p in h.focus.problem_registry.list()] == [ProblemStatus.RESOLVED]
