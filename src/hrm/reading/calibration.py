"""From a classifier's score to a confidence the `Bands` mean the same thing for.

A nearest-exemplar score of 0.6 is a sure "thanks" and a doubtful "preference": intents differ
in how alike their examples and their near-misses are. So each intent gets two thresholds fitted
on the labelled dev set — the score from which the tier is right often enough to act
(`ACT_PRECISION`) and the one from which it is right often enough to ask (`ASK_PRECISION`) — and
`Calibration.confidence` maps the score piecewise-linearly so that those two thresholds land on
the bands' act and ask values. An intent with few dev examples leans on the thresholds of all
intents pooled (shrunk towards them by `PRIOR_WEIGHT` pseudo-examples), so one lucky sample
cannot set a threshold. The held-out part of the labelled set is never used here (D172).

The fitted thresholds ship as ``data/calibration.json`` beside the exemplar files, with the
digest of the files they were fitted for: edited exemplars without a new fit fall back to the
pooled defaults and say so. Refit with ``python -m hrm.reading.calibration`` (it needs the
`embeddings` extra and the labelled set in ``tests/reading/data/devset/``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from hrm.reading.types import Bands

__all__ = [
    "ACT_PRECISION",
    "ASK_PRECISION",
    "DEFAULT_THRESHOLD",
    "PRIOR_WEIGHT",
    "Calibration",
    "Sample",
    "Threshold",
    "calibration_file",
    "fit_calibration",
    "load_calibration",
]

logger = logging.getLogger(__name__)

ACT_PRECISION = 0.9
"""Share of dev sentences above the act threshold whose intent is right."""
ASK_PRECISION = 0.7
"""Share above the ask threshold: below it a question would more often annoy than help."""
PRIOR_WEIGHT = 6.0
"""Pseudo-examples of the pooled thresholds added to each intent's own."""
_SMOOTHING = 1.0
"""Pseudo-samples at 50 % precision added when a precision is estimated from few samples."""


@dataclass(frozen=True, slots=True)
class Threshold:
    """Scores from which an intent is acted on (`act`) or asked about (`ask`)."""

    act: float
    ask: float


DEFAULT_THRESHOLD = Threshold(act=0.62, ask=0.42)
"""Used for an intent without a fitted threshold (a guess kept on the careful side)."""


@dataclass(frozen=True, slots=True)
class Sample:
    """One dev sentence as the tier read it: the intent it chose, its score, and whether the
    labelled set expects that intent there."""

    kind: str
    score: float
    correct: bool


@dataclass(frozen=True, slots=True)
class Calibration:
    """Per-intent thresholds for one set of exemplar files and one sentence model."""

    digest: str
    model_id: str
    thresholds: Mapping[str, Threshold] = field(default_factory=dict)
    pooled: Threshold = DEFAULT_THRESHOLD

    def threshold(self, kind: str) -> Threshold:
        return self.thresholds.get(kind, self.pooled)

    def confidence(self, kind: str, score: float, bands: Bands) -> float:
        """`score` for `kind` as a confidence: the act threshold maps to ``bands.act``, the ask
        threshold to ``bands.ask``, linearly between and beyond (clamped to 0..1)."""
        limit = self.threshold(kind)
        act, ask = max(limit.act, limit.ask + 1e-6), limit.ask
        if score >= act:
            top = 1.0 - bands.act
            return min(1.0, bands.act + top * (score - act) / max(1.0 - act, 1e-6))
        if score >= ask:
            return bands.ask + (bands.act - bands.ask) * (score - ask) / (act - ask)
        return max(0.0, bands.ask * score / max(ask, 1e-6))

    def to_json(self) -> str:
        body = {
            "digest": self.digest,
            "model_id": self.model_id,
            "act_precision": ACT_PRECISION,
            "ask_precision": ASK_PRECISION,
            "pooled": {"act": round(self.pooled.act, 4), "ask": round(self.pooled.ask, 4)},
            "thresholds": {
                kind: {"act": round(t.act, 4), "ask": round(t.ask, 4)}
                for kind, t in sorted(self.thresholds.items())
            },
        }
        return json.dumps(body, indent=2) + "\n"


def calibration_file() -> Path:
    """Where the shipped thresholds are."""
    return Path(str(resources.files("hrm.reading") / "data" / "calibration.json"))


