"""pytest imports test modules by basename outside packages: two folders holding the same
``test_*.py`` name fail collection on a clean clone (a stale ``__pycache__`` hides it locally)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_two_test_modules_outside_a_package_share_a_name() -> None:
    loose = [
        p for p in TESTS.rglob("test_*.py")
        if not (p.parent / "__init__.py").exists()
    ]  # fmt: skip
    counts = Counter(p.name for p in loose)
    assert [name for name, n in counts.items() if n > 1] == []
