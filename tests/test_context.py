"""Context assembly: a budget that holds, and a record of every inclusion and exclusion."""

from __future__ import annotations

from collections.abc import Iterable

from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.context import (
    AssembledContext,
    ContextAssembler,
    ContextItem,
    estimate_tokens,
    score_items,
)

ROLE = "You are a careful assistant."


def _source(*items: ContextItem) -> object:
    return lambda _text: list(items)


def _item(
    source: str, key: str, words: int, priority: float, *, always: bool = False
) -> ContextItem:
    return ContextItem(source, key, " ".join(["word"] * words), priority, always=always)


def test_items_are_kept_by_priority_until_the_budget_is_spent_and_the_rest_are_recorded() -> None:
    assembler = ContextAssembler(ROLE, budget_tokens=64)
    low = _item("episode", "old", 40, 0.2)
    high = _item("pattern", "p1", 40, 0.9)
    small = _item("recent_turn", "t1", 2, 0.5)
    ctx = assembler.assemble("question", [("a", _source(low, small)), ("b", _source(high))])

    kept = [item.key for item in ctx.items]
    assert kept == ["p1", "t1"]  # highest priority first; the low one no longer fits
    assert ctx.tokens <= ctx.budget == 64
    assert [e["key"] for e in ctx.included] == ["p1", "t1"]
    assert ctx.excluded == [
        {
            "source": "episode",
            "key": "old",
            "reason": f"over budget ({estimate_tokens(low.text)} tokens, {64 - ctx.tokens} left)",
            "priority": 0.2,
        }
    ]
    assert "## Learned patterns" in ctx.system and "## Recent episodes" not in ctx.system
    state = ctx.attention_state()
    assert state["retrieved"] == ctx.included and state["excluded"] == ctx.excluded


def test_the_recent_conversation_reads_oldest_first_while_the_budget_keeps_the_newest() -> None:
    turns = [
        ContextItem("recent_turn", f"turn-{i}", f"person: message {i} " + "word " * 20,
                    0.2 + 0.1 * i, sequence=i, exchange=(f"message {i}", "word " * 20))
        for i in range(4)
    ]
    each = estimate_tokens(turns[0].text)
    ctx = ContextAssembler(ROLE, budget_tokens=estimate_tokens(ROLE) + 3 * each + each // 2).assemble(
        "q", [("recent", _source(*turns))]
    )
    assert [item.key for item in ctx.items] == ["turn-3", "turn-2", "turn-1"]  # newest kept
    shown = [said for said, _ in ctx.conversation]
    assert [said.split()[1] for said in shown] == ["1", "2", "3"]  # read as it happened
    assert "message" not in ctx.system  # messages before the input, not prompt lines
    assert [e["key"] for e in ctx.excluded] == ["turn-0"]


def test_a_sources_further_items_over_budget_are_one_entry_naming_each_key() -> None:
    # A canon of many preferences must not add a record per preference to every turn.
    canon = [_item("canon", f"preference.p{i}", 30, 1.0, always=True) for i in range(40)]
    ctx = ContextAssembler(ROLE, budget_tokens=200).assemble("q", [("canon", _source(*canon))])

    kept = [e["key"] for e in ctx.included]
    (entry,) = [e for e in ctx.excluded if e["source"] == "canon"]
    named = [entry["key"], *entry["more"]["keys"]]
    assert sorted(kept + named) == sorted(item.key for item in canon)
    assert entry["reason"].startswith("over budget")
    each = estimate_tokens(canon[0].text)
    assert entry["more"]["tokens"] == each * len(entry["more"]["keys"])


def test_an_always_item_is_truncated_rather_than_dropped_and_says_so() -> None:
    assembler = ContextAssembler(ROLE, budget_tokens=64)
    canon = _item("canon", "preference.long", 400, 1.0, always=True)
    ctx = assembler.assemble("q", [("canon", _source(canon))])

    (entry,) = ctx.included
    assert entry["key"] == "preference.long" and entry["truncated"] is True
    assert ctx.items[0].text.endswith("…") and ctx.tokens <= 64


