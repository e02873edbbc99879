"""`hrm turn`, `hrm chat` and `hrm demo`: talking to a governed stack."""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from hrm._text import shorten
from hrm.cli._common import (
    HomeOption,
    JsonOption,
    ModelOption,
    ProviderOption,
    console,
    debug_enabled,
    emit_json,
    emit_json_line,
    err_console,
    fail,
    handle_errors,
    report_error,
)
from hrm.cli._table import Column, fit, print_table
from hrm.cli._turn_exit import turn_failure

_CHAT_HELP = (
    "Commands: /why (last decision; /why json: all of it), /history, /problems, /resolve [id],"
    " /canon (what hrm keeps), /status (/status json), /quit. A paste of several lines is one"
    " message; lines typed while hrm answers are sent next."
)


def register(app: typer.Typer) -> None:
    """Add the conversation commands to the root app."""
    app.command("turn")(turn)
    app.command("chat")(chat)
    app.command("demo")(demo)


def _open(
    home: Path | None, agent_class: str | None, provider: str | None, model: str | None = None
) -> Any:
    from hrm.pipeline import HRM

    if model is None:
        return HRM.open(home, agent_class, provider)
    import dataclasses

    from hrm.config import load_config

    config = load_config(home).config  # loaded once: HRM.open takes it as it is
    llm = dataclasses.replace(config.llm, provider=provider or config.llm.provider, model=model)
    return HRM.open(home, agent_class, config=dataclasses.replace(config, llm=llm))


class _Answer:
    """Shows a turn's answer as the model produces it, then what the turn added after it.

    A local model on two cores writes a few dozen tokens a second; waiting for the whole
    answer before showing any of it makes every turn feel stalled.
    """

    def __init__(self, prefix: str = "") -> None:
        from hrm.cli._chat_input import WordWrap

        self.prefix = prefix
        self.shown = ""
        # On a terminal the answer breaks at spaces, not wherever the edge falls (D285); in a
        # pipe it is written as it came, for scripts.
        self._wrap = WordWrap(console.width, column=len(prefix)) if console.is_terminal else None

    def _write(self, text: str, *, last: bool = False) -> None:
        if self._wrap is not None:
            text = self._wrap.feed(text) + (self._wrap.flush() if last else "")
        console.file.write(text)

    def piece(self, text: str) -> None:
        out = console.file
        if not self.shown:
            out.write(self.prefix)
        self.shown += text
        self._write(text)
        out.flush()

    def finish(self, response: str) -> None:
        """Print what is left of the whole answer (all of it when nothing was streamed)."""
        if not self.shown:
            console.print(f"{self.prefix}{response}", markup=False, highlight=False)
            return
        out = console.file
        if response.startswith(self.shown):
            rest = response[len(self.shown) :]
        elif response.startswith(self.shown.rstrip()):  # notes follow the answer, trimmed
            rest = response[len(self.shown.rstrip()) :].lstrip(" \t")
            rest = rest[1:] if self.shown.endswith("\n") and rest.startswith("\n") else rest
        elif (cut := _cut_answer(self.shown, response)) is not None:
            rest = cut
        else:  # the call failed part-way: the turn answers with what happened instead
            rest = "\n" + response
        self._write(rest if rest.endswith("\n") else rest + "\n", last=True)
        out.flush()


def _cut_answer(shown: str, response: str) -> str | None:
    """The notes to print when the answer is shorter than what was shown, else ``None``.

    A model stopped in a loop streamed the loop's first copies before it was recognised; the
    answer keeps one, and its note says so. What is on the screen stays; only the notes follow.
    """
    from hrm.turn.state import NOTES_START

    answer, separator, notes = response.partition(NOTES_START)
    if not answer.strip() or not shown.startswith(answer.rstrip()):
        return None
    if not separator:
        return ""
    return ("\n" if shown.endswith("\n") else "\n\n") + separator.lstrip("\n") + notes


