"""What a stack's model is sent keeps the same start from turn to turn of a session (D230).

A model server that caches the prompts it has seen (llama.cpp's slot, a provider's prefix
cache) evaluates only what follows the part a prompt shares with the last one. So the system
prompt opens with what does not change — role, canon, salience anchors — and what was retrieved
for this input comes after it; where hrm runs the model itself (``local``), the retrieved
sections follow the person's words, and the system prompt is the same every turn.
"""

from __future__ import annotations

import itertools

import pytest

from hrm.config import LLMConfig
from hrm.continuity.learnings import LearningsRepository
from hrm.continuity.learnings_types import LearningInput
from hrm.home import HRMHome
from hrm.llm import LLMCallConfig, Message
from hrm.llm.local import is_local_model_installed
from hrm.pipeline import HRM
from hrm.testing import ScriptedAdapter, ScriptedReply

LEARNINGS = (
    "Rename a git branch with git branch -m old new, then push the new name",
    "The invoices table needs an index on created_at before the migration runs",
    "The lint step on CI uses a newer ruff than the one installed locally",
)
QUESTIONS = (
    "How do I rename a git branch in the billing repo?",
    "Which index does the invoices table migration need?",
    "Why does the lint step fail on CI?",
)


def _answer(messages: list[Message], system: str, config: LLMCallConfig | None) -> str:
    return f"Here is what to do about item {len(messages)}: first check it, then change it."


def _conversation(home: HRMHome, provider: str) -> list[tuple[str, list[Message]]]:
    """The respond calls of a session: a preference, then three questions."""
    with LearningsRepository.open(home, embeddings="off") as repo:
        for text in LEARNINGS:
            repo.store_learning(LearningInput(content=text, type="CODEBASE_PATTERN"))
    model = ScriptedAdapter([ScriptedReply(respond=_answer)], repeat=True, provider=provider)
    with HRM.open(home, "ADMIN", model) as h:
        h.turn("I prefer short answers with examples")
        for question in QUESTIONS:
            h.turn(question)
    return [(c.system, c.messages) for c in model.calls
            if c.config is not None and c.config.purpose == "respond"]


def _sections(system: str) -> list[str]:
    return system.split("\n\n## ")


def test_every_turn_s_system_prompt_opens_with_the_same_role_and_canon(home: HRMHome) -> None:
    calls = _conversation(home, "scripted")
    assert len(calls) == len(QUESTIONS)
    openings = {tuple(_sections(system)[:2]) for system, _ in calls}
    assert len(openings) == 1  # role and canon, byte for byte, every turn
    (role, canon), = openings
    assert role.startswith("You are hrm's ADMIN stack")
    assert canon.startswith("Canon") and "I prefer short answers with examples" in canon
    retrieved = [system.split("\n\n## Learnings from earlier sessions\n", 1) for system, _ in calls]
    assert all(len(parts) == 2 for parts in retrieved)  # retrieved after the stable part
    assert len({learned for _, learned in retrieved}) > 1  # and what was retrieved varies


def test_a_local_model_gets_one_system_prompt_and_the_retrieved_after_the_words(
    home: HRMHome,
) -> None:
    calls = _conversation(home, "local")
    systems = {system for system, _ in calls}
    assert len(systems) == 1  # byte-identical every turn of the session
    (system,) = systems
    assert "I prefer short answers with examples" in system
    assert "Learnings from earlier sessions" not in system
    for (_, messages), question in zip(calls, QUESTIONS, strict=True):
        said = messages[-1].content
        assert said.startswith(question + "\n\n(Context retrieved from memory for this message:")
        assert "## Learnings from earlier sessions\n- [CODEBASE_PATTERN] " in said
        assert said.index("Context retrieved") < said.index("Follow my standing preferences")


def test_a_local_model_s_next_prompt_begins_with_what_it_was_sent_before(home: HRMHome) -> None:
    # The cache holds the last prompt as sent; the next prompt shows the person's words of
    # that turn as they were said, and they begin the message the model was sent then.
    calls = _conversation(home, "local")
    for (_, before), (_, after) in itertools.pairwise(calls):
        sent = before[-1].content
        earlier = [m.content for m in after if m.role == "user"][:-1]
        assert earlier and sent.startswith(earlier[-1] + "\n\n")
        answers = [m.content for m in after if m.role == "assistant"]
        assert answers[-1].startswith("Here is what to do")


@pytest.mark.local_model
@pytest.mark.slow
@pytest.mark.skipif(not is_local_model_installed(), reason="the local model is not installed")
def test_a_local_model_takes_the_conversation_of_a_governed_turn_from_its_cache(
    home: HRMHome,
) -> None:
    # With the retrieved sections inside the system prompt, each turn's different learnings
    # made llama.cpp evaluate the whole conversation again: it reused only the role and canon,
    # about a fifth of the third turn's prompt. Now only the new message is evaluated.
    with LearningsRepository.open(home, embeddings="off") as repo:
        for text in LEARNINGS:
            repo.store_learning(LearningInput(content=text, type="CODEBASE_PATTERN"))
    llm = LLMConfig(provider="local", temperature=0.0, max_tokens=48)
    with HRM.open(home, "ADMIN", llm) as h:
        h.turn("I prefer short answers with examples")
        for question in QUESTIONS:
            h.turn(question)
        cache = h.stack.gateway.adapter.prompt_cache
        assert cache.last_cached_tokens >= 0.45 * cache.last_prompt_tokens
