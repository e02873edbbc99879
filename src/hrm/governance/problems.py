"""The problem registry (001 §12.3): what a stack is working on, persisted per agent class.

A problem is a unit of attention with a priority on the policy's 1–10 scale and a status:
``active`` (at most one per agent class, enforced by a partial unique index), ``queued``
(waiting, never started), ``paused`` (was active, set aside by a switch) or ``resolved``.

Why persisted and read through: hooks, the CLI and a server open the same home in different
processes, and a new session must pick up where the last stopped (004 Invariant #3). So the
registry holds no state in memory; every call is one or two indexed queries on ``memory.db``.

Similarity (`find_similar`) is deterministic keyword overlap: both texts are reduced to content
words (lower-cased, stopwords dropped, stemmed so "deploying" meets "deploy": `hrm._keywords`),
and a problem scores ``0.5 * jaccard + 0.5 * coverage`` where coverage is the share of the
problem's keywords the text mentions. Coverage matters because an input is usually longer than
a problem's title; Jaccard keeps a one-word overlap with a long description from winning.
A score at or above `SIMILARITY_THRESHOLD` (0.3) means "this input is about that problem".
"""

from __future__ import annotations

import builtins
import logging
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

from hrm._keywords import keywords as _keywords_of
from hrm._process import new_id
from hrm.errors import HRMError
from hrm.scrubbing import scrub_text
from hrm.types import Clock, system_clock

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Hashable, Iterable

    from hrm.storage.sqlite import Database

__all__ = [
    "MAX_KEYWORDS",
    "PROGRESS_RESOLUTION",
    "SIMILARITY_THRESHOLD",
    "Problem",
    "ProblemMatch",
    "ProblemRegistry",
    "ProblemStatus",
    "extract_keywords",
    "keyword_similarity",
    "new_problem_id",
    "problem_keywords",
    "problems_from_rows",
]

logger = logging.getLogger(__name__)

SIMILARITY_THRESHOLD = 0.3
"""`find_similar` scores at or above this tie an input to a problem."""

MAX_KEYWORDS = 24
"""Keywords kept per problem (the first distinct content words of title, then description)."""

PROGRESS_RESOLUTION = timedelta(seconds=10)
"""How fine a problem's progress stamp is: a stamp younger than this is not rewritten.

The stamp feeds staleness (0 now, 1 at 30 minutes) and retirement (days), so ten seconds is
under 0.6 % of the finest use. A person's turns are further apart and stamp every time; turns
arriving in a burst (a server, a script) skip a write, its index page and its journal entry
each (D396)."""

_COMPONENT = "governance.problems"
_MIGRATIONS = [
    """
    CREATE TABLE problems (
        id TEXT PRIMARY KEY,
        agent_class TEXT NOT NULL,
        title TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        keywords TEXT NOT NULL DEFAULT '',
        priority INTEGER NOT NULL,
        status TEXT NOT NULL
            CHECK (status IN ('active', 'queued', 'paused', 'resolved')),
        created_at TEXT NOT NULL,
        last_progress_at TEXT NOT NULL
    );
    CREATE UNIQUE INDEX problems_one_active ON problems (agent_class) WHERE status = 'active';
    CREATE INDEX problems_by_status ON problems (agent_class, status, last_progress_at);
    """,
    # Every turn stamps the active problem's progress: with last_progress_at in an index that
    # stamp rewrote an index page as well as the row's (no query needed it there: lists are
    # ordered in memory and the active problem has its own index).
    """
    DROP INDEX problems_by_status;
    CREATE INDEX problems_by_status ON problems (agent_class, status);
    """,
]

def extract_keywords(text: str) -> tuple[str, ...]:
    """The normalised content words of `text`, in first-seen order, without duplicates.

    Lower-cased; URLs, stopwords and tokens without letters (numbers, dates) dropped; plural
    and each word stemmed (`hrm._keywords`), so "Deploying the deployments" gives
    ``("deploy",)``.
    """
    return _keywords_of(text)


