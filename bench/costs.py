"""What a turn costs, counted the same way by the anchor, history and cold-start benchmarks.

Wall time on this kind of machine (a small VM shared with other work) moves by tens of percent
from minute to minute; the counters here do not, or move far less:

* CPU time of the process (`time.process_time`: every thread, user and system);
* instructions, under callgrind, of the part of a worker process between two marks;
* bytes handed to the kernel to write (``wchar`` of ``/proc/self/io``), and bytes that reached
  the storage layer (``write_bytes``), around a block of turns;
* fsync and fdatasync calls: in-process by wrapping ``os.fsync``/``os.fdatasync`` (Python's own
  calls only) and, for SQLite's calls from C, under strace between the same two marks.

A worker process marks the start and the end of what it measures by calling ``getppid``
(`mark`), a system call nothing else in these workers makes: callgrind dumps its counts at each
call (``--dump-before``) and strace logs it, so setup, imports and warm-up turns are left out
without a second run to subtract. (It was ``sched_yield`` until onnxruntime's thread pool,
which the embeddings extra brings into every turn, was found calling that one dozens of times.)
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "ROOT",
    "IOCounters",
    "SyncCounter",
    "bench_config",
    "callgrind_between_marks",
    "callgrind_total",
    "code_key",
    "elapsed_cpu",
    "io_now",
    "mark",
    "median_ratio",
    "syscalls_between_marks",
    "tree_bytes",
]

ROOT = Path(__file__).resolve().parents[1]
_MARK_SYSCALL = "getppid"


def mark() -> None:
    """Tell callgrind and strace that the measured part of this process starts or ends here."""
    os.getppid()


@dataclass(frozen=True, slots=True)
class IOCounters:
    """The process's write counters (``/proc/self/io``; zero where the kernel has none)."""

    wchar: int
    """Bytes handed to write, pwrite and their kin (what the process asked to write)."""
    write_bytes: int
    """Bytes the process caused to be sent to the storage layer (page cache writeback)."""
    syscw: int
    """Write system calls."""

    def __sub__(self, other: IOCounters) -> IOCounters:
        return IOCounters(self.wchar - other.wchar, self.write_bytes - other.write_bytes,
                          self.syscw - other.syscw)


def io_now() -> IOCounters:
    """This process's write counters now."""
    try:
        text = Path("/proc/self/io").read_text()
    except OSError:
        return IOCounters(0, 0, 0)
    values = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
    return IOCounters(int(values.get("wchar", 0)), int(values.get("write_bytes", 0)),
                      int(values.get("syscw", 0)))


class SyncCounter:
    """Counts ``os.fsync`` and ``os.fdatasync`` calls made from Python in this process.

    Install it before the code under test is imported: a module that binds
    ``getattr(os, "fdatasync")`` at import (hrm's ledger does) keeps whatever it found then.
    SQLite's syncs are made from C and are not seen here (`syscalls_between_marks` sees them).
    """

    def __init__(self) -> None:
        self.count = 0
        self._installed = False

    def install(self) -> SyncCounter:
        if self._installed:
            return self
        self._installed = True
        for name in ("fsync", "fdatasync"):
            real = getattr(os, name, None)
            if real is not None:
                setattr(os, name, self._counting(real))
        return self

    def _counting(self, real: Callable[[int], None]) -> Callable[[int], None]:
        def counted(fd: int) -> None:
            self.count += 1
            real(fd)

        return counted


def tree_bytes(root: Path) -> int:
    """The sum of the sizes of the files under `root` (what it holds on disk, apparent size)."""
    total = 0
    for path in root.rglob("*"):
        try:
            if path.is_file() and not path.is_symlink():
                total += path.stat().st_size
        except OSError:  # a temporary file that went away while walking
            continue
    return total


def _between_marks(dumps: Sequence[Path]) -> Path:
    """The dump of the part between the first and the second mark, or a clear failure."""
    numbered = sorted((p for p in dumps if re.search(r"\.\d+$", p.name)),
                      key=lambda p: int(p.name.rsplit(".", 1)[1]))
    if len(numbered) != 2:
        raise RuntimeError(
            f"callgrind wrote {len(numbered)} dumps at marks, not 2: something else in the "
            f"worker calls {_MARK_SYSCALL}, so its counts cannot be split"
        )
    return numbered[1]


def _totals(dump: Path) -> int:
    for line in dump.read_text(errors="replace").splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"no totals in callgrind dump {dump}")


