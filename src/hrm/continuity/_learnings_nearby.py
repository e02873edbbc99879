"""Neighbour context in the learnings index: migration 2 of the learnings component (D340).

A learning is often one half of an episode — a question and its answer, a failed approach and
its fix — stored one after the other in a session, and the words a later search uses are often
in the other half. So the full-text index holds, besides a learning's own columns, a fourth
column ``nearby``: the text of the learnings stored just before and after it in its session
(`NEARBY_REACH` each side, in ``(created_at, seq)`` order), ranked at `NEARBY_WEIGHT` of its own
words. A learning found only through its neighbours therefore ranks below one that holds the
words itself, and coverage (which counts highlighted words of the learning's own text) gives it
none.

The column is kept only in the index, never in ``learnings``: ``learnings_fts`` becomes an FTS5
table with its own content (no longer external-content), so the derived text is never journaled
(D180, D182: virtual tables and their shadow tables are derived), and updating one row's
``nearby`` needs no copy of the text it replaces. Triggers keep it exact: storing, deleting or
moving a learning recomputes the column for the learnings within reach of its old and new
places, through the `learnings_nearby` view, so a forgotten learning's text leaves its
neighbours' index rows in the same statement that deletes it.
"""

from __future__ import annotations

__all__ = ["NEARBY_MIGRATION", "NEARBY_REACH", "NEARBY_WEIGHT", "TOKENIZER"]

TOKENIZER = "porter unicode61 remove_diacritics 2"
"""Porter stemming over unicode61 with accents folded (the index's tokenizer since migration 1)."""

NEARBY_REACH = 2
"""Learnings each side, in session order, whose text a learning's ``nearby`` column holds. On
LoCoMo's conversations 0-4 reach 2 beat 1 and 3 (word-only recall@10 0.718 against 0.691 and
0.700, each at its best weight)."""

NEARBY_WEIGHT = 0.5
"""BM25 weight of the ``nearby`` column (the learning's own words weigh 1.0). Chosen on LoCoMo
conversations 0-4 from 0.2, 0.35 and 0.5 (recall@10 0.702, 0.712, 0.718 at reach 2)."""

_BEFORE = (
    "SELECT p.content FROM learnings p INDEXED BY learnings_session"
    " WHERE p.session_id = l.session_id AND (p.created_at, p.seq) < (l.created_at, l.seq)"
    f" ORDER BY p.created_at DESC, p.seq DESC LIMIT {NEARBY_REACH}"
)
_AFTER = (
    "SELECT p.content FROM learnings p INDEXED BY learnings_session"
    " WHERE p.session_id = l.session_id AND (p.created_at, p.seq) > (l.created_at, l.seq)"
    f" ORDER BY p.created_at, p.seq LIMIT {NEARBY_REACH}"
)


def _around(session: str, created: str, seq: str) -> str:
    """The seqs within reach of a place in a session (the place itself excluded): a SELECT."""
    side = (
        "SELECT seq FROM (SELECT seq FROM learnings INDEXED BY learnings_session"
        f" WHERE session_id = {session} AND (created_at, seq) {{op}} ({created}, {seq})"
        f" ORDER BY created_at {{order}}, seq {{order}} LIMIT {NEARBY_REACH})"
    )
    return f"{side.format(op='<', order='DESC')} UNION ALL {side.format(op='>', order='ASC')}"


def _refresh(session: str, created: str, seq: str) -> str:
    """An UPDATE recomputing ``nearby`` for the learnings within reach of a place."""
    return (
        "UPDATE learnings_fts SET nearby ="
        " (SELECT n.nearby FROM learnings_nearby n WHERE n.seq = learnings_fts.rowid)"
        f" WHERE rowid IN ({_around(session, created, seq)});"
    )


NEARBY_MIGRATION = f"""
    DROP TRIGGER IF EXISTS learnings_fts_insert;
    DROP TRIGGER IF EXISTS learnings_fts_delete;
    DROP TRIGGER IF EXISTS learnings_fts_update;
    DROP TABLE IF EXISTS learnings_fts;
    CREATE VIEW learnings_nearby AS
        SELECT l.seq AS seq, CASE WHEN l.session_id IS NULL THEN '' ELSE
            coalesce((SELECT group_concat(content, char(10)) FROM ({_BEFORE})), '')
            || char(10) || coalesce((SELECT group_concat(content, char(10)) FROM ({_AFTER})), '')
        END AS nearby
        FROM learnings l;
    CREATE VIRTUAL TABLE learnings_fts USING fts5(
        content, tags, context, nearby, tokenize='{TOKENIZER}'
    );
    INSERT INTO learnings_fts (learnings_fts, rank)
        VALUES ('rank', 'bm25(1.0, 0.5, 0.25, {NEARBY_WEIGHT})');
    INSERT INTO learnings_fts (rowid, content, tags, context, nearby)
        SELECT l.seq, l.content, l.tags, l.context, n.nearby
        FROM learnings l JOIN learnings_nearby n ON n.seq = l.seq;
    CREATE TRIGGER learnings_fts_insert AFTER INSERT ON learnings BEGIN
        INSERT INTO learnings_fts (rowid, content, tags, context, nearby)
        SELECT new.seq, new.content, new.tags, new.context, n.nearby
        FROM learnings_nearby n WHERE n.seq = new.seq;
        {_refresh("new.session_id", "new.created_at", "new.seq")}
    END;
    CREATE TRIGGER learnings_fts_delete AFTER DELETE ON learnings BEGIN
        DELETE FROM learnings_fts WHERE rowid = old.seq;
        {_refresh("old.session_id", "old.created_at", "old.seq")}
    END;
    CREATE TRIGGER learnings_fts_update AFTER UPDATE OF content, tags, context ON learnings BEGIN
        UPDATE learnings_fts SET content = new.content, tags = new.tags, context = new.context
        WHERE rowid = new.seq;
        {_refresh("new.session_id", "new.created_at", "new.seq")}
    END;
    CREATE TRIGGER learnings_fts_move AFTER UPDATE OF session_id, created_at ON learnings BEGIN
        UPDATE learnings_fts SET nearby =
            (SELECT n.nearby FROM learnings_nearby n WHERE n.seq = new.seq)
        WHERE rowid = new.seq;
        {_refresh("old.session_id", "old.created_at", "old.seq")}
        {_refresh("new.session_id", "new.created_at", "new.seq")}
    END;
"""
"""Migration 2 of ``continuity.learnings``: the index gains ``nearby`` and owns its text."""