def problem_keywords(title: str, description: str) -> tuple[str, ...]:
    """A problem's keywords: those of its title, then of its description, `MAX_KEYWORDS` at
    most."""
    return tuple(dict.fromkeys(extract_keywords(title) + extract_keywords(description)))[
        :MAX_KEYWORDS
    ]


def keyword_similarity(text_keywords: frozenset[str], problem_keywords: frozenset[str]) -> float:
    """``0.5 * jaccard + 0.5 * coverage`` of the problem keywords, in [0, 1] (0 if one is empty)."""
    if not text_keywords or not problem_keywords:
        return 0.0
    shared = len(text_keywords & problem_keywords)
    if shared == 0:
        return 0.0
    jaccard = shared / len(text_keywords | problem_keywords)
    coverage = shared / len(problem_keywords)
    return 0.5 * jaccard + 0.5 * coverage


def new_problem_id() -> str:
    """A fresh problem id: ``prob_`` and twelve hex digits."""
    return new_id("prob", 12)


class ProblemStatus(StrEnum):
    """Where a problem stands; only one is ``active`` per agent class."""

    ACTIVE = "active"
    QUEUED = "queued"
    PAUSED = "paused"
    RESOLVED = "resolved"


@dataclass(frozen=True, slots=True, kw_only=True)
class Problem:
    """One unit of attention (001 §12.3's ``Problem``)."""

    id: str
    """``prob_…``; a candidate the arbiter made up keeps its id when Focus persists it."""
    title: str
    description: str
    keywords: tuple[str, ...]
    """Content words of title and description, what `find_similar` matches on."""
    priority: int
    """On the policy's PRIORITY_SCALE, 1 (lowest) to 10."""
    status: ProblemStatus
    created_at: datetime
    last_progress_at: datetime
    """Aware UTC; staleness in arbitration is measured from here."""
    agent_class: str

    def to_record(self) -> dict[str, object]:
        """A JSON-ready summary for decision records."""
        return {
            "id": self.id,
            "title": self.title,
            "priority": self.priority,
            "status": self.status.value,
            "last_progress_at": self.last_progress_at.isoformat(),
        }


@dataclass(frozen=True, slots=True)
class ProblemMatch:
    """A problem and how well a text matched it."""

    problem: Problem
    score: float


def _row_to_problem(row: sqlite3.Row) -> Problem:
    return Problem(
        id=row["id"],
        title=row["title"],
        description=row["description"],
        # Recomputed, not read back: keywords stored under an earlier stemmer would match
        # nothing a message says now (D152). The stored column stays for older readers.
        keywords=problem_keywords(row["title"], row["description"]),
        priority=int(row["priority"]),
        status=ProblemStatus(row["status"]),
        created_at=datetime.fromisoformat(row["created_at"]),
        last_progress_at=datetime.fromisoformat(row["last_progress_at"]),
        agent_class=row["agent_class"],
    )


def problems_from_rows(rows: Iterable[sqlite3.Row]) -> list[Problem]:
    """Problems from rows of the ``problems`` table, in `ProblemRegistry.list` order: for a
    reader that holds only a read-only view of a stack's database (HO3's `hrm stack
    inspect`, through `CrossStackReader.open_db`)."""
    problems = [_row_to_problem(row) for row in rows]
    problems.sort(key=lambda p: (p.priority, _instant(p.last_progress_at)), reverse=True)
    return problems


def _instant(moment: datetime) -> float:
    """Seconds since the epoch; a time without a zone is read as UTC (the store writes UTC)."""
    return (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).timestamp()


