"""The pure parts of the 004 §9 flows: speech acts, inspection queries, registry comparison."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.stacks.flows import classify_speech_act, compare_frameworks, is_framework_inspection

ACTS = {"reentry_greeting", "greeting", "question", "request", "statement"}


@pytest.mark.parametrize(
    ("text", "history", "act"),
    [
        ("hello", False, "greeting"),
        ("hello", True, "reentry_greeting"),
        ("Hi there!", False, "greeting"),
        ("hey, I'm back", False, "reentry_greeting"),
        ("good morning", False, "greeting"),
        ("hello, can you fix the login bug?", True, "question"),
        ("hi — please write the report", False, "request"),
        ("What is the plan?", True, "question"),
        ("The build is green.", False, "statement"),
        ("", False, "statement"),
    ],
)
def test_speech_acts(text: str, history: bool, act: str) -> None:
    assert classify_speech_act(text, has_history=history).speech_act == act


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.booleans())
def test_speech_act_classification_is_total(text: str, history: bool) -> None:
    act = classify_speech_act(text, has_history=history)
    assert act.speech_act in ACTS
    assert act.ambiguity in ("high", "medium", "low")
    assert act.search == (act.speech_act in ("greeting", "reentry_greeting"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Admin: show me all frameworks", True), ("list the frameworks", True),
     ("which frameworks are installed?", True), ("delete FMWK-009", False),
     ("hello", False), ("write a framework for me", False),
     ("show me the framework registry", True), ("what frameworks do you have?", True),
     ("Show me all the installed frameworks", True),
     # frameworks in general are the model's to answer, not hrm's registry
     ("which python web framework should I use for a small REST API?", False),
     ("what did we decide for the framework?", False),
     ("what frameworks should I learn for web development?", False),
     ("list frameworks for building CLIs in Rust", False),
     ("which framework is faster, Django or Flask?", False)],
)
def test_framework_inspection_queries(text: str, expected: bool) -> None:
    assert is_framework_inspection(text) is expected


def test_registry_comparison_names_every_kind_of_discrepancy() -> None:
    rows = [{"framework_id": "FMWK-1", "path": "HOT/frameworks/FMWK-1"},
            {"framework_id": "FMWK-2", "path": "HOT/frameworks/FMWK-2"},
            {"framework_id": "FMWK-3", "path": "HOT/frameworks/OTHER"}]
    found = compare_frameworks(rows, ["FMWK-1", "OTHER", "FMWK-9"])
    assert [(d["framework_id"], d["kind"]) for d in found] == [
        ("FMWK-2", "missing_directory"), ("FMWK-3", "path_mismatch"),
        ("FMWK-9", "unregistered_directory")]


ids = st.from_regex(r"FMWK-[0-9]{1,3}", fullmatch=True)


@settings(max_examples=150, deadline=None)
@given(st.sets(ids, max_size=8), st.sets(ids, max_size=8))
def test_registry_comparison_is_exact(registered: set[str], on_disk: set[str]) -> None:
    rows = [{"framework_id": f, "path": f"HOT/frameworks/{f}"} for f in sorted(registered)]
    found = compare_frameworks(rows, sorted(on_disk))
    missing = {d["framework_id"] for d in found if d["kind"] == "missing_directory"}
    extra = {d["framework_id"] for d in found if d["kind"] == "unregistered_directory"}
    assert missing == registered - on_disk
    assert extra == on_disk - registered
    assert not [d for d in found if d["kind"] == "path_mismatch"]
