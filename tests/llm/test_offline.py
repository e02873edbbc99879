"""The offline model: deterministic, answers from its context, never pretends to be real."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.llm import OFFLINE_MARKER, LLMCallConfig, Message, OfflineAdapter
from hrm.llm.offline import wants_json
from hrm.llm.task_message import problem_note, task_message

CONTEXT = "\n".join(
    [
        "Relevant context:",
        "- Learnings are stored in SQLite with an FTS5 index.",
        "- Deploys happen on Fridays after the review.",
        "- Canon: the user prefers short answers.",
    ]
)


def ask(text: str, system: str = CONTEXT, **config: object) -> str:
    call = LLMCallConfig(**config) if config else None  # type: ignore[arg-type]
    return OfflineAdapter().chat([Message(role="user", content=text)], system, call).content


def test_quotes_the_most_relevant_context_and_says_it_is_offline() -> None:
    answer = ask("Where are learnings stored?")
    assert answer.startswith(OFFLINE_MARKER)
    assert "Learnings are stored in SQLite with an FTS5 index." in answer
    assert "Deploys" not in answer
    assert "Canon: the user prefers short answers." in answer


def test_canon_is_what_the_canon_section_holds_not_any_line_saying_prefer() -> None:
    system = (
        "You are a resident assistant; honour the person's stated preferences.\n\n"
        "## Canon — the person's explicit preferences (always honour these)\n"
        "- I prefer tabs over spaces\n\n"
        "## Recent conversation\n"
        "- # I prefer explicit checks over asserts\n"
    )
    answer = ask("What is the capital of Peru?", system=system)
    canon = answer.split("Canon and preferences in view:", 1)[1]
    assert "I prefer tabs over spaces" in canon
    assert "resident assistant" not in canon and "explicit checks" not in canon


def test_says_plainly_when_nothing_in_context_matches() -> None:
    answer = ask("What is the capital of Peru?", system="No context.")
    assert answer.startswith(OFFLINE_MARKER)
    assert "nothing in the context" in answer
    assert "hrm models list" in answer


def test_is_deterministic_and_reports_itself() -> None:
    adapter = OfflineAdapter()
    first = adapter.chat([Message(role="user", content="When are deploys?")], CONTEXT)
    second = adapter.chat([Message(role="user", content="When are deploys?")], CONTEXT)
    assert first.content == second.content
    assert (first.provider, first.model) == ("offline", "hrm-offline-1")
    assert first.total_tokens == first.input_tokens + first.output_tokens
    assert first.finish_reason == "stop"


def test_earlier_messages_count_as_context() -> None:
    messages = [
        Message(role="user", content="Remember: the staging database is called orchid."),
        Message(role="assistant", content="Noted."),
        Message(role="user", content="What is the staging database called?"),
    ]
    answer = OfflineAdapter().chat(messages, "").content
    assert "orchid" in answer


def test_its_own_earlier_framing_and_the_turns_notes_are_not_quoted_as_context() -> None:
    adapter = OfflineAdapter()
    first = adapter.chat([Message(role="user", content="When are deploys?")], CONTEXT).content
    messages = [
        Message(role="user", content="When are deploys?"),
        Message(role="assistant", content=first + "\n\n• Noted as canon: deploys need a review."),
        Message(role="user", content="And who reviews the deploys?"),
    ]
    answer = adapter.chat(messages, CONTEXT).content
    assert answer.count(OFFLINE_MARKER) == 1  # its own, not an earlier answer's
    assert "Noted as canon" not in answer
    assert "Deploys happen on Fridays after the review." in answer  # still quoted, once
    assert answer.count("Deploys happen on Fridays") == 1


def test_max_tokens_cuts_the_answer() -> None:
    adapter = OfflineAdapter()
    full = adapter.chat([Message(role="user", content="learnings stored")], CONTEXT)
    cut = adapter.chat(
        [Message(role="user", content="learnings stored")], CONTEXT, LLMCallConfig(max_tokens=8)
    )
    assert cut.finish_reason == "length"
    assert cut.output_tokens <= 8
    assert full.content.startswith(cut.content)


def test_stream_yields_words_then_a_final_chunk() -> None:
    adapter = OfflineAdapter()
    messages = [Message(role="user", content="When are deploys?")]
    chunks = list(adapter.stream(messages, CONTEXT))
    assert all(not c.done for c in chunks[:-1])
    final = chunks[-1]
    assert final.done and final.delta == "" and final.finish_reason == "stop"
    assert "".join(c.delta for c in chunks) == adapter.chat(messages, CONTEXT).content
    assert final.output_tokens == adapter.chat(messages, CONTEXT).output_tokens


def test_json_is_requested_by_prompt_or_flag() -> None:
    user = [Message(role="user", content="x")]
    assert wants_json("You are a classifier. Return only JSON.", user, None)
    assert wants_json("Respond with JSON.", user, None)
    assert wants_json("s", user, LLMCallConfig(json_mode=True))
    assert not wants_json("Be brief.", user, None)


def test_json_fills_a_template_neutrally() -> None:
    prompt = (
        "Rate this. Return JSON: "
        '{"source_quality": X, "alignment_score": 0.8, "label": "low|high", '
        '"note": "why", "flag": true, "tags": [], "extra": null}'
    )
    answer = json.loads(ask(prompt, system="You are a signal estimation engine. Return only JSON."))
    assert answer == {
        "source_quality": 0.5,
        "alignment_score": 0.5,
        "label": "low",
        "note": "why",
        "flag": False,
        "tags": [],
        "extra": None,
    }


def test_json_signal_estimation_without_template() -> None:
    answer = json.loads(ask("Rate it", system="x", json_mode=True, purpose="signal_estimation"))
    assert answer == {"source_quality": 0.5, "alignment_score": 0.5}


def test_json_classification() -> None:
    answer = json.loads(ask("Fix the typo", system="Classify the input. Return only JSON."))
    assert answer["complexity"] == "simple"
    assert answer["stakes"] == "low"
    assert answer["signals"] == ["offline_model"]


def test_json_plan_has_one_step_per_clause() -> None:
    answer = json.loads(
        ask(
            "Set up the repo, then write the tests; deploy it.",
            system="Generate a plan of steps. Return only JSON.",
        )
    )
    assert [s["description"] for s in answer["steps"]] == [
        "Set up the repo",
        "write the tests",
        "deploy it",
    ]
    assert answer["steps"][0]["id"] == "step_1"
    assert OFFLINE_MARKER in answer["rationale"]


def test_json_otherwise_empty_object() -> None:
    assert ask("anything", system="Return only JSON.") == "{}"


@settings(max_examples=60)
@given(st.text(max_size=200), st.text(max_size=300))
def test_any_input_gets_a_marked_answer_or_valid_json(question: str, system: str) -> None:
    adapter = OfflineAdapter()
    response = adapter.chat([Message(role="user", content=question)], system)
    if wants_json(system, [Message(role="user", content=question)], None):
        json.loads(response.content)
    else:
        assert response.content.startswith(OFFLINE_MARKER)


def test_the_prompts_section_headings_are_never_quoted_as_context() -> None:
    system = "\n".join([
        "## Canon — the person's explicit preferences (always honour these)",
        "- I always run the tests with -n 4",
    ])
    answer = ask("Do I always need -n 4?", system=system)
    assert "I always run the tests with -n 4" in answer
    assert "## Canon" not in answer


def test_an_agents_task_is_answered_from_its_context_not_from_its_instructions() -> None:
    system = (
        "You check claims against sources and report which hold.\n\nHow to answer:\n"
        "- Write your contribution as plain text; it is a proposal for others to weigh.\n"
        "  read_file (path: file path): Read a text file inside the allowed roots."
    )
    task = task_message(
        "Which file sets the connection pool size?",
        notes=[problem_note("prob_1", "sensemaking")],
        context="## Canon\n- The pool size is set in config/pool.yaml",
    )
    answer = ask(task, system)
    assert "The pool size is set in config/pool.yaml" in answer
    assert '"Which file sets the connection pool size?"' in answer
    assert "Write your contribution" not in answer and "read_file" not in answer
