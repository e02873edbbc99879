"""`hrm memory erase TEXT`: a text leaves every file of the home for good (D450).

A request in conversation ("forget that I live in Lisbon") retracts what hrm keeps: a new
version of the canon key, which the history keeps and `rollback` restores, and the model is no
longer shown the words. Erasing is the person's own act, from the command line: every database
row, ledger record (redacted in place, vouched for by a redaction record, so the chains still
verify), handoff, log and cached file holding the text, through `hrm.storage.forget`; a kept
entry whose key is made of the text goes whole (the fact "my name is Ana Costa and I live in
Lisbon" with "I live in Lisbon"). Without ``--yes`` it only says where the text is; with it,
the home is read again afterwards, and what still holds the text is named.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from hrm.cli._common import HomeOption, JsonOption, console, emit_json, handle_errors
from hrm.cli._root import SuggestingGroup

if TYPE_CHECKING:
    from hrm.storage.redaction import Needles

__all__ = ["app", "holding"]

app = typer.Typer(cls=SuggestingGroup, context_settings={"help_option_names": ["-h", "--help"]})

_CHUNK = 1 << 20


@app.command()
def erase(
    texts: Annotated[
        list[str], typer.Argument(help="The text to erase (each at least 3 characters).")
    ],
    yes: Annotated[bool, typer.Option("--yes", help="Erase; without it, only say where.")] = False,
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Erase a text for good: every database, ledger, handoff, log and cache of the home."""
    from hrm.home import HRMHome
    from hrm.storage.forget import forget
    from hrm.storage.redaction import Needles

    with handle_errors():
        resolved = HRMHome.resolve(home)
        needles = Needles(texts)
        found = holding(resolved.root, needles)
        if not yes or not found:
            _say_where(resolved.root, found, json_output=json_output)
            return
        report = forget(resolved, needles.texts, reason="erase")
        # Checked, not assumed: the files are read again for every form of the text.
        left = holding(resolved.root, needles)
    if json_output:
        emit_json({"erased": not left, **report.to_dict(), "still_in": left})
        return
    for name, seqs in sorted(report.ledgers.items()):
        console.print(f"redacted {len(seqs)} record(s) in {name}", markup=False, soft_wrap=True)
    for table, rows in sorted(report.rows.items()):
        console.print(f"rewrote {rows} row(s) of {table}", markup=False, soft_wrap=True)
    for name in report.files:
        console.print(f"rewrote {name}", markup=False, soft_wrap=True)
    for problem in report.remaining:
        console.print(f"warning: {problem}", markup=False, soft_wrap=True)
    for name in left:
        console.print(f"warning: still found in {name}", markup=False, soft_wrap=True)
    if not left:
        console.print("Erased: the text is found nowhere under the home any more.",
                      markup=False, soft_wrap=True)  # fmt: skip


def _say_where(root: Path, found: list[str], *, json_output: bool) -> None:
    if json_output:
        emit_json({"erased": False, "found_in": found})
        return
    if not found:
        console.print(f"Not found under {root}: nothing to erase.", markup=False, soft_wrap=True)
        return
    console.print(f"Found in {len(found)} file(s) under {root}:", markup=False, soft_wrap=True)
    for name in found:
        console.print(f"  {name}", markup=False, soft_wrap=True)
    console.print(
        "Run again with --yes to erase it from all of them. This cannot be undone: "
        "`hrm memory shared rollback` will not bring it back.",
        markup=False,
        soft_wrap=True,
    )


def holding(root: Path, needles: Needles) -> list[str]:
    """The files under `root` (relative, sorted) whose bytes may hold one of the texts: read a
    megabyte at a time, each chunk overlapping the last by the longest form searched."""
    overlap = max(len(v.encode()) for v in needles.variants) * 2
    found = []
    for directory, _, names in os.walk(root):
        for name in names:
            path = Path(directory) / name
            if not path.is_symlink() and _holds(path, needles, overlap):
                found.append(path.relative_to(root).as_posix())
    return sorted(found)


def _holds(path: Path, needles: Needles, overlap: int) -> bool:
    tail = b""
    try:
        with path.open("rb") as fh:
            while chunk := fh.read(_CHUNK):
                if needles.in_bytes(tail + chunk):
                    return True
                tail = chunk[-overlap:]
    except OSError:
        return False
    return False
