"""The fault trials of ``faults/``, a few of each: kills, damage, a full disk, rebuilds.

``make faults`` runs a hundred of each and prints the figures bench/RESULTS.md records;
these keep the same checks in the test suite, at a cost of seconds.
"""

from __future__ import annotations

import importlib
import random
import sys
from pathlib import Path
from types import ModuleType

import pytest

FAULTS = Path(__file__).resolve().parents[2] / "faults"


def load(name: str) -> ModuleType:
    """A module of ``faults/`` (a folder of scripts, not a package: they import each other
    by name, so the folder goes on the path)."""
    if str(FAULTS) not in sys.path:
        sys.path.insert(0, str(FAULTS))
    return importlib.import_module(name)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    homes = load("homes")
    built: Path = homes.build(tmp_path_factory.mktemp("template") / "home")
    return built


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["ledger", "learnings", "canon", "turn", "cli"])
def test_a_killed_writer_loses_nothing_it_acknowledged(mode: str, tmp_path: Path) -> None:
    sigkill = load("sigkill")
    result = sigkill.run(mode, 2, seed=7, root=tmp_path)
    assert result.lost == 0 and result.failures == []
    assert result.rebuild_equal
    if mode != "cli":
        assert result.acknowledged > 0  # something was written before each kill


def test_every_byte_flip_is_detected_and_repaired(template: Path, tmp_path: Path) -> None:
    damage = load("damage")
    result = damage.flips(template, tmp_path, 6, random.Random(3))
    assert result.undetected == [] and result.detected == 6
    assert result.repaired == 6


@pytest.mark.parametrize("drop", [(), ("anchor",)], ids=["with-anchor", "without-anchor"])
def test_every_truncation_is_detected(template: Path, tmp_path: Path, drop: tuple[str, ...]) -> None:
    damage = load("damage")
    result = damage.truncations(template, tmp_path, 6, random.Random(5), drop=drop)
    assert result.undetected == [] and result.detected == 6


@pytest.mark.parametrize("drop", [(), ("manifest",)], ids=["ledger", "ledger-and-manifest"])
def test_a_deleted_ledger_is_detected(template: Path, tmp_path: Path, drop: tuple[str, ...]) -> None:
    damage = load("damage")
    result = damage.deletions(template, tmp_path, 5, random.Random(11), drop=drop)
    assert result.undetected == []
    assert result.detected + result.by_design == 5


def test_homes_built_through_real_use_rebuild_equal(tmp_path: Path) -> None:
    homes, sigkill = load("homes"), load("sigkill")
    for seed in (1, 2):
        assert sigkill.rebuild_equal(homes.build(tmp_path / f"h{seed}", seed=seed))


@pytest.mark.slow
def test_a_full_disk_loses_nothing_and_verifies(tmp_path: Path) -> None:
    fulldisk = load("fulldisk")
    if not fulldisk.can_mount():
        pytest.skip("mounting a small tmpfs needs root")
    result = fulldisk.run(tmp_path)
    assert result.ran and result.lost == 0
    assert result.verified_while_full and result.verified_after and result.rebuild_equal
    assert all(refusal.startswith("disk_full") for refusal in result.refused.values()), (
        result.refused
    )
