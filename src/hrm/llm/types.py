"""The adapter contract (001 §11.1-11.2): messages, per-call settings, responses, stream chunks.

Every component that needs a model talks to an `ILLMAdapter`; every provider (offline, local,
anthropic, openai) and the gateway that wraps them satisfy it. The types here are plain data with
no I/O, so any layer may import them without pulling in a provider SDK.
"""

from __future__ import annotations

import codecs
import functools
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from hrm.errors import HRMError

__all__ = [
    "FINISH_CONTENT_FILTER",
    "FINISH_LENGTH",
    "FINISH_REPETITION",
    "FINISH_STOP",
    "MESSAGE_ROLES",
    "ILLMAdapter",
    "LLMCallConfig",
    "LLMResponse",
    "Message",
    "StreamChunk",
    "estimate_tokens",
]

MESSAGE_ROLES = frozenset({"user", "assistant", "system"})
"""The roles a `Message` may carry (001 §11.2)."""

FINISH_STOP = "stop"
"""The model finished its answer (or hit a stop sequence)."""
FINISH_LENGTH = "length"
"""The answer was cut at ``max_tokens`` or the context window."""
FINISH_CONTENT_FILTER = "content_filter"
"""The provider's safety filter refused or truncated the answer."""
FINISH_REPETITION = "repetition"
"""The model fell into a loop and was stopped there; the answer keeps one copy of what
repeated (an hrm addition: the ``local`` provider's small models loop)."""


@dataclass(slots=True)
class Message:
    """One message of a conversation (001 §11.2)."""

    role: str
    """``user``, ``assistant`` or ``system``."""
    content: str
    """The text of the message."""
    timestamp: datetime | None = None
    """When the message was written, if known."""
    metadata: dict[str, Any] | None = None
    """Free-form details the caller keeps with the message; never sent to a provider."""

    def __post_init__(self) -> None:
        if self.role not in MESSAGE_ROLES:
            raise HRMError.validation_failed(
                f"Message role '{self.role}' is not one of {sorted(MESSAGE_ROLES)}",
                role=self.role,
            )


@dataclass(frozen=True, kw_only=True, slots=True)
class LLMCallConfig:
    """Per-call overrides of the adapter's defaults (001 §11.2, plus two hrm fields).

    ``None`` means "use the adapter's default". `resolve` merges an override over a base, so no
    caller writes ad-hoc ``a or b`` chains.
    """

    model: str | None = None
    """Model id to use instead of the configured one."""
    temperature: float | None = None
    """Sampling temperature, 0.0-1.0."""
    max_tokens: int | None = None
    """Upper bound on the answer's length in tokens."""
    stop_sequences: list[str] | None = None
    """Strings that end the answer when the model writes them."""
    timeout_ms: int | None = None
    """Wall-clock budget of one attempt; an attempt that exceeds it fails with ``TIMEOUT``."""
    max_input_tokens: int | None = None
    """Refuse the call (``TOKEN_LIMIT``) when the prompt is estimated to be longer than this."""
    max_output_tokens: int | None = None
    """Like ``max_tokens``; the smaller of the two wins."""
    json_mode: bool = False
    """hrm: the caller wants one JSON value back (see `hrm.llm.chat_json`)."""
    purpose: str | None = None
    """hrm: why the call is made (``classification``, ``respond``...); recorded, never sent."""

    def resolve(self, override: LLMCallConfig | None) -> LLMCallConfig:
        """This config with every field ``override`` sets (non-``None``, ``json_mode`` true)."""
        if override is None:
            return self
        changes: dict[str, Any] = {}
        for name in _CALL_FIELDS:
            value = getattr(override, name)
            if name == "json_mode":
                if value:
                    changes[name] = True
            elif value is not None:
                changes[name] = value
        return replace(self, **changes) if changes else self  # frozen: sharing is safe

    @property
    def output_limit(self) -> int | None:
        """The effective answer limit: the smaller of ``max_tokens`` and ``max_output_tokens``."""
        limits = [v for v in (self.max_tokens, self.max_output_tokens) if v is not None]
        return min(limits) if limits else None


_CALL_FIELDS = tuple(item.name for item in fields(LLMCallConfig))
"""`LLMCallConfig`'s field names, once (every model call resolves a config)."""


@dataclass(kw_only=True, slots=True)
class LLMResponse:
    """The answer of one synchronous chat call (001 §11.2)."""

    content: str
    """The text the model wrote."""
    model: str
    """The model that answered, as the provider names it."""
    provider: str
    """``offline``, ``local``, ``anthropic``, ``openai`` or a registered name."""
    input_tokens: int
    """Prompt tokens, as the provider counted them (estimated where it does not say)."""
    output_tokens: int
    """Answer tokens."""
    total_tokens: int
    """``input_tokens + output_tokens``."""
    finish_reason: str
    """``stop``, ``length``, ``content_filter`` or ``repetition``."""
    latency_ms: int
    """Wall-clock time of the call."""
    request_id: str | None = None
    """The provider's id of the request, for support tickets."""

    def cost_estimate(self, pricing: dict[str, float]) -> float:
        """Cost in the pricing's currency from ``input_per_1k`` and ``output_per_1k``."""
        input_cost = self.input_tokens * pricing.get("input_per_1k", 0.0) / 1000
        output_cost = self.output_tokens * pricing.get("output_per_1k", 0.0) / 1000
        return input_cost + output_cost


