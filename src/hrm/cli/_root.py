"""The root group of `hrm`: command groups loaded on first use, near names suggested, and the one
place where any error becomes a line on stderr and an exit code.

Each command group lives in its own module, which pulls in its own subsystems; the root imports
one only when that group runs (or when help or completion needs its text). Click's own lookups
only know the groups already loaded, so suggestions for a mistyped name are made here, over
every name the root has, loaded or not.

Typer renders usage errors in a box and lets any other exception through as a traceback. Here
both end as plain ``error: …`` lines, as gh, uv and sqlite-utils print them: a traceback only
with ``hrm --debug``.
"""

from __future__ import annotations

import difflib
import errno
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import typer
import typer.main
from typer.core import TyperGroup

from hrm.cli._common import (
    EXIT_ERROR,
    EXIT_USAGE,
    debug_enabled,
    missing_extra_message,
    report_error,
    report_unexpected,
    set_debug,
)
from hrm.errors import HRMError

__all__ = [
    "ClickException",
    "LazyGroup",
    "RootGroup",
    "SuggestingGroup",
    "UsageError",
    "suggestions",
]

# Typer 0.20 and later carry their own copy of click; earlier ones use click itself. Both make
# `typer.BadParameter` a click `UsageError`, itself a `ClickException`: found through it, the
# classes are the ones the installed typer raises.
UsageError: type[Exception] = typer.BadParameter.__mro__[1]
ClickException: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
)
# Exceptions typer itself turns into an exit: never reported as errors here.
_TYPER_FLOW: tuple[type[BaseException], ...] = (typer.Exit, typer.Abort, ClickException, EOFError)


@dataclass(frozen=True, slots=True)
class LazyGroup:
    """A command group imported only when it is used."""

    module: str
    """The module that defines it."""
    attribute: str
    """The `typer.Typer` in that module."""
    name: str
    """The command name under `hrm`."""
    help: str
    """What `hrm --help` says of it."""


def suggestions(typo: str, names: Sequence[str]) -> list[str]:
    """The names close enough to `typo` to be what was meant, best first (at most three)."""
    return difflib.get_close_matches(typo, list(names), n=3, cutoff=0.6)


class SuggestingGroup(TyperGroup):
    """A command group whose "No such command" names the nearest commands.

    Typer suggests only from 0.20 on, and only among commands already loaded; every group of
    `hrm` uses this class (``typer.Typer(cls=SuggestingGroup)``) so that suggestions are the
    same under every typer the project supports.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.suggest_commands = False  # typer's own, where it has them: ours replace them

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except UsageError as exc:
            typo = args[0] if args else ""
            if typo and not typo.startswith("-"):
                near = suggestions(typo, self._visible_names(ctx))
                if near:
                    message = str(getattr(exc, "message", "")).rstrip(".")
                    exc.message = f"{message}. Did you mean {' or '.join(map(repr, near))}?"  # type: ignore[attr-defined]
            raise

    def _visible_names(self, ctx: Any) -> list[str]:
        loaded = self.commands
        return [n for n in self.list_commands(ctx) if n not in loaded or not loaded[n].hidden]


class RootGroup(SuggestingGroup):
    """The `hrm` group: loads `lazy_groups` on demand and reports every error as one line."""

    lazy_groups: ClassVar[tuple[LazyGroup, ...]] = ()

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        return names + [g.name for g in self.lazy_groups if g.name not in names]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
        entry = next((g for g in self.lazy_groups if g.name == cmd_name), None)
        if entry is None:
            return None
        try:
            module = importlib.import_module(entry.module)
        except ModuleNotFoundError as exc:
            if exc.name != entry.module:
                raise
            return None  # a trimmed installation without this group: as if unknown
        # `get_group` is the public builder in every typer this project supports; the
        # name and help are the root's, as `add_typer(sub, name=…, help=…)` would set them.
        group = typer.main.get_group(getattr(module, entry.attribute))
        group.name = cmd_name
        group.help = entry.help
        self.add_command(group, cmd_name)
        return group

    def invoke(self, ctx: Any) -> Any:
        """Run the command; whatever it raises ends as one stderr line and an exit code."""
        try:
            return super().invoke(ctx)
        except _TYPER_FLOW:
            raise
        except HRMError as exc:
            if debug_enabled():
                raise
            raise typer.Exit(report_error(exc)) from None
        except ImportError as exc:
            message = missing_extra_message(exc)
            if debug_enabled():
                raise
            if message is None:
                raise typer.Exit(report_unexpected(exc)) from None
            sys.stderr.write(f"error: {message}\n")
            raise typer.Exit(EXIT_USAGE) from None
        except OSError as exc:
            if exc.errno == errno.EPIPE or debug_enabled():
                raise  # a closed pipe (`hrm … | head`) is typer's to end quietly
            raise typer.Exit(report_unexpected(exc)) from None
        except Exception as exc:
            if debug_enabled():
                raise
            raise typer.Exit(report_unexpected(exc)) from None

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Run as a program: usage errors as ``error: …`` lines, then exit with the code."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            try:
                result = super().main(
                    args, prog_name, complete_var, standalone_mode=False, **extra
                )
            except ClickException as exc:
                result = _show_usage_error(exc)
            except typer.Abort:
                sys.stderr.write("error: aborted\n")
                result = EXIT_ERROR
        finally:
            set_debug(False)  # --debug lasts one invocation (tests run many in one process)
        sys.exit(result if isinstance(result, int) else 0)


def _show_usage_error(exc: Any) -> int:
    """Print a usage error as click does, but on one ``error:`` line; return its exit code."""
    code = int(getattr(exc, "exit_code", EXIT_USAGE))
    if type(exc).__name__ == "NoArgsIsHelpError":  # `hrm` alone: the help, already shown
        text = exc.format_message()
        if text.strip():
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return code
    sys.stderr.write(f"error: {' '.join(exc.format_message().split())}\n")
    ctx = getattr(exc, "ctx", None)
    if ctx is not None and ctx.help_option_names:
        sys.stderr.write(f"Try '{ctx.command_path} {ctx.help_option_names[0]}' for help.\n")
    sys.stderr.flush()
    return code
