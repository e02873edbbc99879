"""The trust store: a project's settings files trusted by content, kept in the home (D215)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hrm.cli._common import EXIT_INPUT
from hrm.cli.app import app
from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome
from hrm.trust import TrustStore, file_digest, project_settings_files


def settings(project: Path, **files: str) -> Path:
    """Write settings files under `project`, keyed by their relative path with / as __."""
    for name, text in files.items():
        path = project / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return project


def states(store: TrustStore, project: Path) -> dict[str, str]:
    return {entry.relative: entry.state for entry in store.status(project)}


def test_trusting_records_every_settings_file_by_hash(home: HRMHome, tmp_path: Path) -> None:
    project = settings(
        tmp_path / "p",
        **{".hrm__config.yaml": "llm:\n  provider: openai\n",
           ".hrm__agents__scout.yaml": "id: scout\n",
           ".hrm__agents__notes.txt": "not an agent\n",
           ".claude__skills__skill-rules.json": "{}"},
    )
    store = TrustStore(home)
    assert set(states(store, project).values()) == {"untrusted"}
    record = store.trust(project)
    assert sorted(record.files) == [
        ".claude/skills/skill-rules.json", ".hrm/agents/scout.yaml", ".hrm/config.yaml"
    ]
    assert record.files[".hrm/config.yaml"] == file_digest(project / ".hrm" / "config.yaml")
    assert set(states(store, project).values()) == {"trusted"}
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600


def test_a_changed_or_added_file_is_untrusted_until_trusted_again(
    home: HRMHome, tmp_path: Path
) -> None:
    project = settings(tmp_path / "p", **{".hrm__config.yaml": "escalation_threshold: 0.5\n"})
    store = TrustStore(home)
    store.trust(project)
    (project / ".hrm" / "config.yaml").write_text("llm:\n  base_url: http://evil.example\n")
    settings(project, **{".hrm__skill-rules.json": "{}"})
    assert states(store, project) == {
        ".hrm/config.yaml": "changed", ".hrm/skill-rules.json": "untrusted"
    }
    store.trust(project)
    assert set(states(store, project).values()) == {"trusted"}


def test_trust_follows_the_resolved_directory(home: HRMHome, tmp_path: Path) -> None:
    project = settings(tmp_path / "p", **{".hrm__config.yaml": "x: 1\n"})
    link = tmp_path / "link"
    link.symlink_to(project)
    store = TrustStore(home)
    store.trust(link)
    assert store.get(project) is not None
    assert store.check(project, project / ".hrm" / "config.yaml").trusted


def test_untrust_forgets_and_list_shows_what_is_trusted(home: HRMHome, tmp_path: Path) -> None:
    one = settings(tmp_path / "one", **{".hrm__config.yaml": "a: 1\n"})
    two = settings(tmp_path / "two", **{".hrm__config.yaml": "b: 1\n"})
    store = TrustStore(home)
    store.trust(one)
    store.trust(two)
    assert [p.root for p in store.projects()] == [str(one.resolve()), str(two.resolve())]
    assert store.untrust(one) is True
    assert store.untrust(one) is False
    assert [p.root for p in store.projects()] == [str(two.resolve())]


def test_a_directory_without_settings_has_nothing_to_trust(home: HRMHome, tmp_path: Path) -> None:
    with pytest.raises(HRMError) as nothing:
        TrustStore(home).trust(tmp_path)
    assert nothing.value.code is ErrorCode.NOT_FOUND
    assert ".hrm/config.yaml" in nothing.value.message


def test_a_damaged_store_trusts_nothing(home: HRMHome, tmp_path: Path) -> None:
    project = settings(tmp_path / "p", **{".hrm__config.yaml": "a: 1\n"})
    store = TrustStore(home)
    store.trust(project)
    store.path.write_text('{"projects": [{"root": 3}')
    assert states(store, project) == {".hrm/config.yaml": "untrusted"}
    store.trust(project)  # and trusting again replaces it
    assert states(store, project) == {".hrm/config.yaml": "trusted"}


def test_a_fifo_in_a_settings_place_is_never_opened(home: HRMHome, tmp_path: Path) -> None:
    (tmp_path / ".hrm").mkdir()
    os.mkfifo(tmp_path / ".hrm" / "config.yaml")
    assert file_digest(tmp_path / ".hrm" / "config.yaml") is None  # would hang if opened
    assert project_settings_files(tmp_path) == []


def test_a_notice_is_given_once_per_channel_and_content(home: HRMHome, tmp_path: Path) -> None:
    store = TrustStore(home)
    path = tmp_path / ".hrm" / "config.yaml"
    assert store.first_notice("log", path, "aaa") is True
    assert store.first_notice("log", path, "aaa") is False
    assert store.first_notice("hook", path, "aaa") is True
    assert store.first_notice("log", path, "bbb") is True  # the file changed: say it again


def test_cli_trust_list_and_untrust(home: HRMHome, tmp_path: Path) -> None:
    project = settings(
        tmp_path / "p",
        **{".hrm__config.yaml": "llm:\n  provider: openai\n  api_key: sk-live-0123456789abcdefABCDEF\n"
                                "escalation_threshold: 0.5\n",
           ".hrm__agents__scout.yaml": "id: scout\nrole: r\nsystem_prompt: p\ntools: [read_file]\n"},
    )
    runner = CliRunner()
    trusted = runner.invoke(app, ["trust", str(project), "--home", str(home.root)])
    assert trusted.exit_code == 0, trusted.stderr
    assert ".hrm/config.yaml: llm.api_key=" in trusted.stdout
    assert "sk-live-0123456789abcdefABCDEF" not in trusted.stdout  # shown scrubbed
    assert "escalation_threshold" not in trusted.stdout  # needed no trust
    assert ".hrm/agents/scout.yaml: asks for tools" in trusted.stdout
    listed = runner.invoke(app, ["trust", "--list", "--json", "--home", str(home.root)])
    assert '"root": "' + str(project.resolve()) + '"' in listed.stdout
    gone = runner.invoke(app, ["untrust", str(project), "--home", str(home.root)])
    assert gone.exit_code == 0 and "Untrusted" in gone.stdout
    again = runner.invoke(app, ["untrust", str(project), "--home", str(home.root)])
    assert again.exit_code == EXIT_INPUT and again.stderr.startswith("error: ")
    empty = runner.invoke(app, ["trust", str(tmp_path / "nothing"), "--home", str(home.root)])
    assert empty.exit_code == EXIT_INPUT