def turn(
    text: Annotated[str, typer.Argument(help="The input; '-' reads standard input.")],
    agent_class: Annotated[
        str | None, typer.Option("--as", help="The stack: ADMIN or RESIDENT:<name>.")
    ] = None,
    home: HomeOption = None,
    provider: ProviderOption = None,
    model: ModelOption = None,
    json_out: JsonOption = False,
) -> None:
    """Run one governed turn and print the answer (with --json, the whole decision record)."""
    if text == "-":
        text = sys.stdin.read()
    from hrm.continuity.embeddings import prefer_quick_start

    prefer_quick_start()  # one turn, then the process exits: start fast over run fast (D350)
    answer = _Answer()
    with handle_errors():
        hrm = _open(home, agent_class, provider, model)
        try:
            result = hrm.turn(text, on_text=None if json_out else answer.piece)
            failure = turn_failure(result, hrm.last_events)
        finally:
            hrm.close()
    if json_out:
        emit_json(result.to_dict())
    else:
        answer.finish(result.response)
        err_console.print(_status_line(result.decision.to_dict()), highlight=False)
    if failure is not None:  # answered, but not by a governed model call (D223)
        raise fail(failure.reason, failure.exit_code)


def chat(
    agent_class: Annotated[
        str | None, typer.Option("--as", help="The stack: ADMIN or RESIDENT:<name>.")
    ] = None,
    home: HomeOption = None,
    provider: ProviderOption = None,
    model: ModelOption = None,
    json_out: Annotated[
        bool,
        typer.Option(
            "--json", help="Read a message a line; write each turn's record as a JSON line."
        ),
    ] = False,
) -> None:
    """Talk to a stack interactively; a status line shows altitude, stance, commitment, problem."""
    from hrm.errors import HRMError

    with handle_errors():
        hrm = _open(home, agent_class, provider, model)
    if json_out:
        _chat_json_lines(hrm)
        return
    _line_editing()
    from hrm.cli._chat_input import ChatInput, TypeAhead

    chat_input = ChatInput(TypeAhead(_stdin_fd()))
    exit_code = 0
    try:
        with handle_errors():
            status = hrm.status()
        console.print(
            f"hrm chat — stack {status['agent_class']} on {status['provider']} "
            f"({status['model']}). {_CHAT_HELP}",
            highlight=False,
        )
        while True:
            # One failed turn or command is reported and the conversation goes on: the person
            # can retry (another process held the stack), look with /why, or leave. Like
            # sqlite3's shell, the exit code still says that something failed.
            try:
                console.print(_status_from(hrm.status()), style="dim", highlight=False)
                try:
                    line = _next_message(chat_input)
                except (EOFError, KeyboardInterrupt):
                    console.print()
                    break
                command = line.strip()
                if not command:
                    continue
                if command in ("/quit", "/exit", "/q"):
                    break
                if command.startswith("/"):
                    _chat_command(hrm, command)
                    continue
                result = _chat_turn(hrm, line, chat_input)
            except HRMError as exc:
                if debug_enabled():
                    raise
                exit_code = report_error(exc)
                continue
            if result is None:
                continue
            aside = _queued_aside(result.decision.arbitration)
            if aside:
                console.print(aside, style="dim", highlight=False)
            exit_code = _report_failure(hrm, result) or exit_code
    finally:
        hrm.close()
    if exit_code:
        raise typer.Exit(exit_code)


def _stdin_fd() -> int | None:
    try:
        return sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # a test harness's stdin has no descriptor
        return None


def _next_message(chat_input: Any) -> str:
    """A line typed while hrm last answered, shown as such, else what the person types now
    (with an unfinished line from the answer put back on the prompt, D285)."""
    queued = chat_input.take_queued()
    if queued is not None:
        console.print(f"you › {queued}", markup=False, highlight=False)
        console.print(
            "(typed while hrm answered: sent now as the next message)", style="dim",
            highlight=False,
        )
        return str(queued)
    return _read_message("you › ", chat_input.take_partial())


