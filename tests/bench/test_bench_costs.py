"""bench/costs.py: the counters issue 35's benchmarks rest on count what happens between marks."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def costs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_costs", ROOT / "bench" / "costs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


WORKER = """
import os, sys, tempfile
with tempfile.TemporaryFile() as f:
    os.fsync(f.fileno())                 # before the first mark: not counted
    os.getppid()
    for _ in range({n}):
        f.write(b"x"); f.flush(); os.fdatasync(f.fileno())
    os.getppid()
    os.fsync(f.fileno())                 # after the second mark: not counted
"""


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_only_the_syncs_between_the_two_marks_are_counted(costs: ModuleType) -> None:
    counts = costs.syscalls_between_marks([sys.executable, "-c", WORKER.format(n=3)])
    assert counts == {"fsync": 0, "fdatasync": 3}


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_a_worker_that_never_marks_is_an_error_not_a_zero(costs: ModuleType) -> None:
    with pytest.raises(RuntimeError, match="marked 0 times"):
        costs.syscalls_between_marks([sys.executable, "-c", "pass"])


def test_callgrind_dumps_are_split_at_the_marks(costs: ModuleType, tmp_path: Path) -> None:
    for name, total in (("callgrind.out.1", 10), ("callgrind.out.2", 25), ("callgrind.out", 3)):
        (tmp_path / name).write_text(f"events: Ir\nsummary: {total}\n")
    between = costs._between_marks(list(tmp_path.iterdir()))
    assert costs._totals(between) == 25
    (tmp_path / "callgrind.out.3").write_text("summary: 1\n")  # a third mark: ambiguous
    with pytest.raises(RuntimeError, match="3 dumps"):
        costs._between_marks(list(tmp_path.iterdir()))


def test_python_level_syncs_are_counted_and_still_made(
    costs: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(os, "fsync", os.fsync)  # restored after the test
    monkeypatch.setattr(os, "fdatasync", os.fdatasync)
    counter = costs.SyncCounter().install()
    with (tmp_path / "f").open("wb") as f:
        os.fsync(f.fileno())
        os.fdatasync(f.fileno())
    assert counter.count == 2


def test_the_cache_key_follows_the_files_it_covers(costs: ModuleType, tmp_path: Path) -> None:
    extra = tmp_path / "conversation.py"
    extra.write_text("A = 1\n")
    key = costs.code_key(("storage/*.py",), extra=[extra])
    assert key == costs.code_key(("storage/*.py",), extra=[extra])
    extra.write_text("A = 2\n")
    assert key != costs.code_key(("storage/*.py",), extra=[extra])
    assert key != costs.code_key(("storage/*.py",), extra=[extra], salt="v2")


def test_median_ratio_pairs_values_measured_together(costs: ModuleType) -> None:
    assert costs.median_ratio([2.0, 3.0, 10.0], [1.0, 1.0, 1.0]) == 3.0
    assert costs.median_ratio([1.0, 3.0], [1.0, 1.0]) == 2.0
    assert costs.median_ratio([1.0], [0.0]) != costs.median_ratio([1.0], [0.0])  # NaN: no pair