def test_a_duplicate_and_a_failing_source_are_recorded_not_fatal() -> None:
    def broken(_text: str) -> Iterable[ContextItem]:
        raise RuntimeError("index offline")

    failures: list[str] = []
    item = _item("pattern", "p1", 3, 0.6)
    ctx = ContextAssembler(ROLE).assemble(
        "q",
        [("one", _source(item)), ("two", _source(item)), ("learnings", broken)],
        failures=failures,
    )

    assert [i.key for i in ctx.items] == ["p1"]
    reasons = {(e["source"], e["reason"]) for e in ctx.excluded}
    assert ("pattern", "duplicate") in reasons
    assert ("learnings", "source failed: index offline") in reasons
    assert failures == ["learnings: index offline"]


def test_score_items_ranks_by_relevance_and_drops_what_is_below_the_floor() -> None:
    items = score_items(
        "shared_reference",
        "which database do we deploy",
        [("db", "database: PostgreSQL 16"), ("deploy", "deploy on Fridays"), ("x", "tabs")],
        base=0.5,
        floor=0.01,
    )
    assert [i.key for i in items][:2] in (["db", "deploy"], ["deploy", "db"])
    assert "x" not in [i.key for i in items]
    assert all(0.5 <= i.priority <= 1.0 for i in items)


@settings(max_examples=100)
@given(
    st.lists(st.tuples(st.integers(0, 200), st.floats(0, 1), st.booleans()), max_size=25),
    st.integers(64, 600),
)
def test_the_budget_always_holds_and_every_item_is_accounted_for(
    specs: list[tuple[int, float, bool]], budget: int
) -> None:
    items = [
        _item("episode", f"k{i}", words, priority, always=always)
        for i, (words, priority, always) in enumerate(specs)
    ]
    ctx = ContextAssembler(ROLE, budget_tokens=budget).assemble("q", [("s", _source(*items))])

    assert ctx.tokens <= budget
    included = {e["key"] for e in ctx.included}
    excluded = {e["key"] for e in ctx.excluded}
    excluded |= {key for e in ctx.excluded for key in e.get("more", {}).get("keys", [])}
    assert included.isdisjoint(excluded)
    assert included | excluded == {item.key for item in items}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.from_regex(r"[a-z]{3,8}", fullmatch=True), min_size=1, max_size=6),
       st.lists(st.from_regex(r"[a-z]{3,8}", fullmatch=True), min_size=2, max_size=6))
def test_an_echo_is_the_reminder_and_an_answer_is_not(prefs: list[str], own: list[str]) -> None:
    from hrm.context import content_words, echoes_reminder

    reminder = f"(Follow my standing preferences: {' '.join(prefs)}.)"
    if content_words(" ".join(prefs)):
        assert echoes_reminder(" ".join(prefs), reminder)
    new = content_words(" ".join(own)) - content_words(reminder)
    if len(new) >= 2:
        assert not echoes_reminder(" ".join(prefs + own), reminder)


def test_the_sections_that_stay_the_same_open_the_system_prompt() -> None:
    # D230: the role, the canon and the salience anchors come first, byte for byte the same
    # whatever this input retrieved, and everything retrieved for the input follows them.
    canon = ContextItem("canon", "preference.style", "I prefer short answers", 1.0, always=True)
    anchor = ContextItem("salience", "anchor-1", "The audit is due on Friday", 0.9)

    def assembled(retrieved: ContextItem) -> AssembledContext:
        sources = [("retrieved", _source(retrieved)), ("canon", _source(canon)),
                   ("anchors", _source(anchor))]
        return ContextAssembler(ROLE).assemble("q", sources)

    first = assembled(ContextItem("learning", "l1", "Rename branches with git branch -m", 0.6))
    second = assembled(ContextItem("working_set", "w1", "decided: use Decimal", 0.7))
    assert first.stable == second.stable
    assert first.stable.startswith(ROLE)
    assert "I prefer short answers" in first.stable
    assert "The audit is due on Friday" in first.stable
    for ctx, retrieved in ((first, "git branch -m"), (second, "use Decimal")):
        assert ctx.system == f"{ctx.stable}\n\n{ctx.retrieved}"
        assert retrieved in ctx.retrieved and retrieved not in ctx.stable
    assert first.system.index("## Salience anchors") < first.system.index("## Learnings")


def test_with_nothing_retrieved_the_system_prompt_is_its_stable_part() -> None:
    canon = ContextItem("canon", "preference.style", "I prefer short answers", 1.0, always=True)
    ctx = ContextAssembler(ROLE).assemble("q", [("canon", _source(canon))])
    assert ctx.retrieved == "" and ctx.system == ctx.stable
