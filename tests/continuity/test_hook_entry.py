"""`hrm hook`: the protocol contract holds for any input, in-process and as real processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hrm.continuity.handoff_store import HandoffStore
from hrm.continuity.hook_entry import MAX_INPUT_BYTES, answer_hook, read_input
from hrm.home import HRMHome
from hrm.trust import TrustStore

EVENTS = ["SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "Stop", "SessionEnd"]
ARGUMENTS = [
    "session-start",
    "user-prompt-submit",
    "post-tool-use",
    "pre-compact",
    "stop",
    "session-end",
]


def check_contract(output: str | None, payload: object) -> None:
    """§9: nothing, or one JSON object valid for the input's event; never a block but by rule."""
    if output is None:
        return
    answer = json.loads(output)
    assert isinstance(answer, dict)
    assert output.isascii()
    event = payload.get("hook_event_name") if isinstance(payload, dict) else None
    if "hookSpecificOutput" in answer:
        assert set(answer) == {"hookSpecificOutput"}
        specific = answer["hookSpecificOutput"]
        assert set(specific) == {"hookEventName", "additionalContext"}
        assert specific["hookEventName"] in ("SessionStart", "UserPromptSubmit")
        if event is not None:
            assert specific["hookEventName"] == event
        assert 0 < len(specific["additionalContext"]) <= 10_000
    else:
        assert answer == {"decision": "block", "reason": answer.get("reason")}
        assert isinstance(answer["reason"], str) and answer["reason"]
    assert "continue" not in answer and "result" not in answer


def run(raw: bytes, argv: list[str], home: Path, project: Path) -> str | None:
    env = {"HRM_HOME": str(home), "CLAUDE_PROJECT_DIR": str(project)}
    return answer_hook(raw, argv, environ=env, cwd=project).output


def log_lines(home: Path) -> list[dict[str, Any]]:
    path = home / "logs" / "hooks.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# -- in-process ----------------------------------------------------------------------------------


def test_session_start_answers_with_context(home: HRMHome, tmp_path: Path) -> None:
    from tests.continuity.test_hooks import handoff

    HandoffStore(home).write(handoff(tmp_path, "Finish the parser", ["add error recovery"]))
    payload = {"hook_event_name": "SessionStart", "session_id": "s", "source": "startup"}
    output = run(json.dumps(payload).encode(), ["session-start"], home.root, tmp_path)
    check_contract(output, payload)
    assert output is not None
    assert "Finish the parser" in json.loads(output)["hookSpecificOutput"]["additionalContext"]


def test_project_config_is_honoured(home: HRMHome, tmp_path: Path) -> None:
    from tests.continuity.test_hooks import handoff

    HandoffStore(home).write(handoff(tmp_path, "Task " + "w" * 600, ["step " + "v" * 280] * 5))
    (tmp_path / ".hrm").mkdir()
    (tmp_path / ".hrm" / "config.yaml").write_text(
        "continuity:\n  additional_context_max_chars: 300\n", encoding="utf-8"
    )
    payload = {"hook_event_name": "SessionStart", "session_id": "s"}
    output = run(json.dumps(payload).encode(), [], home.root, tmp_path)
    assert output is not None
    assert len(json.loads(output)["hookSpecificOutput"]["additionalContext"]) <= 300


def test_broken_config_falls_back_to_defaults(home: HRMHome, tmp_path: Path) -> None:
    from tests.continuity.test_hooks import handoff

    HandoffStore(home).write(handoff(tmp_path, "Still answered", ["go on"]))
    home.config_path.write_text("continuity: [unclosed\n", encoding="utf-8")
    payload = {"hook_event_name": "SessionStart", "session_id": "s"}
    output = run(json.dumps(payload).encode(), [], home.root, tmp_path)
    assert output is not None and "Still answered" in output
    assert any("config not loaded" in line["message"] for line in log_lines(home.root))


