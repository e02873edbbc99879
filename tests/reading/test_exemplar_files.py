"""Exemplar files: the shipped ones are sound, and a malformed one fails naming file and line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hrm.errors import ErrorCode, HRMError
from hrm.reading import IntentKind
from hrm.reading.exemplar_files import load_exemplars, parse_exemplar_file

DEVSET = Path(__file__).parent / "data" / "devset"


def normal(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9']+", text.lower()))


def test_every_intent_and_none_have_examples() -> None:
    labels = load_exemplars().labels
    assert set(labels) == {k.value for k in IntentKind} | {"none"}


def test_no_example_is_a_labelled_message() -> None:
    """Exemplars are written in other words than the labelled set: a copy would make the
    thresholds fitted on dev (and the held-out figures) flatter the tier."""
    texts = {
        normal(json.loads(line)["text"])
        for file in DEVSET.glob("*.jsonl")
        for line in file.read_text(encoding="utf-8").splitlines()
    }
    copies = [e.text for e in load_exemplars().examples if normal(e.text) in texts]
    assert copies == []


def test_the_digest_follows_the_content(tmp_path: Path) -> None:
    (tmp_path / "none.txt").write_text("the sky is blue\n", encoding="utf-8")
    (tmp_path / "thanks.txt").write_text("# comment\nthanks a lot\n", encoding="utf-8")
    first = load_exemplars(tmp_path)
    (tmp_path / "thanks.txt").write_text("thanks a lot\ncheers\n", encoding="utf-8")
    second = load_exemplars(tmp_path)
    assert [e.line for e in first.examples] == [1, 2]
    assert first.digest != second.digest and len(second.examples) == 3


@pytest.mark.parametrize(
    ("name", "content", "where", "says"),
    [
        pytest.param("prefs.txt", b"I like tea\n", "prefs.txt", "names no intent", id="unknown-name"),
        pytest.param("thanks.txt", b"thanks\n\xff\xfe oops\n", "thanks.txt:2", "not UTF-8", id="not-utf8"),
        pytest.param("thanks.txt", b"thanks\nty\x07\n", "thanks.txt:2", "U+0007", id="control-char"),
        pytest.param("thanks.txt", b"# only a comment\n\n", "thanks.txt", "no example", id="empty"),
        pytest.param("thanks.txt", b"thanks\n" + b"a" * 201 + b"\n", "thanks.txt:2", "201 characters", id="too-long"),
        pytest.param("thanks.txt", b"thanks\n?!...\n", "thanks.txt:2", "no letter", id="no-letter"),
        pytest.param("thanks.txt", b"thanks\n#c\nThanks \n", "thanks.txt:3", "line 1", id="twice"),
    ],
)
def test_a_malformed_file_fails_naming_file_and_line(
    name: str, content: bytes, where: str, says: str
) -> None:
    with pytest.raises(HRMError) as info:
        parse_exemplar_file(name, content)
    assert info.value.code is ErrorCode.PARSE_ERROR
    assert info.value.message.startswith(where + (":" if ":" in where else ""))
    assert says in info.value.message


def test_an_example_in_two_files_fails_naming_both(tmp_path: Path) -> None:
    (tmp_path / "none.txt").write_text("ok then\n", encoding="utf-8")
    (tmp_path / "yes.txt").write_text("sure\nOK  then\n", encoding="utf-8")
    with pytest.raises(HRMError) as info:
        load_exemplars(tmp_path)
    assert "yes.txt:2" in info.value.message and "none.txt:1" in info.value.message


def test_a_folder_without_near_misses_fails(tmp_path: Path) -> None:
    (tmp_path / "thanks.txt").write_text("thanks\n", encoding="utf-8")
    with pytest.raises(HRMError, match=r"none\.txt"):
        load_exemplars(tmp_path)


def test_crlf_files_load() -> None:
    examples = parse_exemplar_file("goodbye.txt", b"bye\r\nsee you\r\n")
    assert [e.text for e in examples] == ["bye", "see you"]
