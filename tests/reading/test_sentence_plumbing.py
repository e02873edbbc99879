"""The exemplar tier's plumbing on a stand-in model: its disk cache, its LRU, its bounds, and
what happens when the sentence model fails."""

from __future__ import annotations

import logging
import stat
import subprocess
import sys
import zlib
from collections.abc import Sequence
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from hrm.reading import Bands, ReadingContext, sentence_spans  # noqa: E402
from hrm.reading._exemplar_index import _BUILT  # noqa: E402
from hrm.reading.calibration import Calibration  # noqa: E402
from hrm.reading.sentence import MAX_SPANS, ExemplarReader  # noqa: E402


class WordsModel:
    """A stand-in sentence model: hashed words, unit length; counts what it is asked."""

    model_id = "words-1"
    dimension = 64

    def __init__(self, *, fail: bool = False) -> None:
        self.fail = fail
        self.encoded: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if self.fail:
            raise RuntimeError("onnxruntime: out of memory")
        self.encoded.extend(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, zlib.crc32(word.encode()) % self.dimension] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.clip(norms, 1e-9, None)


def reader_on(model: WordsModel, cache: Path | None = None) -> ExemplarReader:
    return ExemplarReader(model, cache_dir=cache, calibration=Calibration("", ""))


def read(reader: ExemplarReader, text: str, context: ReadingContext | None = None) -> tuple:
    return reader.read(text, sentence_spans(text), context or ReadingContext())


def test_the_index_is_cached_privately_and_reused(tmp_path: Path) -> None:
    first = WordsModel()
    read(reader_on(first, tmp_path), "forget that")
    (cached,) = (tmp_path / "reading").glob("exemplars-*-words-1.npz")
    assert stat.S_IMODE(cached.stat().st_mode) == 0o600
    assert len(first.encoded) > 400  # every example, once
    second = WordsModel()
    read(reader_on(second, tmp_path), "forget that")
    assert second.encoded == ["forget that"]  # the examples came from the cache


@pytest.fixture(autouse=True)
def a_new_process() -> None:
    """Each test starts as a new process would: no exemplar index built in memory yet."""
    _BUILT.clear()


def test_a_damaged_cache_is_rebuilt(tmp_path: Path) -> None:
    read(reader_on(WordsModel(), tmp_path), "forget that")
    (cached,) = (tmp_path / "reading").glob("*.npz")
    cached.write_bytes(b"not a zip")
    _BUILT.clear()  # the next process
    model = WordsModel()
    read(reader_on(model, tmp_path), "forget that")
    assert len(model.encoded) > 400
    assert cached.read_bytes()[:2] == b"PK"  # written again, whole


def test_one_process_builds_the_index_once_for_every_home(tmp_path: Path) -> None:
    first, second = WordsModel(), WordsModel()
    read(reader_on(first, tmp_path / "a"), "forget that")
    read(reader_on(second, tmp_path / "b"), "forget that")
    assert len(first.encoded) > 400 and len(second.encoded) < 10
    assert list((tmp_path / "b" / "reading").glob("*.npz"))  # the second home has its copy


def test_a_sentence_seen_before_is_not_embedded_again() -> None:
    model = WordsModel()
    reader = reader_on(model)
    read(reader, "park the offsite for now")
    count = len(model.encoded)
    read(reader, "park the offsite for now")
    assert len(model.encoded) == count


def test_a_long_message_is_read_by_its_first_sentences() -> None:
    model = WordsModel()
    reader = reader_on(model)
    reader.warm()
    model.encoded.clear()
    text = "this is one sentence of a long paste. " * 30_000
    read(reader, text)
    assert len(model.encoded) <= MAX_SPANS * 5
    assert all(len(t.split()) <= 40 for t in model.encoded)


def test_a_failing_model_reads_nothing_and_says_so_once(caplog: pytest.LogCaptureFixture) -> None:
    reader = reader_on(WordsModel(fail=True))
    with caplog.at_level(logging.WARNING, logger="hrm.reading.sentence"):
        assert read(reader, "forget about my cat") == ()
        assert read(reader, "forget about my cat") == ()
    assert sum("sentence model failed" in r.message for r in caplog.records) == 1


def test_spans_outside_the_text_are_ignored() -> None:
    reader = reader_on(WordsModel())
    assert reader.read("bye", [(5, 9), (2, 1)], ReadingContext()) == ()


