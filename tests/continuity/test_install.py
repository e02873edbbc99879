"""Merging hrm's hooks into Claude Code settings without disturbing anything else."""

from __future__ import annotations

import json
import shlex
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hrm.continuity.install import (
    HOOK_REGISTRATIONS,
    hook_command,
    install_claude_code,
    is_hrm_hook_command,
    merge_hooks,
    remove_hooks,
    settings_path,
)
from hrm.errors import ErrorCode, HRMError

COMMAND = "/opt/hrm/bin/hrm hook"
NOW = datetime(2026, 1, 12, 10, 30, tzinfo=UTC)

FOREIGN = {
    "statusLine": {"type": "command", "command": "status.py"},
    "permissions": {"allow": ["Bash(ls)"]},
    "hooks": {
        "SessionStart": [
            {"hooks": [{"type": "command", "command": "bash persist.sh"}]},
            {"matcher": "resume", "hooks": [{"type": "command", "command": "node cont.mjs"}]},
        ],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}],
    },
}


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def ours(settings: dict[str, object]) -> dict[str, list[dict[str, object]]]:
    found: dict[str, list[dict[str, object]]] = {}
    for event, groups in settings.get("hooks", {}).items():  # type: ignore[union-attr]
        for group in groups:
            for handler in group["hooks"]:
                if is_hrm_hook_command(handler.get("command")):
                    found.setdefault(event, []).append(handler)
    return found


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("hrm hook session-start", True),
        ("/home/u/.venv/bin/hrm hook stop", True),
        ('"/home/u/my env/bin/hrm" hook stop', True),
        ('"$CLAUDE_PROJECT_DIR"/.venv/bin/hrm hook user-prompt-submit', True),
        ("C:\\tools\\hrm.exe hook stop", True),
        ("node hrm-hook.mjs", False),
        ("myhrm hook", False),
        ("hrm hooks", False),
        ("bash persist.sh", False),
        (None, False),
    ],
)
def test_our_commands_are_recognised(command: object, expected: bool) -> None:
    assert is_hrm_hook_command(command) is expected


def test_hook_command_quotes_paths_with_spaces() -> None:
    command = hook_command(Path("/home/u/my env/bin/hrm"))
    assert command == '"/home/u/my env/bin/hrm" hook'
    assert shlex.split(command + " stop") == ["/home/u/my env/bin/hrm", "hook", "stop"]
    assert is_hrm_hook_command(command + " stop")


def test_hook_command_escapes_shell_characters() -> None:
    weird = '/we"ird/$HOME/`x`/a\\b/bin/hrm'
    command = hook_command(Path(weird))
    shown = subprocess.run(
        ["sh", "-c", f"printf '%s\\n' {command}"], capture_output=True, text=True, check=True
    )
    assert shown.stdout.splitlines() == [weird, "hook"]


def test_hook_command_plain_path_is_bare() -> None:
    assert hook_command(Path("/usr/local/bin/hrm")) == "/usr/local/bin/hrm hook"


def test_settings_paths(tmp_path: Path) -> None:
    assert settings_path("project", project_dir=tmp_path) == tmp_path / ".claude" / "settings.json"
    assert settings_path("global", user_home=tmp_path) == tmp_path / ".claude" / "settings.json"


def test_install_into_a_new_file_registers_every_event(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    result = install_claude_code(path, command=COMMAND)
    data = json.loads(path.read_text())
    assert result.action == "installed"
    assert result.backup_path is None
    assert set(result.added) == {r.event for r in HOOK_REGISTRATIONS}
    for reg in HOOK_REGISTRATIONS:
        (group,) = data["hooks"][reg.event]
        assert group.get("matcher") == reg.matcher
        assert group["hooks"] == [
            {"type": "command", "command": f"{COMMAND} {reg.argument}", "timeout": reg.timeout}
        ]


def test_install_keeps_other_settings_and_hooks_and_backs_up(tmp_path: Path) -> None:
    path = write(tmp_path / "settings.json", FOREIGN)
    original = path.read_text()
    result = install_claude_code(path, command=COMMAND, clock=lambda: NOW)
    data = json.loads(path.read_text())
    assert data["statusLine"] == FOREIGN["statusLine"]
    assert data["permissions"] == FOREIGN["permissions"]
    assert data["hooks"]["PreToolUse"] == FOREIGN["hooks"]["PreToolUse"]
    assert data["hooks"]["SessionStart"][:2] == FOREIGN["hooks"]["SessionStart"]
    assert list(data)[:2] == ["statusLine", "permissions"]
    assert result.backup_path == tmp_path / "settings.json.bak-20260112T103000Z"
    assert result.backup_path.read_text() == original


def test_install_twice_changes_nothing(tmp_path: Path) -> None:
    path = write(tmp_path / "settings.json", FOREIGN)
    install_claude_code(path, command=COMMAND, clock=lambda: NOW)
    first = path.read_text()
    backups = sorted(tmp_path.glob("settings.json.bak-*"))
    again = install_claude_code(path, command=COMMAND, clock=lambda: NOW)
    assert again.action == "unchanged"
    assert not again.changed
    assert path.read_text() == first
    assert sorted(tmp_path.glob("settings.json.bak-*")) == backups


def test_moved_executable_updates_in_place(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    install_claude_code(path, command=COMMAND)
    result = install_claude_code(path, command="/new/hrm hook", clock=lambda: NOW)
    assert result.action == "updated"
    assert set(result.updated) == {r.event for r in HOOK_REGISTRATIONS}
    handlers = ours(json.loads(path.read_text()))
    assert all(len(h) == 1 and h[0]["command"].startswith("/new/hrm hook") for h in handlers.values())


def test_duplicate_hrm_entries_collapse_to_one(tmp_path: Path) -> None:
    entry = {"type": "command", "command": f"{COMMAND} stop", "timeout": 10}
    path = write(tmp_path / "s.json", {"hooks": {"Stop": [{"hooks": [entry]}, {"hooks": [entry]}]}})
    install_claude_code(path, command=COMMAND)
    assert len(ours(json.loads(path.read_text()))["Stop"]) == 1


def test_uninstall_removes_only_ours(tmp_path: Path) -> None:
    path = write(tmp_path / "settings.json", FOREIGN)
    install_claude_code(path, command=COMMAND)
    result = install_claude_code(path, uninstall=True, clock=lambda: NOW)
    assert result.action == "uninstalled"
    assert set(result.removed) == {r.event for r in HOOK_REGISTRATIONS}
    assert json.loads(path.read_text()) == FOREIGN
    assert install_claude_code(path, uninstall=True).action == "unchanged"


def test_uninstall_of_a_file_we_created_leaves_no_hooks_key(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    install_claude_code(path, command=COMMAND)
    install_claude_code(path, uninstall=True)
    assert json.loads(path.read_text()) == {}


def test_uninstall_without_a_file_is_a_no_op(tmp_path: Path) -> None:
    result = install_claude_code(tmp_path / "none.json", uninstall=True)
    assert result.action == "unchanged"
    assert not (tmp_path / "none.json").exists()


def test_hrm_handler_sharing_a_group_keeps_the_others(tmp_path: Path) -> None:
    group = {
        "hooks": [
            {"type": "command", "command": "bash other.sh"},
            {"type": "command", "command": "hrm hook stop"},
        ]
    }
    path = write(tmp_path / "s.json", {"hooks": {"Stop": [group]}})
    install_claude_code(path, uninstall=True)
    assert json.loads(path.read_text()) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "bash other.sh"}]}]}
    }


