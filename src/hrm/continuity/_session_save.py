"""What PreCompact, SessionEnd and Stop do with a session: a handoff that lands, and its learnings.

`save_session` is the checkpoint (PreCompact, SessionEnd): first a minimal handoff, durably, on
the hook's own thread (`_durable_handoff`), so a killed or overrun hook still leaves one; then,
within what is left of the budget, the full handoff replaces it (transcript summary, the
session's captured learnings), and the learnings are stored. `capture_at_stop` reads what the
transcript gained since the last capture of the session and stores the learnings it yields, so
a session's end has only its last turn left to read (D241).

The orchestrator's guards and budgeted workers are used as they are: a failure is recorded in
`HookOrchestrator.failures`, never raised. Imported only by those three handlers.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from hrm.continuity._durable_handoff import (
    first_prompt,
    minimal_document,
    session_dirname,
    write_minimal,
)

TYPE_CHECKING = False  # the minimal handoff is written before anything heavier is imported
if TYPE_CHECKING:
    import logging
    from typing import Any

    from hrm.continuity.capture import CaptureState
    from hrm.continuity.hooks import HookOrchestrator, SessionCheckpoint, StopSignal
    from hrm.home import HRMHome

__all__ = ["capture_at_stop", "save_session"]


def _logger() -> logging.Logger:
    import logging

    return logging.getLogger("hrm.continuity.hooks")  # log settings name the orchestrator's

_STOP_BUDGET_S = 2.0
"""A Stop hook reads at most this long: the assistant's turn is over, but the person waits."""


def save_session(
    orchestrator: HookOrchestrator, checkpoint: SessionCheckpoint, *, budget_ms: int | None
) -> dict[str, Any]:
    """Write the session's handoff — minimal first, then enriched — and store its learnings.

    Returns:
        The figures for the hook log: ``handoff_path``, ``handoff_stage`` (``minimal``,
        ``enriched`` or None), ``learnings_stored``, ``elapsed_ms``.
    """
    from hrm.continuity.hooks import _Budgeted

    started = time.monotonic()
    home = orchestrator.home
    minimal = orchestrator._guard(
        "write minimal handoff", lambda: _write_minimal(home, checkpoint), None
    )
    outcome: dict[str, Any] = {}

    def enrich() -> None:
        _enrich(orchestrator, checkpoint, minimal, outcome, deadline)

    if budget_ms is None:
        deadline = None
        orchestrator._guard("enrich handoff", enrich, None)
    else:
        deadline = started + budget_ms / 1000
        orchestrator._collect("enrich handoff", _Budgeted("handoff", enrich), deadline)
    path = outcome.get("path", minimal)
    stage = outcome.get("stage", "minimal" if minimal is not None else None)
    return {
        "handoff_path": str(path) if path else None,
        "handoff_stage": stage,
        "learnings_stored": outcome.get("stored", 0),
        "elapsed_ms": round((time.monotonic() - started) * 1000),
    }


def _write_minimal(home: HRMHome, checkpoint: SessionCheckpoint) -> Path:
    transcript = str(checkpoint.transcript_path) if checkpoint.transcript_path else None
    document = minimal_document(
        session_id=checkpoint.session_id,
        project_path=str(checkpoint.project_path),
        moment="compaction" if checkpoint.kind == "pre_compact" else "session end",
        trigger=checkpoint.trigger,
        transcript_path=transcript,
        prompt=first_prompt(transcript),
    )
    return write_minimal(home.handoffs_dir, document)


