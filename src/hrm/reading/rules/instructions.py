"""Standing instructions: "From now on, always answer in bullet points" (D47).

001 §12.4's explicit patterns are all first person ("I prefer", "I always", …), so the most
explicit thing a person can say about how they want to be answered — an instruction that holds
from now on — classified as nothing at all and was forgotten by the next turn. A sentence is a
standing instruction when it tells the assistant what to do and says that it holds from now on:

- it opens (after "ok", "so", "also", "please") with "always" or "never" and an imperative
  verb: "Always use type hints", "Never push to main";
- it opens with "from now on", "going forward", "from here on", "henceforth" or "in (the)
  future," and then an imperative: "From now on, answer in British English";
- it opens with an imperative and says "from now on", "going forward", "from here on" or
  "henceforth" later: "Use tabs from now on";
- it is an imperative about everything the assistant writes, "in your answers" (replies,
  examples, code, snippets, explanations, …): "Don't use global variables in your examples",
  "In your answers, use British spelling" (D74). "Fix the bug in your code" works on one piece
  of code and is no instruction for all of them.

Each may be asked politely ("Could you always reply in French?", "Can you use British spelling
from now on?"): a request put as a question is still an instruction.

An imperative is a word that is not a pronoun, determiner, question word or auxiliary, and not
a third-person or past form ("Always fails on CI" reports; it does not instruct). Whether the
sentence is a question or a report is judged afterwards, with every other preference, by
`hrm.reading.rules.preference_scope`.
"""

from __future__ import annotations

import re

__all__ = [
    "HABITUAL",
    "MARKERS",
    "POLITE_REQUEST",
    "instruction_spans",
    "is_imperative",
    "standing_instruction",
]

HABITUAL = re.compile(
    r"\b(?:always|never|whenever|usually|generally|by default|from now on|going forward|"
    r"in (?:the )?future|any ?time|(?:every|each|all) (?:time|answer|response|reply|message|"
    r"turn|session|conversation|question|output|commit|change|review)s?)\b"
)
"""Words that make a need or a request a standing one ("I need a summary at the end of every
answer", "I want you to always use British spelling"). Not "every night": that schedules the
task ("a script that backs up my database every night"), it does not make it a habit. Read
on lower-cased text."""
_MARKER = r"from now on|going forward|from here on(?: out)?|henceforth"
_OPENING_MARKER = rf"(?:{_MARKER}|in (?:the )?future(?=\s*,))"
_LEAD = r"(?:^|(?<=[.!?;\n])\s*)(?:(?:ok(?:ay)?|so|and|also|please|let'?s|let us)\b[,]?\s+)*"
_POLITE = r"(?:(?:can|could|would) you\s+(?:please\s+)?)?"
POLITE_REQUEST = re.compile(r"\s*(?:please\s+)?(?:can|could|would) you\b", re.IGNORECASE)
"""How a request put as a question opens ("Could you always reply in French?")."""
_SCOPES = (
    "answers", "replies", "responses", "examples", "code", "code examples", "code samples",
    "code snippets", "snippets", "suggestions", "explanations",
)  # fmt: skip
_WHOSE = ("your", "all your", "all the", "all", "every", "any")
"""How a scope says it is everything the assistant writes: "in your code", "in all code (you
send me)", "in every answer"."""
_SINGULAR = ("answer", "reply", "response", "example", "snippet", "suggestion", "explanation",
             "message", "messages")  # fmt: skip
