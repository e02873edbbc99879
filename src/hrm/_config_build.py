"""Building the configuration dataclasses from raw YAML and environment values, through pydantic.

`hrm.config` merges the layers (defaults, files, environment) into dotted keys; this module turns
one section's raw values into its dataclass. Each value is validated by a pydantic `TypeAdapter`
over the field's own annotation (no parallel model class), made once per annotation and process,
and a failure becomes an `HRMError` naming the key, the file that set it and what it must be.

Pydantic is imported only here and only when a value needs checking: `hrm turn` already has it
loaded (typer builds its parameters through it) and pays ~0.2 ms per kind of value set; the hook
reads cached settings and loads the configuration only when a file or ``HRM_*`` variable changed.

Three rules keep the meaning the hand-written coercion had, where pydantic's lax mode differs:
numbers, booleans and lists take only the type YAML wrote (lax mode reads ``"3"`` and ``true``
as 3 and 1), a string key also takes a number (``model: 4`` is the model ``"4"``), an enum takes
its value or its name in any case, and an on/off switch takes YAML 1.1's booleans (a bare
``off`` is read as false).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Annotated, Any, Literal

from hrm.errors import HRMError

__all__ = ["already_valid", "build_section", "value_error"]

_STRICT_TYPES = frozenset({"int", "float", "bool", "list"})
"""Core-schema types validated strictly: the value must already be of the type (an int for a
float is still accepted, as YAML writes ``1`` for ``1.0``)."""

_EXPECTED = {
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "a mapping",
}
"""What a value must be, by pydantic error type, in the words the config's messages use."""


def build_section(
    cls: type[Any],
    data: Mapping[str, Any],
    file: str,
    section: str,
    *,
    origins: Mapping[str, str] | None = None,
) -> Any:
    """One configuration dataclass from raw values; keys it does not set keep their defaults.

    Args:
        cls: The dataclass (``HRMConfig`` or one of its sections).
        data: Raw values by field name; a nested section is a mapping (or already built).
        file: Where the values came from when `origins` does not say (a path, "environment").
        section: The dotted prefix of `cls`'s keys (``""`` at the top, ``"llm"`` …).
        origins: Where each dotted key was set, for messages.

    Raises:
        HRMError: ``VALIDATION_FAILED`` naming the key, where it was set and what it must be.
    """
    hints = _hints(typing.cast(Any, cls))
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{section}.{key}" if section else key
        where = (origins or {}).get(dotted, file or "built-in default")
        if key not in hints:
            raise HRMError.validation_failed(
                f"Unknown config key '{dotted}' in {where}", key=dotted, file=where
            )
        hint = hints[key]
        if dataclasses.is_dataclass(hint) and isinstance(hint, type):
            if isinstance(value, hint):
                kwargs[key] = value
            elif isinstance(value, Mapping):
                kwargs[key] = build_section(hint, value, where, dotted, origins=origins)
            else:
                raise value_error(dotted, "a mapping", value, where)
        else:
            kwargs[key] = _validate(hint, value, dotted, where)
    return cls(**kwargs)


def value_error(key: str, expected: str, value: Any, where: str) -> HRMError:
    """The error for a config value of the wrong kind."""
    return HRMError.validation_failed(
        f"Config key '{key}' in {where} must be {expected}, got {value!r}", key=key, file=where
    )


@functools.cache
def _hints(cls: Any) -> dict[str, Any]:
    names = {
        f.name for f in dataclasses.fields(cls) if f.init and f.metadata.get("config_key", True)
    }
    return {k: v for k, v in typing.get_type_hints(cls).items() if k in names}


_PLAIN = frozenset({int, float, bool, str})


def _validate(hint: Any, value: Any, key: str, where: str) -> Any:
    before = _word_rule(hint)
    if before is not None:
        value = before(value)  # what the adapter's schema runs first (`_ConfigValue`)
    if already_valid(hint, value):
        return value
    from pydantic import ValidationError

    try:
        return _adapter(hint).validate_python(value)
    except ValidationError as exc:
        raise _translate(exc.errors(include_url=False)[0], hint, key, value, where) from None


