"""A damaged decision ledger stops the stack's turns; `hrm ledger quarantine` lets them resume."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from hrm.cli.app import app
from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.storage import verify_ledger

runner = CliRunner()


def test_turns_resume_after_the_damage_is_quarantined(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as stack:
        stack.turn("Let us fix the parser bug in the tokenizer")
        stack.turn("The tokenizer drops the last character")
        problem = stack.focus.problem_registry.get_active()
    assert problem is not None
    ledger = home.decision_ledger("ADMIN")
    lines = ledger.read_bytes().splitlines(keepends=True)
    damaged = next(i for i, line in enumerate(lines) if b'"kind":"turn"' in line)
    lines[damaged] = lines[damaged].replace(b"parser", b"parsed")
    ledger.write_bytes(b"".join(lines))

    with pytest.raises(HRMError) as refused, HRM.open(home, "ADMIN", "offline") as stack:
        stack.turn("anything else?")
    assert refused.value.code is ErrorCode.LEDGER_CORRUPT

    done = runner.invoke(app, ["ledger", "quarantine", "--home", str(home.root)])
    assert done.exit_code == 0, done.output
    assert "quarantined  HO2/ledger/ADMIN/workorder.jsonl" in done.stdout

    with HRM.open(home, "ADMIN", "offline") as stack:
        result = stack.turn("The tokenizer drops the last character again")
        # What lives outside the cut ledger (the problem registry) is still there.
        assert result.decision.arbitration is not None
        assert stack.focus.problem_registry.get(problem.id) is not None
    assert verify_ledger(ledger).ok
    verified = runner.invoke(app, ["ledger", "verify", "--home", str(home.root)])
    assert verified.exit_code == 0, verified.output
