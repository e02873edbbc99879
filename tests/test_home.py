"""The home layout, agent-class partitions and initialisation (ARCHITECTURE §4, 003 §1)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome, initialize, parse_agent_class, stack_dirname


def test_initialize_creates_the_layout(tmp_path: Path) -> None:
    h = HRMHome(tmp_path / "h")
    result = initialize(h)
    assert result.created
    for path in (
        h.config_path,
        h.handoffs_dir,
        h.hot_dir / "ledger",
        h.schemas_dir,
        h.agents_dir,
        h.ho2_dir("ADMIN"),
        h.ho1_dir("ADMIN"),
    ):
        assert path.exists(), path


def test_initialize_is_idempotent_and_force_keeps_data(tmp_path: Path) -> None:
    h = HRMHome(tmp_path / "h")
    initialize(h)
    ledger = h.decision_ledger("ADMIN")
    ledger.write_text('{"seq":1}\n')
    h.config_path.write_text("trace_enabled: true\n")
    assert not initialize(h).created
    initialize(h, force=True)
    assert ledger.read_text() == '{"seq":1}\n'
    assert h.config_path.read_text() == "trace_enabled: true\n"


def test_unwritable_home_is_permission_denied_with_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_mkdir = os.mkdir

    def denied(path: str, *args: object, **kwargs: object) -> None:
        if str(path).startswith(str(tmp_path / "ro")):
            raise PermissionError(13, "Permission denied", str(path))
        real_mkdir(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", denied)
    with pytest.raises(HRMError) as info:
        initialize(HRMHome(tmp_path / "ro" / "home"))
    assert info.value.code is ErrorCode.PERMISSION_DENIED
    fallback = info.value.context["fallback_path"]
    assert fallback and not fallback.startswith(str(tmp_path / "ro"))
    assert fallback in info.value.message


def test_home_that_is_a_file_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(HRMError) as info:
        initialize(HRMHome(f))
    assert info.value.code is ErrorCode.PATH_EXISTS


@pytest.mark.parametrize(
    ("agent_class", "dirname"),
    [
        ("ADMIN", "ADMIN"),
        ("RESIDENT:DoPeJar", "RESIDENT_DoPeJar"),
        ("RESIDENT:a.b-c_1", "RESIDENT_a.b-c_1"),
    ],
)
def test_partition_names(agent_class: str, dirname: str) -> None:
    assert stack_dirname(agent_class) == dirname


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "admin",
        "RESIDENT",
        "RESIDENT:",
        "RESIDENT:../ADMIN",
        "RESIDENT:a/b",
        "RESIDENT:a\\b",
        "RESIDENT:..",
        "RESIDENT:.hidden",
        "RESIDENT:" + "x" * 65,
        "RESIDENT:a\x00b",
        "KERNEL.semantic",
        "RESIDENT:a:b",
    ],
)
def test_crafted_agent_classes_are_rejected(bad: str) -> None:
    with pytest.raises(HRMError) as info:
        parse_agent_class(bad)
    assert info.value.code is ErrorCode.VALIDATION_FAILED


def test_stack_classes_lists_partitions(tmp_path: Path) -> None:
    h = HRMHome(tmp_path / "h")
    initialize(h)
    initialize(h, agent_class="RESIDENT:DoPeJar")
    (h.root / "HO2" / "ledger" / "not..valid").mkdir()
    assert h.stack_classes() == ["ADMIN", "RESIDENT:DoPeJar"]


def test_home_and_init_result_are_frozen_values(tmp_path: Path) -> None:
    import copy
    import pickle

    home = HRMHome(tmp_path)
    assert home == HRMHome(tmp_path) and home != HRMHome(tmp_path / "x")
    assert hash(home) == hash(HRMHome(tmp_path)) and len({home, HRMHome(tmp_path)}) == 1
    assert repr(home) == f"HRMHome(root={tmp_path!r})"
    assert pickle.loads(pickle.dumps(home)) == home == copy.deepcopy(home)
    assert home.cache_dir == tmp_path / "cache"
    with pytest.raises(AttributeError):
        home.root = tmp_path / "other"  # type: ignore[misc]
    result = initialize(home)
    assert pickle.loads(pickle.dumps(result)) == result
    assert repr(result).startswith(f"InitResult(path={tmp_path!r}, config_path=")
    with pytest.raises(AttributeError):
        result.created = False  # type: ignore[misc]


def test_a_home_built_from_a_string_is_the_same_home(tmp_path: Path) -> None:
    text = str(tmp_path / "h")
    assert HRMHome(text) == HRMHome(Path(text))
    assert HRMHome(text).config_path == Path(text) / "config.yaml"
