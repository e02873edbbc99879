"""A real HTTP server on 127.0.0.1 that speaks enough of OpenAI's chat API for a turn.

Tests point ``llm.base_url`` at it to see what a turn really sends (which requests, with which
``Authorization`` header) and how hrm ends a turn whose server answers 500 or never answers.
Loopback only: the tests' network guard lets nothing else through.
"""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Mode = Literal["answer", "error500", "hang"]
ANSWER = "Hello from the loopback server."


@dataclass(frozen=True)
class SeenRequest:
    """One request the server received."""

    path: str
    authorization: str | None
    body: dict[str, Any]


@dataclass
class LoopbackModel:
    """The server; a context manager that starts it on a free port and stops it."""

    mode: Mode = "answer"
    requests: list[SeenRequest] = field(default_factory=list)
    _release: threading.Event = field(default_factory=threading.Event)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """The base URL a config gives the openai provider."""
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def carrying(self, key: str) -> list[SeenRequest]:
        """The requests that carried `key` as their bearer token."""
        return [r for r in self.requests if r.authorization == f"Bearer {key}"]

    def __enter__(self) -> LoopbackModel:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()  # a hanging handler lets go
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def closed_port_url() -> str:
    """A base URL on a loopback port nothing listens on: connections are refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _handler(model: LoopbackModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            model.requests.append(
                SeenRequest(self.path, self.headers.get("Authorization"), body)
            )
            if model.mode == "hang":
                model._release.wait()
                return
            if model.mode == "error500":
                self._send(500, "application/json", b'{"error": {"message": "overloaded"}}')
                return
            if body.get("stream"):
                self._send(200, "text/event-stream", _stream())
                return
            self._send(200, "application/json", json.dumps(_completion()).encode())

        def _send(self, status: int, kind: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


_USAGE = {"prompt_tokens": 12, "completion_tokens": 6, "total_tokens": 18}


def _completion() -> dict[str, Any]:
    return {
        "id": "chatcmpl-loopback", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": ANSWER}}],
        "usage": _USAGE,
    }


def _stream() -> bytes:
    base = {"id": "chatcmpl-loopback", "object": "chat.completion.chunk", "created": 0,
            "model": "m"}
    chunks = [
        {**base, "choices": [{"index": 0, "finish_reason": None,
                              "delta": {"role": "assistant", "content": ANSWER}}]},
        {**base, "choices": [{"index": 0, "finish_reason": "stop", "delta": {}}]},
        {**base, "choices": [], "usage": _USAGE},
    ]
    lines = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]
    return "".join(lines).encode()
