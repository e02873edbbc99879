"""Group commit: every stack of a process is committed by one thread, after the interval."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from hrm.stacks._group_commit import GroupCommitter


class _Commits:
    def __init__(self) -> None:
        self.threads: list[str] = []
        self.done = threading.Event()

    def __call__(self) -> None:
        self.threads.append(threading.current_thread().name)
        self.done.set()


def test_two_stacks_are_committed_by_one_thread_off_the_callers() -> None:
    first, second = _Commits(), _Commits()
    a = GroupCommitter([first], interval_ms=5)
    b = GroupCommitter([second], interval_ms=5)
    a.request()
    b.request()
    assert first.done.wait(10) and second.done.wait(10)
    assert first.threads[0] == second.threads[0] == "hrm-group-commit"
    a.close()
    b.close()


def test_a_zero_interval_commits_in_the_callers_thread() -> None:
    commits = _Commits()
    committer = GroupCommitter([commits], interval_ms=0)
    committer.request()
    assert commits.threads == [threading.current_thread().name]


def test_close_commits_once_more_and_nothing_after() -> None:
    commits = _Commits()
    committer = GroupCommitter([commits], interval_ms=10_000)  # the thread would wait long
    committer.request()
    committer.close()  # commits now, and takes the stack out of the pending round
    committer.flush()
    committer.request()
    assert commits.threads == [threading.current_thread().name]


def test_one_failing_commit_does_not_stop_the_others() -> None:
    commits = _Commits()

    def broken() -> None:
        raise OSError("disk full")

    committer = GroupCommitter([broken, commits], interval_ms=0)
    committer.request()
    assert commits.threads  # the second ledger was still committed


def test_a_round_that_fails_does_not_stop_the_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    from hrm.storage import manifest

    calls = {"n": 0}
    real = manifest.batched

    def flaky() -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("the manifest's directory vanished")
        return real()

    monkeypatch.setattr(manifest, "batched", flaky)
    first, second = _Commits(), _Commits()
    a = GroupCommitter([first], interval_ms=7)  # an interval of its own: a fresh thread
    a.request()
    deadline = time.monotonic() + 10
    while calls["n"] < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    b = GroupCommitter([second], interval_ms=7)
    b.request()
    assert second.done.wait(10)  # the next round ran on the same thread
    a.close()
    b.close()
