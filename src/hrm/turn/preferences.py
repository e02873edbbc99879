"""What a turn does with a stated preference (001 §12.4, §12.6).

The reading stage finds the preference a message states (`hrm.reading.rules.preferences`);
here an explicit one goes to the write gate for canon, an inferred one (or one read in the
middle band, D150) is held until the person confirms it, a behavioural one is written as an
inferred observation. A held preference waits in the turn state
(`TurnState.pending_preference`) for the next input to say yes or no; an input that does
neither lets it go unconfirmed (D36), so a "yes" said later to something else cannot make it
canon. The steps ``pending``, ``statements`` and ``memory`` call these and record what they did
in the decision record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from hrm.governance.preferences import (
    PreferenceClass,
    PreferenceClassification,
    preference_key,
)
from hrm.reading.rules.memory import kept_matching, kept_text
from hrm.reading.rules.preferences import REVISION
from hrm.reading.spelling import corrected
from hrm.reading.types import IntentKind
from hrm.turn.records import HeldPreferenceRecord, PreferenceRecord

if TYPE_CHECKING:
    from hrm.reading.types import Bands, Reading
    from hrm.turn.records import DecisionRecord
    from hrm.turn.state import TurnState
    from hrm.types import TurnInput

__all__ = [
    "PreferenceReading",
    "handle_preference",
    "preference_key",
    "preference_reading",
    "resolve_pending",
    "without_preference",
]

def resolve_pending(
    stack: Any, state: TurnState, answer: IntentKind | None, record: DecisionRecord, event: Any
) -> str | None:
    """Settle a held preference with this input; returns the note to show, if it answered.

    "yes" canonizes the statement (a confirmed write), "no" drops it. Anything else drops it
    unconfirmed (recorded, nothing written) and returns None: the input is handled as usual.
    """
    pending = state.pending_preference
    if not pending:
        return None
    replaces: dict[str, str] = dict(pending.get("replaces") or {})
    if answer is IntentKind.YES:
        state.pending_preference = None
        for old_key in replaces:  # D70: the earlier preference ends, then the new one is canon
            retraction = stack.retract_preference(old_key, replaced_by=pending["key"])
            record.writes.append(retraction)
            event("preference_retracted", key=old_key, replaced_by=pending["key"],
                  decision=retraction)
        decision = stack.write_preference(pending["statement"], pending["key"], confirmed=True)
        record.writes.append(decision)
        record.preference = _held(pending, "confirmed")
        event("preference_confirmed", key=pending["key"], decision=decision)
        if replaces:
            earlier = "”, “".join(replaces.values())
            return f"Replaced “{earlier}” with “{pending['statement']}” in canon."
        return f"Remembered as canon: “{pending['statement']}”."
    if answer is IntentKind.NO:
        state.pending_preference = None
        record.preference = _held(pending, "declined")
        event("preference_declined", key=pending["key"])
        if replaces:
            earlier = "”, “".join(replaces.values())
            if pending.get("inferred"):
                return f"Understood — “{earlier}” stays, and nothing else was kept."
            return (f"Understood — “{earlier}” stays; “{pending['statement']}” holds for this "
                    "problem only.")
        return "Understood — I will not treat that as a preference."
    state.pending_preference = None
    record.notes.append(f"held preference {pending['key']!r} went unanswered; not canonized")
    event("preference_unconfirmed", key=pending["key"])
    return None


def _held(pending: dict[str, Any], resolution: str) -> HeldPreferenceRecord:
    """The record of a held preference this turn settled (`pending` as the state kept it)."""
    replaces = pending.get("replaces")
    return HeldPreferenceRecord(
        statement=str(pending["statement"]),
        key=str(pending["key"]),
        replaces=dict(replaces) if isinstance(replaces, dict) else None,
        resolution=resolution,
    )


@dataclass(frozen=True, slots=True)
class PreferenceReading:
    """What a message says about the person's preferences: read before arbitration (D46),
    written or held after it."""

    classification: PreferenceClassification
    """The sentence's class when `statement` is set, else the message's own."""
    statement: str | None = None
    """What is written or asked about; None when no sentence states a preference."""
    not_a_preference: str | None = None
    """Why the pattern that matched states no standing preference (for the record)."""
    sentence: str | None = None
    """The sentence as said, when it says more than `statement` ("Keep in mind I prefer
    tabs."): what is left out of arbitration."""
    revises: bool = False
    """Said as a change of mind ("I changed my mind, I want …", D428): it replaces the kept
    preferences it shares its words with, when the person says yes."""

    @property
    def about_the_person(self) -> bool:
        """Does the message state (or suggest) a preference of the person's own?"""
        return self.statement is not None and self.classification.preference_class in (
            PreferenceClass.EXPLICIT, PreferenceClass.INFERRED_CONFIRM_REQUIRED
        )


def preference_reading(reading: Reading, bands: Bands) -> PreferenceReading | None:
    """What the message's `Reading` says about the person's preferences, in the form the
    write step takes: the preference intent, or why a preference word stated none.

    An explicit preference read below the act threshold is asked about, as an inferred one is
    ("Should I remember …?", D150); one below the ask threshold is an ordinary message.
    """
    intent = reading.first(IntentKind.PREFERENCE)
    if intent is not None and intent.confidence < bands.ask:
        return None
    if intent is not None:
        slots = intent.slots
        scope = _CLASS_OF.get(slots.scope or "explicit", PreferenceClass.EXPLICIT)
        if scope is PreferenceClass.EXPLICIT and intent.confidence < bands.act:
            scope = PreferenceClass.INFERRED_CONFIRM_REQUIRED
        inferred = scope is PreferenceClass.INFERRED_CONFIRM_REQUIRED
        classification = PreferenceClassification(
            preference_class=scope, statement=slots.statement or "",
            matched_pattern=slots.pattern, confidence=intent.confidence,
            can_canonize=scope is not PreferenceClass.BEHAVIORAL, needs_confirmation=inferred,
        )  # fmt: skip
        sentence = reading.text_of(intent)
        statement = slots.statement or sentence
        return PreferenceReading(
            classification, statement, sentence=sentence if sentence != statement else None,
            revises=slots.scope == REVISION,
        )
    declined = next((d for d in reading.declined if d.kind is IntentKind.PREFERENCE), None)
    if declined is None:
        return None
    silent = PreferenceClassification(
        preference_class=PreferenceClass.INFERRED_SILENT, statement="",
        matched_pattern=declined.pattern, confidence=declined.confidence,
        can_canonize=False, needs_confirmation=False,
    )  # fmt: skip
    return PreferenceReading(silent, not_a_preference=declined.reason or None)


_CLASS_OF = {
    "explicit": PreferenceClass.EXPLICIT,
    "instruction": PreferenceClass.EXPLICIT,
    "inferred": PreferenceClass.INFERRED_CONFIRM_REQUIRED,
    REVISION: PreferenceClass.INFERRED_CONFIRM_REQUIRED,
    "behavioural": PreferenceClass.BEHAVIORAL,
}


def contradicted_canon(signals: Any, prefix: str = "") -> dict[str, str]:
    """The canon entries (keys starting with `prefix`) the input contradicts, key → value, as
    the signals' `find_contradictions` found them."""
    components = getattr(signals, "deterministic_components", None) or {}
    found: dict[str, str] = {}
    for item in components.get("contradictions") or ():
        key = item.get("canon_key") if isinstance(item, dict) else None
        if isinstance(key, str) and key.startswith(prefix):
            found[key] = str(item.get("canon_value", ""))
    return found


def revised_canon(canon: Mapping[str, Any], statement: str) -> dict[str, str]:
    """The kept preferences a change of mind (D428) revises, key → what it says: those sharing
    the most distinguishing words with `statement` ("a friendly tone not firm" of "I prefer a
    polite but firm tone")."""
    kept = {k: v for k, v in canon.items() if k.startswith("preference.")}
    found = {key: kept_text(kept[key]) for key in kept_matching(kept, statement)}
    return {key: text for key, text in found.items() if text is not None}


def without_preference(turn_input: TurnInput, reading: PreferenceReading | None) -> TurnInput:
    """The input as arbitration reads it: without the sentence that states a preference.

    A preference is about the person, not a problem to work on (D46): "I prefer tabs" said in
    the middle of a migration must not become a queued problem titled "I prefer tabs", nor
    (said alone) switch focus away from the migration. What else the message says is
    arbitrated as usual; a message that is only the preference has no topic and stays.
    """
    if reading is None or not reading.about_the_person or reading.statement is None:
        return turn_input
    return without_sentence(turn_input, reading.sentence or reading.statement)


def without_sentence(turn_input: TurnInput, sentence: str) -> TurnInput:
    """The input without `sentence` (a preference, a request to remember: about the person or
    their world, no problem to work on); the input itself when it does not hold it."""
    text = turn_input.text
    at = text.find(sentence)
    if at < 0:
        # read as corrected ("forgt that" was read as "forget that", D452): found there, the
        # rest is taken from the corrected text
        fixed = corrected(text)
        at = -1 if fixed is text else fixed.find(sentence)
        if at < 0:
            return turn_input
        text = fixed
    # What the sentence leaves around it goes; what ends the rest stays: "I prefer tabs. How
    # do I …?" is still a question once the preference is out.
    before = text[:at].rstrip(_JOINING)
    after = text[at + len(sentence) :].lstrip(_LEFT_OVER)
    rest = f"{before} {after}" if before and after else before or after
    return replace(turn_input, text=rest.strip())


_LEFT_OVER = " \t\r\n.,;:!?-–—"
"""What a removed sentence leaves after it: its stop and the space before the next."""
_JOINING = " \t\r\n,;:-–—"
"""What a removed sentence leaves before it (the previous sentence keeps its stop)."""


def handle_preference(
    stack: Any,
    state: TurnState,
    reading: PreferenceReading | None,
    *,
    signals: Any,
    record: DecisionRecord,
    event: Any,
) -> list[str]:
    """Write or hold what `preference_reading` found; returns notes for the answer."""
    if reading is None:
        return []
    pref, statement = reading.classification, reading.statement
    if statement is None:
        record.preference = PreferenceRecord(
            preference_class=PreferenceClass.INFERRED_SILENT.value,
            matched_pattern=pref.matched_pattern,
            confidence=pref.confidence,
            silent=True,
            not_a_preference=reading.not_a_preference,
        )
        return []
    stated = PreferenceRecord(
        preference_class=pref.preference_class.value,
        matched_pattern=pref.matched_pattern,
        confidence=pref.confidence,
        needs_confirmation=pref.needs_confirmation,
    )
    record.preference = stated
    key = preference_key(statement)
    notes: list[str] = []
    if pref.preference_class is PreferenceClass.EXPLICIT and stack.canon().get(key) == statement:
        # Said again, word for word: the canon already holds it. A new version would add
        # nothing but a row (and make every reader of the canon load it again). D33.
        stated.resolution = "already canon"
        notes.append(f"Already canon: “{statement}”.")
    elif pref.preference_class is PreferenceClass.EXPLICIT:
        decision = stack.write_preference(
            statement, key, confirmed=False, signals=signals, confidence=pref.confidence,
            classification=pref,
        )
        record.writes.append(decision)
        if decision.get("approved") and decision.get("target") == "shared_reference":
            notes.append(f"Noted as canon: “{statement}”.")
        elif decision.get("target") == "working_set":
            notes.append(
                _kept_for_the_problem(statement, key, decision, signals, state, event, record)
            )
    elif pref.preference_class in (
        PreferenceClass.INFERRED_CONFIRM_REQUIRED,
        PreferenceClass.BEHAVIORAL,
    ):
        decision = stack.write_preference(
            statement,
            key,
            confirmed=False,
            signals=signals,
            confidence=pref.confidence,
            inferred=True,
            classification=pref,
        )
        record.writes.append(decision)
        if pref.preference_class is PreferenceClass.INFERRED_CONFIRM_REQUIRED:
            notes.append(_ask_to_keep(stack, state, reading, key, signals, record, event))
    return notes


def _ask_to_keep(
    stack: Any, state: TurnState, reading: PreferenceReading, key: str, signals: Any,
    record: DecisionRecord, event: Any,
) -> str:
    """Hold an inferred preference for the person's yes or no; the question to ask."""
    statement = str(reading.statement)
    # A yes to one that contradicts a kept preference replaces it (D415), as a yes to the
    # question after a conflicting stated preference does (D70).
    replaces = contradicted_canon(signals, "preference.") or (
        revised_canon(stack.canon(), statement) if reading.revises else {}
    )
    state.pending_preference = {"statement": statement, "key": key, "asked_turn": record.turn}
    if replaces:  # nothing was kept of it: a no leaves the earlier one alone
        state.pending_preference.update(replaces=replaces, inferred=True)
    event("preference_pending", key=key, statement=statement,
          **({"replaces": sorted(replaces)} if replaces else {}))  # fmt: skip
    instead = f", in place of “{'”, “'.join(replaces.values())}”" if replaces else ""
    return f"Should I remember “{statement}” as your preference{instead}? (yes/no)"


def _kept_for_the_problem(
    statement: str, key: str, decision: dict[str, Any], signals: Any, state: TurnState,
    event: Any, record: DecisionRecord,
) -> str:
    """The note for a stated preference the write gate kept in the working set only: for this
    problem only, or for now only with no problem in focus (D476)."""
    where = "for this problem only" if record.problem is not None else "for now only"
    replaces = contradicted_canon(signals, "preference.")
    if replaces:
        # D70: the note used to say "Say so if it should replace …", and nothing understood
        # saying so: the earlier preference could never be replaced.
        state.pending_preference = {
            "statement": statement, "key": key, "replaces": replaces, "asked_turn": record.turn,
        }
        event("preference_pending", key=key, statement=statement, replaces=sorted(replaces))
        earlier = "”, “".join(replaces.values())
        return (
            f"This conflicts with “{earlier}”, so I kept “{statement}” {where}. "
            "Should it replace the earlier preference? (yes/no)"
        )
    reason = str(decision.get("reason", "the write gate decided so"))
    if "conflict" in reason.lower():
        return (
            f"This conflicts with what you told me before; I kept “{statement}” {where}."
        )
    # Never blame a conflict that was not there: say what the gate said.
    return f"I kept “{statement}” {where} ({reason.rstrip('.')})."
