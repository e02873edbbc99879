"""An alias bomb in an agent definition (home or ./.hrm/agents/) fails fast with a clear error:
the file is skipped and named, the other agents load, memory stays small."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from hrm.home import HRMHome, initialize
from hrm.runtime.agents import AgentRegistry

BOMB = (
    "id: bomb\nrole: critic\nsystem_prompt: hi\ncapabilities:\n"
    '  - &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(
        f"  - &{name} [{','.join([f'*{prev}'] * 9)}]\n"
        for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
    )
)
"""Nine levels of nine aliases under a real field: 9⁹ leaves once expanded."""


@pytest.fixture
def home(tmp_path: Path) -> HRMHome:
    h = HRMHome(tmp_path / "home")
    initialize(h)
    return h


def _problems(registry: AgentRegistry) -> str:
    return "\n".join(error.message for error in registry.errors)


def test_a_bomb_in_the_home_is_skipped_and_named(home: HRMHome) -> None:
    bomb = home.agents_dir / "bomb.yaml"
    bomb.write_text(BOMB, encoding="utf-8")
    tracemalloc.start()
    try:
        registry = AgentRegistry.load(home)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "bomb" not in registry
    assert "critic" in registry
    assert str(bomb) in _problems(registry) and "aliases" in _problems(registry)
    assert peak < 50 << 20


def test_a_bomb_in_the_project_is_skipped_and_named(home: HRMHome, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".hrm" / "agents").mkdir(parents=True)
    bomb = project / ".hrm" / "agents" / "bomb.yaml"
    bomb.write_text(BOMB, encoding="utf-8")
    registry = AgentRegistry.load(home, project)
    assert "bomb" not in registry and str(bomb) in _problems(registry)


def test_an_agent_linking_out_of_the_home_is_not_read(home: HRMHome, tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text("id: stray\nrole: r\nsystem_prompt: s\n", encoding="utf-8")
    (home.agents_dir / "stray.yaml").symlink_to(outside)
    registry = AgentRegistry.load(home)
    assert "stray" not in registry
    assert "outside" in _problems(registry)


def _hrm(args: list[str], home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HRM_HOME": str(home), "HRM_PROVIDER": "offline"}
    return subprocess.run(
        [sys.executable, "-m", "hrm", *args], cwd=cwd, env=env, capture_output=True,
        text=True, timeout=120, check=False,
    )


def test_agents_list_and_a_turn_finish_and_name_the_bomb(home: HRMHome, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".hrm" / "agents").mkdir(parents=True)
    (project / ".hrm" / "agents" / "bomb.yaml").write_text(BOMB, encoding="utf-8")
    (home.agents_dir / "bomb2.yaml").write_text(BOMB.replace("id: bomb", "id: bomb2"))
    listed = _hrm(["agents", "list"], home.root, project)
    assert listed.returncode == 0, listed.stderr
    assert "bomb.yaml" in listed.stderr and "bomb2.yaml" in listed.stderr
    assert "aliases" in listed.stderr
    turned = _hrm(["turn", "How do I rename a git branch?"], home.root, project)
    assert turned.returncode == 0, turned.stderr
    assert "bomb2.yaml" in turned.stderr
