"""Ledger behaviour: chaining, scrubbing, validation, durability, reading, corruption, torn tails."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from hrm.errors import ErrorCode, HRMError
from hrm.storage import ledger as ledger_module
from hrm.storage.ledger import (
    GENESIS_HASH,
    Durability,
    Ledger,
    canonical_json,
    record_hash,
    verify_ledger,
)

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def fixed_clock() -> datetime:
    return T0


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "stack" / "workorder.jsonl"


def fill(path: Path, count: int, *, commit: bool = True) -> list[str]:
    """A ledger of `count` records; returns its lines (with newlines)."""
    with Ledger(path, clock=fixed_clock) as ledger:
        for i in range(1, count + 1):
            ledger.append("turn", {"i": i, "text": f"message {i}"})
        if commit:
            ledger.commit()
    return path.read_text().splitlines(keepends=True)


def rewrite(path: Path, lines: list[str]) -> None:
    path.write_text("".join(lines))


def forge(seq: int, prev: str, *, data: dict[str, Any] | None = None) -> str:
    """A well-formed line with a correct own hash (what an editor recomputing hashes writes)."""
    fields = {"data": data or {"forged": True}, "kind": "turn", "prev": prev, "seq": seq,
              "ts": "2026-01-02T03:04:05.000000Z"}
    return canonical_json({**fields, "hash": record_hash(**fields)}) + "\n"


# ── appending ────────────────────────────────────────────────────────────────


def test_records_chain_from_the_genesis_hash(path: Path) -> None:
    with Ledger(path, clock=fixed_clock) as ledger:
        first = ledger.append("turn", {"text": "hello"})
        second = ledger.append("work_order", {"tokens": 12})
    assert (first.seq, first.line, first.prev) == (1, 1, GENESIS_HASH)
    assert (second.seq, second.line, second.prev) == (2, 2, first.hash)
    assert first.ts == "2026-01-02T03:04:05.000000Z"


def test_hash_is_sha256_of_canonical_json_of_five_fields(path: Path) -> None:
    with Ledger(path, clock=fixed_clock) as ledger:
        record = ledger.append("turn", {"b": 1, "a": ["é", 2.5, None, True]})
    body = json.dumps(
        {"seq": 1, "ts": record.ts, "kind": "turn", "data": record.data, "prev": GENESIS_HASH},
        sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    )
    assert record.hash == hashlib.sha256(body.encode()).hexdigest()


def test_each_line_is_the_canonical_json_of_the_record(path: Path) -> None:
    with Ledger(path, clock=fixed_clock) as ledger:
        record = ledger.append("turn", {"z": {"y": "ü"}, "a": 1})
    line = path.read_text(encoding="utf-8")
    stored = json.loads(line)
    assert line == canonical_json(stored) + "\n"
    assert stored == {k: v for k, v in record.to_dict().items() if k not in ("line", "offset")}


def test_offsets_point_at_each_line(path: Path) -> None:
    with Ledger(path) as ledger:
        records = [ledger.append("turn", {"i": i}) for i in range(3)]
        for record in records:
            assert ledger.read_at(record.offset) == record


@pytest.mark.parametrize(
    "moment",
    [
        pytest.param(datetime(2026, 1, 2, 3, 4, 5), id="naive-is-utc"),  # noqa: DTZ001
        pytest.param(datetime(2026, 1, 2, 5, 4, 5, tzinfo=timezone(timedelta(hours=2))), id="cest"),
    ],
)
def test_timestamps_are_stored_in_utc(path: Path, moment: datetime) -> None:
    with Ledger(path, clock=lambda: moment) as ledger:
        record = ledger.append("turn", {})
    assert record.ts == "2026-01-02T03:04:05.000000Z"
    assert record.timestamp == T0


def test_secrets_are_scrubbed_from_values_and_keys(path: Path) -> None:
    key = "sk-ant-" + "a" * 40
    with Ledger(path) as ledger:
        record = ledger.append("turn", {"text": f"my key is {key}", key: "value"})
    stored = path.read_text()
    assert key not in stored
    assert "[REDACTED:anthropic_key]" in stored
    assert key not in json.dumps(record.data)


@dataclass(frozen=True)
class BadData:
    data: Any
    key: str


BAD_DATA = [
    pytest.param(BadData({"a": {"b": [1, object()]}}, "data['a']['b'][1]"), id="object"),
    pytest.param(BadData({"x": float("nan")}, "data['x']"), id="nan"),
    pytest.param(BadData({"x": [float("inf")]}, "data['x'][0]"), id="inf"),
    pytest.param(BadData({"when": T0}, "data['when']"), id="datetime"),
    pytest.param(BadData({"n": {1: "one"}}, "data['n']"), id="int-key"),
    pytest.param(BadData({"s": {1, 2}}, "data['s']"), id="set"),
]


@pytest.mark.parametrize("case", BAD_DATA)
def test_unserialisable_data_names_the_key_and_writes_nothing(path: Path, case: BadData) -> None:
    with Ledger(path) as ledger, pytest.raises(HRMError) as info:
        ledger.append("turn", case.data)
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert info.value.context["key"] == case.key
    assert case.key in info.value.message
    assert not path.exists()


@pytest.mark.parametrize("kind", ["", None, "k" * 201])
def test_kind_must_be_a_short_non_empty_string(path: Path, kind: Any) -> None:
    with Ledger(path) as ledger, pytest.raises(HRMError) as info:
        ledger.append(kind, {})
    assert info.value.code is ErrorCode.VALIDATION_FAILED


def test_data_must_be_a_dict(path: Path) -> None:
    with Ledger(path) as ledger, pytest.raises(HRMError, match="must be a dict"):
        ledger.append("turn", ["not", "a", "dict"])  # type: ignore[arg-type]


def test_lone_surrogates_are_rejected_before_writing(path: Path) -> None:
    with Ledger(path) as ledger, pytest.raises(HRMError) as info:
        ledger.append("turn", {"text": "bad \ud800 text"})
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert path.read_bytes() == b""


def test_append_many_is_all_or_nothing(path: Path) -> None:
    with Ledger(path) as ledger:
        ledger.append("turn", {"i": 0})
        before = path.read_bytes()
        with pytest.raises(HRMError):
            ledger.append_many([("turn", {"i": 1}), ("turn", {"bad": object()})])
        assert path.read_bytes() == before
        records = ledger.append_many([("a", {"i": 1}), ("b", {"i": 2})])
    assert [r.seq for r in records] == [2, 3]
    assert records[1].prev == records[0].hash
    assert verify_ledger(path).records == 3


def test_append_many_of_nothing_creates_nothing(path: Path) -> None:
    with Ledger(path) as ledger:
        assert ledger.append_many([]) == []
    assert not path.exists()


def test_a_reopened_ledger_continues_the_chain(path: Path) -> None:
    with Ledger(path) as ledger:
        first = ledger.append("turn", {})
    with Ledger(path) as ledger:
        second = ledger.append("turn", {})
    assert (second.seq, second.prev) == (2, first.hash)


def test_two_handles_on_one_file_interleave_into_one_chain(path: Path) -> None:
    with Ledger(path) as one, Ledger(path) as two:
        one.append("turn", {"by": 1})
        two.append("turn", {"by": 2})
        one.append("turn", {"by": 1})
        two.append_many([("turn", {"by": 2}), ("turn", {"by": 2})])
    report = verify_ledger(path)
    assert report.ok and report.records == 5


def test_threads_share_one_ledger(path: Path) -> None:
    ledger = Ledger(path)
    start = threading.Event()

    def work(worker: int) -> None:
        start.wait()
        for i in range(40):
            ledger.append("turn", {"worker": worker, "i": i})

    threads = [threading.Thread(target=work, args=(w,)) for w in range(6)]
    for thread in threads:
        thread.start()
    start.set()
    for thread in threads:
        thread.join()
    seen = [(r.data["worker"], r.data["i"]) for r in ledger.records()]
    ledger.close()
    assert sorted(seen) == [(w, i) for w in range(6) for i in range(40)]


def test_closed_ledger_refuses_use(path: Path) -> None:
    ledger = Ledger(path)
    ledger.close()
    ledger.close()
    with pytest.raises(HRMError, match="closed"):
        ledger.append("turn", {})


# ── durability ───────────────────────────────────────────────────────────────


@pytest.fixture
def syncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr(ledger_module, "_sync_data", calls.append)
    return calls


def test_group_commit_syncs_once_per_batch(path: Path, syncs: list[int]) -> None:
    with Ledger(path, durability="group") as ledger:
        with ledger.batch():
            for i in range(5):
                ledger.append("turn", {"i": i})
        assert len(syncs) == 1
        ledger.commit()
        assert len(syncs) == 1  # nothing new to commit


def test_fsync_durability_syncs_every_append(path: Path, syncs: list[int]) -> None:
    with Ledger(path, durability=Durability.FSYNC) as ledger:
        ledger.append("turn", {})
        ledger.append_many([("turn", {}), ("turn", {})])
        ledger.commit()
    assert len(syncs) == 2


def test_close_commits_pending_records(path: Path, syncs: list[int]) -> None:
    with Ledger(path) as ledger:
        ledger.append("turn", {})
    assert len(syncs) == 1


def test_batch_commits_even_when_the_block_fails(path: Path, syncs: list[int]) -> None:
    ledger = Ledger(path)
    with pytest.raises(RuntimeError), ledger.batch():
        ledger.append("turn", {})
        raise RuntimeError("turn failed")
    assert len(syncs) == 1
    ledger.close()


def test_unknown_durability_is_rejected(path: Path) -> None:
    with pytest.raises(HRMError, match="durability"):
        Ledger(path, durability="sometimes")


def test_anchor_records_the_last_committed_record(path: Path) -> None:
    with Ledger(path) as ledger:
        ledger.append("turn", {})
        assert verify_ledger(path).anchor_seq is None  # appended, not yet committed
        ledger.commit()
        assert verify_ledger(path).anchor_seq == 1


# ── reading ──────────────────────────────────────────────────────────────────


def test_a_missing_ledger_reads_as_empty_and_is_not_created(path: Path) -> None:
    ledger = Ledger(path)
    assert list(ledger.records()) == []
    assert ledger.tail() == []
    assert ledger.last() is None
    report = ledger.verify()
    assert report.ok and report.records == 0
    ledger.close()
    assert not path.exists()


def test_records_from_a_start_seq(path: Path) -> None:
    fill(path, 5)
    with Ledger(path) as ledger:
        assert [r.seq for r in ledger.records(start_seq=4)] == [4, 5]
        assert [r.data["i"] for r in ledger.records()] == [1, 2, 3, 4, 5]


def test_records_after_a_record(path: Path) -> None:
    fill(path, 4)
    with Ledger(path) as ledger:
        second = ledger.read_at(ledger.tail(3)[0].offset)
        assert [r.seq for r in ledger.records_after(second)] == [3, 4]


def test_tail_and_last(path: Path) -> None:
    fill(path, 4)
    with Ledger(path) as ledger:
        assert [r.seq for r in ledger.tail(2)] == [3, 4]
        assert [r.seq for r in ledger.tail(10)] == [1, 2, 3, 4]
        assert ledger.tail(0) == []
        last = ledger.last()
    assert last is not None and last.seq == 4 and last.data == {"i": 4, "text": "message 4"}


@pytest.mark.parametrize("offset", [-1, 3, 10_000])
def test_read_at_an_offset_that_is_not_a_line_start(path: Path, offset: int) -> None:
    fill(path, 2)
    with Ledger(path) as ledger, pytest.raises(HRMError) as info:
        ledger.read_at(offset)
    assert info.value.code is ErrorCode.NOT_FOUND


# ── corruption ───────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class Damage:
    mutate: Callable[[list[str]], list[str]]
    line: int
    reason: str


def _edit(lines: list[str]) -> list[str]:
    lines[2] = lines[2].replace("message 3", "message X")
    return lines


def _wrong_seq(lines: list[str]) -> list[str]:
    prev = json.loads(lines[2])["prev"]
    lines[2] = forge(7, prev)
    return lines


def _wrong_prev(lines: list[str]) -> list[str]:
    lines[2] = forge(3, "f" * 64)
    return lines


def _cut_middle(lines: list[str]) -> list[str]:
    lines[1] = lines[1][:40]  # the rest of line 2, with its newline, is gone
    return lines


DAMAGE = [
    pytest.param(Damage(_edit, 3, "hash mismatch"), id="edited-bytes"),
    pytest.param(Damage(lambda ls: ls[:2] + ls[3:], 3, "missing"), id="deleted-record"),
    pytest.param(Damage(lambda ls: [ls[0], ls[2], ls[1], *ls[3:]], 2, "reordered"), id="reordered"),
    pytest.param(Damage(lambda ls: [*ls[:2], ls[1], *ls[2:]], 3, "duplicated"), id="duplicate"),
    pytest.param(Damage(lambda ls: [*ls[:2], "not json\n", *ls[2:]], 3, "not valid JSON"),
                 id="non-json"),
    pytest.param(Damage(lambda ls: [*ls[:2], "\n", *ls[2:]], 3, "empty line"), id="empty-line"),
    pytest.param(Damage(_wrong_seq, 3, "seq 7 where 3"), id="wrong-seq"),
    pytest.param(Damage(_wrong_prev, 3, "chain broken"), id="broken-chain"),
    pytest.param(Damage(_cut_middle, 2, "not valid JSON"), id="truncated-middle"),
]


@pytest.mark.parametrize("damage", DAMAGE)
def test_verify_names_the_first_bad_record(path: Path, damage: Damage) -> None:
    rewrite(path, damage.mutate(fill(path, 5)))
    report = verify_ledger(path)
    assert not report.ok
    assert report.first_error is not None
    assert report.first_error.line == damage.line
    assert report.first_error.seq == damage.line
    assert damage.reason in report.first_error.reason
    assert report.records == damage.line - 1
    assert report.describe().startswith(f"{path}:{damage.line} seq {damage.line}: ")


@pytest.mark.parametrize("damage", DAMAGE)
def test_records_yield_good_records_then_raise_at_the_bad_one(
    path: Path, damage: Damage
) -> None:
    rewrite(path, damage.mutate(fill(path, 5)))
    seen: list[int] = []
    with Ledger(path) as ledger, pytest.raises(HRMError) as info:
        for record in ledger.records():
            seen.append(record.seq)
    assert info.value.code is ErrorCode.LEDGER_CORRUPT
    assert info.value.context["line"] == damage.line
    assert seen == list(range(1, damage.line))


def _held_sync(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> tuple[threading.Thread, threading.Event]:
    """A group commit of `ledger` on another thread, held inside its sync until released."""
    syncing, release = threading.Event(), threading.Event()
    real_sync = ledger_module._sync_data

    def slow_sync(fd: int) -> None:
        syncing.set()
        assert release.wait(10)
        real_sync(fd)  # its own descriptor: still open whatever happened meanwhile

    monkeypatch.setattr(ledger_module, "_sync_data", slow_sync)
    committer = threading.Thread(target=ledger.commit)
    committer.start()
    assert syncing.wait(10)
    monkeypatch.setattr(ledger_module, "_sync_data", real_sync)  # for anything else
    return committer, release


def test_appends_go_on_while_another_thread_syncs_a_group_commit(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sync takes a disk's time; a turn appending meanwhile must not wait for it."""
    ledger = Ledger(path, clock=fixed_clock)
    ledger.append("turn", {"i": 1})
    committer, release = _held_sync(ledger, monkeypatch)
    ledger.append("turn", {"i": 2})  # does not block on the sync in progress
    assert verify_ledger(path).anchor_seq is None
    release.set()
    committer.join(10)
    assert verify_ledger(path).anchor_seq == 1  # what was written before the sync began
    ledger.commit()  # the append made meanwhile is still to be committed
    assert verify_ledger(path).anchor_seq == 2
    ledger.close()


