"""Recovery after a process exit (004 §8): a new process continues from the ledgers alone."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.stacks.lifecycle import lifecycle_events, recover
from hrm.storage.ledger import Ledger
from hrm.turn.state import RECENT_CLIP, RECENT_TURNS

DPJ = "RESIDENT:DoPeJar"

_CHILD = textwrap.dedent("""
    import sys
    from hrm.pipeline import HRM
    with HRM.open(sys.argv[1], sys.argv[2], "offline") as stack:
        stack.turn("Let us work on the closet design for the bedroom")
        stack.turn("The closet is 2 metres wide")
        print(stack.session_id)
""")


def run_child(home: HRMHome, agent_class: str) -> str:
    env = {**os.environ, "HRM_PROVIDER": "offline"}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(home.root), agent_class],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_a_new_process_continues_from_the_ledgers(home: HRMHome) -> None:
    child_session = run_child(home, DPJ)
    with HRM.open(home, DPJ, "offline") as stack:
        assert stack.session_id == child_session  # the session was recent: it continues
        assert stack.turn_number == 2
        assert [t["input"] for t in stack.history()] == [
            "Let us work on the closet design for the bedroom", "The closet is 2 metres wide"]
        # the child's turns are this session's: recovery (what came before it) has none
        report = recover(stack.stack)
        assert report.turns == 0 and not report.recovered
        result = stack.turn("what did we say about the closet?")
        assert result.decision.turn == 3
        assert stack.focus.problem_registry.get_active() is not None
    events = lifecycle_events(home, DPJ)
    assert [e["kind"] for e in events] == [
        "stack_created", "stack_teardown", "stack_created", "stack_teardown"]
    assert {e["session_id"] for e in events} == {child_session}
    for ledger_path in (home.decision_ledger(DPJ), home.execution_ledger(DPJ)):
        with Ledger(ledger_path) as ledger:  # both processes wrote under the one session's id
            assert {r.data.get("session_id") for r in ledger.records()} == {child_session}


def test_a_new_session_after_exit_reads_prior_state_and_starts_fresh(home: HRMHome) -> None:
    child_session = run_child(home, DPJ)
    with HRM.open(home, DPJ, "offline", new_session=True) as stack:
        assert stack.session_id != child_session
        report = recover(stack.stack)
        assert report.previous_session_id == child_session
        assert report.recent[-1]["input"] == "The closet is 2 metres wide"
        assert stack.turn("hello").response.startswith("Welcome back!")
    with Ledger(home.decision_ledger(DPJ)) as ledger:
        started = [r.data for r in ledger.records() if r.kind == "session_started"]
    assert started[-1]["previous_session_id"] == child_session


def test_a_reopened_stack_shows_the_same_recent_exchanges_as_a_running_one(
    home: HRMHome,
) -> None:
    """The context's recent turns are rebuilt from the turn records, clipped identically."""
    long_input = "Please review this design note. " + "The closet needs shelves. " * 120
    with HRM.open(home, DPJ, "offline") as stack:
        steps = [f"step {i}" for i in range(RECENT_TURNS)]
        for text in ["Let us work on the closet design", long_input, *steps]:
            stack.turn(text)
        running = [dict(t) for t in stack._state.recent]
    with HRM.open(home, DPJ, "offline") as stack:
        assert stack._state.recent == running  # which problem each was about included (D80)
    assert len(running) == RECENT_TURNS and running[0]["input"] == "step 0"
    assert all(t.get("problem") for t in running)
    with HRM.open(home, DPJ, "offline") as stack:
        stack.turn(long_input)
        clipped = stack._state.recent[-1]["input"]
    assert clipped.startswith(long_input[:RECENT_CLIP])
    assert clipped.endswith(f"… [{len(long_input) - RECENT_CLIP} more chars]")
    with HRM.open(home, DPJ, "offline") as stack:
        assert stack._state.recent[-1]["input"] == clipped
