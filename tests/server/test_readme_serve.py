"""The README's server example runs as written against a live `hrm serve`."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from tests.server.conftest import Served
from tests.server.support import HRM, WAIT_S, clean_env

README = Path(__file__).resolve().parents[2] / "README.md"


def serve_blocks() -> list[str]:
    return re.findall(r"```python serve\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_the_readme_has_a_server_example() -> None:
    assert serve_blocks()


@pytest.mark.parametrize("block", serve_blocks())
def test_the_server_example_runs(served: Served, block: str, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(block, str(README), "exec"),
         {"BASE_URL": f"{served.server.base_url}/v1", "API_KEY": served.alice})
    out = capsys.readouterr().out
    assert "Noted as canon" in out and "fact.my-locker-code" in out
    assert "'approved': True" in out and "binary search" in out


@pytest.mark.parametrize("args", [["serve", "--help"], ["serve", "keys", "--help"],
                                  ["serve", "keys", "create", "--help"]])
def test_every_serve_command_has_help(tmp_path: Path, args: list[str]) -> None:
    done = subprocess.run([*HRM, *args], capture_output=True, text=True, check=False,
                          env=clean_env(tmp_path), timeout=WAIT_S)
    assert done.returncode == 0, done.stderr
    assert "Usage" in done.stdout


def test_the_screenshot_the_readme_shows_is_in_the_repository() -> None:
    shown = re.findall(r"\]\((docs/images/[^)]+)\)", README.read_text(encoding="utf-8"))
    assert shown and all((README.parent / path).is_file() for path in shown)
