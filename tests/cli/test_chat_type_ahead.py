"""`hrm chat` keeps what is typed during an answer out of it, sends it next, and wraps the
answer at word boundaries (issue 33 §6, D285)."""

from __future__ import annotations

import os
import select
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from hrm.cli import _chat_input
from hrm.cli._chat_input import ChatInput, TypeAhead, Typed, WordWrap, parse_typed
from hrm.cli.app import app
from hrm.pipeline import HRM


@pytest.mark.parametrize(
    ("keys", "lines", "partial"),
    [
        (b"what about Porto?\r", ("what about Porto?",), ""),
        (b"one\r\ntwo\n", ("one", "two"), ""),
        (b"ab\x7fc\r", ("ac",), ""),
        (b"ab\x08\x08xy\r", ("xy",), ""),
        (b"wrong\x15right\r", ("right",), ""),
        (b"\x1b[Dleft\x1bOAup\r", ("leftup",), ""),
        (b"\r\r  \rsent\rhalf", ("sent",), "half"),
        (b"caf\xc3\xa9\r", ("café",), ""),
        (b"", (), ""),
    ],
)
def test_typed_keys_are_read_as_a_terminal_would_edit_them(
    keys: bytes, lines: tuple[str, ...], partial: str
) -> None:
    assert parse_typed(keys) == Typed(lines, partial)


_words = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=12)


@given(st.lists(st.lists(_words, min_size=1, max_size=5).map(" ".join), max_size=6))
def test_every_finished_line_comes_back_in_order(lines: list[str]) -> None:
    typed = parse_typed("".join(line + "\r" for line in lines).encode())
    assert typed.lines == tuple(lines) and typed.partial == ""


@given(st.lists(_words, max_size=40), st.integers(8, 60), st.lists(st.integers(1, 7), max_size=10))
def test_the_wrap_keeps_every_word_and_breaks_only_between_them(
    words: list[str], width: int, cuts: list[int]
) -> None:
    text = " ".join(words)
    wrap, out, at = WordWrap(width), [], 0
    for cut in cuts:  # the stream arrives in arbitrary pieces
        out.append(wrap.feed(text[at : at + cut]))
        at += cut
    out.append(wrap.feed(text[at:]) + wrap.flush())
    shown = "".join(out)
    if all(len(word) < width for word in words):
        assert shown.split() == text.split()  # whole words, in order
    else:  # a word as wide as the line is broken where it must be, nothing lost
        assert "".join(shown.split()) == "".join(text.split())
    for line in shown.split("\n"):
        assert len(line) <= width or " " not in line.strip()


def test_a_word_that_does_not_fit_goes_to_the_next_line() -> None:
    wrap = WordWrap(20, column=6)
    shown = wrap.feed("Pack light layers and ") + wrap.feed("comfortable shoes.") + wrap.flush()
    assert shown == "Pack light\nlayers and\ncomfortable shoes."


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_on_a_terminal_keys_typed_meanwhile_are_not_echoed_and_are_collected() -> None:
    import termios

    master, slave = os.openpty()
    try:
        before = termios.tcgetattr(slave)
        ahead = TypeAhead(slave)
        with ahead.quiet():
            assert not termios.tcgetattr(slave)[3] & termios.ECHO
            os.write(master, b"second question\rthird\rhalf a li")
            ready, _, _ = select.select([slave], [], [], 10)  # wait for the keys to arrive
            assert ready
        echoed, _, _ = select.select([master], [], [], 0)
        assert echoed == []  # nothing of it went onto the screen
        assert ahead.typed == Typed(("second question", "third"), "half a li")
        assert termios.tcgetattr(slave) == before  # the terminal is as it was
    finally:
        os.close(master)
        os.close(slave)


def test_off_a_terminal_nothing_changes_and_nothing_is_collected(tmp_path: Path) -> None:
    with (tmp_path / "piped").open("w+b") as piped:
        piped.write(b"next line\n")
        piped.seek(0)
        ahead = TypeAhead(piped.fileno())
        with ahead.quiet():
            pass
        assert ahead.typed == Typed()
        assert piped.read() == b"next line\n"  # left for the next prompt


def test_queued_lines_and_the_unfinished_one_come_out_once() -> None:
    chat_input = ChatInput(_Typing([Typed(("a", "b"), "c")]))
    with chat_input.answering():
        pass
    assert [chat_input.take_queued(), chat_input.take_queued(), chat_input.take_queued()] == [
        "a", "b", None,
    ]
    assert chat_input.take_partial() == "c" and chat_input.take_partial() == ""


class _Typing(TypeAhead):
    """A terminal on which the person types `typed[n]` during the n-th answer."""

    def __init__(self, typed: list[Typed]) -> None:
        super().__init__(None)
        self.script = list(typed)

    def quiet(self) -> Iterator[TypeAhead]:  # type: ignore[override]
        import contextlib

        @contextlib.contextmanager
        def block() -> Iterator[TypeAhead]:
            try:
                yield self
            finally:
                self.typed = self.script.pop(0) if self.script else Typed()

        return block()  # type: ignore[return-value]


def test_a_line_typed_during_an_answer_is_the_next_message_not_part_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    real_turn = HRM.turn

    def turn(self: HRM, text: str, *args: object, **kwargs: object) -> object:
        seen.append(text)
        return real_turn(self, text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(HRM, "turn", turn)
    typing = _Typing([Typed(("And what about Porto?",), "")])
    monkeypatch.setattr(_chat_input, "TypeAhead", lambda fd: typing)
    result = CliRunner().invoke(
        app, ["chat", "--home", str(tmp_path / "home"), "--provider", "offline"],
        input="What should I pack for Lisbon?\n/quit\n",
    )
    assert result.exit_code == 0, result.output
    assert seen == ["What should I pack for Lisbon?", "And what about Porto?"]
    out = result.stdout
    first_answer = out[out.index("hrm ›"): out.index("you › And what about Porto?")]
    assert "Porto" not in first_answer
    assert "(typed while hrm answered: sent now as the next message)" in out
    assert out.count("hrm ›") == 2


def test_status_is_readable_and_json_on_request(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["chat", "--home", str(tmp_path / "home"), "--provider", "offline"],
        input="How do I rename a git branch?\n/status\n/status json\n/quit\n",
    )
    assert result.exit_code == 0, result.output
    out = result.stdout
    readable = out[out.index("stack ADMIN"): out.index("you › {")]
    assert "session" in readable and "turn 1" in readable
    assert "offline" in readable and "not capable of plans and checks" in readable
    assert "1 model calls" in readable and "tokens of 500,000" in readable
    assert "{" not in readable  # words, not a JSON dump
    assert '"stance"' in out  # /status json still gives all of it
