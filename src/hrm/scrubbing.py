"""Secret scrubbing: nothing hrm stores may contain a credential.

Every store and ledger calls `scrub` on values before they are written. The table below is the
single list of what counts as a secret; each row has a test. Replacement keeps the kind of secret
(`[REDACTED:github_token]`) so a reader knows something was there and what it was, without it.

Patterns are linear-time (no nested quantifiers) so scrubbing a megabyte of text stays fast.
Each is compiled the first time a text contains one of its hints: most processes (a hook
writing one log line) never compile any.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["SECRET_PATTERNS", "SecretPattern", "contains_secret", "scrub", "scrub_text"]


class SecretPattern:
    """One kind of credential and how to recognise it.

    A frozen value like the dataclass it replaces (same fields and constructor), except that
    `regex` may be given as source text and is then compiled on first use.
    """

    __slots__ = ("_regex", "flags", "group", "hints", "kind", "pattern")
    kind: str
    pattern: str
    """The regular expression's source."""
    group: int
    """Which group holds the secret itself; 0 replaces the whole match."""
    hints: tuple[str, ...]
    """Lower-case substrings every match contains (at least one); the regex runs only when the
    text contains a hint, which keeps scrubbing of ordinary text to a few substring scans."""
    flags: int
    """`re` flags for compiling `pattern` (those of a compiled `regex` when one is given)."""
    _regex: re.Pattern[str] | None

    def __init__(
        self,
        kind: str,
        regex: re.Pattern[str] | str,
        group: int = 0,
        hints: tuple[str, ...] = (),
        flags: int = 0,
    ) -> None:
        compiled = None if isinstance(regex, str) else regex
        values = {
            "kind": kind,
            "pattern": regex if isinstance(regex, str) else regex.pattern,
            "group": group,
            "hints": hints,
            "flags": flags if compiled is None else compiled.flags & ~re.UNICODE,  # implied
            "_regex": compiled,
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @property
    def regex(self) -> re.Pattern[str]:
        """The compiled pattern (compiled once, when first needed)."""
        compiled = self._regex
        if compiled is None:
            compiled = re.compile(self.pattern, self.flags)
            object.__setattr__(self, "_regex", compiled)
        return compiled

    def _key(self) -> tuple[object, ...]:
        return (self.kind, self.pattern, self.flags, self.group, self.hints)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a frozen SecretPattern")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SecretPattern):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"SecretPattern(kind={self.kind!r}, pattern={self.pattern!r}, group={self.group})"


def _p(
    kind: str, pattern: str, group: int = 0, flags: int = 0, *, hints: tuple[str, ...]
) -> SecretPattern:
    return SecretPattern(kind, pattern, group, hints, flags)


SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    _p(
        "private_key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
        r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        hints=("private key",),
    ),
    _p("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{16,}", hints=("sk-ant-",)),
    _p("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", hints=("sk-",)),
    _p(
        "aws_access_key",
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
        hints=("akia", "asia", "abia", "acca"),
    ),
    _p(
        "aws_secret_key",
        r"(?i)\baws_?secret_?access_?key\b[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})",
        group=1,
        hints=("secret",),
    ),
    _p(
        "github_token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        hints=("gh", "github_pat_"),
    ),
    _p("gitlab_token", r"\bglpat-[A-Za-z0-9_\-]{20,}", hints=("glpat-",)),
    _p("slack_token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", hints=("xox",)),
    _p(
        "slack_webhook",
        r"https://hooks\.slack\.com/services/[A-Za-z0-9/]+",
        hints=("hooks.slack.com",),
    ),
    _p("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}", hints=("aiza",)),
    _p("stripe_key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", hints=("_live_", "_test_")),
    _p("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}", hints=("hf_",)),
    _p(
        "jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", hints=("eyj",)
    ),
    _p("bearer_token", r"(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{16,}=*)", group=1, hints=("bearer",)),
    _p(
        "url_password",
        r"\b[a-zA-Z][a-zA-Z0-9+.\-]{1,20}://[^\s:/@]{1,256}:([^\s@/]{1,256})@",
        group=1,
        hints=("://",),
    ),
    _p(
        "assigned_secret",
        r"(?i)\b(?:api[_-]?key|apikey|secret[_-]?key|client[_-]?secret|access[_-]?token|"
        r"auth[_-]?token|password|passwd|pwd)\b[\"']?\s*[:=]\s*[\"']?([^\s\"',;]{8,})",
        group=1,
        hints=("key", "secret", "token", "pass", "pwd"),
    ),
)


_CACHED_MAX_LEN = 256
"""Texts up to this length are memoised: keys, kinds, ids and labels repeat in every record."""


def scrub_text(text: str) -> str:
    """Return `text` with every credential replaced by ``[REDACTED:<kind>]``.

    Every layer scrubs what it writes (a turn's input reaches the episodic store, the learning
    outcome and the ledgers), so the same short strings come back many times per turn: they are
    memoised. Text holding none of a pattern's hints skips that pattern's regex (substring
    scans are ~10x faster than even one case-insensitive alternation of every hint).
    """
    if not text:
        return text
    if len(text) <= _CACHED_MAX_LEN:
        done = SCRUBBED.get(text)
        if done is None:
            if len(SCRUBBED) >= _CACHED_ENTRIES:
                SCRUBBED.clear()
            done = SCRUBBED[text] = _scrub(text)
        return done
    return _scrub(text)


_CACHED_ENTRIES = 8192
SCRUBBED: dict[str, str] = {}
"""Short texts already scrubbed, and their scrubbed form (bounded: cleared when full).

A plain dict rather than `functools.lru_cache` so the ledger's walk over a record's hundreds
of strings can look each up without two function calls (``SCRUBBED.get(s) or scrub_text(s)``).
Only `scrub_text` writes it."""


def _scrub(text: str) -> str:
    lower = text.lower()
    for pattern in SECRET_PATTERNS:
        if not any(hint in lower for hint in pattern.hints):
            continue
        if pattern.group == 0:
            text = pattern.regex.sub(f"[REDACTED:{pattern.kind}]", text)
        else:
            text = pattern.regex.sub(_group_replacer(pattern), text)
    return text


def _group_replacer(pattern: SecretPattern) -> Any:
    def replace(match: re.Match[str]) -> str:
        start, end = match.span(pattern.group)
        whole_start = match.start()
        value = match.group(0)
        if value[start - whole_start : end - whole_start].startswith("[REDACTED:"):
            return value
        return (
            value[: start - whole_start] + f"[REDACTED:{pattern.kind}]" + value[end - whole_start :]
        )

    return replace


def scrub(value: Any) -> Any:
    """Scrub credentials out of any JSON-like value: strings, and dict/list/tuple containers.

    Keys are scrubbed as well as values. Other types pass through unchanged.
    """
    kind = type(value)  # exact types first: the Mapping check below is an ABC (slow) one
    if kind is str:
        return SCRUBBED.get(value) or scrub_text(value)
    if kind is dict:
        return {
            (scrub_text(k) if type(k) is str else k): (
                v if v is None or type(v) in _PLAIN else scrub(v)
            )
            for k, v in value.items()
        }
    if kind in _PLAIN:
        return value
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, Mapping):
        return {(scrub_text(k) if isinstance(k, str) else k): scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, tuple):
        return tuple(scrub(v) for v in value)
    return value


_PLAIN = frozenset({int, float, bool})
"""Types `scrub` returns as they are without a closer look."""


def contains_secret(text: str) -> bool:
    """True if `text` holds anything the table recognises as a credential."""
    return scrub_text(text) != text
