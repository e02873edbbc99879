"""The PreemptScoreArbiter (001 §12.3): does this input stay, switch, queue, or ask?

Policy C (priority + TTL) with D (ask the person) as tie-breaker. The arbiter is pure with
respect to storage: it reads the `ProblemRegistry` and never writes. When an input is about
something new it returns an UNSAVED candidate `Problem` with a provisional ``prob_…`` id;
Focus persists it (active on switch, queued on queue) under that same id, and an ``ask``
persists nothing — the person decides first.

Which problem an input belongs to (`_identify_candidate`), in order:

1. what the person asked for: a request to switch — "back to X", "return to X", "resume X",
   "switch to X" — whose X names a problem title (keyword similarity ≥ 0.5, X containing every
   title keyword, two of the title's words, or one that no other open problem's title has),
   switched to without a score: the person is the authority over their own focus; a message
   that opens by setting something aside ("Forget the offsite for now, …", D81) is about what
   follows, and when what it set aside is the work in focus, another problem that is about is
   switched to likewise and nothing in it continues the work it left; then a focus
   request ("let's focus on X for the next 3 turns", `focus_requests`, D54): the problem X names
   (switched to likewise), else the active problem, of which X is a part (a new problem titled
   by X only with nothing active, or in an emergency); then a mention — "about X",
   "regarding X" — whose X names a title by the strict rule (all its words, or similarity
   ≥ 0.5), which the score arbitrates;
2. a continuation: no content words at all ("ok, go on") continues the active problem; a short
   follow-up (≤ 3 content words) that refers back ("it", "that", "this", "also", "again") or
   opens with a connective ("and", "then", "next", "so") continues the problem the last input
   went to — the active one, or a queued or paused one the last input was queued as (D51);
3. the best `ProblemRegistry.find_similar` match at or above ``SIMILARITY_THRESHOLD``;
   then the problem the last input went to when the input continues that exchange (two shared
   content words, D44; a queued or paused problem too, D51), or, while a commitment on the
   active problem runs, the active problem when the input shares a word with the commitment
   (D49); then the one open problem whose title shares two content words with the input, and
   the problem the last input went to when the input is a question or a request about the
   answer without urgency (`follow_ups`, D59), or the one a mention in it names by a word only
   that title has — none of these when the input opens by saying it is about something else
   ("Unrelated: …", "Quick question, …");
4. otherwise a new candidate titled by the input's first sentence, with priority 5 raised by
   markers (urgency words or deadlines → 6, both → 7, an emergency marker → 8) and by
   ``TurnInput.priority`` when that is higher (clamped to the policy's scale). While a
   commitment whose length the person gave runs on the active problem, a new candidate that
   would only be queued stays with the active problem instead (`decide`, D56).

An input is an emergency (`_is_emergency`) when it carries an emergency marker
(`policy.EMERGENCY_MARKERS`: "production is down", "outage", "urgent", "asap", "security
breach", "data loss", "!!!" …), when ``TurnInput.priority`` ≥ ``EMERGENCY_PRIORITY`` (9), or
when its metadata sets ``emergency: true``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

from hrm._text import shorten
from hrm._wordlists import HeadIndex
from hrm.governance.policy import EMERGENCY_PRIORITY, STALENESS_HORIZON_SECONDS
from hrm.governance.problems import (
    SIMILARITY_THRESHOLD,
    Problem,
    ProblemMatch,
    ProblemRegistry,
    ProblemStatus,
    extract_keywords,
    keyword_similarity,
)
from hrm.governance.signals import (
    DerivedSignals,
    deadline_markers_in,
    emergency_markers_in,
    urgency_markers_in,
)
from hrm.reading.pasted import error_line, spoken
from hrm.reading.rules.cues import cues_of, without_announcement, without_lead_in
from hrm.reading.rules.focus import FocusRequest, SetAside
from hrm.reading.sentences import sentence_spans
from hrm.reading.types import Cues
from hrm.types import Clock, HRMContext, Stance, TurnInput, system_clock

if TYPE_CHECKING:
    from hrm.config import PolicySurface

__all__ = [
    "EXPLICIT_SWITCH",
    "ArbitrationDecision",
    "ArbitrationDisposition",
    "CommitmentView",
    "FocusState",
    "PreemptScoreArbiter",
    "asks_for_the_other",
    "named_problem",
    "others_open",
    "preempt_score",
    "resume_target",
]

_NOTHING_NAMED = "resume request: no open problem is named"
"""How arbitration names "resume the garden project" when no open problem is the garden
project: it stays where it is, and the turn says so and asks (step ``moves``)."""
EXPLICIT_REFERENCE_THRESHOLD = 0.5
"""Keyword similarity between "back to X"'s X and a problem title that counts as naming it."""

_SWITCH_REQUEST = re.compile(
    r"\b(?:(?:go|get|come|going|getting) back to|back to|return(?:ing)? to|resum(?:e|ing)|"
    r"switch(?:ing)? (?:back )?to|let'?s do)\s+(?:the\s+|my\s+|our\s+)?(?P<ref>[^.,;:!?\n]+)",
    re.IGNORECASE,
)
"""A request to move to work that names it: it switches when its words name an open problem
(`_named_problem`), and is an ordinary message otherwise."""
_MOVE_VERBS = ("talk about", "work on", "turn to", "move on to", "get to", "get back to",
               "pick up", "continue with")  # fmt: skip
_WISH_TO_MOVE = re.compile(
    r"\b(?:let'?s|can we|could we|shall we|i'?d like to|i want to|i wanna)\s+"
    r"(?:" + "|".join(v.replace(" ", r"\s+") for v in _MOVE_VERBS) + r")"
    r"\s+(?:the\s+|my\s+|our\s+)?(?P<ref>[^.,;:!?\n]+)",
    re.IGNORECASE,
)
"""A wish to take up work now, "can we talk about the newsletter for a bit" (D430): a switch
request as `_SWITCH_REQUEST` is; searched only in a message holding one of `_MOVE_VERBS` (its
leads, "can we", "let's", are in most messages)."""
_NAME_ALONE = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|and|now|next|then|right|alright|fine|cool|great)\W+)+"
    r"(?:on\s+to\s+|onto\s+)?(?:the\s+|my\s+|our\s+)?(?P<ref>[^.,;:!?\n]+?)"
    r"(?:\s+(?:now|next|then|again|pls|please|thing|one|stuff|part))*\W*$",
    re.IGNORECASE,
)
"""A turn to work said as its name alone after "ok", "now" or "next" ("ok the invitations",
"now the flights", "ok, honeymoon now"): a switch when the name is an open problem's (D460).
A lead word is required: a bare name ("the logs") continues the work as often as it turns."""
_NAME_ALONE_CHARS = 60
_THE_OTHER = re.compile(
    r"^\s*(?:the\s+)?other(?:\s+(?:one|thing|problem|topic|task|issue)s?)?\s*$", re.IGNORECASE
)
""""back to the other thing", "ok the other one now": the one open problem not in focus."""


