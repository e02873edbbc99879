"""Print pip constraints pinning every dependency of pyproject.toml to its lowest allowed version.

`make test-floor` installs with these constraints and runs the suite, so a lower bound in
pyproject.toml is a version the tests passed on, not a guess. Runtime dependencies and every
extra are pinned; the dev group is not (the tools that run the tests are not what is tested).
A requirement this script cannot read as `name>=X` or `name==X` stops it, so a new form of
requirement is noticed instead of silently left at the newest version.

    python .ci/floor_constraints.py [pyproject.toml] > constraints.txt
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

# name, optional [extras], then one lower bound or one pin, optionally an environment marker
# (`; sys_platform != 'win32'`: the pin stands, and constrains nothing where it is not installed);
# a trailing comment is not allowed.
REQUIREMENT = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(?P<op>>=|==)\s*(?P<version>[^\s,;]+)"
    r"\s*(?:;\s*(?P<marker>\S.*))?$"
)


def _normalise(name: str) -> str:
    """The package index's form of a name (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def floor_pins(pyproject: Path) -> list[str]:
    """`name==lowest` for each requirement; the project's own extras (``all``) are skipped."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    own = _normalise(project["name"])
    requirements = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        requirements.extend(extra)
    pins: dict[str, str] = {}
    for requirement in requirements:
        leading = re.match(r"[A-Za-z0-9._-]+", requirement.strip())
        if leading is not None and _normalise(leading.group()) == own:
            continue  # `all` names the project's own extras
        match = REQUIREMENT.match(requirement.strip())
        if match is None:
            raise SystemExit(f"floor_constraints: cannot read {requirement!r} in {pyproject}; "
                             "write it as name>=X or name==X")
        name = _normalise(match["name"])
        if pins.setdefault(name, match["version"]) != match["version"]:
            raise SystemExit(f"floor_constraints: {name} has two lower bounds in {pyproject}")
    return [f"{name}=={version}" for name, version in sorted(pins.items())]


if __name__ == "__main__":
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parents[1] / "pyproject.toml"
    print("\n".join(floor_pins(path)))
