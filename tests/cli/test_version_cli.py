"""`hrm --version` and `hrm version [--json]`: what a bug report needs, read from the metadata."""

from __future__ import annotations

import json
import platform
from importlib import metadata

from typer.testing import CliRunner

from hrm._extras import distribution_name, extras
from hrm.cli.app import app


def test_dash_dash_version_prints_the_installed_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"hrm {metadata.version(distribution_name())}\n"


def test_version_json_names_version_python_platform_and_extras() -> None:
    result = CliRunner().invoke(app, ["version", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["version"] == metadata.version(distribution_name())
    assert data["distribution"] == distribution_name()
    assert data["python"] == platform.python_version()
    assert data["platform"] == platform.platform()
    assert data["extras"] == {e.name: e.installed for e in extras()}
    assert {"anthropic", "openai", "local", "embeddings"} <= set(data["extras"])


def test_version_human_output_is_four_lines() -> None:
    result = CliRunner().invoke(app, ["version"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["hrm", "python", "platform", "extras"]


def test_an_extra_is_installed_only_when_all_it_brings_is() -> None:
    by_name = {e.name: e for e in extras()}
    embeddings = by_name["embeddings"]
    assert "onnxruntime" in embeddings.requires
    everything = True
    for name in embeddings.requires:
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            everything = False
    assert embeddings.installed is everything
