"""`quarantine_damage`: a damaged ledger is copied aside whole, cut back and writable again."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hrm.errors import ErrorCode, HRMError
from hrm.storage import GENESIS_HASH, Ledger, VerifyError, quarantine_damage, verify_ledger
from hrm.storage.ledger import QUARANTINE_KIND
from hrm.storage.ledger_quarantine import highest_turn


def fill(path: Path, count: int) -> list[str]:
    """Append `count` records; return their hashes."""
    with Ledger(path) as ledger:
        return [ledger.append("note", {"i": i, "text": f"message {i}"}).hash for i in range(count)]


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def rewrite(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(lines))


def alter(path: Path, line: int) -> None:
    lines = lines_of(path)
    lines[line - 1] = lines[line - 1].replace(b"message", b"massage")
    rewrite(path, lines)


def anchor_of(path: Path) -> Path:
    return path.with_name(path.name + ".anchor")


def copies(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.quarantined-*"))


def records(path: Path) -> list[tuple[str, str]]:
    with Ledger(path, read_only=True) as ledger:
        return [(r.kind, r.hash) for r in ledger.records()]


def fixed_clock() -> datetime:
    return datetime(2026, 11, 23, 12, 0, 0, 123456, tzinfo=UTC)


@pytest.fixture
def ledger_path(tmp_path: Path) -> Path:
    return tmp_path / "ledger" / "decisions.jsonl"


def test_a_sound_ledger_is_left_exactly_as_it_was(ledger_path: Path) -> None:
    fill(ledger_path, 4)
    before = ledger_path.read_bytes(), anchor_of(ledger_path).read_bytes()
    report = quarantine_damage(ledger_path)
    assert not report.quarantined and report.damage is None
    assert report.kept_records == 4 and report.cut_bytes == 0
    assert (ledger_path.read_bytes(), anchor_of(ledger_path).read_bytes()) == before
    assert copies(ledger_path) == []
    assert "nothing to quarantine" in report.describe()


def test_a_rewritten_record_is_set_aside_and_the_records_after_it_are_kept(
    ledger_path: Path,
) -> None:
    hashes = fill(ledger_path, 6)
    alter(ledger_path, 3)
    original = ledger_path.read_bytes()
    original_anchor = anchor_of(ledger_path).read_bytes()
    bad_line = original.splitlines(True)[2]

    report = quarantine_damage(ledger_path, clock=fixed_clock)

    assert report.quarantined and report.damage is not None
    assert (report.damage.line, report.damage.seq) == (3, 3)
    assert report.kept_records == 2 and report.salvaged == 3 and report.skipped == 1
    assert report.cut_bytes == len(bad_line)
    # Nothing is lost: the whole file and its anchor, byte for byte, beside the ledger.
    assert report.copy == ledger_path.with_name(
        "decisions.jsonl.quarantined-20261123T120000123456Z"
    )
    assert report.copy.read_bytes() == original
    assert report.anchor_copy is not None and report.anchor_copy.read_bytes() == original_anchor
    assert report.copy_sha256 == hashlib.sha256(original).hexdigest()
    # The live ledger verifies again: records 1-2 as they were, 4-6 chained anew as 3-5 with
    # their content unchanged, and a record of what happened at the end.
    assert verify_ledger(ledger_path).ok
    with Ledger(ledger_path, read_only=True) as ledger:
        live = list(ledger.records())
    assert [r.hash for r in live[:2]] == hashes[:2]
    assert [(r.seq, r.data["i"]) for r in live[2:5]] == [(3, 3), (4, 4), (5, 5)]
    note = live[-1]
    assert note.kind == QUARANTINE_KIND and report.record_seq == note.seq == 6
    assert note.prev == live[4].hash
    assert note.data["copy_sha256"] == report.copy_sha256
    assert note.data["copy"] == report.copy.name
    assert note.data["cut_bytes"] == report.cut_bytes and note.data["kept_records"] == 2
    assert note.data["salvaged"] == 3 and note.data["salvaged_from"] == [[4, 6]]
    skipped = note.data["skipped"]
    assert [(s["offset"], s["length"]) for s in skipped] == [
        (sum(len(x) for x in original.splitlines(True)[:2]), len(bad_line))
    ]
    assert skipped[0]["sha256"] == hashlib.sha256(bad_line).hexdigest()
    assert "hash mismatch" in note.data["reason"] and "hash mismatch" in skipped[0]["reason"]


def test_the_ledger_takes_appends_again_after_a_quarantine(ledger_path: Path) -> None:
    fill(ledger_path, 3)
    alter(ledger_path, 2)
    with pytest.raises(HRMError) as refused, Ledger(ledger_path) as ledger:
        list(ledger.records())
    assert refused.value.code is ErrorCode.LEDGER_CORRUPT
    quarantine_damage(ledger_path)  # keeps 1, salvages record 3 as 2, records itself as 3
    with Ledger(ledger_path) as ledger:
        assert ledger.append("note", {"after": True}).seq == 4
    report = verify_ledger(ledger_path)
    assert report.ok and report.records == 4 and report.anchor_seq == 4


def test_records_cut_below_the_anchor_are_recorded_and_appends_resume(ledger_path: Path) -> None:
    fill(ledger_path, 5)
    rewrite(ledger_path, lines_of(ledger_path)[:3])  # the anchor still vouches for seq 5
    with Ledger(ledger_path) as ledger, pytest.raises(HRMError, match="quarantine"):
        ledger.append("note", {"refused": True})

    report = quarantine_damage(ledger_path)

    assert report.damage is not None and "anchor vouches for seq 5" in report.damage.reason
    assert report.kept_records == 3 and report.cut_bytes == 0
    assert verify_ledger(ledger_path).ok
    with Ledger(ledger_path) as ledger:
        assert ledger.append("note", {"resumed": True}).seq == 5


def test_a_damaged_first_record_keeps_what_follows_it(ledger_path: Path) -> None:
    fill(ledger_path, 2)
    alter(ledger_path, 1)
    report = quarantine_damage(ledger_path)
    assert report.kept_records == 0 and report.salvaged == 1 and report.record_seq == 2
    with Ledger(ledger_path, read_only=True) as ledger:
        live = list(ledger.records())
    assert [(r.seq, r.kind) for r in live] == [(1, "note"), (2, QUARANTINE_KIND)]
    assert live[0].prev == GENESIS_HASH and live[0].data == {"i": 1, "text": "message 1"}


def test_a_turn_number_in_a_skipped_record_is_remembered(ledger_path: Path) -> None:
    with Ledger(ledger_path) as ledger:
        for turn in (1, 2, 3):
            ledger.append("turn", {"turn": turn, "input": f"message {turn}"})
    alter(ledger_path, 3)  # the last turn's record is damaged: it cannot be salvaged
    quarantine_damage(ledger_path)
    with Ledger(ledger_path, read_only=True) as ledger:
        tail = ledger.tail(10)
    turns = [r.data["turn"] for r in tail if r.kind == "turn"]
    assert turns == [1, 2]
    assert highest_turn(tail) == 3  # the next turn is 4, not 3 again


def test_a_duplicated_line_is_kept_once(ledger_path: Path) -> None:
    hashes = fill(ledger_path, 4)
    lines = lines_of(ledger_path)
    rewrite(ledger_path, [*lines[:2], lines[1], *lines[2:]])
    report = quarantine_damage(ledger_path)
    assert report.salvaged == 2
    with Ledger(ledger_path, read_only=True) as ledger:
        live = list(ledger.records())
    assert [r.hash for r in live[:2]] == hashes[:2]
    assert [r.data["i"] for r in live[:-1]] == [0, 1, 2, 3]


def test_a_dry_run_changes_nothing(ledger_path: Path) -> None:
    fill(ledger_path, 4)
    alter(ledger_path, 3)
    before = ledger_path.read_bytes()
    report = quarantine_damage(ledger_path, dry_run=True)
    assert report.quarantined and report.dry_run and report.copy is None
    assert report.kept_records == 2 and report.salvaged == 1 and report.record_seq is None
    assert ledger_path.read_bytes() == before and copies(ledger_path) == []
    assert "would keep 2 records, salvaged 1 after it" in report.describe()


def test_a_problem_found_outside_the_file_is_recorded_without_a_cut(ledger_path: Path) -> None:
    fill(ledger_path, 2)
    before = ledger_path.read_bytes()
    outside = VerifyError(line=4, seq=4, reason="the index holds record 4", offset=0)
    report = quarantine_damage(ledger_path, also=outside)
    assert report.damage == outside and report.cut_bytes == 0
    assert ledger_path.read_bytes().startswith(before)
    assert records(ledger_path)[-1][0] == QUARANTINE_KIND


def test_missing_and_directory_paths_are_named_errors(tmp_path: Path) -> None:
    with pytest.raises(HRMError) as missing:
        quarantine_damage(tmp_path / "absent.jsonl")
    assert missing.value.code is ErrorCode.NOT_FOUND
    with pytest.raises(HRMError) as directory:
        quarantine_damage(tmp_path)
    assert directory.value.code is ErrorCode.VALIDATION_FAILED
    assert "is a directory" in directory.value.message


@pytest.mark.parametrize("damaged_line", [2, 30])
def test_a_handle_open_across_the_quarantine_chains_onto_the_repair(
    ledger_path: Path, damaged_line: int
) -> None:
    """Line 2 or 30 damaged: the records after it are salvaged; the handle re-reads the tail."""
    fill(ledger_path, 30)
    with Ledger(ledger_path) as open_handle:
        open_handle.append("note", {"before": True})
        alter(ledger_path, damaged_line)
        quarantine_damage(ledger_path)
        appended = open_handle.append("note", {"after": True})
    # 31 records, one damaged: 30 kept or salvaged, the quarantine record, then the append.
    assert appended.seq == 32
    report = verify_ledger(ledger_path)
    assert report.ok and report.records == 32


def test_a_shrink_that_is_not_a_quarantine_is_still_refused(ledger_path: Path) -> None:
    fill(ledger_path, 10)
    with Ledger(ledger_path) as open_handle:
        open_handle.append("note", {"before": True})
        rewrite(ledger_path, lines_of(ledger_path)[:4])
        with pytest.raises(HRMError, match="shrank"):
            open_handle.append("note", {"after": True})


def test_the_file_size_always_changes_so_open_handles_notice(tmp_path: Path) -> None:
    """Open handles detect other writers by size: a repair must never leave it equal.

    Garbage lines of every length around a quarantine record's own length are cut; at one of
    them the record would have been exactly as long as the cut without its padding.
    """
    probe = tmp_path / "probe" / "x.jsonl"
    fill(probe, 1)
    probe.write_bytes(probe.read_bytes() + b"g" * 499 + b"\n")
    quarantine_damage(probe, clock=fixed_clock)
    record_length = len(lines_of(probe)[-1])  # the quarantine record for a 500-byte cut
    padded = 0
    for length in range(record_length - 60, record_length + 60):
        path = tmp_path / f"l{length}" / "x.jsonl"
        fill(path, 1)
        before = path.read_bytes() + b"g" * (length - 1) + b"\n"
        path.write_bytes(before)
        report = quarantine_damage(path, clock=fixed_clock)
        assert report.cut_bytes == length
        assert path.stat().st_size != len(before)
        with Ledger(path, read_only=True) as ledger:
            note = ledger.last()
        padded += note is not None and "padding" in note.data
    assert padded >= 1


_DAMAGE = st.sampled_from(["alter", "delete", "duplicate", "swap", "cut_tail", "garbage"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(count=st.integers(1, 8), kind=_DAMAGE, where=st.integers(0, 7))
def test_any_damage_is_set_aside_and_the_ledger_verifies(
    tmp_path_factory: pytest.TempPathFactory, count: int, kind: str, where: int
) -> None:
    path = tmp_path_factory.mktemp("q") / "l.jsonl"
    hashes = fill(path, count)
    lines = lines_of(path)
    i = where % count
    if kind == "alter":
        lines[i] = lines[i].replace(b"message", b"massage")
    elif kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(i, lines[i])
    elif kind == "swap" and count > 1:
        j = (i + 1) % count
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "cut_tail":
        lines = lines[:i]
    elif kind == "garbage":
        lines.insert(i, b'{"not": "a record"}\n')
    rewrite(path, lines)
    original = path.read_bytes()
    before = verify_ledger(path)

    report = quarantine_damage(path)

    assert report.quarantined == (not before.ok)
    assert report.kept_records == before.records
    after = verify_ledger(path)
    assert after.ok, after.describe()
    kept = records(path)
    assert [h for _, h in kept[: before.records]] == hashes[: before.records]
    if report.quarantined:
        assert report.copy is not None and report.copy.read_bytes() == original
        assert kept[-1][0] == QUARANTINE_KIND
        assert len(kept) == before.records + report.salvaged + 1
        # Every original record not damaged itself is still there, once.
        with Ledger(path, read_only=True) as ledger:
            texts = [r.data.get("text") for r in ledger.records() if r.kind == "note"]
        assert len(texts) == len(set(texts))
        note = json.loads(path.read_bytes().splitlines()[-1])
        assert note["data"]["copy_sha256"] == hashlib.sha256(original).hexdigest()
    else:
        assert path.read_bytes() == original


def test_a_torn_committed_record_is_never_cut_by_a_writer(ledger_path: Path) -> None:
    """A missing newline at the end of a committed record is damage: the next writer (a plain
    `hrm turn`) refuses, it does not cut the record's bytes away (issue 32 §7)."""
    fill(ledger_path, 3)
    damaged = ledger_path.read_bytes()[:-40]  # the last committed record loses its end
    ledger_path.write_bytes(damaged)
    with Ledger(ledger_path) as ledger, pytest.raises(HRMError) as refused:
        ledger.append("note", {"after": True})
    assert refused.value.code is ErrorCode.LEDGER_CORRUPT
    assert ledger_path.read_bytes() == damaged
    assert not verify_ledger(ledger_path).ok


