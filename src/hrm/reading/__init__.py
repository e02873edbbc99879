"""Reading what a message means: one `Reading` of typed intents from tiered readers.

See `hrm.reading.types` for the records every reader returns.
"""

from hrm.reading.sentences import MAX_READ_CHARS, sentence_spans
from hrm.reading.types import (
    ANSWERS,
    COMMANDS,
    Band,
    Bands,
    Cues,
    Intent,
    IntentKind,
    Reader,
    Reading,
    ReadingContext,
    Slots,
    Span,
)

__all__ = [
    "ANSWERS",
    "COMMANDS",
    "MAX_READ_CHARS",
    "Band",
    "Bands",
    "Cues",
    "Intent",
    "IntentKind",
    "Reader",
    "Reading",
    "ReadingContext",
    "Slots",
    "Span",
    "sentence_spans",
]
