"""Messages between `hrm turn` and the resident process: length-prefixed JSON on a Unix socket.

Hand-written over the standard library's socket and json: the client side runs at the start of
every `hrm turn`, before anything else of hrm is imported (its whole cost is a few ms).
"""

from __future__ import annotations

import json
import socket
import struct

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs `hrm turn` ~2 ms
if TYPE_CHECKING:
    from typing import Any

PROTOCOL = 1
"""Bumped when a message changes shape; each side refuses the other's other versions."""

MAX_MESSAGE = 16 * 1024 * 1024
"""A request carries an environment and arguments: far below this, whatever a shell allows."""

STDIO_FDS = 3
_LENGTH = struct.Struct("!I")


class WireError(Exception):
    """The other side closed, or sent something that is not a message of this protocol."""


def encode(message: dict[str, Any]) -> bytes:
    """One message: its length, then its JSON."""
    body = json.dumps(message, separators=(",", ":")).encode()
    return _LENGTH.pack(len(body)) + body


def send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.sendall(encode(message))


def send_with_fds(sock: socket.socket, message: dict[str, Any], fds: list[int]) -> None:
    """Send `message` with `fds` attached to its first bytes (``SCM_RIGHTS``)."""
    data = encode(message)
    sent = socket.send_fds(sock, [data], fds)
    if sent < len(data):
        sock.sendall(data[sent:])


def _read_exactly(sock: socket.socket, size: int, start: bytes = b"") -> bytes:
    chunks = [start]
    have = len(start)
    while have < size:
        chunk = sock.recv(min(size - have, 1 << 20))
        if not chunk:
            raise WireError("the connection closed inside a message")
        chunks.append(chunk)
        have += len(chunk)
    return b"".join(chunks)


def _decode(sock: socket.socket, head: bytes) -> dict[str, Any]:
    """The message whose first bytes (some of its length) are `head`."""
    (size,) = _LENGTH.unpack(_read_exactly(sock, _LENGTH.size, head))
    if size > MAX_MESSAGE:
        raise WireError(f"a message of {size} bytes is larger than {MAX_MESSAGE}")
    body = _read_exactly(sock, size)
    try:
        message = json.loads(body)
    except ValueError as exc:
        raise WireError(f"a message is not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise WireError("a message is not a JSON object")
    return message


def receive(sock: socket.socket) -> dict[str, Any] | None:
    """The next message, or ``None`` when the other side closed between messages."""
    head = sock.recv(_LENGTH.size)
    if not head:
        return None
    return _decode(sock, head)


def receive_with_fds(sock: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """A message and the descriptors that came with it (closed here if the message is bad)."""
    head, fds, _flags, _address = socket.recv_fds(sock, _LENGTH.size, STDIO_FDS)
    try:
        if not head:
            raise WireError("the connection closed before a request")
        return _decode(sock, head), fds
    except BaseException:
        for fd in fds:
            socket.close(fd)
        raise
