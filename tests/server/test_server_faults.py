"""Concurrency and faults on a live server whose model is a scripted upstream on loopback.

The upstream holds a call whose message says HOLD until the test releases it, so "a turn is in
flight" is an event the test waits for, never a guess about timing.
"""

from __future__ import annotations

import json
import signal
import socket
import stat
import subprocess
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import httpx
import openai
import pytest
from tests.server.support import (
    HRM,
    WAIT_S,
    ServerProcess,
    Upstream,
    clean_env,
    create_key,
    ledger_sizes,
    post_chat,
    start_on_upstream,
    turn_records,
)

from hrm.storage.ledger import verify_ledger


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home not yet created (the tests' own `hrm serve` and keys create it); it stands in
    for the suite's initialised `HRMHome`."""
    return tmp_path / "home"


def held_turn(
    pool: ThreadPoolExecutor, server: ServerProcess, upstream: Upstream, key: str
) -> Future[httpx.Response]:
    """A request whose turn is in flight, held at the upstream until `upstream.release`."""
    held = pool.submit(post_chat, server, key, "HOLD explain a trie")
    assert upstream.entered.wait(WAIT_S)
    return held


def test_the_turns_model_call_goes_to_the_configured_upstream(home: Path, upstream: Upstream) -> None:
    key = create_key(home, "alice")
    with start_on_upstream(home, upstream) as server, openai.OpenAI(
        base_url=f"{server.base_url}/v1", api_key=key
    ) as sdk:
        answer = sdk.chat.completions.create(
            model="hrm", messages=[{"role": "user", "content": "Explain how binary search works"}])
        assert server.stop() == 0
    assert answer.choices[0].message.content == "Hello from the upstream model."
    assert upstream.calls and upstream.calls[-1]["model"] == "scripted-model"
    # hrm, not the client, wrote what the model saw: its own system prompt and context.
    assert upstream.calls[-1]["messages"][0]["role"] == "system"


PROVIDER_FAILURES = [  # (the upstream's answer, the status the client gets, its code)
    (500, 503, "provider_unavailable"),
    (429, 429, "rate_limit_exceeded"),
    (None, 503, "provider_unavailable"),  # the upstream is down: last, it stays down
]


def test_a_failing_provider_is_an_error_status_and_the_turn_is_recorded(
    home: Path, upstream: Upstream
) -> None:
    """Each failure on a stack of its own, on one server (a start costs seconds)."""
    users = ["alice", "bob", "carol"]
    keys = {user: create_key(home, user) for user in users}
    answers = {}
    with start_on_upstream(home, upstream) as server:
        for user, (status, _, _) in zip(users, PROVIDER_FAILURES, strict=True):
            if status is None:
                upstream.server.shutdown()  # type: ignore[union-attr]
                upstream.server.server_close()  # type: ignore[union-attr]
            else:
                upstream.status = status
            answers[user] = (
                post_chat(server, keys[user], "Explain how binary search works"),
                post_chat(server, keys[user], "Explain how a heap works", stream=True),
            )
        assert server.stop() == 0
    for user, (_, expected, code) in zip(users, PROVIDER_FAILURES, strict=True):
        response, streamed = answers[user]
        assert response.status_code == expected, (user, response.text)
        body = response.json()
        assert body["error"]["code"] == code
        assert "turn is recorded" in body["error"]["message"]
        assert streamed.status_code == expected  # refused before any word: a status, no stream
        recorded = turn_records(home, f"RESIDENT:{user}")
        assert [r["data"]["turn"] for r in recorded] == [1, 2]
        assert body["hrm"]["ledger"]["seq"] == recorded[0]["seq"]


def test_one_stack_queues_and_refuses_past_its_wait_while_others_run(
    home: Path, upstream: Upstream, pool: ThreadPoolExecutor
) -> None:
    alice, bob = create_key(home, "alice"), create_key(home, "bob")
    with start_on_upstream(home, upstream, "--stack-wait", "0.5") as server:
        held = held_turn(pool, server, upstream, alice)
        # Alice's stack is in a turn: her next request waits its 0.5 s, then 409.
        busy = post_chat(server, alice, "Explain how a stack works")
        # Bob's stack is free: his turn runs while Alice's is still held.
        other = post_chat(server, bob, "Explain how a queue works")
        # The event loop is not blocked by the held turn's thread either.
        with server.client(bob) as http:
            listed = http.get("/v1/models")
        assert not held.done()
        upstream.release.set()
        first = held.result(WAIT_S)
        assert server.stop() == 0
    assert busy.status_code == 409
    assert busy.json()["error"]["code"] == "stack_busy"
    assert other.status_code == 200 and listed.status_code == 200
    assert first.status_code == 200
    assert [r["data"]["turn"] for r in turn_records(home, "RESIDENT:alice")] == [1]


def test_requests_on_one_stack_queue_and_both_run_in_order(
    home: Path, upstream: Upstream, pool: ThreadPoolExecutor
) -> None:
    alice = create_key(home, "alice")
    with start_on_upstream(home, upstream) as server:
        held = held_turn(pool, server, upstream, alice)
        start_line = len(server.lines)
        queued = pool.submit(post_chat, server, alice, "Explain how a stack works")
        upstream.release.set()
        assert held.result(WAIT_S).status_code == 200
        assert queued.result(WAIT_S).status_code == 200
        server.wait_for(r"POST /v1/chat/completions 200", start=start_line)
        assert server.stop() == 0
    assert [r["data"]["turn"] for r in turn_records(home, "RESIDENT:alice")] == [1, 2]


def test_a_client_gone_mid_stream_leaves_a_recorded_consistent_turn(
    home: Path, upstream: Upstream
) -> None:
    alice = create_key(home, "alice")
    with start_on_upstream(home, upstream) as server:
        with server.client(alice) as http, http.stream("POST", "/v1/chat/completions", json={
            "model": "hrm", "stream": True,
            "messages": [{"role": "user", "content": "HOLD explain a trie"}],
        }) as response:
            assert response.status_code == 200
            lines = response.iter_lines()
            assert next(lines).startswith("data: ")  # the role chunk: the stream has begun
            assert upstream.entered.wait(WAIT_S)
        # The client has gone; the model call is still held. Release it: the turn ends.
        upstream.release.set()
        # A next request on the stack waits for that turn to be recorded, then runs.
        after = post_chat(server, alice, "Explain how a stack works")
        assert after.status_code == 200
        assert server.stop() == 0
    records = turn_records(home, "RESIDENT:alice")
    assert [r["data"]["turn"] for r in records] == [1, 2]
    assert records[0]["data"]["response"] == "Hello from the upstream model."
    assert verify_ledger(home / "HO2/ledger/RESIDENT_alice/workorder.jsonl").ok


def test_sigterm_lets_the_turn_in_flight_finish_and_be_recorded(
    home: Path, upstream: Upstream, pool: ThreadPoolExecutor
) -> None:
    alice = create_key(home, "alice")
    with start_on_upstream(home, upstream) as server:
        held = held_turn(pool, server, upstream, alice)
        server.process.send_signal(signal.SIGTERM)
        # Shutting down: the server no longer accepts, but the held turn is still running.
        server.wait_for(r"stopping \(signal 15\): finishing 1 request")
        upstream.release.set()
        answer = held.result(WAIT_S)
        assert server.stop() == 0
    assert answer.status_code == 200
    assert answer.json()["choices"][0]["message"]["content"] == "Hello from the upstream model."
    assert [r["data"]["turn"] for r in turn_records(home, "RESIDENT:alice")] == [1]
    assert any("stopped; every turn in flight was recorded" in line for line in server.lines)


def test_sigkill_after_an_answer_loses_no_answered_turn(home: Path) -> None:
    alice = create_key(home, "alice")
    with ServerProcess(home) as server:
        answers = [post_chat(server, alice, text) for text in
                   ("Explain how binary search works", "Remember that my locker code is 4512")]
        assert server.stop(signal.SIGKILL) == -signal.SIGKILL
    assert [a.status_code for a in answers] == [200, 200]
    # A new server over the same home finds both turns and goes on from them.
    with ServerProcess(home) as again:
        third = post_chat(again, alice, "What is my locker code?")
        assert again.stop() == 0
    records = turn_records(home, "RESIDENT:alice")
    positions = [(a.json()["hrm"]["ledger"]["seq"], a.json()["hrm"]["ledger"]["hash"])
                 for a in answers]
    assert positions == [(r["seq"], r["hash"]) for r in records[:2]]
    assert third.json()["hrm"]["turn"] == 3
    assert verify_ledger(home / "HO2/ledger/RESIDENT_alice/workorder.jsonl").ok


def test_two_workers_serialise_one_stacks_turns_across_processes(
    home: Path, upstream: Upstream, pool: ThreadPoolExecutor
) -> None:
    alice = create_key(home, "alice")
    with start_on_upstream(home, upstream, "--workers", "2") as server:
        held = held_turn(pool, server, upstream, alice)
        queued = [pool.submit(post_chat, server, alice, f"Explain topic number {n}")
                  for n in range(3)]
        upstream.release.set()
        results = [held.result(WAIT_S), *(f.result(WAIT_S) for f in queued)]
        assert server.stop() == 0
    assert [r.status_code for r in results] == [200, 200, 200, 200]
    records = turn_records(home, "RESIDENT:alice")
    assert [r["data"]["turn"] for r in records] == [1, 2, 3, 4]
    assert sorted(r.json()["hrm"]["turn"] for r in results) == [1, 2, 3, 4]
    assert verify_ledger(home / "HO2/ledger/RESIDENT_alice/workorder.jsonl").ok


def test_no_auth_is_announced_and_refused_off_loopback(tmp_path: Path) -> None:
    home = tmp_path / "home"
    refused = subprocess.run(
        [*HRM, "serve", "--no-auth", "--host", "0.0.0.0", "--home", str(home)],
        check=False, capture_output=True, text=True, env=clean_env(home), timeout=WAIT_S,
    )
    assert refused.returncode == 3
    assert "--no-auth" in refused.stderr and "loopback" in refused.stderr
    with ServerProcess(home, "--no-auth") as server:
        assert "NO AUTH" in server.lines[0]
        with server.client(None) as http:
            answer = http.post("/v1/chat/completions", json={
                "model": "hrm", "messages": [{"role": "user", "content": "hello there"}]})
        assert server.stop() == 0
    assert answer.json()["hrm"]["agent_class"] == "ADMIN"


def test_without_keys_every_request_is_401_and_the_start_says_so(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with ServerProcess(home) as server:
        assert "none yet" in server.lines[0]
        before = ledger_sizes(home)
        with server.client("sk-hrm-abc-def") as http:
            assert http.get("/v1/models").status_code == 401
        assert ledger_sizes(home) == before
        assert server.stop() == 0


def test_a_revoked_key_stops_working_at_its_next_request(tmp_path: Path) -> None:
    home = tmp_path / "home"
    key = create_key(home, "carol")
    with ServerProcess(home) as server:
        with server.client(key) as http:
            assert http.get("/v1/models").status_code == 200
            subprocess.run([*HRM, "serve", "keys", "revoke", "carol", "--home", str(home)],
                           check=True, capture_output=True, env=clean_env(home), timeout=WAIT_S)
            assert http.get("/v1/models").status_code == 401
        assert server.stop() == 0
    governance = [json.loads(line)["kind"] for line in
                  (home / "HOT/ledger/governance.jsonl").read_text().splitlines()]
    assert governance.count("serve_key_created") == 1
    assert governance.count("serve_key_revoked") == 1


def test_threads_never_share_a_turn(home: Path) -> None:
    """Many clients on distinct stacks at once: every turn recorded once, chains intact."""
    keys = {name: create_key(home, name) for name in ("u1", "u2", "u3", "u4")}

    def one_client(name: str, key: str) -> set[int]:
        # A client waits for its answer before it asks again, as a chat does: stacks run at
        # once, and no request waits on its own stack's lock (a 409 past the wait on a slow
        # machine would be the machine's speed, not a shared turn).
        return {post_chat(server, key, f"Explain idea {n} of {name}").status_code for n in range(3)}

    with ServerProcess(home) as server, ThreadPoolExecutor(max_workers=len(keys)) as executor:
        futures = [executor.submit(one_client, name, key) for name, key in keys.items()]
        assert set().union(*(f.result(WAIT_S) for f in futures)) == {200}
        assert server.stop() == 0
    for name in keys:
        records = turn_records(home, f"RESIDENT:{name}")
        assert [r["data"]["turn"] for r in records] == [1, 2, 3]
        assert verify_ledger(home / f"HO2/ledger/RESIDENT_{name}/workorder.jsonl").ok



def test_a_damaged_ledger_is_a_500_that_names_it_and_how_to_repair(home: Path) -> None:
    alice = create_key(home, "alice")
    with ServerProcess(home) as server:
        assert post_chat(server, alice, "Explain how binary search works").status_code == 200
        ledger = home / "HO2/ledger/RESIDENT_alice/workorder.jsonl"
        lines = ledger.read_text().splitlines(keepends=True)
        ledger.write_text("".join(lines[:-2]))  # records cut from the end, below the anchor
        broken = post_chat(server, alice, "Explain how a heap works")
        assert server.stop() == 0
    assert broken.status_code == 500
    error = broken.json()["error"]
    assert error["code"] == "ledger_corrupt" and error["type"] == "server_error"
    assert "workorder.jsonl" in error["message"] and "hrm ledger quarantine" in error["message"]


def test_a_provider_failing_mid_stream_ends_the_stream_with_its_error(
    home: Path, upstream: Upstream
) -> None:
    alice = create_key(home, "alice")
    upstream.fail_after_first_word = True
    with start_on_upstream(home, upstream) as server:
        response = post_chat(server, alice, "Explain how a trie works", stream=True)
        assert server.stop() == 0
    assert response.status_code == 200  # the first word had been sent: the stream had begun
    events = [e[len("data: "):] for e in response.text.split("\n\n") if e]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    shown = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c.get("choices"))
    assert shown.startswith("Hello\n\n")  # words cannot be taken back: the replacement follows
    error = chunks[-1]["error"]
    assert error["code"] == "provider_unavailable" and "turn is recorded" in error["message"]
    assert chunks[-1]["hrm"]["turn"] == 1
    assert turn_records(home, "RESIDENT:alice")[0]["data"]["turn"] == 1


def _serve(home: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`hrm serve` that is expected not to start: its exit code and what it said."""
    return subprocess.run(
        [*HRM, "serve", "--home", str(home), *args], check=False, capture_output=True,
        text=True, env=env or clean_env(home, HRM_PROVIDER="offline"), timeout=WAIT_S,
    )


def test_an_unknown_provider_refuses_to_start_naming_the_setting(tmp_path: Path) -> None:
    home = tmp_path / "home"
    flag = _serve(home, "--port", "0", "--provider", "bogus")
    configured = _serve(home, "--port", "0", env=clean_env(home, HRM_PROVIDER="bogus"))
    for done, where in ((flag, "--provider"), (configured, "llm.provider (from environment")):
        assert done.returncode == 3, done.stderr  # an option or setting that is invalid
        assert "hrm serve: http" not in done.stderr  # it never listened
        assert where in done.stderr and "'bogus'" in done.stderr
        assert "known providers: auto, anthropic, local, offline, openai" in done.stderr


def test_a_port_in_use_is_named_and_exits_as_a_bad_option(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _serve(tmp_path / "home", "--port", str(port))
    assert done.returncode == 3, done.stderr  # not 6: nothing is wrong with storage
    assert f"port {port} is already in use" in done.stderr and "--port" in done.stderr


def test_a_home_serve_creates_is_private_from_the_start(tmp_path: Path) -> None:
    home = tmp_path / "new" / "home"
    with ServerProcess(home) as server:
        with server.client(None) as http:  # serving (uvicorn's signal handlers are in place)
            assert http.get("/v1/models").status_code == 401
        assert server.stop() == 0
    assert not any("open to other users" in line for line in server.lines), server.lines
    for made in (home, home.parent):
        assert stat.S_IMODE(made.stat().st_mode) == 0o700, made


@pytest.mark.parametrize("workers", [[], ["--workers", "2"]], ids=["one-process", "workers"])
def test_a_resend_after_a_restart_returns_the_turn_it_already_caused(
    home: Path, workers: list[str]
) -> None:
    alice = create_key(home, "alice")
    conversation = [{"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "What is a bloom filter?"}]

    def send(server: ServerProcess) -> httpx.Response:
        with server.client(alice) as http:
            return http.post("/v1/chat/completions", json={"model": "hrm", "messages": conversation})

    with ServerProcess(home, *workers) as server:
        first = send(server)
        assert server.stop() == 0
    with ServerProcess(home, *workers) as server:
        again = send(server)
        assert server.stop() == 0
    assert first.status_code == again.status_code == 200
    assert again.json()["hrm"]["replayed"] is True
    assert again.json()["hrm"]["ledger"] == first.json()["hrm"]["ledger"]
    assert again.json()["choices"][0]["message"] == first.json()["choices"][0]["message"]
    assert again.json()["usage"] == first.json()["usage"]
    assert [r["data"]["turn"] for r in turn_records(home, "RESIDENT:alice")] == [1]


def test_after_a_restart_a_resend_is_a_new_turn_once_anything_happened_since(home: Path) -> None:
    alice = create_key(home, "alice")
    with ServerProcess(home) as server:
        post_chat(server, alice, "What is a bloom filter?")
        post_chat(server, alice, "And a cuckoo filter?")
        assert server.stop() == 0
    with ServerProcess(home, "--regenerate-window", "120") as server:
        again = post_chat(server, alice, "What is a bloom filter?")  # no longer the last turn
        assert server.stop() == 0
    assert again.json()["hrm"]["replayed"] is False
    assert [r["data"]["turn"] for r in turn_records(home, "RESIDENT:alice")] == [1, 2, 3]
