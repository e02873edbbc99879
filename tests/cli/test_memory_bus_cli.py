"""`hrm memory shared|working|episodes|synthesis` end to end on a throwaway home."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from hrm.cli.memory_bus import app
from hrm.home import HRMHome
from hrm.memory.bus import MemoryBus
from hrm.memory.types import EpisodeEntry, SynthesizedPattern, WriteSignals

runner = CliRunner()


def run(home: HRMHome, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, [*args, "--home", str(home.root)])
    return result.exit_code, result.stdout, result.stderr


def run_json(home: HRMHome, *args: str) -> Any:
    code, out, err = run(home, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_shared_set_get_history_rollback_cite(home: HRMHome) -> None:
    assert run_json(home, "shared", "set", "tone", '{"style": "formal"}')["version"] == 1
    assert run_json(home, "shared", "set", "tone", "casual")["version"] == 2
    assert run_json(home, "shared", "get", "tone")["value"] == "casual"
    assert run_json(home, "shared", "get", "tone", "--version", "1")["value"] == {
        "style": "formal"
    }
    history = run_json(home, "shared", "history", "tone")
    assert [(v["version"], v["value"]) for v in history] == [
        (1, {"style": "formal"}),
        (2, "casual"),
    ]
    restored = run_json(home, "shared", "rollback", "tone", "1")
    assert (restored["version"], restored["value"], restored["rollback_of"]) == (
        3,
        {"style": "formal"},
        1,
    )
    citation = run_json(home, "shared", "cite", "tone")["citation"]
    assert citation.startswith("[ref:tone@v3 by user, ")
    assert [r["key"] for r in run_json(home, "shared", "list")] == ["tone"]


def test_string_flag_keeps_json_looking_text(home: HRMHome) -> None:
    run_json(home, "shared", "set", "n", "42", "--string")
    run_json(home, "shared", "set", "m", "42")
    assert run_json(home, "shared", "get", "n")["value"] == "42"
    assert run_json(home, "shared", "get", "m")["value"] == 42


def test_human_output_is_a_table(home: HRMHome) -> None:
    run_json(home, "shared", "set", "tone", "formal")
    code, out, _ = run(home, "shared", "history", "tone")
    assert code == 0 and "version" in out and "formal" in out
    code, out, _ = run(home, "episodes", "--type", "write_completed")
    assert code == 0 and "write_completed" in out


def test_rollback_to_a_missing_version_fails_on_one_stderr_line(home: HRMHome) -> None:
    run_json(home, "shared", "set", "k", "a")
    code, out, err = run(home, "shared", "rollback", "k", "9")
    assert code != 0 and out == ""
    assert err.strip().count("\n") == 0
    assert "not_found" in err and "k@v9" in err and "versions 1" in err
    assert [v["version"] for v in run_json(home, "shared", "history", "k")] == [1]


def test_missing_key_is_an_error(home: HRMHome) -> None:
    code, _, err = run(home, "shared", "get", "nope")
    assert code != 0 and "nope" in err
    code, _, err = run(home, "shared", "history", "nope")
    assert code != 0 and "nope" in err


def test_a_preference_needing_confirmation_is_denied_with_exit_4(home: HRMHome) -> None:
    code, out, _ = run(
        home, "shared", "set", "pref", "I prefer tea", "--preference", "--source", "agent", "--json"
    )
    assert code == 4
    decision = json.loads(out)
    assert decision["approved"] is False
    assert "needs_user_confirmation" in decision["conditions"]
    assert run(home, "shared", "get", "pref")[0] != 0


def test_working_set_show_and_expire(home: HRMHome) -> None:
    data = run_json(home, "working", "set", "launch", "region", "eu-west")
    assert data["partial_artifacts"] == {"region": "eu-west"}
    shown = run_json(home, "working", "show", "launch")
    assert shown["problem_id"] == "launch"
    code, out, _ = run(home, "working", "show", "launch")
    assert code == 0 and "# Working set: launch" in out and "region: eu-west" in out
    assert [w["problem_id"] for w in run_json(home, "working", "list")] == ["launch"]
    assert run_json(home, "working", "expire") == {"expired": 0}
    code, _, err = run(home, "working", "show", "ghost")
    assert code != 0 and "ghost" in err


def test_episodes_filters(home: HRMHome) -> None:
    with MemoryBus.open(home) as bus:
        bus.log_episode(EpisodeEntry(entry_type="decision", problem_id="p1", tags=["a", "b"]))
        bus.log_episode(EpisodeEntry(entry_type="action", problem_id="p2", tags=["a"]))
    assert len(run_json(home, "episodes")) == 2
    assert [e["entry_type"] for e in run_json(home, "episodes", "list", "--tag", "b")] == [
        "decision"
    ]
    assert [e["problem_id"] for e in run_json(home, "episodes", "--problem", "p2")] == ["p2"]
    assert len(run_json(home, "episodes", "list", "--tag", "a", "--tag", "b")) == 1
    assert len(run_json(home, "episodes", "--limit", "1")) == 1
    assert run_json(home, "episodes", "--since", "2999-01-01") == []
    assert len(run_json(home, "episodes", "--until", "2999-01-01T00:00:00Z")) == 2
    first = run_json(home, "episodes", "--type", "decision")[0]
    assert run_json(home, "episodes", "show", first["id"])["tags"] == ["a", "b"]


def test_a_bad_time_filter_names_the_text(home: HRMHome) -> None:
    code, _, err = run(home, "episodes", "--since", "yesterday-ish")
    assert code != 0 and "yesterday-ish" in err


def test_synthesis_list_show_evidence(home: HRMHome) -> None:
    with MemoryBus.open(home) as bus:
        evidence = bus.log_episode(EpisodeEntry(entry_type="action", content={"did": "x"}))
        bus.add_synthesis(
            SynthesizedPattern(
                id="syn_one",
                pattern_type="routing",
                description="d",
                confidence=0.7,
                evidence_ids=[evidence],
            ),
            WriteSignals.trusted(),
        )
        bus.synthesis.weaken("syn_one", "missed once")
    listed = run_json(home, "synthesis", "list", "--type", "routing")
    assert [p["id"] for p in listed] == ["syn_one"]
    assert run_json(home, "synthesis", "list", "--min-confidence", "0.9") == []
    shown = run_json(home, "synthesis", "show", "syn_one")
    assert shown["weakenings"][0]["reason"] == "missed once"
    assert [e["id"] for e in run_json(home, "synthesis", "evidence", "syn_one")] == [evidence]
    code, out, _ = run(home, "synthesis", "list")
    assert code == 0 and "syn_one" in out


def test_stacks_are_chosen_with_as(home: HRMHome) -> None:
    run_json(home, "shared", "set", "k", "resident", "--as", "RESIDENT:DoPeJar")
    assert run(home, "shared", "get", "k")[0] != 0
    assert run_json(home, "shared", "get", "k", "--as", "RESIDENT:DoPeJar")["value"] == "resident"
    code, _, err = run(home, "shared", "list", "--as", "RESIDENT:../etc")
    assert code != 0 and "resident name" in err.lower()


@pytest.mark.parametrize(
    "group", [[], ["shared"], ["working"], ["episodes"], ["synthesis"]], ids=str
)
def test_every_command_has_help(group: list[str]) -> None:
    result = runner.invoke(app, [*group, "--help"])
    assert result.exit_code == 0 and "Usage" in result.stdout
