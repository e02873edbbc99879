"""Precision and recall of learning capture on the labelled transcripts (issue 31 item 4).

Each transcript in ``tests/fixtures/transcripts`` is a Claude Code session written by hand with
the learnings a careful reader would keep (``labels.json``: a type and the words the learning
must contain). The cue tables were written against those (the dev set); ``heldout/`` was
written after and never tuned on, so its figures are the ones to expect on new sessions.
Capture runs on each file as the Stop and SessionEnd hooks run it; a captured learning is a
true positive when it has a label's type (an error fix and a working solution count as one
kind) and every one of its words, each label matching once.

    .venv/bin/python bench/bench_capture.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from hrm.continuity.capture import CapturedLearning, capture_transcript  # noqa: E402

TRANSCRIPTS = ROOT / "tests" / "fixtures" / "transcripts"
_FIXES = {"ERROR_FIX", "WORKING_SOLUTION"}


def same_kind(a: str, b: str) -> bool:
    return a == b or {a, b} <= _FIXES


def score(found: list[CapturedLearning], labels: list[dict[str, object]]) -> tuple[int, int]:
    """(true positives among `found`, labels matched)."""
    open_labels = list(labels)
    hits = 0
    for learning in found:
        text = learning.content.lower()
        for label in open_labels:
            words = [str(w).lower() for w in label["words"]]  # type: ignore[attr-defined]
            if same_kind(learning.type, str(label["type"])) and all(w in text for w in words):
                open_labels.remove(label)
                hits += 1
                break
    return hits, len(labels) - len(open_labels)


def measure(folder: Path = TRANSCRIPTS) -> dict[str, object]:
    labels = json.loads((folder / "labels.json").read_text(encoding="utf-8"))
    captured = true_positives = matched = expected = 0
    per_file: dict[str, dict[str, int]] = {}
    started = time.perf_counter()
    for name, wanted in labels.items():
        found = list(capture_transcript(folder / f"{name}.jsonl").learnings)
        hits, labels_hit = score(found, wanted)
        captured += len(found)
        true_positives += hits
        matched += labels_hit
        expected += len(wanted)
        per_file[name] = {"captured": len(found), "correct": hits, "labels": len(wanted)}
    elapsed = time.perf_counter() - started
    return {
        "transcripts": len(labels),
        "labels": expected,
        "captured": captured,
        "precision": round(true_positives / captured, 3) if captured else 1.0,
        "recall": round(matched / expected, 3) if expected else 1.0,
        "no_learning_transcripts": sum(1 for w in labels.values() if not w),
        "false_positives_on_no_learning": sum(
            per_file[n]["captured"] for n, w in labels.items() if not w
        ),
        "ms_per_transcript": round(elapsed * 1000 / max(1, len(labels)), 2),
        "per_file": per_file,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON")
    args = parser.parse_args()
    results = {"dev": measure(), "held_out": measure(TRANSCRIPTS / "heldout")}
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for label, result in results.items():
        print(f"{label}: capture on {result['transcripts']} labelled transcripts"
              f" ({result['labels']} labels, {result['no_learning_transcripts']} with none):"
              f" precision {result['precision']}, recall {result['recall']};"
              f" {result['false_positives_on_no_learning']} learnings captured where none were"
              f" expected; {result['ms_per_transcript']} ms a transcript")
        for name, row in result["per_file"].items():  # type: ignore[union-attr]
            if row["correct"] != row["captured"] or row["correct"] != row["labels"]:
                print(f"  {name}: captured {row['captured']}, correct {row['correct']},"
                      f" labels {row['labels']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
