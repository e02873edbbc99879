"""Calibration: per-intent thresholds from dev samples, mapped onto the bands."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.reading import Band, Bands
from hrm.reading.calibration import (
    DEFAULT_THRESHOLD,
    Calibration,
    Sample,
    Threshold,
    calibration_file,
    fit_calibration,
    load_calibration,
)
from hrm.reading.exemplar_files import load_exemplars

BANDS = Bands()


def test_thresholds_land_on_the_bands() -> None:
    calibration = Calibration("d", "m", {"thanks": Threshold(act=0.6, ask=0.4)})
    assert calibration.confidence("thanks", 0.6, BANDS) == pytest.approx(BANDS.act)
    assert calibration.confidence("thanks", 0.4, BANDS) == pytest.approx(BANDS.ask)
    assert BANDS.of(calibration.confidence("thanks", 0.5, BANDS)) is Band.ASK
    assert BANDS.of(calibration.confidence("thanks", 0.39, BANDS)) is Band.IGNORE
    assert calibration.confidence("thanks", 1.0, BANDS) == pytest.approx(1.0)


@given(st.floats(-1, 1), st.floats(-1, 1), st.floats(0.05, 0.95), st.floats(0.05, 0.95))
def test_confidence_is_monotone_and_bounded(a: float, b: float, act: float, ask: float) -> None:
    calibration = Calibration("d", "m", {"k": Threshold(act=max(act, ask), ask=min(act, ask))})
    low, high = sorted((a, b))
    c_low, c_high = calibration.confidence("k", low, BANDS), calibration.confidence("k", high, BANDS)
    assert 0.0 <= c_low <= c_high <= 1.0


def test_an_intent_right_from_a_score_up_acts_from_there() -> None:
    samples = [Sample("forget", s / 20, s >= 12) for s in range(20)] * 3
    fitted = fit_calibration(samples, digest="d", model_id="m")
    limit = fitted.threshold("forget")
    assert limit.act == pytest.approx(0.6)  # all right from 0.6 up
    assert 0.4 <= limit.ask < limit.act  # 70 % right from a little lower
    assert fitted.threshold("never-seen") == fitted.pooled


def test_few_samples_lean_on_the_pooled_thresholds() -> None:
    pool = [Sample("thanks", s / 20, s >= 8) for s in range(20)] * 4
    lucky = [Sample("goodbye", 0.1, True)]
    fitted = fit_calibration(pool + lucky, digest="d", model_id="m")
    assert fitted.threshold("goodbye").act > 0.3  # one right sample at 0.1 does not set it


def test_shipped_thresholds_were_fitted_for_the_shipped_exemplars() -> None:
    """Edit an exemplar file, then run `python -m hrm.reading.calibration`."""
    from hrm.continuity.embeddings import MODEL_ID

    exemplars = load_exemplars()
    shipped = load_calibration(exemplars.digest, MODEL_ID)
    assert shipped.thresholds, "calibration.json is stale: refit it"
    assert set(shipped.thresholds) <= set(exemplars.labels)


def test_stale_or_broken_calibration_falls_back_to_defaults(tmp_path: Path) -> None:
    stale = load_calibration("another digest", "all-MiniLM-L6-v2-int8-onnx")
    assert not stale.thresholds and stale.pooled == DEFAULT_THRESHOLD
    broken = tmp_path / "c.json"
    broken.write_text("{not json", encoding="utf-8")
    assert not load_calibration("d", "m", broken).thresholds


def test_calibration_round_trips_through_its_file(tmp_path: Path) -> None:
    fitted = fit_calibration([Sample("yes", 0.8, True)] * 10, digest="d", model_id="m")
    path = tmp_path / "c.json"
    path.write_text(fitted.to_json(), encoding="utf-8")
    again = load_calibration("d", "m", path)
    assert again.threshold("yes").act == pytest.approx(fitted.threshold("yes").act, abs=1e-4)
    assert calibration_file().name == "calibration.json"