def already_valid(hint: Any, value: Any) -> bool:
    """Whether `value` is exactly what pydantic would return for `hint`, so it need not run.

    Kept by hand for the hook: most values people set are numbers, flags, names, choices (after
    the word rules) and lists of names, which this accepts as they are, so the first prompt
    after a config change loads the config without importing pydantic, whose import and first
    validator cost ~430 M instructions, more than the rest of that hook process (~350 M;
    bench/RESULTS.md, issue 34); `hrm turn` then builds no validator either (+18 M otherwise).
    It only accepts; whatever it does not is pydantic's to convert or refuse (D121).
    """
    if hint in _PLAIN:
        return type(value) is hint
    if isinstance(hint, type) and issubclass(hint, Enum):
        return type(value) is hint
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Literal:
        return type(value) is str and value in args
    if origin is list:
        return type(value) is list and all(already_valid(args[0], item) for item in value)
    if origin in (types.UnionType, typing.Union) and type(None) in args:
        inner = [arg for arg in args if arg is not type(None)]
        return value is None or (len(inner) == 1 and already_valid(inner[0], value))
    return False


@functools.cache
def _adapter(hint: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(Annotated[hint, _ConfigValue(hint)], config={"coerce_numbers_to_str": True})


class _ConfigValue:
    """Pydantic schema hook: the three rules of the module docstring, on one field's schema."""

    def __init__(self, hint: Any) -> None:
        self.hint = hint

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        schema = handler(source)
        _tighten(schema)
        before = _word_rule(self.hint)
        if before is None:
            return schema
        return core_schema.no_info_before_validator_function(before, schema)


def _word_rule(hint: Any) -> Callable[[Any], Any] | None:
    """How a person's word becomes the field's value: an enum's name, a YAML boolean switch."""
    if isinstance(hint, type) and issubclass(hint, Enum):
        return functools.partial(_member, hint)
    if typing.get_origin(hint) is Literal and {"on", "off"} <= set(typing.get_args(hint)):
        return _switch_word
    return None


def _tighten(schema: Any) -> None:
    if isinstance(schema, dict):
        kind = schema.get("type")
        if kind in _STRICT_TYPES:
            schema["strict"] = True
        for child in schema.values():
            _tighten(child)
    elif isinstance(schema, list):
        for child in schema:
            _tighten(child)


def _member(kind: type[Enum], value: Any) -> Any:
    if isinstance(value, str):
        for member in kind:
            if value.lower() in (str(member.value).lower(), member.name.lower()):
                return member
    return value


def _switch_word(value: Any) -> Any:
    # YAML 1.1 (as PyYAML reads it) and the environment parser read a bare `on` or `off` as
    # true or false, which is what the person meant.
    return ("on" if value else "off") if isinstance(value, bool) else value


def _translate(error: Mapping[str, Any], hint: Any, key: str, value: Any, where: str) -> HRMError:
    kind = error["type"]
    args = typing.get_args(hint)
    fixed = typing.get_origin(hint) is tuple and Ellipsis not in args
    if fixed and kind in ("missing", "too_short", "too_long"):
        return value_error(key, f"a list of {len(args)} items", value, where)
    inner = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
    bad = error.get("input", value)
    if kind in _EXPECTED:
        return value_error(key + inner, _EXPECTED[kind], bad, where)
    expected = (error.get("ctx") or {}).get("expected")
    if expected is not None:
        return value_error(key + inner, f"one of {expected}", bad, where)
    message = str(error["msg"])
    return HRMError.validation_failed(
        f"Config key '{key}{inner}' in {where}: {message[:1].lower()}{message[1:]}, got {bad!r}",
        key=key,
        file=where,
    )
