"""How a turn's cost grows with the canon: the conversation's turn p50 with N distinct preferences.

Each size gets a fresh home: the benchmark conversation's warm-up, then N distinct explicit
preferences (each a canon entry of its own), then the conversation (`conversation.py`), timed.
The figures are ratios to the same conversation with only the canon the conversation itself
leaves (a handful of entries), measured in the same run and interleaved size by size in blocks,
so the machine's drift falls on every size alike. Up to the token budget every preference is
shown to the model and listed in the turn's record; past it they are excluded, one record per
source (D35).

Run: ``.venv/bin/python bench/bench_canon.py [--quick]``. Writes bench/out/canon.json.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import string
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_turn import _open_warm, pct
from conversation import conversation

OUT = Path(__file__).resolve().parent / "out" / "canon.json"


def _preferences(n: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)

    def word() -> str:
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 8)))

    return [f"I prefer short answers with examples in the {word()} {word()}" for _ in range(n)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sizes = (0, 30, 100, 300) if args.quick else (0, 30, 100, 300, 1000)
    turns, block = (240, 40) if args.quick else (900, 50)
    texts = conversation(2, turns + 60)
    with tempfile.TemporaryDirectory() as tmp:
        homes: dict[int, Any] = {}
        for n in sizes:
            hrm = _open_warm(Path(tmp) / f"home{n}")
            for statement in _preferences(n):
                hrm.turn(statement)
            for text in texts[:60]:
                hrm.turn(text)
            homes[n] = hrm
        times: dict[int, list[float]] = {n: [] for n in sizes}
        try:
            for start in range(60, 60 + turns, block):
                for n in sizes:
                    for text in texts[start:start + block]:
                        t0 = time.perf_counter()
                        homes[n].turn(text)
                        times[n].append((time.perf_counter() - t0) * 1000)
            canon = {n: len(homes[n].stack.canon()) for n in sizes}
        finally:
            for hrm in homes.values():
                hrm.close()
    base = pct(times[sizes[0]], 0.5)
    result: dict[str, Any] = {"turns_per_size": turns, "sizes": []}
    print(f"conversation turn p50 by canon size ({turns} turns each, interleaved in blocks of "
          f"{block}):")
    for n in sizes:
        p50 = pct(times[n], 0.5)
        per_entry = (p50 - base) / (canon[n] - canon[sizes[0]]) * 1000 if n else 0.0
        result["sizes"].append({"canon_entries": canon[n], "turn_p50_ms": round(p50, 3),
                                "ratio": round(p50 / base, 2),
                                "us_per_extra_entry": round(per_entry, 1)})
        print(f"  canon {canon[n]:5d}: p50 {p50:6.2f} ms = {p50 / base:4.2f}× the smallest"
              + (f"  ({per_entry:.1f} µs per extra entry)" if n else ""))
    result["mean_ms"] = {str(n): round(statistics.mean(times[n]), 3) for n in sizes}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