def _chat_turn(hrm: Any, line: str, chat_input: Any) -> Any:
    """One turn of `hrm chat`, its answer streamed; None when the person interrupted it."""
    from hrm.errors import HRMError

    answer = _Answer("hrm › ")
    try:
        with chat_input.answering():  # keys typed meanwhile are queued, not echoed in
            result = hrm.turn(line, on_text=answer.piece)
    except KeyboardInterrupt:  # stops the answer, not the conversation
        console.print(
            ("\n" if answer.shown else "")
            + "(interrupted — recorded as such; /why shows how far it got)",
            style="dim",
            highlight=False,
        )
        return None
    except HRMError:
        if answer.shown:  # end the half-shown answer's line before the error
            console.file.write("\n")
        raise
    answer.finish(result.response)
    return result


def _chat_json_lines(hrm: Any) -> None:
    """`hrm chat --json`: each line of stdin is a message; each turn's record is a JSON line.

    The conversation is the same as the interactive one (the same stack, session and state),
    with nothing else on stdout: no banner, no status line, no streamed text. The slash
    commands other than /quit belong to the interactive chat; the records carry what they
    show. A failed turn is one error line on stderr, the exit code names the last failure.
    """
    from hrm.errors import HRMError

    exit_code = 0
    try:
        for raw in _lines(sys.stdin):
            line = raw.rstrip("\r\n")
            command = line.strip()
            if not command:
                continue
            if command in ("/quit", "/exit", "/q"):
                break
            if command.startswith("/"):
                err_console.print(
                    f"note: {command.split()[0]} is for the interactive chat; with --json each "
                    "turn's record holds its decision (`hrm why` explains one)"
                )
                continue
            try:
                result = hrm.turn(line)
            except HRMError as exc:
                if debug_enabled():
                    raise
                exit_code = report_error(exc)
                continue
            emit_json_line(result.to_dict())
            exit_code = _report_failure(hrm, result) or exit_code
    finally:
        hrm.close()
    if exit_code:
        raise typer.Exit(exit_code)


def _report_failure(hrm: Any, result: Any) -> int:
    """A chat turn answered without its model or its governance: one stderr line; its exit
    code (0 when the turn did its work). The conversation goes on (D223)."""
    failure = turn_failure(result, hrm.last_events)
    if failure is None:
        return 0
    fail(failure.reason, failure.exit_code)  # prints the line; the chat ends later
    return failure.exit_code


def _lines(stream: Any) -> Iterator[str]:
    """The lines of `stream` until its end (some test harnesses end it with EOFError)."""
    while True:
        try:
            line = stream.readline()
        except EOFError:
            return
        if not line:
            return
        yield line


PASTE_GAP_S = 0.03
"""How soon after a line the next must be waiting to belong to the same paste: a terminal
delivers a paste at once, and no one types the next line within 30 ms of pressing Enter."""


def _line_editing() -> None:
    """Give `input` line editing, history and bracketed paste (GNU readline, where there is one).

    Without it the arrow keys printed ``^[[D``, and a pasted traceback became one turn per
    line: readline (8.1 and later) takes a bracketed paste whole, newlines included.
    """
    if not sys.stdin.isatty():
        return
    import contextlib

    with contextlib.suppress(ImportError):  # Windows: the console has its own editing
        import readline  # noqa: F401 - importing it is what turns it on for `input`


def _read_message(prompt: str, prefill: str = "") -> str:
    """One message from the person: a line, or every line of a paste.

    A terminal that does not bracket pastes (or a readline that does not read the brackets)
    sends a paste's lines as if each were typed and entered; the lines already waiting when
    one is read are the rest of that paste, and join it as one message (D71's "here's the
    traceback:" is one message, not seven turns). Piped input is read a line a message, as
    scripts expect.
    """
    lines = [_input_with(prompt, prefill)]
    if not sys.stdin.isatty():
        return lines[0]
    while _waiting(PASTE_GAP_S):
        try:
            lines.append(input(""))
        except EOFError:
            break
    return "\n".join(lines)


def _input_with(prompt: str, prefill: str) -> str:
    """`input`, with `prefill` already on the line to go on editing (where readline is)."""
    if not prefill:
        return input(prompt)
    try:
        import readline
    except ImportError:  # no line editing: the start typed during the answer is said, not lost
        console.print(f"(you had typed: {prefill})", style="dim", highlight=False)
        return input(prompt)

    def insert() -> None:
        readline.insert_text(prefill)
        readline.redisplay()

    readline.set_pre_input_hook(insert)
    try:
        return input(prompt)
    finally:
        readline.set_pre_input_hook(None)


