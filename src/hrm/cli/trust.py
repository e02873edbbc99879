"""`hrm trust [PATH]`, `hrm trust --list` and `hrm untrust PATH`: which projects' settings apply.

A project's settings that can send data or credentials elsewhere, or widen what hrm may do
(its config's provider and base URL, agents with tools, skill rules that block), apply only
once the person trusts the project here (D215). Trusting prints what each file sets that
needed it, so the person sees what they agreed to; a file changed later is untrusted again
until `hrm trust` is run anew.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from hrm.cli._common import HomeOption, JsonOption, console, emit_json, handle_errors
from hrm.cli._table import print_table

__all__ = ["register", "trust", "untrust"]


def register(app: typer.Typer) -> None:
    """Add `hrm trust` and `hrm untrust` to the root app."""
    app.command("trust")(trust)
    app.command("untrust")(untrust)


def trust(
    path: Annotated[
        Path | None, typer.Argument(help="The project directory (default: the current one).")
    ] = None,
    list_: Annotated[
        bool, typer.Option("--list", help="List the trusted projects and their files.")
    ] = False,
    home: HomeOption = None,
    json_out: JsonOption = False,
) -> None:
    """Let a project's settings apply: its provider, base URL, agents' tools, blocking rules."""
    from hrm.home import HRMHome
    from hrm.trust import TrustStore

    store = TrustStore(HRMHome.resolve(home))
    if list_:
        if path is not None:
            raise typer.BadParameter("--list takes no PATH", param_hint="PATH")
        _show_projects(store.projects(), json_out)
        return
    project = path if path is not None else Path.cwd()
    with handle_errors():
        record = store.trust(project)
    if json_out:
        emit_json(record.to_dict())
        return
    console.print(f"Trusted {record.root}: its settings apply while these files stay as they are.")
    for relative in sorted(record.files):
        what = _what_it_sets(Path(record.root) / relative)
        console.print(f"  {relative}" + (f": {what}" if what else ""), highlight=False)


def untrust(
    path: Annotated[Path, typer.Argument(help="The project directory.")],
    home: HomeOption = None,
    json_out: JsonOption = False,
) -> None:
    """Stop a project's settings from applying (until `hrm trust` again)."""
    from hrm.errors import HRMError
    from hrm.home import HRMHome
    from hrm.trust import TrustStore, project_root

    with handle_errors():
        if not TrustStore(HRMHome.resolve(home)).untrust(path):
            raise HRMError.not_found("trusted project", str(project_root(path)),
                                     "`hrm trust --list` shows the trusted ones")
    root = str(project_root(path))
    if json_out:
        emit_json({"root": root, "trusted": False})
        return
    console.print(f"Untrusted {root}: only its harmless settings apply now.", highlight=False)


def _show_projects(projects: list[Any], json_out: bool) -> None:
    if json_out:
        emit_json([p.to_dict() for p in projects])
        return
    if not projects:
        console.print("No trusted projects.")
        return
    print_table(
        ["project", "files", "trusted at"],
        [(p.root, ", ".join(sorted(p.files)), p.trusted_at) for p in projects],
        title="trusted projects",
    )


def _what_it_sets(path: Path) -> str:
    """What a settings file sets that needed trust, in a few words (empty when nothing)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    if path.name == "skill-rules.json":
        return _blocking_rules(text)
    from hrm import _yaml

    try:
        data = _yaml.safe_load(text)
    except Exception:  # an unreadable file sets nothing; loading it later names the problem
        return ""
    if not isinstance(data, dict):
        return ""
    if path.name == "config.yaml":
        return _config_keys(data)
    asked = [name for name in ("provider", "model", "tools", "capabilities") if data.get(name)]
    return "asks for " + ", ".join(asked) if asked else ""


def _config_keys(data: dict[str, Any]) -> str:
    from hrm._config_trust import untrusted_settings
    from hrm.scrubbing import scrub_text

    held = untrusted_settings(data)
    return ", ".join(f"{key}={scrub_text(str(value))}" for key, value in held.items())


def _blocking_rules(text: str) -> str:
    try:
        doc = json.loads(text)
    except ValueError:
        return ""
    sections = [doc.get(s) for s in ("skills", "agents")] if isinstance(doc, dict) else []
    names = [
        str(name)
        for section in sections if isinstance(section, dict)
        for name, rule in section.items()
        if isinstance(rule, dict) and str(rule.get("enforcement", "")).lower() == "block"
    ]
    return "rules that may block: " + ", ".join(names) if names else ""
