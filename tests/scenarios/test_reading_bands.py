"""Reading through the facade: guards, confidence bands, asking, never silent (issue 29 §3-4)."""

from __future__ import annotations

from pathlib import Path

from hrm.pipeline import HRM
from hrm.reading.rules.memory import kept_text


def _kept(h: HRM) -> str:
    """What the canon keeps now, as one text (retracted entries say nothing)."""
    return " ".join(filter(None, (kept_text(v) for v in h.stack.canon().values())))


def _open(tmp_path: Path) -> HRM:
    return HRM.open(tmp_path / "home", "ADMIN", "offline")


def test_questions_that_use_preference_words_are_answered_and_never_kept(tmp_path: Path) -> None:
    with _open(tmp_path) as h:
        for text in (
            "I hate how slow webpack is, what are alternatives?",
            "I prefer to know why this fails before patching it, can you explain the traceback?",
        ):
            result = h.turn(text)
            # Answered, by the model or (alternatives: perspectives, issue 33) by agents.
            assert result.action in ("respond", "delegate")
            assert not [w for w in result.decision.writes if w.get("approved")]
            reason = result.decision.preference["not_a_preference"]  # type: ignore[index]
            assert "question or a request" in reason
        assert not any(k.startswith("preference.") for k in h.stack.canon())


def test_a_texted_standing_instruction_is_kept_and_opens_no_problem(tmp_path: Path) -> None:
    with _open(tmp_path) as h:
        result = h.turn("pls use 2-space indentation in all code u send me")
        assert result.action == "remember"
        assert result.decision.problem is None
        assert h.focus.problem_registry.list() == []
        assert "2-space indentation" in _kept(h)


def test_a_forget_request_that_matches_nothing_says_so(tmp_path: Path) -> None:
    with _open(tmp_path) as h:
        result = h.turn("Forget what I said about my dentist")
        assert "Nothing I keep matches" in result.response
        assert h.focus.problem_registry.list() == []


def test_forget_about_what_is_kept_forgets_it(tmp_path: Path) -> None:
    with _open(tmp_path) as h:
        h.turn("Remember that my cat is called Tom")
        h.turn("What should I cook tonight?")  # the fact is no longer what was just kept
        result = h.turn("forget about my cat")
        assert result.response == "Forgotten: “my cat is called Tom”."
        assert "Tom" not in _kept(h)


def test_the_middle_band_asks_and_the_next_yes_settles_it(tmp_path: Path) -> None:
    with _open(tmp_path) as h:
        h.turn("I prefer Celsius.")
        h.turn("What should I cook tonight?")
        asked = h.turn("drop the Celsius thing")
        assert asked.response == "Do you want me to forget “I prefer Celsius”? (yes/no)"
        assert asked.asked and len(h.focus.problem_registry.list()) == 1  # opens nothing
        assert "Celsius" in _kept(h)
        settled = h.turn("yes")
        assert settled.action == "confirm" and settled.response == "Forgotten: “I prefer Celsius”."
        assert "Celsius" not in _kept(h)


def test_a_no_to_the_middle_band_question_keeps_what_was_kept(tmp_path: Path) -> None:
    with _open(tmp_path) as h:
        h.turn("I prefer Celsius.")
        h.turn("What should I cook tonight?")
        h.turn("drop the Celsius thing")
        kept = h.turn("no")
        assert kept.response == "Understood — I still keep “I prefer Celsius”."
        assert "Celsius" in _kept(h)


def test_an_unanswered_middle_band_question_lets_the_request_go(tmp_path: Path) -> None:
    with _open(tmp_path) as h:
        h.turn("I prefer Celsius.")
        h.turn("What should I cook tonight?")
        h.turn("drop the Celsius thing")
        later = h.turn("How long do I bake the bread?")
        assert any("went unanswered" in note for note in later.decision.notes)
        assert h.turn("yes").action != "confirm"
        assert "Celsius" in _kept(h)


def test_delete_that_from_your_memory_forgets_what_was_just_kept(tmp_path: Path) -> None:
    with _open(tmp_path) as h:
        h.turn("I prefer Celsius.")
        result = h.turn("delete that from your memory")
        assert "Forgotten" in result.response
        assert "Celsius" not in _kept(h)


def test_paraphrased_commands_act(tmp_path: Path) -> None:
    with _open(tmp_path) as h:
        first = h.turn("I need to migrate the billing service to Postgres")
        problem = first.decision.problem["id"]  # type: ignore[index]
        focus = h.turn("concentrate on the billing migration for the next two messages")
        assert "for 2 turn(s)" in " ".join(focus.decision.notes)
        decided = h.turn("Postgres it is.")
        assert any(w.get("key") == "local_decisions" for w in decided.decision.writes)
        assert h.stack.bus.working.get(problem) is not None
        done = h.turn("This is resolved.")
        assert done.action == "resolve"
        assert h.focus.problem_registry.get(problem).status.value == "resolved"  # type: ignore[union-attr]


def test_the_decision_record_carries_the_reading(tmp_path: Path) -> None:
    with _open(tmp_path) as h:
        h.turn("Decided: Netlify.")
        record = h.last_decision()
        assert record is not None
        [intent] = record["reading"]["intents"]
        assert intent["kind"] == "decision" and intent["reader"] == "rules:decisions"
        assert record["reading"]["readers"] == ["rules"]


def test_the_cues_arbitration_weighed_are_recorded(tmp_path: Path) -> None:
    with _open(tmp_path) as h:
        h.turn("I need to finish the quarterly report by Friday")
        h.turn("Unrelated: production is down, the payment webhook fails, fix it ASAP")
        record = h.last_decision()
        assert record is not None
        cues = record["reading"]["cues"]
        assert cues.get("opens_new_topic") and cues.get("urgency")
