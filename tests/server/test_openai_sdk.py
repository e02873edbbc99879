"""The real `openai` SDK against a live `hrm serve`: answers, streams, errors, isolated keys."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import openai
import pytest
from tests.server.conftest import Served
from tests.server.support import ledger_sizes, turn_records

_OPEN: list[openai.OpenAI] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    """Each SDK client holds a kept-alive connection; closed here, not whenever the garbage
    collector runs (its ResourceWarning then fails whichever test is running, anywhere)."""
    yield
    while _OPEN:
        _OPEN.pop().close()


def client(served: Served, key: str) -> openai.OpenAI:
    sdk = openai.OpenAI(base_url=f"{served.server.base_url}/v1", api_key=key, max_retries=0)
    _OPEN.append(sdk)
    return sdk


def test_a_completion_is_a_governed_turn_with_its_decision_and_ledger_position(served: Served) -> None:
    answer = client(served, served.alice).chat.completions.create(
        model="hrm", messages=[{"role": "user", "content": "Explain how binary search works"}]
    )
    assert answer.object == "chat.completion"
    assert answer.choices[0].message.role == "assistant"
    assert answer.choices[0].finish_reason == "stop"
    assert "binary search" in (answer.choices[0].message.content or "")
    hrm = answer.model_extra["hrm"]
    assert hrm["agent_class"] == "RESIDENT:alice"
    assert hrm["action"] == "respond" and hrm["asked"] is False
    assert hrm["arbitration"]["disposition"] in {"stay", "switch", "queue", "ask"}
    assert hrm["arbitration"]["band"] in {"preempt", "ask", "below"}
    assert hrm["stance"]["allowed"] == "respond"
    assert hrm["strategy"]
    # The ledger position names the turn's own record in the stack's decision ledger.
    position = hrm["ledger"]
    assert position["ledger"] == "HO2/ledger/RESIDENT_alice/workorder.jsonl"
    lines = (served.home / position["ledger"]).read_text().splitlines()
    record = json.loads(lines[position["seq"] - 1])
    assert record["kind"] == "turn" and record["hash"] == position["hash"]
    assert record["data"]["turn"] == hrm["turn"]
    assert answer.usage is not None and answer.usage.total_tokens > 0


def test_a_memory_write_carries_the_write_gates_verdict(served: Served) -> None:
    answer = client(served, served.alice).chat.completions.create(
        model="hrm", messages=[{"role": "user", "content": "Remember that my locker code is 4512"}]
    )
    writes = answer.model_extra["hrm"]["memory_writes"]
    assert writes == [{"key": "fact.my-locker-code", "target": "shared_reference",
                       "approved": True, "reason": "Write approved"}]


def test_a_stream_has_openais_chunks_in_order_and_ends_with_done(served: Served) -> None:
    with httpx.Client(base_url=served.server.base_url, timeout=60) as raw:
        response = raw.post(
            "/v1/chat/completions",
            headers={"Authorization": f"Bearer {served.bob}"},
            json={"model": "hrm", "stream": True, "stream_options": {"include_usage": True},
                  "messages": [{"role": "user", "content": "Explain how a hash map works"}]},
        )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = [e for e in response.text.split("\n\n") if e]
    assert all(e.startswith("data: ") for e in events)
    assert events[-1] == "data: [DONE]"
    chunks = [json.loads(e[len("data: "):]) for e in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    *content, final, usage = chunks[1:]
    assert content and all(set(c["choices"][0]["delta"]) == {"content"} for c in content)
    assert all(c["choices"][0]["finish_reason"] is None for c in [chunks[0], *content])
    assert final["choices"][0] == {"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}
    assert final["hrm"]["agent_class"] == "RESIDENT:bob"
    assert usage["choices"] == [] and usage["usage"]["total_tokens"] > 0
    assert all(c["usage"] is None for c in chunks[:-1])  # include_usage: null until the last
    text = "".join(c["choices"][0]["delta"]["content"] for c in content)
    recorded = turn_records(served.home, "RESIDENT:bob")[-1]["data"]
    assert recorded["turn"] == final["hrm"]["turn"]
    assert recorded["response"] == text


def test_the_sdk_reads_a_stream_as_it_reads_openais(served: Served) -> None:
    stream = client(served, served.bob).chat.completions.create(
        model="hrm", stream=True,
        messages=[{"role": "user", "content": "Explain how a linked list works"}],
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert "linked list" in text
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert "usage" not in chunks[0].model_fields_set or chunks[0].usage is None


def test_models_lists_the_governed_model(served: Served) -> None:
    models = client(served, served.alice).models.list()
    assert [m.id for m in models] == ["hrm"]


def test_models_retrieve_finds_the_governed_model_and_404s_any_other(served: Served) -> None:
    sdk = client(served, served.alice)
    model = sdk.models.retrieve("hrm")
    assert (model.id, model.object, model.owned_by) == ("hrm", "model", "hrm")
    assert model == sdk.models.list().data[0]
    for other in ("gpt-4o", "org/model"):
        with pytest.raises(openai.NotFoundError) as caught:
            sdk.models.retrieve(other)
        assert caught.value.body["code"] == "model_not_found"  # type: ignore[index]
        assert caught.value.body["param"] == "model"  # type: ignore[index]
        assert "'hrm'" in caught.value.message
    with pytest.raises(openai.AuthenticationError):
        client(served, "sk-hrm-000000000000-nope").models.retrieve("hrm")


def test_a_missing_or_wrong_key_is_401_and_writes_nothing(served: Served) -> None:
    before = ledger_sizes(served.home)
    for key in ("sk-hrm-000000000000-nope", "not-a-key"):
        with pytest.raises(openai.AuthenticationError) as caught:
            client(served, key).chat.completions.create(
                model="hrm", messages=[{"role": "user", "content": "hello"}]
            )
        assert caught.value.status_code == 401
        assert caught.value.body["code"] == "invalid_api_key"  # type: ignore[index]
    with httpx.Client(base_url=served.server.base_url) as raw:
        bare = raw.post("/v1/chat/completions", json={"model": "hrm", "messages": []})
    assert bare.status_code == 401
    assert bare.json()["error"]["code"] == "missing_api_key"
    assert ledger_sizes(served.home) == before


def test_an_unknown_model_is_404_naming_the_served_one(served: Served) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        client(served, served.alice).chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hello"}]
        )
    assert caught.value.body["code"] == "model_not_found"  # type: ignore[index]
    assert "'hrm'" in caught.value.message


def test_two_keys_never_see_each_others_stack(served: Served) -> None:
    alice, bob = client(served, served.alice), client(served, served.bob)
    alice.chat.completions.create(
        model="hrm", messages=[{"role": "user", "content": "Remember that my bike lock is 9081"}]
    )
    asked = bob.chat.completions.create(
        model="hrm", messages=[{"role": "user", "content": "What is my bike lock code?"}]
    )
    assert "9081" not in (asked.choices[0].message.content or "")
    assert asked.model_extra["hrm"]["agent_class"] == "RESIDENT:bob"
    with httpx.Client(base_url=served.server.base_url) as raw:
        canon = raw.get("/v1/hrm/canon", headers={"Authorization": f"Bearer {served.bob}"})
        assert all("9081" not in json.dumps(ref) for ref in canon.json())
        denied = raw.get(
            "/v1/hrm/canon", params={"stack": "RESIDENT:alice"},
            headers={"Authorization": f"Bearer {served.bob}"},
        )
    assert denied.status_code == 403
    assert denied.json()["error"]["code"] == "visibility_denied"
    governance = (served.home / "HOT/ledger/governance.jsonl").read_text().splitlines()
    denial = json.loads(governance[-1])
    assert denial["kind"] == "visibility_denied"
    assert denial["data"]["observer"] == "RESIDENT:bob"
    assert denial["data"]["target"] == "RESIDENT:alice"


def test_a_regenerate_replays_the_same_turn_and_an_edit_is_a_new_one(served: Served) -> None:
    alice = client(served, served.alice)
    conversation = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Explain how quicksort picks a pivot"},
    ]
    first = alice.chat.completions.create(model="hrm", messages=conversation)
    again = alice.chat.completions.create(model="hrm", messages=conversation)
    assert again.model_extra["hrm"]["replayed"] is True
    assert again.model_extra["hrm"]["turn"] == first.model_extra["hrm"]["turn"]
    assert again.model_extra["hrm"]["ledger"] == first.model_extra["hrm"]["ledger"]
    assert again.choices[0].message.content == first.choices[0].message.content
    turns = [r["data"]["turn"] for r in turn_records(served.home, "RESIDENT:alice")]
    assert turns.count(first.model_extra["hrm"]["turn"]) == 1
    # The same words after an edited earlier message are another conversation: a new turn.
    edited = [{"role": "system", "content": "Be brief."}, conversation[1]]
    other = alice.chat.completions.create(model="hrm", messages=edited)
    assert other.model_extra["hrm"]["replayed"] is False
    assert other.model_extra["hrm"]["turn"] == first.model_extra["hrm"]["turn"] + 1


def test_a_stream_of_a_regenerate_is_the_recorded_answer(served: Served) -> None:
    bob = client(served, served.bob)
    conversation = [{"role": "user", "content": "Explain how a heap keeps its order"}]
    first = bob.chat.completions.create(model="hrm", messages=conversation)
    chunks = list(bob.chat.completions.create(model="hrm", messages=conversation, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == first.choices[0].message.content
    assert chunks[-1].model_extra["hrm"]["replayed"] is True


def test_the_standard_parameters_within_openais_ranges_are_accepted(served: Served) -> None:
    """Checked as OpenAI checks them (tests/server/test_request_errors.py), then left to the
    governed turn: valid values change nothing and are not refused."""
    with served.server.client(served.alice) as http:
        response = http.post("/v1/chat/completions", json={
            "model": "hrm", "messages": [{"role": "user", "content": "Explain how a trie works"}],
            "temperature": 0, "top_p": 1, "max_tokens": 50, "max_completion_tokens": 50, "n": 1,
            "presence_penalty": -2, "frequency_penalty": 2, "stop": ["END"], "seed": 7,
            "user": "u1", "logprobs": False, "logit_bias": {"50256": -100}, "tools": [],
            "tool_choice": "auto", "response_format": {"type": "text"}, "parallel_tool_calls": True,
        })
    assert response.status_code == 200, response.text