def test_intents_lie_in_the_given_spans_in_order() -> None:
    reader = ExemplarReader(WordsModel(), bands=Bands(act=0.0001, ask=0.00005),
                            calibration=Calibration("", ""))
    text = "thanks a lot. forget about my cat. bye for now"
    spans = sentence_spans(text)
    intents = reader.read(text, spans[1:], ReadingContext())
    assert intents and all(spans[1][0] <= i.span[0] < i.span[1] <= spans[2][1] for i in intents)
    assert [i.span for i in intents] == sorted(i.span for i in intents)


def test_nothing_heavy_is_imported_with_hrm_or_the_reading_modules() -> None:
    probe = (
        "import sys, hrm, hrm.reading, hrm.reading.sentence, hrm.reading.model_reader, "
        "hrm.reading.slots, hrm.reading.guards, hrm.reading.calibration\n"
        "print(' '.join(m for m in ('numpy', 'onnxruntime', 'tokenizers', 'jsonschema') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_a_message_naming_no_cue_is_read_without_the_index_or_numpy() -> None:
    # A one-shot `hrm turn` on an ordinary question spent ~65 ms importing numpy to load an
    # index it never used (D373).
    probe = (
        "import sys\n"
        "from hrm.reading import ReadingContext, sentence_spans\n"
        "from hrm.reading.sentence import ExemplarReader\n"
        "class Never:\n"
        "    model_id, dimension = 'never', 8\n"
        "    def encode(self, texts): raise AssertionError('embedded')\n"
        "text = 'What is the capital of France?'\n"
        "print(ExemplarReader(Never()).read(text, sentence_spans(text), ReadingContext()))\n"
        "print('numpy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["()", "False"]


def test_the_setting_switches_the_tier(monkeypatch: pytest.MonkeyPatch) -> None:
    from hrm.continuity import embeddings
    from hrm.errors import HRMError
    from hrm.reading.sentence import load_exemplar_reader

    assert load_exemplar_reader(setting="off") is None
    monkeypatch.setattr(embeddings, "available", lambda: False)
    assert load_exemplar_reader(setting="auto") is None
    with pytest.raises(HRMError, match=r"reading\.sentence_model"):
        load_exemplar_reader(setting="on")


def test_readers_of_a_process_share_one_model(tmp_path: Path) -> None:
    from hrm.continuity.embeddings import available
    from hrm.reading.sentence import load_exemplar_reader

    if not available():
        pytest.skip("needs the embeddings extra")
    first = load_exemplar_reader(cache_dir=tmp_path)
    second = load_exemplar_reader(cache_dir=tmp_path)
    other = load_exemplar_reader(cache_dir=tmp_path / "elsewhere")
    assert first is second and first is not None and other is not None
    assert first._model is other._model


def test_a_sentence_naming_no_cue_is_not_embedded(tmp_path: Path) -> None:
    """No intent the tier may return fits a sentence without any of its cues, so the model is
    not asked (D353): most ordinary questions cost no encode, and a one-shot turn no load."""
    model = WordsModel()
    reader = reader_on(model, tmp_path)
    read(reader, "forget that")  # the index is built here
    model.encoded.clear()
    assert read(reader, "What is the capital of France?") == ()
    assert model.encoded == []
    read(reader, "please forget my address")
    assert model.encoded == ["please forget my address"]
    read(reader, "sure thing", ReadingContext(pending="preference"))  # it may be the answer
    assert model.encoded[-1] == "sure thing"


@pytest.mark.parametrize(("park", "none", "band"), [(0.40, 0.38, "ask"), (0.40, 0.20, "act")])
def test_an_intent_scored_nearly_as_nothing_is_asked_about_not_acted_on(
    park: float, none: float, band: str
) -> None:
    # "Write the migration step for the users table" scored park 0.33 against none 0.31,
    # calibrated at the act band: the problem was parked (D376).
    from hrm.reading.calibration import Threshold
    from hrm.reading.sentence import _choose

    calibration = Calibration("", "", {"park": Threshold(act=0.30, ask=0.20)})
    bands = Bands()
    score = _choose(("none", "park"), np.array([none, park], dtype=np.float32),
                    "park the pricing page", ReadingContext(), calibration, bands)  # fmt: skip
    assert score.kind is not None and score.kind.value == "park"
    assert bands.of(score.confidence).value == band
