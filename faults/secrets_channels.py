"""Secrets × channels: write every secret family through every channel, then grep the home.

Each channel is a way text reaches hrm's stores, driven through its public API, its CLI or its
hook, as a person or Claude Code would: a governed turn (the decision, episodic and execution
ledgers, the problem registry, traces), the memory bus (Shared Reference, working sets), a
learning stored (with embeddings too) and imported (every field of an import item), a handoff
written by ``hrm handoff create``, by SessionEnd and by PreCompact from a transcript, a handoff
file indexed by PostToolUse, and the hook log. Each family's probe (the first sample of its
table in ``tests/fixtures/secret_families.toml``) is embedded in a sentence, and ``<private>``
text rides along. Afterwards every file under the home (``memory.db``, its ``-wal`` and
``-shm``, ledgers, handoffs, logs, traces, caches) is searched for each raw value (as written
and JSON-escaped, in any case), and the terms of every FTS5 index for the secret's longest
token: stored raw must be 0.

Run: ``.venv/bin/python faults/secrets_channels.py`` (``--quick`` for a few families). Prints the
table (channel × family: raw copies found) and writes ``faults/out/secrets_channels.json``;
exits 1 if anything was stored raw. ``tests/scenarios/test_secrets_channels.py`` runs the same
channels as a property test.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
import tempfile
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAMILIES_FILE = ROOT / "tests" / "fixtures" / "secret_families.toml"
OUT = Path(__file__).resolve().parent / "out"
PRIVATE_PROBE = "PRIVATEPROBE7Q2X"
"""Text the person marked private; it must reach no store either."""


@dataclass(frozen=True)
class Probe:
    family: str
    text: str
    """The sample as written (``DB_PASSWORD=hunter2hunter2``)."""
    secret: str
    """What must not be stored."""


def probes() -> list[Probe]:
    """One probe per family: its first positive sample whose secret is distinctive (8+ chars)."""
    table = tomllib.loads(FAMILIES_FILE.read_text(encoding="utf-8"))["families"]
    found = []
    for family, rows in table.items():
        for sample in rows["positives"]:
            if len(sample["secret"]) >= 8 and "\n" not in sample["secret"]:
                found.append(Probe(family, sample["text"], sample["secret"]))
                break
    return found


@dataclass(frozen=True)
class Place:
    """Where a channel writes: a home, a project, and room for scratch files."""

    home: Path
    project: Path
    scratch: Path


def carrier(text: str, index: int) -> str:
    """The probe inside an ordinary sentence, with private text beside it."""
    return (
        f"Note {index} for the deploy work: {text} and keep going. "
        f"<private>{PRIVATE_PROBE} my own notes</private> Thanks."
    )


def _cli(args: list[str]) -> None:
    from typer.testing import CliRunner

    from hrm.cli.app import app

    result = CliRunner().invoke(app, args, catch_exceptions=False)
    if result.exit_code not in (0, 4):  # 4: the write gate said no, which is not a failure here
        raise RuntimeError(f"hrm {' '.join(args[:3])} exited {result.exit_code}: {result.output}")


def _hook(place: Place, payload: dict[str, object]) -> None:
    from hrm.continuity.hook_entry import answer_hook

    env = {"HRM_HOME": str(place.home), "CLAUDE_PROJECT_DIR": str(place.project)}
    body = {"session_id": "3f1c2b9e-0000-4000-8000-00000000abcd", "cwd": str(place.project)}
    answer_hook(json.dumps({**body, **payload}).encode(), [], environ=env, cwd=place.project)


def turn(place: Place, texts: list[str]) -> None:
    """Governed turns with tracing on: ledgers (turn text and answers), work orders, traces."""
    from hrm import HRM
    from hrm.home import HRMHome, initialize
    from hrm.tracing import get_tracer, set_tracer

    initialize(HRMHome(place.home))
    (place.home / "config.yaml").write_text("trace_enabled: true\n", encoding="utf-8")
    previous = get_tracer()  # opening a stack with tracing on installs its tracer globally
    try:
        with HRM.open(place.home, "ADMIN", "offline") as hrm:
            for text in texts:
                hrm.turn(text)
    finally:
        set_tracer(previous)


def memory_bus(place: Place, texts: list[str]) -> None:
    """``hrm memory shared set`` and ``hrm memory working set``: keys and values."""
    home = ["--home", str(place.home)]
    for index, text in enumerate(texts):
        # Options first, then `--`: a value may begin with "-" ("- -----BEGIN RSA …", which a
        # fresh clone's run generated), and would otherwise be read as an option.
        _cli(["memory", "shared", "set", "--string", *home, "--", f"note.{index}", text])
        _cli(["memory", "working", "set", "--string", *home, "--", "p-1", f"k{index}", text])


def learn(place: Place, texts: list[str]) -> None:
    """``hrm memory learn`` with the text as content, context, tag and session."""
    for index, text in enumerate(texts):
        # `--name=value` and `--` before the content, as a person does with text that may
        # begin with "-" (a generated secret can): otherwise it is read as an option.
        _cli(["memory", "learn", "--type", "WORKING_SOLUTION", f"--context={text}",
              f"--tag={text}", f"--session={text}", "--home", str(place.home), "--",
              f"{text} (learning {index})"])


def learn_hybrid(place: Place, texts: list[str]) -> None:
    """Learnings stored with embeddings on (hybrid search's vectors), then searched for."""
    from hrm.continuity.learnings import LearningsRepository
    from hrm.continuity.learnings_types import LearningInput, SearchQuery
    from hrm.home import HRMHome, initialize

    initialize(HRMHome(place.home))
    with LearningsRepository.open(HRMHome(place.home), embeddings="on") as repo:
        for index, text in enumerate(texts):
            repo.store_learning(LearningInput(
                content=f"{text} (hybrid {index})", type="WORKING_SOLUTION", context=text))
        repo.search_memories(SearchQuery(text=texts[0], filters=None, limit=3))


def learn_import(place: Place, texts: list[str]) -> None:
    """``hrm memory import`` of items carrying the text in every field an export has."""
    path = place.scratch / "import.jsonl"
    items = [
        {"id": f"{text}-{index}", "content": f"{text} (import {index})", "context": text,
         "type": "WORKING_SOLUTION", "tags": [text], "session_id": text,
         "metadata": {"source": text, "preference_class": text}}
        for index, text in enumerate(texts)
    ]
    path.write_text("\n".join(json.dumps(item) for item in items) + "\n", encoding="utf-8")
    _cli(["memory", "import", str(path), "--home", str(place.home)])


def handoff_cli(place: Place, texts: list[str]) -> None:
    """``hrm handoff create`` with the text as task, next step and notes."""
    for index, text in enumerate(texts):
        _cli(["handoff", "create", f"--task=Task {index}: {text}", f"--next-step={text}",
              f"--notes={text}", "--session", f"s{index}", "--project", str(place.project),
              "--home", str(place.home)])


def _transcript(place: Place, texts: list[str]) -> Path:
    path = place.scratch / "transcript.jsonl"
    lines = []
    for text in texts:
        lines.append({"type": "user", "message": {"role": "user", "content": text}})
        lines.append({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": f"Done. Next:\n- check {text}"},
            {"type": "tool_use", "name": "Write", "input": {"file_path": "/tmp/notes.md"}},
        ]}})
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def session_end(place: Place, texts: list[str]) -> None:
    """The SessionEnd hook writing a handoff from a transcript holding the text."""
    transcript = _transcript(place, texts)
    _hook(place, {"hook_event_name": "SessionEnd", "reason": "other",
                  "transcript_path": str(transcript)})


