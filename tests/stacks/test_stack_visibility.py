"""Visibility (004 §7): a stack opens only its own partitions; every refusal is recorded."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome, initialize
from hrm.stacks.visibility import (
    ROLE_HO3,
    ROLE_META,
    CrossStackReader,
    StackScope,
    guard_partitions,
    partition_paths,
    visibility_decision,
)
from hrm.storage.ledger import Ledger

DPJ = "RESIDENT:DoPeJar"


def governance(home: HRMHome, kind: str) -> list[dict[str, Any]]:
    if not home.governance_ledger.exists():
        return []
    with Ledger(home.governance_ledger) as ledger:
        return [r.data for r in ledger.records() if r.kind == kind]


def seed(home: HRMHome, agent_class: str, text: str = "x") -> None:
    initialize(home, agent_class=agent_class)
    with Ledger(home.decision_ledger(agent_class)) as ledger:
        ledger.append("turn", {"input": text})


@pytest.mark.parametrize(
    ("observer", "target", "allowed"),
    [
        pytest.param("ADMIN", "ADMIN", True, id="admin-own"),
        pytest.param(DPJ, DPJ, True, id="resident-own"),
        pytest.param("ADMIN", DPJ, False, id="admin-cannot-see-resident"),
        pytest.param(DPJ, "ADMIN", False, id="resident-cannot-see-admin"),
        pytest.param(DPJ, "RESIDENT:Other", False, id="residents-cannot-see-each-other"),
        pytest.param(ROLE_META, DPJ, True, id="meta-agent-sees-all"),
        pytest.param(ROLE_HO3, "ADMIN", True, id="ho3-sees-all"),
        pytest.param("RESIDENT:../ADMIN", "ADMIN", False, id="crafted-observer"),
    ],
)
def test_visibility_table(observer: str, target: str, allowed: bool) -> None:
    assert visibility_decision(observer, target).allowed is allowed


def test_admin_cannot_open_a_residents_ledger_and_the_attempt_is_recorded(home: HRMHome) -> None:
    seed(home, DPJ, "private to DoPeJar")
    scope = StackScope(home, "ADMIN")
    with pytest.raises(HRMError) as info:
        scope.open_ledger(DPJ)
    assert info.value.code is ErrorCode.VISIBILITY_DENIED
    denied = governance(home, "visibility_denied")
    assert denied[-1]["observer"] == "ADMIN"
    assert denied[-1]["target"] == DPJ


@pytest.mark.parametrize(
    "target",
    [
        pytest.param("ADMIN", id="admin-class"),
        pytest.param("RESIDENT:Other", id="other-resident-class"),
        pytest.param(Path("HO2/ledger/ADMIN/workorder.jsonl"), id="relative-path-of-admin"),
        pytest.param("HO1/ledger/ADMIN/worker.jsonl", id="relative-str-path-of-admin"),
        pytest.param("HO2/ledger/RESIDENT_DoPeJar/../ADMIN/workorder.jsonl", id="dotdot"),
        pytest.param("/etc/passwd", id="outside-home"),
        pytest.param("HO2/ledger/RESIDENT_DoPeJar/workorder.jsonl\x00", id="nul-byte"),
        pytest.param("HOT/ledger/governance.jsonl", id="not-a-stack-ledger"),
    ],
)
def test_a_stack_handed_another_path_is_refused(home: HRMHome, target: Any) -> None:
    seed(home, "ADMIN")
    seed(home, DPJ)
    scope = StackScope(home, DPJ)
    before = len(governance(home, "visibility_denied"))
    with pytest.raises(HRMError) as info:
        scope.open_ledger(target)
    assert info.value.code is ErrorCode.VISIBILITY_DENIED
    assert len(governance(home, "visibility_denied")) == before + 1


def test_absolute_path_of_another_stack_names_its_owner(home: HRMHome) -> None:
    seed(home, "ADMIN")
    with pytest.raises(HRMError, match="belongs to stack ADMIN"):
        StackScope(home, DPJ).open_ledger(home.decision_ledger("ADMIN"))


def test_a_stack_opens_its_own_ledgers_by_class_or_path(home: HRMHome) -> None:
    seed(home, DPJ, "mine")
    scope = StackScope(home, DPJ)
    with scope.open_ledger(DPJ) as ledger:
        assert [r.data["input"] for r in ledger.records()] == ["mine"]
    assert scope.resolve(home.decision_ledger(DPJ)) == home.decision_ledger(DPJ)
    assert scope.resolve("HO1/ledger/RESIDENT_DoPeJar/worker.jsonl", ledger="ho1m") == (
        home.execution_ledger(DPJ)
    )
    assert [r.data["input"] for r in scope.records("ho2m")] == ["mine"]


@pytest.mark.parametrize(
    "crafted",
    ["RESIDENT:../ADMIN", "RESIDENT:a/b", "../ADMIN", "RESIDENT:", "ADMIN\x00", "KERNEL.semantic",
     "RESIDENT:..", "resident:x", "RESIDENT:" + "x" * 65],
)
def test_crafted_agent_classes_are_refused_and_recorded(home: HRMHome, crafted: str) -> None:
    with pytest.raises(HRMError) as info:
        StackScope(home, crafted)
    assert info.value.code is ErrorCode.VISIBILITY_DENIED
    with pytest.raises(HRMError) as info:
        guard_partitions(home, crafted)
    assert info.value.code is ErrorCode.VISIBILITY_DENIED
    assert len(governance(home, "visibility_denied")) == 2


def test_a_symlinked_partition_stops_the_stack(home: HRMHome, config: Any) -> None:
    from hrm.stacks.factory import create_stack

    seed(home, "ADMIN", "admin secret")
    mallory = "RESIDENT:Mallory"
    target = home.ho2_dir(mallory)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(home.ho2_dir("ADMIN"), target_is_directory=True)
    with pytest.raises(HRMError) as info:
        create_stack(mallory, config, home)
    assert info.value.code is ErrorCode.VISIBILITY_DENIED
    assert "symbolic link" in info.value.message
    assert governance(home, "visibility_denied")[-1]["operation"] == "create_stack"
    assert not [r for r in governance(home, "stack_created") if r["agent_class"] == mallory]


def test_a_symlinked_ledger_file_is_refused(home: HRMHome) -> None:
    seed(home, "ADMIN", "admin secret")
    mallory = "RESIDENT:Mallory"
    initialize(home, agent_class=mallory)
    home.decision_ledger(mallory).symlink_to(home.decision_ledger("ADMIN"))
    with pytest.raises(HRMError, match="symbolic link"):
        guard_partitions(home, mallory)
    with pytest.raises(HRMError, match="symbolic link"):
        StackScope(home, mallory).open_ledger()


def test_a_symlinked_tier_directory_is_refused(home: HRMHome, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    (outside / "ADMIN").mkdir(parents=True)
    ho1_ledger = home.root / "HO1" / "ledger"
    for child in ho1_ledger.iterdir():
        child.rmdir()
    ho1_ledger.rmdir()
    ho1_ledger.symlink_to(outside, target_is_directory=True)
    with pytest.raises(HRMError, match="symbolic link"):
        guard_partitions(home, "ADMIN")


def test_a_hard_linked_ledger_is_refused(home: HRMHome) -> None:
    seed(home, "ADMIN", "admin secret")
    mallory = "RESIDENT:Mallory"
    initialize(home, agent_class=mallory)
    os.link(home.decision_ledger("ADMIN"), home.decision_ledger(mallory))
    with pytest.raises(HRMError, match="hard-linked"):
        guard_partitions(home, mallory)


def test_only_cross_stack_roles_may_read_across(home: HRMHome) -> None:
    for role in ("ADMIN", DPJ, "KERNEL.syntactic", ""):
        with pytest.raises(HRMError) as info:
            CrossStackReader(home, role)
        assert info.value.code is ErrorCode.VISIBILITY_DENIED
    assert len(governance(home, "visibility_denied")) == 4


def test_the_meta_agent_reads_every_stack_and_each_read_is_recorded(home: HRMHome) -> None:
    seed(home, "ADMIN", "a")
    seed(home, DPJ, "d")
    reader = CrossStackReader(home, ROLE_META, purpose="test")
    assert reader.stacks() == ["ADMIN", DPJ]
    seen = {c: [r.data["input"] for r in reader.records(c)] for c in reader.stacks()}
    assert seen == {"ADMIN": ["a"], DPJ: ["d"]}
    reads = governance(home, "cross_stack_read")
    assert [(r["role"], r["agent_class"], r["ledger"]) for r in reads] == [
        (ROLE_META, "ADMIN", "ho2m"), (ROLE_META, DPJ, "ho2m")]


def test_even_the_meta_agent_refuses_a_symlinked_partition(home: HRMHome) -> None:
    seed(home, "ADMIN", "a")
    mallory = "RESIDENT:Mallory"
    link = home.ho1_dir(mallory)
    link.symlink_to(home.ho1_dir("ADMIN"), target_is_directory=True)
    reader = CrossStackReader(home, ROLE_META)
    with pytest.raises(HRMError) as info:
        list(reader.records(mallory, "ho1m"))
    assert info.value.code is ErrorCode.VISIBILITY_DENIED


# The profile's suppressions (tests/conftest.py) stay: a list given here replaces them.
@settings(max_examples=60, deadline=None,
          suppress_health_check=[*settings.default.suppress_health_check,
                                  HealthCheck.function_scoped_fixture])
@given(target=st.one_of(
    st.text(max_size=40),
    st.sampled_from(["ADMIN", DPJ, "RESIDENT:Other", "HO2/ledger/ADMIN/workorder.jsonl",
                     "HO2/ledger/RESIDENT_DoPeJar/workorder.jsonl", "..", "./x", "HO2/../HOT"]),
    st.builds(lambda a, b: f"{a}/{b}", st.sampled_from(["HO1/ledger", "HO2/ledger", ".."]),
              st.text(max_size=20)),
))
def test_a_scope_never_resolves_outside_its_own_ledgers(home: HRMHome, target: str) -> None:
    initialize(home, agent_class=DPJ)
    own = {p for name, p in partition_paths(home, DPJ).items() if not name.endswith("_dir")}
    try:
        resolved = StackScope(home, DPJ).resolve(target)
    except HRMError as exc:
        assert exc.code in (ErrorCode.VISIBILITY_DENIED, ErrorCode.VALIDATION_FAILED)
    else:
        assert resolved in own
