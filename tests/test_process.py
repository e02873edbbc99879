"""Process-local ids and pid: unique, in the documented shapes, and right after fork."""

from __future__ import annotations

import os
import re
import threading

import pytest

from hrm import _process
from hrm._process import new_id, pid, random_hex


def test_ids_have_the_documented_shape_and_do_not_repeat() -> None:
    ids = {new_id("ep") for _ in range(20_000)}
    assert len(ids) == 20_000
    assert all(re.fullmatch(r"ep_[0-9a-f]{16}", i) for i in ids)
    assert re.fullmatch(r"prob_[0-9a-f]{12}", new_id("prob", 12))
    assert re.fullmatch(r"[0-9a-f]{8}", random_hex(8))
    assert pid() == os.getpid()


def test_a_forked_child_has_its_own_pid_and_its_own_ids() -> None:
    new_id("warm")  # the parent's generator exists before the fork
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        try:
            os.write(write, f"{pid()} {os.getpid()} {new_id('x')} {new_id('x')}".encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    with os.fdopen(read) as pipe:
        child_pid, real_pid, *child_ids = pipe.read().split()
    assert child_pid == real_pid == str(child) and pid() == os.getpid() != child
    parent_ids = [new_id("x"), new_id("x")]
    assert not set(child_ids) & set(parent_ids)  # reseeded: not the parent's next draws
    assert _process._bits is not None


def test_long_ids_rise_with_time_and_never_repeat_across_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Episode and outcome ids are keys of SQLite indexes: ids made later sort later, so an
    insert lands beside the last one instead of on a random page (D333)."""
    now = [1_800_000_000.0]
    monkeypatch.setattr(_process.time, "time", lambda: now[0])
    earlier = new_id("ep")
    now[0] += 3600
    later = new_id("ep")
    assert earlier < later and re.fullmatch(r"ep_[0-9a-f]{16}", later)
    made: list[str] = []
    workers = [threading.Thread(target=lambda: made.extend(new_id("ep") for _ in range(5000)))
               for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(set(made)) == len(made) == 20_000  # one step of 64 s: the sequence tells apart
    assert {i[:9] for i in made} == {later[:9]}


def test_time_ordered_uuids_are_version_7_and_sort_by_their_millisecond(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import uuid

    made = []
    for ms in (1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000, 1_800_000_000_000):
        monkeypatch.setattr(_process.time, "time_ns", lambda ms=ms: ms * 1_000_000 + 999_999)
        made.append(_process.time_ordered_uuid())
    parsed = [uuid.UUID(text) for text in made]
    assert [str(u) for u in parsed] == made
    assert all(u.version == 7 and u.variant == uuid.RFC_4122 for u in parsed)
    assert [u.int >> 80 for u in parsed] == [
        1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000, 1_800_000_000_000]
    assert made[:3] == sorted(made[:3])
    assert made[2] != made[3]  # the same millisecond: told apart by 74 random bits
