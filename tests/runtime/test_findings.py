"""Agents' findings carry a ConfidenceMarker and a Verification section (003 §5, Integration 4)."""

from __future__ import annotations

import json

from hrm.runtime._packets import build_output, parse_reply
from hrm.runtime.agents import AgentDefinition


def definition() -> AgentDefinition:
    return AgentDefinition(id="auditor", role="auditor", system_prompt="You audit code.")


def output(findings: object) -> object:
    reply = json.dumps({"content": "Audit of the parser.", "findings": findings})
    return build_output(definition(), parse_reply(reply), metadata={})


def test_each_finding_is_marked_by_its_evidence() -> None:
    packet = output([
        {"claim": "parse() is never called with bytes", "importance": "critical",
         "location": {"path": "src/parser.py", "line_start": 10, "line_end": 40},
         "evidence": [{"type": "file_read", "description": "read parser.py"},
                      {"type": "trace", "description": "ran the suite with a breakpoint"}]},
        {"claim": "load_config is unused", "evidence": [{"type": "grep_match",
                                                         "description": "rg load_config"}]},
        {"claim": "the cache is thread-safe"},
        {"claim": "the lexer is linear", "evidence": [{"type": "vibes", "description": "?"}]},
        {"claim": ""}, "not a finding",
    ])
    content = str(packet.content)  # type: ignore[attr-defined]
    assert content.startswith("Audit of the parser.\n\n## Verification")
    assert "✓ parse() is never called with bytes (src/parser.py:10-40) [0.9]" in content
    assert "? load_config is unused [0.5] — needs review" in content
    assert "✗ the cache is thread-safe [0.2] — needs review" in content
    assert "✗ the lexer is linear [0.2]" in content
    assert packet.metadata["verification"] == {  # type: ignore[attr-defined]
        "verified": 1, "inferred": 1, "uncertain": 2, "requires_review": 3}


def test_a_packet_without_findings_is_left_as_it_was() -> None:
    packet = build_output(definition(), parse_reply("Plain answer.\nConfidence: 0.6"),
                          metadata={})
    assert packet.content == "Plain answer." and "verification" not in packet.metadata
    assert "verification" not in output("a string, not a list").metadata  # type: ignore[attr-defined]