def _waiting(timeout: float) -> bool:
    """Is more input waiting on the terminal within `timeout` seconds?"""
    import select

    try:
        ready, _, _ = select.select([sys.stdin], [], [], timeout)
    except (OSError, ValueError):  # a console `select` cannot watch (Windows)
        return False
    return bool(ready)


def _queued_aside(arbitration: dict[str, Any]) -> str | None:
    """The line `hrm chat` adds when an input opened a new topic and focus stayed put.

    The answer comes either way; without this the status line went on naming the old problem
    while the person talked about a new one, with no word of why or how to move focus.
    """
    if arbitration.get("disposition") != "queue" or not arbitration.get("is_new_candidate"):
        return None
    import re

    from hrm.governance.problems import extract_keywords

    candidate = arbitration.get("candidate") or {}
    title = str(candidate.get("title") or "")
    # Three of the title's own words name it in "switch to …" (the arbiter takes two).
    words = [w for w in re.findall(r"[\w'-]+", title) if extract_keywords(w)][:3]
    name = " ".join(words) or shorten(title, 30)
    return (
        f"(a new topic: ‘{shorten(title, 50)}’ is queued and focus stays where it was; "
        f"“switch” moves to it now, “switch to {name}” later)"
    )


def _chat_command(hrm: Any, command: str) -> None:
    if command == "/why" or command.startswith("/why "):
        decision = hrm.last_decision()
        if decision is None:
            console.print("No turn yet.")
            return
        if command[len("/why"):].strip() in ("json", "--json"):
            console.print_json(json.dumps(_why(decision), default=str))
            return
        from hrm.cli.why import explain

        console.print(f"turn {decision.get('turn')}: why", style="bold", highlight=False)
        print_table(
            [Column("layer", no_wrap=True, style="bold"), Column("why")],
            explain(decision, hrm.last_events()), show_header=False, boxed=False,
        )
        console.print("(/why json prints the whole record)", style="dim", highlight=False)
    elif command == "/history":
        print_table(
            ["turn", "you", "hrm", "action"],
            [
                (item["turn"], fit(str(item["input"]), 60), fit(str(item["response"]), 60),
                 item["action"])
                for item in hrm.history(20)
            ],
        )
    elif command == "/problems":
        from hrm.cli.problems import show_problems

        show_problems(
            [p.to_record() for p in hrm.focus.problem_registry.list()
             if p.status.value != "resolved"]
        )
    elif command == "/resolve" or command.startswith("/resolve "):
        problem_id = command[len("/resolve") :].strip() or None
        resolved = hrm.resolve_problem(problem_id)
        console.print(f"Resolved {resolved.id}: {resolved.title}", highlight=False)
    elif command == "/canon":
        _show_canon(hrm.stack.canon())
    elif command == "/status" or command.startswith("/status "):
        if command[len("/status"):].strip() in ("json", "--json"):
            console.print_json(json.dumps(hrm.status(), default=str))
        else:
            print_table(
                [Column("", no_wrap=True, style="bold"), Column("")], _status_rows(hrm),
                show_header=False, boxed=False,
            )
    else:
        console.print(f"Unknown command {command!r}. {_CHAT_HELP}")


def _status_rows(hrm: Any) -> list[tuple[str, str]]:
    """`/status` in words: the stack and session, the model and what it may be trusted with,
    where the conversation is, and what the session has spent in every process (D280)."""
    from hrm.llm.capability import model_capability

    status = hrm.status()
    capability = model_capability(hrm.config.llm)
    usage = hrm.stack.gateway.usage()
    budget = usage.get("budget_tokens")
    tokens = int(usage.get("session_tokens", usage.get("tokens_used", 0)))
    spent = f"{tokens:,} tokens" + (f" of {int(budget):,}" if budget else "")
    commitment = status.get("commitment")
    problem = status.get("problem")
    return [
        ("stack", f"{status['agent_class']} · session {status['session_id']} · "
                  f"turn {status['turn']}"),
        ("model", f"{status['provider']} / {status['model']} — "
                  + ("capable" if capability.capable else f"not capable of plans and checks "
                     f"({capability.reason}; `hrm models` shows the ways to one)")),
        ("where", f"altitude {status['altitude']} · stance {status['stance']}"),
        ("commitment", "—" if not commitment else
         f"{commitment['description']} ({commitment['turns_remaining']} of "
         f"{commitment['turns_total']} turns left)"),
        ("problem", "—" if not problem else f"{problem['title']} ({problem['id']})"),
        ("this session", f"{int(usage.get('session_calls', usage.get('calls', 0)))} model "
                         f"calls · {spent} · cost {float(usage.get('session_cost', 0.0)):.4f}"),
    ]


