"""Entry point of the `hrm` console script.

`hrm hook …` is dispatched before typer, rich or any subsystem is imported: Claude Code runs it
on every prompt, so its start-up cost is paid constantly (003 §6, STYLE §9).
"""

from __future__ import annotations

import sys


def main() -> None:
    """Run the `hrm` command line."""
    argv = sys.argv[1:]
    if argv[:1] == ["hook"]:
        from hrm.continuity.hook_entry import run_hook

        raise SystemExit(run_hook(argv[1:], exit_process=True))
    from hrm.cli.app import run

    run()


if __name__ == "__main__":
    main()
