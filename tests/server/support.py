"""Live `hrm serve` processes and a scripted OpenAI-compatible upstream, for the server tests.

`ServerProcess` starts ``hrm serve`` as a real subprocess on a free loopback port and reads
its stderr on a thread, so a test waits for a line (the start announcement, an access-log
line) as an event instead of sleeping. `Upstream` is a model server on loopback speaking
OpenAI's chat-completions protocol: a message containing ``HOLD`` makes it stop, before its
first word or after it, until the test releases it, so a test controls exactly when a turn's
model call ends.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from hrm.home import HRMHome

HRM = [sys.executable, "-m", "hrm.cli"]
WAIT_S = 120.0
"""The longest any test waits for an event that must come (a bound, not a pace)."""

_ANNOUNCE = re.compile(r"hrm serve: http://127\.0\.0\.1:(\d+)/")
_CLEAN_PREFIXES = ("HRM_", "LLM_", "OPENAI_", "ANTHROPIC_")


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a server under test: no provider or hrm settings but these."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_CLEAN_PREFIXES)}
    env.update({"HRM_HOME": str(home), "PYTHONUNBUFFERED": "1", "HRM_RESIDENT": "0", **extra})
    return env


def create_key(home: Path, user: str, *, admin: bool = False) -> str:
    """A new key for `user`, made with the real command."""
    args = [*HRM, "serve", "keys", "create", "--user", user, "--home", str(home), "--json"]
    if admin:
        args.append("--admin")
    done = subprocess.run(
        args, capture_output=True, text=True, check=True, env=clean_env(home), timeout=WAIT_S
    )
    key: str = json.loads(done.stdout)["key"]
    return key


class ServerProcess:
    """``hrm serve`` running in a subprocess on a free loopback port."""

    def __init__(self, home: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.home = home
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self.process = subprocess.Popen(
            [*HRM, "serve", "--home", str(home), "--port", "0", *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, env=env or clean_env(home, HRM_PROVIDER="offline"),
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        found = self.wait_for(_ANNOUNCE)
        self.port = int(found.group(1))
        self.base_url = f"http://127.0.0.1:{self.port}"

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self.lines.append("<eof>")
            self._changed.notify_all()

    def wait_for(self, pattern: re.Pattern[str] | str, *, start: int = 0) -> re.Match[str]:
        """The first stderr line from `start` on that matches; fails on exit or after WAIT_S."""
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + WAIT_S
        with self._changed:
            while True:
                for line in self.lines[start:]:
                    if (found := regex.search(line)) is not None:
                        return found
                if "<eof>" in self.lines:
                    raise AssertionError(
                        f"hrm serve exited ({self.process.poll()}) before printing "
                        f"{regex.pattern!r}:\n" + "\n".join(self.lines)
                    )
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"no line {regex.pattern!r} in {WAIT_S} s")
                self._changed.wait(remaining)

    def client(self, key: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=WAIT_S)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Send `sig` and wait for the process to end; its exit code."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        code = self.process.wait(timeout=WAIT_S)
        self._reader.join(timeout=WAIT_S)
        if self.process.stderr is not None:
            self.process.stderr.close()
        return code

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.stop(signal.SIGKILL)


def ledger_sizes(home: Path) -> dict[str, int]:
    """Every ledger file of the home with its size: "nothing written" is this unchanged."""
    root = HRMHome(home)
    return {str(p.relative_to(home)): p.stat().st_size for p in root.all_ledgers() if p.exists()}


def turn_records(home: Path, agent_class: str) -> list[dict[str, Any]]:
    """The `turn` records of a stack's decision ledger, read from the file."""
    path = HRMHome(home).decision_ledger(agent_class)
    if not path.exists():
        return []
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [r for r in records if r["kind"] == "turn"]


# ── a scripted upstream model ─────────────────────────────────────────────


@dataclass
class Upstream:
    """An OpenAI-compatible model server on loopback whose replies a test scripts."""

    words: tuple[str, ...] = ("Hello", " from", " the", " upstream", " model.")
    status: int = 200
    """Answer every call with this status (429, 500 …) instead of a reply."""
    fail_after_first_word: bool = False
    """Streaming: an error event after the first word, as a provider falling over mid-answer."""
    entered: threading.Event = field(default_factory=threading.Event)
    """Set when a HOLD call has arrived (and, streaming, sent its first word)."""
    release: threading.Event = field(default_factory=threading.Event)
    calls: list[dict[str, Any]] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def serve(self) -> Iterator[Upstream]:
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                upstream.calls.append(body)
                upstream.answer(self, body)

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.release.set()
            self.server.shutdown()
            self.server.server_close()

    def answer(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if self.status != 200:
            payload = json.dumps({"error": {"message": "scripted failure", "type": "x"}})
            self._send(handler, self.status, "application/json", payload.encode())
            return
        last = str(body["messages"][-1].get("content"))
        hold = "HOLD" in last
        if not body.get("stream"):
            if hold:
                self.entered.set()
                self.release.wait(WAIT_S)
            self._send(handler, 200, "application/json", json.dumps(_completion(
                "".join(self.words), body)).encode())
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Connection", "close")
        handler.end_headers()
        for index, word in enumerate(self.words):
            handler.wfile.write(_event(_chunk({"content": word}, body)))
            handler.wfile.flush()
            if self.fail_after_first_word:
                handler.wfile.write(_event({"error": {"message": "overloaded", "type": "x"}}))
                handler.wfile.flush()
                handler.close_connection = True
                return
            if hold and index == 0:
                self.entered.set()
                self.release.wait(WAIT_S)
        handler.wfile.write(_event(_chunk({}, body, finish="stop")))
        handler.wfile.write(_event({**_chunk(None, body), "usage": {
            "prompt_tokens": 7, "completion_tokens": len(self.words), "total_tokens": 12}}))
        handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()
        handler.close_connection = True

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, kind: str, payload: bytes) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", kind)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)


class _QuietServer(ThreadingHTTPServer):
    """A client (hrm) hanging up on the upstream is part of the tests, not an error."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _completion(text: str, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "up-1", "object": "chat.completion", "created": 1, "model": body["model"],
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12},
    }


def _chunk(delta: dict[str, Any] | None, body: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "up-1", "object": "chat.completion.chunk", "created": 1, "model": body["model"],
        "choices": [] if delta is None else [
            {"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _event(data: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(data).encode() + b"\n\n"


def upstream_config(home: Path, upstream: Upstream) -> None:
    """Point the home's model at `upstream` (OpenAI-compatible, no retries)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        "llm:\n  provider: openai\n"
        f"  base_url: {upstream.base_url}\n"
        "  model: scripted-model\n  max_retries: 0\n  timeout_ms: 120000\n"
    )


def start_on_upstream(home: Path, upstream: Upstream, *args: str) -> ServerProcess:
    """``hrm serve`` over `home` (with `args`), its model the scripted `upstream`."""
    upstream_config(home, upstream)
    return ServerProcess(home, *args, env=clean_env(home, OPENAI_API_KEY="sk-test-upstream"))


def post_chat(server: ServerProcess, key: str, text: str, **extra: object) -> httpx.Response:
    """One chat completion of `text` with `key` (`extra`: more body fields)."""
    with server.client(key) as http:
        return http.post("/v1/chat/completions", json={
            "model": "hrm", "messages": [{"role": "user", "content": text}], **extra})
