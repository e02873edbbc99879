"""Agents are sent the task and the stack's context apart, so an answer is drawn from the context.

The agents' task used to be the person's text with the context pasted after it, so the offline
model took all of it for the question and quoted the agents' own instructions back ("Write your
contribution as plain text; …", tool descriptions) as the answer.
"""

from __future__ import annotations

from hrm.home import HRMHome
from hrm.llm.offline import OFFLINE_MARKER
from hrm.pipeline import HRM
from hrm.runtime import _packets
from hrm.runtime.agents import AgentRegistry
from hrm.stacks.runtime_bridge import stack_tools

QUESTION = (
    "How do I configure the postgres connection pool for the billing-service-production "
    "deployment?"
)


def test_a_delegated_answer_never_quotes_the_agents_instructions(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        result = h.turn(QUESTION)
        assert result.action == "delegate"  # high stakes in a new session: verification
        agents = result.decision.execution["agents"]
        registry, tools = AgentRegistry.load(home), stack_tools(h.stack)
        instructions = {
            line.strip(" -")
            for agent in agents
            for line in _packets.system_prompt(registry.get(agent), tools).splitlines()
            if line.strip(" -")
        }
    assert result.response.startswith(OFFLINE_MARKER)
    assert "connection pool" in result.response  # the question it answers is the person's
    quoted = [line[2:] for line in result.response.splitlines() if line.startswith("- ")]
    assert not set(quoted) & instructions
