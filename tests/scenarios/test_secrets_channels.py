"""No secret and no private text is stored, whatever the channel and wherever it stands.

The channels are those of ``faults/secrets_channels.py`` (a turn with traces, the memory bus,
learnings stored with and without embeddings and imported, handoffs written by the CLI, by
SessionEnd and by PreCompact, the artifact index, the hook log), each driven through its public
API, CLI or hook. Hypothesis picks secret families from the families table and the text around
them; afterwards the whole home (``memory.db`` with its WAL, the FTS5 indexes' terms, ledgers,
handoffs, logs, traces) must hold none of them raw, in any case.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "faults"))

import secrets_channels as channels  # a script folder, not a package

PROBES = channels.probes()
SEPARATORS = st.sampled_from([" ", "\n", "\t", " (", ") ", ": ", "; ", ", "])
WORDS = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=30
)


@st.composite
def embedded(draw: st.DrawFn) -> list[tuple[channels.Probe, str]]:
    """A few probes, each inside text of hypothesis's choosing."""
    chosen = draw(st.lists(st.sampled_from(PROBES), min_size=1, max_size=3, unique=True))
    return [
        (probe, draw(WORDS) + draw(SEPARATORS) + probe.text + draw(SEPARATORS) + draw(WORDS)
         + f" <private>{channels.PRIVATE_PROBE}</private>")
        for probe in chosen
    ]


@pytest.mark.slow
@pytest.mark.parametrize("channel", list(channels.CHANNELS))
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                              HealthCheck.data_too_large])
@given(cases=embedded())
def test_nothing_of_a_secret_or_private_text_is_stored(
    channel: str, cases: list[tuple[channels.Probe, str]]
) -> None:
    if "embeddings" in channel:
        pytest.importorskip("onnxruntime")
    with tempfile.TemporaryDirectory(prefix="hrm-secrets-") as scratch:
        place = channels.Place(Path(scratch) / "home", Path(scratch) / "project", Path(scratch))
        place.project.mkdir()
        channels.CHANNELS[channel](place, [text for _, text in cases])
        needles = [probe.secret for probe, _ in cases] + [channels.PRIVATE_PROBE]
        found = channels.stored_raw(place.home, needles)
    assert {needle: hits for needle, hits in found.items() if hits} == {}


def test_a_secret_an_earlier_turn_quoted_is_not_kept_cut_in_the_trace() -> None:
    # Found by the property above: the second turn's answer quotes the first message, and the
    # trace kept the answer's first 200 characters, cut through the token, before scrubbing.
    token = "dp.st.prBGumXxY9B4bZWOz648JJnUfd7UACNWabcdefgh"
    texts = [f" DOPPLER_TOKEN={token}  <private>{channels.PRIVATE_PROBE}</private>",
             " <apiKey>prBGumXxY9B4bZWOz648JJnU</apiKey>  "
             f"<private>{channels.PRIVATE_PROBE}</private>"]
    with tempfile.TemporaryDirectory(prefix="hrm-secrets-") as scratch:
        place = channels.Place(Path(scratch) / "home", Path(scratch) / "project", Path(scratch))
        place.project.mkdir()
        channels.CHANNELS["turn (ledgers, work orders, traces)"](place, texts)
        found = channels.stored_raw(place.home, ["prBGumXxY9B4bZWOz648JJnU", token])
        assert (place.home / "logs" / "trace.jsonl").stat().st_size > 0
    assert {needle: hits for needle, hits in found.items() if hits} == {}
