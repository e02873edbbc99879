"""A project's agents that ask for tools, capabilities or another model wait for trust (D219)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from hrm.home import HRMHome
from hrm.runtime import AgentRegistry
from hrm.trust import TrustStore

TOOLED = (
    "id: fetcher\nrole: Reads the repository\nsystem_prompt: Read files.\n"
    "capabilities: [read_files]\ntools: [read_file]\n"
)
WORDS = "id: summariser\nrole: Summarises\nsystem_prompt: Summarise what you are given.\n"


def project_with(tmp_path: Path, **agents: str) -> Path:
    directory = tmp_path / "project" / ".hrm" / "agents"
    directory.mkdir(parents=True)
    for name, text in agents.items():
        (directory / f"{name}.yaml").write_text(text)
    return tmp_path / "project"


@pytest.mark.parametrize(
    "extra",
    ["capabilities: [delegate]\n", "provider: openai\n", "model: gpt-4o\n"],
    ids=["delegation", "provider", "model"],
)
def test_an_untrusted_projects_agent_asking_for_more_is_set_aside(
    home: HRMHome, tmp_path: Path, extra: str
) -> None:
    project = project_with(tmp_path, asker=WORDS.replace("summariser", "asker") + extra)
    registry = AgentRegistry.load(home, project)
    assert "asker" not in registry
    (held,) = registry.untrusted
    assert held.path.endswith("asker.yaml")
    assert "the project is not trusted" in held.problem
    assert f"`hrm trust {project.resolve()}`" in held.problem


def test_an_agent_that_only_writes_words_needs_no_trust(home: HRMHome, tmp_path: Path) -> None:
    project = project_with(tmp_path, summariser=WORDS, fetcher=TOOLED)
    registry = AgentRegistry.load(home, project)
    assert registry.get("summariser").origin == "project"
    assert "fetcher" not in registry and len(registry.untrusted) == 1


def test_trusted_it_loads_and_an_edit_sets_it_aside_again(
    home: HRMHome, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    project = project_with(tmp_path, fetcher=TOOLED)
    TrustStore(home).trust(project)
    assert AgentRegistry.load(home, project).get("fetcher").tools == ("read_file",)
    (project / ".hrm" / "agents" / "fetcher.yaml").write_text(TOOLED + "model: other\n")
    with caplog.at_level(logging.WARNING, logger="hrm.runtime.agents"):
        edited = AgentRegistry.load(home, project)
        AgentRegistry.load(home, project)
    assert "fetcher" not in edited
    assert "changed since you trusted the project" in edited.untrusted[0].problem
    said = [r for r in caplog.records if "fetcher" in r.getMessage()]
    assert len(said) == 1  # once per file content


def test_a_home_agent_of_the_same_id_stays_when_the_projects_is_set_aside(
    home: HRMHome, tmp_path: Path
) -> None:
    (home.agents_dir / "fetcher.yaml").write_text(
        "id: fetcher\nrole: Home fetcher\nsystem_prompt: Fetch.\n"
    )
    project = project_with(tmp_path, fetcher=TOOLED)
    assert AgentRegistry.load(home, project).get("fetcher").role == "Home fetcher"
