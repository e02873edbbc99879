"""The Episodic Trace compartment (001 §6.3, §8.3): the stack's append-only record of events.

The truth is a tamper-evident ledger at ``HO2/ledger/<CLASS>/episodic.jsonl`` (ARCHITECTURE §4):
an ``episode`` record per entry, and a ``superseded`` record when a later entry replaces an
earlier one — the ledger is never edited, so a supersession is a new link record. Queries run on
a derived SQLite index in ``memory.db`` (tables ``episodes`` and ``episode_tags``, component
``memory.episodic``) that holds each entry's fields, its ledger sequence number and a copy of its
JSON, so a query never reads the ledger. The index can always be rebuilt from the ledger
(`EpisodicTraceStore.rebuild_index`, used by ``hrm ledger reindex``).

The index trails the ledger (D27). An append writes the ledger only and keeps the record in
memory; up to `INDEX_BATCH` of them are indexed together, in one transaction, when the batch is
full, when the store closes, or before any read. Indexing every append on its own cost a turn
about 0.35 ms (nine B-trees touched for one row); a batch shares the pages. Every read first
indexes what this process holds and then, if the ledger has records beyond the index's mark,
what other processes appended, so a read always sees the whole ledger. A crash loses only
in-memory copies: the next open or read indexes them from the ledger.

Several processes may append at once: the ledger serialises appends under its file lock, and
the index takes its records with idempotent inserts, its mark advancing only over a gapless run.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from hrm._process import new_id
from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome, parse_agent_class
from hrm.memory.types import EpisodeEntry, check_json, format_timestamp
from hrm.storage.ledger import Ledger, LedgerRecord
from hrm.storage.sqlite import Database
from hrm.types import Clock, system_clock

__all__ = [
    "BOOKKEEPING_TYPES",
    "DEFAULT_QUERY_LIMIT",
    "EPISODE_KIND",
    "INDEX_BATCH",
    "MIGRATIONS",
    "SUPERSEDED_KIND",
    "EpisodicTraceStore",
    "new_episode_id",
]

logger = logging.getLogger(__name__)

DEFAULT_QUERY_LIMIT = 100
"""How many entries a query returns when the caller gives no limit (the newest ones)."""
EPISODE_KIND = "episode"
"""Ledger record kind of one `EpisodeEntry`."""
SUPERSEDED_KIND = "superseded"
"""Ledger record kind linking an entry to the one that supersedes it: ``{old_id, new_id}``."""
INDEX_BATCH = 64
"""How many appended records wait in memory before they are indexed together (D27). Bounds
the work a read may have to do first and what a crash leaves for the next open to index."""

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS episodes (
        agent_class TEXT NOT NULL,
        id TEXT NOT NULL,
        ts TEXT NOT NULL,
        problem_id TEXT,
        entry_type TEXT NOT NULL,
        seq INTEGER NOT NULL,
        offset INTEGER NOT NULL,
        supersedes TEXT,
        superseded_by TEXT,
        data_json TEXT NOT NULL,
        PRIMARY KEY (agent_class, id)
    );
    CREATE INDEX IF NOT EXISTS episodes_time ON episodes (agent_class, ts, seq);
    CREATE INDEX IF NOT EXISTS episodes_problem ON episodes (agent_class, problem_id, ts, seq);
    CREATE INDEX IF NOT EXISTS episodes_type ON episodes (agent_class, entry_type, ts, seq);
    CREATE TABLE IF NOT EXISTS episode_tags (
        agent_class TEXT NOT NULL,
        id TEXT NOT NULL,
        tag TEXT NOT NULL,
        ts TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (agent_class, id, tag)
    );
    CREATE INDEX IF NOT EXISTS episode_tags_tag ON episode_tags (agent_class, tag, ts, seq);
    CREATE TABLE IF NOT EXISTS episode_index_state (
        agent_class TEXT PRIMARY KEY,
        last_seq INTEGER NOT NULL,
        last_offset INTEGER NOT NULL
    );
    """,
    # The events, newest first, without a scan past the bookkeeping (D394); the list must
    # match `BOOKKEEPING_TYPES` and the literal in `query` for SQLite to use it.
    """
    CREATE INDEX IF NOT EXISTS episodes_events ON episodes (agent_class, ts, seq)
        WHERE entry_type NOT IN ('learning_outcome', 'write_completed');
    """,
)
"""Schema of component ``memory.episodic``; append only, never edit a released entry."""

