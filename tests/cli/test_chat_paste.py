"""A paste into `hrm chat` on a real terminal is one message, not a turn per line.

Run on a pseudo-terminal, as a person's terminal runs it: `input` reads a tty only there.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hrm.pipeline import HRM

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")

PROMPT = "you › ".encode()
PASTE = (
    "I'm getting this error:\n"
    "Traceback (most recent call last):\n"
    '  File "app.py", line 3, in <module>\n'
    "ValueError: boom\n"
)


class _Terminal:
    """`hrm chat` on the slave side of a pty; the test types and reads on the master side."""

    def __init__(self, home: Path) -> None:
        self.master, slave = os.openpty()
        env = {**os.environ, "TERM": "xterm", "COLUMNS": "120", "NO_COLOR": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hrm", "chat", "--home", str(home), "--provider", "offline"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.seen = b""

    def wait_for_prompts(self, count: int, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while self.seen.count(PROMPT) < count:
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise AssertionError(f"no prompt {count}; the terminal showed:\n{self.text}")
            ready, _, _ = select.select([self.master], [], [], 0.5)
            if ready:
                try:
                    self.seen += os.read(self.master, 65536)
                except OSError:  # the chat closed the terminal
                    break

    def type(self, data: str) -> None:
        os.write(self.master, data.encode())

    def close(self) -> None:
        if self.process.poll() is None:
            self.type("/quit\n")
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        os.close(self.master)

    @property
    def text(self) -> str:
        return self.seen.decode(errors="replace")


@pytest.mark.parametrize(
    "paste",
    [
        pytest.param(PASTE, id="lines-as-typed"),
        pytest.param(f"\x1b[200~{PASTE.rstrip()}\x1b[201~\r", id="bracketed-paste"),
    ],
)
def test_a_pasted_traceback_is_one_turn(tmp_path: Path, paste: str) -> None:
    home = tmp_path / "home"
    terminal = _Terminal(home)
    try:
        terminal.wait_for_prompts(1)
        terminal.type(paste)
        terminal.wait_for_prompts(2)
        terminal.type("What does it mean?\n")
        terminal.wait_for_prompts(3)
    finally:
        terminal.close()
    with HRM.open(home, "ADMIN", "offline") as h:
        said = [item["input"] for item in h.history(10)]
    assert said == [PASTE.rstrip("\n"), "What does it mean?"]
