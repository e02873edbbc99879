"""Redaction: a forgotten text leaves a ledger's records and the chain still verifies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hrm.errors import ErrorCode, HRMError
from hrm.storage import Ledger, verify_ledger
from hrm.storage._ledger_format import REDACTION_KIND
from hrm.storage.redaction import MARKER, Needles, redact_items, redact_ledger

TEXT = "I live in Lisbon"


def fill(path: Path, texts: list[str]) -> list[str]:
    with Ledger(path) as ledger:
        return [ledger.append("turn", {"input": t, "n": i}).hash for i, t in enumerate(texts)]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "ledger" / "decisions.jsonl"


def test_the_text_leaves_the_records_and_the_chain_still_verifies(path: Path) -> None:
    hashes = fill(path, ["hello", f"Remember that {TEXT}", "weather?", f"{TEXT.lower()}!"])
    done = redact_ledger(path, Needles([TEXT]))
    assert done is not None and done.seqs == [2, 4] and done.record_seq == 5
    assert TEXT.lower().encode() not in path.read_bytes().lower()
    report = verify_ledger(path)
    assert report.ok and report.records == 5, report.describe()
    with Ledger(path, read_only=True) as ledger:
        records = list(ledger.records())
    assert [r.hash for r in records[:4]] == hashes  # every record keeps its hash
    assert records[1].redacted and records[1].data["input"] == f"Remember that {MARKER}"
    assert not records[0].redacted and records[0].data["input"] == "hello"
    note = records[4]
    assert note.kind == REDACTION_KIND and [e["seq"] for e in note.data["records"]] == [2, 4]
    assert "Lisbon" not in json.dumps(note.data)  # it names records, never the text


def test_a_redacted_line_changed_afterwards_fails_verification(path: Path) -> None:
    fill(path, [f"Remember that {TEXT}", "next"])
    redact_ledger(path, Needles([TEXT]))
    raw = path.read_bytes().replace(MARKER.encode(), b"[something else]", 1)
    path.write_bytes(raw)
    report = verify_ledger(path)
    assert not report.ok and report.first_error is not None
    assert "no later redaction record vouches" in report.first_error.reason


def test_a_line_marked_redacted_without_a_redaction_record_fails(path: Path) -> None:
    fill(path, ["one", "two"])
    lines = path.read_bytes().splitlines(keepends=True)
    lines[0] = lines[0].replace(b'"one"', b'"uno"').replace(b',"seq":', b',"redacted":true,"seq":')
    path.write_bytes(b"".join(lines))
    assert not verify_ledger(path).ok


def test_appends_after_a_redaction_chain_onto_it_even_from_a_handle_open_before(
    path: Path,
) -> None:
    fill(path, [f"Remember that {TEXT}"] * 3)
    with Ledger(path) as open_before:
        open_before.append("turn", {"input": "before"})
        redact_ledger(path, Needles([TEXT]))
        after = open_before.append("turn", {"input": "after"})
    assert after.seq == 6
    assert verify_ledger(path).ok


def test_an_interrupted_rewrite_is_finished_by_the_next_writer(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(path, [f"Remember that {TEXT}", "two", "three"])
    import hrm.storage._rewrite as rewrite

    def crash(fd: int, *args: object) -> None:
        import os

        os.pwrite(fd, b"garbage", 0)  # half done, then the process dies
        raise KeyboardInterrupt

    monkeypatch.setattr(rewrite, "_apply", crash)
    with pytest.raises(KeyboardInterrupt):
        redact_ledger(path, Needles([TEXT]))
    monkeypatch.undo()
    assert path.with_name(path.name + ".rewrite").exists()
    assert not verify_ledger(path).ok  # read-only: reported, not finished
    with Ledger(path) as ledger:  # any writable open finishes it
        assert ledger.last() is not None
    assert not path.with_name(path.name + ".rewrite").exists()
    assert verify_ledger(path).ok
    assert b"Lisbon" not in path.read_bytes()


def test_a_ledger_without_the_text_is_left_as_it_was(path: Path) -> None:
    fill(path, ["one", "two"])
    before = path.read_bytes()
    assert redact_ledger(path, Needles([TEXT])) is None
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "stored",
    [
        pytest.param(TEXT.upper(), id="other-case"),
        pytest.param(json.dumps({"value": TEXT}), id="json-inside-a-string"),
        pytest.param(json.dumps({"value": "Moved to São Paulo"}), id="escaped-non-ascii"),
        pytest.param("Moved to São Paulo", id="non-ascii"),
    ],
)
def test_every_stored_form_of_the_text_is_found(path: Path, stored: str) -> None:
    fill(path, [stored])
    needle = "São Paulo" if "Paulo" in stored else TEXT
    redact_ledger(path, Needles([needle]))
    raw = path.read_bytes().lower()
    assert b"lisbon" not in raw and b"paulo" not in raw
    assert verify_ledger(path).ok


def test_a_text_too_short_to_forget_safely_is_refused() -> None:
    with pytest.raises(HRMError) as refused:
        Needles(["a "])
    assert refused.value.code is ErrorCode.VALIDATION_FAILED


def test_the_turn_that_asks_to_forget_does_not_write_the_text_down() -> None:
    items = [("turn", {"input": f"Forget that {TEXT}", "state": {"last": [TEXT]}, "n": 3})]
    (kind, data), = redact_items(items, [TEXT])
    assert kind == "turn" and data == {
        "input": f"Forget that {MARKER}", "state": {"last": [MARKER]}, "n": 3,
    }
    assert redact_items(items, []) == items


_WORDS = st.text(alphabet="abcdefghij ", min_size=0, max_size=12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=st.lists(st.tuples(_WORDS, st.booleans(), _WORDS), min_size=1, max_size=8),
)
def test_any_placement_of_the_text_is_removed_and_the_ledger_verifies(
    tmp_path_factory: pytest.TempPathFactory, texts: list[tuple[str, bool, str]]
) -> None:
    path = tmp_path_factory.mktemp("r") / "l.jsonl"
    secret = "Quux Zorblat"
    fill(path, [f"{a}{secret if put else ''}{b}" for a, put, b in texts])
    redact_ledger(path, Needles([secret]))
    assert b"zorblat" not in path.read_bytes().lower()
    report = verify_ledger(path)
    assert report.ok, report.describe()


@pytest.mark.parametrize("damaged", ["the-redacted-record", "the-redaction-record"])
def test_a_quarantine_sets_aside_a_redacted_record_nothing_vouches_for(
    path: Path, damaged: str
) -> None:
    """Found by the fault trials: damage to a redacted record, or to the record that vouches
    for it, must not leave an unvouched redacted record in the kept part."""
    from hrm.storage import quarantine_damage

    fill(path, ["one", f"Remember that {TEXT}", "three", "four"])
    redact_ledger(path, Needles([TEXT]))  # record 2 redacted, record 5 vouches for it
    lines = path.read_bytes().splitlines(keepends=True)
    target = 1 if damaged == "the-redacted-record" else 4
    lines[target] = lines[target].replace(b"[forgotten]", b"[forgottEn]").replace(
        b'"reason":"forget"', b'"reason":"fOrget"'
    )
    path.write_bytes(b"".join(lines))
    assert not verify_ledger(path).ok
    report = quarantine_damage(path)
    assert report.kept_records == 1  # "one": everything from the unvouched record on is reread
    after = verify_ledger(path)
    assert after.ok, after.describe()
    with Ledger(path, read_only=True) as ledger:
        inputs = [r.data.get("input") for r in ledger.records() if r.kind == "turn"]
    assert inputs == ["one", "three", "four"]  # the unvouched record alone is set aside
