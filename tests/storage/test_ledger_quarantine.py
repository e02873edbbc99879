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


def test_a_rewritten_record_is_set_aside_with_everything_after_it(ledger_path: Path) -> None:
    hashes = fill(ledger_path, 6)
    alter(ledger_path, 3)
    original = ledger_path.read_bytes()
    original_anchor = anchor_of(ledger_path).read_bytes()

    report = quarantine_damage(ledger_path, clock=fixed_clock)

    assert report.quarantined and report.damage is not None
    assert (report.damage.line, report.damage.seq) == (3, 3)
    assert report.kept_records == 2
    assert report.cut_bytes == len(original) - sum(len(x) for x in original.splitlines(True)[:2])
    # Nothing is lost: the whole file and its anchor, byte for byte, beside the ledger.
    assert report.copy == ledger_path.with_name(
        "decisions.jsonl.quarantined-20261123T120000123456Z"
    )
    assert report.copy.read_bytes() == original
    assert report.anchor_copy is not None and report.anchor_copy.read_bytes() == original_anchor
    assert report.copy_sha256 == hashlib.sha256(original).hexdigest()
    # The live ledger verifies again and says what happened, chained onto what was kept.
    assert verify_ledger(ledger_path).ok
    kept = records(ledger_path)
    assert [h for _, h in kept[:2]] == hashes[:2]
    assert kept[2][0] == QUARANTINE_KIND and report.record_seq == 3
    with Ledger(ledger_path, read_only=True) as ledger:
        note = ledger.last()
    assert note is not None and note.prev == hashes[1]
    assert note.data["copy_sha256"] == report.copy_sha256
    assert note.data["copy"] == report.copy.name
    assert note.data["cut_bytes"] == report.cut_bytes and note.data["kept_records"] == 2
    assert "hash mismatch" in note.data["reason"]


def test_the_ledger_takes_appends_again_after_a_quarantine(ledger_path: Path) -> None:
    fill(ledger_path, 3)
    alter(ledger_path, 2)
    with pytest.raises(HRMError) as refused, Ledger(ledger_path) as ledger:
        list(ledger.records())
    assert refused.value.code is ErrorCode.LEDGER_CORRUPT
    quarantine_damage(ledger_path)
    with Ledger(ledger_path) as ledger:
        assert ledger.append("note", {"after": True}).seq == 3
    report = verify_ledger(ledger_path)
    assert report.ok and report.records == 3 and report.anchor_seq == 3


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


def test_a_damaged_first_record_leaves_only_the_quarantine_record(ledger_path: Path) -> None:
    fill(ledger_path, 2)
    alter(ledger_path, 1)
    report = quarantine_damage(ledger_path)
    assert report.kept_records == 0 and report.record_seq == 1
    with Ledger(ledger_path, read_only=True) as ledger:
        only = list(ledger.records())
    assert [(r.seq, r.kind, r.prev) for r in only] == [(1, QUARANTINE_KIND, GENESIS_HASH)]


def test_a_dry_run_changes_nothing(ledger_path: Path) -> None:
    fill(ledger_path, 4)
    alter(ledger_path, 4)
    before = ledger_path.read_bytes()
    report = quarantine_damage(ledger_path, dry_run=True)
    assert report.quarantined and report.dry_run and report.copy is None
    assert report.kept_records == 3 and report.record_seq is None
    assert ledger_path.read_bytes() == before and copies(ledger_path) == []
    assert "would keep 3 records" in report.describe()


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
    """Line 2: the file shrinks under the handle; line 30: the new record makes it grow."""
    fill(ledger_path, 30)
    with Ledger(ledger_path) as open_handle:
        open_handle.append("note", {"before": True})
        alter(ledger_path, damaged_line)
        quarantine_damage(ledger_path)
        appended = open_handle.append("note", {"after": True})
    assert appended.seq == damaged_line + 1
    report = verify_ledger(ledger_path)
    assert report.ok and report.records == damaged_line + 1


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
    padded = 0
    for length in range(380, 620):
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
        assert kept[-1][0] == QUARANTINE_KIND and len(kept) == before.records + 1
        note = json.loads(path.read_bytes().splitlines()[-1])
        assert note["data"]["copy_sha256"] == hashlib.sha256(original).hexdigest()
    else:
        assert path.read_bytes() == original
