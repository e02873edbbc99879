"""Value semantics for records on the hook's path, without `dataclasses`.

`hrm hook` answers every prompt in a new process. Importing `dataclasses` pulls in `inspect`,
`ast`, `dis` and `tokenize` (~11 ms on the reference machine, as much as the interpreter's own
start-up), and generating each record class costs more. The records the hook touches (its own
DTOs, skill rules, learnings and their search types) subclass these two bases instead: a
subclass lists its fields in ``_fields`` (and as its ``__slots__``) and assigns them in a
hand-written ``__init__`` through `_init`; equality, hashing and ``repr`` follow the fields in
that order, as a dataclass's would. Everything else in `hrm` uses dataclasses.
"""

from __future__ import annotations

__all__ = ["Record", "Value"]


class _Fields:  # noqa: PLW1641 - `Value` hashes, `Record` must not
    """Equality and ``repr`` over ``_fields``; shared by `Value` and `Record`."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    """The fields in declaration order (``__slots__`` holds the same names)."""
    _uncompared: tuple[str, ...] = ()
    """Fields left out of equality and hashing (``field(compare=False)``)."""
    _hidden: tuple[str, ...] = ()
    """Fields left out of ``repr`` (``field(repr=False)``)."""

    def _init(self, **values: object) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def _key(self) -> tuple[object, ...]:
        return tuple(getattr(self, n) for n in self._fields if n not in self._uncompared)

    def __setstate__(self, state: object) -> None:
        """Unpickle and copy through `_init` (a frozen `__setattr__` would refuse it)."""
        slots = state[1] if isinstance(state, tuple) else state
        self._init(**(slots if isinstance(slots, dict) else {}))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()

    def __repr__(self) -> str:
        shown = (n for n in self._fields if n not in self._hidden)
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in shown)
        return f"{type(self).__name__}({fields})"


class Value(_Fields):
    """A frozen record: hashable, and assignment raises (``@dataclass(frozen=True)``)."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of a frozen {type(self).__name__}")

    def __hash__(self) -> int:
        return hash(self._key())


class Record(_Fields):
    """A mutable record: fields can be reassigned, so it is unhashable (``@dataclass``)."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]  # mutable: its hash could change in a dict
