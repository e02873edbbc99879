"""Entry point of the `hrm` console script.

`hrm hook …` is dispatched before typer, rich or any subsystem is imported: Claude Code runs it
on every prompt, so its start-up cost is paid constantly (003 §6, STYLE §9).
"""

from __future__ import annotations

import gc
import sys


def main() -> None:
    """Run the `hrm` command line."""
    argv = sys.argv[1:]
    if argv[:1] == ["hook"]:
        from hrm.continuity.hook_entry import run_hook

        raise SystemExit(run_hook(argv[1:], exit_process=True))
    start_resident = False
    if argv[:1] == ["turn"]:
        # A one-shot turn is mostly imports; a resident process that has them runs it in a
        # forked child on this terminal, and this process only waits (D403).
        from hrm.resident import client

        outcome = client.attempt(argv)
        if isinstance(outcome, int):
            raise SystemExit(outcome)
        start_resident = outcome == client.ABSENT
    # Importing the command line allocates some hundred thousand objects, none of them garbage,
    # and the cyclic collector walked them over and over: ~40 ms of a one-shot `hrm turn`'s
    # ~360 ms (measured). Collection is off while importing; what the imports built is then
    # frozen out of every later collection, and collection resumes for the work (D375).
    gc.disable()
    from hrm.cli.app import run

    gc.freeze()
    gc.enable()
    try:
        run()
    finally:
        if start_resident:
            client.start()


if __name__ == "__main__":
    main()