_OTHER_ALONE = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|now|then|right|alright)\W+)*(?:back\s+to\s+|on\s+to\s+)?"
    r"(?P<ref>(?:the\s+)?other(?:\s+(?:one|thing|problem|topic|task|issue))?)"
    r"(?:\s+(?:now|then|please|pls))?\W*$",
    re.IGNORECASE,
)
""""the other one" said alone, no lead word needed: it names nothing but the other open work
(D495)."""


def others_open(registry: ProblemRegistry) -> list[Problem]:
    """The open problems that are not the active one."""
    return [
        p for p in registry.list()
        if p.status not in (ProblemStatus.RESOLVED, ProblemStatus.ACTIVE)
    ]


def asks_for_the_other(text: str) -> bool:
    """Is `text` only "the other one" (with "ok", "back to", "now" around it)?"""
    return len(text) <= _NAME_ALONE_CHARS and _OTHER_ALONE.match(text) is not None


def _the_other(registry: ProblemRegistry) -> Problem | None:
    """The open problem that is not the active one, when there is exactly one (D460)."""
    others = others_open(registry)
    return others[0] if len(others) == 1 else None
EXPLICIT_SWITCH = "explicit switch request"
"""How a candidate the person asked to move to is matched (`Arbitration.candidate_match`)."""
_MENTION = re.compile(
    r"\b(?:about|regarding|re:|on|for)\s+(?:the\s+|my\s+|our\s+)?(?P<ref>[^.,;:!?\n]+)",
    re.IGNORECASE,
)
_REFERS_BACK = re.compile(
    r"\b(?:it|its|that|this|those|these|them|also|too|again|same|above)\b", re.IGNORECASE
)
_CONNECTIVE = re.compile(r"^\s*(?:and|also|then|next|now|so|ok(?:ay)?|great|cool)\b", re.I)
_PROPOSAL = re.compile(r"^\W*(?:(?:ok(?:ay)?|so|alright|right)\W+)*let'?s\s", re.IGNORECASE)
"""A proposal about the work ("Let's do the partitioning now"): its "now" sets the pace of the
work at hand; it presses no problem of its own (D78)."""
_THE_WORK = frozenset(("", "it", "that", "this", "this one", "that one"))
"""What a set-aside ("Never mind that, …") says when it means the work in focus (D81)."""
_FOLLOW_UP_MAX_KEYWORDS = 3
_SHARED_WITH_LAST = 2
"""Content words an input shares with the last one to continue its topic (`_continues_last`)."""
_REFERENCE_WORDS = HeadIndex({"switch": [_SWITCH_REQUEST], "mention": [_MENTION]})
"""Which of the two reference patterns can match a text (most inputs request no switch)."""


class ArbitrationDisposition(StrEnum):
    """What to do with an input relative to the active problem (001 §12.3)."""

    STAY = "stay"
    """Continue the active problem."""
    SWITCH = "switch"
    """Auto-switch to the candidate problem."""
    ASK = "ask"
    """Ask the person (D tie-breaker); nothing else changes."""
    QUEUE = "queue"
    """Queue the candidate; do not interrupt."""


class CommitmentView(Protocol):
    """What the arbiter reads of a commitment (001 §4.3 ``Commitment`` satisfies it)."""

    @property
    def id(self) -> str: ...
    @property
    def problem_id(self) -> str: ...
    @property
    def turns_remaining(self) -> int: ...
    @property
    def turns_total(self) -> int: ...
    @property
    def description(self) -> str: ...
    @property
    def holds_focus(self) -> bool: ...


@dataclass(frozen=True, kw_only=True)
class FocusState:
    """Focus as arbitration sees it: the turn's context, the stance and the active commitment."""

    context: HRMContext
    stance: Stance = Stance.SENSEMAKING
    commitment: CommitmentView | None = None
    """The active commitment; a switch near its finish line costs more."""


@dataclass(frozen=True, kw_only=True)
class ArbitrationDecision:
    """Output of the arbiter (001 §12.3), plus what Focus needs to act and to record why."""

    active_problem_id: str | None
    """The problem in focus now (001 types it ``str``; it is None when nothing is active)."""
    disposition: ArbitrationDisposition
    preempt_score: float
    reason: str
    candidate_problem_id: str | None = None
    candidate: Problem | None = None
    """The candidate itself; unsaved when `is_new_candidate`."""
    is_new_candidate: bool = False
    candidate_match: str | None = None
    """How the input was tied to the candidate: ``explicit switch request``, ``focus request
    naming it`` (and the other ``focus request …`` of D54), ``continuation``, ``similar 0.42``,
    ``continues the last exchange``, ``within the active commitment``, ``shares two words with
    its title``, ``follow-up naming it``, ``follow-up in the conversation``, ``new`` (a `/why`
    answers "why this problem?" with it)."""
    explicit_request: bool = False
    """The person asked to switch by name ("back to X") or to focus on a topic elsewhere."""
    emergency: bool = False
    components: dict[str, float] = field(default_factory=dict)
    """The four PreemptScore terms, when a score was computed."""

    def to_record(self) -> dict[str, Any]:
        """The ``arbitration`` event payload for the decision ledger."""
        return {
            "disposition": self.disposition.value,
            "preempt_score": round(self.preempt_score, 4),
            "reason": self.reason,
            "active_problem_id": self.active_problem_id,
            "candidate_problem_id": self.candidate_problem_id,
            "candidate": self.candidate.to_record() if self.candidate else None,
            "is_new_candidate": self.is_new_candidate,
            "candidate_match": self.candidate_match,
            "explicit_request": self.explicit_request,
            "emergency": self.emergency,
            "components": {k: round(v, 4) for k, v in self.components.items()},
        }


@dataclass(frozen=True, slots=True)
class _Candidate:
    problem: Problem
    is_new: bool
    explicit_switch: bool
    how: str


class _Undecided:
    """What `_asked_for` returns when the person asked for nothing in so many words."""


_UNDECIDED = _Undecided()


def preempt_score(
    policy: PolicySurface,
    *,
    candidate_priority: float,
    active_priority: float,
    urgency: float,
    staleness: float,
    switch_cost: float,
) -> float:
    """001 §12.3's four-term PreemptScore, in [0, 1].

    Rises with the candidate's priority, urgency and the active problem's staleness; falls with
    the active problem's priority and the switch cost. Inputs outside their range are clamped.
    """
    top = policy.PRIORITY_SCALE[1]
    p_new = _unit(candidate_priority / top)
    p_active = _unit(active_priority / top)
    priority_term = (p_new - p_active + 1) / 2
    score = (
        policy.WEIGHT_PRIORITY * priority_term
        + policy.WEIGHT_URGENCY * _unit(urgency)
        + policy.WEIGHT_STALENESS * _unit(staleness)
        + policy.WEIGHT_SWITCH_COST * (1 - _unit(switch_cost))
    )
    return _unit(score)