def pre_compact(place: Place, texts: list[str]) -> None:
    """The PreCompact hook, the text also in what the person typed after /compact."""
    transcript = _transcript(place, texts)
    for text in texts:
        _hook(place, {"hook_event_name": "PreCompact", "trigger": "manual",
                      "custom_instructions": text, "transcript_path": str(transcript)})


def artifact(place: Place, texts: list[str]) -> None:
    """PostToolUse indexing a handoff file the assistant wrote into the project."""
    folder = place.project / "thoughts" / "shared" / "handoffs"
    folder.mkdir(parents=True, exist_ok=True)
    for index, text in enumerate(texts):
        target = folder / f"handoff-{index}.md"
        target.write_text(f"# Handoff\n\n{text}\n", encoding="utf-8")
        _hook(place, {"hook_event_name": "PostToolUse", "tool_name": "Write",
                      "tool_input": {"file_path": str(target), "content": text}})


def hook_log(place: Place, texts: list[str]) -> None:
    """The hook log: a hook whose payload problem is logged with the text in it."""
    for text in texts:
        _hook(place, {"hook_event_name": "PostToolUse", "tool_name": "Write",
                      "tool_input": {"file_path": 7, "content": text}, "session_id": text})


CHANNELS: dict[str, Callable[[Place, list[str]], None]] = {
    "turn (ledgers, work orders, traces)": turn,
    "memory bus (shared, working)": memory_bus,
    "learning (hrm memory learn)": learn,
    "learning (embeddings on)": learn_hybrid,
    "learning import": learn_import,
    "handoff (hrm handoff create)": handoff_cli,
    "handoff (SessionEnd transcript)": session_end,
    "handoff (PreCompact)": pre_compact,
    "artifact index (PostToolUse)": artifact,
    "hook log": hook_log,
}


