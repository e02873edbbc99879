"""A small model's window holds the prompt, the input and the answer: the context gives way."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.config import load_config
from hrm.home import HRMHome
from hrm.llm.local import is_local_model_installed
from hrm.llm.types import estimate_tokens
from hrm.pipeline import HRM
from hrm.stacks.attention import CONTEXT_MARGIN, INPUT_MARGIN, fitted_budget, input_chars

LOG = "\n".join(
    f"2026-11-25T03:{i % 60:02d}:11Z ERROR billing.worker[{1000 + i}] retry {i} failed: "
    "connection reset by peer (db=billing-primary:5432)"
    for i in range(40)
)


def _stack(window: int | None, max_tokens: int = 1024) -> Any:
    adapter = SimpleNamespace(context_window=window) if window else SimpleNamespace()
    return SimpleNamespace(
        gateway=SimpleNamespace(adapter=adapter),
        config=SimpleNamespace(llm=SimpleNamespace(max_tokens=max_tokens)),
    )


def test_a_hosted_model_keeps_the_configured_budget_and_the_whole_input() -> None:
    assert fitted_budget(_stack(None), 2000, LOG) == 2000
    assert input_chars(_stack(None), LOG) is None


def test_a_dense_log_is_clipped_by_its_tokens_not_its_characters() -> None:
    shown = input_chars(_stack(2048), LOG)
    assert shown is not None and shown < 2048 * 2  # four characters a token would overflow
    assert estimate_tokens(LOG[:shown]) * INPUT_MARGIN <= 2048 / 2 + 1
    assert input_chars(_stack(2048), "How do I rename a branch?") == len("How do I rename a branch?")


@given(
    window=st.integers(256, 32_768),
    max_tokens=st.integers(1, 4096),
    budget=st.integers(64, 8000),
    text=st.text(max_size=20_000),
)
def test_context_input_and_answer_fit_the_window(
    window: int, max_tokens: int, budget: int, text: str
) -> None:
    stack = _stack(window, max_tokens)
    fitted = fitted_budget(stack, budget, text)
    assert 64 <= fitted <= budget
    shown = input_chars(stack, text)
    assert shown is not None
    question = estimate_tokens(text[:shown]) * INPUT_MARGIN
    assert question <= window / 2 or shown == 0
    if fitted > 64:  # above the floor, everything counted fits
        answer = min(max_tokens, window // 4)
        assert fitted * CONTEXT_MARGIN + question + answer <= window + 1


@pytest.mark.local_model
@pytest.mark.slow
@pytest.mark.skipif(not is_local_model_installed(), reason="the local model is not installed")
def test_a_pasted_log_on_the_local_model_is_answered_not_refused(tmp_path: Path) -> None:
    # Before the context was fitted to the model's window this turn failed: "request (… tokens)
    # exceeds the available context size".
    home = HRMHome.resolve(tmp_path / "home")
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I prefer concise answers with code examples")
        h.turn("Let's fix the billing worker retries")
    config = load_config(home).config
    config.llm.max_tokens = 32
    config.llm.n_ctx = 1024  # half the default window: the same overflow, half the decoding
    # This test is about the window, not speed, and must hold on a busy 2-core machine, where a
    # call overran the product's 60 s: a 10-minute bound, no retry of a timeout, and one decoding
    # thread (llama.cpp's threads wait for each other by spinning, which contended cores punish).
    config.llm.timeout_ms = 600_000
    config.llm.max_retries = 0
    config.llm.n_threads = 1
    with HRM.open(home, "ADMIN", "local", config=config) as h:
        result = h.turn("Why does the billing worker keep failing? Here is the log:\n" + LOG[:2400])
    assert result.decision.execution["success"] is True, result.response
    state = result.decision.attention_state
    assert state["budget_tokens"] < 2000 and state["used_tokens"] <= state["budget_tokens"]
    assert "the model saw" in result.response  # the clip is said, not silent
