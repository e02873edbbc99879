"""The composer: tiers in order, a later tier only over what no earlier tier read with
confidence, earlier tiers win overlaps, a failing tier is left out, `rest` and `Cues`."""

from __future__ import annotations

from collections.abc import Sequence

from hrm.reading.reader import available_tiers, read, rest_of
from hrm.reading.rules.tier import RulesReader
from hrm.reading.types import Bands, Intent, IntentKind, ReadingContext, Span


class _Tier:
    """A later tier that reads every sentence it is given as one intent (a request to resolve)."""

    name = "fake"

    def __init__(self, confidence: float = 0.8, kind: IntentKind = IntentKind.RESOLVE) -> None:
        self.confidence = confidence
        self.kind = kind
        self.given: list[Sequence[Span]] = []

    def read(
        self,
        said: str,
        spans: Sequence[Span],
        context: ReadingContext,
        *,
        earlier: Sequence[Intent] = (),
    ) -> tuple[Intent, ...]:
        self.given.append(spans)
        return tuple(Intent(self.kind, span, self.confidence, self.name) for span in spans)


class _Broken:
    name = "broken"

    def read(
        self,
        said: str,
        spans: Sequence[Span],
        context: ReadingContext,
        *,
        earlier: Sequence[Intent] = (),
    ) -> tuple[Intent, ...]:
        raise RuntimeError("a reader bug")


def test_a_later_tier_reads_only_the_sentences_the_rules_left() -> None:
    fake = _Tier()
    reading = read("I prefer tabs? Remember that our staging database is db2. We ship it soon.",
                   ReadingContext(), (RulesReader(), fake))  # fmt: skip
    [given] = fake.given
    assert all(reading.said[a:b] != "Remember that our staging database is db2." for a, b in given)
    assert reading.readers == ("rules", "fake")
    fact = reading.first(IntentKind.FACT)
    assert fact is not None and fact.reader.startswith("rules")


def test_no_later_tier_runs_when_the_rules_read_every_sentence() -> None:
    fake = _Tier()
    reading = read("Remember that our staging database is db2.", ReadingContext(), (RulesReader(), fake))
    assert fake.given == [] and reading.readers == ("rules",)


def test_a_failing_tier_is_left_out_and_the_turn_goes_on() -> None:
    reading = read("This is resolved.", ReadingContext(), (_Broken(), RulesReader()))
    assert reading.has(IntentKind.RESOLVE) and "broken" in reading.readers


def test_rest_leaves_out_commands_read_at_or_above_the_ask_band() -> None:
    said = "This is resolved. How do I tag a release?"
    sure = Intent(IntentKind.RESOLVE, (0, 17), 0.9, "rules")
    unsure = Intent(IntentKind.RESOLVE, (0, 17), 0.2, "fake")
    assert rest_of(said, [sure], Bands()) == "How do I tag a release?"
    assert rest_of(said, [unsure], Bands()) == said


def test_without_the_sentence_model_the_rules_are_the_only_tier() -> None:
    tiers = available_tiers()
    assert tiers[0].name == "rules"
    assert all(t.name != "rules" for t in tiers[1:])


class _Resumer:
    """A later tier that reads every sentence it is given as a request to resume."""

    name = "resumer"

    def read(
        self,
        said: str,
        spans: Sequence[Span],
        context: ReadingContext,
        *,
        earlier: Sequence[Intent] = (),
    ) -> tuple[Intent, ...]:
        return tuple(Intent(IntentKind.RESUME, span, 0.95, self.name) for span in spans)


def test_a_move_a_later_tier_reads_at_the_act_band_is_a_cue_for_arbitration() -> None:
    text = "so, what was we doing before that?"
    assert not read(text, ReadingContext()).cues.resume
    assert read(text, ReadingContext(), (RulesReader(), _Resumer())).cues.resume


def test_a_later_tier_does_not_read_what_the_rules_know_the_words_are_instead() -> None:
    # "I'd rather not say" declines to answer and "I always get a segfault" reports one: the
    # sentence model's likeness to a preference does not make either one (Declined.final).
    for said in ("I'd rather not say", "I prefer not to say",
                 "I always get a segfault when I run this"):  # fmt: skip
        reading = read(said, ReadingContext(), (RulesReader(), _Tier(0.95, IntentKind.PREFERENCE)))
        assert not reading.has(IntentKind.PREFERENCE), said
        assert reading.declined[0].final


def test_a_rule_that_only_found_no_preference_leaves_a_paraphrase_to_a_later_tier() -> None:
    said = "my preference would be short answers with examples"
    reading = read(said, ReadingContext(), (RulesReader(), _Tier(0.95, IntentKind.PREFERENCE)))
    assert reading.has(IntentKind.PREFERENCE)
    assert not reading.declined[0].final
