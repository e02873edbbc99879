"""Requests said in a language hrm does not read get a note, never silence (D494)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.reading.other_languages import asks_in_another_language


@pytest.mark.parametrize(
    ("said", "asks"),
    [
        ("Je préfère les réponses en français", True),
        ("Prefiero respuestas cortas", True),
        ("Recuerda que mi cumpleaños es el 5 de mayo", True),
        ("Merke dir bitte: mein Zug fährt um 8 Uhr", True),
        ("Ricordati che il mio volo è alle 9", True),
        ("Lembre-se: prefiro café sem açúcar", True),
        ("How do I configure nginx?", False),
        ("I prefer metric units", False),
        ("the café on rue de la Paix is nice", False),
        ("", False),
    ],
)
def test_a_request_word_of_another_language_is_found(said: str, asks: bool) -> None:
    assert asks_in_another_language(said) is asks


def test_the_person_is_told_and_nothing_is_kept(tmp_path: Path) -> None:
    with HRM.open(HRMHome(tmp_path / "home"), "ADMIN", "offline") as h:
        told = h.turn("Je préfère les réponses en français")
        english = h.turn("How do I configure nginx?")
        assert not [k for k in h.stack.canon() if k.startswith(("preference.", "fact."))]
    assert "I read requests to keep or forget things in English only" in told.response
    assert "English only" not in english.response
