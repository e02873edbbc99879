"""The resident process's messages and what it refuses: framing, fds, bad input."""

from __future__ import annotations

import os
import socket
import struct
import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.resident import _wire, paths, server

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text(), _json, max_size=6), st.integers(1, 64))
def test_a_message_arrives_whole_however_the_bytes_are_split(
    message: dict[str, Any], chunk: int,
) -> None:
    data = _wire.encode(message)
    left, right = socket.socketpair()
    with left, right:
        def write() -> None:
            for i in range(0, len(data), chunk):
                left.sendall(data[i:i + chunk])

        writer = threading.Thread(target=write)
        writer.start()
        assert _wire.receive(right) == message
        writer.join()


def test_descriptors_travel_with_the_request_and_are_closed_when_it_is_bad() -> None:
    read, write = os.pipe()
    left, right = socket.socketpair()
    with left, right:
        big = {"argv": ["turn", "x" * 300_000]}  # more than a socket buffer: sent in parts
        sender = threading.Thread(target=_wire.send_with_fds, args=(left, big, [write]))
        sender.start()
        message, fds = _wire.receive_with_fds(right)
        sender.join()
        assert message["argv"][1] == "x" * 300_000 and len(fds) == 1
        os.write(fds[0], b"ok")
        assert os.read(read, 2) == b"ok"
        os.close(fds[0])
        header = struct.pack("!I", 5) + b"[1,2]"
        socket.send_fds(left, [header], [write])
        with pytest.raises(_wire.WireError, match="not a JSON object"):
            _wire.receive_with_fds(right)
    os.close(write)
    os.close(read)


@pytest.mark.parametrize(("raw", "error"), [
    (struct.pack("!I", _wire.MAX_MESSAGE + 1), "larger than"),
    (struct.pack("!I", 4) + b"{no}", "not JSON"),
    (struct.pack("!I", 10) + b"{}", "closed inside a message"),
    (b"\x00\x00", "closed inside a message"),
])
def test_what_is_not_a_message_is_an_error_that_says_what(raw: bytes, error: str) -> None:
    left, right = socket.socketpair()
    with right:
        with left:
            left.sendall(raw)
        with pytest.raises(_wire.WireError, match=error):
            _wire.receive(right)


def test_a_closed_connection_between_messages_is_not_an_error() -> None:
    left, right = socket.socketpair()
    with right:
        left.close()
        assert _wire.receive(right) is None


def _request(**changes: Any) -> dict[str, Any]:
    request: dict[str, Any] = {
        "protocol": _wire.PROTOCOL, "installation": paths.installation(), "argv0": "hrm",
        "argv": ["turn", "hi"], "cwd": "/", "env": {"A": "b"}, "umask": 0o022,
        "streams": [["utf-8", "strict"]] * 3, "ignored": [],
    }
    request.update(changes)
    return request


@pytest.mark.parametrize(("changes", "fds", "refusal"), [
    ({}, 3, None),
    ({"protocol": 0}, 3, "protocol 0"),
    ({"installation": "/usr/bin/python3\n/elsewhere/hrm"}, 3, "another Python"),
    ({"argv": ["serve"]}, 3, "not a command this process runs"),
    ({"argv": []}, 3, "not a command this process runs"),
    ({"argv": "turn hi"}, 3, "not a command this process runs"),
    ({"env": {"A": 1}}, 3, "environment"),
    ({"cwd": None}, 3, "working directory"),
    ({"umask": "022"}, 3, "umask"),
    ({"argv0": 7}, 3, "program name"),
    ({"streams": [["utf-8", "strict"]] * 2}, 3, "encodings"),
    ({}, 2, "2 descriptors"),
    ({"ignored": [2, 1]}, 3, None),
    ({"ignored": [9]}, 3, "ignored signals"),
    ({"ignored": "2"}, 3, "ignored signals"),
])
def test_a_request_it_would_not_run_as_the_client_would_is_refused_with_a_reason(
    changes: dict[str, Any], fds: int, refusal: str | None,
) -> None:
    found = server._refusal(_request(**changes), list(range(fds)))
    assert found == refusal or (refusal is not None and found is not None and refusal in found)


def test_an_edited_or_removed_source_file_makes_it_stale(tmp_path: Any) -> None:
    source = tmp_path / "module.py"
    source.write_text("x = 1\n")
    info = source.stat()
    known = {str(source): (info.st_mtime_ns, info.st_size)}
    assert not server.changed(known)
    source.write_text("x = 22\n")
    assert server.changed(known)
    source.unlink()
    assert server.changed(known)


def test_it_is_off_when_the_person_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    for value in ("0", "off", "No", "false "):
        monkeypatch.setenv(paths.ENV_RESIDENT, value)
        assert not paths.enabled()
    monkeypatch.setenv(paths.ENV_RESIDENT, "1")
    assert paths.enabled() == os.uname().sysname.startswith("Linux")


def test_an_idle_limit_that_is_not_a_positive_number_is_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for value, seconds in (("2.5", 2.5), ("soon", 1800.0), ("-1", 1800.0), ("", 1800.0)):
        monkeypatch.setenv(paths.ENV_IDLE, value)
        assert paths.idle_seconds() == seconds
