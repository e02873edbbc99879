"""Shell completion: the script for each shell, and candidates from lazily loaded groups."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# The console script, as a shell runs it: completion is keyed on the program's name.
_SCRIPT = Path(sys.executable).with_name("hrm")
_HRM = [str(_SCRIPT)]
pytestmark = pytest.mark.skipif(not _SCRIPT.is_file(), reason="the hrm console script is not installed")


def _complete(words: str, home: Path) -> list[str]:
    """What bash completion offers for the last of `words` (as the installed script asks)."""
    env = {
        **os.environ, "HRM_HOME": str(home), "_HRM_COMPLETE": "complete_bash",
        "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
    }
    done = subprocess.run([*_HRM], check=False, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        pytest.param("hrm led", {"ledger"}, id="lazy-group-name"),
        pytest.param("hrm m", {"memory", "migrate", "models", "meta", "mcp"}, id="several-groups"),
        pytest.param("hrm ledger ve", {"verify"}, id="command-in-a-lazy-group"),
        pytest.param("hrm memory sh", {"shared", "show"}, id="nested"),
        pytest.param("hrm hook session-", {"session-start", "session-end"}, id="hook-events"),
        pytest.param("hrm why --j", {"--json"}, id="option"),
    ],
)
def test_completion_offers_names_from_every_group(words: str, expected: set[str], tmp_path: Path) -> None:
    assert set(_complete(words, tmp_path)) == expected


# Typer otherwise names the shell by walking up the process tree: run from `sh -c 'make test'`
# it finds `sh` and refuses, whatever shell the test names.
_NAMED_SHELL = {"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_show_completion_prints_the_script_for_a_shell(shell: str) -> None:
    done = subprocess.run([*_HRM, "--show-completion", shell], check=False, capture_output=True,
                          text=True, timeout=120, env={**os.environ, **_NAMED_SHELL})
    assert done.returncode == 0, done.stderr
    assert "_HRM_COMPLETE" in done.stdout


def test_install_completion_writes_the_shells_start_up_file(tmp_path: Path) -> None:
    env = {**os.environ, **_NAMED_SHELL, "HOME": str(tmp_path), "SHELL": "/bin/bash"}
    done = subprocess.run([*_HRM, "--install-completion", "bash"], check=False, capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert "completion installed" in done.stdout.lower()
    assert "hrm" in (tmp_path / ".bashrc").read_text(encoding="utf-8")