Relatedness = Callable[[str, str], float | None]
"""How alike two texts are in meaning (a sentence model's cosine), or None when unknown."""

RELATED_AT = 0.1
"""At or above this MiniLM cosine a remark on the person's own subject ("Our budget is about
5000 euros" while planning a trip: 0.27) is a detail of the conversation, not a problem of its
own (D79). Of 14 such details measured, 13 scored 0.115–0.44 (a knee problem on a hiking trip:
0.055); of 10 remarks on unrelated subjects, 9 scored under 0.071 (a laptop battery beside a
budget spreadsheet: 0.123)."""
UNRELATED_BELOW = 0.03
"""Below this MiniLM cosine a follow-up on the person's own subject is a new topic (D68).
Questions about the people around the work ("My editor thinks the pacing is slow, how do I
fix it?" while writing a novel: 0.042) score low too, so the line sits under every such
follow-up measured; 7 of 11 new topics fall below it (a laptop's battery: −0.008)."""


class PreemptScoreArbiter:
    """Decides stay | switch | ask | queue for one input (001 §12.3).

    Args:
        policy: Thresholds and weights.
        clock: "Now" for staleness; must return aware datetimes like the registry stores.
        similarity_threshold: `find_similar` score that ties an input to an existing problem.
        relatedness: A sentence model's similarity of two texts (cosine, or None when it
            cannot say), asked only about a question on a subject of the person's own that
            would otherwise follow the conversation (D68). None: words alone decide.
    """

    def __init__(
        self,
        policy: PolicySurface,
        *,
        clock: Clock = system_clock,
        similarity_threshold: float = SIMILARITY_THRESHOLD,
        relatedness: Relatedness | None = None,
    ) -> None:
        self.policy = policy
        self._clock = clock
        self._similarity_threshold = similarity_threshold
        self._relatedness = relatedness

    def decide(
        self,
        turn_input: TurnInput,
        focus_state: FocusState,
        problem_registry: ProblemRegistry,
        signals: DerivedSignals,
        cues: Cues | None = None,
    ) -> ArbitrationDecision:
        """Main arbitration entry point: a decision with its disposition and reason.

        `cues` are what the reading stage read in the input (`hrm.reading`): whether it
        follows the conversation, announces something else, asks to resume, sets work aside,
        commits focus. Without them they are read here, through the same reader
        (`cues_of`): arbitration never reads a message with patterns of its own.
        """
        if cues is None:
            cues = cues_of(spoken(turn_input.text.strip()))
        active = problem_registry.get_active()
        found = self._identify_candidate(
            turn_input, problem_registry, active, focus_state.commitment, cues=cues
        )
        candidate = found.problem if found else None
        base: dict[str, Any] = {
            "candidate": candidate,
            "candidate_problem_id": candidate.id if candidate else None,
            "is_new_candidate": bool(found and found.is_new),
            "candidate_match": found.how if found else None,
            "explicit_request": bool(found and found.explicit_switch),
        }
        settled = _uncontested(active, candidate, found, base)
        if settled is not None:
            return settled
        assert active is not None and candidate is not None  # `_uncontested` settles the rest
        if self._is_emergency(turn_input, focus_state):
            return ArbitrationDecision(
                active_problem_id=candidate.id,
                disposition=ArbitrationDisposition.SWITCH,
                preempt_score=1.0,
                reason="Emergency gate triggered",
                emergency=True,
                **base,
            )
        return self._scored(candidate, active, found, signals, focus_state, cues, base)

    def _scored(
        self,
        candidate: Problem,
        active: Problem,
        found: _Candidate | None,
        signals: DerivedSignals,
        focus_state: FocusState,
        cues: Cues,
        base: dict[str, Any],
    ) -> ArbitrationDecision:
        """Another problem than the active one: the preempt score and its band decide."""
        components = self._components(candidate, active, signals, focus_state)
        score = preempt_score(self.policy, **components)
        p = self.policy
        if found is not None and found.explicit_switch:
            disposition = ArbitrationDisposition.SWITCH
            reason = (
                f"Explicit request to {_asked(found.how)} '{candidate.title}' "
                f"(score {score:.3f})"
            )
        elif score >= p.AUTO_PREEMPT_THRESHOLD:
            disposition = ArbitrationDisposition.SWITCH
            reason = f"Auto-preempt: score {score:.3f} >= {p.AUTO_PREEMPT_THRESHOLD}"
        elif score >= p.ASK_BAND_LOW:
            disposition = ArbitrationDisposition.ASK
            reason = (
                f"Ask user: score {score:.3f} in ask-band [{p.ASK_BAND_LOW}, {p.ASK_BAND_HIGH})"
            )
        elif (
            found is not None
            and found.is_new
            and _leased(focus_state.commitment, active)
            and not cues.opens_new_topic
        ):
            return ArbitrationDecision(
                active_problem_id=active.id,
                disposition=ArbitrationDisposition.STAY,
                preempt_score=score,
                reason=(
                    f"Within the commitment on the active problem: a new topic scoring "
                    f"{score:.3f} < {p.ASK_BAND_LOW} stays with it"
                ),
                components=components,
                candidate=active,
                candidate_problem_id=active.id,
                candidate_match="within the active commitment",
            )
        else:
            disposition = ArbitrationDisposition.QUEUE
            reason = f"Queue: score {score:.3f} < {p.ASK_BAND_LOW}"
        return ArbitrationDecision(
            active_problem_id=active.id,
            disposition=disposition,
            preempt_score=score,
            reason=reason,
            components=components,
            **base,
        )

    # ── score terms ────────────────────────────────────────────────────────

    def _components(
        self,
        candidate: Problem,
        active: Problem,
        signals: DerivedSignals,
        focus_state: FocusState,
    ) -> dict[str, float]:
        return {
            "candidate_priority": float(candidate.priority),
            "active_priority": float(active.priority),
            "urgency": signals.urgency,
            "staleness": self._compute_staleness(active),
            "switch_cost": self._compute_switch_cost(focus_state),
        }

    def _compute_preempt_score(
        self,
        candidate: Problem | None,
        active: Problem,
        signals: DerivedSignals,
        focus_state: FocusState,
    ) -> float:
        """001's four-term score; a missing candidate counts as priority 5."""
        if candidate is None:
            candidate = replace(active, priority=5)
        terms = self._components(candidate, active, signals, focus_state)
        return preempt_score(self.policy, **terms)

    def _compute_staleness(self, active: Problem) -> float:
        """Time since the active problem progressed: 0 now, 1 at 30 minutes or more."""
        elapsed = (self._clock() - active.last_progress_at).total_seconds()
        return _unit(elapsed / STALENESS_HORIZON_SECONDS)

    def _compute_switch_cost(self, focus_state: FocusState) -> float:
        """Base 0.3, plus up to 0.4 the closer the active commitment is to its finish line."""
        cost = 0.3
        commitment = focus_state.commitment
        if commitment is not None and commitment.turns_total > 0:
            remaining_ratio = _unit(commitment.turns_remaining / commitment.turns_total)
            cost += 0.4 * (1 - remaining_ratio)
        return min(1.0, cost)

    # ── classification of the input ────────────────────────────────────────

    def _is_emergency(self, turn_input: TurnInput, focus_state: FocusState | None) -> bool:
        """Emergency markers, priority ≥ 9, or ``metadata["emergency"] is True``.

        ``focus_state`` is part of 001's signature; an emergency preempts whatever the
        commitment, so it is not consulted.
        """
        del focus_state
        if turn_input.priority >= EMERGENCY_PRIORITY:
            return True
        if (turn_input.metadata or {}).get("emergency") is True:
            return True
        return bool(emergency_markers_in(turn_input.text))

    def _identify_candidate(
        self,
        turn_input: TurnInput,
        problem_registry: ProblemRegistry,
        active: Problem | None = None,
        commitment: CommitmentView | None = None,
        *,
        moving_on: bool = False,
        cues: Cues | None = None,
    ) -> _Candidate | None:
        """Which problem this input belongs to, or a new unsaved candidate (module docstring).

        `moving_on`: the person said they are leaving the work in focus ("Never mind that,
        …", D81), so nothing continues it, as after "Unrelated: …".

        The cues (a switch, a focus request, an announcement, a follow-up's form) are read in
        what the person says; the words that match a problem, in the whole message, pasted
        code and logs included (D71): a traceback naming ``validate`` is about the problem
        that did.
        """
        text = turn_input.text.strip()
        if not text:
            return None
        said = spoken(text)
        heard = turn_input if said is text else replace(turn_input, text=said)
        if cues is None:  # a text arbitration derived itself (what follows a set-aside)
            cues = cues_of(said)
        asked = self._asked_for(said, text, turn_input, problem_registry, active, commitment, cues)
        if not isinstance(asked, _Undecided):
            return asked
        keywords = extract_keywords(text)
        words = keywords if said is text else extract_keywords(said)
        # "Unrelated: …", "Quick question, …": the person says it is not the conversation's
        # next move, so no rule that continues the conversation applies (D59).
        continuing = not moving_on and not cues.opens_new_topic
        if (
            active is not None
            and continuing
            and self._continues(said, words)
            and (not words or cues.follow_up)  # "Also, I need to renew my passport"
        ):
            return self._continuation(said, turn_input, problem_registry, active, keywords,
                                      words, commitment)  # fmt: skip
        if not keywords:
            return None
        best = self._most_similar(text, problem_registry, active)
        if best is not None:
            return _Candidate(best.problem, False, False, f"similar {best.score:.2f}")
        if active is None and continuing:
            resumed = self._resumed(heard, problem_registry, keywords, cues)
            if resumed is not None:
                return resumed
        if active is None or not continuing:
            return self._fresh(turn_input, problem_registry)
        return self._placed(said, heard, turn_input, problem_registry, active, keywords,
                            commitment, cues)  # fmt: skip

    def _asked_for(
        self,
        said: str,
        text: str,
        turn_input: TurnInput,
        registry: ProblemRegistry,
        active: Problem | None,
        commitment: CommitmentView | None,
        cues: Cues,
    ) -> _Candidate | _Undecided | None:
        """What the person asked for in so many words: to resume, to close, to set the work
        aside, to switch to or focus on a problem, or a problem they named; `_UNDECIDED` when
        they asked none of it."""
        if cues.resume:
            resumed = _resume_target(turn_input.context, registry, active)
            if resumed is not None:
                return resumed
        if cues.resume_to:
            named = resume_target(cues.resume_to, registry)
            if named is not None:
                return _Candidate(named, False, True, EXPLICIT_SWITCH)
            if cues.resume_only:
                # A move back to work that is not open opens nothing: no problem is titled
                # "Resume the garden project".
                return None if active is None else _Candidate(active, False, False, _NOTHING_NAMED)
        if cues.closing:
            # "Thanks, that's all for today." ends the exchange: it brings no problem (D78).
            if active is None:
                return None
            return _Candidate(active, False, False, "a thanks or goodbye")
        aside = (
            SetAside(cues.aside, cues.aside_rest)
            if cues.aside is not None and said is text else None
        )
        if aside is not None and extract_keywords(aside.rest):
            return self._turning_from(aside, turn_input, registry, active, commitment)
        explicit = self._explicit_reference(said, registry, switch=True)
        if explicit is not None:
            return explicit
        request = FocusRequest(cues.focus_turns, cues.focus_topic) if cues.focus else None
        if request is not None:
            return self._focus_target(request, turn_input, registry, active)
        explicit = self._explicit_reference(said, registry, switch=False)
        if explicit is not None:
            return explicit
        return _UNDECIDED

    def _continuation(
        self,
        said: str,
        turn_input: TurnInput,
        registry: ProblemRegistry,
        active: Problem,
        keywords: tuple[str, ...],
        words: tuple[str, ...],
        commitment: CommitmentView | None,
    ) -> _Candidate:
        """The input continues the conversation: the problem its last exchanges were about."""
        # A paste with no words of the person's ("here's the log:") is material for the
        # conversation it comes into.
        last = (
            _last_problem(turn_input.context, registry, active, keywords, commitment)
            if words else None
        )
        if last is not None and last.id != active.id:
            # After an aside, "For the Terraform migration, should we do it service by
            # service?" names the problem it goes back to: the mention wins over "it".
            mentioned = self._explicit_reference(
                said, registry, switch=False, loose=True, opening=True
            )
            if mentioned is not None:
                return replace(mentioned, how="follow-up naming it")
        return _Candidate(last or active, False, False, "continuation")

    def _placed(
        self,
        said: str,
        heard: TurnInput,
        turn_input: TurnInput,
        registry: ProblemRegistry,
        active: Problem,
        keywords: tuple[str, ...],
        commitment: CommitmentView | None,
        cues: Cues,
    ) -> _Candidate:
        """An input with words of its own, like no stored problem, while one is active: the
        last exchange's problem, the commitment's, a title it shares, a remark on the work, a
        follow-up, or a new problem."""
        if _continues_last(keywords, turn_input.context):
            last = _last_problem(turn_input.context, registry, active, keywords, commitment)
            if last is not None:
                return _Candidate(last, False, False, "continues the last exchange")
        if _within_commitment(keywords, commitment, active):
            return _Candidate(active, False, False, "within the active commitment")
        sharing = _sharing_title(keywords, registry)
        if sharing is not None:
            return _Candidate(sharing, False, False, "shares two words with its title")
        if _opens_on_the_work(heard.text, active) and not self._pressing(heard):
            return _Candidate(active, False, False, "names the work in focus")
        follows = cues.follow_up
        if not follows:
            remark = self._remark_on(
                heard, turn_input, registry, active, keywords, commitment, cues
            )
            if remark is not None:
                return remark
        if follows and not self._pressing(heard):
            # A follow-up may say which of two threads it continues ("For the migration, how
            # do we handle the enum columns?" after an aside): one word only one title has.
            mentioned = self._explicit_reference(
                said, registry, switch=False, loose=True, opening=True
            )
            if mentioned is not None:
                return replace(mentioned, how="follow-up naming it")
            last = _last_problem(turn_input.context, registry, active, keywords, commitment)
            unrelated = self._unrelated(heard, last or active, cues)
            if unrelated is not None:
                return replace(self._fresh(turn_input, registry), how=unrelated)
            return _Candidate(last or active, False, False, "follow-up in the conversation")
        return self._fresh(turn_input, registry)

    def _turning_from(
        self,
        aside: SetAside,
        turn_input: TurnInput,
        registry: ProblemRegistry,
        active: Problem | None,
        commitment: CommitmentView | None,
    ) -> _Candidate | None:
        """Where "Forget the offsite for now, the payment webhook is failing" goes (D81): what
        the rest is about, titled by it. When what was set aside is the work in focus ("the
        offsite", "that", nothing named), nothing in the rest continues it (a question too is
        about something else), and another problem it is about is a switch the person asked
        for, as "switch to X" is. "Skip the tests for now, write the deploy script" sets aside
        a part of the work; its rest is weighed by the usual rules.
        """
        named = active is not None and (
            aside.aside.lower() in _THE_WORK
            or not set(extract_keywords(aside.aside)).isdisjoint(extract_keywords(active.title))
        )
        if active is not None and aside.aside.lower() in _THE_WORK:
            # "Forget that, my partner is vegan actually": what is taken back is the last
            # thing said, and what follows corrects a detail of the same conversation (D412).
            rest = replace(turn_input, text=aside.rest)
            corrected = self._remark_on(rest, rest, registry, active, (), commitment,
                                        cues_of(aside.rest))  # fmt: skip
            if corrected is not None:
                return replace(corrected, how=f"a correction after a set-aside: {corrected.how}")
        found = self._identify_candidate(
            replace(turn_input, text=aside.rest), registry, active, commitment, moving_on=named
        )
        if not named or found is None or active is None or found.problem.id == active.id:
            return found
        return replace(found, explicit_switch=True, how=f"set aside for {found.how}")

    def _remark_on(
        self,
        heard: TurnInput,
        turn_input: TurnInput,
        registry: ProblemRegistry,
        active: Problem,
        keywords: tuple[str, ...],
        commitment: CommitmentView | None,
        cues: Cues,
    ) -> _Candidate | None:
        """The problem a remark on the person's own subject details, if a sentence model finds
        it related (D79): "Our budget is about 5000 euros excluding flights" while planning a
        trip was a problem of its own, and the questions after it went to that problem. With
        no model, or below `RELATED_AT`, the remark is judged as before: its own subject.
        """
        if self._relatedness is None or not cues.remark:
            return None
        # A remark asks for nothing, so only trouble presses it (a deadline word is a detail
        # of the plan: "my partner eats fish now", "we land at 9 on Friday", D412).
        if self._is_emergency(heard, None) or urgency_markers_in(heard.text):
            return None
        problem = (
            _last_problem(turn_input.context, registry, active, keywords, commitment) or active
        )
        score = self._relatedness(self._reference(turn_input, problem), heard.text)
        if score is None or score < RELATED_AT:
            return None
        how = f"a remark on its own subject, {score:.2f} alike to the conversation"
        return _Candidate(problem, False, False, how)

    @staticmethod
    def _reference(turn_input: TurnInput, problem: Problem) -> str:
        """What an input on the person's own subject is compared with: the problem's title and
        the last input."""
        recent = getattr(turn_input.context, "recent_inputs", None) or []
        return f"{problem.title} {recent[-1] if recent else ''}".strip()

    def _unrelated(self, turn_input: TurnInput, problem: Problem, cues: Cues) -> str | None:
        """Why a follow-up on a subject of the person's own is not about `problem`, if it is
        not (D68): "Also, my laptop's battery drains really fast, any tips?" during a database
        upgrade. Only a sentence model tells it from "My replica is on a different host, does
        it need upgrading first?"; without one, or when it cannot say, the input follows.
        """
        if self._relatedness is None or not cues.own_subject:
            return None
        score = self._relatedness(self._reference(turn_input, problem), turn_input.text)
        if score is None or score >= UNRELATED_BELOW:
            return None
        return (
            f"new: its own subject, {score:.2f} alike to the conversation, "
            f"below {UNRELATED_BELOW}"
        )

    def _resumed(
        self,
        turn_input: TurnInput,
        registry: ProblemRegistry,
        keywords: tuple[str, ...],
        cues: Cues,
    ) -> _Candidate | None:
        """With no problem in focus, the open problem the input carries on, if any (D67).

        After `/resolve`, "what should the report cover?" — the last input had gone to the
        queued "I need to write the Q3 board report by Friday" — became a problem of its own,
        titled by the question: the follow-up rules asked for an active problem.
        """
        sharing = _sharing_title(keywords, registry)
        if sharing is not None:
            return _Candidate(sharing, False, False, "shares two words with its title")
        text = turn_input.text
        if not cues.follow_up or self._pressing(turn_input):
            return None
        mentioned = self._explicit_reference(text, registry, switch=False, loose=True)
        if mentioned is not None:
            return replace(mentioned, how="follow-up naming it")
        problem_id = _last_topic_id(turn_input.context)
        last = registry.get(problem_id) if problem_id else None
        if last is None or last.status is ProblemStatus.RESOLVED:
            return None
        return _Candidate(last, False, False, "follow-up in the conversation")

    def _fresh(self, turn_input: TurnInput, registry: ProblemRegistry) -> _Candidate:
        return _Candidate(self._new_candidate(turn_input, registry), True, False, "new")

    def _pressing(self, turn_input: TurnInput) -> bool:
        """Does a question carry urgency ("Why is the build broken?") that makes it a problem of
        its own for the score to weigh, rather than the conversation's next question?"""
        text = turn_input.text
        return self._is_emergency(turn_input, None) or bool(
            urgency_markers_in(text)
            or (deadline_markers_in(text) and not _PROPOSAL.match(spoken(text)))
        )

    def _explicit_reference(
        self,
        text: str,
        registry: ProblemRegistry,
        *,
        switch: bool,
        loose: bool = False,
        opening: bool = False,
    ) -> _Candidate | None:
        """The problem a request to switch (`switch`) or a mention names, if any; `loose`, a
        mention naming a title by part of it (`_named_problem`); `opening`, "on X" and "for X"
        only where they open the message ("For the migration, how …"), not as a preposition
        inside what it says ("we use the dirs crate for home paths", D414); "about X" anywhere
        ("a note about backups")."""
        for match in self._references(text, switch):
            if opening and _inside_what_is_said(text, match):
                continue
            # "back to X" names where the person was; "switch to X" may be a question about
            # a tool ("should I switch to Polars?"), so only its whole X names a problem.
            back = switch and not match.group(0).lower().startswith(("switch", "let"))
            named = _named_problem(
                match.group("ref"), registry, by_part=switch or loose, loose=back or loose
            )
            if named is None and switch and _THE_OTHER.match(match.group("ref")):
                named = _the_other(registry)
            if named is not None:
                how = EXPLICIT_SWITCH if switch else "explicit mention"
                return _Candidate(named, False, switch, how)
        return None

    @staticmethod
    def _references(text: str, switch: bool) -> Iterator[re.Match[str]]:
        """Where `text` asks to switch (`switch`) or mentions work: the matches, in order."""
        kinds = _reference_kinds(text)
        if not switch:
            if "mention" in kinds:
                yield from _MENTION.finditer(text)
            return
        if "switch" in kinds:
            yield from _SWITCH_REQUEST.finditer(text)
        low = text.lower()
        if any(verb in low for verb in _MOVE_VERBS):
            yield from _WISH_TO_MOVE.finditer(text)
        if len(text) <= _NAME_ALONE_CHARS:
            alone = _NAME_ALONE.match(text) or _OTHER_ALONE.match(text)
            if alone is not None:
                yield alone

    def _focus_target(
        self,
        request: FocusRequest,
        turn_input: TurnInput,
        registry: ProblemRegistry,
        active: Problem | None,
    ) -> _Candidate:
        """The problem a focus request ("let's focus on X for the next 3 turns") is about (D54).

        The person directs their own focus, so the request is explicit, as "switch to X" is:
        X names an open problem (by part of its title, or by similarity) → that problem;
        anything else is a part of the work in focus ("the database layer" while building a
        Flask API shares no word with it) → the active problem; with nothing active, or in an
        emergency (which must be able to switch), a new problem titled by X. The turn then
        commits to whichever problem this is.
        """
        topic = request.description
        keywords = extract_keywords(topic)
        if active is not None and not keywords:
            return _Candidate(active, False, False, "focus request on the active problem")
        named = _named_problem(topic, registry, by_part=True) if keywords else None
        if named is None and keywords:
            best = self._most_similar(topic, registry, active)
            named = best.problem if best is not None else None
        if named is not None:
            to_active = active is not None and named.id == active.id
            return _Candidate(named, False, not to_active, "focus request naming it")
        if active is not None and not self._is_emergency(turn_input, None):
            return _Candidate(active, False, False, "focus request within the active problem")
        title = request.title if keywords else None  # else titled by the input, as usual
        problem = self._new_candidate(turn_input, registry, title=title)
        return _Candidate(problem, True, True, "focus request on a new topic")

    def _most_similar(
        self, text: str, registry: ProblemRegistry, active: Problem | None
    ) -> ProblemMatch | None:
        """The best `find_similar` match, the active problem when it ties with the best."""
        matches = registry.find_similar(text, threshold=self._similarity_threshold)
        if not matches:
            return None
        best = matches[0]
        if active is not None:
            for match in matches:
                if match.problem.id == active.id and match.score >= best.score:
                    return match
        return best

    @staticmethod
    def _continues(text: str, keywords: tuple[str, ...]) -> bool:
        if not keywords:
            return True
        if len(keywords) > _FOLLOW_UP_MAX_KEYWORDS:
            return False
        return bool(_REFERS_BACK.search(text) or _CONNECTIVE.search(text))

    def _new_candidate(
        self, turn_input: TurnInput, registry: ProblemRegistry, *, title: str | None = None
    ) -> Problem:
        """An unsaved problem for the input, titled by `title` or by `title_of` its text."""
        text = turn_input.text.strip()
        return registry.build(
            title if title is not None else _pasted_title(text),
            description=text[:500],
            priority=self._candidate_priority(turn_input),
            status=ProblemStatus.QUEUED,
        )

    def _candidate_priority(self, turn_input: TurnInput) -> int:
        text = turn_input.text
        priority = 5
        if emergency_markers_in(text):
            priority = 8
        else:
            priority += bool(urgency_markers_in(text)) + bool(deadline_markers_in(text))
        low, high = self.policy.PRIORITY_SCALE
        if turn_input.priority >= low:
            priority = max(priority, turn_input.priority)
        return max(low, min(high, priority))


