"""Reading a transcript drops what the person marked private and scrubs before it cuts."""

from __future__ import annotations

import json
from pathlib import Path

from hrm.continuity.hooks import SessionCheckpoint
from hrm.continuity.transcript import build_session_handoff, summarize_entries

SECRET = "sk-proj-IhKtJ0RlgLKOmxgJTeKdNnFRIBXuDL7DxtpYlSXpfKtHF4vUCsMehGAk"


def _line(role: str, content: object) -> str:
    return json.dumps({"type": role, "message": {"role": role, "content": content}})


def test_private_text_in_prompts_and_replies_is_gone() -> None:
    summary = summarize_entries([
        _line("user", "Fix the login bug <private>my diagnosis: bad mood</private> today"),
        _line("assistant", [{"type": "text", "text": "Done.<private>notes to self</private>"}]),
    ])
    assert summary.user_prompts == ("Fix the login bug [private] today",)
    assert summary.last_assistant_message == "Done.[private]"


def test_an_unclosed_private_tag_hides_the_rest_even_past_the_cut() -> None:
    text = "Keep this. <private>" + "hidden words " * 1000
    summary = summarize_entries([_line("user", text)])
    assert summary.user_prompts == ("Keep this. [private]",)


def test_a_secret_straddling_the_cut_is_not_kept_in_part() -> None:
    padding = "x " * 1990  # the prompt is cut at 4000 characters; the key starts before
    summary = summarize_entries([
        _line("user", padding + "key " + SECRET + " end"),
        _line("assistant", SECRET + " " + "y " * 2000),
    ])
    kept = summary.user_prompts[0] + (summary.last_assistant_message or "")
    assert "IhKtJ0R" not in kept


def test_compact_instructions_lose_private_text_and_secrets(tmp_path: Path) -> None:
    checkpoint = SessionCheckpoint(
        kind="pre_compact", session_id="s", project_path=tmp_path, trigger="manual",
        instructions="focus on auth <private>and my salary</private> " + "z" * 990 + SECRET,
    )
    handoff = build_session_handoff(summarize_entries([_line("user", "Fix auth")]), checkpoint)
    assert handoff is not None
    instructions = handoff.extra["instructions"]
    assert "salary" not in instructions and "[private]" in instructions
    assert "IhKtJ0Rlg" not in instructions
