"""Acceptance on conversations written from the README alone (issue 29, "Measured, not asserted").

The 150 conversations in tests/acceptance/data (written before any code was read; their README
says how) are said, each to a fresh home on the offline model, and the final message of each is
checked on the decision record. Reported for both halves of the fixed split (``tune``: looked
at case by case and tuned on; ``blind``: totals only), with the rules alone and with the rules
and the sentence model (the `embeddings` extra; skipped, and said, when it is not installed):
accuracy overall, by distance (close to a README example / a paraphrase one step out) and by
intent, and the false triggers among the messages that must trigger nothing.

Goals (issue 29): overall >= 0.92, paraphrases >= 0.85, false triggers <= 1 in 20.

Writes bench/out/acceptance.json. ``--half tune|blind`` limits the run to one half;
``--tiers rules|rules+sentence`` to one configuration; ``--misses`` prints the failed checks of
the tune half's cases (never the blind half's: it is measured, not looked at).
``--quick`` runs the tune half with rules and the sentence model only.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "acceptance"))

from conversations import Case, Outcome, Tiers, load_cases, run_case, tally  # noqa: E402

OUT = ROOT / "bench" / "out"
HALVES = ("tune", "blind")
GOALS = {"overall": 0.92, "distance:paraphrase": 0.85}
FALSE_TRIGGER_GOAL = 1 / 20


def measure(cases: list[Case], tiers: Tiers) -> list[Outcome]:
    """Each case on a fresh home of its own, removed afterwards."""
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="hrm-acc-index-") as derived:
        for case in cases:
            with tempfile.TemporaryDirectory(prefix="hrm-acc-") as tmp:
                outcomes.append(run_case(case, Path(tmp) / "home", tiers, derived=Path(derived)))
    return outcomes


def report(label: str, outcomes: list[Outcome]) -> dict[str, Any]:
    """Print one half's figures under one configuration; returns them."""
    table = tally(outcomes)
    nothing = table.get("intent:nothing", {"n": 0, "passed": 0})
    false = int(nothing["n"] - nothing["passed"])
    print(f"\n{label}: {table['overall']['passed']}/{table['overall']['n']} "
          f"= {table['overall']['accuracy']:.3f}")  # fmt: skip
    for name, row in table.items():
        if name == "overall":
            continue
        goal = GOALS.get(name)
        mark = "" if goal is None else f"  (goal {goal})"
        print(f"  {name:<22} {row['passed']:>3}/{row['n']:<3} {row['accuracy']:.3f}{mark}")
    print(f"  false triggers         {false} of {nothing['n']} (goal <= 1 in 20)")
    return {"table": table, "false_triggers": false, "nothing": nothing["n"]}


def print_misses(outcomes: list[Outcome]) -> None:
    """The failed checks of each missed case (called for the tune half only)."""
    for o in outcomes:
        if not o.passed:
            said = o.case.turns[-1]
            print(f"    MISS {o.case.id}: {said!r}: {'; '.join(o.failures)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", choices=HALVES)
    parser.add_argument("--tiers", choices=("rules", "rules+sentence"))
    parser.add_argument("--misses", action="store_true")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    from hrm.continuity.embeddings import available

    halves = ["tune"] if args.quick else [args.half] if args.half else list(HALVES)
    tiers_list: list[Tiers] = (
        ["rules+sentence"] if args.quick else [args.tiers] if args.tiers
        else ["rules", "rules+sentence"]
    )  # fmt: skip
    if not available() and "rules+sentence" in tiers_list:
        print("the embeddings extra is not installed: rules+sentence is not measured")
        tiers_list = [t for t in tiers_list if t != "rules+sentence"]
    cases = load_cases()
    figures: dict[str, Any] = {}
    for tiers in tiers_list:
        for half in halves:
            chosen = [c for c in cases if c.half == half]
            started = time.perf_counter()
            outcomes = measure(chosen, tiers)
            seconds = time.perf_counter() - started
            figures[f"{tiers}/{half}"] = {
                **report(f"{tiers} · {half} ({seconds:.0f} s)", outcomes),
                "seconds": seconds,
            }
            if args.misses and half == "tune":
                print_misses(outcomes)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "acceptance.json").write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