def title_of(text: str) -> str:
    """A new problem's title: its first sentence with content words, without what leads in.

    "Thanks. Our office wifi drops every afternoon" was titled "Thanks.", and "Also, my
    laptop's battery drains …" kept its "Also,": `/problems`, the status line and "switch
    to …" offers showed them. An announcement goes too ("Unrelated: …", D59). Sentences are
    split as the readers split them: "My professor is Mr. Lindqvist" is one (D429).
    """
    body = without_announcement(text.strip())
    body = _TAKEN_BACK.sub("", body, count=1) or body
    parts = [body[start:end] for start, end in sentence_spans(body, len(body))]
    saying = [part for part in parts if extract_keywords(part)]
    # An introduction or a report is the title only when nothing else says anything ("Hi! I
    # run a small online shop" is not titled "Hi!").
    first = next(
        (
            part for part in saying
            if not _DONE_REPORT.match(part) and not _INTRODUCTION.match(without_lead_in(part))
            and not _ALARM_WORDS.issuperset(re.findall(r"[a-z]+", part.lower()))
        ),
        saying[0] if saying else parts[0] if parts else body,
    )
    rest = without_lead_in(first)
    if extract_keywords(rest):
        first = rest
    return shorten(first, 80)


_ALARM_WORDS = frozenset(
    {"urgent", "urgently", "asap", "emergency", "help", "pls", "please", "important", "critical"}
)
"""A sentence of only these ("Urgent!!", "HELP!") says how pressing the message is, not what it
is about: no title (D457)."""
_TAKEN_BACK = re.compile(
    r"^\W*(?:(?:forget|ignore|scratch|disregard)\s+(?:that|what)\s+i\s+(?:just\s+)?"
    r"(?:asked|said|wrote)|(?:scratch|ignore|disregard)\s+that|never\s*mind(?:\s+that)?)"
    r"\s*[,.;:!\-–—]+\s*",
    re.IGNORECASE,
)
"""What takes back the message before ("Forget that I asked, whats the weather in Munich?"): no
part of the new problem's title (D453)."""


