"""Whether the configured model should start a plan at all (issue 33 §5, D284).

A plan is several model calls that each must follow a structured brief; SmolLM2-135M took 17
minutes over four steps of invented commands, and its own checks passed them. So a model below
structured work (`hrm.llm.capability`, one answer for the whole system, D233) is told so before
the first call, with what to do instead. The offline model is the exception: it answers from
templates in microseconds and says it is offline, so a plan on it costs nothing and shows the
engine's shape (demos, tests); its checks are still never reported as passes (D283).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hrm.llm.capability import ModelCapability

__all__ = ["plan_refusal"]


def plan_refusal(capability: ModelCapability) -> str | None:
    """Why a plan should not start on the model `capability` describes, or None if it may."""
    if capability.capable or capability.provider == "offline":
        return None
    return (
        f"The configured model ({capability.provider} / {capability.model}) cannot run a "
        f"multi-step plan: {capability.reason}. To run plans, {capability.hint}"
    )