def callgrind_between_marks(cmd: Sequence[str], *, env: dict[str, str] | None = None,
                            timeout: float = 3600) -> int | None:
    """Instructions the worker `cmd` executed between its two `mark` calls (``None``: no valgrind).

    The whole process runs under callgrind (50–100 times slower), so keep its work short.
    """
    if shutil.which("valgrind") is None:
        return None
    with tempfile.TemporaryDirectory(prefix="bench-callgrind-") as tmp:
        out = Path(tmp) / "callgrind.out"
        proc = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             f"--dump-before={_MARK_SYSCALL}", "--collect-systime=no", *cmd],
            env=env, capture_output=True, text=True, timeout=timeout, check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"callgrind worker failed ({proc.returncode}): "
                               f"{proc.stderr[-2000:]}")
        return _totals(_between_marks(list(Path(tmp).glob("callgrind.out*"))))


def callgrind_total(cmd: Sequence[str], *, env: dict[str, str] | None = None,
                    stdin: bytes = b"", timeout: float = 3600) -> int | None:
    """Instructions of the whole process `cmd`, start to exit (``None``: no valgrind)."""
    if shutil.which("valgrind") is None:
        return None
    with tempfile.TemporaryDirectory(prefix="bench-callgrind-") as tmp:
        out = Path(tmp) / "callgrind.out"
        proc = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             "--collect-systime=no", *cmd],
            env=env, input=stdin, capture_output=True, timeout=timeout, check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"callgrind of {cmd[:3]} failed ({proc.returncode}): "
                               f"{proc.stderr[-2000:]!r}")
        return _totals(out)


_SYSCALL_LINE = re.compile(r"^(?:\[pid\s+\d+\]\s+|\d+\s+)?(\w+)\(")


def syscalls_between_marks(cmd: Sequence[str], names: Iterable[str] = ("fsync", "fdatasync"),
                           *, env: dict[str, str] | None = None,
                           timeout: float = 3600) -> dict[str, int] | None:
    """How often the worker `cmd` made each of the system calls `names` between its two marks,
    in every thread (``None``: no strace)."""
    if shutil.which("strace") is None:
        return None
    wanted = tuple(names)
    with tempfile.TemporaryDirectory(prefix="bench-strace-") as tmp:
        log = Path(tmp) / "strace.log"
        traced = ",".join((*wanted, _MARK_SYSCALL))
        proc = subprocess.run(
            ["strace", "-f", "-qq", "-e", f"trace={traced}", "-o", str(log), *cmd],
            env=env, capture_output=True, text=True, timeout=timeout, check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"strace worker failed ({proc.returncode}): {proc.stderr[-2000:]}")
        counts = dict.fromkeys(wanted, 0)
        marks = 0
        for line in log.read_text(errors="replace").splitlines():
            found = _SYSCALL_LINE.match(line)
            if found is None or "resumed>" in line:
                continue
            name = found.group(1)
            if name == _MARK_SYSCALL:
                marks += 1
            elif marks == 1 and name in counts:
                counts[name] += 1
        if marks < 2:
            raise RuntimeError(f"the worker marked {marks} times, not 2: {cmd}")
        return counts


def code_key(patterns: Iterable[str], *, extra: Iterable[Path] = (), salt: str = "") -> str:
    """A short hash of the files matching `patterns` under ``src/hrm`` (and `extra` files).

    Caches of built homes are keyed by it, so changed code that writes records builds them
    anew instead of measuring a home the code would no longer write.
    """
    digest = hashlib.sha256(salt.encode())
    src = ROOT / "src" / "hrm"
    files = sorted({p for pattern in patterns for p in src.glob(pattern) if p.is_file()})
    for path in [*files, *extra]:
        digest.update(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name)
                      .encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def bench_config(home: Path) -> Any:
    """The configuration a benchmark opens a stack with: the home's, no environment, no
    project layer, and a token ceiling no benchmark reaches.

    A session of thousands of offline turns spends ~600 tokens a turn; with the default ceiling
    the budget would refuse turns part-way and the figures would be those of refusals.
    """
    from dataclasses import replace

    from hrm.config import load_config
    from hrm.home import HRMHome

    config = load_config(HRMHome.resolve(home), home, environ={}).config
    return replace(config, stack_token_budget=10**12)


def median_ratio(numerators: Sequence[float], denominators: Sequence[float]) -> float:
    """The median of the pairwise ratios (each pair measured in the same minute)."""
    ratios = sorted(n / d for n, d in zip(numerators, denominators, strict=True) if d > 0)
    if not ratios:
        return float("nan")
    middle = len(ratios) // 2
    return ratios[middle] if len(ratios) % 2 else (ratios[middle - 1] + ratios[middle]) / 2


def elapsed_cpu(run: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of `run()` in this process."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu
