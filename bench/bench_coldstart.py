"""Cold start of `hrm turn` one-shot and of the prompt hook with 10k learnings (issue 35, item 5).

Each command runs as a whole process against ``python -c pass``, paired: the two alternate
(their order swapped every other pair), so each ratio compares two runs made in the same second
of a drifting machine, and the figure is the median of the pairs' ratios — of wall time and of
CPU time (the child's user + system time, from ``wait4``). Callgrind counts the instructions of
one whole process of each, which machine load does not move (full runs only).

* ``hrm turn "<message>" --provider offline`` in a home that already has a session (the
  one-shot continues it, as a second `hrm turn` within half an hour does), twice: as it runs
  by default, by a child of the resident process the first turn started (D403; its CPU is the
  client's plus the child's), and in-process (``HRM_RESIDENT=0``), which callgrind counts;
* ``hrm hook user-prompt-submit`` with a Claude Code payload, in a home holding 10,000
  learnings and a 40-skill rule file (`bench_hook.make_home`); the home is built once and
  cached under ``bench/out/coldstart/``, keyed by the code that stores learnings.

It also lists where `hrm turn`'s start goes: the modules with the largest own import time
(``python -X importtime``), and the top-level packages by cumulative import time.

Goals (issue 35): `hrm turn` ≤ 15× `python -c pass`; the hook ≤ 4× with 10k learnings.

    .venv/bin/python bench/bench_coldstart.py [--quick]

Writes bench/out/coldstart.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench_hook import make_home, payload
from costs import ROOT, callgrind_total, code_key, median_ratio

OUT = ROOT / "bench" / "out" / "coldstart.json"
LEARNINGS = 10_000
GOAL_TURN = 15.0
GOAL_HOOK = 4.0
PROMPT = "please add a parser cache with retry backoff and a test for the timeout"
LEARNING_CODE = ("continuity/learnings*.py", "continuity/_fts*.py", "storage/**/*.py",
                 "memory/**/*.py", "home.py")
"""What decides the stored learnings' layout: the cached home is rebuilt when these change."""


_RESIDENT_TRACE = re.compile(rb"^hrm resident: child \d+ exit \d+ cpu_s ([0-9.]+)$", re.M)


def run(cmd: list[str], env: dict[str, str], stdin: bytes = b"") -> tuple[float, float]:
    """Wall and CPU seconds of one process; a failure stops the benchmark with its stderr.

    A turn run by the resident process (D403) reports its child's CPU on stderr
    (``HRM_RESIDENT_TRACE``); it is added to the client's, so the CPU is the whole turn's.
    """
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0 or b"Traceback" in err:
        raise SystemExit(f"{cmd[1:3]} failed ({proc.returncode}): {err[-1500:]!r} {out[:200]!r}")
    child = _RESIDENT_TRACE.search(err)
    elsewhere = float(child.group(1)) if child else 0.0
    if env.get("HRM_RESIDENT_TRACE") and child is None:
        raise SystemExit(f"{cmd[1:3]} did not run in the resident process: {err[-1500:]!r}")
    return wall, usage.ru_utime + usage.ru_stime + elsewhere


def paired(cmd: list[str], env: dict[str, str], stdin: bytes, pairs: int,
           base_env: dict[str, str]) -> dict[str, Any]:
    """`cmd` against ``python -c pass``, alternately, `pairs` times."""
    baseline = [sys.executable, "-c", "pass"]
    walls: dict[str, list[float]] = {"cmd": [], "base": []}
    cpus: dict[str, list[float]] = {"cmd": [], "base": []}
    for i in range(pairs):
        order = (("cmd", cmd, env, stdin), ("base", baseline, base_env, b""))
        for name, argv, environment, data in order if i % 2 == 0 else order[::-1]:
            wall, cpu = run(argv, environment, data)
            walls[name].append(wall)
            cpus[name].append(cpu)
    return {
        "pairs": pairs,
        "median_ms": 1000 * statistics.median(walls["cmd"]),
        "baseline_median_ms": 1000 * statistics.median(walls["base"]),
        "cpu_median_ms": 1000 * statistics.median(cpus["cmd"]),
        "baseline_cpu_median_ms": 1000 * statistics.median(cpus["base"]),
        "ratio": median_ratio(walls["cmd"], walls["base"]),
        "cpu_ratio": median_ratio(cpus["cmd"], cpus["base"]),
    }


def learnings_home() -> Path:
    """A home with `LEARNINGS` learnings and a rule file, built once per key of the code."""
    key = code_key(LEARNING_CODE, extra=[ROOT / "bench" / "bench_hook.py"], salt=str(LEARNINGS))
    base = ROOT / "bench" / "out" / "coldstart"
    home = base / key / "learnings"
    if home.is_dir():
        return home
    shutil.rmtree(base, ignore_errors=True)
    partial = base / key / "building"
    shutil.rmtree(partial, ignore_errors=True)
    print(f"building a home with {LEARNINGS} learnings (once per key {key})", flush=True)
    make_home(partial, learnings=LEARNINGS)
    partial.rename(home)
    return home


