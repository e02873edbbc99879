"""Round-trip properties: any valid handoff survives serialize → deserialize in both formats."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.continuity.confidence import VerificationStatus
from hrm.continuity.handoffs import (
    LEARNING_TYPES,
    ArtifactReferences,
    Blocker,
    BlockerSeverity,
    BlockerType,
    ContextInfo,
    Decision,
    HandoffData,
    HandoffFormat,
    HandoffLearning,
    ResumeInstructions,
    SessionMetadata,
    TaskInfo,
    TaskStatus,
    deserialize,
    serialize,
    validate_schema,
)

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
required = text.filter(lambda value: value.strip() != "")
names = st.lists(required, max_size=3)
zones = st.sampled_from(
    [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=8))]
)
# Hypothesis takes naive bounds; the zone is attached below.
EARLIEST = datetime(2000, 1, 1)  # noqa: DTZ001
LATEST = datetime(2100, 1, 1)  # noqa: DTZ001
moments = st.builds(
    lambda dt, tz: dt.replace(tzinfo=tz),
    st.datetimes(min_value=EARLIEST, max_value=LATEST),
    zones,
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**9), 10**9) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(required, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def handoffs(draw: st.DrawFn) -> HandoffData:
    started = draw(moments)
    ended = draw(st.none() | st.just(started + timedelta(seconds=draw(st.integers(0, 10**6)))))
    return HandoffData(
        session=SessionMetadata(
            id=draw(required),
            started_at=started,
            ended_at=ended,
            duration_seconds=draw(st.none() | st.integers(0, 10**6)),
        ),
        task=TaskInfo(draw(required), draw(st.sampled_from(TaskStatus)), draw(names)),
        context=ContextInfo(draw(required), draw(text), draw(text), draw(names)),
        decisions=draw(st.lists(st.builds(Decision, required, text, names), max_size=3)),
        artifacts=ArtifactReferences(draw(names), draw(names), draw(names)),
        learnings=draw(
            st.lists(
                st.builds(
                    HandoffLearning,
                    st.sampled_from(LEARNING_TYPES),
                    required,
                    st.sampled_from(VerificationStatus),
                ),
                max_size=3,
            )
        ),
        blockers=draw(
            st.lists(
                st.builds(
                    Blocker,
                    st.sampled_from(BlockerType),
                    required,
                    st.sampled_from(BlockerSeverity),
                ),
                max_size=2,
            )
        ),
        resume=ResumeInstructions(draw(names), draw(names), draw(names)),
        notes=draw(st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)),
        extra=draw(st.dictionaries(required, json_values, max_size=3)),
    )


@settings(max_examples=150, deadline=None)
@given(handoffs(), st.sampled_from(HandoffFormat))
def test_round_trip_is_equivalent(handoff: HandoffData, fmt: HandoffFormat) -> None:
    assert validate_schema(handoff).valid
    result = serialize(handoff, fmt)
    back = deserialize(result.content)
    assert back == handoff
    assert back.source_format is fmt
    assert serialize(back, fmt).content == result.content


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300))
def test_deserialize_never_fails_with_anything_but_hrm_error(content: str) -> None:
    import contextlib

    from hrm.errors import HRMError

    with contextlib.suppress(HRMError):
        deserialize(content)
