"""hrm.reasoning exports exactly what it lists, sorted as ruff sorts it (RUF022)."""

from __future__ import annotations

import hrm.reasoning as package


def _isort_key(name: str) -> tuple[int, str]:
    """CONSTANTS first, then Classes, then functions (ruff's isort-style order)."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


def test_all_is_sorted_and_resolvable() -> None:
    names = package.__all__
    assert list(names) == sorted(names, key=_isort_key)
    assert len(set(names)) == len(names)
    for name in names:
        assert getattr(package, name) is not None
