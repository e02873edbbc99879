"""The two concrete flows of 004 §9, run by HO1 when a stack's templates and its input ask.

* **Flow B — ADMIN, "show me all frameworks".** Classified as a read-only inspection. WO#1 reads
  the framework registry (tool ``read_file``), WO#2 lists the frameworks directory (tool
  ``list_dir``), the two are compared and every discrepancy named, WO#3 asks the model to format
  the result, and HO2 approves the output only if it still names every framework and every
  discrepancy — otherwise the deterministic table is the answer.
* **Flow A — RESIDENT, "hello".** WO#1 classifies the speech act (deterministic, with the model's
  advisory opinion recorded), WO#2 scans this stack's HO2m and open loops (horizontal scan),
  WO#3 probes the HO3 salience anchors (priority probe); arbitration makes the must-mention
  anchors lead and the open loops options, with the strategy ``offer-choice``; WO#4 builds the
  answer.

Which flow runs is configuration, not code: the ADMIN flow needs a bound template with a
``registry_query`` stage, the RESIDENT flow one with ``horizontal_search`` and ``ledger_query``
stages (ATT-ADMIN-001 and ATT-DPJ-001 ship with them). Tool calls are ``tool_call`` work orders
and queries ``trace_query`` / ``policy_query`` work orders in HO1m; model calls go through the
stack's gateway, which records them; a ``flow_trace`` record ties the work orders together.
Arbitration outcomes and meta-episodes go to HO2m through the executor's ``event`` callable.

The answer is built deterministically from what was read; a model only phrases it, and its text
is used only when it keeps all of the content (the offline model's answers never are).
"""

from __future__ import annotations

import csv
import io
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrm._process import new_id
from hrm.altitude.types import ExecutionResult, Plan, PlanStep, PlanStepStatus
from hrm.errors import HRMError
from hrm.home import parse_agent_class
from hrm.stacks.executor import ExecutionOutcome
from hrm.stacks.lifecycle import direct_call

if TYPE_CHECKING:
    from hrm.stacks.factory import CognitiveStack

__all__ = [
    "FlowFn",
    "SpeechAct",
    "classify_speech_act",
    "compare_frameworks",
    "flow_for",
    "is_framework_inspection",
]

FlowFn = Callable[[Any, Any, Any, Any, Any, Callable[..., None]], ExecutionOutcome | None]
"""``(executor, action, turn_input, assembled, reasoning, event) -> outcome | None``."""

_ANSWERING_ACTIONS = frozenset({"respond", "execute"})
_GREETING_ACTIONS = frozenset({"respond", "execute", "ask"})
_OFFLINE_MARKER = "(offline model)"
_MAX_OPTIONS = 3

