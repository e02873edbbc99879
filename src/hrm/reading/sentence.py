"""The sentence-model tier: reads intents by the labelled examples a sentence is nearest to.

Rules match the phrasings someone wrote down; people say the same thing one step further out
("concentrate on X for the next two messages", "My preference: metric units, always"). This
tier embeds each sentence with the MiniLM model the `embeddings` extra ships (in-process, no
network), scores every intent against the exemplar files (`hrm.reading.exemplar_files`; nearest
example blended with a probe fitted on the same examples, `_exemplar_index`), and turns the
best score into a confidence through thresholds calibrated on the labelled dev set
(`hrm.reading.calibration`), so the `Bands` decide act, ask or ignore as for every tier. The
slots are read by `hrm.reading.slots` once the kind is known.

What the tier will not do, whatever the scores: read a question or a request as a preference
or a fact (`hrm.reading.guards`), or an answer (yes / no / switch / queue) when no question of
that kind is pending.

Cost: nothing of it is imported with `hrm` or on the hook path; the model and the exemplar
index load once per process on the first read (or `warm`), and each sentence's vector is kept
in a per-process LRU, so a sentence seen before costs a dictionary lookup.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from hrm.reading.guards import answers_for, may_carry, readable
from hrm.reading.rules.cues import without_opening
from hrm.reading.slots import slots_for, task_start
from hrm.reading.types import ANSWERS, Bands, Intent, IntentKind, ReadingContext, Span

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from hrm.continuity.embeddings import EmbeddingModel
    from hrm.reading._exemplar_index import ExemplarIndex
    from hrm.reading.calibration import Calibration

__all__ = [
    "MAX_SPANS",
    "MAX_WORDS",
    "READER_NAME",
    "ExemplarReader",
    "SpanScore",
    "load_exemplar_reader",
]

logger = logging.getLogger(__name__)

READER_NAME = "exemplars"
MAX_SPANS = 16
"""Sentences of one message this tier reads: commands are said up front, and a message of more
sentences is long-form content whose later ones would cost a model call each."""
MAX_WORDS = 40
"""Words of a sentence that are embedded: the intent is in its first clauses, and the model's
cost grows with the length."""
CACHE_SIZE = 4096
"""Sentence vectors kept per process."""

_NONE_LABEL = "none"
NEAR_NOTHING = 0.05
"""An intent that scores within this of the near-misses ("none") is asked about, never acted on
at once: "Write the migration step for the users table" scored park 0.33 against none 0.31, a
calibrated 0.75, and parked the problem (D376)."""
_MOVES = frozenset({IntentKind.THANKS, IntentKind.GOODBYE})
"""Short conversation moves that join another request in one sentence ("thanks, bye!"). An
answer does not: "no, forget it" is one answer, not a "no" and a request to forget."""
_MOVE_LABELS = frozenset(kind.value for kind in _MOVES)


@dataclass(frozen=True, slots=True)
class SpanScore:
    """How the tier read one sentence: the intent it chose (None: nothing), its raw score and
    the calibrated confidence."""

    kind: IntentKind | None
    score: float
    confidence: float
    moves: bool = False
    """Whether a conversation move ("thanks", "bye") ranks among the sentence's two best
    labels: only then is a short sentence also read clause by clause."""


class ExemplarReader:
    """A `Reader` over the exemplar files and the sentence model.

    Thread-safe; shares its model and index with every other reader of the same process
    (`load_exemplar_reader`). `read` never raises: a sentence model that fails is logged once
    and the tier reads nothing from then on.
    """

    name = READER_NAME

    def __init__(
        self,
        model: EmbeddingModel,
        *,
        cache_dir: Path | None = None,
        bands: Bands | None = None,
        calibration: Calibration | None = None,
    ) -> None:
        """A reader on `model`; the index is built (or read from `cache_dir`) on first use.

        Args:
            model: The sentence model (`hrm.continuity.embeddings.Embedder` in production).
            cache_dir: Where the exemplar index is kept between processes (the home's
                ``cache/``); None keeps it in memory only.
            bands: The act and ask thresholds confidences are mapped onto.
            calibration: Per-intent thresholds; default: the shipped ones for these files.
        """
        self._model = model
        self._cache_dir = cache_dir
        self._bands = bands or Bands()
        self._calibration = calibration
        self._index: ExemplarIndex | None = None
        self._lock = threading.Lock()
        self._vectors: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._failed = False

    @property
    def model(self) -> EmbeddingModel:
        """The sentence model this reader embeds with."""
        return self._model

    def clear_vectors(self) -> None:
        """Forget the cached sentence vectors (benchmarks time the tier on new sentences)."""
        with self._lock:
            self._vectors.clear()

    def warm(self) -> None:
        """Load the index now instead of on the first read (benchmarks, a server's start)."""
        self._ensure_index()

    def read(
        self,
        said: str,
        spans: Sequence[Span],
        context: ReadingContext,
        *,
        earlier: Sequence[Intent] = (),
    ) -> tuple[Intent, ...]:
        """The intents of the given sentence spans of `said` (at most `MAX_SPANS` of them).

        A short sentence that joins two moves ("thanks, bye!", "close the printer issue and
        park the redesign") is also read clause by clause; when two of its clauses carry
        different intents at the act band, each is returned with its clause's span (D173).
        """
        chosen = [(a, b) for a, b in spans[:MAX_SPANS] if 0 <= a < b <= len(said)]
        if not chosen or self._failed:
            return ()
        wholes = self.score_sentences([said[a:b] for a, b in chosen], context)
        readings = {span: [(span, score)] for span, score in zip(chosen, wholes, strict=True)}
        # Clauses cost a model call each: read them only where a move may join the sentence.
        units = [
            (clause, span)
            for span, score in zip(chosen, wholes, strict=True)
            if score.moves
            for clause in _clauses(said, span)
        ]
        if units:
            clauses = self.score_sentences(
                [said[a:b] for (a, b), _ in units],
                context,
                guarded_by=[said[a:b] for _, (a, b) in units],
            )
            for (unit, sentence), score in zip(units, clauses, strict=True):
                readings[sentence].append((unit, score))
        intents = []
        for span in chosen:
            for whole, score in self._reading_of(readings[span]):
                if score.kind is not None:
                    unit = _without_task(score.kind, said, whole)
                    intents.append(
                        Intent(
                            kind=score.kind,
                            span=unit,
                            confidence=score.confidence,
                            reader=READER_NAME,
                            slots=slots_for(score.kind,
                                            without_opening(said[unit[0] : unit[1]])),
                        )
                    )
        return tuple(intents)

    def _reading_of(
        self, scored: list[tuple[Span, SpanScore]]
    ) -> list[tuple[Span, SpanScore]]:
        """The whole sentence's reading, or its clauses' when one of them is a conversation
        move ("thanks", "bye") and another carries a different intent, both at the act
        band. Two commands in one clause-split sentence are left to the whole reading: split,
        "going forward, give me bullet points" would also read "going forward" as a resume."""
        whole, clauses = scored[0], scored[1:]
        heard = [
            (unit, score)
            for unit, score in clauses
            if score.kind is not None and score.confidence >= self._bands.act
        ]
        kinds = {score.kind for _, score in heard}
        if len(kinds) >= 2 and kinds & _MOVES:
            return heard
        return [whole]

    def score_sentences(
        self,
        sentences: Sequence[str],
        context: ReadingContext,
        *,
        guarded_by: Sequence[str] | None = None,
    ) -> list[SpanScore]:
        """How the tier reads each of `sentences` (also for calibration and benchmarks).

        Args:
            sentences: The texts to read.
            context: What the turn knows (a pending question).
            guarded_by: Per text, the sentence whose guards apply (a clause is guarded by its
                whole sentence: "I prefer X, can you Y?" holds no preference in any part).
        """
        guards = sentences if guarded_by is None else guarded_by
        nothing = SpanScore(kind=None, score=0.0, confidence=0.0)
        try:
            # A sentence that names no cue of any intent, with no question pending, can carry
            # nothing this tier may return (`_choose` would refuse every intent it scored):
            # it is not embedded. Most ordinary questions are such sentences, and the encode
            # is most of a governed turn's cost — and of a one-shot turn's, which then never
            # loads the model, nor the index and numpy (D353, D373).
            labels = self._labels()
            live = [i for i, guard in enumerate(guards) if _may_read(labels, guard, context)]
            if not live:
                return [nothing for _ in sentences]
            index = self._ensure_index()
            clipped = [_clip(sentences[i]) for i in live]
            table = index.scores(self._embed(clipped), clipped)
        except Exception:  # bounded help: a failing sentence model never fails the turn
            if not self._failed:
                logger.warning("sentence model failed; the exemplar tier is off", exc_info=True)
            self._failed = True
            return [nothing for _ in sentences]
        calibration = self._calibration_for(index)
        scores = [nothing] * len(sentences)
        for i, row in zip(live, table, strict=True):
            scores[i] = _choose(index.labels, row, guards[i], context, calibration, self._bands)
        return scores

    def _labels(self) -> tuple[str, ...]:
        """The intents the exemplar files hold, read without the index (no numpy)."""
        index = self._index
        return index.labels if index is not None else _shipped_labels()

    def _ensure_index(self) -> ExemplarIndex:
        with self._lock:
            if self._index is None:
                from hrm.reading._exemplar_index import load_or_build_index
                from hrm.reading.exemplar_files import load_exemplars

                self._index = load_or_build_index(load_exemplars(), self._model, self._cache_dir)
            return self._index

    def _calibration_for(self, index: ExemplarIndex) -> Calibration:
        if self._calibration is None:
            from hrm.reading.calibration import load_calibration

            self._calibration = load_calibration(index.digest, index.model_id)
        return self._calibration

    def _embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        fresh = self._model.encode(missing) if missing else np.zeros((0, 0), np.float32)
        with self._lock:
            for text, vector in zip(missing, fresh, strict=True):
                self._vectors[text] = vector
            rows = []
            for text in texts:
                self._vectors.move_to_end(text)
                rows.append(self._vectors[text])
            while len(self._vectors) > CACHE_SIZE:
                self._vectors.popitem(last=False)
        return np.stack(rows)


@lru_cache(maxsize=1)
def _shipped_labels() -> tuple[str, ...]:
    from hrm.reading.exemplar_files import load_exemplars

    return load_exemplars().labels


def _may_read(labels: tuple[str, ...], sentence: str, context: ReadingContext) -> bool:
    """Whether `_choose` could return an intent for `sentence`: an answer, when a question is
    pending; else an intent whose cues the sentence names and whose guards it passes."""
    if answers_for(context.pending):
        return True
    return any(may_carry(kind, sentence) for kind in _kinds(labels))


@lru_cache(maxsize=8)
def _kinds(labels: tuple[str, ...]) -> tuple[IntentKind, ...]:
    """The intents of an index that a sentence carries by its own words (not the answers)."""
    kinds = (IntentKind(label) for label in labels if label != _NONE_LABEL)
    return tuple(kind for kind in kinds if kind not in ANSWERS)


def _choose(
    labels: Sequence[str],
    row: npt.NDArray[np.float32],
    sentence: str,
    context: ReadingContext,
    calibration: Calibration,
    bands: Bands,
) -> SpanScore:
    """The intent `sentence` carries, or None: when near-misses score highest, or when the
    best intent is one it may not carry — a question read as a preference, an answer with no
    question pending. Such a sentence is not read as its second-best intent: "yes" with
    nothing asked is no complaint, and a question is no decision (D174)."""
    values = row.tolist()
    answer = _pending_answer(labels, values, sentence, context, calibration, bands)
    if answer is not None:
        return answer
    ranked = sorted(range(len(labels)), key=values.__getitem__, reverse=True)
    best_label, best = labels[ranked[0]], values[ranked[0]]
    moves = any(labels[i] in _MOVE_LABELS for i in ranked[:2])
    if best_label == _NONE_LABEL:
        return SpanScore(kind=None, score=best, confidence=0.0, moves=moves)
    kind = IntentKind(best_label)
    unasked = kind in ANSWERS and kind not in answers_for(context.pending)
    if unasked or (kind not in ANSWERS and not may_carry(kind, sentence)):
        return SpanScore(kind=None, score=best, confidence=0.0, moves=moves)
    confidence = calibration.confidence(best_label, best, bands)
    none = values[labels.index(_NONE_LABEL)] if _NONE_LABEL in labels else 0.0
    if best - none < NEAR_NOTHING and confidence >= bands.act:
        confidence = bands.ask  # nearly as like nothing as like the intent: asked, not acted on
    return SpanScore(kind=kind, score=best, confidence=confidence, moves=moves)


def _pending_answer(
    labels: Sequence[str],
    values: list[float],
    sentence: str,
    context: ReadingContext,
    calibration: Calibration,
    bands: Bands,
) -> SpanScore | None:
    """With a question pending, a short reply that reads as one of its answers at the ask
    band is that answer, even when another intent scores higher: "no, forget it" declines,
    "yup, keep that" agrees; neither asks hrm to forget anything."""
    answers = answers_for(context.pending)
    if not answers or len(sentence.split()) > _ANSWER_WORDS:
        return None
    scored = [(values[labels.index(k.value)], k) for k in answers if k.value in labels]
    if not scored:
        return None
    best, kind = max(scored, key=lambda pair: pair[0])
    confidence = calibration.confidence(kind.value, best, bands)
    if confidence < bands.ask:
        return None
    return SpanScore(kind=kind, score=best, confidence=confidence)


_ANSWER_WORDS = 6
"""Words of a reply that may be an answer: a longer one says something of its own."""

_CLAUSE_BREAK = re.compile(r"[,;:]\s+|\s+(?:and|but|then|so|also)\s+|\s+[—–-]\s+|[.!?]\s*")
_CLAUSE_WORDS = 9
"""Sentences up to this many words are also read clause by clause: "thanks, bye!" joins two
moves; a longer sentence with a comma is far more often one thought with a clause or two."""


def _without_task(kind: IntentKind, said: str, span: Span) -> Span:
    """A fact's span without the request for the assistant after it ("remember that my flight
    is at 9, so remind me tomorrow"): that is answered, not kept (D451)."""
    if kind is not IntentKind.FACT:
        return span
    task = task_start(said[span[0] : span[1]])
    return span if task is None or task == 0 else (span[0], span[0] + task)


def _clauses(said: str, span: Span) -> list[Span]:
    """The clauses of a short sentence as spans (at most four), or none when it has one."""
    start, end = span
    if len(said[start:end].split()) > _CLAUSE_WORDS:
        return []
    clauses: list[Span] = []
    at = start
    for cut in _CLAUSE_BREAK.finditer(said, start, end):
        _add_clause(said, at, cut.start(), clauses)
        at = cut.end()
    _add_clause(said, at, end, clauses)
    return clauses[:4] if len(clauses) >= 2 else []


def _add_clause(said: str, start: int, end: int, clauses: list[Span]) -> None:
    while start < end and not said[start].isalnum():
        start += 1
    while end > start and not (said[end - 1].isalnum() or said[end - 1] in "?!."):
        end -= 1
    if start < end:
        clauses.append((start, end))


def _clip(sentence: str) -> str:
    """The sentence as the model reads it: without what opens it before what it says ("OK
    so", "Unrelated:", which the examples do not hold and which pulled "ok forget the
    password I just gave you" below the ask band, D406), its first `MAX_WORDS` words, control
    characters and lone surrogates (which the tokenizer cannot encode) replaced by spaces."""
    words = without_opening(sentence[: MAX_WORDS * 24]).split()[:MAX_WORDS]
    return readable(" ".join(words)).strip() or "."


_SHARED: dict[tuple[str, str], ExemplarReader] = {}
_SHARED_LOCK = threading.Lock()


def load_exemplar_reader(
    *, cache_dir: Path | None = None, bands: Bands | None = None, setting: str = "auto"
) -> ExemplarReader | None:
    """The process's exemplar reader, or None when ``reading.sentence_model`` (`setting`) is
    off, or auto and the `embeddings` extra is not installed.

    Cheap: nothing is loaded until the first read (or `ExemplarReader.warm`); the sentence
    model loads once per process and is shared by every reader this returns.

    Args:
        cache_dir: The home's ``cache/`` folder, where the exemplar index is kept.
        bands: The act and ask thresholds (default `Bands()`).
        setting: ``auto``, ``on`` or ``off`` (``reading.sentence_model``).

    Raises:
        HRMError: ``VALIDATION_FAILED`` when `setting` is on and the extra is not installed.
    """
    if setting == "off":
        return None
    from hrm.continuity.embeddings import EMBEDDINGS_INSTALL_HINT, available

    if not available():
        if setting == "on":
            from hrm.errors import HRMError

            raise HRMError.validation_failed(
                "reading.sentence_model is on but the embeddings extra is not installed: "
                f"{EMBEDDINGS_INSTALL_HINT}",
                key="reading.sentence_model",
            )
        return None
    key = (str(cache_dir), repr(bands or Bands()))
    with _SHARED_LOCK:
        reader = _SHARED.get(key)
        if reader is None:
            reader = ExemplarReader(_shared_model(), cache_dir=cache_dir, bands=bands)
            _SHARED[key] = reader
        return reader


class _LazyEmbedder:
    """The MiniLM embedder, loaded on the first `encode` (about a second), once per process."""

    def __init__(self) -> None:
        from hrm.continuity.embeddings import MODEL_ID

        self.model_id = MODEL_ID
        self.dimension = 384
        self._lock = threading.Lock()
        self._model: EmbeddingModel | None = None

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        with self._lock:
            if self._model is None:
                from hrm.continuity.embeddings import Embedder

                self._model = Embedder.load(threads=1)
            model = self._model
        return model.encode(texts)


_MODEL: _LazyEmbedder | None = None


def _shared_model() -> _LazyEmbedder:
    global _MODEL
    if _MODEL is None:
        _MODEL = _LazyEmbedder()
    return _MODEL
