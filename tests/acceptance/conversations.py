"""The acceptance conversations of issue 29: load them, run each on a fresh home, check the
decision record.

The conversations in ``data/*.yaml`` were written from README.md alone (``data/README.md`` says
how and when). This module is shared by the table-driven test (``test_acceptance.py``) and the
benchmark (``bench/bench_acceptance.py``): one loader, one runner, one checker, so the figure
the test floors and the figure RESULTS.md records are the same measurement.

Every check reads what the turn recorded (its decision record, the events it appended) or the
stores it wrote (canon, problems); none reads the answer's wording.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import yaml

from hrm.config import HRMConfig, load_config
from hrm.governance.problems import ProblemStatus
from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.reading.rules.memory import kept_text
from hrm.turn.records import (
    ForgetRequestRecord,
    HeldPreferenceRecord,
    PreferenceRecord,
    TurnResult,
)

__all__ = [
    "DATA",
    "Case",
    "Expect",
    "Outcome",
    "Tiers",
    "half_of",
    "load_cases",
    "run_case",
    "tally",
]

DATA = Path(__file__).resolve().parent / "data"
SPLIT_SEED = "hrm-acceptance-v1:"
"""Fixed when the set was written: changing it would let the split be chosen after a look."""

Half = Literal["tune", "blind"]
Tiers = Literal["rules", "rules+sentence"]
_INTENTS = frozenset({"preference", "inferred", "fact", "decision", "focus", "forget",
                      "resolve", "park", "resume", "list", "nothing"})  # fmt: skip
_DISTANCES = frozenset({"close", "paraphrase", "none"})
_EXPECT_KEYS = frozenset({"canon", "canon_text", "decision", "commitment", "forget",
                          "forgot_text", "kept", "resolved", "parked", "resumed", "listed",
                          "new_problem", "nothing"})  # fmt: skip


class CaseError(ValueError):
    """A malformed case file: names the file and the case."""


@dataclass(frozen=True)
class Expect:
    """What the final message must show (``data/README.md`` defines each key)."""

    canon: str | None = None
    canon_text: str | None = None
    decision: str | None = None
    commitment: int | bool | None = None
    forget: str | None = None
    forgot_text: str | None = None
    kept: str | None = None
    resolved: str | None = None
    parked: str | None = None
    resumed: str | None = None
    listed: bool = False
    new_problem: bool | None = None
    nothing: bool = False


@dataclass(frozen=True)
class Case:
    """One conversation and what its final message must show."""

    id: str
    intent: str
    distance: str
    turns: tuple[str, ...]
    expect: Expect
    source: str

    @property
    def half(self) -> Half:
        return half_of(self.id)


@dataclass
class Outcome:
    """How one case went: the failed checks in words (empty when it passed)."""

    case: Case
    failures: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures


def half_of(case_id: str) -> Half:
    """``tune`` or ``blind``, from a seeded hash of the id (fixed before anything was run)."""
    digest = hashlib.sha256((SPLIT_SEED + case_id).encode()).digest()
    return "tune" if digest[0] % 2 == 0 else "blind"


def load_cases(directory: Path = DATA) -> list[Case]:
    """Every case in ``directory/*.yaml``, in file then listed order.

    Raises:
        CaseError: a file is not a list of cases, a case lacks a field or has an unknown one,
            or an id repeats; the message names the file and the case.
    """
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for path in sorted(directory.glob("*.yaml")):
        items = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not isinstance(items, list):
            raise CaseError(f"{path.name}: expected a list of cases")
        for index, item in enumerate(items):
            case = _case(item, f"{path.name} case {index + 1}")
            if case.id in seen:
                raise CaseError(f"{path.name}: id {case.id} repeats one in {seen[case.id]}")
            seen[case.id] = path.name
            cases.append(case)
    return cases


def _case(item: Any, where: str) -> Case:
    if not isinstance(item, dict) or not {"id", "intent", "distance", "turns", "expect"} <= set(
        item
    ):
        raise CaseError(f"{where}: needs id, intent, distance, turns and expect")
    where = f"{where} ({item['id']})"
    turns, expect = item["turns"], item["expect"]
    if not isinstance(turns, list) or not turns or not all(isinstance(t, str) for t in turns):
        raise CaseError(f"{where}: turns must be a non-empty list of messages")
    if not isinstance(expect, dict) or not expect or set(expect) - _EXPECT_KEYS:
        raise CaseError(f"{where}: unknown or empty expect keys {sorted(expect or {})}")
    if item["intent"] not in _INTENTS or item["distance"] not in _DISTANCES:
        raise CaseError(f"{where}: unknown intent or distance")
    return Case(
        id=str(item["id"]), intent=item["intent"], distance=item["distance"],
        turns=tuple(turns), expect=Expect(**expect), source=where,
    )  # fmt: skip


# ── running ──────────────────────────────────────────────────────────────────


def config_for(home: HRMHome, tiers: Tiers) -> HRMConfig:
    """The home's defaults on the offline model, with or without the sentence model.

    ``rules`` turns the sentence model off everywhere it reads a message (the reading's
    exemplar tier and arbitration's topic comparison), so the figure is the rules' own.
    The home's directory is also the project directory: no config of the machine leaks in.
    """
    config = load_config(home, project_dir=home.root).config
    switch: Literal["auto", "off"] = "off" if tiers == "rules" else "auto"
    return replace(
        config,
        llm=replace(config.llm, provider="offline"),
        reading=replace(config.reading, sentence_model=switch, model_tier="off"),
        topic_embeddings=switch,
    )


@dataclass(frozen=True)
class _Before:
    """The state the final message starts from."""

    problems: frozenset[str]
    statuses: Mapping[str, ProblemStatus]
    active_title: str
    kept: str


def run_case(case: Case, home_dir: Path, tiers: Tiers, *, derived: Path | None = None) -> Outcome:
    """Say the case's messages to a fresh home in ``home_dir`` and check the final one.

    ``derived``: a directory the sentence model's exemplar index is shared through. The index
    is derived from the shipped exemplar files alone (keyed by their digest), never from what
    a conversation said, so copying it into each fresh home saves rebuilding it per case
    (seconds each) without carrying anything from one conversation to the next.
    """
    home = HRMHome.resolve(home_dir)
    if derived is not None:
        _share_index(derived, home.cache_dir / "reading", into_home=True)
    with HRM.open(home, "ADMIN", "offline", config=config_for(home, tiers)) as h:
        for text in case.turns[:-1]:
            h.turn(text)
        before = _snapshot(h)
        result = h.turn(case.turns[-1])
        events = h.last_events()
        outcome = Outcome(case)
        outcome.failures = list(_check(case.expect, h, result, events, before))
    if derived is not None:
        _share_index(derived, home.cache_dir / "reading", into_home=False)
    return outcome


def _share_index(derived: Path, cache: Path, *, into_home: bool) -> None:
    """Copy the exemplar index files between the shared directory and a home's cache."""
    source, target = (derived, cache) if into_home else (cache, derived)
    if not source.is_dir():
        return
    for directory in (*reversed(target.parents[:2]), target):  # the home, its cache, reading
        directory.mkdir(exist_ok=True, mode=0o700)
    for path in source.glob("exemplars-*.npz"):
        if not (target / path.name).exists():
            shutil.copyfile(path, target / path.name)


def _snapshot(h: HRM) -> _Before:
    problems = h.focus.problem_registry.list()
    active = h.focus.problem_registry.get_active()
    return _Before(
        problems=frozenset(p.id for p in problems),
        statuses={p.id: p.status for p in problems},
        active_title=active.title.lower() if active is not None else "",
        kept=_kept(h),
    )


def _kept(h: HRM, prefix: str = "") -> str:
    """What canon keeps now under keys starting with ``prefix``, lowercased, as one text."""
    canon = h.stack.canon()
    texts = (kept_text(v) for k, v in canon.items() if k.startswith(prefix))
    return " | ".join(t for t in texts if t).lower()


# ── checking ─────────────────────────────────────────────────────────────────


def _approved(result: TurnResult, prefix: str) -> list[dict[str, Any]]:
    """The writes to canon (the Shared Reference) the write gate approved under ``prefix``.

    A preference held for confirmation is also written, to the problem's working set only:
    that is no canon write."""
    return [w for w in result.decision.writes
            if w.get("approved") and w.get("target") == "shared_reference"
            and str(w.get("key", "")).startswith(prefix)]  # fmt: skip


def _decisions(result: TurnResult) -> list[str]:
    return [str(w.get("decision", "")).lower() for w in result.decision.writes
            if w.get("target_requested") == "working_set" and w.get("approved")]  # fmt: skip


def _held(result: TurnResult) -> bool:
    pref = result.decision.preference
    return isinstance(pref, PreferenceRecord) and pref.needs_confirmation


def _confirmed(result: TurnResult) -> bool:
    pref = result.decision.preference
    return isinstance(pref, HeldPreferenceRecord) and pref.resolution == "confirmed"


def _forgotten(result: TurnResult) -> bool:
    asked = result.decision.memory_request
    return isinstance(asked, ForgetRequestRecord) and str(asked.resolution or "").startswith(
        "forgotten"
    )


def _pending(events: Iterable[Mapping[str, Any]]) -> bool:
    """hrm asked whether to act on a request read in the middle band (``intent_pending``)."""
    return any(e["kind"] == "intent_pending" for e in events)


def _new_commitment(result: TurnResult) -> Any:
    after, before = result.decision.commitment_after, result.decision.commitment_before
    if after is None or (before is not None and before.id == after.id):
        return None
    return after


def _resumed(h: HRM, before: _Before) -> str:
    """The title now in focus, when the final message moved focus to an earlier problem."""
    active = h.focus.problem_registry.get_active()
    if active is None or active.id not in before.problems:
        return ""
    title = active.title.lower()
    return "" if title == before.active_title else title


def _status_of(h: HRM, text: str) -> list[tuple[str, ProblemStatus]]:
    return [(p.id, p.status) for p in h.focus.problem_registry.list() if text in p.title.lower()]


def _check(
    want: Expect, h: HRM, result: TurnResult, events: Sequence[Mapping[str, Any]], before: _Before
) -> Iterable[str]:
    yield from _check_canon(want, h, result)
    yield from _check_forget(want, h, result, events)
    yield from _check_problems(want, h, result, before)
    if want.decision and not any(want.decision in d for d in _decisions(result)):
        yield f"no decision with {want.decision!r} reached the working set"
    if want.commitment is not None:
        made = _new_commitment(result)
        if made is None:
            yield "no commitment was made"
        elif want.commitment is not True and made.turns_total != want.commitment:
            yield f"commitment for {made.turns_total} turns, not {want.commitment}"
    if want.nothing:
        yield from _triggered(result, events)


def _check_canon(want: Expect, h: HRM, result: TurnResult) -> Iterable[str]:
    if want.canon in ("preference", "fact"):
        prefix = f"{want.canon}."
        if not _approved(result, prefix) and not (
            want.canon == "preference" and _confirmed(result)
        ):
            yield f"no {want.canon} was written to canon"
        elif want.canon_text and want.canon_text not in _kept(h, prefix):
            yield f"canon keeps no {want.canon} with {want.canon_text!r}"
    elif want.canon == "held":
        if not _held(result):
            yield "the preference was not held for confirmation"
        if _approved(result, "preference.") or _approved(result, "fact."):
            yield "canon was written instead of asking"


def _check_forget(
    want: Expect, h: HRM, result: TurnResult, events: Sequence[Mapping[str, Any]]
) -> Iterable[str]:
    if want.forget is None:
        return
    named = want.forgot_text or ""
    kept_now = _kept(h)
    done = _forgotten(result) and (not named or named not in kept_now)
    asked = _pending(events) and bool(named) and named in kept_now
    allowed = {"done": done, "ask": asked, "either": done or asked}[want.forget]
    if not allowed:
        yield f"forget request not acted on as {want.forget!r} (forgotten={done}, asked={asked})"
    if want.kept and want.kept not in _kept(h):
        yield f"{want.kept!r} was forgotten too"


def _check_problems(want: Expect, h: HRM, result: TurnResult, before: _Before) -> Iterable[str]:
    for text, status in ((want.resolved, ProblemStatus.RESOLVED),
                         (want.parked, ProblemStatus.PAUSED)):  # fmt: skip
        if text and not any(
            now is status and before.statuses.get(pid) is not status
            for pid, now in _status_of(h, text)
        ):
            yield f"no problem with {text!r} became {status.value}"
    if want.resumed and want.resumed not in _resumed(h, before):
        yield f"focus did not go back to {want.resumed!r}"
    request = result.decision.problem_request
    if want.listed and not (request is not None and request.kind == "list"):
        yield "the open problems were not listed"
    if want.new_problem is False:
        added = {p.id for p in h.focus.problem_registry.list()} - before.problems
        if added:
            yield f"opened {len(added)} new problem(s)"


def _triggered(result: TurnResult, events: Sequence[Mapping[str, Any]]) -> Iterable[str]:
    """What a message that must trigger nothing set off (each in words)."""
    d = result.decision
    if _approved(result, "preference.") or _approved(result, "fact."):
        yield "wrote canon"
    if _held(result):
        yield "held a preference for confirmation"
    if d.memory_request is not None:
        yield f"read a memory request ({type(d.memory_request).__name__})"
    if d.problem_request is not None:
        yield f"read a problem request ({d.problem_request.kind})"
    if _pending(events):
        yield "asked whether to act on a request"
    if _new_commitment(result) is not None:
        yield "made a commitment"
    if _decisions(result):
        yield "kept a decision"
    if str(d.arbitration.get("candidate_match", "")).startswith("resume request: back to"):
        yield "resumed earlier work"


def tally(outcomes: Iterable[Outcome]) -> dict[str, dict[str, float]]:
    """Accuracy overall, by distance and by intent: ``{group: {"n", "passed", "accuracy"}}``.

    ``nothing`` is also reported as false triggers (cases of it that failed).
    """
    groups: dict[str, list[bool]] = {}
    for o in outcomes:
        for name in ("overall", f"distance:{o.case.distance}", f"intent:{o.case.intent}"):
            groups.setdefault(name, []).append(o.passed)
    return {
        name: {"n": len(v), "passed": sum(v), "accuracy": round(sum(v) / len(v), 3)}
        for name, v in sorted(groups.items())
    }
