"""Asking for structure: extraction from messy output, validation, and None on failure."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.errors import ErrorCode, HRMError
from hrm.llm import LLMGateway, Message, OfflineAdapter, RetryPolicy, chat_json, extract_json

USER = [Message(role="user", content='Rate it. Return JSON: {"source_quality": X}')]


def test_extract_from_prose_and_fences() -> None:
    assert extract_json('Sure! {"a": 1} hope that helps') == {"a": 1}
    assert extract_json('```json\n{"a": [1, 2]}\n```') == {"a": [1, 2]}
    assert extract_json("Here: [1, 2, 3].") == [1, 2, 3]
    assert extract_json('{"broken": ') is None
    assert extract_json("no json at all") is None
    assert extract_json("42") is None
    assert extract_json('{bad} then {"ok": true}') == {"ok": True}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=10,
)


@settings(max_examples=100)
@given(
    value=st.dictionaries(st.text(max_size=8), json_values, max_size=5),
    prefix=st.text(alphabet="abc .!:\n", max_size=20),
    suffix=st.text(alphabet="abc .!:\n", max_size=20),
)
def test_extract_round_trips_an_object_wrapped_in_prose(
    value: dict[str, Any], prefix: str, suffix: str
) -> None:
    assert extract_json(prefix + json.dumps(value) + suffix) == value


def test_chat_json_with_the_offline_model() -> None:
    value = chat_json(OfflineAdapter(), USER, "You are a signal estimation engine.")
    assert value == {"source_quality": 0.5}


class Fixed:
    """An adapter that always answers the same text (or raises)."""

    provider = "fixed"
    model = "fixed-1"

    def __init__(self, answer: str | HRMError, finish: str = "stop") -> None:
        self.answer = answer
        self.finish = finish
        self.systems: list[str] = []

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def chat(self, messages: Any, system: str, config: Any = None) -> Any:
        from hrm.llm import LLMResponse

        self.systems.append(system)
        assert config.json_mode
        if isinstance(self.answer, HRMError):
            raise self.answer
        return LLMResponse(
            content=self.answer,
            model="fixed-1",
            provider="fixed",
            input_tokens=1,
            output_tokens=1,
            total_tokens=2,
            finish_reason=self.finish,
            latency_ms=0,
        )

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        return iter([])


def test_malformed_json_gives_none() -> None:
    adapter = Fixed('{"source_quality": 0.7,')
    assert chat_json(adapter, USER, "Rate.") is None
    assert adapter.systems == ["Rate.\n\nReturn only JSON."]


def test_schema_and_validator_reject_wrong_shapes() -> None:
    schema = {
        "type": "object",
        "required": ["source_quality"],
        "properties": {"source_quality": {"type": "number", "minimum": 0, "maximum": 1}},
    }
    assert chat_json(Fixed('{"source_quality": 0.7}'), USER, "s", schema=schema) == {
        "source_quality": 0.7
    }
    assert chat_json(Fixed('{"source_quality": 7}'), USER, "s", schema=schema) is None
    assert chat_json(Fixed("[1]"), USER, "s", validate=lambda v: isinstance(v, dict)) is None


def test_invalid_schema_is_a_caller_mistake() -> None:
    with pytest.raises(HRMError) as caught:
        chat_json(Fixed("{}"), USER, "s", schema={"type": "nonsense"})
    assert caught.value.code is ErrorCode.VALIDATION_FAILED


def test_filtered_answer_gives_none() -> None:
    assert chat_json(Fixed('{"a": 1}', finish="content_filter"), USER, "s") is None


@pytest.mark.parametrize(
    "error",
    [
        HRMError.timeout("chat", 10),
        HRMError.content_filtered("fixed"),
        HRMError.rate_limit(100),
        HRMError.budget_exhausted("ADMIN", 10, 10),
    ],
)
def test_provider_failures_give_none_and_are_recorded(error: HRMError) -> None:
    records: list[tuple[str, dict[str, Any]]] = []
    gateway = LLMGateway(
        Fixed(error),
        retry=RetryPolicy(max_retries=0),
        record=lambda kind, data: records.append((kind, data)),
        rng=random.Random(0),
    )
    assert chat_json(gateway, USER, "s", purpose="signal_estimation") is None
    [(kind, data)] = records
    assert kind == "work_order"
    assert data["outcome"] == "error"
    assert data["error_code"] == error.code.value
    assert data["purpose"] == "signal_estimation"


def test_caller_mistakes_propagate() -> None:
    with pytest.raises(HRMError) as caught:
        chat_json(Fixed(HRMError.validation_failed("bad")), USER, "s")
    assert caught.value.code is ErrorCode.VALIDATION_FAILED
