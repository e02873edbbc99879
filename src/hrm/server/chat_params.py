"""The standard chat-completions parameters: checked as OpenAI checks them, then left to the turn.

A governed turn decides how its model is called (D204), so ``temperature``, ``max_tokens`` and
the rest change nothing. They are still checked, for type and range as OpenAI's API checks
them, so that a client's mistake is a 400 naming the field here as it would be there — not a
200 that hides it until the client is pointed at another server. What a client asks for and a
governed turn cannot give (an answer in JSON, token log-probabilities, a forced tool call) is
refused as unsupported instead of answered as if it had been honoured.

Every error says what the field must be and what it got: the JSON type received ("got a
string", "got an empty array"), or the value itself when the type was right but the value was
not ("got 5").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from hrm.server.api_errors import APIError, json_kind

__all__ = ["MISSING", "bad_value", "check_parameters", "optional"]


class _Missing:
    """A field the body does not have at all (not the same as one that is null)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()

_GOVERNED_TOOLS = "the governed turn decides which tools run"


def bad_value(param: str, problem: str, value: Any, *, code: str = "invalid_value") -> APIError:
    """400 for field `param`: ``'param' <problem> (got <its JSON type>)``."""
    got = "it is missing" if value is MISSING else f"got {json_kind(value)}"
    return APIError(400, f"'{param}' {problem} ({got})", param=param, code=code)


def _out_of_range(param: str, problem: str, value: Any) -> APIError:
    """400 for a value of the right type but not an allowed one: it is named, not its type."""
    return APIError(400, f"'{param}' {problem} (got {value!r})", param=param, code="invalid_value")


def optional(
    data: Mapping[str, Any], name: str, kind: type, *, default: Any, where: str = ""
) -> Any:
    """Field `name` of `kind`, `default` when absent or null; 400 for any other type."""
    value = data.get(name)
    if value is None:
        return default
    # bool is an int in Python: an integer field must not take true/false, nor the reverse.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise bad_value(f"{where}{name}", f"must be {_ARTICLES.get(kind, kind.__name__)}", value)
    return value


_ARTICLES = {bool: "a boolean", int: "an integer", dict: "an object", str: "a string"}


@dataclass(frozen=True)
class _Range:
    """A numeric parameter and the values OpenAI accepts for it."""

    name: str
    low: float
    high: float | None = None
    integer: bool = False

    def describe(self) -> str:
        kind = "an integer" if self.integer else "a number"
        if self.high is None:
            return f"{kind} of at least {self.low:g}"
        return f"{kind} from {self.low:g} to {self.high:g}"

    def check(self, data: Mapping[str, Any]) -> None:
        value = data.get(self.name)
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise bad_value(self.name, f"must be {self.describe()}", value)
        if self.integer and not isinstance(value, int):
            raise _out_of_range(self.name, f"must be {self.describe()}", value)
        # NaN (which Python's JSON reader lets through) is in no range.
        if math.isnan(value) or value < self.low or (self.high is not None and value > self.high):
            raise _out_of_range(self.name, f"must be {self.describe()}", value)


_RANGES = (
    _Range("temperature", 0, 2),
    _Range("top_p", 0, 1),
    _Range("presence_penalty", -2, 2),
    _Range("frequency_penalty", -2, 2),
    _Range("max_tokens", 1, integer=True),
    _Range("max_completion_tokens", 1, integer=True),
    _Range("top_logprobs", 0, 20, integer=True),
)
_TYPED = (("seed", int), ("user", str), ("logprobs", bool), ("parallel_tool_calls", bool),
          ("store", bool), ("metadata", dict))
_MAX_STOP = 4
_FORMATS = ("text", "json_object", "json_schema")


def check_parameters(data: Mapping[str, Any]) -> None:
    """400 naming the first standard parameter OpenAI would refuse, or hrm cannot honour."""
    for number in _RANGES:
        number.check(data)
    for name, kind in _TYPED:
        optional(data, name, kind, default=None)
    _check_n(data)
    _check_stop(data.get("stop"))
    _check_logit_bias(data.get("logit_bias"))
    _check_response_format(data.get("response_format"))
    _check_tools(data)
    if data.get("logprobs") is True:
        raise APIError(
            400, "'logprobs' true is not supported: a governed turn's answer is not one model's "
            "sampled tokens (hrm may write it, or add to it); leave logprobs out or send false",
            param="logprobs", code="unsupported_value",
        )


def _check_n(data: Mapping[str, Any]) -> None:
    n = optional(data, "n", int, default=1)
    if n != 1:
        raise _out_of_range("n", "must be 1: a governed turn gives one answer", n)


def _check_stop(stop: Any) -> None:
    if stop is None or isinstance(stop, str):
        return
    problem = f"must be a string or an array of up to {_MAX_STOP} strings"
    if not isinstance(stop, list):
        raise bad_value("stop", problem, stop)
    if len(stop) > _MAX_STOP:
        raise APIError(400, f"'stop' {problem} (got {len(stop)} strings)", param="stop",
                       code="invalid_value")
    for index, item in enumerate(stop):
        if not isinstance(item, str):
            raise bad_value(f"stop[{index}]", "must be a string", item)


def _check_logit_bias(bias: Any) -> None:
    if bias is None:
        return
    if not isinstance(bias, dict):
        raise bad_value("logit_bias", "must be an object of token ids and biases", bias)
    for token, value in bias.items():
        where = f"logit_bias.{token}"
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise bad_value(where, "must be a number from -100 to 100", value)
        if math.isnan(value) or not -100 <= value <= 100:
            raise _out_of_range(where, "must be a number from -100 to 100", value)


def _check_response_format(response_format: Any) -> None:
    """Only ``{"type": "text"}``: a governed turn cannot promise JSON."""
    if response_format is None:
        return
    if not isinstance(response_format, dict):
        raise bad_value("response_format", 'must be an object such as {"type": "text"}',
                        response_format)
    kind = response_format.get("type", MISSING)
    if not isinstance(kind, str) or kind not in _FORMATS:
        raise bad_value("response_format.type", f"must be one of {', '.join(_FORMATS)}", kind)
    if kind != "text":
        raise APIError(
            400,
            f"'response_format' {kind} is not supported: a governed turn answers in prose — it "
            "may ask a question back, or say what it kept or forgot — so it cannot promise "
            "JSON; leave response_format out or send {\"type\": \"text\"}",
            param="response_format", code="unsupported_value",
        )


def _check_tools(data: Mapping[str, Any]) -> None:
    for name in ("tools", "functions"):
        value = data.get(name)
        if value is None or value == []:
            continue
        if not isinstance(value, list):
            raise bad_value(name, "must be an array", value)
        raise bad_value(name, f"is not supported: {_GOVERNED_TOOLS}", value,
                        code="unsupported_parameter")
    for name in ("tool_choice", "function_call"):
        choice = data.get(name)
        if choice is None or choice in ("none", "auto"):
            continue
        if choice == "required" or isinstance(choice, dict):
            shown = repr(choice) if isinstance(choice, str) else "a named function"
            raise APIError(
                400, f"'{name}' {shown} is not supported: {_GOVERNED_TOOLS}; leave it out or "
                "send \"auto\"", param=name, code="unsupported_value",
            )
        raise bad_value(name, 'must be "none", "auto", "required" or an object', choice)
