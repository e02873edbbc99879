"""The hook protocol layer: Claude Code payloads and the spec envelope in, §5.3 JSON out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.continuity.hook_protocol import (
    HookEvent,
    event_from_argument,
    parse_hook_input,
    render_response,
)
from hrm.continuity.hooks import (
    FileInfo,
    HookAction,
    HookResponse,
    SessionCheckpoint,
    SessionContext,
    SessionMode,
    StopSignal,
    UserPrompt,
)

CWD = Path("/proc-cwd")


def parse(payload: object, *, argument: HookEvent | None = None, env: dict[str, str] | None = None):
    raw = json.dumps(payload).encode() if not isinstance(payload, bytes) else payload
    return parse_hook_input(raw, argument_event=argument, environ=env or {}, cwd=CWD)


@pytest.mark.parametrize(
    ("argument", "event"),
    [
        ("session-start", HookEvent.SESSION_START),
        ("user-prompt-submit", HookEvent.USER_PROMPT_SUBMIT),
        ("post-tool-use", HookEvent.POST_TOOL_USE),
        ("pre-compact", HookEvent.PRE_COMPACT),
        ("stop", HookEvent.STOP),
        ("session-end", HookEvent.SESSION_END),
        ("SessionStart", HookEvent.SESSION_START),
        ("user_prompt_submit", HookEvent.USER_PROMPT_SUBMIT),
        ("notification", None),
        ("", None),
        (None, None),
    ],
)
def test_event_argument_names(argument: str | None, event: HookEvent | None) -> None:
    assert event_from_argument(argument) is event


def test_kebab_argument_round_trips_for_every_event() -> None:
    for event in HookEvent:
        assert event_from_argument(event.argument) is event


def test_session_start_maps_source_to_mode_and_cwd_to_project() -> None:
    parsed = parse(
        {
            "hook_event_name": "SessionStart",
            "session_id": "s1",
            "cwd": "/home/u/app",
            "source": "compact",
            "transcript_path": "/t.jsonl",
        }
    )
    assert parsed.request is not None
    ctx = parsed.request.payload
    assert isinstance(ctx, SessionContext)
    assert ctx.mode is SessionMode.COMPACT
    assert ctx.project_path == Path("/home/u/app")
    assert ctx.transcript_path == Path("/t.jsonl")
    assert ctx.session_id == "s1"


@pytest.mark.parametrize(
    ("source", "mode"),
    [
        ("startup", SessionMode.STARTUP),
        ("resume", SessionMode.RESUME),
        ("clear", SessionMode.CLEAR),
        ("fork", SessionMode.RESUME),
        ("something-new", SessionMode.STARTUP),
        (None, SessionMode.STARTUP),
        (42, SessionMode.STARTUP),
    ],
)
def test_unknown_or_missing_source_is_startup(source: object, mode: SessionMode) -> None:
    parsed = parse({"hook_event_name": "SessionStart", "session_id": "s", "source": source})
    assert parsed.request is not None
    assert parsed.request.payload.mode is mode  # type: ignore[union-attr]


def test_claude_project_dir_wins_over_cwd() -> None:
    parsed = parse(
        {"hook_event_name": "SessionStart", "cwd": "/a/sub"},
        env={"CLAUDE_PROJECT_DIR": "/a"},
    )
    assert parsed.request is not None
    assert parsed.request.payload.project_path == Path("/a")


def test_process_cwd_is_the_last_resort_for_the_project() -> None:
    parsed = parse({"hook_event_name": "SessionStart", "cwd": None})
    assert parsed.request is not None
    assert parsed.request.payload.project_path == CWD


def test_user_prompt() -> None:
    parsed = parse({"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "fix it"})
    assert parsed.request is not None
    prompt = parsed.request.payload
    assert isinstance(prompt, UserPrompt)
    assert prompt.text == "fix it"
    assert prompt.turn_number == 0


def test_user_prompt_without_text_is_nothing_to_do() -> None:
    parsed = parse({"hook_event_name": "UserPromptSubmit", "prompt": 17})
    assert parsed.request is None
    assert parsed.event is HookEvent.USER_PROMPT_SUBMIT


def test_post_tool_use_write() -> None:
    parsed = parse(
        {
            "hook_event_name": "PostToolUse",
            "session_id": "s",
            "tool_name": "Write",
            "tool_input": {"file_path": "/p/docs/handoffs/x.md", "content": "x" * 900},
        }
    )
    assert parsed.request is not None
    info = parsed.request.payload
    assert isinstance(info, FileInfo)
    assert info.path == Path("/p/docs/handoffs/x.md")
    assert len(info.content_preview) == 500
    assert info.file_type == "markdown"


def test_post_tool_use_edit_and_multiedit_preview_the_new_text() -> None:
    edit = parse(
        {
            "hook_event_name": "PostToolUse",
            "tool_name": "Edit",
            "tool_input": {"file_path": "/p/plan.md", "old_string": "a", "new_string": "b"},
        }
    )
    multi = parse(
        {
            "hook_event_name": "PostToolUse",
            "tool_name": "MultiEdit",
            "tool_input": {"file_path": "/p/plan.md", "edits": [{"new_string": "one"}, 3]},
        }
    )
    assert edit.request is not None and multi.request is not None
    assert edit.request.payload.content_preview == "b"  # type: ignore[union-attr]
    assert multi.request.payload.content_preview == "one"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "tool_input",
    [
        {"command": "ls"},
        {"file_path": 12},
        {"file_path": ""},
        {"file_path": "a\x00b"},
        None,
    ],
)
def test_post_tool_use_without_a_usable_file_is_nothing_to_do(tool_input: object) -> None:
    parsed = parse({"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_input": tool_input})
    assert parsed.request is None


def test_post_tool_use_of_other_tools_is_nothing_to_do() -> None:
    parsed = parse(
        {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"file_path": "/x"}}
    )
    assert parsed.request is None


def test_relative_file_path_is_taken_from_the_project() -> None:
    parsed = parse(
        {
            "hook_event_name": "PostToolUse",
            "cwd": "/proj",
            "tool_name": "Write",
            "tool_input": {"file_path": "notes/plan.md"},
        }
    )
    assert parsed.request is not None
    assert parsed.request.payload.path == Path("/proj/notes/plan.md")  # type: ignore[union-attr]


def test_pre_compact_and_session_end_are_checkpoints() -> None:
    compact = parse({"hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""})
    end = parse({"hook_event_name": "SessionEnd", "reason": "logout", "transcript_path": "/t"})
    assert compact.request is not None and end.request is not None
    assert isinstance(compact.request.payload, SessionCheckpoint)
    assert compact.request.payload.kind == "pre_compact"
    assert compact.request.payload.trigger == "auto"
    assert isinstance(end.request.payload, SessionCheckpoint)
    assert end.request.payload.kind == "session_end"
    assert end.request.payload.trigger == "logout"
    assert end.request.payload.transcript_path == Path("/t")


@pytest.mark.parametrize(("value", "active"), [(True, True), (False, False), ("true", False)])
def test_stop_hook_active_only_when_literally_true(value: object, active: bool) -> None:
    parsed = parse({"hook_event_name": "Stop", "stop_hook_active": value})
    assert parsed.request is not None
    signal = parsed.request.payload
    assert isinstance(signal, StopSignal)
    assert signal.stop_hook_active is active


def test_spec_envelope_is_accepted() -> None:
    parsed = parse(
        {
            "event": "UserPromptSubmit",
            "session_id": "s",
            "timestamp": "2026-01-12T10:30:00Z",
            "data": {"prompt": "write tests"},
        }
    )
    assert parsed.request is not None
    assert parsed.request.event is HookEvent.USER_PROMPT_SUBMIT
    assert parsed.request.payload.text == "write tests"  # type: ignore[union-attr]


def test_spec_envelope_post_write() -> None:
    parsed = parse(
        {"event": "PostToolUse", "data": {"file_path": "/p/handoff.yaml", "content_preview": "x"}}
    )
    assert parsed.request is not None
    assert parsed.request.payload.path == Path("/p/handoff.yaml")  # type: ignore[union-attr]


def test_payload_event_wins_over_the_argument_and_the_mismatch_is_noted() -> None:
    parsed = parse({"hook_event_name": "Stop"}, argument=HookEvent.SESSION_START)
    assert parsed.request is not None
    assert parsed.request.event is HookEvent.STOP
    assert any("disagrees" in note for note in parsed.notes)


def test_argument_names_the_event_when_the_payload_does_not() -> None:
    parsed = parse({"session_id": "s", "prompt": "p"}, argument=HookEvent.USER_PROMPT_SUBMIT)
    assert parsed.request is not None
    assert parsed.request.event is HookEvent.USER_PROMPT_SUBMIT


@pytest.mark.parametrize(
    "raw",
    [b"", b"   \n", b"not json", b"[1, 2]", b'"text"', b"null", b"\xff\xfe\x00", b"[" * 100_000],
)
def test_unusable_input_is_nothing_to_do(raw: bytes) -> None:
    parsed = parse(raw, argument=HookEvent.USER_PROMPT_SUBMIT)
    assert parsed.request is None
    assert parsed.problem


@pytest.mark.parametrize("name", ["Notification", "PreToolUse", 7, ["SessionStart"]])
def test_unknown_event_is_nothing_to_do(name: object) -> None:
    parsed = parse({"hook_event_name": name, "prompt": "p"}, argument=HookEvent.USER_PROMPT_SUBMIT)
    assert parsed.request is None
    assert parsed.problem and "unknown" in parsed.problem


# -- rendering ---------------------------------------------------------------------------------


def test_session_start_context_is_hook_specific_output() -> None:
    out = render_response(
        HookEvent.SESSION_START,
        HookResponse(action=HookAction.SUGGEST, additional_context="notes"),
    )
    assert out is not None
    assert json.loads(out) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "notes"}
    }


def test_block_is_decision_block_with_reason() -> None:
    out = render_response(
        HookEvent.USER_PROMPT_SUBMIT,
        HookResponse(action=HookAction.BLOCK, blocking_reason="use tdd"),
    )
    assert out is not None
    assert json.loads(out) == {"decision": "block", "reason": "use tdd"}


def test_block_without_reason_is_silence() -> None:
    assert render_response(HookEvent.USER_PROMPT_SUBMIT, HookResponse(action=HookAction.BLOCK)) is None


@pytest.mark.parametrize(
    "event",
    [HookEvent.POST_TOOL_USE, HookEvent.PRE_COMPACT, HookEvent.STOP, HookEvent.SESSION_END],
)
def test_side_effect_events_never_answer(event: HookEvent) -> None:
    response = HookResponse(
        action=HookAction.BLOCK, additional_context="x", blocking_reason="no"
    )
    assert render_response(event, response) is None


def test_continue_is_silence() -> None:
    assert render_response(HookEvent.USER_PROMPT_SUBMIT, HookResponse()) is None
    assert render_response(
        HookEvent.SESSION_START, HookResponse(action=HookAction.SUGGEST, additional_context="  ")
    ) is None


def test_context_is_capped_and_ascii() -> None:
    out = render_response(
        HookEvent.USER_PROMPT_SUBMIT,
        HookResponse(action=HookAction.SUGGEST, additional_context="é\ud800" * 20_000),
    )
    assert out is not None
    assert out.isascii()
    assert len(json.loads(out)["hookSpecificOutput"]["additionalContext"]) == 10_000


@settings(max_examples=150, deadline=None)
@given(
    event=st.sampled_from(list(HookEvent)),
    action=st.sampled_from(list(HookAction)),
    context=st.none() | st.text(max_size=300),
    reason=st.none() | st.text(max_size=100),
)
def test_rendered_answers_follow_the_protocol(
    event: HookEvent, action: HookAction, context: str | None, reason: str | None
) -> None:
    out = render_response(
        event, HookResponse(action=action, additional_context=context, blocking_reason=reason)
    )
    if out is None:
        return
    answer = json.loads(out)
    assert isinstance(answer, dict)
    assert event in (HookEvent.SESSION_START, HookEvent.USER_PROMPT_SUBMIT)
    if "decision" in answer:
        assert event is HookEvent.USER_PROMPT_SUBMIT
        assert answer == {"decision": "block", "reason": answer["reason"]}
        assert answer["reason"].strip()
    else:
        assert set(answer) == {"hookSpecificOutput"}
        assert answer["hookSpecificOutput"]["hookEventName"] == event.value
        assert set(answer["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
        assert 0 < len(answer["hookSpecificOutput"]["additionalContext"]) <= 10_000
