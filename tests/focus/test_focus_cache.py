"""Focus's own writes keep its cached reads current (`Database.remember`, `Database.defer`).

A turn stamps problem progress, ticks the lease and counts the stance turn; the stores say
what their reads now return instead of reading it back, and outside a transaction the progress
stamp and the stance count wait for the next one. Whatever sequence of writes, rollbacks,
clock moves and other connections' commits happens, what the stores answer must be what a
fresh handle reads from disk once the pending writes are stored.
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
        st.sampled_from(["commit", "roll back", "bare"]),  # in a transaction, or none
        st.booleans(),  # another connection commits before the pending writes are stored
    ),
    max_size=30,
)


def _answers(
    registry: ProblemRegistry, commitments: CommitmentManager, stance: StanceMachine
) -> tuple[object, ...]:
    return (
        registry.get_active(),
        sorted(registry.list(), key=lambda p: p.id),
        commitments.get_active(),
        stance.state(),
    )


def _ordered(problems: list[Problem]) -> bool:
    keys = [(p.priority, p.last_progress_at.isoformat()) for p in problems]
    return keys == sorted(keys, reverse=True)


@settings(max_examples=80, deadline=None)
@given(ops=OPS)
def test_cached_focus_reads_match_a_fresh_handle_after_any_writes(
    ops: list[tuple[str, int, int, str, bool]],
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
            other = StanceMachine(POLICY, fresh, "ADMIN", clock=clock)
            other_problems = ProblemRegistry(fresh, "ADMIN", clock=clock)
            for op, n, step, mode, interleaved in ops:
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

                if mode == "roll back":
                    try:
                        with db.transaction():
                            run()
                            raise Boom
                    except Boom:
                        pass
                elif mode == "commit":
                    with db.transaction():
                        run()
                with db.deferring():  # a turn: bookkeeping waits for its transaction
                    if mode == "bare":
                        run()
                        if n % 2:  # a transaction that carries the bookkeeping, and fails
                            try:
                                with db.transaction():
                                    raise Boom
                            except Boom:
                                pass
                    answered = _answers(registry, commitments, stance)
                    if interleaved:  # another process moves on before our writes land
                        clock.now += timedelta(seconds=1)
                        other.record_turn()
                        if known := other_problems.list():
                            other_problems.record_progress(known[n % len(known)].id)

                disk = _answers(
                    ProblemRegistry(fresh, "ADMIN", clock=clock),
                    CommitmentManager(fresh, "ADMIN", clock=clock),
                    StanceMachine(POLICY, fresh, "ADMIN", clock=clock),
                )
                if not interleaved:  # what the stores said before their writes landed held
                    assert answered == disk
                assert _answers(registry, commitments, stance) == disk
                assert _ordered(registry.list())
        finally:
            db.close()
            fresh.close()


def test_a_turn_reads_focus_state_once_it_is_warm(tmp_path: Path) -> None:
    """Steady turns spend no query on what Focus itself just wrote (a minute apart, so each
    turn's progress stamp is written, not left standing as a younger one would be)."""
    db = Database(tmp_path / "memory.db")
    clock = Clock()
    focus = FocusHRM.open(db, "ADMIN", clock=clock)
    registry = focus.problem_registry
    problem = registry.add(registry.build("billing launch"))
    registry.set_active(problem.id)
    focus.commitments.create(problem.id, "ship it", 5)
    statements: list[str] = []
    db._conn.set_trace_callback(statements.append)
    for _ in range(3):
        clock.now += timedelta(minutes=1)
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