def test_default_settings_match_the_default_continuity_config() -> None:
    """The hook skips loading an empty config, so its defaults must be the config's."""
    from hrm.config import ContinuityConfig
    from hrm.continuity.hooks import HookSettings

    assert HookSettings.from_continuity(ContinuityConfig()) == HookSettings()


def test_missing_home_is_created_quietly(tmp_path: Path) -> None:
    home = tmp_path / "fresh-home"
    payload = {"hook_event_name": "Stop", "session_id": "s", "stop_hook_active": True}
    assert run(json.dumps(payload).encode(), ["stop"], home, tmp_path) is None
    assert (home / "config.yaml").exists()
    assert log_lines(home)[-1]["event"] == "Stop"


def test_unusable_home_answers_nothing_and_says_so_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    payload = {"hook_event_name": "UserPromptSubmit", "prompt": "hi"}
    assert run(json.dumps(payload).encode(), [], blocker, tmp_path) is None
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "home unusable" in captured.err


def test_malformed_input_is_logged_not_answered(home: HRMHome, tmp_path: Path) -> None:
    assert run(b"{not json", ["user-prompt-submit"], home.root, tmp_path) is None
    assert log_lines(home.root)[-1]["message"] == "input is not JSON"


def test_argument_mismatch_is_logged_and_the_payload_wins(home: HRMHome, tmp_path: Path) -> None:
    payload = {"hook_event_name": "Stop", "session_id": "s"}
    assert run(json.dumps(payload).encode(), ["session-start"], home.root, tmp_path) is None
    lines = log_lines(home.root)
    assert any("disagrees" in line["message"] for line in lines)
    assert lines[-1]["event"] == "Stop"


def test_secrets_never_reach_the_log(home: HRMHome, tmp_path: Path) -> None:
    secret = "sk-ant-api03-" + "A" * 40
    run(json.dumps({"hook_event_name": secret}).encode(), [], home.root, tmp_path)
    text = (home.root / "logs" / "hooks.log").read_text()
    assert secret not in text
    assert "REDACTED" in text


def test_summary_line_scrubs_a_session_id_that_is_not_a_uuid(home: HRMHome, tmp_path: Path) -> None:
    secret = "ghp_" + "b" * 36
    run(json.dumps({"hook_event_name": "Stop", "session_id": secret}).encode(), [], home.root, tmp_path)
    uuid = "8f14e45f-ea6b-4c1d-9a0e-2b7c3d4e5f60"
    run(json.dumps({"hook_event_name": "Stop", "session_id": uuid}).encode(), [], home.root, tmp_path)
    text = (home.root / "logs" / "hooks.log").read_text()
    assert secret not in text
    assert log_lines(home.root)[-1]["session_id"] == uuid


def test_oversized_input_is_not_read_past_the_limit() -> None:
    import io

    data, oversized = read_input(io.BytesIO(b"x" * 100), limit=10)
    assert (data, oversized) == (b"", True)
    data, oversized = read_input(io.BytesIO(b"x" * 10), limit=10)
    assert (data, oversized) == (b"x" * 10, False)


def test_session_end_writes_a_handoff(home: HRMHome, tmp_path: Path) -> None:
    from tests.continuity.test_hooks import transcript

    payload = {
        "hook_event_name": "SessionEnd",
        "session_id": "sess-7",
        "reason": "logout",
        "transcript_path": str(transcript(tmp_path / "t.jsonl")),
    }
    assert run(json.dumps(payload).encode(), ["session-end"], home.root, tmp_path) is None
    found = HandoffStore(home).latest(project_path=str(tmp_path))
    assert found is not None
    assert found[1].session.id == "sess-7"


# -- fuzzing -------------------------------------------------------------------------------------