_DONE_REPORT = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|great|cool|nice|thanks|so)\W+)*(?:(?:it'?s|that'?s|that|it|i)\s+)?"
    r"(?:(?:got\s+it|fixed|done|solved|resolved|sorted|working|works|worked)(?:\s+(?:it|that|now))*)"
    r"\W*$",
    re.IGNORECASE,
)
"""A sentence that reports the last thing done ("Ok fixed.", "That worked!"): not a title."""


_INTRODUCTION = re.compile(
    r"^\W*(?:i\s+am|i'?m|we\s+are|we'?re)\s+(?:a|an|the)\s+(?!(?:bit|little|lot)\b)"
    r"[\w\s-]{0,40}?\b(?:engineer|developer|manager|lead|student|designer|founder|analyst"
    r"|scientist|consultant|admin(?:istrator)?|architect|writer|teacher|researcher|team|company"
    r"|startup|agency|freelancer|owner|director|head|member|intern|sre|devops|cto|ceo|pm)s?\b"
    r"|^\W*i\s+(?:work|manage|lead|run|head|own)\s+(?:at|for|on|in|as|the|a|an|our|my)\b"
    r"|^\W*my\s+name\s+is\b",
    re.IGNORECASE,
)
"""A sentence that introduces the person ("I manage the platform team.", "I'm a data engineer
at Spotify."): who they are, not the problem; a new problem is titled by what follows (D85)."""


