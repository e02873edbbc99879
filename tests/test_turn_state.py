"""The turn state's text: cleaning (control characters dropped, lone surrogates replaced, NFC)
and the recent exchanges rebuilt from stored turns."""

from __future__ import annotations

import re
import unicodedata
from types import SimpleNamespace

from hypothesis import example, given
from hypothesis import strategies as st

from hrm.turn.state import clean_text, recent_exchange, recent_from, topic_of

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


def _turn(data: dict) -> SimpleNamespace:
    return SimpleNamespace(kind="turn", data={"input": "hi", "response": "hello", **data})


def test_rebuilt_exchanges_say_which_problem_and_what_kind_each_was() -> None:
    records = [
        _turn({"topic": "prob_a", "state": {"last_topic": {"problem_id": "prob_b"}}}),
        # written before D80: the state's last topic names the problem
        _turn({"state": {"last_topic": {"problem_id": "prob_b", "keywords": []}}}),
        _turn({"kind": "preference", "state": {"last_topic": None}}),
        _turn({"topic": 7, "state": "not a state"}),
        SimpleNamespace(kind="problem_resolved", data={}),
    ]
    rebuilt = recent_from(records)
    assert [t.get("problem") for t in rebuilt] == ["prob_a", "prob_b", None, None]
    assert [t.get("kind") for t in rebuilt] == [None, None, "preference", None]
    assert recent_exchange("a", 1, "b", 1, problem="prob_a")["problem"] == "prob_a"
    assert "problem" not in recent_exchange("a", 1, "b", 1)
    assert topic_of({"last_topic": {"problem_id": ""}}) is None