json_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
field_value = json_value | st.sampled_from(["", "/", "/tmp/x.md", "handoffs/a.yaml", "\ud800", "../.."])
payloads = st.fixed_dictionaries(
    {"hook_event_name": st.sampled_from([*EVENTS, "Notification", "", None]) | json_leaf},
    optional={
        "session_id": field_value,
        "cwd": field_value,
        "transcript_path": field_value,
        "source": st.sampled_from(["startup", "resume", "clear", "compact", "fork"]) | field_value,
        "prompt": st.text(max_size=200) | field_value,
        "tool_name": st.sampled_from(["Write", "Edit", "MultiEdit", "Bash"]) | field_value,
        "tool_input": st.fixed_dictionaries(
            {}, optional={"file_path": field_value, "content": field_value, "edits": field_value}
        )
        | field_value,
        "stop_hook_active": field_value,
        "trigger": field_value,
        "reason": field_value,
    },
)
envelopes = st.fixed_dictionaries(
    {"event": st.sampled_from(EVENTS) | json_leaf, "data": json_value},
    optional={"session_id": field_value, "timestamp": field_value},
)

FUZZ = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FUZZ
@given(raw=st.binary(max_size=300), argument=st.sampled_from([*ARGUMENTS, "bogus", None]))
def test_random_bytes_never_answer(home: HRMHome, tmp_path: Path, raw: bytes, argument: str | None) -> None:
    output = run(raw, [argument] if argument else [], home.root, tmp_path)
    if output is not None:  # random bytes can, rarely, be a JSON object
        check_contract(output, json.loads(raw.decode("utf-8", "replace")))


@FUZZ
@given(value=json_value, argument=st.sampled_from([*ARGUMENTS, None]))
def test_random_json_keeps_the_contract(
    home: HRMHome, tmp_path: Path, value: object, argument: str | None
) -> None:
    raw = json.dumps(value).encode()
    check_contract(run(raw, [argument] if argument else [], home.root, tmp_path), value)


@FUZZ
@given(payload=payloads, argument=st.sampled_from([*ARGUMENTS, None]))
def test_random_field_types_keep_the_contract(
    home: HRMHome, tmp_path: Path, payload: dict[str, Any], argument: str | None
) -> None:
    raw = json.dumps(payload, ensure_ascii=False).encode("utf-8", "surrogatepass")
    output = run(raw, [argument] if argument else [], home.root, tmp_path)
    check_contract(output, payload)
    if payload.get("hook_event_name") == "Stop":
        assert output is None


@FUZZ
@given(envelope=envelopes)
def test_spec_envelopes_keep_the_contract(home: HRMHome, tmp_path: Path, envelope: dict[str, Any]) -> None:
    raw = json.dumps(envelope).encode()
    output = run(raw, [], home.root, tmp_path)
    event = envelope.get("event")
    check_contract(output, {"hook_event_name": event} if isinstance(event, str) else {})


# -- real processes ------------------------------------------------------------------------------


def spawn(argument: str | None, home: Path, project: Path) -> subprocess.Popen[bytes]:
    env = {"HRM_HOME": str(home), "CLAUDE_PROJECT_DIR": str(project), "PATH": "/usr/bin:/bin"}
    args = [sys.executable, "-m", "hrm", "hook", *([argument] if argument else [])]
    return subprocess.Popen(
        args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )


def hook_process(raw: bytes, argument: str | None, home: Path, project: Path) -> tuple[int, bytes, bytes]:
    proc = spawn(argument, home, project)
    out, err = proc.communicate(raw, timeout=60)
    return proc.returncode, out, err


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\x00\xff\xfe binary \x89PNG",
        b"{\"hook_event_name\": \"UserPromptSubmit\", \"prompt\": ",
        b"[1, 2, 3]",
        b"{\"hook_event_name\": \"PreToolUse\", \"tool_name\": \"Bash\"}",
        b"[" * 50_000,
    ],
)
def test_process_exits_zero_and_silent_on_bad_input(tmp_path: Path, raw: bytes) -> None:
    code, out, err = hook_process(raw, "user-prompt-submit", tmp_path / "home", tmp_path)
    assert code == 0
    assert out == b""
    assert b"Traceback" not in err


def test_process_ignores_input_past_the_limit(tmp_path: Path) -> None:
    prompt = "x" * (MAX_INPUT_BYTES + 10)
    raw = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": prompt}).encode()
    code, out, _ = hook_process(raw, "user-prompt-submit", tmp_path / "home", tmp_path)
    assert (code, out) == (0, b"")
    assert "larger than" in (tmp_path / "home" / "logs" / "hooks.log").read_text()


