"""`hrm.__version__`: the installed distribution's version, the checkout's without one."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

import hrm
from hrm import _version

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_the_version_is_the_installed_distributions() -> None:
    assert hrm.__version__ == version("hrm-runtime")
    assert "__version__" in hrm.__all__


def test_a_checkout_never_installed_reads_its_pyproject() -> None:
    declared = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["version"]
    assert _version._checkout_version() == declared


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('[project]\nname = "someone-else"\nversion = "9.9"\n', id="another-project"),
        pytest.param('[project]\nname = "hrm-runtime"\n', id="no-version"),
        pytest.param("[project\n", id="not-toml"),
    ],
)
def test_a_pyproject_that_is_not_ours_gives_no_version(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "src" / "hrm"
    package.mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    monkeypatch.setattr(_version, "__file__", str(package / "_version.py"))
    assert _version._checkout_version() == "0+unknown"


def test_importing_hrm_does_not_load_package_metadata() -> None:
    """The hook imports through `hrm`; reading metadata costs it milliseconds it never needs."""
    code = "import sys, hrm; print('importlib.metadata' in sys.modules, hrm.__version__ != '')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
