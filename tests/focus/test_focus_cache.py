"""Focus's own writes keep its cached reads current (`Database.remember`).

A turn stamps problem progress, ticks the lease and counts the stance turn; the stores say
what their reads now return instead of reading it back. Whatever sequence of writes, rollbacks
and clock moves happens, what the stores answer must be what a fresh handle reads from disk.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.focus.commitments import CommitmentManager
from hrm.focus.focus import FocusHRM
from hrm.focus.stance import GATE_TRANSITIONS, StanceMachine
from hrm.governance.policy import POLICY
from hrm.governance.problems import Problem, ProblemRegistry
from hrm.storage.sqlite import Database
from hrm.types import GateType, Stance


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


class Boom(Exception):
    pass


MOVES = sorted(
    {(gate, to) for gate, pairs in GATE_TRANSITIONS.items() for _, to in pairs},
    key=lambda m: (m[0].value, m[1].value),
)

OPS = st.lists(
    st.tuples(
        st.sampled_from(
            ["add", "activate", "queue", "progress", "create", "tick", "complete", "abandon",
             "count_turn", "move"]
        ),
        st.integers(0, 20),  # picks a problem, a priority, a lease or a move
        st.integers(0, 3),  # clock step in seconds (0: the same instant as the last write)
        st.booleans(),  # run it in a transaction that rolls back
    ),
    max_size=30,
)


def _ordered(problems: list[Problem]) -> bool:
    keys = [(p.priority, p.last_progress_at.isoformat()) for p in problems]
    return keys == sorted(keys, reverse=True)


@settings(max_examples=80, deadline=None)
@given(ops=OPS)
def test_cached_focus_reads_match_a_fresh_handle_after_any_writes(
    ops: list[tuple[str, int, int, bool]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "memory.db"
        clock = Clock()
        db = Database(path)
        focus = FocusHRM.open(db, "ADMIN", clock=clock)
        registry, commitments, stance = focus.problem_registry, focus.commitments, focus.stance
        fresh = Database(path)
        # Start mid-work (two problems, one active, a lease running), where turns spend time.
        first = registry.add(registry.build("billing launch", priority=7))
        registry.add(registry.build("cache layer", priority=7))
        registry.set_active(first.id)
        commitments.create(first.id, "ship it", 3)
        try:
            for op, n, step, roll_back in ops:
                clock.now += timedelta(seconds=step)
                known = registry.list()

                def run(op: str = op, n: int = n, known: list[Problem] = known) -> None:
                    target = known[n % len(known)].id if known else None
                    if op == "add":
                        registry.add(registry.build(f"problem {n}", priority=1 + n % 10))
                    elif op == "activate" and target:
                        registry.set_active(target)
                    elif op == "queue" and target:
                        registry.queue(target)
                    elif op == "progress" and target:
                        registry.record_progress(target)
                    elif op == "create" and target:
                        commitments.create(target, "work", 1 + n % 4)
                    elif op == "tick":
                        commitments.tick()
                    elif op == "complete":
                        commitments.complete()
                    elif op == "abandon":
                        commitments.abandon("changed course")
                    elif op == "count_turn":
                        stance.record_turn()
                    elif op == "move":
                        gate, to = MOVES[n % len(MOVES)]
                        stance.attempt(to, "test", gate, {"reframe": True, "delivered": True})

                if roll_back:
                    try:
                        with db.transaction():
                            run()
                            raise Boom
                    except Boom:
                        pass
                else:
                    with db.transaction():
                        run()

                disk_problems = ProblemRegistry(fresh, "ADMIN", clock=clock)
                disk_commitments = CommitmentManager(fresh, "ADMIN", clock=clock)
                disk_stance = StanceMachine(POLICY, fresh, "ADMIN", clock=clock)
                assert registry.get_active() == disk_problems.get_active()
                cached_list = registry.list()
                assert sorted(cached_list, key=lambda p: p.id) == sorted(
                    disk_problems.list(), key=lambda p: p.id
                )
                assert _ordered(cached_list)
                assert commitments.get_active() == disk_commitments.get_active()
                assert stance.state() == disk_stance.state()
        finally:
            db.close()
            fresh.close()


def test_a_turn_reads_focus_state_once_it_is_warm(tmp_path: Path) -> None:
    """Steady turns spend no query on what Focus itself just wrote."""
    db = Database(tmp_path / "memory.db")
    focus = FocusHRM.open(db, "ADMIN")
    registry = focus.problem_registry
    problem = registry.add(registry.build("billing launch"))
    registry.set_active(problem.id)
    focus.commitments.create(problem.id, "ship it", 5)
    statements: list[str] = []
    db._conn.set_trace_callback(statements.append)
    for _ in range(3):
        with db.transaction():
            registry.record_progress(problem.id)
            focus.commitments.tick()
            focus.stance.record_turn()
        statements.clear()
        assert registry.get_active() is not None
        assert registry.list()
        assert focus.commitments.get_active() is not None
        assert focus.stance.get_current() is Stance(POLICY.NEW_SESSION_STANCE)
        assert [s for s in statements if s.startswith("SELECT")] == []
    assert GateType.FRAMING in GATE_TRANSITIONS
    db.close()