@pytest.mark.parametrize(
    ("content", "line"),
    [
        ('{\n  "hooks": {\n    "Stop": [,]\n  }\n}', 3),
        ("[1, 2]", 1),
        ('{"a": 1,\n\n}', 3),
    ],
)
def test_malformed_settings_name_file_and_line_and_write_nothing(
    tmp_path: Path, content: str, line: int
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(HRMError) as info:
        install_claude_code(path, command=COMMAND)
    assert info.value.code is ErrorCode.PARSE_ERROR
    assert str(path) in str(info.value)
    assert info.value.context["line"] == line
    assert path.read_text() == content
    assert list(tmp_path.iterdir()) == [path]


@pytest.mark.parametrize("hooks", [[], "x", {"Stop": {"hooks": []}}])
def test_malformed_hooks_section_is_refused(tmp_path: Path, hooks: object) -> None:
    path = write(tmp_path / "settings.json", {"hooks": hooks})
    before = path.read_text()
    with pytest.raises(HRMError) as info:
        install_claude_code(path, command=COMMAND)
    assert info.value.code is ErrorCode.PARSE_ERROR
    assert path.read_text() == before


def test_empty_file_is_treated_as_empty_settings(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("", encoding="utf-8")
    assert install_claude_code(path, command=COMMAND).action == "installed"


handler = st.fixed_dictionaries(
    {"type": st.just("command"), "command": st.sampled_from(["a.sh", "node x", "hrm hook stop"])}
)
foreign_settings = st.fixed_dictionaries(
    {
        "hooks": st.dictionaries(
            st.sampled_from(["SessionStart", "Stop", "PreToolUse", "Notification"]),
            st.lists(
                st.fixed_dictionaries(
                    {"hooks": st.lists(handler, max_size=3)},
                    optional={"matcher": st.sampled_from(["", "Bash", "Write|Edit"])},
                ),
                max_size=3,
            ),
            max_size=4,
        )
    },
    optional={"model": st.text(max_size=10), "env": st.dictionaries(st.text(max_size=5), st.text(max_size=5))},
)


def without_empty_events(settings: dict[str, object]) -> dict[str, object]:
    """Uninstall drops event lists (and a `hooks` object) it leaves empty; so does this."""
    out = dict(settings)
    hooks = {e: g for e, g in out.pop("hooks", {}).items() if g}  # type: ignore[attr-defined]
    if hooks:
        out["hooks"] = hooks
    return out


@settings(max_examples=100, deadline=None)
@given(foreign_settings)
@example(  # an emptied duplicate of ours equals a foreign empty group: keep the foreign one
    {"hooks": {"SessionStart": [
        {"hooks": [], "matcher": "Write|Edit"},
        {"hooks": [{"type": "command", "command": "a.sh"},
                   {"type": "command", "command": "hrm hook stop"}]},
        {"hooks": [{"type": "command", "command": "hrm hook stop"}], "matcher": "Write|Edit"},
    ]}}
)
def test_merge_is_idempotent_and_uninstall_restores_foreign_handlers(data: dict[str, object]) -> None:
    merged, _ = merge_hooks(data, COMMAND)
    again, changes = merge_hooks(merged, COMMAND)
    assert again == merged
    assert not (changes.added or changes.updated or changes.removed)
    registered = {r.event: 1 for r in HOOK_REGISTRATIONS}
    assert {e: len(h) for e, h in ours(merged).items() if e in registered} == registered
    removed, _ = remove_hooks(merged)
    stripped, _ = remove_hooks(data)
    assert without_empty_events(removed) == without_empty_events(stripped)
    for key, value in data.items():
        if key != "hooks":
            assert merged[key] == value
