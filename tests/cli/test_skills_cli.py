"""`hrm skills match`."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from hrm.cli.skills import app
from hrm.home import initialize

CC = Path(__file__).resolve().parents[1] / "fixtures" / "continuous-claude"
runner = CliRunner()


def test_match_with_real_rules_as_json() -> None:
    result = runner.invoke(
        app,
        ["match", "I am done for today, create a handoff", "--rules", str(CC / "skill-rules.v3.json"),
         "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["matches"][0]["skill"] == "create_handoff"
    assert out["action"] == "suggest" and out["timed_out"] is False


def test_match_uses_the_home_defaults(tmp_path: Path) -> None:
    initialize(tmp_path / "home")
    result = runner.invoke(
        app,
        ["match", "why is the CI build failing?", "--home", str(tmp_path / "home"),
         "--project", str(tmp_path)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "systematic-debugging" in result.output and "suggest" in result.output


def test_no_rules_anywhere_is_an_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["match", "hi", "--rules", str(tmp_path / "none.json")])
    assert result.exit_code != 0


def test_a_rules_file_that_gives_no_rule_is_an_error_not_no_match(tmp_path: Path) -> None:
    bad_regex = {"version": "1.0", "skills": {"s": {"type": "domain", "enforcement": "suggest",
                 "priority": "high", "promptTriggers": {"intentPatterns": ["(unclosed"]}}}}
    cases = {"empty.json": "", "broken.json": "{not json", "array.json": "[]",
             "regex.json": json.dumps(bad_regex)}
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text)
        result = runner.invoke(app, ["match", "anything", "--rules", str(path)])
        assert result.exit_code == 3, (name, result.output)
        assert "no rule could be loaded" in result.stderr and "No skill matched" not in result.stdout


def test_one_bad_rule_is_reported_and_the_others_still_match(tmp_path: Path) -> None:
    rules = {"version": "1.0", "skills": {
        "broken": {"type": "domain", "enforcement": "suggest", "priority": "high",
                   "promptTriggers": {"intentPatterns": ["(unclosed"]}},
        "testing": {"type": "domain", "enforcement": "suggest", "priority": "high",
                    "promptTriggers": {"keywords": ["pytest"]}}}}
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(rules))
    result = runner.invoke(app, ["match", "run pytest", "--rules", str(path)])
    assert result.exit_code == 0, result.output
    assert "testing" in result.stdout and "broken" in result.stderr
