"""Reading what a message means: one `Reading` of typed intents from tiered readers.

See `hrm.reading.types` for the records every reader returns.
"""

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
)

__all__ = [
    "ANSWERS",
    "COMMANDS",
    "Band",
    "Bands",
    "Cues",
    "Intent",
    "IntentKind",
    "Reader",
    "Reading",
    "ReadingContext",
    "Slots",
]
