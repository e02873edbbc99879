"""The memory journal's pure part: which tables it covers, their triggers, and `apply`.

No connection is opened here and no file is touched: `hrm.storage.journal` runs these against
``memory.db`` as a turn writes, and `hrm.storage.rebuild` runs the same `apply_ops` to build a
database from the ledger alone — one code path, so the two cannot drift apart (D181).

An operation is a row image, not a domain event: ``{"op": "put", "t": table, "row": {...}}``
holds every column of a new row (and its rowid, so `ORDER BY rowid` reads the same after a
rebuild), ``{"op": "set", "t": table, "key": {...}, "cols": {...}}`` the columns an update
changed, ``{"op": "gone", "t": table, "key": {...}}`` names a deleted row by its primary key
(its rowid when it has none), and ``{"op": "schema", ...}`` is one migration. Applying a put
updates the row in place when its key exists (so the tables' own triggers — the FTS index —
see an update, not a delete they never hear of) and inserts it otherwise.
"""

from __future__ import annotations

import sqlite3

TYPE_CHECKING = False  # on the hook's path: no `typing` at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

__all__ = [
    "DERIVED_TABLES",
    "FORGET_RULES",
    "UNTRACKED_COLUMNS",
    "Shape",
    "apply_ops",
    "decode_value",
    "encode_value",
    "journaled_tables",
    "put_op",
    "read_shape",
    "set_op",
    "trigger_sql",
]

DERIVED_TABLES = frozenset({
    "schema_migrations",  # the migrations' own bookkeeping: a rebuild runs them again
    "journal_cursor",  # where this database is in the ledger
    "ledger_index",  # an index over the ledgers (`hrm ledger reindex`)
    "episodes", "episode_tags", "episode_index_state",  # the episodic ledgers' index
    "stack_budget",  # a checkpoint of tokens summed from HO1 (rescanned when absent)
    "stack_recovery", "stack_recovery_sessions",  # a checkpoint of recovery's sums (D310)
    "artifacts",  # an index of handoff and plan files, which stay the truth (D182)
    "learning_vectors",  # embeddings of learnings' text, recomputed by `reembed` (D182)
})
"""Tables whose rows are derived from something else and so are not journaled (D182)."""

UNTRACKED_COLUMNS: dict[str, tuple[str, ...]] = {
    # Every recall through the prompt hook stamps these; journaling them would put a ledger
    # append (and its fsync) on each prompt. A put carries them as they are when the row
    # itself changes; a rebuild restores that value (D182).
    "learnings": ("accessed_at", "access_count"),
}
"""Columns whose changes alone do not write a journal operation."""

FORGET_RULES: dict[str, tuple[str, ...]] = {
    # A learning that held forgotten text is deleted, with its tags and vectors first (their
    # foreign keys name its seq), rather than kept with a marker in place of its words.
    "learnings": ("learning_tags", "learning_vectors"),
}
"""Tables whose rows a forget deletes outright, with the child tables keyed by their seq."""

_TRIGGER_PREFIX = "hrm_journal_"


class Shape:
    """What the journal needs to know of one table: its columns and how a row is keyed."""

    __slots__ = (
        "columns", "has_rowid", "ipk", "key", "key_positions", "name", "put_names", "skip",
        "tracked", "tracked_positions",
    )


    def __init__(
        self,
        name: str,
        columns: tuple[str, ...],
        pk: tuple[str, ...],
        *,
        has_rowid: bool,
        ipk: bool = False,
    ) -> None:
        self.name = name
        self.columns = columns
        self.has_rowid = has_rowid
        self.ipk = ipk
        """The primary key is an INTEGER column: the rowid itself."""
        self.key = pk if pk else ("rowid",)
        untracked = UNTRACKED_COLUMNS.get(name, ())
        self.tracked = tuple(c for c in columns if c not in untracked)
        # A trigger passes NEW.rowid first (rowid tables), then every column in order.
        image = (("rowid",) if has_rowid else ()) + columns
        self.key_positions = tuple(image.index(k) for k in self.key)
        self.skip = 1 if ipk else 0
        """Leading values a put leaves out: the rowid, when the integer key is the rowid."""
        self.put_names = image[self.skip :]
        self.tracked_positions = tuple(image.index(c) for c in self.tracked)
        """Where each tracked column sits in the image a put trigger passes."""

    @property
    def image(self) -> tuple[str, ...]:
        """The names of the values a put trigger passes, in order."""
        return (("rowid",) if self.has_rowid else ()) + self.columns