def _pasted_title(text: str) -> str:
    """`title_of` what the person says (D71); with a paste's error line when that says little.

    "Ok fixed. Now this one is failing:" above a test and its ``AssertionError`` is titled
    "This one is failing: AssertionError: assert 2.9999999 == 3"; a paste alone, by its error
    line or else its first line.
    """
    said = spoken(text)
    if said is text:
        return title_of(text)
    error = error_line(text)
    if extract_keywords(said):
        title = title_of(said)
        if error is not None and len(extract_keywords(title)) < 3:
            return shorten(f"{title.rstrip(' .:;,')}: {error}", 80)
        return title
    first = next((line.strip() for line in text.split("\n") if line.strip("`~ \t")), text)
    return shorten(error or first, 80)


_DEFINITE_SUBJECT = re.compile(r"^(?:the|this|that)\s+([\w-]+)(?:\s+([\w-]+))?", re.IGNORECASE)


def _opens_on_the_work(text: str, active: Problem) -> bool:
    """Does the input open on the work in focus by its name, "the X" where X is a word of its
    title (D434)? "the report needs AWS spend per team for october", while the CEO's cost
    report is in focus, shared one word with its title, not two, and was queued as a problem
    titled by itself."""
    found = _DEFINITE_SUBJECT.match(without_lead_in(text.strip()))
    if found is None:
        return False
    named = extract_keywords(" ".join(word for word in found.groups() if word))
    return not _title_words(active.title).isdisjoint(named)