def test_a_torn_append_after_the_last_commit_is_still_cut(ledger_path: Path) -> None:
    fill(ledger_path, 3)
    whole = ledger_path.read_bytes()
    ledger_path.write_bytes(whole + b'{"data":{"i":3,"te')  # an append a crash interrupted
    with Ledger(ledger_path) as ledger:
        assert ledger.append("note", {"after": True}).seq == 4
    assert ledger_path.read_bytes().startswith(whole) and verify_ledger(ledger_path).ok


def test_turn_numbers_are_not_used_again_after_a_quarantine(tmp_path: Path) -> None:
    from hrm import HRM
    from hrm.home import HRMHome, initialize

    home = HRMHome(initialize(tmp_path / "home").path)
    with HRM.open(home.root, llm="offline") as hrm:
        for text in ("How do I tag a release?", "And how do I delete a tag?"):
            hrm.turn(text)
        assert hrm.turn_number == 2
    path = home.decision_ledger("ADMIN")
    lines = path.read_bytes().splitlines(keepends=True)
    last_turn = max(i for i, line in enumerate(lines) if b'"kind":"turn"' in line)
    lines[last_turn] = lines[last_turn].replace(b"delete a tag", b"delete a tab")
    path.write_bytes(b"".join(lines))
    quarantine_damage(path)
    with HRM.open(home.root, llm="offline") as hrm:
        hrm.turn("Thanks, and how do I list tags?")
        assert hrm.turn_number == 3  # the damaged turn was 2: it is never numbered again