def read_shape(conn: sqlite3.Connection, table: str) -> Shape:
    """The shape of `table` as the database holds it now."""
    rows = conn.execute(f"PRAGMA table_xinfo({quote(table)})").fetchall()
    columns = tuple(str(r[1]) for r in rows if int(r[6]) == 0)  # hidden columns are not data
    pk = tuple(str(r[1]) for r in sorted((r for r in rows if int(r[5])), key=lambda r: int(r[5])))
    sql_row = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()
    sql = str(sql_row[0] or "") if sql_row else ""
    has_rowid = "WITHOUT ROWID" not in sql.upper()
    types = {str(r[1]): str(r[2]).upper() for r in rows}
    ipk = has_rowid and len(pk) == 1 and types.get(pk[0]) == "INTEGER"
    return Shape(table, columns, pk, has_rowid=has_rowid, ipk=ipk)


def journaled_tables(conn: sqlite3.Connection) -> list[str]:
    """Every table the journal covers: all plain tables except derived and internal ones."""
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    virtual = [str(r[0]) for r in rows if str(r[1] or "").upper().startswith("CREATE VIRTUAL")]
    found = []
    for name, sql in rows:
        text = str(sql or "").upper()
        if (
            name.startswith("sqlite_")
            or name in DERIVED_TABLES
            or text.startswith("CREATE VIRTUAL")
            or any(name.startswith(v + "_") for v in virtual)  # FTS5's shadow tables
        ):
            continue
        found.append(str(name))
    return sorted(found)


def quote(name: str) -> str:
    """An identifier quoted for SQL (double quotes doubled)."""
    return '"' + name.replace('"', '""') + '"'


def trigger_names(table: str) -> tuple[str, str, str]:
    """The insert, update and delete trigger names of `table`."""
    base = _TRIGGER_PREFIX + table
    return base + "_ins", base + "_upd", base + "_del"


def trigger_sql(shape: Shape) -> tuple[str, str, str]:
    """The three triggers that report a table's changes to the journal's SQL functions.

    Short on purpose: SQLite parses every trigger of the schema each time a connection first
    uses it (a prompt hook opens one per prompt), so the update trigger hands over the new
    row, the old key and the old tracked columns, and the connection works out what changed.
    Updates of only `UNTRACKED_COLUMNS` fire none.
    """
    t = quote(shape.name)
    name = shape.name.replace("'", "''")
    new = ", ".join(
        (["NEW.rowid"] if shape.has_rowid else []) + [f"NEW.{quote(c)}" for c in shape.columns]
    )
    old_key = ", ".join(f"OLD.{quote(k)}" if k != "rowid" else "OLD.rowid" for k in shape.key)
    old_tracked = ", ".join(f"OLD.{quote(c)}" for c in shape.tracked)
    ins_name, upd_name, del_name = (quote(n) for n in trigger_names(shape.name))
    of = ""
    if len(shape.tracked) < len(shape.columns):
        of = " OF " + ", ".join(quote(c) for c in shape.tracked)
    return (
        f"CREATE TRIGGER {ins_name} AFTER INSERT ON {t} BEGIN"
        f" SELECT hrm_journal('{name}', {new}); END",
        f"CREATE TRIGGER {upd_name} AFTER UPDATE{of} ON {t} BEGIN"
        f" SELECT hrm_journal_set('{name}', {new}, {old_key}, {old_tracked}); END",
        f"CREATE TRIGGER {del_name} AFTER DELETE ON {t} BEGIN"
        f" SELECT hrm_journal_gone('{name}', {old_key}); END",
    )


# ── values ──────────────────────────────────────────────────────────────────


def encode_value(value: Any) -> Any:
    """A column value as JSON: a blob becomes ``{"bytes": [...]}`` (numbers, which no
    scrubbing can alter), everything else is JSON already."""
    if isinstance(value, bytes | memoryview):
        return {"bytes": list(bytes(value))}
    return value


def decode_value(value: Any) -> Any:
    """Inverse of `encode_value`."""
    if isinstance(value, dict):
        return bytes(value["bytes"])
    return value


def put_op(shape: Shape, values: Sequence[Any]) -> dict[str, Any]:
    """The put operation of a row whose trigger passed `values` (see `Shape.image`)."""
    kept = values[shape.skip :]  # the integer primary key is the rowid: once is enough
    if any(type(v) is bytes for v in kept):
        kept = [encode_value(v) for v in kept]
    return {"op": "put", "t": shape.name, "row": dict(zip(shape.put_names, kept, strict=True))}


def set_op(shape: Shape, key: Sequence[Any], cols: dict[str, Any]) -> dict[str, Any]:
    """The set operation of an update: the row's key and the columns it changed."""
    if any(type(v) is bytes for v in cols.values()):
        cols = {name: encode_value(v) for name, v in cols.items()}
    return {"op": "set", "t": shape.name, "key": dict(zip(shape.key, key, strict=True)),
            "cols": cols}


