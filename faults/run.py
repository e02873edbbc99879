"""Run the repeatable fault trials and print their figures: ``make faults`` (or this file).

    python faults/run.py [--trials N] [--quick] [--seed S] [--only KIND ...]

Kinds: ``sigkill`` (100 kills per write path: CLI turn, API turn, learnings write, ledger
append, canon write), ``damage`` (byte flips, truncations with and without the anchor and
the manifest, deleted ledgers), ``fulldisk`` (a small tmpfs; root only), ``rebuild``
(homes built through real use, rebuilt from their ledgers, compared table by table).
Writes ``faults/out/results.json``; the figures go to bench/RESULTS.md by hand, with the
date and the machine. The fast versions of the same checks run in ``tests/storage``.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import damage  # noqa: E402 - the folder is put on the path just above
import fulldisk  # noqa: E402
import homes  # noqa: E402
import sigkill  # noqa: E402

KINDS = ("sigkill", "damage", "fulldisk", "rebuild")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=None, help="per path or kind (100)")
    parser.add_argument("--quick", action="store_true", help="10 trials each")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", nargs="*", choices=KINDS, default=list(KINDS))
    args = parser.parse_args()
    # The damage done on purpose makes hrm warn at every step; the figures say it all.
    logging.basicConfig(level=logging.ERROR)
    trials = args.trials or (10 if args.quick else 100)
    results: dict[str, object] = {"trials": trials, "seed": args.seed}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hrm-faults-") as tmp:
        root = Path(tmp)
        if "sigkill" in args.only:
            results["sigkill"] = [
                sigkill.run(mode, trials, args.seed, root).to_dict()
                for mode in ("cli", "turn", "learnings", "ledger", "canon")
            ]
        if "damage" in args.only:
            results["damage"] = _damage(root, trials, args.seed)
        if "fulldisk" in args.only:
            results["fulldisk"] = fulldisk.run(root).to_dict()
        if "rebuild" in args.only:
            results["rebuild"] = _rebuild(root, min(trials, 10))
    results["seconds"] = round(time.monotonic() - started, 1)
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


def _damage(root: Path, trials: int, seed: int) -> list[dict[str, object]]:
    template = homes.build(root / "template")
    rng = random.Random(seed)
    found = [damage.flips(template, root, trials, rng)]
    for drop in ((), ("anchor",), ("anchor", "manifest entry"), ("anchor", "manifest")):
        found.append(damage.truncations(template, root, trials, rng, drop=drop))
    for drop in ((), ("manifest entry",), ("manifest",), ("manifest", "governance")):
        found.append(damage.deletions(template, root, trials, rng, drop=drop))
    return [r.to_dict() for r in found]


def _rebuild(root: Path, count: int) -> dict[str, object]:
    equal = 0
    for seed in range(count):
        home = homes.build(root / f"rebuild-{seed}", seed=seed)
        equal += sigkill.rebuild_equal(home)
    return {"homes": count, "equal": equal}


if __name__ == "__main__":
    main()