def test_process_answers_a_one_megabyte_prompt(tmp_path: Path, home: HRMHome) -> None:
    from tests.continuity.test_hooks import remember, write_rules

    remember(home, ("tokenizers must handle surrogate pairs", "ERROR_FIX"))
    write_rules(tmp_path, unicode=("suggest", ["tokenizers"]))
    (tmp_path / ".hrm").mkdir()
    (tmp_path / ".hrm" / "config.yaml").write_text(  # room for a loaded test machine
        "continuity:\n  skill_match_budget_ms: 20000\n", encoding="utf-8"
    )
    prompt = "tokenizers " + "é ünïcode words " * 70_000
    raw = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": prompt}).encode()
    assert len(raw) > 1_000_000
    code, out, _ = hook_process(raw, "user-prompt-submit", home.root, tmp_path)
    assert code == 0
    check_contract(out.decode(), {"hook_event_name": "UserPromptSubmit"})
    assert b"unicode (high, suggest)" in out


def test_process_help() -> None:
    proc = subprocess.run([sys.executable, "-m", "hrm", "hook", "--help"], capture_output=True, check=False)
    assert proc.returncode == 0
    assert b"session-start" in proc.stdout


def test_concurrent_hook_processes_share_one_home(tmp_path: Path) -> None:
    """Several hooks fire at once (Claude Code runs handlers in parallel) on a home not yet made."""
    from tests.continuity.test_hooks import transcript

    home = tmp_path / "shared-home"
    project = tmp_path / "proj"
    (project / "handoffs").mkdir(parents=True)
    jobs: list[tuple[str, dict[str, Any]]] = []
    for i in range(3):
        artifact = project / "handoffs" / f"note-{i}.md"
        artifact.write_text(f"# Handoff {i}\nquokka number {i}\n", encoding="utf-8")
        jobs.append(
            (
                "post-tool-use",
                {
                    "hook_event_name": "PostToolUse",
                    "session_id": f"s{i}",
                    "tool_name": "Write",
                    "tool_input": {"file_path": str(artifact), "content": "x"},
                },
            )
        )
        jobs.append(
            (
                "session-end",
                {
                    "hook_event_name": "SessionEnd",
                    "session_id": f"end-{i}",
                    "reason": "other",
                    "transcript_path": str(transcript(tmp_path / f"t{i}.jsonl")),
                },
            )
        )
    jobs.append(("session-start", {"hook_event_name": "SessionStart", "session_id": "n"}))
    jobs.append(("user-prompt-submit", {"hook_event_name": "UserPromptSubmit", "prompt": "quokka"}))
    procs = [(spawn(arg, home, project), payload) for arg, payload in jobs]
    for proc, payload in procs:
        out, err = proc.communicate(json.dumps(payload).encode(), timeout=120)
        assert proc.returncode == 0, err
        assert b"Traceback" not in err
        check_contract(out.decode() or None, payload)
    assert len(HandoffStore(HRMHome(home)).list(project_path=str(project))) == 3
    from hrm.continuity.learnings import LearningsRepository

    with LearningsRepository.open(HRMHome(home), embeddings="off") as repo:
        assert len(repo.search_artifacts("quokka", limit=10)) == 3
    lines = log_lines(home)
    assert sum(1 for line in lines if line["message"] in ("answered", "no answer")) == len(jobs)


_IMPORTS_PROBE = """
import sys
import hrm.cli.__main__  # what the console script imports before dispatching
from hrm.continuity.hook_entry import run_hook
run_hook(["user-prompt-submit"])  # as `main` runs it, but without ending the process
sys.stderr.write("\\nMODULES " + " ".join(sorted(sys.modules)) + "\\n")
"""


REAL_RULES = (
    Path(__file__).resolve().parents[1] / "fixtures/continuous-claude/skill-rules.v3-pr133.json"
)