def _show_canon(canon: Any) -> None:
    """The preferences and facts hrm keeps now (not the ones replaced or forgotten)."""
    from hrm.reading.rules.memory import kept_text

    kept = [
        (key.partition(".")[0], text)
        for key, value in sorted(canon.items())
        if key.startswith(("preference.", "fact.")) and (text := kept_text(value)) is not None
    ]
    if not kept:
        console.print(
            "Nothing kept yet: a preference you state (“I prefer …”) or a fact you ask me to "
            "remember (“Remember that …”) is kept here.", highlight=False,
        )
        return
    print_table(["kind", "what I keep"], kept, title="canon")
    console.print("(“Forget what I said about …” takes one back)", style="dim", highlight=False)


def _why(decision: dict[str, Any]) -> dict[str, Any]:
    """The parts of a decision record a person asks about, in reading order."""
    keys = (
        "turn",
        "arbitration",
        "preference",
        "altitude",
        "classification",
        "strategy",
        "escalation",
        "selected",
        "governance",
        "gate_decisions",
        "stance_before",
        "stance_after",
        "commitment_before",
        "commitment_after",
        "writes",
        "learning",
        "execution",
        "notes",
        "trace_id",
    )
    return {k: decision.get(k) for k in keys if decision.get(k) not in (None, [], {}, "")}


def _status_from(status: dict[str, Any]) -> str:
    commitment = status.get("commitment")
    problem = status.get("problem")
    parts = [
        f"altitude {status['altitude']}",
        f"stance {status['stance']}",
        "commitment "
        + (
            f"{shorten(commitment['description'], 30)} ({commitment['turns_remaining']}/"
            f"{commitment['turns_total']})"
            if commitment
            else "—"
        ),
        "problem " + (shorten(problem["title"], 40) if problem else "—"),
    ]
    return " · ".join(parts)


def _arbitration_part(arbitration: dict[str, Any]) -> str:
    """"arbitration stay", or for a queued topic which one: the problem shown after it is the
    one in focus, not the one this message went to."""
    disposition = arbitration.get("disposition", "?")
    candidate = arbitration.get("candidate") or {}
    if disposition == "queue" and candidate.get("title"):
        return f"arbitration queue (‘{shorten(str(candidate['title']), 30)}’)"
    return f"arbitration {disposition}"


def _status_line(decision: dict[str, Any]) -> str:
    commitment = decision.get("commitment_after")
    problem = decision.get("problem")
    return " · ".join(
        [
            f"altitude {decision.get('altitude', {}).get('level', '?')}",
            f"stance {decision.get('stance_before')}→{decision.get('stance_after')}",
            _arbitration_part(decision.get("arbitration") or {}),
            "commitment "
            + (
                f"{commitment['turns_remaining']}/{commitment['turns_total']}"
                if commitment
                else "—"
            ),
            "problem " + (shorten(problem["title"], 40) if problem else "—"),
        ]
    )


