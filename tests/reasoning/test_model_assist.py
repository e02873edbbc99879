"""Model-assisted governance's parts (D265): calls capped in tokens and time, the second
opinion asked only when the cue tables are unsure and only between their two best classes,
and nothing wired for a model that is not capable."""

from __future__ import annotations

import json

import pytest

from hrm.altitude.governor import AltitudeGovernor
from hrm.config import HRMConfig, LLMConfig, PolicySurface
from hrm.governance.signals import SignalEngine
from hrm.llm import LLMCallConfig, Message
from hrm.reasoning.assist import (
    ASSIST_MAX_TOKENS,
    ASSIST_TIMEOUT_MS,
    BoundedAdapter,
    ClassSecondOpinion,
    wire_model_assistance,
)
from hrm.reasoning.requests import load_request_classifier
from hrm.reasoning.router import ReasoningRouter
from hrm.testing import ScriptedAdapter


def _opinion(reply: str) -> tuple[ClassSecondOpinion, ScriptedAdapter]:
    model = ScriptedAdapter([reply], repeat=True)
    classifier = load_request_classifier()
    return ClassSecondOpinion(BoundedAdapter(model), classifier.thresholds), model


@pytest.mark.parametrize(
    ("asked", "expected"),
    [
        (None, (ASSIST_MAX_TOKENS, ASSIST_TIMEOUT_MS)),
        (LLMCallConfig(max_tokens=5000, timeout_ms=600_000), (ASSIST_MAX_TOKENS, ASSIST_TIMEOUT_MS)),
        (LLMCallConfig(max_tokens=10, timeout_ms=100), (10, 100)),
    ],
)
def test_every_call_is_capped(asked: LLMCallConfig | None, expected: tuple[int, int]) -> None:
    model = ScriptedAdapter(["{}"])
    bounded = BoundedAdapter(model)
    bounded.chat([Message(role="user", content="x")], "s", asked)
    config = model.calls[0].config
    assert config is not None and (config.max_tokens, config.timeout_ms) == expected
    assert bounded.calls == 1


def test_a_sure_reading_is_not_asked_about() -> None:
    opinion, model = _opinion('{"class": "conflict"}')
    text = "What's the capital of Australia?"
    reading = opinion(text, load_request_classifier().classify(text))
    assert model.calls == [] and reading.request_class == "simple"


def test_high_stakes_and_conflict_are_never_asked_about() -> None:
    opinion, model = _opinion('{"class": "simple"}')
    text = "Push the schema change to prod tonight."
    reading = opinion(text, load_request_classifier().classify(text))
    assert model.calls == [] and reading.request_class == "high_stakes"


def test_an_unsure_reading_takes_the_model_s_choice_between_the_two_best() -> None:
    text = "What options do we have here?"
    reading = load_request_classifier().classify(text)
    winner, runner = _opinion("{}")[0].choices(reading)
    opinion, model = _opinion(json.dumps({"class": runner}))
    result = opinion(text, reading)
    assert len(model.calls) == 1
    assert result.request_class == runner and result.second_opinion == runner
    assert {winner, runner} <= {"simple", "needs_perspectives", "multi_step"}


def test_an_answer_outside_the_choices_changes_nothing() -> None:
    text = "What options do we have here?"
    reading = load_request_classifier().classify(text)
    before = reading.request_class
    opinion, model = _opinion('{"class": "high_stakes"}')
    result = opinion(text, reading)
    assert len(model.calls) == 1  # asked; the answer is refused, the tables' class stands
    assert result.request_class == before and result.second_opinion is None


@pytest.mark.parametrize(
    ("provider", "capable", "wired"),
    [("local", "auto", False), ("offline", "auto", False), ("local", "off", False),
     ("local", "on", True), ("anthropic", "auto", True)],
)
def test_only_a_capable_model_is_wired(provider: str, capable: str, wired: bool) -> None:
    config = HRMConfig(llm=LLMConfig(provider=provider, capable=capable))  # type: ignore[arg-type]
    altitude, router = AltitudeGovernor(config), ReasoningRouter()
    engine = SignalEngine(PolicySurface())
    assist = wire_model_assistance(
        config, ScriptedAdapter(), altitude=altitude, signals=engine, router=router
    )
    assert (assist is not None) is wired
    assert (altitude.llm is not None, engine.llm is not None) == (wired, wired)
    assert (router.second_opinion is not None) is wired