class ProblemRegistry:
    """The problems of ONE agent class, persisted in the stack's own database (D320).

    Args:
        db: The stack's database; the registry migrates its own table on construction.
        agent_class: The stack this registry belongs to; every row and query is scoped to it.
        clock: Source of "now" for creation and progress times.
        priority_scale: The policy's (low, high) priority bounds; priorities are clamped to it.
    """

    def __init__(
        self,
        db: Database,
        agent_class: str,
        *,
        clock: Clock = system_clock,
        priority_scale: tuple[int, int] = (1, 10),
    ) -> None:
        self._db = db
        self.agent_class = agent_class
        self._clock = clock
        self._low, self._high = priority_scale
        db.migrate(_COMPONENT, _MIGRATIONS)

    # ── building ───────────────────────────────────────────────────────────

    def build(
        self,
        title: str,
        *,
        description: str = "",
        priority: int = 5,
        status: ProblemStatus = ProblemStatus.QUEUED,
        problem_id: str | None = None,
    ) -> Problem:
        """A problem value for this agent class, NOT persisted (the arbiter's candidates).

        Raises:
            HRMError: VALIDATION_FAILED when the title is empty.
        """
        title = scrub_text(title.strip())
        if not title:
            raise HRMError.validation_failed("A problem needs a non-empty title", field="title")
        description = scrub_text(description.strip())
        keywords = problem_keywords(title, description)
        now = self._clock()
        return Problem(
            id=problem_id or new_problem_id(),
            title=title,
            description=description,
            keywords=keywords,
            priority=self.clamp_priority(priority),
            status=status,
            created_at=now,
            last_progress_at=now,
            agent_class=self.agent_class,
        )

    def clamp_priority(self, priority: int) -> int:
        """`priority` forced onto the policy scale."""
        return max(self._low, min(self._high, int(priority)))

    # ── writes ─────────────────────────────────────────────────────────────

    def create(
        self,
        title: str,
        *,
        description: str = "",
        priority: int = 5,
        status: ProblemStatus = ProblemStatus.QUEUED,
    ) -> Problem:
        """Build and persist a problem; an ``active`` one pauses the previous active problem."""
        return self.add(
            self.build(title, description=description, priority=priority, status=status)
        )

    def add(self, problem: Problem) -> Problem:
        """Persist a built problem (e.g. an arbiter candidate) under its own id.

        Raises:
            HRMError: VALIDATION_FAILED if it belongs to another agent class or the id exists.
        """
        if problem.agent_class != self.agent_class:
            raise HRMError.validation_failed(
                f"Problem {problem.id} belongs to {problem.agent_class}, not {self.agent_class}",
                problem_id=problem.id,
            )
        with self._db.transaction():
            if problem.status is ProblemStatus.ACTIVE:
                self._pause_active(except_id=problem.id)
            self._db.execute(
                "INSERT INTO problems (id, agent_class, title, description, keywords, priority,"
                " status, created_at, last_progress_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    problem.id,
                    self.agent_class,
                    scrub_text(problem.title),
                    scrub_text(problem.description),
                    " ".join(problem.keywords),
                    self.clamp_priority(problem.priority),
                    problem.status.value,
                    problem.created_at.isoformat(),
                    problem.last_progress_at.isoformat(),
                ),
            )
        logger.debug("problem %s created as %s", problem.id, problem.status.value)
        return problem

    def set_active(self, problem_id: str) -> Problem:
        """Make `problem_id` the active problem; the previous active one becomes ``paused``.

        Raises:
            HRMError: NOT_FOUND for an unknown id; VALIDATION_FAILED for a resolved problem.
        """
        with self._db.transaction():
            problem = self._require(problem_id)
            if problem.status is ProblemStatus.RESOLVED:
                raise HRMError.validation_failed(
                    f"Problem {problem_id} is resolved; create a new problem instead",
                    problem_id=problem_id,
                )
            if problem.status is ProblemStatus.ACTIVE:
                return problem
            self._pause_active(except_id=problem_id)
            now = self._clock()
            self._set(problem_id, status=ProblemStatus.ACTIVE, progress_at=now)
        return replace(problem, status=ProblemStatus.ACTIVE, last_progress_at=now)

    def queue(self, problem_id: str) -> Problem:
        """Put a problem back in the queue (an active one leaves no active problem behind)."""
        return self._move(problem_id, ProblemStatus.QUEUED)

    def pause(self, problem_id: str) -> Problem:
        """Set a problem aside without resolving it."""
        return self._move(problem_id, ProblemStatus.PAUSED)

    def resolve(self, problem_id: str) -> Problem:
        """Mark a problem resolved; it no longer matches inputs or competes for focus."""
        return self._move(problem_id, ProblemStatus.RESOLVED)

    def retire_stale(self, untouched_for: timedelta) -> builtins.list[Problem]:
        """Resolve queued and paused problems without progress for `untouched_for`.

        Every new topic becomes a problem, and only the person resolves one: without this a
        registry used daily grows by the hundreds, every turn compares its input with all of
        them, and a topic dropped weeks ago can still claim a new input. The active problem
        is never retired. Returns the retired problems (as resolved).
        """
        cutoff = _instant(self._clock() - untouched_for)
        stale = [
            problem
            for problem, _ in self._everything()
            if problem.status in (ProblemStatus.QUEUED, ProblemStatus.PAUSED)
            and _instant(problem.last_progress_at) < cutoff
        ]
        if stale:
            with self._db.transaction():
                self._db.executemany(
                    "UPDATE problems SET status = 'resolved' WHERE id = ? AND agent_class = ?",
                    [(problem.id, self.agent_class) for problem in stale],
                )
        return [replace(problem, status=ProblemStatus.RESOLVED) for problem in stale]

    def record_progress(self, problem_id: str) -> Problem:
        """Stamp progress now (resets the staleness the arbiter weighs against it), to within
        `PROGRESS_RESOLUTION`: a stamp younger than that stands.

        Bookkeeping every turn does: the stamp is `Database.defer`red to the turn's next
        transaction (at once inside one); reads through this registry see it meanwhile.
        """
        now = self._clock()
        active = self.get_active()  # the usual subject, and usually known without a query
        problem = active if active is not None and active.id == problem_id else None
        problem = problem or self.get(problem_id)
        if problem is None:
            problem = self._require(problem_id)  # raises NOT_FOUND
        if timedelta(0) <= now - problem.last_progress_at < PROGRESS_RESOLUTION:
            return problem
        progressed = replace(problem, last_progress_at=now)
        leaves: dict[Hashable, object] = {
            ("governance.problems", self.agent_class): self._everything_with(progressed),
        }
        # The active problem as it reads after the stamp: itself stamped, or unchanged when
        # the stamp is another's (a queued input's, D51).
        leaves[("governance.problem", self.agent_class)] = (
            progressed if problem is active else active
        )
        # Only the stamp: assigning the status too, even unchanged, rewrites both indexes
        # that hold it (SQLite updates an index when its column is assigned).
        self._db.defer(
            "UPDATE problems SET last_progress_at = ? WHERE id = ? AND agent_class = ?",
            (now.isoformat(), problem_id, self.agent_class),
            table="problems",
            leaves=leaves,
        )
        return progressed

    # ── reads ──────────────────────────────────────────────────────────────

    def get(self, problem_id: str) -> Problem | None:
        """The problem with this id in this agent class, or None.

        Read from the whole registry arbitration keeps loaded (`_everything`): a turn asks for
        the problem its last input went to (D51), and a query of its own would re-read what
        the turn already holds.
        """
        for problem, _ in self._everything():
            if problem.id == problem_id:
                return problem
        return None

    def get_active(self) -> Problem | None:
        """The active problem, or None."""
        return self._db.cached(
            ("governance.problem", self.agent_class), self._read_active, table="problems"
        )

    def _read_active(self) -> Problem | None:
        row = self._db.one(
            "SELECT * FROM problems WHERE agent_class = ? AND status = 'active'",
            (self.agent_class,),
        )
        return _row_to_problem(row) if row else None

    def list(self, status: ProblemStatus | None = None) -> list[Problem]:
        """Problems of this agent class, by priority (high first) then most recent progress."""
        return [p for p, _ in self._everything() if status is None or p.status is status]

    def _everything(self) -> tuple[tuple[Problem, frozenset[str]], ...]:
        """Every problem of the class in `list` order, with its keyword set.

        Arbitration reads the whole registry twice a turn (named and similar problems): one
        load serves both until the problems table changes (problems are frozen values).
        """
        return self._db.cached(
            ("governance.problems", self.agent_class), self._read_everything, table="problems"
        )

    def _everything_with(
        self, changed: Problem
    ) -> tuple[tuple[Problem, frozenset[str]], ...]:
        """The registry as it reads once `changed` is written over what it holds now.

        Every turn stamps progress, so without this each turn would read every problem back.
        The order is `_read_everything`'s: priority, then the latest progress first (as an
        instant: formatting every problem's time as text to compare it cost more than the rest).
        """
        entries = [
            (changed, keywords) if problem.id == changed.id else (problem, keywords)
            for problem, keywords in self._everything()
        ]
        entries.sort(key=lambda e: (e[0].priority, _instant(e[0].last_progress_at)), reverse=True)
        return tuple(entries)

    def _read_everything(self) -> tuple[tuple[Problem, frozenset[str]], ...]:
        rows = self._db.execute(
            "SELECT * FROM problems WHERE agent_class = ?"
            " ORDER BY priority DESC, last_progress_at DESC",
            (self.agent_class,),
        )
        return tuple(
            (problem, frozenset(problem.keywords)) for problem in map(_row_to_problem, rows)
        )

    def find_similar(
        self,
        text: str,
        *,
        threshold: float = SIMILARITY_THRESHOLD,
        include_resolved: bool = False,
        limit: int = 5,
    ) -> builtins.list[ProblemMatch]:
        """Open problems whose keywords overlap `text`, best first, scored in [0, 1].

        Ties break on higher priority, then more recent progress.
        """
        words = frozenset(extract_keywords(text))
        if not words:
            return []
        matches: builtins.list[ProblemMatch] = []
        for problem, keywords in self._everything():
            if problem.status is ProblemStatus.RESOLVED and not include_resolved:
                continue
            score = keyword_similarity(words, keywords)
            if score >= threshold:
                matches.append(ProblemMatch(problem, score))
        matches.sort(
            key=lambda m: (m.score, m.problem.priority, m.problem.last_progress_at), reverse=True
        )
        return matches[:limit]

    # ── internals ──────────────────────────────────────────────────────────

    def _require(self, problem_id: str) -> Problem:
        """The stored problem, read afresh: what a write is about to change."""
        row = self._db.one(
            "SELECT * FROM problems WHERE id = ? AND agent_class = ?",
            (problem_id, self.agent_class),
        )
        problem = _row_to_problem(row) if row else None
        if problem is None:
            raise HRMError.not_found(
                "problem", problem_id, hint=f"list problems of {self.agent_class} to see valid ids"
            )
        return problem

    def _move(self, problem_id: str, status: ProblemStatus) -> Problem:
        with self._db.transaction():
            problem = self._require(problem_id)
            self._set(problem_id, status=status, progress_at=problem.last_progress_at)
        return replace(problem, status=status)

    def _set(self, problem_id: str, *, status: ProblemStatus, progress_at: datetime) -> None:
        self._db.execute(
            "UPDATE problems SET status = ?, last_progress_at = ? WHERE id = ? AND agent_class = ?",
            (status.value, progress_at.isoformat(), problem_id, self.agent_class),
        )

    def _pause_active(self, *, except_id: str) -> None:
        self._db.execute(
            "UPDATE problems SET status = 'paused'"
            " WHERE agent_class = ? AND status = 'active' AND id != ?",
            (self.agent_class, except_id),
        )