def _continues_last(keywords: tuple[str, ...], context: Any) -> bool:
    """Does an input with no problem of its own continue the last exchange's topic?

    A follow-up rarely repeats the problem's title ("Which risks matter most for the launch?"
    after "What are the risks of the billing launch?", under "Plan the v2 launch"): matched
    against the title alone it scored as a new topic and was queued as a new problem. It
    continues the last input when the two share two content words, or all of this input's
    when it has fewer; `_last_problem` says which problem that is.
    """
    last = getattr(context, "last_topic", None)
    if not isinstance(last, dict) or not keywords:
        return False
    shared = len(set(keywords) & set(last.get("keywords") or ()))
    return shared >= min(_SHARED_WITH_LAST, len(keywords))


def _resume_target(
    context: Any, registry: ProblemRegistry, active: Problem | None
) -> _Candidate | None:
    """Where "Where were we?" goes (D75): the problem the conversation was on before its last
    move, while that is still open, as a switch the person asked for; else the active problem
    (after a break the thread in focus is where they were); None with neither, for the usual
    rules.
    """
    # With nothing in focus (after a resolve), the last input's problem is where they were
    # too, when it is still open (it was queued).
    places = ("earlier_topic",) if active is not None else ("earlier_topic", "last_topic")
    for place in places:
        topic = getattr(context, place, None)
        problem_id = topic.get("problem_id") if isinstance(topic, dict) else None
        problem = registry.get(str(problem_id)) if problem_id else None
        if problem is not None and problem.status is not ProblemStatus.RESOLVED and (
            active is None or problem.id != active.id
        ):
            left = f", the problem before ‘{active.title}’" if active is not None else ""
            return _Candidate(
                problem, False, True, f"resume request: back to ‘{problem.title}’{left}"
            )
    if active is not None:
        return _Candidate(active, False, False, "resume request: the active problem")
    return None


def _last_topic_id(context: Any) -> str | None:
    """The id of the problem the last input went to (`HRMContext.last_topic`), if any."""
    last = getattr(context, "last_topic", None)
    problem_id = last.get("problem_id") if isinstance(last, dict) else None
    return str(problem_id) if problem_id else None


def _last_problem(
    context: Any,
    registry: ProblemRegistry,
    active: Problem,
    keywords: tuple[str, ...],
    commitment: CommitmentView | None,
) -> Problem | None:
    """The open problem the last input went to: the active one, or one it was queued as.

    "Which IAM permission does the backup job need?" after "Our nightly backup job to S3
    failed …" (queued while another problem was active) shares two words with it and none
    with the active problem's title: it belongs with the backup, not in a new problem of its
    own beside it (D51). A problem since resolved is no longer continued, and while a
    commitment on the active problem runs, an input in its words stays there (D49): the
    person chose that focus.
    """
    problem_id = _last_topic_id(context)
    if not problem_id:
        return None
    if problem_id == active.id:
        return active
    if _within_commitment(keywords, commitment, active):
        return None
    problem = registry.get(str(problem_id))
    if problem is None or problem.status not in (ProblemStatus.QUEUED, ProblemStatus.PAUSED):
        return None
    return problem


def _sharing_title(keywords: tuple[str, ...], registry: ProblemRegistry) -> Problem | None:
    """The one open problem whose title shares two or more content words with the input.

    "OK so for the billing service, how do we migrate the data?" under "Review my plan for
    splitting the monolith's billing module into a service", after an aside: two of seven title
    words, 0.29 by similarity (below 0.3), so the follow-up went with the aside it came after
    (D59). Two shared words name a problem as "back to X" does; a tie names none.
    """
    words = frozenset(keywords)
    best: list[Problem] = []
    most = 2
    for problem in registry.list():
        if problem.status is ProblemStatus.RESOLVED:
            continue
        shared = len(words & _title_words(problem.title))
        if shared > most:
            best, most = [problem], shared
        elif shared == most:
            best.append(problem)
    return best[0] if len(best) == 1 else None



