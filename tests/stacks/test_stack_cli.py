"""`hrm stack …`: create, list, inspect, teardown and anchors, with --json."""

from __future__ import annotations

import json
from typing import Any

from typer.testing import CliRunner

from hrm.cli.stack import app
from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.storage.ledger import Ledger

DPJ = "RESIDENT:DoPeJar"
runner = CliRunner()


def run(home: HRMHome, *args: str) -> Any:
    result = runner.invoke(app, [*args, "--home", str(home.root)])
    return result


def test_create_list_inspect_teardown(home: HRMHome) -> None:
    created = run(home, "create", DPJ, "--json")
    assert created.exit_code == 0, created.output
    assert json.loads(created.stdout)["templates"] == ["ATT-DEFAULT-001", "ATT-DPJ-001"]
    with HRM.open(home, DPJ, "offline") as stack:
        stack.turn("Let us work on the closet design")
    listed = json.loads(run(home, "list", "--json").stdout)
    [row] = [r for r in listed if r["agent_class"] == DPJ]
    assert row["ledgers"]["ho2m"]["records"] > 0 and row["last_event"] == "stack_teardown"
    inspected = json.loads(run(home, "inspect", DPJ, "--json").stdout)
    assert inspected["templates"] == ["ATT-DEFAULT-001", "ATT-DPJ-001"]
    assert inspected["last_session"].startswith("SES-")
    assert 0 < inspected["tokens_used"] <= inspected["budget_ceiling"]
    assert [p["title"] for p in inspected["open_problems"]] == ["Closet design"]
    size = home.decision_ledger(DPJ).stat().st_size
    torn = run(home, "teardown", DPJ)
    assert torn.exit_code == 0 and "kept" in torn.stdout
    assert home.decision_ledger(DPJ).stat().st_size == size


def test_inspect_refuses_crafted_classes_and_unknown_stacks(home: HRMHome) -> None:
    crafted = run(home, "inspect", "RESIDENT:../ADMIN")
    assert crafted.exit_code == 4
    with Ledger(home.governance_ledger) as gov:
        assert [r.kind for r in gov.records()][-1] == "visibility_denied"
    assert run(home, "inspect", "RESIDENT:Nobody").exit_code != 0
    assert run(home, "create", "RESIDENT:a/b").exit_code != 0


def test_anchors_add_list_retire(home: HRMHome) -> None:
    added = json.loads(run(home, "anchor", "add", "dance recital Friday", "--as", DPJ,
                           "--must-mention", "--json").stdout)
    listed = json.loads(run(home, "anchor", "list", "--as", DPJ, "--json").stdout)
    assert [a["id"] for a in listed] == [added["id"]] and listed[0]["must_mention"]
    assert json.loads(run(home, "anchor", "list", "--as", "ADMIN", "--json").stdout) == []
    assert run(home, "anchor", "retire", added["id"]).exit_code == 0
    assert json.loads(run(home, "anchor", "list", "--json").stdout) == []
    assert run(home, "anchor", "retire", "anc_missing").exit_code != 0


def test_every_command_has_help(home: HRMHome) -> None:
    for args in (["--help"], ["create", "-h"], ["inspect", "-h"], ["teardown", "-h"],
                 ["list", "-h"], ["anchor", "--help"], ["anchor", "add", "-h"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0 and "Usage" in result.stdout