def _importtime(hrm_bin: str, env: dict[str, str]) -> tuple[dict[str, int], dict[str, int]]:
    """One `hrm turn` under ``-X importtime``: each module's own microseconds, and each
    top-level package's cumulative microseconds."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", hrm_bin, "turn", "where does the time go",
         "--provider", "offline"], env=env, capture_output=True, text=True, check=True)
    own: dict[str, int] = {}
    packages: dict[str, int] = defaultdict(int)
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative_us, raw = line[12:].split("|")
        name = raw.strip()
        own[name] = int(self_us)
        if len(raw) - len(raw.lstrip()) <= 1:  # imported at top level: its cumulative counts
            packages[name.split(".")[0]] += int(cumulative_us)
    return own, packages


def import_costs(hrm_bin: str, env: dict[str, str], runs: int, top: int = 12) -> dict[str, Any]:
    """Where `hrm turn`'s imports spend their time: the median over `runs` runs of each
    module's own time and of each top-level package's cumulative time (microseconds)."""
    measured = [_importtime(hrm_bin, env) for _ in range(runs)]
    own = {name: statistics.median(run[0].get(name, 0) for run in measured)
           for name in measured[0][0]}
    packages = {name: statistics.median(run[1].get(name, 0) for run in measured)
                for name in measured[0][1]}
    return {
        "runs": runs,
        "own_us": [{"module": name, "us": us}
                   for name, us in sorted(own.items(), key=lambda kv: -kv[1])[:top]],
        "packages_cumulative_us": dict(sorted(packages.items(), key=lambda kv: -kv[1])[:top]),
        "total_us": sum(own.values()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer pairs, no callgrind")
    parser.add_argument("--pairs", type=int, help="pairs per command (default 30; --quick 8)")
    args = parser.parse_args()
    pairs = args.pairs or (8 if args.quick else 30)
    hrm_bin = str(Path(sys.executable).with_name("hrm"))
    if not Path(hrm_bin).exists():
        raise SystemExit(f"no hrm console script beside {sys.executable}; install the project")
    with tempfile.TemporaryDirectory(prefix="bench-coldstart-") as tmp:
        base_env = {"PATH": "/usr/bin:/bin", "HOME": tmp}
        runtime = Path(tmp) / "run"  # this run's own resident process, not the user's
        runtime.mkdir(mode=0o700)
        first_env = {**base_env, "HRM_HOME": str(Path(tmp) / "turns"),
                     "XDG_RUNTIME_DIR": str(runtime)}
        one_shot_env = {**first_env, "HRM_RESIDENT": "0"}
        turn_env = {**first_env, "HRM_RESIDENT_TRACE": "1"}
        turn_cmd = [hrm_bin, "turn", "How do I rename a git branch?", "--provider", "offline"]
        run(turn_cmd, one_shot_env)  # the home and its session exist, bytecode is compiled
        run(turn_cmd, first_env)  # ... and this one starts the resident process
        _wait_for_resident(hrm_bin, turn_env)
        hook_home = learnings_home()
        hook_env = {**base_env, "HRM_HOME": str(hook_home)}
        hook_cmd = [hrm_bin, "hook", "user-prompt-submit"]
        hook_payload = payload(PROMPT)
        run(hook_cmd, hook_env, hook_payload)
        try:
            result: dict[str, Any] = {
                "turn": paired(turn_cmd, turn_env, b"", pairs, base_env),
                "turn_in_process": paired(turn_cmd, one_shot_env, b"", pairs, base_env),
                "hook_10k_learnings": paired(hook_cmd, hook_env, hook_payload, pairs, base_env),
                "imports": import_costs(hrm_bin, one_shot_env, 3 if args.quick else 7),
            }
        finally:
            subprocess.run([hrm_bin, "resident", "stop"], env=turn_env, check=False,
                           capture_output=True)
        if not args.quick:  # callgrind follows one process: the in-process turn is counted
            base = callgrind_total([sys.executable, "-c", "pass"], env=base_env)
            for name, cmd, env, data in (("turn_in_process", turn_cmd, one_shot_env, b""),
                                         ("hook_10k_learnings", hook_cmd, hook_env,
                                          hook_payload)):
                count = callgrind_total(cmd, env=env, stdin=data)
                result[name]["instructions"] = count
                result[name]["instructions_ratio"] = None if not (count and base) \
                    else count / base
            result["baseline_instructions"] = base
    result["goals"] = {"turn": GOAL_TURN, "hook": GOAL_HOOK,
                       "turn_met": result["turn"]["ratio"] <= GOAL_TURN,
                       "hook_met": result["hook_10k_learnings"]["ratio"] <= GOAL_HOOK}
    result["quick"] = args.quick
    report(result)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


def _wait_for_resident(hrm_bin: str, env: dict[str, str]) -> None:
    """Wait until the resident process the last turn started answers (it imports first)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = subprocess.run([hrm_bin, "resident", "status", "--json"], env=env,
                                capture_output=True, text=True, check=False)
        if status.returncode == 0 and json.loads(status.stdout).get("running"):
            return
        time.sleep(0.2)
    raise SystemExit("the resident process did not start within 60 s")


def report(result: dict[str, Any]) -> None:
    for name, goal in (("turn", GOAL_TURN), ("turn_in_process", GOAL_TURN),
                       ("hook_10k_learnings", GOAL_HOOK)):
        row = result[name]
        instructions = row.get("instructions_ratio")
        extra = "" if instructions is None else f", instructions {instructions:.1f}×"
        print(f"{name:<20} {row['median_ms']:7.0f} ms = {row['ratio']:5.1f}× python -c pass "
              f"({row['baseline_median_ms']:.0f} ms); CPU {row['cpu_ratio']:.1f}×{extra}; "
              f"median of {row['pairs']} pairs; goal ≤ {goal:.0f}×: "
              f"{'met' if row['ratio'] <= goal else 'NOT met'}")
    imports = result["imports"]
    print(f"imports of `hrm turn`: {imports['total_us'] / 1000:.0f} ms in all (median of "
          f"{imports['runs']} runs); largest own:")
    for row in imports["own_us"][:8]:
        print(f"  {row['us'] / 1000:6.1f} ms  {row['module']}")
    print("  by top-level package (cumulative): " + ", ".join(
        f"{name} {us / 1000:.0f} ms" for name, us in imports["packages_cumulative_us"].items()))


if __name__ == "__main__":
    raise SystemExit(main())
