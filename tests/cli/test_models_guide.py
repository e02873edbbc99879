"""`hrm models` guides to a capable model (issue 33 §5, D282): every route's config lines load
through the config loader and mean what the guide says about them."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from hrm.cli._models_guide import ROUTES, ModelRoute
from hrm.cli.models import app
from hrm.config import load_config
from hrm.home import HRMHome
from hrm.llm.capability import model_capability

runner = CliRunner()


@pytest.fixture(autouse=True)
def _configured_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HRM_PROVIDER", raising=False)  # the file's provider, not the tests'


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.name)
def test_each_route_config_loads_and_has_the_capability_the_guide_states(
    home: HRMHome, route: ModelRoute
) -> None:
    home.config_path.write_text(route.config, encoding="utf-8")
    llm = load_config(home).config.llm
    assert f"provider: {llm.provider}\n" in route.config
    assert model_capability(llm).capable is route.capable
    assert route.commands, "a route says what to run first"


def test_the_guide_covers_local_servers_hosted_providers_and_the_larger_local_model() -> None:
    names = " ".join(route.name for route in ROUTES)
    for wanted in ("Ollama", "llama.cpp", "vLLM", "Anthropic", "OpenAI", "0.5B"):
        assert wanted in names
    servers = [r for r in ROUTES if "base_url" in r.config]
    assert {r.config.split("base_url: ")[1].split("\n")[0] for r in servers} == {
        "http://localhost:11434/v1", "http://localhost:8080/v1", "http://localhost:8000/v1",
    }


def test_bare_models_shows_the_guide_for_the_configured_model(home: HRMHome) -> None:
    home.config_path.write_text("llm:\n  provider: local\n", encoding="utf-8")
    result = runner.invoke(app, [], env={"HRM_HOME": str(home.root)})
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Configured: local" in out and "not capable of plans and checks" in out
    assert "too small for structured work" in out
    assert "$ ollama serve" in out and "base_url: http://localhost:11434/v1" in out
    assert "hrm models install qwen2.5-coder-0.5b" in out


def test_the_guide_says_a_hosted_model_is_capable(home: HRMHome) -> None:
    home.config_path.write_text("llm:\n  provider: anthropic\n", encoding="utf-8")
    result = runner.invoke(app, ["guide", "--json", "--home", str(home.root)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["configured"]["capable"] is True and data["hint"] == ""
    assert len(data["routes"]) == len(ROUTES)


def test_a_broken_config_is_one_line_naming_the_file(home: HRMHome) -> None:
    home.config_path.write_text("llm:\n  capable: perhaps\n", encoding="utf-8")
    result = runner.invoke(app, ["guide", "--home", str(home.root)])
    assert result.exit_code != 0
    assert "capable" in result.stderr and "Traceback" not in result.output
