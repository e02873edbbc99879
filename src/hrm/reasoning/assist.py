"""Model-assisted governance, bounded (001 §2, §12.2; issue 33 item 2; D265).

When the configured model is capable (`hrm.llm.capability.model_capability`, the
``llm.capable`` setting, D233), three advisers consult it, each with one bounded structured
call through the stack's gateway (so each call is a work order in the execution ledger):

- the SignalEngine's adjustment of source quality and alignment (001 §12.2): every turn,
  clamped between the deterministic floor and the policy's ceiling;
- the altitude governor's refinement (001 §2.1): only when its markers are unsure;
- the request classifier's second opinion (`ClassSecondOpinion`): only when the cue tables are
  unsure (a class within `UNSURE_BAND` of its threshold), and the model may only choose
  between the cue tables' winner and their runner-up; a request the tables read as high-stakes
  or a conflict is never asked about, so a model can add caution but never take it away.

Bounded: every call goes through `BoundedAdapter`, which caps its output tokens and its wall
clock (``ASSIST_MAX_TOKENS``, ``ASSIST_TIMEOUT_MS``) whatever the caller asks. Never a hard
rule: the advisers change a signal inside its band, a level, or a class; Focus's stance,
gates and commitments then govern what follows, as without a model. Off for the small local
models and the offline one (they cannot follow a structured brief), so a turn on them makes
exactly the one call it did before.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hrm.llm import LLMCallConfig, Message, chat_json

if TYPE_CHECKING:
    from hrm.altitude.governor import AltitudeGovernor
    from hrm.config import HRMConfig
    from hrm.governance.signals import SignalEngine
    from hrm.llm.types import ILLMAdapter, LLMResponse, StreamChunk
    from hrm.reasoning.requests import RequestReading
    from hrm.reasoning.router import ReasoningRouter

__all__ = [
    "ASSIST_MAX_TOKENS",
    "ASSIST_TIMEOUT_MS",
    "CAUTIOUS",
    "UNSURE_BAND",
    "BoundedAdapter",
    "ClassSecondOpinion",
    "ModelAssist",
    "wire_model_assistance",
]

logger = logging.getLogger(__name__)

ASSIST_MAX_TOKENS = 120
"""Most output tokens one governance call may take: the answers are a few JSON fields."""
ASSIST_TIMEOUT_MS = 8_000
"""Most wall-clock milliseconds one attempt of a governance call may take."""
UNSURE_BAND = 0.3
"""The cue tables are unsure when some class scores within this of its threshold."""
CAUTIOUS = frozenset({"high_stakes", "conflict"})
"""Classes a second opinion may lead to but never away from."""

_CLASS_SYSTEM = (
    "You classify a request to an assistant by the kind of work it asks for. Answer with JSON "
    '{"class": NAME} where NAME is one of the choices given. simple: one answer suffices. '
    "multi_step: several things to produce, in order. needs_perspectives: options or "
    "viewpoints to weigh. high_stakes: costly or irreversible if wrong (production, money, "
    "security, legal, large systems). conflict: people or sources disagree."
)


class BoundedAdapter:
    """An adapter (normally the stack's gateway) whose every call is capped in output tokens
    and wall clock, and counted (`calls`)."""

    def __init__(
        self,
        inner: ILLMAdapter,
        *,
        max_tokens: int = ASSIST_MAX_TOKENS,
        timeout_ms: int = ASSIST_TIMEOUT_MS,
    ) -> None:
        self.inner = inner
        self.max_tokens = max_tokens
        self.timeout_ms = timeout_ms
        self.calls = 0

    @property
    def provider(self) -> str:
        return self.inner.provider

    @property
    def model(self) -> str:
        return self.inner.model

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def bound(self, config: LLMCallConfig | None) -> LLMCallConfig:
        """`config` with the output and time caps applied (the smaller always wins)."""
        config = config or LLMCallConfig()
        asked = config.max_tokens or self.max_tokens
        timeout = config.timeout_ms or self.timeout_ms
        return config.resolve(
            LLMCallConfig(
                max_tokens=min(asked, self.max_tokens), timeout_ms=min(timeout, self.timeout_ms)
            )
        )

    def chat(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> LLMResponse:
        self.calls += 1
        return self.inner.chat(messages, system, self.bound(config))

    def stream(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> Iterator[StreamChunk]:
        self.calls += 1
        return self.inner.stream(messages, system, self.bound(config))


class ClassSecondOpinion:
    """The model's second opinion on a request's class, asked only when the cue tables are
    unsure, choosing only between their winner and their runner-up."""

    def __init__(self, llm: ILLMAdapter, thresholds: dict[str, float]) -> None:
        self.llm = llm
        self.thresholds = thresholds

    def __call__(self, text: str, reading: RequestReading) -> RequestReading:
        if reading.request_class in CAUTIOUS or not text.strip():
            return reading
        if reading.margin(self.thresholds) > UNSURE_BAND:
            return reading
        choices = self.choices(reading)
        prompt = f"Choices: {', '.join(choices)}\nRequest: {text[:1500]}"
        answer = chat_json(
            self.llm,
            [Message(role="user", content=prompt)],
            _CLASS_SYSTEM,
            config=LLMCallConfig(temperature=0.0, max_tokens=40),
            validate=lambda v: isinstance(v, dict) and v.get("class") in choices,
            purpose="request_class",
        )
        if answer is None:
            return reading
        reading.second_opinion = str(answer["class"])
        reading.request_class = reading.second_opinion
        return reading

    def choices(self, reading: RequestReading) -> tuple[str, str]:
        """The cue tables' winner and the next most likely class (``simple`` at the end)."""
        ratios = sorted(
            (
                (reading.scores.get(name, 0.0) / threshold, name)
                for name, threshold in self.thresholds.items()
                if name != reading.request_class
            ),
            reverse=True,
        )
        runner = ratios[0][1] if ratios and ratios[0][0] >= 0.5 else "simple"
        if runner == reading.request_class:
            runner = ratios[0][1] if ratios else "simple"
        return reading.request_class, runner


@dataclass(frozen=True, slots=True)
class ModelAssist:
    """What was wired, for the caller and the tests: the bounded adapter shared by the three
    advisers (its `calls` count every governance call)."""

    adapter: BoundedAdapter
    reason: str


def wire_model_assistance(
    config: HRMConfig,
    llm: ILLMAdapter,
    *,
    altitude: AltitudeGovernor,
    signals: SignalEngine,
    router: ReasoningRouter,
) -> ModelAssist | None:
    """Give the three advisers the bounded model when `config`'s model is capable; None
    (and nothing changed) when it is not."""
    from hrm.llm.capability import model_capability

    capability = model_capability(config.llm)
    if not capability.capable:
        logger.debug("model-assisted governance off: %s", capability.reason)
        return None
    bounded = BoundedAdapter(llm)
    altitude.llm = bounded
    signals.llm = bounded
    router.second_opinion = ClassSecondOpinion(bounded, router.request_classifier.thresholds)
    return ModelAssist(bounded, capability.reason)