def _enrich(
    orchestrator: HookOrchestrator,
    checkpoint: SessionCheckpoint,
    minimal: Path | None,
    outcome: dict[str, Any],
    deadline: float | None,
) -> None:
    """The full handoff in place of the minimal one, then the session's learnings stored."""
    from dataclasses import replace

    from hrm.continuity.capture import (
        CapturedLearning,
        capture_transcript,
        store_captured,
        with_learnings,
    )
    from hrm.continuity.transcript import build_session_handoff, read_transcript

    logger = _logger()

    summary = read_transcript(checkpoint.transcript_path)
    if summary.problem is not None:
        logger.warning("session %s: %s", checkpoint.session_id, summary.problem)
    state = _load_state(orchestrator.home, checkpoint.session_id)
    captured = capture_transcript(checkpoint.transcript_path, state=state, deadline=deadline)
    learnings = list(captured.learnings)
    if deadline is None:  # PreCompact can wait for a model; SessionEnd's budget cannot (D247)
        learnings += orchestrator._guard(
            "model capture", lambda: _model_learnings(orchestrator, checkpoint, captured), []
        )
    handoff = build_session_handoff(summary, checkpoint)
    if handoff is None:
        if minimal is not None and summary.problem is None:
            # The transcript was read and holds nothing to hand off: no handoff, as before.
            minimal.unlink(missing_ok=True)
            outcome.update(path=None, stage=None)
        logger.info("session %s has nothing to hand off", checkpoint.session_id)
    else:
        session = [
            CapturedLearning(type=kind, content=text, confidence="MEDIUM", evidence="session")
            for kind, text in captured.state.kept
        ]
        handoff = with_learnings(handoff, session)
        handoff = replace(handoff, extra={**handoff.extra, "stage": "enriched"})
        store = orchestrator._handoffs_factory()
        path = store.enrich(minimal, handoff) if minimal is not None else store.write(handoff)
        outcome.update(path=Path(path), stage="enriched")
    _save_state(orchestrator.home, checkpoint.session_id, captured.state)
    if learnings:
        ids, _ = store_captured(
            orchestrator.learnings(), learnings,
            session_id=checkpoint.session_id, project_path=str(checkpoint.project_path),
        )
        outcome["stored"] = len(ids)


def _model_learnings(
    orchestrator: HookOrchestrator, checkpoint: SessionCheckpoint, captured: Any
) -> list[Any]:
    """What a capable configured model adds to the deterministic capture (none otherwise)."""
    from hrm.continuity._capture_model import capable_model, model_capture

    llm = capable_model(orchestrator.home, checkpoint.project_path)
    if llm is None or not captured.record:
        return []
    known = [content for _, content in captured.state.kept]
    found = model_capture(llm, captured.record, known=known)
    for item in found:  # the session's handoff lists them with the rest
        if len(captured.state.kept) < 20:
            captured.state.kept.append([item.type, item.content])
    return found


def capture_at_stop(orchestrator: HookOrchestrator, signal: StopSignal) -> dict[str, Any]:
    """Read the transcript's new lines and store the learnings they yield (bounded in time)."""
    from hrm.continuity.capture import capture_transcript, store_captured

    started = time.monotonic()
    state = _load_state(orchestrator.home, signal.session_id)
    captured = capture_transcript(
        signal.transcript_path, state=state, deadline=started + _STOP_BUDGET_S
    )
    stored: list[str] = []
    if captured.learnings:
        stored, _ = store_captured(
            orchestrator.learnings(), captured.learnings,
            session_id=signal.session_id, project_path=str(signal.project_path),
        )
    if captured.problem is None:
        _save_state(orchestrator.home, signal.session_id, captured.state)
    return {
        "learnings_found": len(captured.learnings),
        "learnings_stored": len(stored),
        "lines_read": captured.lines_read,
        "lines_skipped": captured.lines_skipped,
        "capture_timed_out": captured.timed_out,
    }


def _state_file(home: HRMHome, session_id: str) -> Path:
    return home.cache_dir / "capture" / f"{session_dirname(session_id)}.json"


def _load_state(home: HRMHome, session_id: str) -> CaptureState:
    from hrm.continuity.capture import CaptureState

    try:
        raw = json.loads(_state_file(home, session_id).read_bytes())
    except (OSError, ValueError):
        return CaptureState()  # none yet, or damaged: read the transcript from the start
    return CaptureState.from_dict(raw)


def _save_state(home: HRMHome, session_id: str, state: CaptureState) -> None:
    from hrm._private import make_private_dirs, write_private
    from hrm.scrubbing import scrub

    target = _state_file(home, session_id)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        make_private_dirs(target.parent)
        # Error lines and learnings quote tool output: scrubbed like every stored text.
        write_private(temporary, json.dumps(scrub(state.to_dict())).encode())
        os.replace(temporary, target)
    except (OSError, ValueError):  # the next capture rereads some lines; the store dedupes
        temporary.unlink(missing_ok=True)
