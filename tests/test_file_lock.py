"""The one file-lock helper: exclusive and shared flock, bounded waits, fork, refusals."""

from __future__ import annotations

import errno
import multiprocessing
import multiprocessing.queues
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hrm import _file_lock
from hrm._file_lock import FileLock, held, lock, try_lock, unlock
from hrm.errors import ErrorCode, HRMError

CTX = multiprocessing.get_context("fork")


@pytest.fixture
def two_fds(tmp_path: Path) -> Iterator[tuple[int, int]]:
    """Two open file descriptions of one file: they exclude each other like two processes."""
    path = tmp_path / "f"
    path.write_bytes(b"")
    first, second = os.open(path, os.O_RDWR), os.open(path, os.O_RDWR)
    yield first, second
    os.close(first)
    os.close(second)


def test_exclusive_excludes_every_other_holder_until_released(two_fds: tuple[int, int]) -> None:
    first, second = two_fds
    lock(first)
    assert not try_lock(second)
    assert not try_lock(second, shared=True)
    unlock(first)
    assert try_lock(second)


def test_shared_holders_coexist_and_keep_an_exclusive_one_out(two_fds: tuple[int, int]) -> None:
    first, second = two_fds
    with held(first, shared=True):
        assert try_lock(second, shared=True)
        unlock(second)
        assert not try_lock(second)
    assert try_lock(second)


def test_held_releases_when_the_block_raises(two_fds: tuple[int, int]) -> None:
    first, second = two_fds
    with pytest.raises(RuntimeError), held(first):
        raise RuntimeError("inside")
    assert try_lock(second)


def test_a_signal_interrupting_the_wait_retries(
    two_fds: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = _file_lock._fcntl.flock  # type: ignore[union-attr]
    calls: list[int] = []

    def interrupted_once(fd: int, mode: int) -> None:
        calls.append(mode)
        if len(calls) == 1:
            raise InterruptedError(errno.EINTR, "interrupted")
        real(fd, mode)

    monkeypatch.setattr(_file_lock._fcntl, "flock", interrupted_once)
    lock(two_fds[0])
    assert len(calls) == 2


@pytest.mark.parametrize("action", [lock, try_lock], ids=["blocking", "non-blocking"])
def test_a_filesystem_without_locks_is_a_clear_error(
    two_fds: tuple[int, int], monkeypatch: pytest.MonkeyPatch, action: object
) -> None:
    def refuse(fd: int, mode: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(_file_lock._fcntl, "flock", refuse)
    with pytest.raises(HRMError) as info:
        action(two_fds[0], path="/mnt/nfs/ledger.jsonl")  # type: ignore[operator]
    assert info.value.code is ErrorCode.DB_LOCKED and not info.value.recoverable
    assert "/mnt/nfs/ledger.jsonl" in info.value.message and "flock" in info.value.message


def test_a_bounded_wait_that_runs_out_names_the_holder(tmp_path: Path) -> None:
    path = tmp_path / "locks" / "turn.lock"
    holder = FileLock(path)
    waiter = FileLock(
        path, wait_s=0.02, busy_message="busy: {holder}, {wait_s:g} s, {path}", context={"s": 1}
    )
    with holder, pytest.raises(HRMError) as info:
        waiter.acquire()
    assert info.value.code is ErrorCode.DB_LOCKED and info.value.recoverable
    assert info.value.message == f"busy: pid {os.getpid()}, 0.02 s, {path}"
    assert info.value.context == {"path": str(path), "s": 1}
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    waiter.acquire()  # released by the `with`
    waiter.close()
    holder.close()


def test_a_waiter_gets_the_lock_once_the_holder_lets_go(tmp_path: Path) -> None:
    holder, waiter = FileLock(tmp_path / "l"), FileLock(tmp_path / "l", wait_s=60)
    holder.acquire()
    outcome: list[object] = []
    thread = threading.Thread(target=lambda: outcome.append(waiter.acquire() or "held"))
    thread.start()
    holder.release()
    thread.join(timeout=60)
    assert outcome == ["held"]
    assert FileLock(tmp_path / "l").holder() == f"pid {os.getpid()}"
    waiter.close()
    holder.close()


def test_shared_file_locks_coexist(tmp_path: Path) -> None:
    readers = [FileLock(tmp_path / "l", shared=True, wait_s=0) for _ in range(2)]
    for reader in readers:
        reader.acquire()
    with pytest.raises(HRMError):
        FileLock(tmp_path / "l", wait_s=0).acquire()
    for reader in readers:
        reader.close()


def _try_inherited(lock_: FileLock, out: multiprocessing.queues.SimpleQueue[str]) -> None:
    try:
        lock_.acquire()
    except HRMError as exc:
        out.put(exc.code.value)
    else:
        out.put("acquired")


def test_a_forked_child_opens_its_own_descriptor_instead_of_sharing_the_lock(
    tmp_path: Path,
) -> None:
    parent = FileLock(tmp_path / "l", wait_s=0)
    parent.acquire()
    out: multiprocessing.queues.SimpleQueue[str] = CTX.SimpleQueue()
    child = CTX.Process(target=_try_inherited, args=(parent, out))
    child.start()
    child.join(timeout=60)
    assert out.get() == "db_locked"  # an inherited descriptor would have "acquired"
    parent.release()
    parent.acquire()
    parent.close()
    parent.close()  # idempotent
    parent.release()  # nothing held: a no-op


def test_an_unwritable_directory_is_permission_denied(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(HRMError) as info:
        FileLock(blocker / "turn.lock").acquire()
    assert info.value.code is ErrorCode.PERMISSION_DENIED