def test_a_commit_or_close_returns_only_once_a_sync_in_progress_is_done(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = Ledger(path, clock=fixed_clock)
    ledger.append("turn", {"i": 1})
    committer, release = _held_sync(ledger, monkeypatch)
    waiting, closed = threading.Event(), threading.Event()

    class _Watched:  # the sync lock, saying when another commit starts waiting for it
        def __init__(self, lock: Any) -> None:
            self.lock = lock

        def __enter__(self) -> None:
            waiting.set()
            self.lock.acquire()

        def __exit__(self, *_: object) -> None:
            self.lock.release()

    ledger._sync_lock = _Watched(ledger._sync_lock)  # type: ignore[assignment]
    closer = threading.Thread(target=lambda: (ledger.close(), closed.set()))
    closer.start()
    assert waiting.wait(10)
    assert not closed.is_set()  # the close waits for the sync: durable when it returns
    release.set()
    committer.join(10)
    closer.join(10)
    assert closed.is_set() and not committer.is_alive()
    report = verify_ledger(path)
    assert report.ok and report.records == 1 and report.anchor_seq == 1


def test_cutting_records_from_the_end_is_caught_by_the_anchor(path: Path) -> None:
    rewrite(path, fill(path, 5)[:3])
    report = verify_ledger(path)
    assert not report.ok and report.first_error is not None
    assert "cut from the end" in report.first_error.reason
    assert report.first_error.line == 4
    with Ledger(path) as ledger:
        for _attempt in range(2):  # the refusal holds until a person acts
            with pytest.raises(HRMError) as info:
                ledger.append("turn", {})
            assert info.value.code is ErrorCode.LEDGER_CORRUPT
            assert "anchor" in info.value.message
    assert len(path.read_text().splitlines()) == 3


def test_rewriting_the_anchored_record_is_caught(path: Path) -> None:
    lines = fill(path, 3)
    lines[2] = forge(3, json.loads(lines[1])["hash"])
    rewrite(path, lines)
    report = verify_ledger(path)
    assert not report.ok and report.first_error is not None
    assert "anchor" in report.first_error.reason


def test_a_deleted_ledger_with_an_anchor_is_reported(path: Path) -> None:
    fill(path, 2)
    path.unlink()
    report = verify_ledger(path)
    assert not report.ok and report.first_error is not None
    assert "cut from the end" in report.first_error.reason


def test_end_truncation_without_the_anchor_is_not_detectable(path: Path) -> None:
    """The documented limit of a hash chain: a shorter valid chain is still a valid chain."""
    rewrite(path, fill(path, 5)[:3])
    path.with_name(path.name + ".anchor").unlink()
    report = verify_ledger(path)
    assert report.ok and report.records == 3


def test_records_after_the_last_commit_can_be_lost_undetected(path: Path) -> None:
    lines = fill(path, 2)
    with Ledger(path) as ledger:
        ledger.append("turn", {})
        ledger.append("turn", {})
        rewrite(path, [*lines, path.read_text().splitlines(keepends=True)[2]])
        ledger._dirty = False  # simulate a crash before the commit
    assert verify_ledger(path).ok


def test_appending_after_a_damaged_last_record_is_refused(path: Path) -> None:
    lines = fill(path, 3, commit=False)
    lines[2] = lines[2].replace("message 3", "message X")
    rewrite(path, lines)
    with Ledger(path) as ledger, pytest.raises(HRMError) as info:
        ledger.append("turn", {})
    assert info.value.code is ErrorCode.LEDGER_CORRUPT
    assert info.value.context["line"] == 3


def test_a_ledger_that_shrinks_under_an_open_handle_refuses_appends(path: Path) -> None:
    with Ledger(path) as ledger:
        for i in range(3):
            ledger.append("turn", {"i": i})
        lines = path.read_text().splitlines(keepends=True)
        rewrite(path, lines[:1])
        with pytest.raises(HRMError, match="shrank"):
            ledger.append("turn", {})


# ── torn tails ───────────────────────────────────────────────────────────────


def test_a_torn_tail_is_cut_on_open_and_reported(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lines = fill(path, 3)
    with path.open("a") as fh:
        fh.write('{"data":{"i":4},"hash":"ab')
    with caplog.at_level(logging.WARNING, logger="hrm.storage.ledger"):
        ledger = Ledger(path)
    torn = ledger.repaired
    assert torn is not None
    assert (torn.offset, torn.length, torn.line, torn.cut) == (
        len("".join(lines).encode()), 26, 4, True)
    assert "torn final line cut" in caplog.text
    assert path.read_text() == "".join(lines)
    assert ledger.append("turn", {"i": 4}).seq == 4
    report = ledger.verify()
    ledger.close()
    assert report.ok and report.repaired == torn


def test_a_torn_tail_left_while_open_is_cut_by_the_next_append(path: Path) -> None:
    with Ledger(path) as ledger:
        ledger.append("turn", {})
        with path.open("a") as fh:
            fh.write('{"data":')
        record = ledger.append("turn", {})
        assert record.seq == 2
        assert ledger.repaired is not None and ledger.repaired.length == 8
    assert verify_ledger(path).ok


def test_a_torn_only_line_empties_the_ledger(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.write_text('{"data":{}')
    with Ledger(path) as ledger:
        assert ledger.repaired is not None and ledger.repaired.line == 1
        assert ledger.append("turn", {}).prev == GENESIS_HASH


def test_complete_lines_are_never_cut(path: Path) -> None:
    lines = fill(path, 2, commit=False)
    lines[1] = "garbage but complete\n"
    rewrite(path, lines)
    before = path.read_bytes()
    report = verify_ledger(path)
    assert path.read_bytes() == before
    assert report.repaired is None and not report.ok


def test_records_with_other_iso_timestamps_still_verify(path: Path) -> None:
    """A ts without microseconds (another writer's) takes the slow path and still verifies."""
    fields = {"data": {}, "kind": "turn", "prev": GENESIS_HASH, "seq": 1,
              "ts": "2026-01-02T03:04:05+00:00"}
    path.parent.mkdir(parents=True)
    path.write_text(canonical_json({**fields, "hash": record_hash(**fields)}) + "\n")
    with Ledger(path) as ledger:
        second = ledger.append("turn", {})
        report = ledger.verify()
        first = ledger.read_at(0)
    assert report.ok and report.records == 2
    assert second.prev == first.hash
    assert first.timestamp == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_the_anchor_never_moves_backwards(path: Path) -> None:
    with Ledger(path) as slow, Ledger(path) as fast:
        for _ in range(3):
            slow.append("turn", {})
        fast.append_many([("turn", {}), ("turn", {})])
        fast.commit()
        slow.commit()  # knows only seq 3; the anchor already vouches for 5
        assert verify_ledger(path).anchor_seq == 5


def test_fsync_durability_anchors_every_append(path: Path) -> None:
    with Ledger(path, durability="fsync") as ledger:
        ledger.append("turn", {})
        assert verify_ledger(path).anchor_seq == 1
        ledger.append("turn", {})
        assert verify_ledger(path).anchor_seq == 2


# ── reading after one's own append (issue 35: one lock a ledger a turn) ──────


def _count_locks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    taken: list[int] = []
    real = ledger_module.held

    def counting(fd: int, **kwargs: Any) -> Any:
        taken.append(fd)
        return real(fd, **kwargs)

    monkeypatch.setattr(ledger_module, "held", counting)
    return taken


def test_reading_after_ones_own_append_takes_no_lock(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Ledger(path, clock=fixed_clock) as ledger:
        first = ledger.append("a", {"n": 1})
        ledger.commit()
        second = ledger.append("b", {"n": 2})
        taken = _count_locks(monkeypatch)
        assert [r.seq for r in ledger.records_after(first)] == [second.seq]
        assert [r.kind for r in ledger.tail(2)] == ["a", "b"]
        assert taken == []


def test_another_writers_append_and_torn_tail_are_read_under_the_lock(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Ledger(path, clock=fixed_clock) as mine, Ledger(path, clock=fixed_clock) as theirs:
        first = mine.append("a", {"n": 1})
        theirs.append("b", {"n": 2})
        with path.open("ab") as fh:  # an append killed half-way
            fh.write(b'{"data":{"n":3')
        taken = _count_locks(monkeypatch)
        assert [r.kind for r in mine.records_after(first)] == ["b"]
        assert taken  # the file changed under this handle: the locked path cut the torn tail
        assert path.read_bytes().endswith(b"\n")
        assert mine.verify().ok and mine.verify().records == 2