def test_a_prompt_answered_from_rules_alone_imports_nothing_heavy(tmp_path: Path) -> None:
    """Start-up cost is the hook's budget: no dataclasses, logging, threading or SQLite; the
    second prompt reads the rules from the cache instead of compiling them again."""
    from hrm.home import initialize

    home = initialize(tmp_path / "home")  # creating a home is a one-off, with its own imports
    project = tmp_path / "proj"
    (project / ".claude" / "skills").mkdir(parents=True)
    # A link to a file unchanged for long: new files are kept out of the cache for 2 s.
    (project / ".claude" / "skills" / "skill-rules.json").symlink_to(REAL_RULES)
    prompt = "I need to fix a bug in the login flow, it's failing"
    payload = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": prompt})
    env = {"HRM_HOME": str(home.path), "CLAUDE_PROJECT_DIR": str(project), "PATH": "/bin"}
    cache_times = []
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-c", _IMPORTS_PROBE], input=payload.encode(), capture_output=True,
            env=env, check=True,
        )
        answer = json.loads(proc.stdout)
        assert "decision" not in answer  # a block rule is a required step by default (D221)
        context = answer["hookSpecificOutput"]["additionalContext"]
        assert "REQUIRED before responding" in context and "systematic-debugging" in context
        modules = set(proc.stderr.decode().split("MODULES ", 1)[1].split())
        heavy = {"dataclasses", "inspect", "logging", "threading", "sqlite3", "yaml", "typer"}
        assert modules & heavy == set()
        (cache_file,) = (home.path / "cache").glob("skill-rules-*.json")
        cache_times.append(cache_file.stat().st_mtime_ns)
    assert cache_times[0] == cache_times[1]  # read, not rewritten


def test_a_prompt_that_recalls_learnings_still_imports_nothing_heavy(tmp_path: Path) -> None:
    """Recall from memory is on every prompt of a home in use: it needs SQLite and a thread,
    but not dataclasses, typing or logging (together ~25 ms of start-up per prompt)."""
    from hrm.continuity.learnings import LearningsRepository
    from hrm.continuity.learnings_types import LearningInput
    from hrm.home import initialize

    home = HRMHome(initialize(tmp_path / "home").path)
    with LearningsRepository.open(home, embeddings="off") as repo:
        repo.store_learning(
            LearningInput(content="Retry the flaky upload with exponential backoff", type="error_fix")
        )
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s",
               "prompt": "the upload failed again, add backoff"}
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORTS_PROBE], input=json.dumps(payload).encode(),
        capture_output=True, env={"HRM_HOME": str(home.root), "PATH": "/bin"}, check=True,
        cwd=tmp_path,
    )
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "exponential backoff" in context
    modules = set(proc.stderr.decode().split("MODULES ", 1)[1].split())
    assert "sqlite3" in modules  # the recall did run
    assert modules & {"dataclasses", "inspect", "typing", "logging", "yaml", "typer"} == set()


def test_rule_problems_reach_the_hook_log_not_stderr(tmp_path: Path) -> None:
    """Without `logging` on the prompt path, a broken rule and an overrun are still logged."""
    rules = tmp_path / ".claude" / "skills" / "skill-rules.json"
    rules.parent.mkdir(parents=True)
    rules.write_text(json.dumps({"skills": {"bad": {"promptTriggers": {"intentPatterns": ["("]}}}}))
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "anything"}
    proc = hook_process(json.dumps(payload).encode(), None, tmp_path / "home", tmp_path)
    assert proc[:2] == (0, b"") and proc[2] == b""
    warnings = [line for line in log_lines(tmp_path / "home") if line["level"] == "warning"]
    assert len(warnings) == 1
    assert warnings[0]["message"].startswith("skill rules: ValueError: ")
    assert "rule 'bad'" in warnings[0]["message"] and "invalid regex" in warnings[0]["message"]


