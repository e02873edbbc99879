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

from hrm.llm import Message  # noqa: E402
from hrm.reasoning.assist import ClassSecondOpinion, wire_model_assistance  # noqa: E402
from hrm.reasoning.request_set import (  # noqa: E402
    ClassReport,
    LabelledRequest,
    evaluate,
    load_request_set,
)
from hrm.reasoning.requests import RequestClassifier, load_request_classifier  # noqa: E402
from hrm.reasoning.routing_table import REQUEST_CLASSES  # noqa: E402
from hrm.testing import ScriptedAdapter, ScriptedReply  # noqa: E402

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
    for name, right in (("+ second opinion, always right", True),
                        ("+ second opinion, always wrong", False)):
        configs[name] = _with_opinion(classifier, right)
    return configs


def _with_opinion(classifier: RequestClassifier, right: bool) -> Callable[[str, str], str]:
    """The cue tables with `ClassSecondOpinion` on a scripted model that names the labelled
    class among its choices (right) or the other choice (wrong)."""

    def read(text: str, label: str) -> str:
        opinion = ClassSecondOpinion(_Oracle(label, right), classifier.thresholds)
        return opinion(text, classifier.classify(text)).request_class

    return read


class _Oracle(ScriptedAdapter):
    def __init__(self, label: str, right: bool) -> None:
        super().__init__([ScriptedReply(respond=self._answer_for)], repeat=True)
        self.label, self.right = label, right

    def _answer_for(self, messages: list[Message], _system: str, _config: object) -> str:
        line = messages[-1].content.splitlines()[0]
        choices = [c.strip() for c in line.removeprefix("Choices:").split(",")]
        if self.right:
            pick = self.label if self.label in choices else choices[0]
        else:
            pick = next((c for c in choices if c != self.label), choices[0])
        return json.dumps({"class": pick})


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
    actions = _actions(rows)
    for name, per_class in actions.items():
        print(f"action as the class needs, all stances, {name}: " + ", ".join(
            f"{c} {v:.3f}" for c, v in per_class.items()))
    calls = _extra_calls()
    for name, per_turn in calls.items():
        print(f"extra model calls per turn, {name}: {per_turn}")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "routing.json").write_text(
        json.dumps(
            {"accuracy": results, "actions": actions, "extra_calls_per_turn": calls}, indent=2
        ) + "\n",
        encoding="utf-8",
    )
    return 0


NEEDED = {
    "simple": "respond",
    "multi_step": "execute",
    "needs_perspectives": "delegate",
    "high_stakes": "delegate",
    "conflict": "delegate",
}
"""The action each class needs (issue 33 item 1)."""


def _actions(rows: list[LabelledRequest]) -> dict[str, dict[str, float]]:
    """The share of each class's requests whose selected action is the one the class needs,
    over the four stances: the routing table, and the rule path alone (before issue 33)."""
    from datetime import UTC, datetime

    from hrm.reasoning.router import ReasoningRouter
    from hrm.types import AltitudeLevel, HRMContext, Stance, TurnInput

    out: dict[str, dict[str, float]] = {}
    for name, router in (
        ("routing table", ReasoningRouter()),
        ("rules alone (before)", ReasoningRouter(routing_table=None)),
    ):
        right: dict[str, int] = {}
        total: dict[str, int] = {}
        for row in rows:
            for stance in Stance:
                context = HRMContext(
                    "bench", 1, None, AltitudeLevel.L2_OPERATIONS, stance, None, None
                )
                result = router.reason(TurnInput(row.text, datetime.now(UTC), context))
                total[row.request_class] = total.get(row.request_class, 0) + 1
                if result.selected.primary.action_type == NEEDED[row.request_class]:
                    right[row.request_class] = right.get(row.request_class, 0) + 1
        out[name] = {c: round(right.get(c, 0) / total[c], 3) for c in REQUEST_CLASSES}
    return out


def _extra_calls() -> dict[str, object]:
    """Governance calls per turn, by purpose, over the set's requests: on a capable model (a
    scripted one that always answers) and on the small local one (none)."""
    from datetime import UTC, datetime

    from hrm.altitude.governor import AltitudeGovernor
    from hrm.config import HRMConfig, LLMConfig, PolicySurface
    from hrm.governance.signals import SignalEngine
    from hrm.reasoning.router import ReasoningRouter
    from hrm.types import AltitudeLevel, HRMContext, Stance, TurnInput

    texts = [r.text for r in load_request_set(SET)]
    out: dict[str, object] = {}
    for name, config in (
        ("capable model", HRMConfig(llm=LLMConfig(provider="local", capable="on"))),
        ("local 135M model", HRMConfig(llm=LLMConfig(provider="local", capable="auto"))),
    ):
        adapter = ScriptedAdapter(
            ['{"class": "simple", "level": "operations", "confidence": 0.5,'
             ' "source_quality": 0.5, "alignment_score": 0.5}'],
            repeat=True,
        )
        altitude, router = AltitudeGovernor(config), ReasoningRouter()
        engine = SignalEngine(PolicySurface())
        wire_model_assistance(config, adapter, altitude=altitude, signals=engine, router=router)
        for number, text in enumerate(texts, start=1):
            context = HRMContext(
                "bench", number, None, AltitudeLevel.L2_OPERATIONS, Stance.SENSEMAKING, None, None
            )
            turn_input = TurnInput(text, datetime.now(UTC), context)
            engine.derive(turn_input, context)
            altitude.classify_input(turn_input)
            router.reason(turn_input)
        purposes: dict[str, int] = {}
        for call in adapter.calls:
            purpose = (call.config.purpose if call.config else None) or "?"
            purposes[purpose] = purposes.get(purpose, 0) + 1
        out[name] = {
            "per_turn": round(len(adapter.calls) / len(texts), 3),
            "by_purpose": {k: round(v / len(texts), 3) for k, v in sorted(purposes.items())},
        }
    return out


if __name__ == "__main__":
    raise SystemExit(main())
