"""The task message an agent is sent, read back as the offline model reads it."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from hrm.llm import task_message as tm


def test_the_task_and_its_material_come_back_apart() -> None:
    text = tm.task_message(
        "How do I size the pool?\n\nIt times out under load.",
        notes=[tm.delegated_note("planner"), tm.problem_note("prob_1", "execution")],
        sections=[(tm.previous_label("researcher"), "pgbouncer sits in front")],
        context="## Canon\n- I want pool sizes backed by a load test",
    )
    read = tm.read_task_message(text)
    assert read is not None
    assert read.task == "How do I size the pool?\n\nIt times out under load."
    assert read.material == (
        "pgbouncer sits in front",
        "## Canon",
        "- I want pool sizes backed by a load test",
    )


def test_a_synthesis_message_carries_the_outputs_as_material() -> None:
    text = tm.task_message(
        "Ship it",
        sections=[(tm.SYNTHESIZE, ""), (tm.output_label(1, "critic"), "risky\nbut fine")],
    )
    read = tm.read_task_message(text)
    assert read is not None and read.task == "Ship it"
    assert read.material == ("risky", "but fine")


def test_any_other_message_is_not_a_task_message() -> None:
    assert tm.read_task_message("How do I size the pool?") is None
    assert tm.read_task_message("") is None


def test_an_empty_task_reads_back_empty() -> None:
    read = tm.read_task_message(tm.task_message("  ", context="facts"))
    assert read is not None and read.task == "" and read.material == ("facts",)


_LABELS = ("Context:", "Problem: ", "Output ", "(Delegated", "Synthesize")


@given(st.text(min_size=1), st.text())
def test_what_is_written_is_read_back(task: str, context: str) -> None:
    # A task paragraph or a context line that is itself one of the format's labels is the
    # documented limit of the format.
    assume(not any(part.startswith(_LABELS) for part in task.split("\n\n")[1:]))
    assume(not any(line.startswith(_LABELS) for line in context.splitlines()))
    # The placeholder an empty task is written as reads back as no task (hypothesis found it).
    assume(task.strip() != "(no task text given)")
    text = tm.task_message(task, notes=[tm.problem_note("prob_1", "sensemaking")],
                           context=context)
    read = tm.read_task_message(text)
    assert read is not None
    assert read.task == ("" if not task.strip() else task.strip())
    assert read.material == tuple(line for line in context.strip().splitlines() if line.strip())