@pytest.fixture
def counted_config_loads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts `load_config` calls; config files count as settled at once."""
    import hrm.config
    from hrm.continuity import hook_entry

    monkeypatch.setattr(hook_entry, "_RACY_NS", 0)
    calls: list[int] = []
    real = hrm.config.load_config

    def load(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(hrm.config, "load_config", load)
    return calls


def _hook_settings(home: HRMHome, project: Path, env: dict[str, str] | None = None) -> Any:
    from hrm.continuity.hook_entry import _HookLog, _settings

    log = _HookLog(home.logs_dir / "hooks.log")
    return _settings(home, project, env or {}, log, None)  # type: ignore[arg-type]


def test_settings_from_config_files_are_cached_until_a_file_changes(
    tmp_path: Path, home: HRMHome, counted_config_loads: list[int]
) -> None:
    home.config_path.write_text("continuity:\n  skill_match_budget_ms: 900\n")
    first = _hook_settings(home, tmp_path)
    assert first.skill_match_budget_ms == 900 and len(counted_config_loads) == 1
    assert _hook_settings(home, tmp_path) == first and len(counted_config_loads) == 1
    (tmp_path / ".hrm").mkdir()
    (tmp_path / ".hrm" / "config.yaml").write_text("continuity:\n  skill_rules: [x.json]\n")
    second = _hook_settings(home, tmp_path)  # an untrusted project's rule files are ignored
    assert (second.skill_match_budget_ms, second.skill_rules) == (900, ())
    assert "continuity.skill_rules" in second.ignored_note
    assert _hook_settings(home, tmp_path) == second and len(counted_config_loads) == 2
    TrustStore(home).trust(tmp_path)
    trusted = _hook_settings(home, tmp_path)  # trusting the project is a change too
    assert (trusted.skill_rules, trusted.ignored_note) == (("x.json",), "")
    assert len(counted_config_loads) == 3
    assert _hook_settings(home, tmp_path / "elsewhere").skill_rules == ()


def test_environment_overrides_are_never_cached(
    tmp_path: Path, home: HRMHome, counted_config_loads: list[int]
) -> None:
    env = {"HRM_CONTINUITY__SKILL_MATCH_BUDGET_MS": "700"}
    assert [_hook_settings(home, tmp_path, env).skill_match_budget_ms for _ in range(2)] == [700] * 2
    assert len(counted_config_loads) == 2
    assert not list(home.cache_dir.glob("hook-settings-*"))


def test_an_unusable_config_is_reported_every_time_and_never_cached(
    tmp_path: Path, home: HRMHome, counted_config_loads: list[int]
) -> None:
    from hrm.continuity.hooks import HookSettings

    home.config_path.write_text("continuity:\n  no_such_key: 1\n")
    assert [_hook_settings(home, tmp_path) for _ in range(2)] == [HookSettings()] * 2
    warnings = [line for line in log_lines(home.root) if line["level"] == "warning"]
    assert len(warnings) == 2 and "config not loaded" in warnings[0]["message"]
    assert not list(home.cache_dir.glob("hook-settings-*"))


def test_a_damaged_settings_cache_is_ignored(
    tmp_path: Path, home: HRMHome, counted_config_loads: list[int]
) -> None:
    home.config_path.write_text("continuity:\n  skill_match_budget_ms: 900\n")
    expected = _hook_settings(home, tmp_path)
    (cache_file,) = home.cache_dir.glob("hook-settings-*.json")
    for damage in ("", "[]", '{"key": 3}', json.dumps({"key": "x", "settings": {}})):
        cache_file.write_text(damage)
        assert _hook_settings(home, tmp_path) == expected
    doc = json.loads(cache_file.read_text())
    doc["settings"]["no_such_field"] = 1
    cache_file.write_text(json.dumps(doc))
    assert _hook_settings(home, tmp_path) == expected


def test_a_config_file_changed_within_the_last_seconds_is_not_cached(
    tmp_path: Path, home: HRMHome
) -> None:
    home.config_path.write_text("continuity:\n  skill_match_budget_ms: 900\n")
    assert _hook_settings(home, tmp_path).skill_match_budget_ms == 900
    assert not list(home.cache_dir.glob("hook-settings-*"))
