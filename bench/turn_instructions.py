"""Instructions per turn under callgrind: the cost figure that does not drift with the machine.

Runs the benchmark conversation twice under ``valgrind --tool=callgrind`` — the warm-up and
`--after` turns, then the same plus `--turns` more — and prints the difference divided by
`--turns`: what one turn costs in instructions, start-up and warm-up cancelled out. The
method of the tenth session ("128 turns after 200"). `--src` points at another checkout's
``src`` to count an older code the same way (old and new on one machine, minutes apart).

Valgrind runs a program fifty times slower, so the group committer's thread, which wakes
20 ms after a turn, runs after every turn there instead of every fifteen or so: its work
weighs fifteen times what it does outside (and the turn's thread pays for handing the
interpreter lock over that often). ``--threads`` prints the turn's own thread and the
others apart; ``--commit-ms 600000`` keeps the committer asleep until the end, so the count
is the turn's own work.

    python bench/turn_instructions.py [--after 200] [--turns 128] [--src PATH] [--threads]
                                      [--commit-ms MS]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_DRIVER = """
import sys
from dataclasses import replace
sys.path.insert(0, {bench!r})
from conversation import WARM_UP, conversation
from hrm import HRM
from hrm.config import load_config
from hrm.home import HRMHome
home = {home!r}
config = replace(load_config(HRMHome.resolve(home)).config, stack_token_budget=10**9,
                 ledger_group_commit_ms={commit_ms})
with HRM.open(home, "ADMIN", "offline", config=config) as hrm:
    for text in [*WARM_UP * 3, *conversation(7, {n})]:
        hrm.turn(text)
"""


def count(n: int, src: Path | None, commit_ms: int = 20) -> tuple[int, int]:
    """Instructions a process running `n` conversation turns (after the warm-up) executes:
    (its main thread, every other thread)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        env = dict(os.environ, HRM_HOME=str(Path(tmp) / "home"))
        if src is not None:
            env["PYTHONPATH"] = str(src)
        code = _DRIVER.format(
            bench=str(ROOT / "bench"), home=str(Path(tmp) / "home"), n=n, commit_ms=commit_ms
        )
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--separate-threads=yes",
             f"--callgrind-out-file={out}", sys.executable, "-c", code],
            check=True, env=env, capture_output=True,
        )
        totals = []
        for part in sorted(Path(tmp).glob("callgrind.out*")):
            text = part.read_text(errors="replace")
            found = re.search(r"^summary:\s+(\d+)", text, re.MULTILINE) or re.search(
                r"^totals:\s+(\d+)", text, re.MULTILINE
            )
            thread = re.search(r"^thread:\s*(\d+)", text, re.MULTILINE)
            if found is not None:
                totals.append((int(thread.group(1)) if thread else 1, int(found.group(1))))
        if not totals:
            raise SystemExit("no instruction total in the callgrind output")
        main = sum(v for t, v in totals if t == 1)
        return main, sum(v for t, v in totals if t != 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--after", type=int, default=200)
    parser.add_argument("--turns", type=int, default=128)
    parser.add_argument("--src", type=Path, default=None, help="another checkout's src/")
    parser.add_argument("--threads", action="store_true", help="the turn's thread apart")
    parser.add_argument(
        "--commit-ms", type=int, default=20,
        help="ledger_group_commit_ms; a large value keeps the committer out of the count",
    )
    args = parser.parse_args()
    before = count(args.after, args.src, args.commit_ms)
    after = count(args.after + args.turns, args.src, args.commit_ms)
    main, other = ((a - b) / args.turns for a, b in zip(after, before, strict=True))
    print(f"{(main + other) / 1e6:.2f} M instructions per turn "
          f"({args.turns} turns after {args.after})")
    if args.threads:
        print(f"  the turn's thread {main / 1e6:.2f} M, other threads {other / 1e6:.2f} M")


if __name__ == "__main__":
    main()
