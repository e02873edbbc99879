"""AltitudeGovernor: markers decide the level, a model may refine, actions and transitions."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hrm.altitude import AltitudeGovernor
from hrm.config import HRMConfig
from hrm.errors import HRMError
from hrm.types import AltitudeLevel, Stance

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "level"),
    [
        pytest.param("What are our core values and principles?", AltitudeLevel.L4_IDENTITY,
                     id="values"),
        pytest.param("Should we change the architecture approach?", AltitudeLevel.L3_STRATEGY,
                     id="should-we"),
        pytest.param("How do I fix the failing build step?", AltitudeLevel.L2_OPERATIONS,
                     id="how-to-fix"),
        pytest.param("What's the status right now?", AltitudeLevel.L1_MOMENT, id="status-now"),
        pytest.param("thanks!", AltitudeLevel.L1_MOMENT, id="ack"),
        pytest.param("", AltitudeLevel.L1_MOMENT, id="empty"),
    ],
)
def test_markers_pick_the_level(make_input, text: str, level: AltitudeLevel) -> None:  # type: ignore[no-untyped-def]
    result = AltitudeGovernor().classify_input(make_input(text))
    assert result.level == level
    assert result.signals


def test_no_marker_means_the_configured_default(make_input) -> None:  # type: ignore[no-untyped-def]
    config = HRMConfig(altitude_default_level=AltitudeLevel.L3_STRATEGY)
    result = AltitudeGovernor(config).classify_input(make_input("purple elephants dancing"))
    assert result.level == AltitudeLevel.L3_STRATEGY
    assert result.confidence == 0.4
    assert result.signals == ["default:L3_STRATEGY"]


def test_level_carries_stance_and_agent_permission(make_input) -> None:  # type: ignore[no-untyped-def]
    governor = AltitudeGovernor()
    strategic = governor.classify_input(make_input("Should we plan a new approach?"))
    assert strategic.suggested_stance == Stance.DISCOVERY and strategic.allows_agents
    moment = governor.classify_input(make_input("ok"))
    assert moment.suggested_stance is None and not moment.allows_agents
    identity = governor.classify_input(make_input("What do we stand for?"))
    assert identity.suggested_stance == Stance.SENSEMAKING and not identity.allows_agents


def test_model_refines_an_unsure_classification(make_input, scripted_model) -> None:  # type: ignore[no-untyped-def]
    model = scripted_model('{"level": "L4", "confidence": 0.95}')
    result = AltitudeGovernor(llm=model).classify_input(make_input("purple elephants"))
    assert result.level == AltitudeLevel.L4_IDENTITY
    assert result.confidence == 0.9  # bounded by the LLM ceiling (001 §12.1)
    assert "llm:refined L2_OPERATIONS->L4_IDENTITY" in result.signals
    assert model.calls and model.calls[0][2] is not None and model.calls[0][2].json_mode


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param("I think it is strategic", id="prose"),
        pytest.param('{"level": "L9", "confidence": 0.9}', id="unknown-level"),
        pytest.param('{"level": "L3"}', id="no-confidence"),
        pytest.param(HRMError.timeout("chat", 100), id="provider-timeout"),
    ],
)
def test_malformed_model_output_keeps_the_deterministic_result(
    make_input, scripted_model, answer: str | HRMError  # type: ignore[no-untyped-def]
) -> None:
    result = AltitudeGovernor(llm=scripted_model(answer)).classify_input(make_input("purple"))
    assert result.level == AltitudeLevel.L2_OPERATIONS
    assert "llm:malformed output, kept deterministic" in result.signals


def test_confident_or_offline_classifications_skip_the_model(make_input, scripted_model) -> None:  # type: ignore[no-untyped-def]
    model = scripted_model()
    AltitudeGovernor(llm=model).classify_input(make_input("thanks"))
    offline = scripted_model(provider="offline")
    AltitudeGovernor(llm=offline).classify_input(make_input("purple"))
    assert model.calls == [] and offline.calls == []


@pytest.mark.parametrize(
    ("action", "level", "allowed"),
    [
        ({"type": "respond"}, AltitudeLevel.L1_MOMENT, True),
        ({"type": "execute"}, AltitudeLevel.L1_MOMENT, False),
        ({"action_type": "execute"}, AltitudeLevel.L2_OPERATIONS, True),
        ({"type": "set_strategy"}, AltitudeLevel.L2_OPERATIONS, False),
        ({"type": "set_strategy"}, AltitudeLevel.L3_STRATEGY, True),
        ({"type": "update_values"}, AltitudeLevel.L4_IDENTITY, False),
        ({"type": "teleport"}, AltitudeLevel.L4_IDENTITY, False),
        ({}, AltitudeLevel.L2_OPERATIONS, False),
        ({"type": 3}, AltitudeLevel.L2_OPERATIONS, False),
    ],
)
def test_validate_action_per_level(action: dict[str, Any], level: AltitudeLevel, allowed: bool) -> (
    None
):
    assert AltitudeGovernor().validate_action(action, level) is allowed


def test_l4_actions_need_configuration_and_level() -> None:
    governor = AltitudeGovernor(HRMConfig(altitude_allow_l4_actions=True))
    assert governor.validate_action({"type": "change_identity"}, AltitudeLevel.L4_IDENTITY)
    assert not governor.validate_action({"type": "change_identity"}, AltitudeLevel.L3_STRATEGY)


def test_transition_records_an_event_and_the_level_is_caller_state() -> None:
    governor = AltitudeGovernor(current_level=AltitudeLevel.L2_OPERATIONS, clock=lambda: NOW)
    assert governor.transition(AltitudeLevel.L3_STRATEGY, "two failures: rethink")
    assert governor.current_level == AltitudeLevel.L3_STRATEGY
    event = governor.last_event
    assert event is not None and event.event_type == "altitude_transition" and event.at == NOW
    assert event.payload() == {"from": "operations", "to": "strategy", "reason": "two failures: rethink"}
    restored = AltitudeGovernor(current_level=governor.current_level)
    assert restored.current_level == AltitudeLevel.L3_STRATEGY
    restored.current_level = AltitudeLevel.L1_MOMENT
    assert restored.current_level == AltitudeLevel.L1_MOMENT


def test_transition_without_change_or_reason_fails() -> None:
    governor = AltitudeGovernor()
    assert not governor.transition(AltitudeLevel.L2_OPERATIONS, "same level")
    assert not governor.transition(AltitudeLevel.L3_STRATEGY, "  ")
    assert governor.last_event is None
    assert governor.current_level == AltitudeLevel.L2_OPERATIONS


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=2000))
def test_classification_is_total(make_input, text: str) -> None:  # type: ignore[no-untyped-def]
    result = AltitudeGovernor().classify_input(make_input(text))
    assert isinstance(result.level, AltitudeLevel)
    assert 0.0 <= result.confidence <= 1.0
    assert result.signals


def test_one_megabyte_input_is_classified(make_input) -> None:  # type: ignore[no-untyped-def]
    text = "should we " + "\x00filler " * 130_000 + " values"
    result = AltitudeGovernor().classify_input(make_input(text))
    assert result.level in (AltitudeLevel.L3_STRATEGY, AltitudeLevel.L4_IDENTITY)
