"""bench/bench_locomo.py on the committed LoCoMo excerpt, and its skip when the full file is absent."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXCERPT = ROOT / "tests" / "fixtures" / "locomo" / "locomo10-excerpt.json"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_locomo", ROOT / "bench" / "bench_locomo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_turns_carry_speaker_date_and_the_shared_pictures_caption(bench: ModuleType) -> None:
    (sample,) = json.loads(EXCERPT.read_text(encoding="utf-8"))
    turns = {t["dia_id"]: t for t in bench.turns_of(sample)}
    assert len(turns) == 35
    assert turns["D1:1"]["content"] == "Caroline: Hey Mel! Good to see you! How have you been?"
    assert turns["D1:1"]["when"] == "1:56 pm on 8 May, 2023"
    assert turns["D1:5"]["content"].endswith(
        " [image: a photo of a dog walking past a wall with a painting of a woman]"
    )


def test_adversarial_questions_are_left_out_and_evidence_lists_are_split(
    bench: ModuleType,
) -> None:
    (sample,) = json.loads(EXCERPT.read_text(encoding="utf-8"))
    questions = bench.questions_of(sample)
    assert len(questions) == 15  # 20 in the excerpt, 5 of them category 5
    assert {q["category"] for q in questions} == {1, 2, 3, 4}
    education = next(q for q in questions if "educaton" in q["question"])
    assert education["gold"] == {"D1:9", "D1:11"}
    assert bench.recall(["D1:9", "D2:1"], education["gold"], 1) == 0.5


def test_a_run_on_the_excerpt_scores_each_system_and_beats_plain_fts5(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "locomo.json"
    assert bench.main(["--data", str(EXCERPT), "--out", str(out), "--no-hybrid"]) == 0
    summary = json.loads(out.read_text(encoding="utf-8"))
    assert (summary["conversations"], summary["questions"]) == (1, 15)
    results = summary["results"]
    assert set(results) == {"baseline", "fts"}
    for system in results.values():
        assert 0.0 <= system["recall_at_5"] <= system["recall_at_10"] <= 1.0
    assert results["fts"]["recall_at_10"] >= results["baseline"]["recall_at_10"]
    assert "15 questions over 1 conversations" in capsys.readouterr().out


def test_without_the_data_file_the_bench_skips_and_says_how_to_get_it(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "locomo.json"
    out.write_text("{}")  # an earlier run's figures must not pass for this run's
    assert bench.main(["--data", str(tmp_path / "absent.json"), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "skipped" in said and "snap-research/locomo" in said and "--data" in said
    assert not out.exists()
