"""Tables that read well on a terminal and parse well in a pipe.

On a terminal a table is drawn by rich, fitted to the width (long cells fold or are cut with
an ellipsis, as each column says). Anywhere else — a pipe, a file, a test — it is written as
gh writes it: one line per row, cells separated by tabs, nothing cut, no box drawing, no
colour, and a first line naming the columns. Inside a cell a tab, a newline, a carriage return
and a backslash are written ``\\t``, ``\\n``, ``\\r`` and ``\\\\``, so every row stays one line
(the text format PostgreSQL's COPY uses).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from rich.console import RenderableType

__all__ = ["Column", "fit", "print_table", "stdout_is_terminal", "tsv_cell"]

_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its header and how a terminal shows a cell too long for it."""

    header: str
    """The column's name; the first line of the tab-separated form."""
    no_wrap: bool = False
    """Terminal: keep the cell on one line (cut it, per `overflow`, when it does not fit)."""
    overflow: Literal["fold", "crop", "ellipsis"] = "fold"
    """Terminal: what a cell wider than the column does."""
    style: str | None = None
    """Terminal: a rich style for the whole column (``"bold"``, ``"dim"``)."""
    max_width: int | None = None
    """Terminal: the widest the column may be; the tab-separated form never cuts."""


def stdout_is_terminal() -> bool:
    """Whether standard output is a terminal (a person reading), not a pipe or a file.

    ``HRM_FORCE_TTY=1`` says to act as if it were (like gh's ``GH_FORCE_TTY``).
    """
    from hrm.cli._common import force_tty

    if force_tty():
        return True
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # replaced by an object without it, or closed
        return False


def fit(text: str, limit: int) -> str:
    """`text` cut to `limit` characters on a terminal; whole in a pipe, where nothing is cut."""
    if not stdout_is_terminal():
        return text
    from hrm._text import shorten

    return shorten(text, limit)


def tsv_cell(value: object) -> str:
    """A cell as text on one line: ``None`` empty, rich text as plain, specials escaped."""
    if value is None:
        return ""
    plain = getattr(value, "plain", None)  # rich.text.Text
    text = plain if isinstance(plain, str) else str(value)
    return text.translate(_ESCAPES)


def print_table(
    columns: Sequence[Column | str],
    rows: Iterable[Sequence[object]],
    *,
    title: str | None = None,
    show_header: bool = True,
    boxed: bool = True,
) -> None:
    """Print `rows` under `columns`: a rich table on a terminal, tab-separated lines otherwise.

    Args:
        columns: Each a `Column`, or a header for a column with the defaults.
        rows: Cells in column order; ``None`` prints empty; rich `Text` keeps its style on a
            terminal.
        title: Shown above the table on a terminal only (it would be a row to a parser).
        show_header: Terminal only: the tab-separated form always starts with the headers.
        boxed: Terminal only: False draws no lines between cells.
    """
    specs = [c if isinstance(c, Column) else Column(c) for c in columns]
    if not stdout_is_terminal():
        out = sys.stdout
        out.write("\t".join(tsv_cell(c.header) for c in specs) + "\n")
        for row in rows:
            out.write("\t".join(tsv_cell(cell) for cell in row) + "\n")
        out.flush()
        return
    from rich.table import Table

    from hrm.cli._common import console

    table = Table(title=title, show_header=show_header, header_style="bold", pad_edge=boxed)
    if not boxed:
        table.box = None
    for spec in specs:
        table.add_column(
            spec.header, no_wrap=spec.no_wrap, overflow=spec.overflow, style=spec.style,
            max_width=spec.max_width,
        )
    for row in rows:
        table.add_row(*(_renderable(cell) for cell in row))
    console.print(table)


def _renderable(value: object) -> RenderableType:
    from rich.text import Text

    if isinstance(value, Text):
        return value
    return "" if value is None else str(value)
