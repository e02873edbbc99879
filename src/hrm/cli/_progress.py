"""Progress bars for work that takes more than a moment: rich, on stderr, on a terminal only.

Verifying ledgers, rebuilding the index, importing or re-embedding thousands of learnings and
migrating a project can take minutes; without a bar they look hung. A bar is drawn only when
stderr is a terminal and the command is not printing JSON, so pipes, logs and scripts see
exactly what they saw before. It is transient: when the work ends the bar is erased and the
command's own output follows.

The library reports progress through an optional ``progress(done, total)`` callback
(`hrm.types.ProgressCallback`); `ProgressBar.callback` is None when no bar is shown, so the
library then does no progress work at all.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from hrm.types import ProgressCallback

from hrm.cli._common import force_tty

__all__ = ["ProgressBar", "progress_bar", "stderr_is_terminal"]


def stderr_is_terminal() -> bool:
    """Whether standard error is a terminal (or ``HRM_FORCE_TTY=1`` says to act as if it were)."""
    if force_tty():
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class ProgressBar:
    """One bar: `callback` for the library, `describe` to say which part is running."""

    def __init__(self, progress: Progress | None = None, task: TaskID | None = None) -> None:
        self._progress = progress
        self._task = task

    @property
    def callback(self) -> ProgressCallback | None:
        """``progress(done, total)`` for a library function, or None when no bar is drawn."""
        return self.update if self._progress is not None else None

    def update(self, done: int, total: int) -> None:
        """Show `done` of `total`."""
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=done, total=total)

    def describe(self, text: str, *, indeterminate: bool = False) -> None:
        """Name the part now running; `indeterminate` when how long it takes is unknown."""
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description=text)
            if indeterminate:
                self._progress.update(self._task, total=None, completed=0)


@contextlib.contextmanager
def progress_bar(
    description: str, *, json_output: bool = False, unit: Literal["items", "bytes"] = "items"
) -> Iterator[ProgressBar]:
    """A transient bar on stderr while the block runs (a no-op bar when none should be drawn).

    Args:
        description: What is being done ("verifying ledgers").
        json_output: The command prints JSON: no bar, whatever stderr is.
        unit: Counts shown as ``12/300`` (items) or ``1.2/30.0 MB`` (bytes).
    """
    if json_output or not stderr_is_terminal():
        yield ProgressBar()
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True, force_terminal=True if force_tty() else None, highlight=False)
    counts = DownloadColumn() if unit == "bytes" else MofNCompleteColumn()
    columns = (
        TextColumn("{task.description}"), BarColumn(), counts, TaskProgressColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(description, total=None)
        yield ProgressBar(progress, task)
