"""The turn's text cleaning: control characters dropped, lone surrogates replaced, NFC."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import example, given
from hypothesis import strategies as st

from hrm.turn_state import clean_text

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


_ANY = st.characters(categories=["Cs", "Cc", "Cf", "Ll", "Lu", "Lo", "Mn", "Nd", "Po", "Zs"])


@given(st.one_of(st.text(max_size=60), st.text(alphabet=_ANY, max_size=60)))
@example("plain ascii\n\twith a tab")
@example("bell\x07 and del\x7f")
@example("cafe\u0301 \udcff")
def test_cleaning_is_the_rule_whatever_the_text(text: str) -> None:
    expected = unicodedata.normalize("NFC", _SURROGATE.sub("\ufffd", _CONTROL.sub("", text)))
    assert clean_text(text) == expected
