"""Each secret family, from its table of samples: positives scrubbed, negatives left alone.

The samples live in ``tests/fixtures/secret_families.toml`` (one table per family); a new family
is a new row in `hrm._secret_families` and a new table there. Ordinary coding text (git logs,
UUIDs, base64 images, Django fields) must pass the whole scrubber untouched.
"""

from __future__ import annotations

import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hrm.scrubbing import (
    SECRET_PATTERNS,
    SecretPattern,
    _Anchored,
    _apply_anchored,
    _replace_checked,
    scrub_text,
)

TABLE = tomllib.loads(
    (Path(__file__).parent / "fixtures" / "secret_families.toml").read_text(encoding="utf-8")
)
FAMILIES: dict[str, dict[str, list]] = TABLE["families"]  # type: ignore[type-arg]
BY_KIND = {pattern.kind: pattern for pattern in SECRET_PATTERNS}


@dataclass(frozen=True)
class Positive:
    kind: str
    text: str
    secret: str


POSITIVES = [
    Positive(kind, sample["text"], sample["secret"])
    for kind, rows in FAMILIES.items()
    for sample in rows.get("positives", [])
]
NEGATIVES = [(kind, text) for kind, rows in FAMILIES.items() for text in rows.get("negatives", [])]


def _apply_alone(pattern: SecretPattern, text: str) -> str:
    """One row on its own, the way the scrubber runs it (at its anchors, or by search)."""
    if pattern.phase == "scan":
        return _replace_checked(pattern, text) if any(
            hint in text.lower() for hint in pattern.hints) else text
    haystack = text if pattern.phase == "shape" else text.lower()
    return _apply_anchored(text, haystack, _Anchored((pattern,)))


def test_every_family_has_a_table_of_samples_and_every_table_a_family() -> None:
    assert set(FAMILIES) == set(BY_KIND)
    for kind, rows in FAMILIES.items():
        assert len(rows.get("positives", [])) >= 1, kind
        assert len(rows.get("negatives", [])) >= 1, kind
    assert sum(len(rows["positives"]) for rows in FAMILIES.values()) >= 120


@pytest.mark.parametrize(
    "case", POSITIVES, ids=[f"{p.kind}-{i}" for i, p in enumerate(POSITIVES)]
)
def test_the_family_alone_removes_its_secret(case: Positive) -> None:
    out = _apply_alone(BY_KIND[case.kind], case.text)
    assert case.secret not in out
    assert f"[REDACTED:{case.kind}]" in out


@pytest.mark.parametrize(
    "case", POSITIVES, ids=[f"{p.kind}-{i}" for i, p in enumerate(POSITIVES)]
)
def test_the_whole_scrubber_removes_every_positive_and_is_idempotent(case: Positive) -> None:
    out = scrub_text(f"before {case.text} after")
    assert case.secret not in out
    assert "[REDACTED:" in out
    assert scrub_text(out) == out


@pytest.mark.parametrize(("kind", "text"), NEGATIVES, ids=[f"{k}-{i}" for i, (k, _) in
                                                          enumerate(NEGATIVES)])
def test_negative_samples_pass_untouched(kind: str, text: str) -> None:
    assert scrub_text(text) == text


@pytest.mark.parametrize("text", TABLE["benign"]["texts"])
def test_ordinary_coding_text_passes_untouched(text: str) -> None:
    assert scrub_text(text) == text


