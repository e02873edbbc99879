"""`hrm serve --workers N`: turns in worker processes, each stack always in the same one (D401).

Live servers on loopback, their model a scripted upstream that holds a call saying HOLD until
the test releases it, so "a turn is in flight" is an event, never a guess about timing.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import openai
import pytest
from tests.server.support import (
    WAIT_S,
    ServerProcess,
    Upstream,
    create_key,
    post_chat,
    start_on_upstream,
    turn_records,
)

from hrm.server.turn_workers import TurnWorkers, WorkerSpec
from hrm.storage.ledger import verify_ledger


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home not yet created (the tests' own `hrm serve` and keys create it); it stands in
    for the suite's initialised `HRMHome`."""
    return tmp_path / "home"


def start(home: Path, upstream: Upstream, *args: str) -> ServerProcess:
    return start_on_upstream(home, upstream, "--workers", "2", *args)



def workers_of(server: ServerProcess, count: int = 2) -> list[int]:
    """The server's worker processes, once `count` of them are running."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = _children(server.process.pid)
        if len(found) >= count:
            return found
        time.sleep(0.05)
    raise AssertionError(f"hrm serve started {_children(server.process.pid)}, not {count} workers")


def _children(pid: int) -> list[int]:
    """The worker processes among `pid`'s children (multiprocessing's resource tracker is
    one too)."""
    found: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            found += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except OSError:
            continue
    return sorted(c for c in found if b"spawn_main" in _cmdline(c))


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def gone(pid: int) -> bool:
    """Whether process `pid` has exited (within WAIT_S)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":  # exited; its parent has not reaped it yet
            return True
        time.sleep(0.05)
    return False


def test_a_stack_keeps_its_worker_and_new_stacks_go_to_the_least_loaded() -> None:
    spec = WorkerSpec(home=Path("/nonexistent"), llm="offline", stack_wait_s=1, threads=1,
                      max_open=4, regenerate_window_s=0)
    workers = TurnWorkers(spec, 3)
    placed = [workers.index_of(f"RESIDENT:user-{n}") for n in range(7)]
    assert placed == [0, 1, 2, 0, 1, 2, 0]
    assert [workers.index_of(f"RESIDENT:user-{n}") for n in range(7)] == placed


def test_keys_answer_through_two_workers_streamed_and_not(
    home: Path, upstream: Upstream
) -> None:
    alice, bob = create_key(home, "alice"), create_key(home, "bob")
    with start(home, upstream) as server:
        assert "turns in 2 worker processes" in server.lines[0]
        assert len(workers_of(server)) == 2
        answers = [post_chat(server, key, f"Explain topic {n}")
                   for n in range(3) for key in (alice, bob)]
        client = openai.OpenAI(base_url=f"{server.base_url}/v1", api_key=bob)
        stream = client.chat.completions.create(
            model="hrm", stream=True, messages=[{"role": "user", "content": "Explain a heap"}])
        chunks = list(stream)
        assert server.stop() == 0
    assert [a.status_code for a in answers] == [200] * 6
    assert {a.json()["choices"][0]["message"]["content"] for a in answers} == {
        "Hello from the upstream model."}
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello from the upstream model."
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert [r["data"]["turn"] for r in turn_records(home, "RESIDENT:alice")] == [1, 2, 3]
    assert [r["data"]["turn"] for r in turn_records(home, "RESIDENT:bob")] == [1, 2, 3, 4]
    for user in ("alice", "bob"):
        assert verify_ledger(home / f"HO2/ledger/RESIDENT_{user}/workorder.jsonl").ok


def test_sigterm_finishes_the_workers_turn_in_flight_then_stops_them(
    home: Path, upstream: Upstream, pool: ThreadPoolExecutor
) -> None:
    alice = create_key(home, "alice")
    with start(home, upstream) as server:
        workers = workers_of(server)
        held = pool.submit(post_chat, server, alice, "HOLD explain a trie")
        assert upstream.entered.wait(WAIT_S)
        server.process.send_signal(signal.SIGTERM)
        server.wait_for(r"stopping \(signal 15\): finishing 1 request")
        upstream.release.set()
        answer = held.result(WAIT_S)
        assert server.stop() == 0
    assert answer.status_code == 200
    assert answer.json()["choices"][0]["message"]["content"] == "Hello from the upstream model."
    assert [r["data"]["turn"] for r in turn_records(home, "RESIDENT:alice")] == [1]
    assert all(gone(pid) for pid in workers)