def demo(
    home: HomeOption = None,
    provider: ProviderOption = None,
    json_out: JsonOption = False,
) -> None:
    """A scripted conversation showing every governed behaviour (local model when installed)."""
    from hrm.demo import BEHAVIOURS, DEMO_PAUSES, run_demo

    target = home or Path(tempfile.mkdtemp(prefix="hrm-demo-"))
    lines: list[dict[str, Any]] = []

    def show(number: int, text: str, result: Any, events: list[dict[str, Any]]) -> None:
        d = result.decision.to_dict()
        highlights = _highlights(d, events)
        lines.append(
            {
                "turn": number,
                "input": text,
                "response": result.response,
                "action": result.action,
                "highlights": highlights,
            }
        )
        if json_out:
            return
        if number in DEMO_PAUSES:
            console.print(f"\n[dim]… {DEMO_PAUSES[number]} minutes later[/dim]", markup=True)
        console.print(f"\n[bold]\\[{number}] you ›[/bold] {escape(text)}", markup=True)
        answer = result.response.strip().splitlines()
        shown = "\n      ".join(answer[:3]) + (" …" if len(answer) > 3 else "")
        console.print(f"    hrm › {shown}", markup=False, highlight=False)
        for item in highlights:
            console.print(f"      [cyan]↳[/cyan] {escape(item)}", markup=True)

    with handle_errors():
        if not json_out:
            console.print(f"[bold]hrm demo[/bold] — home {escape(str(target))}", markup=True)
        report = run_demo(target, llm=provider, on_turn=show)
    if json_out:
        emit_json(
            {
                "provider": report.provider,
                "home": str(target),
                "turns": lines,
                "seen": report.seen,
                "missing": report.missing(),
            }
        )
        return
    console.print(f"\n[bold]Shown on the {escape(report.provider)} model:[/bold]", markup=True)
    for key, label in BEHAVIOURS:
        turns = report.seen.get(key)
        mark = "[green]✓[/green]" if turns else "[red]✗[/red]"
        where = f" (turn {', '.join(map(str, turns))})" if turns else ""
        console.print(f"  {mark} {escape(label)}{where}", markup=True)
    console.print(
        f"\nEvery decision is in {target}/HO2/ledger/ADMIN/workorder.jsonl — try "
        f"`hrm ledger verify --all --home {target}`.",
        highlight=False,
    )
    if report.missing():
        raise typer.Exit(1)


def _highlights(d: dict[str, Any], events: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    arb = d.get("arbitration") or {}
    if arb:
        out.append(
            f"arbitration: {arb.get('disposition')} (score {arb.get('preempt_score')})"
            f" — {arb.get('reason')}"
        )
    for ev in events:
        kind = ev.get("kind")
        if kind in ("stance_change",):
            out.append(
                f"stance {ev.get('from')} → {ev.get('to')} via the {ev.get('via_gate')} gate"
                f" ({'passed' if ev.get('success', True) else 'denied'}): {ev.get('reason')}"
            )
        elif kind == "commitment_created":
            out.append(
                f"commitment created: {ev.get('description')!r} for {ev.get('turns_total')} turns"
            )
        elif kind == "commitment_tick":
            out.append(f"commitment ticked: {ev.get('turns_remaining')} turn(s) left")
        elif kind == "commitment_expired":
            out.append("commitment expired (lease over)")
        elif kind == "preference_pending":
            out.append(f"inferred preference held for confirmation: {ev.get('statement')!r}")
        elif kind == "preference_confirmed":
            out.append("preference confirmed → canon")
        elif kind == "altitude_transition":
            out.append(f"altitude {ev.get('from')} → {ev.get('to')}")
    for write in d.get("writes") or []:
        out.append(
            f"write {write.get('key')}: {'approved' if write.get('approved') else 'denied'}"
            f" → {write.get('target')} ({write.get('reason')})"
        )
    if (d.get("escalation") or {}).get("escalated"):
        out.append(
            f"escalated to {d['strategy'].get('strategy')} "
            f"(score {d['escalation'].get('score'):.2f})"
        )
    if (d.get("strategy") or {}).get("pattern_id"):
        out.append(f"strategy chosen by learned pattern {d['strategy']['pattern_id']}")
    for learned in d.get("learning") or []:
        if learned.get("event_type") == "pattern_created":
            out.append(f"pattern learned: {learned.get('pattern_id')}")
    gov = d.get("governance") or {}
    if gov.get("fallback_used"):
        out.append(
            f"Focus fell back to {gov.get('allowed_type')}: {'; '.join(gov.get('denied', []))}"
        )
    return out
