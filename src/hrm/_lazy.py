"""Lazy public exports for hrm's packages: names load on first use (PEP 562).

Importing a package then costs almost nothing, which the Claude Code hook relies on (it imports
through `hrm` and `hrm.continuity` and must start fast). Kept free of `typing` at run time.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    namespace: dict[str, Any], homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module ``__getattr__`` and ``__dir__`` that import each name from its home on first use.

    Args:
        namespace: The package's ``globals()``; a loaded name is stored there, so it loads once.
        homes: Public name → the module defining it, either absolute (``hrm.config``) or
            relative to the package (``ledger`` in ``hrm.storage``).
    """
    package = str(namespace["__name__"])

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = home if home.startswith("hrm.") else f"{package}.{home}"
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__