def test_a_worker_killed_mid_turn_answers_503_and_the_next_turn_runs(
    home: Path, upstream: Upstream, pool: ThreadPoolExecutor
) -> None:
    alice = create_key(home, "alice")
    with start(home, upstream) as server:
        held = pool.submit(post_chat, server, alice, "HOLD explain a trie")
        assert upstream.entered.wait(WAIT_S)
        killed = workers_of(server)
        start_line = len(server.lines)
        for pid in killed:  # alice's worker is one of them
            os.kill(pid, signal.SIGKILL)
        lost = held.result(WAIT_S)
        # Started again at once, not on the next turn: that turn does not wait for one.
        for index in (0, 1):
            server.wait_for(rf"turn worker {index} \(pid \d+\) died \(exit code -9\); started "
                            r"it again as pid \d+", start=start_line)
        restarted = workers_of(server)
        upstream.release.set()
        after = post_chat(server, alice, "Explain how a stack works")
        assert server.stop() == 0
    assert lost.status_code == 503
    error = lost.json()["error"]
    assert (error["code"], error["type"]) == ("worker_died", "server_error")
    assert "Turn worker" in error["message"] and "died" in error["message"]
    assert not set(restarted) & set(killed)
    assert after.status_code == 200
    records = turn_records(home, "RESIDENT:alice")
    assert records[-1]["data"]["input"] == "Explain how a stack works"
    assert verify_ledger(home / "HO2/ledger/RESIDENT_alice/workorder.jsonl").ok


def test_a_worker_killed_mid_stream_ends_the_stream_with_worker_died(
    home: Path, upstream: Upstream
) -> None:
    alice = create_key(home, "alice")
    with start(home, upstream) as server:
        with server.client(alice) as http, http.stream("POST", "/v1/chat/completions", json={
            "model": "hrm", "stream": True,
            "messages": [{"role": "user", "content": "HOLD explain a trie"}],
        }) as response:
            assert response.status_code == 200
            events = (e.removeprefix("data: ") for e in response.iter_lines() if e)
            # The first word has reached the client: the stream has begun, its status is sent.
            assert any("Hello" in event for event in events)
            for pid in workers_of(server):
                os.kill(pid, signal.SIGKILL)
            rest = list(events)
        upstream.release.set()
        assert server.stop() == 0
    assert rest[-1] == "[DONE]"
    error = json.loads(rest[-2])["error"]
    assert error["code"] == "worker_died" and "Turn worker" in error["message"]


def test_workers_exit_when_their_server_is_killed(home: Path, upstream: Upstream) -> None:
    alice = create_key(home, "alice")
    with start(home, upstream) as server:
        workers = workers_of(server)
        answer = post_chat(server, alice, "Explain how a queue works")
        assert server.stop(signal.SIGKILL) == -signal.SIGKILL
    assert answer.status_code == 200
    assert all(gone(pid) for pid in workers)
    assert [r["data"]["turn"] for r in turn_records(home, "RESIDENT:alice")] == [1]


def test_a_rollback_in_the_server_and_turns_in_a_worker_see_each_other(home: Path) -> None:
    alice = create_key(home, "alice")
    with ServerProcess(home, "--workers", "2") as server, server.client(alice) as http:
        for code in ("4512", "7788"):
            said = f"Remember that my locker code is {code}"
            assert post_chat(server, alice, said).status_code == 200
        # the rollback runs in the server process, on the stack its worker has open
        rolled = http.post("/v1/hrm/canon/fact.my-locker-code/rollback", json={"version": 1})
        assert rolled.status_code == 200, rolled.text
        assert post_chat(server, alice, "Remember that my locker code is 9931").status_code == 200
        entry = http.get("/v1/hrm/canon/fact.my-locker-code").json()
        assert server.stop() == 0
    values = [str(v["value"]) for v in entry["versions"]]
    assert [v["version"] for v in entry["versions"]] == [1, 2, 3, 4]
    assert ["4512" in values[0], "7788" in values[1], "4512" in values[2], "9931" in values[3]] \
        == [True] * 4
    assert [r["data"]["turn"] for r in turn_records(home, "RESIDENT:alice")] == [1, 2, 3]
    for ledger in ("workorder", "governance"):
        path = home / f"HO2/ledger/RESIDENT_alice/{ledger}.jsonl"
        assert not path.exists() or verify_ledger(path).ok


def test_a_message_from_the_web_view_is_a_turn_in_a_worker(home: Path) -> None:
    bob = create_key(home, "bob")
    with ServerProcess(home, "--workers", "2") as server, httpx.Client(
        base_url=server.base_url, follow_redirects=False, timeout=WAIT_S
    ) as browser:
        assert browser.post("/login", data={"key": bob}).status_code == 303
        found = re.search(r'name="csrf" value="([0-9a-f]+)"', browser.get("/").text)
        assert found is not None
        sent = browser.post("/chat", data={"message": "Explain a bloom filter",
                                           "csrf": found.group(1)})
        page = browser.get("/").text
        assert server.stop() == 0
    assert sent.status_code == 303 and sent.headers["location"] == "/#turn-1"
    assert 'href="/turns/1"' in page and "bloom filter" in page
    assert [r["data"]["turn"] for r in turn_records(home, "RESIDENT:bob")] == [1]
