"""`hrm version` and `hrm --version`: which hrm, on which Python and platform, with which extras.

A bug report needs these four facts; `--json` gives them to a script. The version and the extras
are read from the installed distribution's metadata (whatever name it is published under).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import typer

from hrm.cli._common import JsonOption, console, emit_json

__all__ = ["VersionInfo", "register", "version", "version_info"]


@dataclass(frozen=True, kw_only=True)
class VersionInfo:
    """What `hrm version` prints."""

    version: str
    """hrm's version ("unknown" in a checkout that was never installed)."""
    distribution: str
    """The name hrm is installed under (what ``pip install`` takes)."""
    python: str
    """The interpreter's version, e.g. ``3.12.4``."""
    implementation: str
    """``CPython``, ``PyPy``, …"""
    platform: str
    """Operating system, release and machine, e.g. ``Linux-6.8.0-x86_64-with-glibc2.39``."""
    extras: dict[str, bool]
    """Each optional extra and whether everything it brings is installed."""


def version_info(*, with_extras: bool = False) -> VersionInfo:
    """The running hrm's version facts (`extras` read only when asked: it reads metadata)."""
    import platform
    from importlib import metadata

    from hrm._extras import distribution_name, extras

    name = distribution_name()
    try:
        number = metadata.version(name)
    except metadata.PackageNotFoundError:
        import hrm

        number = str(getattr(hrm, "__version__", "unknown"))
    return VersionInfo(
        version=number,
        distribution=name,
        python=platform.python_version(),
        implementation=platform.python_implementation(),
        platform=platform.platform(),
        extras={e.name: e.installed for e in extras()} if with_extras else {},
    )


def version(json_out: JsonOption = False) -> None:
    """Print hrm's version, the Python and platform it runs on, and which extras are installed."""
    info = version_info(with_extras=True)
    if json_out:
        emit_json(asdict(info))
        return
    installed = [name for name, ok in info.extras.items() if ok]
    missing = [name for name, ok in info.extras.items() if not ok]
    lines = [
        f"hrm {info.version} ({info.distribution})",
        f"python {info.python} ({info.implementation})",
        f"platform {info.platform}",
        f"extras {', '.join(installed) or 'none'}"
        + (f" (not installed: {', '.join(missing)})" if missing else ""),
    ]
    for line in lines:
        console.print(line, highlight=False)


def register(app: typer.Typer) -> None:
    """Add `version` to the root app."""
    app.command("version")(version)
