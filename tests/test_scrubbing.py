"""Every credential kind in the table is scrubbed; ordinary text is left alone."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.scrubbing import (
    PRIVATE_MARKER,
    SECRET_PATTERNS,
    contains_secret,
    scrub,
    scrub_text,
    strip_private,
)

SECRETS = {
    "private_key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx7\nabc\n-----END RSA PRIVATE KEY-----",
    "anthropic_key": "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "openai_key": "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab",
    "aws_access_key": "AKIAIOSFODNN7EXAMPLE",
    "aws_secret_key": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "github_token": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "gitlab_token": "glpat-AbCdEfGhIjKlMnOpQrSt",
    "slack_token": "xoxb-123456789012-1234567890123-AbCdEfGhIjKl",
    "slack_webhook": "https://hooks.slack.com/services/T000/B000/XXXXXXXX",
    "google_api_key": "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "stripe_key": "sk_live_AbCdEfGhIjKlMnOpQrSt",
    "huggingface_token": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "bearer_token": "Authorization: Bearer abcdef0123456789abcdef0123456789",
    "url_password": "postgres://admin:s3cr3tPassw0rd@db.example.com:5432/app",
    "assigned_secret": "password = hunter2hunter2",
}


def test_every_kind_here_is_a_family_of_the_table() -> None:
    assert set(SECRETS) <= {p.kind for p in SECRET_PATTERNS}


@pytest.mark.parametrize(("kind", "text"), list(SECRETS.items()), ids=list(SECRETS))
def test_secret_is_replaced_by_its_kind(kind: str, text: str) -> None:
    out = scrub_text(f"before {text} after")
    assert "[REDACTED:" in out
    assert out.startswith("before ") and out.endswith(" after")
    secret_part = {
        "aws_secret_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "bearer_token": "abcdef0123456789abcdef0123456789",
        "url_password": "s3cr3tPassw0rd",
        "assigned_secret": "hunter2hunter2",
        "private_key": "MIIEowIBAAKCAQEAx7",
    }.get(kind, text)
    assert secret_part not in out


def test_url_keeps_user_and_host() -> None:
    assert (
        scrub_text("postgres://admin:pw12345678@db:5432/x")
        == "postgres://admin:[REDACTED:url_password]@db:5432/x"
    )


@pytest.mark.parametrize(
    "text",
    [
        "Use async/await instead of .then()",
        "the sk- prefix is short",
        "password policy: 12 chars",
        "",
    ],
)
def test_ordinary_text_is_untouched(text: str) -> None:
    assert scrub_text(text) == text
    assert not contains_secret(text) or text == "password policy: 12 chars"


def test_scrub_walks_nested_values_and_keys() -> None:
    key = SECRETS["anthropic_key"]
    value = {"cfg": {"api_key": key, "list": [key, 3, None]}, key: True}
    out = scrub(value)
    flat = repr(out)
    assert key not in flat
    assert out["cfg"]["list"][1:] == [3, None]


def test_scrubbing_is_idempotent() -> None:
    once = scrub_text(" ".join(SECRETS.values()))
    assert scrub_text(once) == once


@settings(max_examples=150, deadline=None)
@given(
    prefix=st.text(max_size=40), suffix=st.text(max_size=40), kind=st.sampled_from(sorted(SECRETS))
)
def test_scrubbed_output_never_contains_the_secret(prefix: str, suffix: str, kind: str) -> None:
    secret = {
        "aws_secret_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "bearer_token": "abcdef0123456789abcdef0123456789",
        "url_password": "s3cr3tPassw0rd",
        "assigned_secret": "hunter2hunter2",
        "private_key": "MIIEowIBAAKCAQEAx7",
    }.get(kind, SECRETS[kind])
    out = scrub_text(prefix + " " + SECRETS[kind] + " " + suffix)
    assert secret not in out


def test_a_megabyte_scrubs_in_one_pass() -> None:
    text = ("lorem ipsum dolor sit amet " * 40_000) + SECRETS["github_token"]
    out = scrub_text(text)
    assert SECRETS["github_token"] not in out


def test_secret_patterns_compile_on_first_use_and_stay_frozen_values() -> None:
    import re

    from hrm.scrubbing import SecretPattern

    lazy = SecretPattern("demo", r"\bdemo-[a-z]{4}", 0, ("demo-",))
    eager = SecretPattern("demo", re.compile(r"\bdemo-[a-z]{4}"), 0, ("demo-",))
    assert lazy == eager and hash(lazy) == hash(eager)
    assert lazy.regex.pattern == eager.regex.pattern == r"\bdemo-[a-z]{4}"
    assert lazy.regex is lazy.regex  # compiled once
    with pytest.raises(AttributeError):
        lazy.kind = "other"  # type: ignore[misc]
    flagged = SecretPattern("demo", re.compile("x", re.IGNORECASE))
    assert flagged.flags & re.IGNORECASE and flagged.regex.search("X")


def test_the_memo_of_short_texts_stays_bounded_and_always_answers_as_scrubbing_would() -> None:
    from hrm import scrubbing

    secret = SECRETS["github_token"]
    for round_ in range(2):  # the second round runs after the memo was cleared at least once
        for i in range(scrubbing._CACHED_ENTRIES + 10):
            text = f"token {i} {secret}" if i % 1000 == 0 else f"plain text {i}"
            assert scrub_text(text) == scrubbing._scrub(text), (round_, i)
            assert len(scrubbing.SCRUBBED) <= scrubbing._CACHED_ENTRIES
    assert secret not in scrub_text(f"again {secret}")
    assert "[REDACTED:github_token]" in scrubbing.SCRUBBED[f"again {secret}"]


def _reference_scrub(value: object) -> object:
    """The rule, written plainly: strings scrubbed, containers walked (keys too)."""
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        return {(scrub_text(k) if isinstance(k, str) else k): _reference_scrub(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_reference_scrub(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_reference_scrub(v) for v in value)
    return value


_LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
    st.sampled_from(["plain", "", SECRETS["github_token"], f"key {SECRETS['stripe_key']}"]),
    st.text(max_size=12),
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.one_of(st.text(max_size=6), st.integers(), st.just(SECRETS["jwt"])),
                        inner, max_size=3),
    ),
    max_leaves=12,
)


@given(_VALUES)
def test_scrub_walks_any_value_as_the_plain_rule_does(value: object) -> None:
    scrubbed = scrub(value)
    assert scrubbed == _reference_scrub(value)
    assert type(scrubbed) is type(value)


# -- <private> ---------------------------------------------------------------------------------

PRIVATE_CASES = [
    ("keep <private>my bank pin</private> this", "keep [private] this"),
    ("<PRIVATE>shout</Private> ok", "[private] ok"),
    ("a <private>x</private> b <private>y</private> c", "a [private] b [private] c"),
    ("nest <private>a <private>b</private> still</private> out", "nest [private] out"),
    ("unclosed <private>everything after this", "unclosed [private]"),
    ("cut off start</private> then public", "[private] then public"),
    ("<private reason='health'>x</private>y", "[private]y"),
    ("multi <private>line\none\nline two</private> end", "multi [private] end"),
    ("talk about private methods and <privateer> ships", "talk about private methods and <privateer> ships"),
    ("", ""),
]


@pytest.mark.parametrize(("text", "expected"), PRIVATE_CASES, ids=range(len(PRIVATE_CASES)))
def test_private_spans_are_stripped_with_a_marker(text: str, expected: str) -> None:
    assert strip_private(text) == expected
    assert scrub_text(text) == expected


def test_private_text_holding_a_secret_is_gone_entirely() -> None:
    out = scrub_text("x <private>DB_PASSWORD=hunter2hunter2</private> y")
    assert out == "x [private] y"
    assert scrub({"k": ["<private>a</private>b"]}) == {"k": ["[private]b"]}


@given(
    before=st.text(max_size=30).filter(lambda t: "private" not in t.lower()),
    inside=st.text(max_size=30).filter(lambda t: "private" not in t.lower()),
    after=st.text(max_size=30).filter(lambda t: "private" not in t.lower()),
    closed=st.booleans(),
)
def test_nothing_inside_a_private_span_survives(
    before: str, inside: str, after: str, closed: bool
) -> None:
    secret = "Q7x" + inside + "Z9k"
    text = f"{before}<private>{secret}" + (f"</private>{after}" if closed else "")
    out = strip_private(text)
    assert secret not in out
    assert out.startswith(before) and PRIVATE_MARKER in out


JSON_MEMBERS = [
    ('{"PW": []}', '{"PW": []}'),
    ('{"password": {"old": null}}', '{"password": {"old": null}}'),
    ('{"pin": 123456789}', '{"pin": 123456789}'),
    ('{"token": true, "secret": -5}', '{"token": true, "secret": -5}'),
    ('{"PW": "hunter2xyz"}', '{"PW": "[REDACTED:assigned_secret]"}'),
    ('[{"password": "correct horse"}, 3]', '[{"password": "[REDACTED:assigned_secret]"}, 3]'),
]


@pytest.mark.parametrize(("text", "expected"), JSON_MEMBERS, ids=range(len(JSON_MEMBERS)))
def test_a_json_document_stays_json_with_its_secret_strings_redacted(
    text: str, expected: str
) -> None:
    """The memory journal scrubs JSON text columns as text: a credential-named member whose
    value is no string (a number, a list) was "redacted" with its closing brace, and the row
    no longer parsed."""
    assert scrub_text(text) == expected
    json.loads(scrub_text(text))


def test_a_bare_value_outside_json_is_still_redacted() -> None:
    assert scrub_text("password = 123456789") == "password = [REDACTED:assigned_secret]"
    assert scrub_text('"password": hunter2xyz') == '"password": [REDACTED:assigned_secret]'


_CREDENTIAL_KEYS = st.sampled_from(["PW", "password", "pin", "token", "secret", "api_key"])
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(_CREDENTIAL_KEYS | st.text(max_size=6), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(_JSON)
def test_scrubbing_json_text_always_leaves_json(value: object) -> None:
    for text in (json.dumps(value), json.dumps(value, separators=(",", ":"))):
        json.loads(scrub_text(text))
