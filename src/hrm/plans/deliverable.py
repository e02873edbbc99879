"""What a plan run produced, and what its own checks are worth (issue 33 §5).

A run's last complete step is often a check or the reconciling of checks ("Reconcile the
verifications into one verdict"), not the product: `hrm plan run` used to print that. The
*deliverable* is what the work steps made: the last ``respond`` step that writes the answer
(not one that only sums up checks); without one, every ``execute`` step's result in order (a
decomposition's parts: "the migration plan and the scripts" are two); without those, the last
step that gathered anything. The *verdict* is what the checks said, read from the
first word each was asked to begin with (``PASS`` / ``FAIL: …``), and it is only as good as the
model that checked: a model below structured work (`hrm.llm.capability`) checking what the same
model produced is reported ``unverified``, never ``passed`` (D283).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from hrm.altitude.types import PlanStepStatus

if TYPE_CHECKING:
    from hrm.altitude.types import Plan, PlanStep
    from hrm.llm.capability import ModelCapability

__all__ = [
    "CHECK_INSTRUCTION",
    "CheckReading",
    "Deliverable",
    "PlanReport",
    "Verdict",
    "plan_report",
    "read_check",
]

CHECK_INSTRUCTION = (
    "Check the earlier results against the goal. Begin your answer with PASS if they meet it, "
    "or with FAIL: and the problem if they do not; then explain briefly."
)
"""What a ``validate`` step is asked: its first word is the verdict `read_check` reads."""

VerdictStatus = Literal["passed", "failed", "unverified", "unchecked"]
CheckReading = Literal["pass", "fail", "unclear"]

_CHECK_WORD = re.compile(r"^\W*(?:verdict\W+)?(pass(?:ed)?|fail(?:ed)?)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True, kw_only=True)
class Deliverable:
    """The product of a run (module docstring)."""

    step_ids: tuple[str, ...]
    """The steps whose results make it up, in plan order."""
    content: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """What the run's checks are worth."""

    status: VerdictStatus
    reason: str
    """In words, e.g. "checked by the same model that produced it, …"."""
    checks: tuple[str, ...] = ()
    """The step ids of the checks the verdict reads."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanReport:
    """The deliverable with the verdict beside it: what a person is shown of a run."""

    deliverable: Deliverable | None
    verdict: Verdict

    def text(self) -> str:
        """The deliverable, then one line with the verdict."""
        verdict = f"Verification: {self.verdict.status} — {self.verdict.reason}"
        if self.deliverable is None:
            return "No step produced a result.\n" + verdict
        return f"{self.deliverable.content.strip()}\n\n{verdict}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for `hrm plan run --json` and the saved history."""
        deliverable = self.deliverable
        return {
            "deliverable": None if deliverable is None else {
                "step_ids": list(deliverable.step_ids),
                "content": deliverable.content,
            },
            "verdict": {
                "status": self.verdict.status,
                "reason": self.verdict.reason,
                "checks": list(self.verdict.checks),
            },
        }


def read_check(output: Any) -> CheckReading:
    """What a check's answer says by its first word: ``pass``, ``fail`` or ``unclear``."""
    text = output if isinstance(output, str) else ("" if output is None else str(output))
    found = _CHECK_WORD.match(text.strip())
    if found is None:
        return "unclear"
    return "pass" if found.group(1).lower().startswith("pass") else "fail"


def plan_report(plan: Plan, capability: ModelCapability) -> PlanReport:
    """The deliverable and verdict of a run's final `plan`, run on the model `capability`
    describes."""
    checks = _checks(plan)
    deliverable = _deliverable(plan, {s.step_id for s in checks})
    return PlanReport(deliverable=deliverable, verdict=_verdict(plan, checks, capability))


def _checks(plan: Plan) -> list[PlanStep]:
    """The ``validate`` steps, and the ``respond`` steps that only reconcile them."""
    validate = {s.order for s in plan.steps if s.action_type == "validate"}
    return [
        s for s in plan.steps
        if s.action_type == "validate"
        or (s.action_type == "respond" and s.dependencies and set(s.dependencies) <= validate)
    ]


def _deliverable(plan: Plan, checks: set[str]) -> Deliverable | None:
    done = [
        s for s in plan.steps
        if s.status == PlanStepStatus.COMPLETE and s.step_id not in checks and _text(s).strip()
    ]
    answers = [s for s in done if s.action_type == "respond"]
    if answers:
        return Deliverable(step_ids=(answers[-1].step_id,), content=_text(answers[-1]).strip())
    work = [s for s in done if s.action_type == "execute"]
    if len(work) == 1:
        return Deliverable(step_ids=(work[0].step_id,), content=_text(work[0]).strip())
    if work:
        parts = [f"{s.description}\n{_text(s).strip()}" for s in work]
        return Deliverable(step_ids=tuple(s.step_id for s in work), content="\n\n".join(parts))
    if done:
        return Deliverable(step_ids=(done[-1].step_id,), content=_text(done[-1]).strip())
    return None


def _text(step: PlanStep) -> str:
    output = step.output
    return output if isinstance(output, str) else ("" if output is None else str(output))


def _verdict(plan: Plan, checks: list[PlanStep], capability: ModelCapability) -> Verdict:
    validate = [s for s in checks if s.action_type == "validate"]
    ids = tuple(s.step_id for s in validate)
    ran = [s for s in validate if s.status == PlanStepStatus.COMPLETE]
    if not ran:
        return Verdict(status="unchecked", reason="no check ran on the result", checks=ids)
    if not capability.capable:
        # The same small model produced the work and checked it: its "PASS" is no evidence.
        return Verdict(
            status="unverified",
            reason=(
                f"checked only by the same model that produced it ({capability.provider} / "
                f"{capability.model}: {capability.reason})"
            ),
            checks=ids,
        )
    readings = [(s.step_id, read_check(s.output)) for s in ran]
    failed = [step_id for step_id, reading in readings if reading == "fail"]
    if failed:
        return Verdict(status="failed", reason="a check found a problem: " + ", ".join(failed),
                       checks=ids)
    unclear = [step_id for step_id, reading in readings if reading == "unclear"]
    if unclear or len(ran) < len(validate):
        missing = unclear + [s.step_id for s in validate if s not in ran]
        return Verdict(status="unverified",
                       reason="a check gave no verdict or did not run: " + ", ".join(missing),
                       checks=ids)
    return Verdict(status="passed", reason=f"{len(ran)} check(s) passed", checks=ids)
