"""The model tier of capture: only a capable model, only what the session supports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hrm.continuity import _capture_model
from hrm.continuity._capture_model import capable_model, model_capture
from hrm.continuity.handoff_store import HandoffStore
from hrm.continuity.hooks import HookOrchestrator, SessionCheckpoint
from hrm.home import HRMHome
from hrm.testing import ScriptedAdapter

RECORD = (
    "Person: the nightly export crashes\n"
    "Error from make export: MemoryError while building the zip archive\n"
    "Assistant: Writing the archive with zipfile in streaming mode keeps memory flat; "
    "the nightly export finishes now."
)


def answer(*learnings: dict[str, str]) -> str:
    return json.dumps({"learnings": list(learnings)})


def test_the_model_adds_what_the_session_supports_and_nothing_else() -> None:
    llm = ScriptedAdapter([answer(
        {"type": "WORKING_SOLUTION",
         "content": "Writing the export archive with zipfile in streaming mode keeps memory flat"},
        {"type": "ERROR_FIX",
         "content": "Upgrading the kubernetes cluster to 1.31 fixed the ingress certificates"},
    )])
    found = model_capture(llm, RECORD, known=[])
    assert [(f.type, f.evidence, f.confidence) for f in found] == [
        ("WORKING_SOLUTION", "model", "LOW")]
    assert "Session record" in llm.calls[0].messages[0].content


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param("not json at all", id="junk"),
        pytest.param(json.dumps({"learnings": [{"type": "GOSSIP", "content": "x" * 30}]}),
                     id="type-outside-the-schema"),
        pytest.param(json.dumps({"learnings": "none"}), id="wrong-shape"),
    ],
)
def test_a_junk_answer_adds_nothing(reply: str) -> None:
    llm = ScriptedAdapter([reply], repeat=True)
    assert model_capture(llm, RECORD, known=[]) == []


def test_the_offline_model_is_never_asked(home: HRMHome, tmp_path: Path) -> None:
    assert capable_model(home, tmp_path) is None


def test_pre_compact_asks_a_capable_model_and_stores_its_learnings(
    home: HRMHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = ScriptedAdapter([answer(
        {"type": "WORKING_SOLUTION",
         "content": "Writing the archive with zipfile in streaming mode keeps memory flat"})])
    monkeypatch.setattr(_capture_model, "capable_model", lambda home, project: llm)
    transcript = tmp_path / "t.jsonl"
    entries: list[dict[str, Any]] = [
        {"type": "user", "message": {"role": "user", "content": "the nightly export crashes"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text",
         "text": "Writing the archive with zipfile in streaming mode keeps memory flat."}]}},
    ]
    transcript.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    orchestrator = HookOrchestrator(home)
    response = orchestrator.on_pre_compact(SessionCheckpoint(
        kind="pre_compact", session_id="s", project_path=tmp_path, transcript_path=transcript,
        trigger="auto"))
    orchestrator.close()
    assert not orchestrator.failures
    assert response.metadata["learnings_stored"] == 1
    handoff = HandoffStore(home).load(Path(response.metadata["handoff_path"]))
    assert [item.type for item in handoff.learnings] == ["WORKING_SOLUTION"]
