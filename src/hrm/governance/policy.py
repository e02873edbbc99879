"""The governance policy (001 §12.1): the default `PolicySurface`, a test override, and lexicons.

`PolicySurface` itself lives in `hrm.config` (config files may override its fields); this module
holds the process-wide default instance `POLICY` that 001 §12.1 calls the global singleton, a
context manager to swap it in tests (STYLE §8), and the word lists the deterministic signals and
the arbiter match on. The lists are policy, not code: they sit here, versioned with the tunables,
so a reviewer reads in one place what counts as an emergency or an urgency marker.

Components receive a policy through their constructor; `current_policy()` is only the default
when a caller passes none.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from hrm.config import PolicySurface

__all__ = [
    "CITATION_PATTERNS",
    "DEADLINE_MARKERS",
    "EMERGENCY_MARKERS",
    "EMERGENCY_PRIORITY",
    "HEDGE_MARKERS",
    "POLICY",
    "RECENT_REFERENCE_DAYS",
    "STALENESS_HORIZON_SECONDS",
    "URGENCY_MARKERS",
    "PolicySurface",
    "current_policy",
    "override_policy",
]

POLICY = PolicySurface()
"""The default policy (001 §12.1 "global singleton"); validated on first use, not on import."""

EMERGENCY_PRIORITY = 9
"""A `TurnInput.priority` at or above this is an emergency by itself (on the 1–10 scale)."""

EMERGENCY_MARKERS: tuple[str, ...] = (
    r"\bproduction (?:is |went )?down\b",
    r"\bprod (?:is |went )?down\b",
    r"\b(?:site|service|server|system|app|api|database|db) (?:is |went )?down\b",
    # Not a thing named after one ("our outage postmortem template", "an outage drill"), nor
    # a label ("mark the ticket as urgent").
    r"\boutages?\b(?!\s+(?:postmortems?|post-mortems?|reports?|templates?|reviews?|history"
    r"|pages?|notifications?|windows?|drills?|simulations?|plans?|runbooks?|process)\b)",
    r"\burgent(?:ly)?\b(?<!as urgent)(?<!as urgently)",
    r"\basap\b",
    # Not the things named after one: "an emergency fund", "emergency contact", "exit".
    r"\bemergency\b(?!\s+(?:funds?|contacts?|exits?|kits?|numbers?|brakes?|savings|rooms?"
    r"|services|plans?|procedures?|lights?|stop)\b)",
    r"\bsecurity (?:breach|incident|hole)\b",
    r"\bbreach\b(?!\s+of\s+(?:contract|the contract|confidentiality|trust|duty))",
    # Data being lost, not a wish to avoid it ("without losing data", "prevent data loss").
    # Each opens with its words, so the marker index rules it out of most texts at once.
    r"\bdata loss\b(?<!without data loss)(?<!avoid data loss)(?<!avoiding data loss)"
    r"(?<!prevent data loss)(?<!preventing data loss)(?<!no data loss)(?<!not data loss)",
    r"\blosing data\b(?<!without losing data)(?<!avoid losing data)(?<!not losing data)",
    r"\blosing any data\b(?<!without losing any data)(?<!avoid losing any data)"
    r"(?<!not losing any data)",
    r"\bdata (?:is |was )?(?:deleted|corrupted|leaked)\b",
    r"\bon fire\b",
    r"\bcritical (?:bug|issue|failure|incident)\b",
    r"\bsev ?[01]\b",
    r"\bp0\b",
    r"!!!",
)
"""Regexes (case-insensitive) that make an input an emergency: it may preempt any focus."""

URGENCY_MARKERS: tuple[str, ...] = (
    r"\bquick(?:ly)?\b",
    r"\bimmediately\b",
    r"\bright away\b",
    r"\bas soon as possible\b",
    r"\bhurry\b",
    r"\btime[- ]sensitive\b",
    r"\bblock(?:ing|ed|er)\b",
    r"\bimportant\b",
    r"\bpriority\b",
    r"\bcritical\b",
    r"\bbroken\b",
    r"\bfailing\b",
)
"""Regexes for words that raise urgency without making an input an emergency."""

DEADLINE_MARKERS: tuple[str, ...] = (
    r"\bby (?:tomorrow|tonight|today|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|noon|eod|end of (?:the )?day|end of (?:the )?week|\d{1,2}(?::\d{2})?\s*(?:am|pm)?)\b",
    r"\btoday\b",
    r"\btonight\b",
    # "I need it now", not "Now tighten the closing", "for now", "from now on", "now that",
    # "it uses setup.py right now", `datetime.now()` (D59): after a word and a space, and not
    # after these; nor a state reached ("everything is fine now", "it works now").
    r"\bnow\b(?<=\w now)(?<!for now)(?<!from now)(?<!until now)(?<!till now)(?<!by now)"
    r"(?<!just now)(?<!and now)(?<!right now)(?!\s+(?:that|on)\b)(?!\()"
    r"(?<!fine now)(?<!ok now)(?<!okay now)(?<!good now)(?<!works now)(?<!working now)"
    r"(?<!back now)(?<!up now)(?<!fixed now)(?<!resolved now)(?<!stable now)(?<!green now)"
    r"(?<!passes now)(?<!passing now)(?<!better now)(?<!done now)(?<!gone now)"
    # nor a trouble described as it stands: "the tests for it are failing now" (D78).
    r"(?<!failing now)(?<!crashing now)(?<!erroring now)(?<!broken now)(?<!hanging now)",
    r"\bdeadline\b",
    # "the report is due Friday", "overdue"; not "due to a bug", "a due date column".
    r"\bdue\b(?!\s+(?:to|dates?|diligence)\b)",
    r"\boverdue\b",
    r"\bbefore (?:the )?(?:meeting|demo|release|launch|deploy)\b",
    r"\bwithin (?:the )?(?:hour|\d+ (?:minutes?|hours?))\b",
)
"""Regexes for deadlines ("by tomorrow", "today", "now"); each distinct hit adds urgency."""

HEDGE_MARKERS: tuple[str, ...] = (
    "maybe",
    "perhaps",
    "might",
    "probably",
    "possibly",
    "sometimes",
    "not sure",
    "i think",
    "i guess",
    "kind of",
    "sort of",
    "starting to",
    "for now",
    "today",
)
"""Phrases that make a claim tentative: a contradiction they carry is MEDIUM, not HIGH."""

CITATION_PATTERNS: tuple[str, ...] = (
    r"https?://\S+",
    r"\baccording to\b",
    r"\[\d+\]",
    r"\bdoi:\s*10\.\d{4,9}/\S+|\b10\.\d{4,9}/[^\s\"<>]+",
    r"(?:^|[\s(`'\"])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.\w{1,5}(?::\d+(?:-\d+)?)?",
    r"(?<![\w.-])[\w.-]+\.(?:py|js|ts|md|go|rs|java|c|h|cpp|toml|yaml|yml|json):\d+\b",
    r"\b(?:see|cf\.|source:|per)\s+(?:the\s+)?(?:docs?|documentation|rfc\s*\d+|spec)\b",
)
"""Regexes that count as citations in source quality: URLs, "according to", [n], DOIs,
file paths and file:line references, pointers to docs or RFCs. The file:line pattern starts
only where a name starts: begun at every dot of "a.a.a.…", it took 12 s on a 20 kB message."""

RECENT_REFERENCE_DAYS = 365
"""A dated reference at most this many days old counts as recent (raises source quality)."""

STALENESS_HORIZON_SECONDS = 30 * 60
"""An active problem without progress for this long is fully stale (001 §12.3: 1 at 30 min)."""


def current_policy() -> PolicySurface:
    """The policy in force for callers that pass none: `POLICY`, or the one a test installed."""
    return POLICY


@contextlib.contextmanager
def override_policy(policy: PolicySurface) -> Iterator[PolicySurface]:
    """Swap the default policy for the duration of a ``with`` block (tests only).

    The policy is validated first, so a test cannot run against an impossible policy. Components
    built inside the block with no explicit policy take this one; ones built before keep theirs.

    Example:
        >>> with override_policy(PolicySurface(AUTO_PREEMPT_THRESHOLD=0.9)):
        ...     kernel = GovernanceKernel.create()
    """
    global POLICY
    policy.validate(source="override_policy")
    previous = POLICY
    POLICY = policy
    try:
        yield policy
    finally:
        POLICY = previous