def load_calibration(digest: str, model_id: str, path: Path | None = None) -> Calibration:
    """The shipped thresholds when they were fitted for these files and this model; else the
    defaults (logged: the exemplars were edited without a refit)."""
    source = calibration_file() if path is None else path
    try:
        body = json.loads(source.read_text(encoding="utf-8"))
        thresholds = {
            str(kind): Threshold(act=float(t["act"]), ask=float(t["ask"]))
            for kind, t in body["thresholds"].items()
        }
        pooled = Threshold(act=float(body["pooled"]["act"]), ask=float(body["pooled"]["ask"]))
        fitted_for = (str(body["digest"]), str(body["model_id"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        logger.warning("no usable reading calibration at %s (%s); default thresholds", source, exc)
        return Calibration(digest=digest, model_id=model_id)
    if fitted_for != (digest, model_id):
        logger.warning(
            "reading calibration was fitted for other exemplars or another model; default "
            "thresholds until `python -m hrm.reading.calibration` is run"
        )
        return Calibration(digest=digest, model_id=model_id)
    return Calibration(digest=digest, model_id=model_id, thresholds=thresholds, pooled=pooled)


def fit_calibration(samples: Iterable[Sample], *, digest: str, model_id: str) -> Calibration:
    """Thresholds per intent from dev `samples` (module docstring)."""
    pool = list(samples)
    pooled = Threshold(
        act=_lowest_precise(pool, ACT_PRECISION, DEFAULT_THRESHOLD.act),
        ask=_lowest_precise(pool, ASK_PRECISION, DEFAULT_THRESHOLD.ask),
    )
    by_kind: dict[str, list[Sample]] = {}
    for sample in pool:
        by_kind.setdefault(sample.kind, []).append(sample)
    thresholds = {}
    for kind, own in by_kind.items():
        act = _shrunk(_lowest_precise(own, ACT_PRECISION, 1.0), pooled.act, len(own))
        ask = _shrunk(_lowest_precise(own, ASK_PRECISION, 1.0), pooled.ask, len(own))
        thresholds[kind] = Threshold(act=max(act, ask), ask=min(act, ask))
    return Calibration(digest=digest, model_id=model_id, thresholds=thresholds, pooled=pooled)


def _lowest_precise(samples: Sequence[Sample], precision: float, otherwise: float) -> float:
    """The lowest score from which the smoothed precision of the samples at or above it is at
    least `precision`; `otherwise` when no score reaches it."""
    ranked = sorted(samples, key=lambda s: s.score, reverse=True)
    best = otherwise
    right = 0
    for seen, sample in enumerate(ranked, start=1):
        right += sample.correct
        is_last_of_score = seen == len(ranked) or ranked[seen].score < sample.score
        smoothed = (right + _SMOOTHING * 0.5) / (seen + _SMOOTHING)
        if is_last_of_score and smoothed >= precision:
            best = sample.score
    return best


def _shrunk(own: float, pooled: float, count: int) -> float:
    return (count * own + PRIOR_WEIGHT * pooled) / (count + PRIOR_WEIGHT)


def main(argv: Sequence[str] | None = None) -> int:
    """Refit the shipped thresholds on the dev part of a labelled set (module docstring).

    Usage: ``python -m hrm.reading.calibration [DEVSET] [--check]``; DEVSET defaults to
    ``tests/reading/data/devset``. With ``--check`` nothing is written and the exit code says
    whether the shipped file is what a refit would write.
    """
    import sys

    from hrm.reading.labelled import load_labelled
    from hrm.reading.sentence import ExemplarReader, load_exemplar_reader
    from hrm.reading.sentences import sentence_spans

    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    paths = [a for a in args if a != "--check"]
    devset = Path(paths[0]) if paths else Path("tests/reading/data/devset")
    loaded = load_exemplar_reader()
    if loaded is None:
        print("calibration needs the embeddings extra", file=sys.stderr)
        return 2
    probe = ExemplarReader(loaded.model, calibration=Calibration(digest="", model_id=""))
    samples = []
    for item in load_labelled(devset):
        if item.split != "dev":
            continue  # the held-out part never tunes anything (D172)
        expected = {e.kind.value for e in item.expect}
        sentences = [item.text[a:b] for a, b in sentence_spans(item.text)]
        for score in probe.score_sentences(sentences, item.context):
            if score.kind is not None:
                samples.append(Sample(score.kind.value, score.score, score.kind in expected))
    from hrm.reading.exemplar_files import load_exemplars

    digest = load_exemplars().digest
    fitted = fit_calibration(samples, digest=digest, model_id=probe.model.model_id)
    target = calibration_file()
    if check:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        same = current == fitted.to_json()
        print("calibration is current" if same else "calibration is stale: refit it")
        return 0 if same else 1
    target.write_text(fitted.to_json(), encoding="utf-8")
    print(f"wrote {target} from {len(samples)} dev sentences")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
