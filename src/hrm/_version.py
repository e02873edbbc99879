"""The version of hrm: the installed distribution's, or the checkout's own ``pyproject.toml``'s.

Loaded only when ``hrm.__version__`` is first read, because ``importlib.metadata`` costs the
hook several milliseconds of start-up it never needs.
"""

from __future__ import annotations

import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

DISTRIBUTION = "hrm-runtime"
"""The name on the package index; the import name and the command stay ``hrm``."""

_UNKNOWN = "0+unknown"


def _checkout_version() -> str:
    """The version a source checkout declares (run with ``PYTHONPATH=src``, never installed)."""
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return _UNKNOWN
    if project.get("name") != DISTRIBUTION or not isinstance(project.get("version"), str):
        return _UNKNOWN
    return str(project["version"])


try:
    __version__ = version(DISTRIBUTION)
except PackageNotFoundError:
    __version__ = _checkout_version()
