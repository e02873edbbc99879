"""API keys: stored hashed and private, shown once, revocable, each mapped to one stack."""

from __future__ import annotations

import json
import stat

import pytest

from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome
from hrm.server.auth import SessionSigner, bearer_token
from hrm.server.keys import KeyStore


def test_a_key_maps_a_user_to_their_resident_stack_and_an_admin_key_to_admin(home: HRMHome) -> None:
    store = KeyStore(home)
    user, admin = store.create("alice"), store.create("ops", admin=True)
    alice = store.verify(user.token)
    root = store.verify(admin.token)
    assert alice is not None and (alice.agent_class, alice.admin) == ("RESIDENT:alice", False)
    assert root is not None and (root.agent_class, root.admin) == ("ADMIN", True)


def test_the_key_is_never_stored_and_the_store_is_private(home: HRMHome) -> None:
    store = KeyStore(home)
    created = store.create("alice")
    # the secret is what follows the key id; it may itself hold a "-" (url-safe base64), so
    # it is not the token's last dash-separated part ("…-vo" was found in "revoked_at")
    secret = created.token.removeprefix("sk-hrm-").partition("-")[2]
    assert len(secret) >= 20
    stored = store.path.read_text()
    assert created.token not in stored and secret not in stored
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    assert secret not in repr(created) and created.token not in repr(created)
    governance = home.governance_ledger.read_text()
    assert "serve_key_created" in governance and secret not in governance
    assert json.loads(stored)["keys"][0]["digest"] != secret


@pytest.mark.parametrize("mangle", [
    pytest.param(lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"), id="one-character-off"),
    pytest.param(lambda t: t.replace("sk-hrm-", "sk-xyz-"), id="wrong-prefix"),
    pytest.param(lambda t: "sk-hrm-" + "0" * 12 + "-" + t.rsplit("-", 1)[-1], id="unknown-id"),
    pytest.param(lambda t: t.rsplit("-", 1)[0] + "-", id="no-secret"),
    pytest.param(lambda t: "", id="empty"),
])
def test_anything_but_the_exact_key_is_refused(home: HRMHome, mangle) -> None:
    store = KeyStore(home)
    token = store.create("alice").token
    assert store.verify(mangle(token)) is None


def test_revoking_by_id_or_user_ends_the_keys_at_once(home: HRMHome) -> None:
    store = KeyStore(home)
    first, second, other = store.create("bob"), store.create("bob"), store.create("carol")
    reader = KeyStore(home)  # a server process with its own view of the file
    assert reader.verify(first.token) is not None
    store.revoke(first.entry.id)
    assert reader.verify(first.token) is None
    assert reader.verify(second.token) is not None
    revoked = store.revoke("bob")
    assert [k.id for k in revoked] == [second.entry.id]
    assert reader.verify(second.token) is None and reader.verify(other.token) is not None
    with pytest.raises(HRMError) as caught:
        store.revoke("bob")
    assert caught.value.code is ErrorCode.NOT_FOUND
    listed = {k.id: k.is_active for k in store.list()}
    assert listed == {first.entry.id: False, second.entry.id: False, other.entry.id: True}


@pytest.mark.parametrize("name", ["../evil", "a b", "", "x" * 65, "RESIDENT:x"])
def test_a_user_name_must_be_one_a_stack_can_carry(home: HRMHome, name: str) -> None:
    with pytest.raises(HRMError) as caught:
        KeyStore(home).create(name)
    assert caught.value.code is ErrorCode.VALIDATION_FAILED
    assert not KeyStore(home).list()


def test_a_damaged_store_admits_no_one(home: HRMHome) -> None:
    store = KeyStore(home)
    token = store.create("alice").token
    store.path.write_text("{not json")
    assert KeyStore(home).verify(token) is None


@pytest.mark.parametrize(("header", "token"), [
    ("Bearer sk-hrm-a-b", "sk-hrm-a-b"), ("bearer  sk-1 ", "sk-1"), ("Basic abc", None),
    ("Bearer ", None), ("", None), (None, None),
])
def test_bearer_tokens_are_read_from_the_header(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


def test_a_session_cookie_is_signed_and_expires(home: HRMHome) -> None:
    signer = SessionSigner(home)
    cookie = signer.issue("abc123", now=1000.0)
    session = signer.read(cookie, now=1001.0)
    assert session is not None and session.key_id == "abc123" and session.csrf
    assert signer.read(cookie, now=1000.0 + 13 * 3600) is None
    forged = cookie.replace("abc123", "zzz999")
    assert signer.read(forged, now=1001.0) is None
    assert signer.read("garbage", now=1001.0) is None
    # Another process on the same home shares the secret; a session has its own CSRF token.
    assert SessionSigner(home).read(cookie, now=1001.0) == session
    assert signer.read(signer.issue("abc123", now=1000.0), now=1001.0).csrf != session.csrf  # type: ignore[union-attr]


def test_a_signed_out_session_is_refused_by_every_server_and_after_a_restart(home: HRMHome) -> None:
    signer = SessionSigner(home)
    kept, ended = signer.issue("abc123"), signer.issue("abc123")
    other_server = SessionSigner(home)  # already running on the home, its list read once
    assert other_server.read(ended) is not None
    session = signer.read(ended)
    assert session is not None
    signer.revoke(session)
    assert signer.read(ended) is None
    assert other_server.read(ended) is None  # re-read: the list changed on disk
    assert SessionSigner(home).read(ended) is None  # a restarted server
    assert SessionSigner(home).read(kept) is not None  # only that session ended
    listed = (home.root / "server" / "sessions-revoked.json").read_text()
    assert session.nonce not in listed and ended not in listed  # a digest, never the cookie
    assert (home.root / "server" / "sessions-revoked.json").stat().st_mode & 0o077 == 0


def test_signed_out_sessions_past_their_expiry_are_dropped_from_the_list(home: HRMHome) -> None:
    signer = SessionSigner(home)
    old = signer.read(signer.issue("abc123", now=1000.0), now=1001.0)
    assert old is not None
    signer.revoke(old)  # expired long ago: pruned by the next sign-out
    fresh = signer.read(signer.issue("abc123"))
    assert fresh is not None
    signer.revoke(fresh)
    listed = json.loads((home.root / "server" / "sessions-revoked.json").read_text())["revoked"]
    assert list(listed.values()) == [fresh.expires]


def test_the_listening_socket_turns_nagle_off() -> None:
    """With Nagle on, each answer on a kept-alive connection waited ~40 ms for a delayed ACK."""
    import socket

    from hrm.server.runner import bind

    sock = bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP  # asyncio sets TCP_NODELAY only then
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        sock.close()


def test_any_cookie_or_token_is_read_without_raising(home: HRMHome) -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    signer, store = SessionSigner(home), KeyStore(home)
    store.create("alice")

    @settings(max_examples=200, deadline=None)
    @given(st.text())
    def check(text: str) -> None:
        assert signer.read(text) is None
        assert store.verify(text) is None
        assert store.verify("sk-hrm-" + text) is None

    check()