_SCOPE = (
    r"in (?:" + "|".join(w.replace(" ", r"\s+") for w in _WHOSE) + r")\s+(?:"
    + "|".join(sorted((*_SCOPES, *_SINGULAR), key=len, reverse=True)) + r")\b"
)
MARKERS = frozenset(
    {"always", "never", "from now on", "going forward", "from here on", "from here on out",
     "henceforth", "in future", "in the future"}
    | {f"in {whose} {scope}" for whose in _WHOSE for scope in (*_SCOPES, *_SINGULAR)}
)  # fmt: skip
"""What `standing_instruction` returns (lower case)."""
_OPENING = re.compile(
    rf"{_LEAD}{_POLITE}(?:(?P<adverb>always|never)\s+(?P<verb1>[a-z']+)"
    rf"|(?P<marker>{_OPENING_MARKER})\s*,?\s+(?:please\s+)?(?:(?:always|never)\s+)?"
    rf"(?P<verb2>[a-z']+))",
    re.IGNORECASE,
)
_TRAILING = re.compile(
    rf"{_LEAD}{_POLITE}(?P<verb3>[a-z']+)\b[^.!?\n]*?\b(?P<marker2>{_MARKER})\b", re.IGNORECASE
)
_SCOPED = re.compile(
    rf"{_LEAD}{_POLITE}(?:(?:don'?t|do not|please)\s+)?(?P<verb4>[a-z']+)\b[^.!?\n]*?"
    rf"\b(?P<marker3>{_SCOPE})"
    rf"|{_LEAD}(?P<marker4>{_SCOPE})\s*,?\s+(?:(?:please|always|never|don'?t|do not)\s+)?"
    rf"(?P<verb5>[a-z']+)",
    re.IGNORECASE,
)
"""An instruction about everything the assistant writes: "Don't use global variables in your
examples", "In your answers, use British spelling" (D74). "Fix the bug in your code" is work
on one piece of code, not how to write every answer (`_WORK_ON_CODE`)."""
_PATTERNS = (_OPENING, _TRAILING, _SCOPED)
_NOT_IMPERATIVE = frozenset(
    re.findall(
        r"\S+",
        "i i'm i'd i'll i've we we're we'd we'll you you're you'll he she it it's they they're "
        "there there's this that these those the a an my our your his her its their some any "
        "all every each everything nothing something things nobody everyone it'll that's what "
        "which who whom whose how why when where whether if is are am was were be been being do "
        "does did done has have had can could would will shall should may might must mind "
        "again ever more less",
    )
)
"""First words that make the sentence a statement or a question, not an instruction
("never mind", "never again" neither)."""
_KEEP_S = ("ss", "us")
"""Imperatives that end in "s" all the same: "discuss", "address", "focus"."""


def standing_instruction(text: str) -> str | None:
    """The marker ("always", "from now on", …) of the first standing instruction in `text`."""
    found = _first(text)
    return None if found is None else found[0]


def instruction_spans(text: str) -> list[tuple[int, int]]:
    """Where each standing instruction's marker is in `text`, in order (for the scope's
    judgement, as `PreferenceClassifier.spans` gives a pattern's matches)."""
    spans: list[tuple[int, int]] = []
    if not _may_hold(text):
        return spans
    for pattern in _PATTERNS:
        for match in pattern.finditer(text):
            hit = _accepted(match)
            if hit is not None:
                spans.append(hit[1])
    return sorted(spans)


def _may_hold(text: str) -> bool:
    """Does `text` hold a word every instruction holds? Most messages do not, and the two
    regular expressions, tried at every position, cost ~10 µs on a short message."""
    low = text.lower()
    return (
        "always" in low or "never" in low or "from now on" in low or "forward" in low
        or "here on" in low or "henceforth" in low or "future" in low or "in your " in low
        or "in all " in low or "in every " in low or "in any " in low
    )


def _first(text: str) -> tuple[str, tuple[int, int]] | None:
    if not _may_hold(text):
        return None
    best: tuple[str, tuple[int, int]] | None = None
    for pattern in _PATTERNS:
        for match in pattern.finditer(text):
            hit = _accepted(match)
            if hit is not None:
                if best is None or hit[1] < best[1]:
                    best = hit
                break
    return best


def _accepted(match: re.Match[str]) -> tuple[str, tuple[int, int]] | None:
    """(marker, its span) when the match opens with an imperative, else None."""
    for verb, marker in _GROUPS:
        word = match.group(verb) if verb in match.re.groupindex else None
        if word is None:
            continue
        if not is_imperative(word.lower()):
            return None
        if marker in ("marker3", "marker4") and word.lower() in _WORK_ON_CODE:
            return None  # "Fix the bug in your code": a task on that code
        return match.group(marker).lower(), match.span(marker)
    return None


_GROUPS = (
    ("verb1", "adverb"), ("verb2", "marker"), ("verb3", "marker2"), ("verb4", "marker3"),
    ("verb5", "marker4"),
)  # fmt: skip
_WORK_ON_CODE = frozenset(
    ("fix", "change", "check", "explain", "correct", "debug", "review", "test", "run", "look",
     "add", "find", "update", "rewrite", "edit", "remove", "delete", "rename", "show", "clarify")
)  # fmt: skip
"""Verbs that work on one of the assistant's answers rather than say how to write them all
("Explain the loop in your code", "Fix the typo in your answer")."""


def is_imperative(word: str) -> bool:
    """Can lower-cased `word` open an instruction ("use", "fix", "discuss"), not a statement
    ("it", "uses", "fixed")?"""
    if word in _NOT_IMPERATIVE or word.endswith("ed"):
        return False
    return not word.endswith("s") or word.endswith(_KEEP_S)