def test_the_issue_families_are_covered() -> None:
    """The shapes issues 31 and 32 found kept raw, each through the whole scrubber."""
    found_raw = {
        "DB_PASSWORD=hunter2hunter2": "hunter2hunter2",
        "OPENAI_API_KEY=sk-u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8": "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8",
        "GITHUB_TOKEN=ghp_R0CsTy4Qwb8DwkNhFdnXsiVpzz63FfkCzJr4": "R0CsTy4Qwb8DwkNhFdnXsiVpzz63FfkCzJr4",
        "DD_API_KEY=7cced9041dff02cee737443e21047194": "7cced9041dff02cee737443e21047194",
        "MYSQL_PWD=Zx81kQpL0w": "Zx81kQpL0w",
        "token npm_gEOzdmenCkhvMdgaKjIg8xNbe3nNyjOq9wMx": "gEOzdmenCkhvMdgaKjIg8xNbe3nNyjOq9wMx",
        "SG.mZp0zVZomHFwUbbYrEqmSM.9wCZ7Uw9xfogoEmvnEN5N1aE6PwZPf1Qh6yY": "9wCZ7Uw9xfogoEmvnEN5N1aE6PwZPf1Qh6yY",
        "SKa2cec255404e4fb440034d6608697a8d": "a2cec255404e4fb440034d6608697a8d",
        "pypi-AgEIcHlwaS5vcmcEhh2FDEEtfjgVvVqE1SkHbn88": "AgEIcHlwaS5vcmcEhh2FDEEtfjgVvVqE1SkHbn88",
        "AccountKey=BTxaQWk8JzFalHlsZfYcMMDktXP/tKsf2rcD==;": "BTxaQWk8JzFalHlsZfYcMMDktXP",
        "SharedAccessKey=Zx8kQp0wLm3nB5vC7xZ9aS1dF4g=": "Zx8kQp0wLm3nB5vC7xZ9aS1dF4g",
        "https://bob:Pa55word9@host/x": "Pa55word9",
        '"private_key_id": "5dcad6ba2b0aee0ca923732881584d8c4fa2815d"':
            "5dcad6ba2b0aee0ca923732881584d8c4fa2815d",
        "xapp-1-A9DB8P5QA3E6-1234567890123-22f828767efc": "22f828767efc",
        "whsec_ka8FRCztUjAwyuh1vauWv1zh87mTa5Vs": "ka8FRCztUjAwyuh1vauWv1zh87mTa5Vs",
        "aws_secret_key = jIclHkCiHp6bR1IqfEouHgxzNNAL5wIScGebcy8F":
            "jIclHkCiHp6bR1IqfEouHgxzNNAL5wIScGebcy8F",
        "our aws secret is jIclHkCiHp6bR1IqfEouHgxzNNAL5wIScGebcy8F ok":
            "jIclHkCiHp6bR1IqfEouHgxzNNAL5wIScGebcy8F",
        "my password is hunter2!": "hunter2",
    }
    for text, secret in found_raw.items():
        assert secret not in scrub_text(text), text


# -- linear time -------------------------------------------------------------------------------

_FRAGMENTS = sorted(
    {hint for pattern in SECRET_PATTERNS for hint in pattern.hints}
    | {
        "=", ":", "'", '"', "`", " ", "\t", "\n", "-", "_", ".", "/", "+", "@", "://", "?",
        "&", ";", "<private>", "</private>", "<", ">", "-----BEGIN RSA PRIVATE KEY-----",
        "eyJ", "sk-", "AKIA", "a", "A", "0", "aaaaaaaaaaaaaaaaaaaa", "0a1B2c3D4e5F6g7H",
        "password", "PASSWORD", "is ", " is ", "Basic ", "Bearer ", "--password ", "$",
    }
)
_KB = 32


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=12))
def test_adversarial_text_scrubs_in_time_linear_in_its_length(pieces: list[str]) -> None:
    """Repeating any mix of the patterns' own fragments to 32 KB stays far below quadratic.

    A quadratic pattern on 32 KB of its own fragments runs for seconds to minutes; a linear one
    takes a few milliseconds. The bound (0.1 s per KB, 3.2 s here) is generous enough for any
    machine and still catches the first.
    """
    unit = "".join(pieces)
    text = (unit * (_KB * 1024 // len(unit) + 1))[: _KB * 1024]
    started = time.process_time()
    scrub_text(text)
    assert time.process_time() - started < 0.1 * _KB
