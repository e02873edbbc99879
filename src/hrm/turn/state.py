"""What a stack carries from turn to turn, and how turn text is cleaned and clipped.

The turn state is persisted as the ``state`` of each ``turn`` record in the stack's decision
ledger (`pipeline.HRM` reads the last one back); the recent exchanges are rebuilt from the turn
records themselves. Kept apart from the turn loop so the record format has one home.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from hrm.errors import HRMError
from hrm.types import AltitudeLevel

__all__ = [
    "CONVERSATION_ACTIONS",
    "MAX_STORED_TEXT",
    "NOTES_START",
    "NOT_CONVERSATION_KINDS",
    "RECALLED_TURNS",
    "RECALL_REACH",
    "RECENT_CLIP",
    "RECENT_TURNS",
    "STATE_TAIL",
    "TurnState",
    "clean_text",
    "clip",
    "exchange_of",
    "recent_exchange",
    "recent_from",
    "shown",
    "topic_of",
    "topic_of_turn",
]

RECENT_TURNS = 12
"""Turns of history kept in `HRMContext` and offered to context assembly. The model is shown
the last few on the problem at hand (D80), so the window reaches back past an interruption:
after a few turns on an outage, the turns on the offsite before it are still there."""
RECENT_CLIP = 1500
"""Characters of each recent input and answer kept for the context (the last exchange is shown
this long: a follow-up is about it; `MAX_STORED_TEXT` bounds what a new process reads back)."""
STATE_TAIL = 200
"""Records read back to find the last ``turn`` record and the recent exchanges (a turn writes
about eight, twelve at most in a mixed conversation: twelve turns took 105 records at most)."""

RECALL_REACH = 1 << 20
"""Bytes of the decision ledger's end read back for the exchanges on a problem the recent ones
do not reach (D86): a turn writes 5-15 KB there, so some 70-200 turns."""
RECALLED_TURNS = 4
"""Exchanges on that problem read back: as many as the default template shows (D86)."""

MAX_STORED_TEXT = 2000
"""Characters of input or output kept in a ledger record (the full length and a hash are kept)."""

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class TurnState:
    """What the stack carries from turn to turn, persisted in each ``turn`` record."""

    turn_number: int = 0
    session_id: str = ""
    last_at: str | None = None
    """When the session last saw activity (its last turn, or its start): a session idle longer
    than `SESSION_IDLE_MINUTES` is over."""
    altitude: str = AltitudeLevel.L2_OPERATIONS.value
    failure_streak: int = 0
    last_signal: dict[str, Any] | None = None
    last_routing: dict[str, Any] | None = None
    pending_preference: dict[str, Any] | None = None
    pending_switch: dict[str, Any] | None = None
    """Arbitration's unanswered "switch or queue?" (`hrm.turn.switch.held_question`)."""
    last_topic: dict[str, Any] | None = None
    """The problem the last input went to, and its keywords (`HRMContext.last_topic`)."""
    earlier_topic: dict[str, Any] | None = None
    """The problem the conversation was on before the last topic (`HRMContext.earlier_topic`)."""
    last_kept: dict[str, Any] | None = None
    """The canon key the last turn that kept one wrote, and its turn: "forget that" (D77)."""
    pending_intent: dict[str, Any] | None = None
    """A request read in the middle confidence band and asked about ("Do you want me to forget
    ‘I prefer Celsius’?"): its kind and slots, settled by the next yes or no (D150)."""
    session_tokens_base: int | None = None
    """The stack's lifetime token count when the session began: the session's budget is the
    ceiling minus what it spent since (D23). ``None`` in records written before 2026-11-23."""
    recent: list[dict[str, str]] = field(default_factory=list)
    """The last `RECENT_TURNS` exchanges, clipped for the context. Not persisted in the state:
    each ``turn`` record already holds its input and response, so recovery rebuilds them
    (`recent_from`); copying them into every record tripled its size."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn_number": self.turn_number,
            "session_id": self.session_id,
            "last_at": self.last_at,
            "altitude": self.altitude,
            "failure_streak": self.failure_streak,
            "last_signal": self.last_signal,
            "last_routing": self.last_routing,
            "pending_preference": self.pending_preference,
            "pending_switch": self.pending_switch,
            "last_topic": self.last_topic,
            "earlier_topic": self.earlier_topic,
            "last_kept": self.last_kept,
            "session_tokens_base": self.session_tokens_base,
            # Written only while a question waits, so that other turns' records are as before.
            **({"pending_intent": self.pending_intent} if self.pending_intent else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TurnState:
        state = cls()
        # "recent": records written before 2026-11; "pending_intent" only while one waits.
        for key in (*state.to_dict(), "recent", "pending_intent"):
            if key in data:
                setattr(state, key, data[key])
        return state


NOTES_START = "\n\n• "
"""What separates an answer from the notes a turn adds after it (one `• ` line each)."""

CONVERSATION_ACTIONS = frozenset({"respond", "execute", "delegate", "ask"})
"""Turn actions whose exchange the model is shown as the conversation: its own answers, and the
clarifying question (``ask``) that the person's next input answers. The others are hrm's own
procedure — arbitration's "switch or queue?" (whose answer hrm acts on, D43), a wait, a queue,
an interrupted or degraded turn: a model shown them as its earlier answers copies them
(SmolLM2 answered an emergency with the last arbitration question)."""

NOT_CONVERSATION_KINDS = frozenset({"preference", "memory"})
"""Exchanges the model is not shown, whatever their action: a message that only stated a
preference is canon from then on, and the canon is in every prompt (D50). Shown its own
acknowledgement ("From now on, keep answers under 10 lines." echoed back), SmolLM2 gave that
same line as its answer to every later question."""


def shown(exchange: dict[str, Any]) -> bool:
    """Is `exchange` one the model is shown as conversation: its own answer or question
    (`CONVERSATION_ACTIONS`), not a message that only stated a preference or asked hrm to keep
    a fact (`NOT_CONVERSATION_KINDS`)?"""
    return (
        exchange.get("action", "respond") in CONVERSATION_ACTIONS
        and exchange.get("kind") not in NOT_CONVERSATION_KINDS
    )


def recent_exchange(
    text: str,
    text_length: int,
    response: str,
    response_length: int,
    action: str = "respond",
    kind: str | None = None,
    problem: str | None = None,
) -> dict[str, str]:
    """One exchange as the context shows it, from full or stored (clipped) texts alike.

    The answer is kept without the notes the turn added after it: they are hrm's, not the
    model's, and a model shown them as its own writes notes of its own. `kind` says what the
    exchange was about when it was not the work at hand (``"preference"``: see
    `NOT_CONVERSATION_KINDS`); `problem`, which problem it was about (D80).
    """
    answer = response.partition(NOTES_START)[0]
    length = response_length if answer == response else len(answer)
    exchange = {
        "input": _clip_known(text, text_length, RECENT_CLIP),
        "output": _clip_known(answer, length, RECENT_CLIP),
        "action": action,
    }
    if kind is not None:
        exchange["kind"] = kind
    if problem is not None:
        exchange["problem"] = problem
    return exchange


def _clip_known(text: str, length: int, limit: int) -> str:
    """`clip` of a text whose full length is known (`text` may be a longer clip of it)."""
    return text if length <= limit else text[:limit] + f"… [{length - limit} more chars]"


def recent_from(records: list[Any]) -> list[dict[str, str]]:
    """The last exchanges, rebuilt from ``turn`` records (oldest first)."""
    return [exchange_of(r.data) for r in records if r.kind == "turn"][-RECENT_TURNS:]


def exchange_of(data: dict[str, Any]) -> dict[str, str]:
    """The exchange a stored ``turn`` record holds, as `recent_exchange` makes it."""
    text, response = str(data.get("input", "")), str(data.get("response", ""))
    kind = data.get("kind")
    return recent_exchange(
        text, int(data.get("input_length", len(text))),
        response, int(data.get("response_length", len(response))),
        str(data.get("action") or "respond"),
        kind if isinstance(kind, str) else None,
        topic_of_turn(data),
    )


def topic_of_turn(data: dict[str, Any]) -> str | None:
    """The problem a stored ``turn`` record's exchange was about. A record names its topic only
    for an exchange the model is shown (D86); for the others, and in records from before D80,
    the state's last topic stands in (the same problem for every turn with words of its own;
    the others are never shown, so their topic is never read)."""
    topic = data.get("topic")
    return topic if isinstance(topic, str) else topic_of(data.get("state"))


def topic_of(state: Any) -> str | None:
    """The problem a stored turn state's last topic names, if any."""
    topic = state.get("last_topic") if isinstance(state, dict) else None
    problem = topic.get("problem_id") if isinstance(topic, dict) else None
    return problem if isinstance(problem, str) and problem else None


def clean_text(text: str) -> str:
    """Drop control characters (keep newlines and tabs) and normalise Unicode."""
    if not isinstance(text, str):
        raise HRMError.validation_failed(
            f"turn text must be a string, got {type(text).__name__}", field="text"
        )
    # Lone surrogates are how Python carries bytes that were not UTF-8 (argv, stdin): they
    # cannot be stored or printed, so each becomes U+FFFD, as a lenient decoder would write.
    if not text.isprintable():  # cheap tests first: most inputs are printable ASCII
        text = _CONTROL.sub("", text)
    if not text.isascii():
        text = unicodedata.normalize("NFC", _SURROGATE.sub("\ufffd", text))
    return text


def clip(text: str, limit: int = MAX_STORED_TEXT) -> str:
    """`text` cut to `limit` characters, saying how many were left out."""
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more chars]"
