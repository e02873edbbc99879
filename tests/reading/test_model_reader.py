"""The model tier: one bounded JSON call, its answer checked, canon writes capped at asking."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from hrm.config import HRMConfig, LLMConfig, ReadingConfig
from hrm.errors import HRMError
from hrm.llm.gateway import LLMGateway
from hrm.reading import Band, Bands, Intent, IntentKind, ReadingContext, sentence_spans
from hrm.reading.model_reader import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_TIMEOUT_MS,
    ModelReader,
    answer_schema,
    load_model_reader,
    model_tier_enabled,
)
from hrm.testing import ScriptedAdapter

BANDS = Bands()


def answer(*intents: dict[str, object]) -> str:
    return json.dumps({"intents": list(intents)})


def read(
    reader: ModelReader, text: str, context: ReadingContext | None = None, **kw: object
) -> tuple[Intent, ...]:
    return reader.read(text, sentence_spans(text), context or ReadingContext(), **kw)  # type: ignore[arg-type]


def test_one_bounded_json_call_with_a_schema_per_message() -> None:
    """The call asks for JSON, is capped in tokens and time, and names its purpose."""
    adapter = ScriptedAdapter([answer({"sentence": 1, "kind": "focus", "confidence": 0.9,
                                       "slots": {"turns": 2}})])
    reader = ModelReader(adapter)
    intents = read(reader, "Hi there. Stick to the parser for a couple of rounds.")
    adapter.assert_done()
    (call,) = adapter.calls
    assert call.config is not None and call.config.json_mode
    assert call.config.max_tokens == DEFAULT_MAX_TOKENS
    assert call.config.timeout_ms == DEFAULT_TIMEOUT_MS
    assert call.config.purpose == "reading"
    assert "Stick to the parser" in call.messages[0].content
    assert [(i.kind, i.slots.turns, i.reader) for i in intents] == [
        (IntentKind.FOCUS, 2, "model:scripted-1")
    ]
    assert intents[0].span == sentence_spans("Hi there. Stick to the parser for a couple of rounds.")[1]


def test_the_gateway_records_the_call_as_a_work_order() -> None:
    records: list[tuple[str, dict[str, object]]] = []
    gateway = LLMGateway(ScriptedAdapter([answer()]), record=lambda k, d: records.append((k, d)))
    assert read(ModelReader(gateway), "whatever you think") == ()
    assert [d.get("purpose") for k, d in records if k == "work_order"] == ["reading"]


def test_a_preference_read_by_the_model_alone_is_asked_about_not_kept() -> None:
    adapter = ScriptedAdapter([answer({"sentence": 0, "kind": "preference", "confidence": 0.99})])
    (intent,) = read(ModelReader(adapter), "Metric for me, every time.")
    assert BANDS.of(intent.confidence) is Band.ASK


def test_a_preference_an_earlier_tier_also_read_is_acted_on() -> None:
    text = "Metric for me, every time."
    earlier = Intent(IntentKind.PREFERENCE, (0, len(text)), 0.6, "exemplars")
    adapter = ScriptedAdapter([answer({"sentence": 0, "kind": "preference", "confidence": 0.9})])
    (intent,) = read(ModelReader(adapter), text, earlier=(earlier,))
    assert BANDS.of(intent.confidence) is Band.ACT


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("fact", "the on-call rota is in notion, keep that"),
        ("forget", "the on-call rota thing, drop it from what you keep"),
    ],
)
def test_other_canon_writes_are_capped_too(kind: str, text: str) -> None:
    adapter = ScriptedAdapter([answer({"sentence": 0, "kind": kind, "confidence": 0.97})])
    (intent,) = read(ModelReader(adapter), text)
    assert BANDS.of(intent.confidence) is Band.ASK


def test_a_statement_about_the_work_is_no_decision_whatever_the_model_says() -> None:
    """A decision names the deciding ("go with", "decided", "it is"); the model's word alone
    does not make "We're moving our infrastructure to Terraform" one."""
    adapter = ScriptedAdapter([answer({"sentence": 0, "kind": "decision", "confidence": 0.95})])
    assert read(ModelReader(adapter), "We're moving our infrastructure to Terraform") == ()


def test_a_question_is_never_a_preference_whatever_the_model_says() -> None:
    adapter = ScriptedAdapter([answer({"sentence": 0, "kind": "preference", "confidence": 0.9})])
    assert read(ModelReader(adapter), "I hate how slow webpack is, what are alternatives?") == ()


def test_an_answer_needs_its_question_pending() -> None:
    reply = answer({"sentence": 0, "kind": "yes", "confidence": 0.9})
    adapter = ScriptedAdapter([reply, reply])
    reader = ModelReader(adapter)
    assert read(reader, "sure") == ()
    (intent,) = read(reader, "sure", ReadingContext(pending="intent"))
    assert intent.kind is IntentKind.YES


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param("I think it is a preference.", id="prose"),
        pytest.param('{"intents": [{"sentence": 7, "kind": "forget", "confidence": 0.9}]}', id="no-such-sentence"),
        pytest.param('{"intents": [{"sentence": 0, "kind": "delete_all", "confidence": 0.9}]}', id="unknown-kind"),
        pytest.param('{"intents": [{"sentence": 0, "kind": "forget", "confidence": 7}]}', id="confidence-out-of-range"),
        pytest.param('{"intents": "forget"}', id="wrong-shape"),
        pytest.param('[{"sentence": 0}]', id="array"),
        pytest.param("", id="empty"),
    ],
)
def test_junk_from_the_model_reads_nothing(reply: str) -> None:
    adapter = ScriptedAdapter([reply])
    assert read(ModelReader(adapter), "please forget my address") == ()
    adapter.assert_done()


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(HRMError.timeout("chat", DEFAULT_TIMEOUT_MS), id="timeout"),
        pytest.param(HRMError.provider_error(503, "overloaded"), id="provider"),
        pytest.param(HRMError.budget_exhausted("stack", 10, 11), id="budget"),
    ],
)
def test_a_failing_model_reads_nothing(error: HRMError) -> None:
    adapter = ScriptedAdapter([error])
    assert read(ModelReader(adapter), "park the offsite") == ()


def test_slots_are_the_persons_words_never_the_models() -> None:
    """A slot the model invents is dropped; the lenient reading of the sentence stands."""
    adapter = ScriptedAdapter([answer({"sentence": 0, "kind": "resolve", "confidence": 0.9,
                                       "slots": {"ref": "delete all user data"}})])
    (intent,) = read(ModelReader(adapter), "that one is sorted now, tick it off")
    assert intent.slots.ref is None


def test_only_the_first_intent_of_a_sentence_counts() -> None:
    adapter = ScriptedAdapter([answer(
        {"sentence": 0, "kind": "thanks", "confidence": 0.9},
        {"sentence": 0, "kind": "goodbye", "confidence": 0.9},
    )])
    assert [i.kind for i in read(ModelReader(adapter), "cheers and ciao")] == [IntentKind.THANKS]


def test_no_call_without_a_sentence() -> None:
    adapter = ScriptedAdapter([])
    assert ModelReader(adapter).read("", (), ReadingContext()) == ()
    assert ModelReader(adapter).read("abc", [(5, 9)], ReadingContext()) == ()
    adapter.assert_done()


def test_schema_numbers_only_the_sentences_sent() -> None:
    schema = answer_schema(3)
    sentence = schema["properties"]["intents"]["items"]["properties"]["sentence"]
    assert (sentence["minimum"], sentence["maximum"]) == (0, 2)


@pytest.mark.parametrize(
    ("setting", "provider", "base_url", "enabled"),
    [
        ("auto", "anthropic", None, True),
        ("auto", "openai", None, True),
        ("auto", "openai", "http://127.0.0.1:11434/v1", False),
        ("auto", "local", None, False),
        ("auto", "offline", None, False),
        ("on", "local", None, True),
        ("on", "offline", None, False),
        ("off", "anthropic", None, False),
    ],
)
def test_auto_means_capable_hosted_models_only(
    setting: str, provider: str, base_url: str | None, enabled: bool
) -> None:
    assert model_tier_enabled(setting, provider, base_url=base_url) is enabled


def test_no_model_reader_for_the_offline_model() -> None:
    config = replace(HRMConfig(), llm=LLMConfig(provider="offline"),
                     reading=ReadingConfig(model_tier="on"))
    assert load_model_reader(config) is None


def test_a_configured_capable_model_gets_a_reader_on_the_stacks_gateway() -> None:
    config = replace(HRMConfig(), llm=LLMConfig(provider="anthropic"))
    adapter = ScriptedAdapter([answer({"sentence": 0, "kind": "thanks", "confidence": 0.9})])
    reader = load_model_reader(config, adapter)
    assert reader is not None
    assert [i.kind for i in read(reader, "ta very much")] == [IntentKind.THANKS]