def gone_op(shape: Shape, key: Sequence[Any]) -> dict[str, Any]:
    """The gone operation of the row whose key the delete trigger passed."""
    return {
        "op": "gone", "t": shape.name,
        "key": {k: encode_value(v) for k, v in zip(shape.key, key, strict=True)},
    }


# ── apply ───────────────────────────────────────────────────────────────────


def apply_ops(
    conn: sqlite3.Connection,
    ops: Iterable[dict[str, Any]],
    shapes: dict[str, Shape],
    *,
    replace: Sequence[str] = (),
) -> None:
    """Apply one record's operations to `conn` (inside the caller's transaction).

    `replace` names tables the record replaces whole (a snapshot): they are emptied first.
    A put that collides with a unique index because a row it displaces has not reached its
    own final state yet (two problems trading the one active place) is retried once the
    record's other operations are in; the record as a whole left the database consistent,
    so the retry succeeds. Foreign keys are checked when the transaction commits.

    Raises:
        sqlite3.Error: an operation that still fails (the caller wraps it).
    """
    conn.execute("PRAGMA defer_foreign_keys = ON")
    for table in replace:
        if table in shapes:
            conn.execute(f"DELETE FROM {quote(table)}")
    retry: list[dict[str, Any]] = []
    for op in ops:
        try:
            _apply_op(conn, op, shapes)
        except sqlite3.IntegrityError:
            retry.append(op)
    for op in retry:
        _apply_op(conn, op, shapes)


def _apply_op(conn: sqlite3.Connection, op: dict[str, Any], shapes: dict[str, Shape]) -> None:
    kind = op.get("op")
    if kind == "schema":
        apply_schema(conn, str(op["component"]), int(op["version"]), str(op["sql"]))
        shapes.clear()  # a migration may reshape any table
        return
    table = str(op["t"])
    shape = shapes.get(table)
    if shape is None:
        shape = shapes[table] = read_shape(conn, table)
    if not shape.columns:
        raise sqlite3.OperationalError(f"no such table: {table}")
    if kind == "gone":
        key = op["key"]
        where = " AND ".join(f"{_col(k)} = ?" for k in key)
        conn.execute(
            f"DELETE FROM {quote(table)} WHERE {where}", [decode_value(v) for v in key.values()]
        )
        return
    if kind == "set":
        _apply_set(conn, table, shape, op["key"], op["cols"])
        return
    row = {k: v for k, v in op["row"].items() if k in shape.columns or k == "rowid"}
    names = list(row)
    values = [decode_value(row[n]) for n in names]
    if shape.key != ("rowid",) and all(k in row for k in shape.key):
        sets = ", ".join(f"{_col(n)} = ?" for n in names)
        where = " AND ".join(f"{_col(k)} = ?" for k in shape.key)
        cursor = conn.execute(
            f"UPDATE {quote(table)} SET {sets} WHERE {where}",
            [*values, *(decode_value(row[k]) for k in shape.key)],
        )
        if cursor.rowcount:
            return
        verb = "INSERT"
    else:
        verb = "INSERT OR REPLACE"  # keyed by rowid alone: no index of its own to keep
    marks = ", ".join("?" for _ in names)
    conn.execute(
        f"{verb} INTO {quote(table)} ({', '.join(_col(n) for n in names)}) VALUES ({marks})",
        values,
    )


def _apply_set(
    conn: sqlite3.Connection, table: str, shape: Shape, key: dict[str, Any], cols: dict[str, Any]
) -> None:
    names = [n for n in cols if n in shape.columns or n == "rowid"]
    if not names:
        return
    sets = ", ".join(f"{_col(n)} = ?" for n in names)
    where = " AND ".join(f"{_col(k)} = ?" for k in key)
    cursor = conn.execute(
        f"UPDATE {quote(table)} SET {sets} WHERE {where}",
        [*(decode_value(cols[n]) for n in names), *(decode_value(v) for v in key.values())],
    )
    if not cursor.rowcount:
        raise sqlite3.IntegrityError(f"{table}: no row {key} to update")


def _col(name: str) -> str:
    return "rowid" if name == "rowid" else quote(name)


def apply_schema(conn: sqlite3.Connection, component: str, version: int, script: str) -> bool:
    """Run one migration unless the database has it already; return whether it ran."""
    done = conn.execute(
        "SELECT 1 FROM schema_migrations WHERE component = ? AND version = ?", (component, version)
    ).fetchone()
    if done:
        return False
    from hrm.storage.sqlite import _split_sql

    for statement in _split_sql(script):
        conn.execute(statement)
    conn.execute(
        "INSERT INTO schema_migrations (component, version) VALUES (?, ?)", (component, version)
    )
    return True