def _uncontested(
    active: Problem | None,
    candidate: Problem | None,
    found: _Candidate | None,
    base: dict[str, Any],
) -> ArbitrationDecision | None:
    """The decision when nothing contests the active problem (no active problem, no topic in
    the input, or the input's topic is the active problem); None when something does."""
    if active is None:
        if candidate is None:
            return ArbitrationDecision(
                active_problem_id=None,
                disposition=ArbitrationDisposition.STAY,
                preempt_score=0.0,
                reason="No active problem and no topic in the input",
                **base,
            )
        return ArbitrationDecision(
            active_problem_id=candidate.id,
            disposition=ArbitrationDisposition.SWITCH,
            preempt_score=1.0,
            reason="No active problem",
            **base,
        )
    if candidate is None or candidate.id == active.id:
        return ArbitrationDecision(
            active_problem_id=active.id,
            disposition=ArbitrationDisposition.STAY,
            preempt_score=0.0,
            reason=(
                f"Input relates to active problem ({found.how})" if found
                else "No topic in the input: staying on the active problem"
            ),
            **base,
        )
    return None


def _asked(how: str) -> str:
    """What an explicit request asked, in the reason's words."""
    if how.startswith("focus request"):
        return "focus on"
    if how.startswith("resume request"):
        return "go back to"
    if how.startswith("set aside"):
        return "turn to"
    return "switch to"

def _leased(commitment: CommitmentView | None, active: Problem) -> bool:
    """Does a commitment on the active problem run, so that a passing topic stays with it?

    "For the next 3 turns, focus on the database layer", then "Should I use SQLAlchemy or raw
    sqlite3?": no word in common with the problem or the commitment, so each question of the
    focus the person had just asked for was queued as a problem of its own. While a lease whose
    length the person gave runs, a new topic that would only be queued stays with the active
    problem instead (D56); one that scores into the ask band (urgent, important) is still asked
    about. "Let's work on X" with no length commits by default and holds nothing: it is how
    people open a topic, and the next topic they raise is its own. A topic the person
    announces as another ("Unrelated: …") is not held (D63): they said it is not the focus.
    """
    return (
        commitment is not None
        and commitment.holds_focus
        and commitment.problem_id == active.id
        and commitment.turns_remaining > 0
    )


def _within_commitment(
    keywords: tuple[str, ...], commitment: CommitmentView | None, active: Problem
) -> bool:
    """Is an input with no problem of its own about what the person committed to focus on?

    "For the next 3 turns, focus on the cache invalidation design", then "What invalidation
    strategies fit a product catalogue?": one shared word with the last input (D44 asks two)
    and one with the title, so it was queued as a new problem while the person was keeping
    the focus they had just asked for. While a commitment on the active problem runs, one
    content word of its description is enough (D49).
    """
    if commitment is None or commitment.problem_id != active.id:
        return False
    return not _title_words(commitment.description).isdisjoint(keywords)


def resume_target(reference: str, registry: ProblemRegistry) -> Problem | None:
    """The open problem a request to go back to `reference` names ("back to the sales data"),
    by part of its title (`_named_problem`'s `loose`), if any."""
    return _named_problem(reference, registry, by_part=True, loose=True)


def named_problem(reference: str, registry: ProblemRegistry) -> Problem | None:
    """The open problem `reference` names by its title's words: all of them, two of them, or
    one no other open title has; a word the title does not hold names none ("the migration
    step" is not "the billing migration"). What a request to close a problem means (D82)."""
    return _named_problem(reference, registry, by_part=True)


def _named_problem(
    reference: str, registry: ProblemRegistry, *, by_part: bool = False, loose: bool = False
) -> Problem | None:
    """The open problem whose title `reference` names, if any.

    A title is named by its words (all of them, or keyword similarity ≥ 0.5). With `by_part`
    — a request to switch, where the person means one problem and names it briefly — a part
    of the title names it too: two or more of its words ("switch to the nightly backup job"
    for "Our nightly backup job to S3 failed last night with an access denied error"), or one
    word that is in no other open problem's title ("back to the backup"). With `loose` ("back
    to X", "resume X") X need not be made only of title words: "back to the sales data" names
    "I have a CSV of 2 million sales rows …" by "sales" alone, when no other title has it (D59).
    """
    said = frozenset(extract_keywords(reference))
    # "the contract planning", "the webhook problem": the work's own words name it (D445)
    words = (said - _WORK_NOUNS) or said
    if not words:
        return None
    best: tuple[float, Problem] | None = None
    holding: list[Problem] = []  # open problems whose title holds every word of the reference
    for problem in registry.list():
        if problem.status is ProblemStatus.RESOLVED:
            continue
        title_words = _title_words(problem.title)
        if not title_words:
            continue
        score = 1.0 if title_words <= words else keyword_similarity(words, title_words)
        part = words & title_words if loose else words if words <= title_words else None
        if by_part and part:
            holding.append(problem)
            if len(part) >= 2:
                score = max(score, 0.5 + 0.5 * len(part) / len(title_words))
        if score >= EXPLICIT_REFERENCE_THRESHOLD and (best is None or score > best[0]):
            best = (score, problem)
    if best is None and len(holding) == 1:
        return holding[0]
    return best[1] if best else None


def _inside_what_is_said(text: str, match: re.Match[str]) -> bool:
    """Is a mention's "on X" / "for X" a preposition inside the sentence rather than the topic
    the message opens with?"""
    if not match.group(0).lower().startswith(("on", "for")):
        return False
    return bool(extract_keywords(text[: match.start()]))


@lru_cache(maxsize=4)
def _reference_kinds(text: str) -> frozenset[str]:
    """Which of the reference patterns may match `text`: an arbitration asks up to four times
    of one text, and the scan of its words is most of a miss's cost."""
    return frozenset(_REFERENCE_WORDS.candidates(text))


_WORK_NOUNS = frozenset(
    extract_keywords(
        "planning plan work stuff thing things project task problem issue topic again now "
        "today please then"
    )
)
"""Words a reference adds to the name of any work ("the contract planning", "the grant again"):
not the title's."""


@lru_cache(maxsize=1024)
def _title_words(title: str) -> frozenset[str]:
    """A problem title's (or commitment description's) keywords: the same few texts are
    compared with input after input. A verb and its particle count as the noun they make too:
    "… backs up my photos" is named by "the backup script", "set up the VPN" by "the VPN
    setup" (D456)."""
    words = set(extract_keywords(title))
    for verb, particle in _PHRASAL.findall(title):
        stem = extract_keywords(verb)
        if stem:
            words.update(extract_keywords(stem[0] + particle.lower()))
    return frozenset(words)


_PHRASAL = re.compile(r"\b([A-Za-z]{2,})\s+(up|down|in|out|on|off|over)\b", re.IGNORECASE)
"""A word and the particle after it, which may be written as one noun ("backup", "login")."""


def _unit(value: float) -> float:
    return max(0.0, min(1.0, float(value)))
