"""The exemplar files: labelled example sentences, one intent per file, one example per line.

The sentence-model tier (`hrm.reading.sentence`) classifies a sentence by the examples it is
nearest to, so a new phrasing is a new line here, not new code. ``<intent>.txt`` holds examples
of one `IntentKind` (``forget.txt``, ``list_open.txt``); ``none.txt`` holds near-misses that
must trigger nothing (questions that use preference words, statements about the world, reports,
code talk). Lines starting with ``#`` are comments; blank lines are skipped.

The files ship inside the package and may be edited by hand, so they are checked strictly when
loaded: a bad file fails at once with an `HRMError` naming the file and the line, instead of
quietly teaching the classifier something wrong. Pure: reads files, imports nothing heavy.
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from hrm.errors import HRMError
from hrm.reading.types import IntentKind

__all__ = [
    "MAX_EXAMPLE_CHARS",
    "NONE_LABEL",
    "Exemplar",
    "ExemplarSet",
    "exemplar_dir",
    "load_exemplars",
    "parse_exemplar_file",
]

NONE_LABEL = "none"
"""The label of ``none.txt``: sentences that carry no intent."""
MAX_EXAMPLE_CHARS = 200
"""An example is one sentence someone would say; a longer line is a paste or a mistake."""

_LABELS = frozenset({kind.value for kind in IntentKind} | {NONE_LABEL})


@dataclass(frozen=True, slots=True)
class Exemplar:
    """One example sentence and where it was written."""

    label: str
    """An `IntentKind` value, or ``none``."""
    text: str
    file: str
    line: int


@dataclass(frozen=True, slots=True)
class ExemplarSet:
    """Every example of every file, in file then line order, and a digest of their content."""

    examples: tuple[Exemplar, ...]
    digest: str
    """sha256 over the labels and texts: what cached vectors and calibrated thresholds are for."""

    @property
    def labels(self) -> tuple[str, ...]:
        """The labels present, sorted, ``none`` included."""
        return tuple(sorted({e.label for e in self.examples}))


def exemplar_dir() -> Traversable:
    """The folder of the shipped exemplar files."""
    return resources.files("hrm.reading") / "data" / "exemplars"


def load_exemplars(directory: Traversable | Path | None = None) -> ExemplarSet:
    """Load and check every ``*.txt`` file of `directory` (default: the shipped files).

    Raises:
        HRMError: ``PARSE_ERROR`` naming the file (and line) for a file that is not an intent's
            name, not UTF-8, holds a control character, an over-long or empty example, an
            example written twice, or no example at all, or when ``none.txt`` is missing.
    """
    folder = exemplar_dir() if directory is None else directory
    files = sorted(
        (item for item in folder.iterdir() if item.name.endswith(".txt")), key=lambda i: i.name
    )
    examples: list[Exemplar] = []
    seen: dict[str, Exemplar] = {}
    for item in files:
        for example in parse_exemplar_file(item.name, item.read_bytes()):
            key = _normal(example.text)
            earlier = seen.get(key)
            if earlier is not None:
                raise HRMError.parse_error(
                    f"example {example.text!r} is also at {earlier.file}:{earlier.line}; an "
                    "example belongs to one intent, remove one of them",
                    path=example.file,
                    line=example.line,
                )
            seen[key] = example
            examples.append(example)
    if not any(item.name == f"{NONE_LABEL}.txt" for item in files):
        raise HRMError.parse_error(
            f"no {NONE_LABEL}.txt: the classifier needs near-misses that trigger nothing",
            path=str(folder),
        )
    digest = hashlib.sha256()
    for example in examples:
        digest.update(f"{example.label}\t{example.text}\n".encode())
    return ExemplarSet(examples=tuple(examples), digest=digest.hexdigest())


def parse_exemplar_file(name: str, data: bytes) -> list[Exemplar]:
    """The examples of one file named `name` with content `data` (see `load_exemplars`)."""
    label = name.removesuffix(".txt")
    if label not in _LABELS:
        raise HRMError.parse_error(
            f"'{name}' names no intent; name an exemplar file after one of "
            f"{', '.join(sorted(_LABELS))} (plus .txt)",
            path=name,
        )
    examples: list[Exemplar] = []
    lines_seen: dict[str, int] = {}
    for number, raw in enumerate(data.split(b"\n"), start=1):
        text = _decode(raw, name, number).strip()
        if not text or text.startswith("#"):
            continue
        _check_line(text, name, number)
        key = _normal(text)
        if key in lines_seen:
            raise HRMError.parse_error(
                f"example written twice (first at line {lines_seen[key]}); remove one",
                path=name,
                line=number,
            )
        lines_seen[key] = number
        examples.append(Exemplar(label=label, text=text, file=name, line=number))
    if not examples:
        raise HRMError.parse_error(
            "no example in the file; write one example sentence per line", path=name
        )
    return examples


def _decode(raw: bytes, name: str, number: int) -> str:
    try:
        return raw.decode("utf-8").removesuffix("\r")
    except UnicodeDecodeError as exc:
        raise HRMError.parse_error(
            f"not UTF-8 at byte {exc.start} of the line; save the file as UTF-8",
            path=name,
            line=number,
        ) from exc


def _check_line(text: str, name: str, number: int) -> None:
    if len(text) > MAX_EXAMPLE_CHARS:
        raise HRMError.parse_error(
            f"example of {len(text)} characters (at most {MAX_EXAMPLE_CHARS}); an example is "
            "one sentence",
            path=name,
            line=number,
        )
    bad = next((c for c in text if unicodedata.category(c) in ("Cc", "Cs", "Cn")), None)
    if bad is not None:
        raise HRMError.parse_error(
            f"control or unassigned character U+{ord(bad):04X} in the example; remove it",
            path=name,
            line=number,
        )
    if not any(c.isalnum() for c in text):
        raise HRMError.parse_error(
            "example has no letter or digit; write what a person would say",
            path=name,
            line=number,
        )


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())
