"""`hrm resident status|stop`: the warm process that runs `hrm turn` without a cold start."""

from __future__ import annotations

import time

import typer

from hrm.cli._common import JsonOption, console, emit_json
from hrm.cli._root import SuggestingGroup

__all__ = ["app"]

app = typer.Typer(
    cls=SuggestingGroup,
    help="Status and stop of the resident process that answers `hrm turn` without a cold "
    "start (HRM_RESIDENT=0 turns it off).",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.command("status")
def status(json_out: JsonOption = False) -> None:
    """Say whether a resident process is running, since when, and how many turns it ran."""
    from hrm.resident import client, paths

    answer = client.ask("status")
    if json_out:
        emit_json({"running": answer is not None, "enabled": paths.enabled(), **(answer or {})})
        return
    if answer is None:
        state = "on" if paths.enabled() else f"off ({paths.ENV_RESIDENT}=0)"
        console.print(f"No resident process is running (resident turns are {state}).")
        return
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(answer["started"]))
    console.print(
        f"Resident process {answer['pid']} on {answer['socket']}: started {started}, "
        f"{answer['served']} turn(s) run, idle {answer['idle_for']:.0f} s of "
        f"{answer['idle_seconds']:.0f} s before it exits."
    )


@app.command("stop")
def stop(json_out: JsonOption = False) -> None:
    """Stop the resident process (turns it is running finish; the next `hrm turn` starts one)."""
    from hrm.resident import client

    answer = client.ask("stop")
    stopped = answer.get("stopped") if answer else None
    if json_out:
        emit_json({"stopped": stopped})
        return
    console.print(f"Stopped resident process {stopped}." if stopped else
                  "No resident process was running.")
