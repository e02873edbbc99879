"""`hrm skills`: which skills a prompt calls for (003 §4)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from hrm.cli._common import (
    EXIT_INPUT,
    HomeOption,
    JsonOption,
    console,
    emit_json,
    err_console,
    handle_errors,
)
from hrm.cli._root import SuggestingGroup

app = typer.Typer(
    cls=SuggestingGroup,
    name="skills",
    help="Match prompts against skill activation rules.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def skills() -> None:
    """Match prompts against skill activation rules."""


@app.command()
def match(
    prompt: Annotated[str, typer.Argument(help="The prompt to match.")],
    *,
    rules: Annotated[
        list[Path] | None,
        typer.Option("--rules", help="A rules file (repeatable, most important first)."),
    ] = None,
    project: Annotated[
        Path | None, typer.Option("--project", help="Project whose rules apply (default: cwd).")
    ] = None,
    budget_ms: Annotated[int, typer.Option("--budget-ms", help="Matching time budget.")] = 1000,
    home: HomeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Show the skills a prompt activates and what the hook would do."""
    from hrm.continuity.skills import SkillActivator, default_rule_paths
    from hrm.home import HRMHome

    activator = SkillActivator()
    with handle_errors():
        h = HRMHome.resolve(home)
        project_dir = (project or Path.cwd()).resolve()
        paths = list(rules) if rules else default_rule_paths(h, project_dir)
        loaded = activator.load_rules(paths)
        result = activator.match_skills(prompt, loaded, budget_ms=budget_ms)
        action = _enforce(activator, loaded, result.matches, h, project_dir)
    for error in loaded.errors:
        err_console.print(f"rule error: {error}", markup=False)
    if rules and loaded.errors and not (loaded.skills or loaded.agents):
        # The files the user named gave no rule at all: "no skill matched" would hide that.
        err_console.print("error: no rule could be loaded from --rules", markup=False)
        raise typer.Exit(EXIT_INPUT)
    if json_output:
        emit_json(
            {
                "action": action.action.value,
                "message": action.message,
                "blocking_skills": action.blocking_skills,
                "matches": [
                    {
                        "skill": m.skill,
                        "kind": m.kind,
                        "enforcement": m.enforcement.value,
                        "priority": m.priority.value,
                        "confidence": m.confidence,
                        "matched_keywords": m.match_reason.matched_keywords,
                        "matched_patterns": m.match_reason.matched_patterns,
                    }
                    for m in result.matches
                ],
                "excluded": result.excluded,
                "total_checked": result.total_checked,
                "match_time_ms": result.match_time_ms,
                "timed_out": result.timed_out,
                "rule_errors": [str(error) for error in loaded.errors],
                "sources": [str(p) for p in loaded.source_paths],
            }
        )
        return
    if not result.matches:
        console.print("No skill matched.")
        return
    for m in result.matches:
        why = ", ".join(m.match_reason.matched_keywords + m.match_reason.matched_patterns)
        line = f"{m.priority.value:>8}  {m.enforcement.value:<7} {m.confidence:.2f}  {m.skill}"
        console.print(f"{line}  ({why})", markup=False)
    console.print(f"→ {action.action.value}: {action.message}", markup=False)


def _enforce(activator: Any, rules: Any, matches: list[Any], home: Any, project: Path) -> Any:
    """What the prompt hook would do: the person's ``continuity.enforcement``, and a project
    rule blocks only once the project is trusted (D220, D221)."""
    from hrm.config import load_config
    from hrm.continuity._prompt_rules import blocking_permission, rule_sources

    enforcement = load_config(home, project).config.continuity.enforcement
    may_block = (
        blocking_permission(home, project, rule_sources(rules, matches), [])
        if enforcement == "block"
        else None
    )
    return activator.apply_enforcement(matches, enforcement=enforcement, may_block=may_block)
