"""StepExecutor: model, tool and agent steps; failures as results; one work order per step."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from tests.plans.conftest import FlakyModel

from hrm.altitude.types import PlanStep, PlanStepStatus
from hrm.errors import HRMError
from hrm.llm.offline import OFFLINE_MARKER, OfflineAdapter
from hrm.llm.types import LLMCallConfig, LLMResponse, Message
from hrm.plans.executor import StepExecutor, clarity_of
from hrm.plans.step_prep import DEPENDENCIES_KEY
from hrm.runtime.agents import AgentDefinition, AgentRegistry
from hrm.runtime.orchestrator import AgentRuntime
from hrm.runtime.tools import Tool, ToolRegistry
from hrm.testing import ScriptedAdapter


def _step(**fields: Any) -> PlanStep:
    values: dict[str, Any] = {"order": 2, "description": "Summarize the findings",
                              "action_type": "respond"}
    values.update(fields)
    return PlanStep(**values)


def test_a_model_step_sees_the_goal_and_its_dependencies() -> None:
    model = ScriptedAdapter(["the summary"])
    step = _step()
    step.incoming_context[DEPENDENCIES_KEY] = {
        "step_1": {"description": "Find facts", "output": "long output", "handoff": "key fact"}}
    records: list[tuple[str, dict[str, Any]]] = []
    result = StepExecutor(model, record=lambda k, d: records.append((k, d))).execute(
        step, goal="Explain the outage", plan_id="p1")
    assert result["status"] == "COMPLETE" and result["output"] == "the summary"
    assert result["handoff_to_next"] == "the summary" and result["clarity_state"] == "CLEAR"
    [call] = model.calls
    assert "step_1 (Find facts): key fact" in call.system
    assert "Explain the outage" in call.messages[-1].content
    assert call.config is not None and call.config.purpose == "plan_step:respond"
    [(kind, data)] = records
    assert kind == "work_order" and data["unit"] == "plan_step" and data["outcome"] == "ok"
    assert data["step_id"] == "step_2" and data["plan_id"] == "p1" and data["executor"] == "model"
    assert "the summary" not in str(data), "work orders never carry the output"


def test_the_offline_model_quotes_the_earlier_results() -> None:
    step = _step()
    step.incoming_context[DEPENDENCIES_KEY] = {
        "step_1": {"description": "Find facts", "output": "The findings: disk full at 3am",
                   "handoff": None}}
    result = StepExecutor(OfflineAdapter()).execute(step, goal="Summarize the findings")
    assert result["output"].startswith(OFFLINE_MARKER)
    assert "disk full at 3am" in result["output"]


def test_a_failing_model_fails_the_step_without_raising() -> None:
    records: list[dict[str, Any]] = []
    result = StepExecutor(FlakyModel({"Summarize": -1}),
                          record=lambda k, d: records.append(d)).execute(_step())
    assert result["status"] == "FAILED" and result["clarity_state"] == "BLOCKED"
    assert result["error_code"] == "provider_error" and result["output"].startswith("error:")
    assert records[0]["outcome"] == "error" and records[0]["error_code"] == "provider_error"


def test_a_broken_recorder_does_not_fail_the_step() -> None:
    def record(kind: str, data: dict[str, Any]) -> None:
        raise HRMError.validation_failed("ledger says no")

    assert StepExecutor(OfflineAdapter(), record=record).execute(_step())["status"] == "COMPLETE"


def _registry() -> ToolRegistry:
    def lookup(arguments: dict[str, Any]) -> dict[str, Any]:
        return {"hits": [arguments["query"].upper()]}

    def explode(arguments: dict[str, Any]) -> None:
        raise ZeroDivisionError("tool bug")

    return ToolRegistry([
        Tool(name="lookup", description="d", capability="search", handler=lookup,
             parameters={"query": "what"}),
        Tool(name="explode", description="d", capability="search", handler=explode),
    ])


def test_a_tool_step_calls_the_registry_with_its_capabilities() -> None:
    executor = StepExecutor(OfflineAdapter(), tool_registry=_registry())
    result = executor.execute(_step(tool="lookup", capabilities=["search"]))
    assert result["status"] == "COMPLETE" and result["executor"] == "tool"
    assert result["output"] == {"hits": ["SUMMARIZE THE FINDINGS"]}
    step = _step(tool="lookup", capabilities=["search"])
    step.incoming_context["tool_arguments"] = {"query": "given"}
    assert executor.execute(step)["output"] == {"hits": ["GIVEN"]}


def test_a_tool_outside_the_step_capabilities_is_refused() -> None:
    result = StepExecutor(OfflineAdapter(), tool_registry=_registry()).execute(
        _step(tool="lookup", capabilities=["read_files"]))
    assert result["status"] == "FAILED" and result["error_code"] == "gate_denied"


def test_a_raising_tool_or_missing_registry_fails_the_step() -> None:
    executor = StepExecutor(OfflineAdapter(), tool_registry=_registry())
    crashed = executor.execute(_step(tool="explode", capabilities=["search"]))
    assert crashed["status"] == "FAILED" and "ZeroDivisionError" in crashed["error"]
    missing = StepExecutor(OfflineAdapter()).execute(_step(tool="lookup"))
    assert missing["status"] == "FAILED" and missing["error_code"] == "not_found"


def _runtime(reply: str | HRMError) -> AgentRuntime:
    registry = AgentRegistry([AgentDefinition(id="helper", role="helps",
                                              system_prompt="You help.")])
    adapter = ScriptedAdapter([reply])
    return AgentRuntime(registry, lambda definition: adapter, max_retries=0)


def test_an_agent_step_runs_a_one_agent_bundle() -> None:
    executor = StepExecutor(OfflineAdapter(), orchestrator=_runtime("Proposal: use a cache"))
    result = executor.execute(_step(agent="helper"), goal="speed it up", plan_id="p")
    assert result["status"] == "COMPLETE" and result["executor"] == "agent"
    assert "use a cache" in str(result["output"])


def test_an_agent_that_gives_no_result_fails_the_step() -> None:
    failing = _runtime(HRMError.provider_error(400, "bad request"))
    result = StepExecutor(OfflineAdapter(), orchestrator=failing).execute(_step(agent="helper"))
    assert result["status"] == "FAILED" and result["error_code"] == "strategy_failed"
    unknown = StepExecutor(OfflineAdapter(), orchestrator=_runtime("x")).execute(
        _step(agent="nobody"))
    assert unknown["status"] == "FAILED" and unknown["error_code"] == "not_found"
    assert StepExecutor(OfflineAdapter()).execute(_step(agent="helper"))["status"] == "FAILED"


class BarrierModel:
    """Answers only once ``parties`` calls are inside at the same time."""

    def __init__(self, parties: int) -> None:
        self.barrier = threading.Barrier(parties)
        self.inner = OfflineAdapter()

    provider = "offline"
    model = "barrier"

    def count_tokens(self, text: str) -> int:
        return len(text)

    def chat(self, messages: list[Message], system: str,
             config: LLMCallConfig | None = None) -> LLMResponse:
        self.barrier.wait(timeout=10)
        return self.inner.chat(messages, system, config)

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("not used")


def test_a_batch_runs_independent_steps_at_the_same_time() -> None:
    steps = [_step(order=n, description=f"Part {n}") for n in (1, 2, 3)]
    with StepExecutor(BarrierModel(3), max_parallel=3) as executor:  # type: ignore[arg-type]
        results = executor.execute_batch(steps)
    assert [r["step_id"] for r in results] == ["step_1", "step_2", "step_3"]
    assert all(r["status"] == "COMPLETE" for r in results)


def test_events_report_start_and_finish_and_a_bad_listener_is_ignored() -> None:
    events: list[str] = []
    executor = StepExecutor(OfflineAdapter())
    executor.on_event = lambda kind, data: events.append(f"{kind}:{data['step_id']}")
    executor.execute(_step())
    assert events == ["step_started:step_2", "step_finished:step_2"]

    def bad(kind: str, data: dict[str, Any]) -> None:
        raise RuntimeError("display broke")

    executor.on_event = bad
    assert executor.execute(_step())["status"] == "COMPLETE"


@pytest.mark.parametrize(("status", "output", "clarity"), [
    (PlanStepStatus.COMPLETE, "a real answer", "CLEAR"),
    (PlanStepStatus.COMPLETE, " ", "PARTIALLY_CLEAR"),
    (PlanStepStatus.COMPLETE, None, "PARTIALLY_CLEAR"),
    (PlanStepStatus.FAILED, "error: x", "BLOCKED"),
])
def test_clarity_of(status: PlanStepStatus, output: Any, clarity: str) -> None:
    assert clarity_of(status, output) == clarity
