"""The adapter contract's data types (001 §11.2)."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.errors import ErrorCode, HRMError
from hrm.llm.types import LLMCallConfig, LLMResponse, Message, estimate_tokens


def test_message_rejects_unknown_roles() -> None:
    assert Message(role="assistant", content="hi").role == "assistant"
    with pytest.raises(HRMError) as caught:
        Message(role="tool", content="x")
    assert caught.value.code is ErrorCode.VALIDATION_FAILED
    assert "tool" in caught.value.message


def test_call_config_resolve_overrides_only_what_is_set() -> None:
    base = LLMCallConfig(model="m", temperature=0.2, max_tokens=100)
    merged = base.resolve(LLMCallConfig(temperature=0.9, json_mode=True, purpose="x"))
    assert merged == LLMCallConfig(
        model="m", temperature=0.9, max_tokens=100, json_mode=True, purpose="x"
    )
    assert base.resolve(None) is base
    assert LLMCallConfig(json_mode=True).resolve(LLMCallConfig()).json_mode


def test_output_limit_is_the_smaller_cap() -> None:
    assert LLMCallConfig().output_limit is None
    assert LLMCallConfig(max_tokens=50).output_limit == 50
    assert LLMCallConfig(max_tokens=50, max_output_tokens=20).output_limit == 20


def test_cost_estimate_uses_per_thousand_prices() -> None:
    response = LLMResponse(
        content="",
        model="m",
        provider="p",
        input_tokens=2000,
        output_tokens=500,
        total_tokens=2500,
        finish_reason="stop",
        latency_ms=1,
    )
    assert response.cost_estimate({"input_per_1k": 3.0, "output_per_1k": 15.0}) == 13.5
    assert response.cost_estimate({}) == 0.0


def test_estimate_tokens_examples() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("one two three") == 4
    assert estimate_tokens("Hello, world!") == 5
    # Beyond ASCII: an em dash and an ellipsis are symbols, an accented letter is a letter.
    assert estimate_tokens("wait — what… a café") == 6 + 2


_ASCII_TEXT = st.text(alphabet=st.characters(max_codepoint=127), max_size=300)


@settings(max_examples=300)
@given(st.one_of(_ASCII_TEXT, st.text(max_size=300)))
def test_estimate_tokens_counts_what_the_regular_expressions_count(text: str) -> None:
    # ASCII text takes a byte-class path; it must agree with the definition: words are
    # runs of \w, symbols are characters neither \w nor \s.
    words = len(re.findall(r"\w+", text))
    symbols = len(re.findall(r"[^\w\s]", text))
    assert estimate_tokens(text) == math.ceil(words * 4 / 3) + symbols
    assert estimate_tokens(text * 3) == math.ceil(len(re.findall(r"\w+", text * 3)) * 4 / 3) + (
        3 * symbols
    )


@settings(max_examples=200)
@given(st.lists(st.one_of(_ASCII_TEXT, st.text(max_size=300)), min_size=2, max_size=12))
def test_a_long_text_counted_line_by_line_counts_what_the_whole_counts(lines: list[str]) -> None:
    # Past 512 characters a text with several lines is counted line by line, each line's
    # counts remembered; a later text sharing lines must still count exactly as the whole.
    text = "\n".join(lines) + "\n" + "x" * 520
    words = len(re.findall(r"\w+", text))
    symbols = len(re.findall(r"[^\w\s]", text))
    assert estimate_tokens(text) == math.ceil(words * 4 / 3) + symbols
    again = "\n".join(reversed(lines)) + "\n" + "y" * 520
    assert estimate_tokens(again) == math.ceil(
        len(re.findall(r"\w+", again)) * 4 / 3
    ) + len(re.findall(r"[^\w\s]", again))


@settings(max_examples=150)
@given(st.text(), st.text())
def test_estimate_tokens_is_subadditive_within_one(left: str, right: str) -> None:
    joined = estimate_tokens(left + " " + right)
    parts = estimate_tokens(left) + estimate_tokens(right)
    assert joined >= 0
    assert joined <= parts + 1
