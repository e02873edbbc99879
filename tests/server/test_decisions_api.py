"""The decisions API with httpx: the same data `hrm … --json` prints, for the key's own stack."""

from __future__ import annotations

import json
import subprocess

import httpx
import pytest
from tests.server.conftest import Served
from tests.server.support import HRM, WAIT_S, clean_env, ledger_sizes


def chat(http: httpx.Client, text: str) -> dict:
    response = http.post(
        "/v1/chat/completions", json={"model": "hrm", "messages": [{"role": "user", "content": text}]}
    )
    assert response.status_code == 200, response.text
    return response.json()


def cli_json(served: Served, *args: str) -> object:
    done = subprocess.run(
        [*HRM, *args, "--home", str(served.home), "--json"], capture_output=True, text=True,
        check=True, env=clean_env(served.home), timeout=WAIT_S,
    )
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def talked(served: Served) -> Served:
    """Alice's stack after a few turns: a problem, canon with two versions of one fact."""
    with served.server.client(served.alice) as http:
        chat(http, "Explain how binary search works")
        chat(http, "Remember that my locker code is 4512")
        chat(http, "Remember that my locker code is 7788")
    return served


def test_recent_turns_and_one_turns_why_match_hrm_why(talked: Served) -> None:
    with talked.server.client(talked.alice) as http:
        turns = http.get("/v1/hrm/turns", params={"limit": 2}).json()
        last = http.get("/v1/hrm/turns/last").json()
        numbered = http.get(f"/v1/hrm/turns/{last['turn']}").json()
    assert turns["agent_class"] == "RESIDENT:alice"
    assert len(turns["turns"]) == 2
    assert turns["turns"][-1]["turn"] == last["turn"]
    assert numbered == last
    expected = cli_json(talked, "why", str(last["turn"]), "--as", "RESIDENT:alice")
    assert last == expected
    assert any(row["layer"] == "write" for row in last["explanation"])


def test_problems_list_and_resolve(talked: Served) -> None:
    with talked.server.client(talked.alice) as http:
        problems = http.get("/v1/hrm/problems").json()
        assert problems == cli_json(talked, "problems", "list", "--as", "RESIDENT:alice")
        target = next(p for p in problems if "binary search" in p["title"])
        resolved = http.post(f"/v1/hrm/problems/{target['id']}/resolve")
        assert resolved.status_code == 200
        assert resolved.json()["status"] == "resolved"
        open_now = http.get("/v1/hrm/problems").json()
        everything = http.get("/v1/hrm/problems", params={"all": "true"}).json()
        unknown = http.post("/v1/hrm/problems/prob_nope/resolve")
    assert target["id"] not in [p["id"] for p in open_now]
    assert target["id"] in [p["id"] for p in everything]
    assert unknown.status_code == 404


def test_canon_versions_citation_and_rollback(talked: Served) -> None:
    with talked.server.client(talked.alice) as http:
        canon = http.get("/v1/hrm/canon").json()
        # What the CLI prints, each entry with its status (``forgotten`` once taken back).
        assert [e.pop("status") for e in canon] == ["current"]
        assert canon == cli_json(talked, "memory", "shared", "list", "--as", "RESIDENT:alice")
        entry = http.get("/v1/hrm/canon/fact.my-locker-code").json()
        assert entry["status"] == "current"
        assert [v["version"] for v in entry["versions"]] == [1, 2]
        assert "7788" in json.dumps(entry["versions"][1]["value"])
        assert entry["citation"].startswith("[ref:fact.my-locker-code@v2")
        rolled = http.post("/v1/hrm/canon/fact.my-locker-code/rollback", json={"version": 1})
        assert rolled.status_code == 200, rolled.text
        assert rolled.json()["version"] == 3 and rolled.json()["status"] == "current"
        assert "4512" in json.dumps(rolled.json()["value"])
        bad = http.post("/v1/hrm/canon/fact.my-locker-code/rollback", json={"version": "one"})
        missing = http.post("/v1/hrm/canon/fact.my-locker-code/rollback", json={"version": 9})
        unknown = http.get("/v1/hrm/canon/fact.nothing")
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "version"
    assert missing.status_code == 404
    assert unknown.status_code == 404


