"""A home built through real use, for the faults that damage one (and for rebuild checks)."""

from __future__ import annotations

import shutil
from pathlib import Path

TURNS = (
    "Remember that our API base URL is https://api.internal.example",
    "I prefer a formal tone in answers",
    "The login webhook keeps failing with a 500 error, can you help debug it?",
    "Let's focus on the webhook for the next 3 turns",
    "What does the stack trace say about the handler?",
    "Mark the webhook problem as done",
    "I need to plan the team offsite in March",
    "Let's park the offsite for now.",
    "How do I rename a git branch?",
    "How do I rename a git branch?",
    "How do I rename a git branch?",
    "Remember that I live in Lisbon",
    "Forget that I live in Lisbon",
    "What's still open?",
)


def build(home: Path, *, seed: int = 0) -> Path:
    """Turns (canon, problems resolved and parked, a commitment, patterns), then learnings
    learned, imported, and one forgotten; returns `home`."""
    from hrm import HRM
    from hrm.continuity.learnings import LearningsRepository
    from hrm.continuity.learnings_types import LearningInput
    from hrm.home import HRMHome

    with HRM.open(home, llm="offline") as hrm:
        for text in TURNS:
            hrm.turn(text)
        for n in range(seed % 5):
            hrm.turn(f"Quick question {seed}-{n}: how do I squash commits?")
    with LearningsRepository.open(HRMHome(home), embeddings="off") as repo:
        repo.store_learning(LearningInput(content=f"Run the linter first ({seed})",
                                          type="ARCHITECTURAL_DECISION"))
        repo.store_learning(LearningInput(content=f"The flaky upload test needs a retry {seed}",
                                          type="ERROR_FIX", tags=["ci"]))
        repo.import_([
            {"content": f"Cache keys include the tenant id {seed}", "type": "WORKING_SOLUTION"},
            {"content": f"Use UTC timestamps everywhere {seed}", "type": "WORKING_SOLUTION"},
        ])
        repo.forget(f"The flaky upload test needs a retry {seed}")
    return home


def copy(template: Path, to: Path) -> Path:
    """A fresh copy of a built home (faster than building one per trial)."""
    shutil.copytree(template, to, symlinks=True)
    return to