@dataclass(frozen=True, kw_only=True, slots=True)
class StreamChunk:
    """One piece of a streamed answer (001 §11.2).

    The final chunk has ``done=True``, an empty ``delta`` and the ``finish_reason``; where the
    provider reports usage it also carries the token counts (an hrm addition the gateway uses
    to charge the budget without estimating).
    """

    delta: str
    """New text since the previous chunk."""
    accumulated: str
    """All text so far. On the final chunk, the answer: after a ``repetition`` finish it is
    shorter than the deltas joined, which carried the loop until it was recognised."""
    done: bool
    """Whether this is the final chunk."""
    finish_reason: str | None = None
    """Set on the final chunk."""
    input_tokens: int | None = None
    """Prompt tokens, on the final chunk when the provider reports them."""
    output_tokens: int | None = None
    """Answer tokens, on the final chunk when the provider reports them."""


@runtime_checkable
class ILLMAdapter(Protocol):
    """What every model provider offers (001 §11.1). Components never call a provider directly."""

    def chat(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> LLMResponse:
        """One synchronous chat completion.

        Raises:
            HRMError: ``RATE_LIMIT``, ``TOKEN_LIMIT``, ``CONTENT_FILTERED``, ``PROVIDER_ERROR``
                or ``TIMEOUT`` when the provider fails.
        """
        ...

    def stream(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> Iterator[StreamChunk]:
        """A streamed chat completion; the last chunk has ``done=True``."""
        ...

    def count_tokens(self, text: str) -> int:
        """How many tokens ``text`` costs, for budget management (may be an estimate)."""
        ...

    @property
    def provider(self) -> str:
        """The provider's name (``offline``, ``anthropic``...)."""
        ...

    @property
    def model(self) -> str:
        """The default model id."""
        ...


_WORD = re.compile(r"\w+")
_SYMBOL = re.compile(r"[^\w\s]")


_MEMO_MAX_LEN = 8192
"""Texts up to this length have their estimate memoised: the system prompt, the assembled
context and its items are estimated by the attention budget, the gateway and the adapter,
turn after turn, mostly unchanged. With `_estimate_memo`'s 1,024 entries the memo holds at
most ~8 MB of text."""


def estimate_tokens(text: str) -> int:
    """A provider-independent token estimate: ``ceil(words * 4 / 3) + punctuation marks``.

    Subword tokenizers spend about four tokens per three English words and one per symbol;
    the estimate is cheap (no network, no tokenizer file) and deterministic, which is what
    budgets and rate limits need before a call. Providers' own counts replace it afterwards.
    """
    if len(text) <= _MEMO_MAX_LEN:
        return _estimate_memo(text)
    return _estimate(text)


@functools.lru_cache(maxsize=1024)
def _estimate_memo(text: str) -> int:
    if len(text) >= _BY_LINE_MIN and "\n" in text:
        return _estimate_by_line(text)
    return _estimate(text)


_BY_LINE_MIN = 512
"""Texts from this length with several lines are counted line by line (`_estimate_by_line`)."""
_LINE_MEMO_MAX_LEN = 1024
_LINES_REMEMBERED = 4096
_line_counts_memo: dict[str, tuple[int, int]] = {}
"""Line → (words, symbols); bounded by `_LINES_REMEMBERED` lines of at most 1 KiB each."""


def _estimate_by_line(text: str) -> int:
    """`_estimate` of a text, as the sum of its lines' counts.

    A system prompt is new every turn, but most of its lines are not: the canon, the
    patterns, the registry rows come back turn after turn, and only the recent turns and the
    retrieved learnings change. A newline is neither a word character nor a symbol, so no
    word spans two lines and the sum is exactly the whole text's count.
    """
    memo = _line_counts_memo
    words = symbols = 0
    for line in text.split("\n"):
        counts = memo.get(line)
        if counts is None:
            counts = _counts(line)
            if len(line) <= _LINE_MEMO_MAX_LEN:
                if len(memo) >= _LINES_REMEMBERED:
                    memo.clear()
                memo[line] = counts
        words += counts[0]
        symbols += counts[1]
    return math.ceil(words * 4 / 3) + symbols


def _estimate(text: str) -> int:
    words, symbols = _counts(text)
    return math.ceil(words * 4 / 3) + symbols


def _counts(text: str) -> tuple[int, int]:
    """How many words (runs of ``\\w``) and symbols (neither ``\\w`` nor space) `text` has."""
    # One byte per character, each mapped to its class: `a` word, `.` symbol, space otherwise;
    # a word starts wherever an `a` follows a non-`a`. The counts are the regular expressions'
    # own (a property test holds them equal), some ten times faster on a prompt-sized text,
    # where building two lists of matches dominated a turn's admission check. The few
    # characters beyond ASCII (an accent, a quotation mark) are classed one by one; the two
    # the kernel writes into every prompt, an em dash and an ellipsis, are symbols as `-` is.
    if not text.isascii():
        text = text.replace("\u2014", "-").replace("\u2026", "-")
    classes = text.encode("ascii", _CLASS_ERRORS).translate(_ASCII_CLASSES)
    words = classes.count(b" a") + classes.count(b".a") + classes.startswith(b"a")
    return words, classes.count(b".")


def _char_class(char: str) -> str:
    return "a" if _WORD.match(char) else "." if _SYMBOL.match(char) else " "


def _class_beyond_ascii(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    chunk = error.object[error.start : error.end]
    return "".join(map(_char_class, chunk)), error.end


_CLASS_ERRORS = "hrm-token-class"
codecs.register_error(_CLASS_ERRORS, _class_beyond_ascii)

_ASCII_CLASSES = bytes(ord(_char_class(chr(c))) for c in range(128)) + b" " * 128
"""Each ASCII character's class for `_estimate`, read off `_WORD` and `_SYMBOL` themselves."""


def prompt_tokens(adapter: ILLMAdapter, messages: list[Message], system: str) -> int:
    """The estimated prompt size of a call: the system prompt plus every message."""
    return adapter.count_tokens(system) + sum(adapter.count_tokens(m.content) for m in messages)

