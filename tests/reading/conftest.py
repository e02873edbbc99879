"""Fixtures for the reading tiers: one real exemplar reader per session (it loads MiniLM)."""

from __future__ import annotations

import pytest

from hrm.continuity.embeddings import available
from hrm.reading.sentence import ExemplarReader, load_exemplar_reader


@pytest.fixture(scope="session")
def exemplar_reader() -> ExemplarReader:
    """The shipped exemplar tier on the real sentence model (skips without the extra)."""
    if not available():
        pytest.skip("needs the embeddings extra")
    reader = load_exemplar_reader()
    assert reader is not None
    reader.warm()
    return reader
