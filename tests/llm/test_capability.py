"""One answer to "can this model do structured work?" for the reading, governance and plans."""

from __future__ import annotations

import pytest

from hrm.config import LLMConfig
from hrm.llm.capability import model_capability


@pytest.mark.parametrize(
    ("provider", "base_url", "capable_setting", "capable", "reason_has"),
    [
        ("anthropic", None, "auto", True, "anthropic"),
        ("openai", None, "auto", True, "openai"),
        ("openai", "http://127.0.0.1:11434/v1", "auto", False, "127.0.0.1:11434"),
        ("openai", "http://127.0.0.1:11434/v1", "on", True, "llm.capable is on"),
        ("local", None, "auto", False, "too small"),
        ("offline", None, "auto", False, "templates"),
        ("anthropic", None, "off", False, "llm.capable is off"),
    ],
)
def test_capability_follows_the_provider_unless_the_person_says(
    provider: str, base_url: str | None, capable_setting: str, capable: bool, reason_has: str
) -> None:
    config = LLMConfig(provider=provider, base_url=base_url, capable=capable_setting)  # type: ignore[arg-type]
    found = model_capability(config)
    assert found.capable is capable
    assert reason_has in found.reason
    assert (found.hint == "") is capable


def test_a_not_capable_model_says_what_to_do() -> None:
    found = model_capability(LLMConfig(provider="offline"))
    assert "hrm models" in found.hint and "llm.capable: on" in found.hint