BOOKKEEPING_TYPES = frozenset({"learning_outcome", "write_completed"})
"""Entry types that record the stack's own bookkeeping — a learning outcome every turn, a
receipt of every memory write — rather than something that happened (`query(events_only=)`)."""
_EVENTS_ONLY = " AND e.entry_type NOT IN ('learning_outcome', 'write_completed')"
"""`BOOKKEEPING_TYPES` as the literal SQL the partial index ``episodes_events`` names."""

_COMPONENT = "memory.episodic"


def new_episode_id() -> str:
    """A fresh entry id: ``ep_`` + 16 random hex characters."""
    return new_id("ep")


class EpisodicTraceStore:
    """Append-only audit log of ONE stack (001 §6.3), a ledger with a queryable index.

    Thread- and process-safe. Close it (or use it as a context manager) to release the ledger.
    """

    def __init__(
        self,
        db: Database,
        home: HRMHome,
        agent_class: str,
        *,
        clock: Clock = system_clock,
        durability: str = "group",
    ) -> None:
        """Open the stack's episodic ledger and bring its index up to date.

        Args:
            db: The home's ``memory.db``.
            home: The home whose ``episodic_ledger(agent_class)`` is the truth.
            agent_class: The stack (``ADMIN`` or ``RESIDENT:<name>``).
            clock: Supplies the timestamp of entries appended without one.
            durability: Ledger durability, ``"group"`` (fsync at `commit`) or ``"fsync"``.

        Raises:
            HRMError: ``VALIDATION_FAILED`` for an invalid agent class; ``LEDGER_CORRUPT`` when
                catching up on an unindexed part of the ledger finds a bad record.
        """
        parse_agent_class(agent_class)
        self.db = db
        self.home = home
        self.agent_class = agent_class
        self._clock = clock
        self.ledger = Ledger(home.episodic_ledger(agent_class), durability=durability, clock=clock)
        self._pending: list[LedgerRecord] = []  # appended, not yet indexed (D27)
        self._pending_lock = threading.Lock()
        self._known_end = 0
        """The ledger's size up to which every record is indexed or in `_pending` (D394): while
        the file still ends there, no other process has appended and a read need not look."""
        self._indexed_through = 0
        """The highest seq this store indexed from `_pending`: a mark below it means that
        indexing was rolled back with an enclosing transaction, and a read looks again."""
        db.migrate(_COMPONENT, MIGRATIONS)
        end = self.ledger.size()
        self.sync_index()
        self._known_end = end

    # ── lifecycle ──────────────────────────────────────────────────────────

    def commit(self) -> None:
        """Make every appended entry durable (the group-commit boundary, e.g. a turn's end)."""
        self.ledger.commit()

    def close(self) -> None:
        """Index what is pending, commit and release the ledger.

        Indexing here can fail (the database was closed first, the disk is full): the records
        are safe in the ledger and the next open indexes them, so that is logged, not raised.
        """
        try:
            self.index_pending()
        except (HRMError, sqlite3.Error) as exc:
            logger.warning(
                "episodic index of %s not brought up to date on close (%s); the next open "
                "indexes the rest from the ledger",
                self.agent_class,
                exc,
            )
        self.ledger.commit()
        self.ledger.close()

    def __enter__(self) -> EpisodicTraceStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ── 001 §6.3 ───────────────────────────────────────────────────────────

    def append(self, entry: EpisodeEntry) -> str:
        """Append `entry` (scrubbed) to the trace and return its id.

        An empty ``id`` gets ``ep_<16 hex>``; a missing ``timestamp`` gets the clock's now.
        ``superseded_by`` is ignored: only `supersede` links entries.

        Raises:
            HRMError: ``VALIDATION_FAILED`` for a malformed entry, a content that is not JSON
                data, or an id already in the trace; nothing is written then.
        """
        return self.append_many([entry])[0]

    def append_many(self, entries: Sequence[EpisodeEntry]) -> list[str]:
        """Append several entries under one ledger lock and one index transaction.

        All are validated before any is written, so a bad one writes none.
        """
        prepared = [self._prepare(e) for e in entries]
        ids = [str(data["id"]) for data in prepared]
        if len(set(ids)) != len(ids):
            raise HRMError.validation_failed("Duplicate entry ids in one append", ids=ids)
        # Ids this store generated (64 random bits) cannot already be in the trace; only
        # caller-chosen ones need the lookup (one query a turn saved for the learning outcome).
        self._check_new_ids([i for e, i in zip(entries, ids, strict=True) if e.id])
        records = self._append_records([(EPISODE_KIND, data) for data in prepared])
        self._defer(records)
        return ids

    def _append_records(self, items: list[tuple[str, dict[str, Any]]]) -> list[LedgerRecord]:
        try:
            records = self.ledger.append_many(items)
        except HRMError as exc:
            if exc.code is ErrorCode.VALIDATION_FAILED:
                # The ledger validated the batch (nothing was written); name the entry and
                # the path the way the other stores do.
                for kind, data in items:
                    if kind == EPISODE_KIND:
                        check_json(data, what=f"episode '{data['id']}'")
            raise
        if records and records[0].offset == self._known_end:  # ours follow what was known
            self._known_end = self.ledger.appended_end
        return records

    def query(
        self,
        start: datetime | None = None,
        end: datetime | None = None,
        problem_id: str | None = None,
        tags: Iterable[str] | None = None,
        entry_type: str | None = None,
        *,
        limit: int = DEFAULT_QUERY_LIMIT,
        events_only: bool = False,
    ) -> list[EpisodeEntry]:
        """The newest entries matching every given filter, newest first.

        Args:
            start: Only entries at or after this time.
            end: Only entries at or before this time.
            problem_id: Only entries of this problem.
            tags: Only entries carrying all of these tags.
            entry_type: Only entries of this type (e.g. ``write_completed``).
            limit: At most this many entries (the newest).
            events_only: No entries of `BOOKKEEPING_TYPES` (the read then need not index
                this process's appended bookkeeping first).

        Raises:
            HRMError: ``VALIDATION_FAILED`` for a limit < 1 or a naive datetime.
        """
        if limit < 1:
            raise HRMError.validation_failed(f"Query limit must be at least 1, got {limit}")
        self._catch_up(BOOKKEEPING_TYPES if events_only else frozenset())
        wanted = sorted(set(tags or ()))
        params: list[Any] = [self.agent_class]
        if wanted:
            sql = (
                "SELECT e.data_json, e.superseded_by FROM episode_tags t"
                " JOIN episodes e ON e.agent_class = t.agent_class AND e.id = t.id"
                " WHERE t.agent_class = ? AND t.tag = ?"
            )
            params.append(wanted[0])
            time_col, order = "t.ts", " ORDER BY t.ts DESC, t.seq DESC"
            for tag in wanted[1:]:
                sql += (
                    " AND EXISTS (SELECT 1 FROM episode_tags x WHERE x.agent_class = e.agent_class"
                    " AND x.id = e.id AND x.tag = ?)"
                )
                params.append(tag)
        else:
            sql = "SELECT e.data_json, e.superseded_by FROM episodes e WHERE e.agent_class = ?"
            time_col, order = "e.ts", " ORDER BY e.ts DESC, e.seq DESC"
        if problem_id is not None:
            sql += " AND e.problem_id = ?"
            params.append(problem_id)
        if entry_type is not None:
            sql += " AND e.entry_type = ?"
            params.append(entry_type)
        if events_only:
            sql += _EVENTS_ONLY
        if start is not None:
            sql += f" AND {time_col} >= ?"
            params.append(format_timestamp(start))
        if end is not None:
            sql += f" AND {time_col} <= ?"
            params.append(format_timestamp(end))
        sql += order + " LIMIT ?"
        params.append(limit)
        return [_decode(row) for row in self.db.execute(sql, params)]

    def supersede(self, old_id: str, new_entry: EpisodeEntry) -> str:
        """Append `new_entry` as the replacement of `old_id` and link both; return the new id.

        The ledger gets the new entry (``supersedes = old_id``) and a ``superseded`` link
        record; afterwards the old entry reads with ``superseded_by`` set.

        Raises:
            HRMError: ``NOT_FOUND`` when `old_id` is not in the trace; ``CONFLICT_DETECTED`` when
                it is already superseded; ``VALIDATION_FAILED`` for a malformed entry.
        """
        old = self.get(old_id)
        if old.superseded_by is not None:
            raise HRMError.conflict_detected(
                old_id, f"Episode '{old_id}' is already superseded by '{old.superseded_by}'"
            )
        if new_entry.supersedes not in (None, old_id):
            raise HRMError.validation_failed(
                f"Entry says it supersedes '{new_entry.supersedes}', not '{old_id}'",
                old_id=old_id,
            )
        data = self._prepare(new_entry, supersedes=old_id)
        self._check_new_ids([str(data["id"])])
        link = {"old_id": old_id, "new_id": data["id"]}
        records = self._append_records([(EPISODE_KIND, data), (SUPERSEDED_KIND, link)])
        self._defer(records)
        return str(data["id"])

    # ── reading single entries ─────────────────────────────────────────────

    def get(self, entry_id: str) -> EpisodeEntry:
        """The entry with `entry_id`.

        Raises:
            HRMError: ``NOT_FOUND`` naming the id and the stack.
        """
        self._catch_up()
        row = self.db.one(
            "SELECT data_json, superseded_by FROM episodes WHERE agent_class = ? AND id = ?",
            (self.agent_class, entry_id),
        )
        if row is None:
            raise HRMError.not_found(
                "episode", entry_id, f"not in the episodic trace of {self.agent_class}"
            )
        return _decode(row)

    def get_many(self, entry_ids: Sequence[str]) -> list[EpisodeEntry]:
        """The entries with `entry_ids`, in that order.

        Raises:
            HRMError: ``NOT_FOUND`` naming the first id that is not in the trace.
        """
        self._catch_up()
        found: dict[str, EpisodeEntry] = {}
        unique = list(dict.fromkeys(entry_ids))
        for chunk_start in range(0, len(unique), 500):
            chunk = unique[chunk_start : chunk_start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self.db.execute(
                "SELECT data_json, superseded_by FROM episodes"
                f" WHERE agent_class = ? AND id IN ({marks})",
                [self.agent_class, *chunk],
            )
            for row in rows:
                entry = _decode(row)
                found[entry.id] = entry
        for entry_id in entry_ids:
            if entry_id not in found:
                raise HRMError.not_found(
                    "episode", entry_id, f"not in the episodic trace of {self.agent_class}"
                )
        return [found[i] for i in entry_ids]

    def missing(self, entry_ids: Iterable[str]) -> list[str]:
        """Which of `entry_ids` are not in this stack's trace (in the given order)."""
        ids = list(dict.fromkeys(entry_ids))
        if not ids:
            return []
        self._catch_up()
        present: set[str] = set()
        for chunk_start in range(0, len(ids), 500):
            chunk = ids[chunk_start : chunk_start + 500]
            rows = self.db.execute(
                "SELECT id FROM episodes"
                f" WHERE agent_class = ? AND id IN ({','.join('?' * len(chunk))})",
                [self.agent_class, *chunk],
            )
            present.update(str(r["id"]) for r in rows)
        return [i for i in ids if i not in present]

    def count(self) -> int:
        """How many entries the stack's trace holds."""
        self._catch_up()
        row = self.db.one(
            "SELECT COUNT(*) AS n FROM episodes WHERE agent_class = ?", (self.agent_class,)
        )
        return 0 if row is None else int(row["n"])

    # ── the index ──────────────────────────────────────────────────────────

    def rebuild_index(self) -> int:
        """Recreate this stack's episode index from the ledger; return the number of entries.

        Runs in one transaction: if the ledger has a bad record the old index stays as it was.

        Raises:
            HRMError: ``LEDGER_CORRUPT`` naming the first bad record.
        """
        with self.db.transaction():
            for table in ("episodes", "episode_tags", "episode_index_state"):
                self.db.execute(f"DELETE FROM {table} WHERE agent_class = ?", (self.agent_class,))
            mark = self._apply_records(self.ledger.records())
            self._set_mark(mark)
        with self._pending_lock:  # the rebuild read them from the ledger
            self._pending = [r for r in self._pending if r.seq > mark[0]]
        logger.info("rebuilt episodic index of %s up to seq %s", self.agent_class, mark[0])
        return self.count()

    def sync_index(self) -> int:
        """Index ledger records appended but not yet indexed; return how many were read.

        Resumes after the last record known to be indexed, checking that it is still in place;
        a ledger that was replaced, truncated or changed there gets a full `rebuild_index`.
        """
        last_seq, last_offset = self._mark()
        if last_seq == 0:
            if self.ledger.last() is None:
                return 0
            with self.db.transaction():
                mark = self._apply_records(self.ledger.records())
                self._set_mark(mark)
            return mark[0]
        try:
            anchor = self.ledger.read_at(last_offset)
            if anchor.seq != last_seq:
                raise HRMError.ledger_corrupt(
                    self.ledger.path, last_seq, last_seq, "indexed record moved"
                )
            with self.db.transaction():
                mark = self._apply_records(self.ledger.records_after(anchor))
                if mark[0]:
                    self._set_mark(mark)
            return mark[0] - last_seq if mark[0] else 0
        except HRMError as exc:
            logger.warning(
                "episodic index of %s does not match its ledger (%s): rebuilding",
                self.agent_class,
                exc.message,
            )
            self.rebuild_index()
            return self._mark()[0]

    def index_pending(self) -> int:
        """Index the records this store appended and holds in memory; return how many.

        Reads do this themselves; call it to bound what a crash leaves to the next open.
        """
        with self._pending_lock:
            records, self._pending = self._pending, []
        if records:
            try:
                self._index(records)
            except BaseException:
                with self._pending_lock:  # keep them for the next try, oldest first
                    self._pending[:0] = records
                raise
        return len(records)

    def _defer(self, records: Sequence[LedgerRecord]) -> None:
        with self._pending_lock:
            self._pending.extend(records)
            full = len(self._pending) >= INDEX_BATCH
        if full:
            self.index_pending()

    def _catch_up(self, unread: frozenset[str] = frozenset()) -> None:
        """Before a read: index this process's pending records, then any other process's.

        A read that returns no entries of the types in `unread` leaves pending entries of only
        those types for their batch: the attention stage that reads recent episodes every turn
        skips learning outcomes, and indexing each turn's outcome for it (its own transaction
        and commit) was a fifth of a RESIDENT turn (D394). Other processes' records are looked
        for only when the ledger no longer ends where this process last knew it to.

        A ledger that cannot be read past the mark (corrupt, unreadable) leaves the index as
        it is: reads serve what was indexed, and `hrm ledger verify` names the damage.
        """
        if self._pending_matters(unread):
            self.index_pending()
        end = self.ledger.size()
        if end == self._known_end and self._mark()[0] >= self._indexed_through:
            return
        try:
            last = self.ledger.last()
            if last is not None and last.seq > self._mark()[0]:
                self.sync_index()
            self._known_end = end
        except HRMError as exc:
            logger.warning(
                "episodic index of %s serves what it has: its ledger cannot be read (%s)",
                self.agent_class,
                exc.message,
            )

    def _pending_matters(self, unread: frozenset[str]) -> bool:
        """Whether a read not returning types `unread` could see a pending record: one of
        another type, or one that supersedes an entry (which changes that entry)."""
        with self._pending_lock:
            if not unread:
                return bool(self._pending)
            return any(
                r.kind != EPISODE_KIND or r.data.get("supersedes")
                or r.data.get("entry_type") not in unread
                for r in self._pending
            )

    def _index(self, records: Sequence[LedgerRecord]) -> None:
        ordered = sorted(records, key=lambda r: r.seq)
        with self.db.transaction():
            self._apply_records(ordered)
            # Advance the caught-up mark only over a gapless run: records of other processes
            # (or threads) may sit between ours and still be unindexed.
            mark = self._mark()
            for record in ordered:
                if record.seq == mark[0] + 1:
                    mark = (record.seq, record.offset)
                elif record.seq > mark[0]:
                    break
            if mark != self._mark():
                self._set_mark(mark)
            self._indexed_through = max(self._indexed_through, ordered[-1].seq)

    def _apply_records(self, records: Iterable[LedgerRecord]) -> tuple[int, int]:
        """Index `records`; return (seq, offset) of the last one, (0, 0) when there were none."""
        mark = (0, 0)
        episode_rows: list[tuple[Any, ...]] = []
        tag_rows: list[tuple[Any, ...]] = []
        links: list[tuple[str, str]] = []
        for record in records:
            mark = (record.seq, record.offset)
            if record.kind == EPISODE_KIND:
                data = record.data
                ts = str(data["timestamp"])
                episode_rows.append(
                    (
                        self.agent_class,
                        data["id"],
                        ts,
                        data.get("problem_id"),
                        data["entry_type"],
                        record.seq,
                        record.offset,
                        data.get("supersedes"),
                        json.dumps(data, ensure_ascii=False),
                    )
                )
                tag_rows.extend(
                    (self.agent_class, data["id"], tag, ts, record.seq)
                    for tag in dict.fromkeys(data.get("tags", []))
                )
            elif record.kind == SUPERSEDED_KIND:
                links.append((str(record.data["new_id"]), str(record.data["old_id"])))
            else:
                logger.debug("episodic ledger: skipping record kind %r", record.kind)
            if len(episode_rows) >= 5000:
                self._flush(episode_rows, tag_rows, links)
        self._flush(episode_rows, tag_rows, links)
        return mark

    def _flush(
        self,
        episode_rows: list[tuple[Any, ...]],
        tag_rows: list[tuple[Any, ...]],
        links: list[tuple[str, str]],
    ) -> None:
        if episode_rows:
            self.db.executemany(
                "INSERT OR IGNORE INTO episodes (agent_class, id, ts, problem_id, entry_type,"
                " seq, offset, supersedes, data_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                episode_rows,
            )
        if tag_rows:
            self.db.executemany(
                "INSERT OR IGNORE INTO episode_tags (agent_class, id, tag, ts, seq)"
                " VALUES (?, ?, ?, ?, ?)",
                tag_rows,
            )
        if links:
            # The first link wins, in the index as in a replay of the ledger.
            self.db.executemany(
                "UPDATE episodes SET superseded_by = ?"
                " WHERE agent_class = ? AND id = ? AND superseded_by IS NULL",
                [(new, self.agent_class, old) for new, old in links],
            )
        episode_rows.clear()
        tag_rows.clear()
        links.clear()

    def _mark(self) -> tuple[int, int]:
        """(seq, offset) of the last ledger record known indexed with all before it."""
        return self.db.cached(
            ("episodic.mark", self.agent_class), self._read_mark, table="episode_index_state"
        )

    def _read_mark(self) -> tuple[int, int]:
        row = self.db.one(
            "SELECT last_seq, last_offset FROM episode_index_state WHERE agent_class = ?",
            (self.agent_class,),
        )
        return (0, 0) if row is None else (int(row["last_seq"]), int(row["last_offset"]))

    def _set_mark(self, mark: tuple[int, int]) -> None:
        self.db.execute(
            "INSERT INTO episode_index_state (agent_class, last_seq, last_offset) VALUES (?, ?, ?)"
            " ON CONFLICT(agent_class) DO UPDATE SET"
            " last_seq = excluded.last_seq, last_offset = excluded.last_offset",
            (self.agent_class, *mark),
        )
        # Every append advances the mark and checks it next time: no read-back.
        self.db.remember(
            ("episodic.mark", self.agent_class), (mark[0], mark[1]), table="episode_index_state"
        )

    # ── validation ─────────────────────────────────────────────────────────

    def _prepare(self, entry: EpisodeEntry, *, supersedes: str | None = None) -> dict[str, Any]:
        if not isinstance(entry, EpisodeEntry):
            raise HRMError.validation_failed(
                f"Expected an EpisodeEntry, got {type(entry).__name__}"
            )
        entry_id = entry.id or new_episode_id()
        what = f"episode '{entry_id}'"
        if not isinstance(entry_id, str) or not entry_id.strip():
            raise HRMError.validation_failed(f"Episode id must be a non-empty string: {entry_id!r}")
        if not isinstance(entry.entry_type, str) or not entry.entry_type.strip():
            raise HRMError.validation_failed(
                f"{what} needs a non-empty entry_type (decision | action | observation |"
                " reflection or an event type)",
                id=entry_id,
            )
        if entry.problem_id is not None and not isinstance(entry.problem_id, str):
            raise HRMError.validation_failed(f"{what}: problem_id must be a string or None")
        if not isinstance(entry.content, dict):
            raise HRMError.validation_failed(
                f"{what}: content must be a dict, got {type(entry.content).__name__}", id=entry_id
            )
        tags = list(entry.tags)
        if not all(isinstance(t, str) and t for t in tags):
            raise HRMError.validation_failed(f"{what}: tags must be non-empty strings: {tags!r}")
        timestamp = entry.timestamp if entry.timestamp is not None else self._clock()
        data: dict[str, Any] = {
            "id": entry_id,
            "timestamp": format_timestamp(timestamp),
            "problem_id": entry.problem_id,
            "entry_type": entry.entry_type,
            "content": entry.content,
            "tags": list(dict.fromkeys(tags)),
            "supersedes": supersedes if supersedes is not None else entry.supersedes,
        }
        # The ledger validates and scrubs the whole batch before writing any of it (one walk
        # instead of two a turn); the index copies the scrubbed record.
        return data

    def _check_new_ids(self, ids: list[str]) -> None:
        existing = set(ids) - set(self.missing(ids))
        if existing:
            raise HRMError.validation_failed(
                f"Episode id(s) already in the trace of {self.agent_class}: "
                f"{', '.join(sorted(existing))}; leave id empty to get a fresh one",
                ids=sorted(existing),
            )


def _decode(row: sqlite3.Row) -> EpisodeEntry:
    data = json.loads(row["data_json"])
    return EpisodeEntry(
        id=data["id"],
        # Stored timestamps are always format_timestamp's "...Z", which 3.11 parses as UTC.
        timestamp=datetime.fromisoformat(data["timestamp"]),
        problem_id=data.get("problem_id"),
        entry_type=data["entry_type"],
        content=data.get("content", {}),
        tags=list(data.get("tags", [])),
        supersedes=data.get("supersedes"),
        superseded_by=row["superseded_by"],
    )
