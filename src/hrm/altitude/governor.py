"""The AltitudeGovernor (001 §2.1): which level an input lives at, what each level may do.

Classification is deterministic first: a table of marker phrases per level, matched on a bounded
window of the text, so it costs microseconds on any input. An optional model may refine an
unsure classification; its answer is bounded (001 §12.2) and validated, and a malformed answer
leaves the deterministic result in place with a signal saying so.

Marker table (`LEVEL_MARKERS`):

=====  ============================================================================
level  markers
=====  ============================================================================
L4     identity, values, principles, mission, purpose, ethics, beliefs, "who we
       are", "what matters", "what do we stand for"
L3     strategy, approach, plan, architecture, roadmap, direction, trade-off,
       design, priorities, long-term, "should we", "should i"
L2     "how to", "how do i", implement, fix, steps, configure, install, set up,
       build, debug, refactor, deploy, write code, migrate
L1     now, quick, status, currently, "at the moment", "so far"; an opening
       greeting or acknowledgement (hi, hello, thanks, ok, yes, no); a short
       acknowledgement alone ("thanks", "got it", "sounds good") is L1 at 0.9
=====  ============================================================================

The level with most hits wins; a tie goes to the higher level (a strategic question asked in
operational words is still strategic). No hits: the configured default level, confidence 0.4.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from hrm.altitude.types import AltitudeClassification, TransitionEvent
from hrm.errors import HRMError
from hrm.types import AltitudeLevel, Clock, Stance, system_clock

if TYPE_CHECKING:
    from hrm.llm.types import ILLMAdapter
    from hrm.types import TurnInput

__all__ = [
    "ACTIONS_BY_LEVEL",
    "L4_ACTIONS",
    "LEVEL_MARKERS",
    "AltitudeGovernor",
    "AltitudeSettings",
]

logger = logging.getLogger(__name__)

WINDOW_CHARS = 4096
"""Markers are matched on the first and last WINDOW_CHARS characters: bounded time on any input."""

_REFINE_BELOW = 0.6
"""A model is consulted only when the deterministic confidence is below this."""
_LLM_FLOOR, _LLM_CEILING, _LLM_WEIGHT = 0.1, 0.9, 0.6  # 001 §12.1 LLM signal bounds

LEVEL_MARKERS: dict[AltitudeLevel, re.Pattern[str]] = {
    AltitudeLevel.L4_IDENTITY: re.compile(
        r"\b(identity|values?|principles?|mission|purpose|ethics|ethical|beliefs?"
        r"|who (?:we|i) (?:are|am)|what matters|what do (?:we|i) stand for)\b"
    ),
    AltitudeLevel.L3_STRATEGY: re.compile(
        r"\b(strateg(?:y|ic|ies)|approach(?:es)?|plan(?:s|ning)?|architecture|roadmap"
        r"|direction|trade-?offs?|design|priorities|long[- ]term|should (?:we|i))\b"
    ),
    AltitudeLevel.L2_OPERATIONS: re.compile(
        r"\b(how (?:to|do (?:i|we)|can (?:i|we))|implement\w*|fix\w*|steps?|configur\w*"
        r"|install\w*|set ?up|build\w*|debug\w*|refactor\w*|deploy\w*|write (?:a|the|some)? ?code"
        r"|migrat\w*)\b"
    ),
    AltitudeLevel.L1_MOMENT: re.compile(
        r"\b(now|quick(?:ly)?|status|currently|at the moment|so far)\b"
        r"|^\W*(?:hi|hello|hey|thanks|thank you|ok(?:ay)?|yes|no)\b"
    ),
}
"""Marker phrases per level (matched on lowercased text); see the module docstring table."""

_ACK_ONLY = re.compile(
    r"^\W*(hi|hello|hey|thanks?|thank you|ok(?:ay)?|yes|no|yep|nope|got it|sounds good|sure"
    r"|cool|great|done|k)\W*$"
)

_STANCE_BY_LEVEL: dict[AltitudeLevel, Stance | None] = {
    AltitudeLevel.L4_IDENTITY: Stance.SENSEMAKING,
    AltitudeLevel.L3_STRATEGY: Stance.DISCOVERY,
    AltitudeLevel.L2_OPERATIONS: Stance.EXECUTION,
    AltitudeLevel.L1_MOMENT: None,
}
# L4 is reflection (explore, accurately); L3 explores options with momentum; L2 exploits a known
# approach; L1 is a moment inside whatever stance is current, so it suggests none.

_AGENTS_BY_LEVEL = {
    AltitudeLevel.L4_IDENTITY: False,  # values are governance, never delegated
    AltitudeLevel.L3_STRATEGY: True,
    AltitudeLevel.L2_OPERATIONS: True,
    AltitudeLevel.L1_MOMENT: False,  # a moment is too small to pay for agents
}

L4_ACTIONS = frozenset({"change_identity", "update_values", "amend_policy"})
"""Identity-level actions: only at L4, and only when ``altitude_allow_l4_actions`` is set."""

_L1 = frozenset({"respond", "ask", "wait", "acknowledge", "status"})
_L2 = _L1 | {"execute", "delegate", "research", "validate", "write", "tool_call"}
_L3 = _L2 | {"plan", "revise_plan", "set_strategy", "change_approach"}
ACTIONS_BY_LEVEL: dict[AltitudeLevel, frozenset[str]] = {
    AltitudeLevel.L1_MOMENT: _L1,
    AltitudeLevel.L2_OPERATIONS: _L2,
    AltitudeLevel.L3_STRATEGY: _L3,
    AltitudeLevel.L4_IDENTITY: _L3 | L4_ACTIONS,
}
"""Action types allowed per level: each level may do what the levels below it may, plus its own
(L2 executes, L3 sets strategy, L4 changes identity). Unknown action types are refused."""

_LEVEL_NAMES = {
    "l1": AltitudeLevel.L1_MOMENT,
    "l2": AltitudeLevel.L2_OPERATIONS,
    "l3": AltitudeLevel.L3_STRATEGY,
    "l4": AltitudeLevel.L4_IDENTITY,
    **{level.value: level for level in AltitudeLevel},
}

_CLASSIFY_SYSTEM = (
    "Classify the altitude of the user's message. L4 identity: who we are, values. "
    "L3 strategy: the approach. L2 operations: how to execute. L1 moment: what is happening "
    'now. Answer with JSON only: {"level": "L1"|"L2"|"L3"|"L4", "confidence": 0.0-1.0}'
)


class AltitudeSettings(Protocol):
    """What the governor reads from configuration (`hrm.config.HRMConfig` satisfies it)."""

    @property
    def altitude_default_level(self) -> AltitudeLevel: ...

    @property
    def altitude_allow_l4_actions(self) -> bool: ...


@dataclass(frozen=True)
class _Defaults:
    altitude_default_level: AltitudeLevel = AltitudeLevel.L2_OPERATIONS
    altitude_allow_l4_actions: bool = False


class AltitudeGovernor:
    """Classifies inputs into L1-L4, validates actions per level and records transitions.

    The governor holds the current level only for the caller's convenience: pass the persisted
    level in as ``current_level`` (or set the property) and persist `current_level` after a
    transition; nothing must survive in this object across processes. Not thread-safe for
    transitions; classification is pure and may run from any thread.
    """

    def __init__(
        self,
        config: AltitudeSettings | None = None,
        *,
        llm: ILLMAdapter | None = None,
        current_level: AltitudeLevel | None = None,
        clock: Clock = system_clock,
    ) -> None:
        self.config: AltitudeSettings = config if config is not None else _Defaults()
        self.llm = llm
        self._clock = clock
        self._level = current_level or self.config.altitude_default_level
        self.last_event: TransitionEvent | None = None
        """The event of the last successful `transition`, for the caller to append to its ledger."""

    @property
    def current_level(self) -> AltitudeLevel:
        """The level the stack is working at."""
        return self._level

    @current_level.setter
    def current_level(self, level: AltitudeLevel) -> None:
        self._level = AltitudeLevel(level)

    # ── classification ────────────────────────────────────────────────────

    def classify_input(self, input: TurnInput) -> AltitudeClassification:
        """The altitude of one input: deterministic markers, refined by a model when unsure.

        Total: any text (empty, huge, control characters) gets a classification.
        """
        result = self._classify_text(input.text)
        if self.llm is not None and result.confidence < _REFINE_BELOW and _is_real(self.llm):
            result = self._refine_with_model(input.text, result)
        return result

    def _classify_text(self, text: str) -> AltitudeClassification:
        lowered = _window(text).lower()
        stripped = lowered.strip()
        if not stripped:
            return self._result(AltitudeLevel.L1_MOMENT, 0.5, ["empty input"])
        if len(stripped) <= 40 and _ACK_ONLY.match(stripped):
            return self._result(AltitudeLevel.L1_MOMENT, 0.9, [f"L1:ack:{stripped[:20]}"])
        hits: dict[AltitudeLevel, list[str]] = {}
        for level, pattern in LEVEL_MARKERS.items():
            found = sorted({m.group(0) for m in pattern.finditer(lowered)})
            if found:
                hits[level] = found
        if not hits:
            level = self.config.altitude_default_level
            return self._result(level, 0.4, [f"default:{level.name}"])
        ranked = sorted(hits, key=lambda lv: (len(hits[lv]), lv.rank), reverse=True)
        top = ranked[0]
        runner_up = len(hits[ranked[1]]) if len(ranked) > 1 else 0
        confidence = 0.45 + 0.15 * len(hits[top]) - 0.1 * runner_up
        signals = [f"{lv.name.split('_')[0]}:{word}" for lv in ranked for word in hits[lv][:5]]
        return self._result(top, min(0.95, max(0.3, confidence)), signals)

    def _result(
        self, level: AltitudeLevel, confidence: float, signals: list[str]
    ) -> AltitudeClassification:
        return AltitudeClassification(
            level=level,
            confidence=round(confidence, 4),
            signals=signals,
            suggested_stance=_STANCE_BY_LEVEL[level],
            allows_agents=_AGENTS_BY_LEVEL[level],
        )

    def _refine_with_model(
        self, text: str, result: AltitudeClassification
    ) -> AltitudeClassification:
        answer = ask_model_json(self.llm, _CLASSIFY_SYSTEM, text[:WINDOW_CHARS], purpose="altitude")
        level = _LEVEL_NAMES.get(str(answer.get("level", "")).strip().lower()) if answer else None
        raw_confidence = answer.get("confidence") if answer else None
        if level is None or not isinstance(raw_confidence, int | float):
            result.signals.append("llm:malformed output, kept deterministic")
            return result
        model_confidence = min(_LLM_CEILING, max(_LLM_FLOOR, float(raw_confidence)))
        if level != result.level and model_confidence * _LLM_WEIGHT > result.confidence * (
            1 - _LLM_WEIGHT
        ):
            refined = self._result(level, model_confidence, result.signals)
            refined.signals.append(f"llm:refined {result.level.name}->{level.name}")
            return refined
        result.signals.append(f"llm:agreed or outweighed ({level.name})")
        return result

    # ── actions and transitions ───────────────────────────────────────────

    def validate_action(self, action: dict[str, Any], current_level: AltitudeLevel) -> bool:
        """Whether an action (``{"type": ...}`` or ``{"action_type": ...}``) fits the level.

        Fails closed: a missing or unknown type is refused; identity actions also need
        ``altitude_allow_l4_actions``.
        """
        kind = action.get("type", action.get("action_type"))
        if not isinstance(kind, str):
            return False
        if kind in L4_ACTIONS and not self.config.altitude_allow_l4_actions:
            return False
        return kind in ACTIONS_BY_LEVEL[AltitudeLevel(current_level)]

    def transition(self, to_level: AltitudeLevel, reason: str) -> bool:
        """Move to another level; True and `last_event` set when the level changed.

        A transition needs a reason (it is audited) and a different level; otherwise nothing
        changes and False is returned.
        """
        target = AltitudeLevel(to_level)
        if target == self._level or not reason.strip():
            return False
        self.last_event = TransitionEvent(
            from_level=self._level, to_level=target, reason=reason, at=self._clock()
        )
        logger.info("altitude transition %s -> %s: %s", self._level.name, target.name, reason)
        self._level = target
        return True


def _window(text: str) -> str:
    if len(text) <= 2 * WINDOW_CHARS:
        return text
    return text[:WINDOW_CHARS] + "\n" + text[-WINDOW_CHARS:]


def _is_real(llm: ILLMAdapter) -> bool:
    """The offline adapter answers canned text: consulting it would only add noise."""
    try:
        return str(llm.provider) != "offline"
    except HRMError:
        return False


def ask_model_json(
    llm: ILLMAdapter | None, system: str, prompt: str, *, purpose: str, max_tokens: int = 400
) -> dict[str, Any] | None:
    """One bounded JSON call to a model (`hrm.llm.chat_json`); None when it gives no object.

    Shared by the governor and the planner: provider failures and malformed answers both come
    back as None, and the caller keeps its deterministic result.
    """
    if llm is None:
        return None
    from hrm.llm import LLMCallConfig, Message, chat_json

    value = chat_json(
        llm,
        [Message(role="user", content=prompt)],
        system,
        config=LLMCallConfig(temperature=0.0, max_tokens=max_tokens),
        purpose=purpose,
    )
    return value if isinstance(value, dict) else None