_GREETING = re.compile(
    r"^(?:hello|hi|hey|hiya|howdy|yo|greetings|good (?:morning|afternoon|evening|day)|morning|"
    r"evening|welcome back|i'?m back|im back|back again|what'?s up|sup)\b"
    r"(?P<rest>.*)$",
    re.IGNORECASE,
)
_RETURN_WORDS = re.compile(r"\b(?:again|back|return(?:ed|ing)?)\b", re.IGNORECASE)
_REQUEST_WORDS = re.compile(
    r"\b(?:can|could|would|will|please|help|fix|write|make|show|tell|explain|need|want|how|what|"
    r"why|when|where|which|who)\b",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(r"^(?:how|what|why|when|where|which|who|is|are|do|does|can|could)\b",
                             re.IGNORECASE)
_INSPECT = re.compile(
    # hrm's own frameworks, not frameworks in general ("which web framework should I use?",
    # "what did we decide for the framework?" are questions for the model): an inspecting verb
    # before "frameworks"; "which/what frameworks" asked about what is installed or held; the
    # registry.
    r"\b(?:show|list|display|enumerate|inspect)\b(?:\s+(?:me|us))?"
    r"(?:\s+(?:all|the|every|your|our|hrm'?s|installed|registered|of|current))*"
    r"\s+frameworks\b(?!\s+(?:for|to|that|which|like|in\s+(?!the\s+registry)))"
    r"|\b(?:which|what)\s+frameworks\s+(?:are|do\s+you|does\s+hrm|have\s+you)\s+"
    r"(?:installed|registered|there|loaded|available|in\s+the\s+registry|have|hold|know|got)\b"
    r"|\bframeworks?\s+registry\b|\bregistry\s+of\s+frameworks\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset({"the", "and", "for", "with", "that", "this", "from", "into", "your", "you"})


# ── classification (pure) ──────────────────────────────────────────────────


@dataclass(frozen=True)
class SpeechAct:
    """A deterministic speech-act reading of an input (Flow A, WO#1)."""

    speech_act: str
    """``reentry_greeting``, ``greeting``, ``question``, ``request`` or ``statement``."""
    ambiguity: str
    """``high`` (no topic named), ``medium`` or ``low``."""
    search: bool
    """Whether memory should be searched to find what the person may mean."""

    def to_record(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {"speech_act": self.speech_act, "ambiguity": self.ambiguity,
                "search": "enable" if self.search else "disable"}


def classify_speech_act(text: str, *, has_history: bool = False) -> SpeechAct:
    """Classify `text` deterministically; total (any string gets an answer), never raises.

    A greeting is a greeting phrase followed by at most a few words that ask for nothing
    ("hi there", "hello again"). It is a re-entry greeting when the stack has history or the
    words say so ("I'm back").
    """
    clean = " ".join(text.strip().split())[:500]
    match = _GREETING.match(clean.lower())
    if match is not None:
        rest = match.group("rest")
        words = _WORD.findall(rest)
        if len(words) <= 3 and not _REQUEST_WORDS.search(rest):
            reentry = has_history or bool(_RETURN_WORDS.search(clean))
            return SpeechAct("reentry_greeting" if reentry else "greeting", "high", True)
    words = _WORD.findall(clean.lower())
    if not words:
        return SpeechAct("statement", "high", False)
    if clean.endswith("?") or _QUESTION_START.match(clean):
        return SpeechAct("question", "medium" if len(words) < 4 else "low", False)
    if _REQUEST_WORDS.search(clean):
        return SpeechAct("request", "medium" if len(words) < 4 else "low", False)
    return SpeechAct("statement", "medium" if len(words) < 4 else "low", False)


def is_framework_inspection(text: str) -> bool:
    """True for a read-only question about the installed frameworks (Flow B's trigger)."""
    head = text[:500]
    # Every match names "framework": most inputs are ruled out by one substring scan.
    return "framework" in head.lower() and bool(_INSPECT.search(head))


def compare_frameworks(
    registry: Sequence[Mapping[str, str]], observed: Sequence[str]
) -> list[dict[str, str]]:
    """Discrepancies between the registry rows and the directories seen (pure).

    Kinds: ``missing_directory`` (registered, not on disk), ``unregistered_directory`` (on disk,
    not registered), ``path_mismatch`` (registered with a path that is not its directory).
    """
    found: list[dict[str, str]] = []
    seen = set(observed)
    registered: set[str] = set()
    for row in registry:
        fid = str(row.get("framework_id", "")).strip()
        if not fid:
            continue
        path = str(row.get("path", "")).strip()
        name = Path(path).name if path else fid
        registered.add(name)
        if name != fid:
            found.append({"framework_id": fid, "kind": "path_mismatch",
                          "detail": f"registered path {path!r} does not end in {fid}"})
        if name not in seen:
            found.append({"framework_id": fid, "kind": "missing_directory",
                          "detail": f"registered at {path or '?'} but no such directory exists"})
    for name in sorted(seen - registered):
        found.append({"framework_id": name, "kind": "unregistered_directory",
                      "detail": f"directory frameworks/{name} is not in the registry"})
    return found


# ── selection ──────────────────────────────────────────────────────────────


def flow_for(stack: CognitiveStack) -> FlowFn | None:
    """The 004 §9 flow this stack's kind and bound templates call for, or None.

    Asked every turn; the answer only changes with the bound templates, so it is kept per
    stack until they do (as `AttentionPipeline.stages` keeps the merged stages).
    """
    attention = stack.attention
    key = [id(t) for t in attention.templates]
    known = attention.flow_cache
    if known is not None and known[0] == key:
        flow: FlowFn | None = known[1]
        return flow
    flow = _flow_for(stack)
    attention.flow_cache = (key, flow)
    return flow


def _flow_for(stack: CognitiveStack) -> FlowFn | None:
    kind, _ = parse_agent_class(stack.agent_class)
    stages = {str(s.get("type")): s for s in stack.attention.stages()}
    if kind == "ADMIN" and "registry_query" in stages:
        target = str(stages["registry_query"].get("config", {}).get("target",
                                                                     "frameworks_registry.csv"))
        return _admin_flow(target)
    if kind == "RESIDENT" and "horizontal_search" in stages and "ledger_query" in stages:
        limit = int(stages["horizontal_search"].get("config", {}).get("limit", 10))
        return _resident_flow(limit)
    return None


def _admin_flow(target: str) -> FlowFn:
    def run(executor: Any, action: Any, turn_input: Any, assembled: Any, reasoning: Any,
            event: Callable[..., None]) -> ExecutionOutcome | None:
        if action.action_type not in _ANSWERING_ACTIONS:
            return None
        if not is_framework_inspection(turn_input.text):
            return None
        return _FrameworkInspection(executor.stack, event, target).run(turn_input.text)

    return run


def _resident_flow(limit: int) -> FlowFn:
    def run(executor: Any, action: Any, turn_input: Any, assembled: Any, reasoning: Any,
            event: Callable[..., None]) -> ExecutionOutcome | None:
        if action.action_type not in _GREETING_ACTIONS:
            return None
        if classify_speech_act(turn_input.text).speech_act not in ("greeting", "reentry_greeting"):
            return None
        return _ReentryGreeting(executor.stack, event, limit).run(turn_input)

    return run


# ── shared pieces ──────────────────────────────────────────────────────────


class _Steps:
    """Work orders of one flow: records them in HO1m and mirrors them as plan steps."""

    def __init__(self, stack: CognitiveStack, flow: str) -> None:
        self.stack = stack
        self.flow = flow
        self.steps: list[PlanStep] = []
        self.wo_ids: dict[str, str | None] = {}

    def record(self, step: str, description: str, *, wo_type: str, ok: bool,
               started: float, **data: Any) -> str:
        wo_id = new_id("wo")
        self.stack.record_work_order("work_order", {
            "wo_id": wo_id, "type": wo_type, "flow": self.flow, "step": step,
            "outcome": "ok" if ok else "error",
            "latency_ms": int((time.monotonic() - started) * 1000), **data,
        })
        self.add(step, description, wo_id, ok=ok)
        return wo_id

    def add(self, step: str, description: str, wo_id: str | None, *, ok: bool,
            action_type: str = "research") -> None:
        self.wo_ids[step] = wo_id
        self.steps.append(PlanStep(
            order=len(self.steps) + 1, description=f"{step} {description}"[:200],
            action_type=action_type,
            status=PlanStepStatus.COMPLETE if ok else PlanStepStatus.FAILED,
        ))

    def plan(self, strategy: str) -> Plan:
        return Plan(id=new_id("plan", 10), steps=self.steps, estimated_turns=1,
                    requires_agents=False, agent_suggestion=None, strategy=strategy)

    def trace(self, **data: Any) -> None:
        self.stack.record_work_order("flow_trace", {"flow": self.flow,
                                                    "work_orders": dict(self.wo_ids), **data})


def _keeps(reply: str, required: list[str]) -> bool:
    """A model's phrasing is usable only if it is real and keeps every required item."""
    text = reply.strip()
    if not text or text.startswith(_OFFLINE_MARKER):
        return False
    lowered = text.lower()
    present = set(_WORD.findall(lowered))
    for item in required:
        if item.lower() in lowered:
            continue
        words = [w for w in _WORD.findall(item.lower()) if len(w) > 2 and w not in _STOP]
        if not words or sum(w in present for w in words) * 2 < len(words):
            return False
    return True


# ── Flow B ─────────────────────────────────────────────────────────────────


class _FrameworkInspection:
    def __init__(self, stack: CognitiveStack, event: Callable[..., None], target: str) -> None:
        self.stack = stack
        self.event = event
        self.target = target
        self.steps = _Steps(stack, "admin_frameworks")

    def run(self, text: str) -> ExecutionOutcome:
        self.event("admin_query", classification="read_only_inspection", subject="frameworks",
                   flow="admin_frameworks")
        tools = _FileAccess(self.stack.home.hot_dir, self.stack.agent_class)
        rows, registry_error = self._read_registry(tools)
        observed, list_error = self._list_frameworks(tools)
        discrepancies = compare_frameworks(rows, observed) if registry_error is None \
            and list_error is None else []
        draft = _framework_report(rows, observed, discrepancies, registry_error, list_error)
        required = [str(r.get("framework_id")) for r in rows]
        required += [f"{d['framework_id']}" for d in discrepancies]
        call = direct_call(
            self.stack, text, purpose="WO#3 format results",
            system=("Format this inspection result for an operator as a table followed by the "
                    "discrepancies. Keep every framework and every discrepancy.\n\n" + draft),
        )
        self.steps.add("WO#3", "format results (LLM)", call.wo_id, ok=call.error is None,
                       action_type="respond")
        approved = _keeps(call.reply, required)
        response = call.reply.strip() if approved else draft
        self.event("output_approved", flow="admin_frameworks",
                   source="model" if approved else "deterministic",
                   reason="the model's text keeps every framework and discrepancy" if approved
                   else "the model's text was empty, offline or dropped content")
        self.steps.trace(frameworks=required[: len(rows)], discrepancies=discrepancies,
                         approved_source="model" if approved else "deterministic")
        ok = registry_error is None and list_error is None
        errors = [str(e) for e in (registry_error, list_error) if e is not None]
        return ExecutionOutcome(
            response, ExecutionResult(success=ok, outputs=[response], errors=errors),
            self.steps.plan("inspection"), "respond",
            details={"flow": "admin_frameworks", "frameworks": rows, "observed": observed,
                     "discrepancies": discrepancies, "work_orders": dict(self.steps.wo_ids)},
        )

    def _read_registry(self, tools: _FileAccess) -> tuple[list[dict[str, str]], HRMError | None]:
        started = time.monotonic()
        path = f"registries/{self.target}"
        call: dict[str, Any] = {"wo_type": "tool_call", "tool": "read_file",
                                "arguments": {"path": path}}
        what = "read framework registry (tool read_file)"
        try:
            content = tools.read_file(path)
        except HRMError as exc:
            self.steps.record("WO#1", what, ok=False, started=started, **call,
                              error_code=exc.code.value, error=exc.message)
            return [], exc
        rows = [{k: (v or "").strip() for k, v in row.items() if k}
                for row in csv.DictReader(io.StringIO(content))]
        self.steps.record("WO#1", what, ok=True, started=started, **call,
                          output={"rows": len(rows), "bytes": len(content)})
        return rows, None

    def _list_frameworks(self, tools: _FileAccess) -> tuple[list[str], HRMError | None]:
        started = time.monotonic()
        call: dict[str, Any] = {"wo_type": "tool_call", "tool": "list_dir",
                                "arguments": {"path": "frameworks"}}
        what = "enumerate frameworks directory (tool list_dir)"
        try:
            entries = tools.list_dir("frameworks")
        except HRMError as exc:
            self.steps.record("WO#2", what, ok=False, started=started, **call,
                              error_code=exc.code.value, error=exc.message)
            return [], exc
        names = sorted(str(e["name"]) for e in entries if e.get("type") == "dir")
        self.steps.record("WO#2", what, ok=True, started=started, **call,
                          output={"directories": names})
        return names, None


def _framework_report(
    rows: list[dict[str, str]], observed: list[str], discrepancies: list[dict[str, str]],
    registry_error: HRMError | None, list_error: HRMError | None,
) -> str:
    lines: list[str] = []
    if registry_error is not None:
        lines.append(f"The framework registry could not be read: {registry_error.message}")
    if list_error is not None:
        lines.append(f"The frameworks directory could not be listed: {list_error.message}")
    if rows:
        lines.append(f"Frameworks in the registry ({len(rows)}):")
        lines.append("| id | name | version | path | on disk |")
        lines.append("|---|---|---|---|---|")
        for row in rows:
            fid = row.get("framework_id", "")
            here = "yes" if Path(row.get("path", "")).name in observed else "no"
            lines.append(f"| {fid} | {row.get('name', '')} | {row.get('version', '')} | "
                         f"{row.get('path', '')} | {here} |")
    elif registry_error is None:
        lines.append("The framework registry lists no frameworks.")
    if registry_error is None and list_error is None:
        if discrepancies:
            lines.append(f"Discrepancies ({len(discrepancies)}):")
            lines += [f"- {d['framework_id']}: {d['kind'].replace('_', ' ')} — {d['detail']}"
                      for d in discrepancies]
        else:
            lines.append("No discrepancies: the registry and the directory agree.")
    return "\n".join(lines)


class _FileAccess:
    """Read-only access to HOT through the runtime's `ToolRegistry` (confined to one root)."""

    def __init__(self, root: Path, caller: str) -> None:
        from hrm.runtime.tools import CAPABILITY_READ_FILES, ToolRegistry

        self.registry = ToolRegistry.with_builtins(allowed_roots=[root])
        self.capabilities = {CAPABILITY_READ_FILES}
        self.caller = caller

    def read_file(self, path: str) -> str:
        out = self.registry.call("read_file", {"path": path}, capabilities=self.capabilities,
                                 caller=self.caller)
        return str(out["content"])

    def list_dir(self, path: str) -> list[dict[str, Any]]:
        out = self.registry.call("list_dir", {"path": path}, capabilities=self.capabilities,
                                 caller=self.caller)
        return list(out["entries"])


# ── Flow A ─────────────────────────────────────────────────────────────────


_STATUS_WEIGHT = {"active": 0.9, "paused": 0.7, "queued": 0.5}
_SPEECH_TEMPLATE = (
    'Classify the speech act of the person\'s message. Return only JSON like '
    '{"speech_act": "reentry_greeting|greeting|question|request|statement", '
    '"ambiguity": "high|medium|low", "search": "enable|disable"}'
)


class _ReentryGreeting:
    def __init__(self, stack: CognitiveStack, event: Callable[..., None], limit: int) -> None:
        self.stack = stack
        self.event = event
        self.limit = limit
        self.steps = _Steps(stack, "reentry_greeting")

    def run(self, turn_input: Any) -> ExecutionOutcome:
        text = str(turn_input.text)
        history = self._history()
        act = self._classify(text, has_history=bool(history))
        loops = self._horizontal_scan(history, getattr(turn_input.context, "problem_id", None))
        anchors = self._priority_probe()
        arbitration = _arbitrate(loops, anchors, act)
        self.event("arbitration_outcome", flow="reentry_greeting", **arbitration)
        self.event("meta_episode", flow="reentry_greeting",
                   observation=_observation(act, arbitration))
        draft = _greeting_answer(act, arbitration)
        required = [m["text"] for m in arbitration["must_mention"]]
        required += [o["text"] for o in arbitration["options"]]
        call = direct_call(
            self.stack, text, purpose="WO#4 build response",
            system=("Reply warmly and briefly. Mention the must-mention item first, then offer "
                    "the options as a choice. Keep every item.\n\n" + draft),
        )
        self.steps.add("WO#4", "build final response (LLM)", call.wo_id, ok=call.error is None,
                       action_type="respond")
        approved = _keeps(call.reply, required)
        response = call.reply.strip() if approved else draft
        self.steps.trace(speech_act=act.to_record(), arbitration=arbitration,
                         approved_source="model" if approved else "deterministic")
        return ExecutionOutcome(
            response, ExecutionResult(success=True, outputs=[response]),
            self.steps.plan(arbitration["strategy"]), "respond",
            details={"flow": "reentry_greeting", "speech_act": act.to_record(),
                     "arbitration": arbitration, "work_orders": dict(self.steps.wo_ids)},
        )

    def _history(self) -> list[dict[str, Any]]:
        """Earlier turns of this stack, newest last, read from its own HO2m."""
        from hrm.stacks.visibility import StackScope

        scope = StackScope(self.stack.home, self.stack.agent_class)
        with scope.open_ledger() as ledger:
            recent = ledger.tail(self.limit * 40)
        return [dict(r.data) for r in recent if r.kind == "turn"][-self.limit:]

    def _classify(self, text: str, *, has_history: bool) -> SpeechAct:
        from hrm.llm import Message, chat_json

        started = time.monotonic()
        act = classify_speech_act(text, has_history=has_history)
        before = self.stack.execution_ledger.last()
        advisory = chat_json(self.stack.gateway, [Message(role="user", content=text[:2000])],
                             _SPEECH_TEMPLATE, purpose="WO#1 classify speech act")
        after = self.stack.execution_ledger.last()
        wo_id = None
        if after is not None and (before is None or after.seq != before.seq):
            wo_id = after.data.get("wo_id")
        model_act = advisory.get("speech_act") if isinstance(advisory, dict) else None
        self.steps.add("WO#1", "classify speech act + ambiguity (LLM)",
                       None if wo_id is None else str(wo_id), ok=True)
        self.event("speech_act_classified", flow="reentry_greeting", **act.to_record(),
                   model_advice=model_act if isinstance(model_act, str) else None,
                   authoritative="deterministic",
                   latency_ms=int((time.monotonic() - started) * 1000))
        return act

    def _horizontal_scan(self, history: list[dict[str, Any]],
                         current_problem: str | None) -> list[dict[str, Any]]:
        from hrm.governance.problems import ProblemStatus

        started = time.monotonic()
        mentioned: set[str] = set()
        for turn in history:
            problem = (turn.get("decision") or {}).get("problem") or {}
            if isinstance(problem, dict) and problem.get("id"):
                mentioned.add(str(problem["id"]))
        registry = self.stack.focus.problem_registry
        loops: list[dict[str, Any]] = []
        for status in (ProblemStatus.ACTIVE, ProblemStatus.PAUSED, ProblemStatus.QUEUED):
            for problem in registry.list(status):
                if classify_speech_act(problem.title).speech_act in ("greeting",
                                                                     "reentry_greeting"):
                    continue  # this turn's own greeting is not an open loop
                score = (0.6 * _STATUS_WEIGHT[status.value] + 0.025 * problem.priority
                         + (0.15 if problem.id in mentioned else 0.0))
                loops.append({"id": problem.id, "source": "ho2m", "text": problem.title,
                              "status": status.value, "score": round(score, 4),
                              "last_progress_at": problem.last_progress_at.isoformat()})
        loops.sort(key=lambda c: str(c["last_progress_at"]), reverse=True)
        loops.sort(key=lambda c: -float(c["score"]))  # stable: most recent first among equals
        loops = loops[: self.limit]
        self.steps.record("WO#2", "horizontal scan (HO2m: recency, open loops)", ok=True,
                          wo_type="trace_query",
                          started=started, source="ho2m", query="recency+open_loops",
                          output={"turns_scanned": len(history),
                                  "candidates": [c["id"] for c in loops]})
        return loops

    def _priority_probe(self) -> list[dict[str, Any]]:
        from hrm.stacks.anchors import read_anchors

        started = time.monotonic()
        anchors = read_anchors(self.stack.home.governance_ledger,
                               agent_class=self.stack.agent_class)
        found = [{"id": a["id"], "source": "ho3m", "text": a["text"],
                  "must_mention": bool(a.get("must_mention")),
                  "score": 1.0 if a.get("must_mention") else 0.8} for a in anchors]
        self.steps.record("WO#3", "priority probe (HO3m: salience anchors)", ok=True,
                          wo_type="policy_query",
                          started=started, source="ho3m", query="salience_anchors",
                          output={"candidates": [a["id"] for a in found]})
        return found


def _arbitrate(loops: list[dict[str, Any]], anchors: list[dict[str, Any]],
               act: SpeechAct) -> dict[str, Any]:
    """Must-mention anchors lead; open loops (then other anchors) become options."""
    must = [a for a in anchors if a["must_mention"]]
    options = (loops + [a for a in anchors if not a["must_mention"]])[:_MAX_OPTIONS]
    strategy = ("offer-choice" if len(options) >= 2 else "resume" if options
                else "open-invite")
    scored = [{"id": c["id"], "source": c["source"], "score": c["score"]}
              for c in [*anchors, *loops]]
    return {
        "speech_act": act.speech_act,
        "candidates_scored": scored,
        "must_mention": [{"id": m["id"], "text": m["text"]} for m in must],
        "options": [{"id": o["id"], "text": o["text"], "source": o["source"]} for o in options],
        "strategy": strategy,
    }


def _observation(act: SpeechAct, arbitration: dict[str, Any]) -> str:
    return (f"{act.speech_act.replace('_', ' ')}: {len(arbitration['must_mention'])} "
            f"must-mention, {len(arbitration['options'])} option(s); strategy "
            f"{arbitration['strategy']}")


def _greeting_answer(act: SpeechAct, arbitration: dict[str, Any]) -> str:
    opening = "Welcome back!" if act.speech_act == "reentry_greeting" else "Hello!"
    parts = [opening]
    must = [m["text"] for m in arbitration["must_mention"]]
    if must:
        parts.append("Before anything else: " + "; ".join(must) + ".")
    options = [o["text"] for o in arbitration["options"]]
    if arbitration["strategy"] == "offer-choice":
        listed = ", ".join(f"({i}) {text}" for i, text in enumerate(options, 1))
        parts.append(f"Where would you like to pick up: {listed} — or something new?")
    elif arbitration["strategy"] == "resume":
        parts.append(f"Shall we pick up {options[0]}, or start something new?")
    else:
        parts.append("What would you like to work on?")
    return " ".join(parts)