def _fts_terms(database: Path) -> set[str]:
    """Every term of every FTS5 index in `database` (read from a copy: no write to the home)."""
    if not database.exists():
        return set()
    terms: set[str] = set()
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "copy.db"
        source = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        target = sqlite3.connect(copy)
        source.backup(target)
        source.close()
        tables = [row[0] for row in target.execute(
            "SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%fts5%'")]
        for index, table in enumerate(tables):
            target.execute(
                f"CREATE VIRTUAL TABLE temp.v{index} USING fts5vocab(main, '{table}', 'row')"
            )
            terms.update(row[0] for row in target.execute(f"SELECT term FROM temp.v{index}"))
        target.close()
    return terms


def stored_raw(home: Path, needles: list[str]) -> dict[str, list[str]]:
    """For each needle, the files (and FTS indexes) under `home` holding it raw, in any case."""
    files = {path: path.read_bytes().lower() for path in home.rglob("*") if path.is_file()}
    terms = _fts_terms(home / "memory.db")
    found: dict[str, list[str]] = {}
    for needle in needles:  # in any case: a store that lower-cases text keeps it all the same
        forms = {needle.lower().encode(), json.dumps(needle.lower())[1:-1].encode()}
        hits = [str(p.relative_to(home)) for p, data in files.items()
                if any(form in data for form in forms)]
        token = max(re.findall(r"[a-z0-9]+", needle.lower()), key=len, default="")
        if len(token) >= 8 and any(len(t) >= 8 and (t in token or token in t) for t in terms):
            hits.append("memory.db (FTS5 index terms)")
        found[needle] = hits
    return found


def run(channel: str, chosen: list[Probe]) -> dict[str, list[str]]:
    """Write every probe through one channel in a fresh home; return raw copies per family."""
    with tempfile.TemporaryDirectory(prefix="hrm-secrets-") as scratch:
        place = Place(Path(scratch) / "home", Path(scratch) / "project", Path(scratch))
        place.project.mkdir()
        texts = [carrier(probe.text, index) for index, probe in enumerate(chosen)]
        CHANNELS[channel](place, texts)
        found = stored_raw(place.home, [p.secret for p in chosen] + [PRIVATE_PROBE])
    result = {probe.family: found[probe.secret] for probe in chosen}
    result["<private>"] = found[PRIVATE_PROBE]
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="six families only")
    parser.add_argument("--channel", action="append", help="run only this channel (repeatable)")
    args = parser.parse_args()
    chosen = probes()
    if args.quick:
        chosen = chosen[:: max(1, len(chosen) // 6)]
    channels = args.channel or list(CHANNELS)
    table = {channel: run(channel, chosen) for channel in channels}
    OUT.mkdir(exist_ok=True)
    (OUT / "secrets_channels.json").write_text(json.dumps(table, indent=2) + "\n")
    total = 0
    print(f"{len(chosen)} families + <private> × {len(channels)} channels")
    print("| channel | probes | stored raw | where |")
    print("|---|---|---|---|")
    for channel, result in table.items():
        leaked = {family: hits for family, hits in result.items() if hits}
        total += len(leaked)
        where = "; ".join(f"{f}: {', '.join(h)}" for f, h in leaked.items()) or "—"
        print(f"| {channel} | {len(result)} | {len(leaked)} | {where} |")
    print(f"stored raw: {total} of {len(chosen) * len(channels) + len(channels)}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
