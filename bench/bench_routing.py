"""How well hrm reads what kind of work a request asks for (issue 33 items 1-3).

On the labelled request set in tests/reasoning/data/requests.tsv (dev: what the cue tables in
src/hrm/data/routing/classes.toml were tuned on; heldout: measured only), prints per-class
accuracy (the share of a class's requests read as that class) for:

- the cue tables alone (every model, the default);
- the cue tables with the model's second opinion (`hrm.reasoning.assist`), asked only when the
  tables are unsure, with two scripted models that bound what a model can do: one that always
  names the labelled class (the most a second opinion can add) and one that always names a
  wrong class (the most it can take away). No capable model is reachable from this machine,
  so a real model's figure lies between the two.

Also counts the extra model calls per turn that model-assisted governance makes on a capable
model (signals, altitude, second opinion), over the requests of the set, and on the small local
model (none). Writes bench/out/routing.json; `--misses` prints every request read wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from hrm.reasoning.request_set import ClassReport, evaluate, load_request_set  # noqa: E402
from hrm.reasoning.requests import load_request_classifier  # noqa: E402
from hrm.reasoning.routing_table import REQUEST_CLASSES  # noqa: E402

OUT = ROOT / "bench" / "out"
SET = ROOT / "tests" / "reasoning" / "data" / "requests.tsv"


def _row(name: str, split: str, report: ClassReport) -> dict[str, object]:
    return {
        "config": name,
        "split": split,
        "n": sum(report.total.values()),
        "overall": round(report.accuracy(), 3),
        **{c: round(report.accuracy(c), 3) for c in REQUEST_CLASSES},
    }


def _configs() -> dict[str, Callable[[str, str], str]]:
    """Each configuration: (text, labelled class) -> the class read."""
    classifier = load_request_classifier()
    configs: dict[str, Callable[[str, str], str]] = {
        "cue tables": lambda text, _label: classifier.classify(text).request_class,
    }
    try:
        from hrm.reasoning.assist import second_opinion_bounds
    except ImportError:  # before model-assisted governance lands
        return configs
    configs.update(second_opinion_bounds(classifier))
    return configs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="print every request read wrong")
    args = parser.parse_args()
    rows = load_request_set(SET)
    results: list[dict[str, object]] = []
    header = f"{'config':<34}{'split':<9}{'n':>4}{'all':>7}" + "".join(
        f"{c[:12]:>13}" for c in REQUEST_CLASSES
    )
    print(header)
    for name, read in _configs().items():
        for split in ("dev", "heldout"):
            part = [r for r in rows if r.split == split]
            labels = {r.text: r.request_class for r in part}
            report = evaluate(part, lambda text, _r=read, _l=labels: _r(text, _l[text]))
            row = _row(name, split, report)
            results.append(row)
            print(
                f"{name:<34}{split:<9}{row['n']:>4}{row['overall']:>7.3f}"
                + "".join(f"{row[c]:>13.3f}" for c in REQUEST_CLASSES)
            )
            if args.misses:
                for labelled, got in report.misses:
                    print(f"    {labelled.request_class} -> {got}: {labelled.text}")
    calls = _extra_calls()
    for name, per_turn in calls.items():
        print(f"extra model calls per turn, {name}: {per_turn}")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "routing.json").write_text(
        json.dumps({"accuracy": results, "extra_calls_per_turn": calls}, indent=2) + "\n",
        encoding="utf-8",
    )
    return 0


def _extra_calls() -> dict[str, object]:
    try:
        from hrm.reasoning.assist import extra_calls_per_turn
    except ImportError:
        return {}
    return extra_calls_per_turn([r.text for r in load_request_set(SET)])


if __name__ == "__main__":
    raise SystemExit(main())