def test_working_sets_and_ledger_verification(talked: Served) -> None:
    with talked.server.client(talked.alice) as http:
        working = http.get("/v1/hrm/working")
        verified = http.get("/v1/hrm/ledger/verify").json()
    assert working.status_code == 200
    assert working.json() == cli_json(talked, "memory", "working", "list", "--as", "RESIDENT:alice")
    assert verified["ok"] is True
    paths = [r["path"] for r in verified["ledgers"]]
    assert "HO2/ledger/RESIDENT_alice/workorder.jsonl" in paths
    assert all("RESIDENT_alice" in p for p in paths)  # a user verifies only its own stack
    with talked.server.client(talked.admin) as http:
        every = http.get("/v1/hrm/ledger/verify").json()
    assert "HOT/ledger/governance.jsonl" in [r["path"] for r in every["ledgers"]]


def test_learnings_are_searched_by_admin_keys_only(talked: Served) -> None:
    subprocess.run(
        [*HRM, "memory", "learn", "Binary search halves the sorted range each step",
         "--type", "WORKING_SOLUTION", "--home", str(talked.home)],
        check=True, capture_output=True, env=clean_env(talked.home), timeout=WAIT_S,
    )
    with talked.server.client(talked.admin) as http:
        found = http.get("/v1/hrm/learnings", params={"q": "binary search", "limit": 5})
        empty = http.get("/v1/hrm/learnings")
    assert found.status_code == 200
    results = found.json()["results"]
    assert [r["content"] for r in results] == ["Binary search halves the sorted range each step"]
    assert empty.status_code == 400
    governance = talked.home / "HOT/ledger/governance.jsonl"
    before = governance.stat().st_size
    with talked.server.client(talked.alice) as http:
        denied = http.get("/v1/hrm/learnings", params={"q": "x"})
    assert denied.status_code == 403
    record = json.loads(governance.read_text().splitlines()[-1])
    assert governance.stat().st_size > before
    assert record["kind"] == "visibility_denied" and record["data"]["target"] == "learnings"


@pytest.mark.parametrize("path", ["/v1/hrm/turns", "/v1/hrm/problems", "/v1/hrm/working",
                                  "/v1/hrm/turns/1", "/v1/hrm/canon"])
def test_another_stack_is_refused_and_the_refusal_recorded(talked: Served, path: str) -> None:
    governance = talked.home / "HOT/ledger/governance.jsonl"
    with talked.server.client(talked.admin) as http:
        response = http.get(path, params={"stack": "RESIDENT:alice"})
    assert response.status_code == 403
    record = json.loads(governance.read_text().splitlines()[-1])
    assert record["kind"] == "visibility_denied"
    assert (record["data"]["observer"], record["data"]["target"]) == ("ADMIN", "RESIDENT:alice")
    assert record["data"]["operation"].startswith("serve:")


def test_the_decisions_api_needs_a_key_and_writes_nothing_without_one(talked: Served) -> None:
    before = ledger_sizes(talked.home)
    with talked.server.client(None) as http:
        statuses = {http.get(p).status_code for p in ("/v1/hrm/turns", "/v1/hrm/canon")}
        posted = http.post("/v1/hrm/canon/fact.my-locker-code/rollback", json={"version": 1})
    assert statuses == {401} and posted.status_code == 401
    assert ledger_sizes(talked.home) == before


def test_bad_query_values_are_400(talked: Served) -> None:
    with talked.server.client(talked.alice) as http:
        assert http.get("/v1/hrm/turns", params={"limit": "0"}).status_code == 400
        assert http.get("/v1/hrm/turns", params={"limit": "many"}).status_code == 400
        assert http.get("/v1/hrm/turns/zero").status_code == 400
        assert http.get("/v1/hrm/turns/999").status_code == 404
