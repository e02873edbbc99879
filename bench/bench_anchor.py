"""hrm's governed turn against LangGraph + SqliteSaver, side by side in one run (issue 35, item 4).

The anchor: a generic graph runtime with a durable checkpointer is what a developer would
otherwise build a governed assistant on, so a governed turn should cost a small fraction of one
of its steps. Both sides run in one process, on the same messages (`conversation.py`), in
blocks that alternate (hrm, LangGraph, LangGraph, hrm, …), so a drifting machine slows both:

* **hrm**: ``HRM.open(home, "ADMIN", "offline").turn(text)`` with full persistence (ledgers
  under group commit, SQLite), in a fresh home after 18 warm-up turns;
* **LangGraph** (``langgraph`` + ``langgraph-checkpoint-sqlite``, the ``bench`` dependency
  group): a five-node ``StateGraph`` of plain Python functions — read, classify, retrieve,
  respond, record; no model — compiled with a ``SqliteSaver`` on a file, one ``app.invoke`` per
  turn on one thread id, its default durability. Its state keeps the last twelve exchanges, as
  hrm's turn state does, so neither side's cost grows with the run.

Per turn, each side's: CPU (``process_time``, all threads); instructions under callgrind (a
worker process per side, counting only the measured turns between two marks); bytes handed to
``write`` (``wchar``) and bytes its directory grew; fsyncs — Python's own calls in-process, and
every ``fsync``/``fdatasync`` (SQLite's too) under strace in a worker. Goal (issue 35): hrm's CPU
per turn ≤ 0.1× LangGraph's. hrm runs twice in the alternation: as configured (the reading's
sentence model on when the `embeddings` extra is installed, as `make demo` sets it up) and with
that model off, whose figures print on a line of their own.

    .venv/bin/python bench/bench_anchor.py [--quick]

Writes bench/out/anchor.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from costs import (
    ROOT,
    SyncCounter,
    bench_config,
    callgrind_between_marks,
    io_now,
    mark,
    median_ratio,
    syscalls_between_marks,
    tree_bytes,
)

SYNCS = SyncCounter().install()  # before hrm is imported: its ledger binds os.fdatasync once

from conversation import WARM_UP, conversation  # noqa: E402

OUT = ROOT / "bench" / "out" / "anchor.json"
SIDES = ("hrm", "langgraph")
RULES_ONLY = "hrm_rules_only"
"""hrm again with the reading's sentence model off (its MiniLM encode is most of a turn that
names a cue), alternated with the other two in the same blocks: CPU, wall and bytes only."""
ALTERNATED = ("hrm", RULES_ONLY, "langgraph")
GOAL_CPU_RATIO = 0.1
HISTORY_KEPT = 12
"""Exchanges the graph's state keeps, as hrm's turn state keeps twelve (D80)."""


class Side(Protocol):
    directory: Path

    def turn(self, text: str) -> None: ...

    def close(self) -> None: ...


class HrmSide:
    """hrm's ADMIN stack on the offline model, with full persistence, in a home of its own."""

    def __init__(
        self, directory: Path, *, commit_each_turn: bool = False, sentence_model: bool = True
    ) -> None:
        from dataclasses import replace

        from hrm.pipeline import HRM

        self.directory = directory
        config = bench_config(directory)  # the home's configuration: no environment variable
        if not sentence_model:
            config = replace(config, reading=replace(config.reading, sentence_model="off"))
        if commit_each_turn:  # every turn's fsyncs on its own path, not batched by time
            config = replace(config, ledger_group_commit_ms=0)
        self.hrm = HRM.open(directory, "ADMIN", "offline", config=config)
        for text in WARM_UP * 3:  # the problem and the patterns exist before measuring
            self.turn(text)

    def turn(self, text: str) -> None:
        result = self.hrm.turn(text)
        if not (result.action == "remember" or result.decision.evaluation.get("success")):
            raise SystemExit(f"an hrm turn failed ({result.action}): {text!r}")

    def close(self) -> None:
        self.hrm.close()


class GraphSide:
    """Five plain nodes on LangGraph, checkpointed by SqliteSaver after every step."""

    def __init__(self, directory: Path) -> None:
        import sqlite3

        try:
            from langgraph.checkpoint.sqlite import SqliteSaver
        except ImportError as exc:
            raise SystemExit(
                "LangGraph is not installed: `.venv/bin/pip install --group bench` "
                "(pyproject.toml's bench dependency group)"
            ) from exc
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(directory / "checkpoints.db", check_same_thread=False)
        self.app = _graph().compile(checkpointer=SqliteSaver(self.conn))
        self.config: Any = {"configurable": {"thread_id": "bench"}}
        for text in WARM_UP * 3:
            self.turn(text)

    def turn(self, text: str) -> None:
        out = self.app.invoke({"text": text}, self.config)
        if not out.get("reply"):
            raise SystemExit(f"a LangGraph turn gave no reply: {text!r}")

    def close(self) -> None:
        self.conn.close()


def _graph() -> Any:
    """read → classify → retrieve → respond → record, each a plain function of the state."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class State(TypedDict, total=False):
        text: str
        words: list[str]
        kind: str
        context: list[list[str]]
        reply: str
        history: list[list[str]]

    def read(state: State) -> State:
        return {"words": [w.strip("?.,!").lower() for w in state["text"].split()]}

    def classify(state: State) -> State:
        words = set(state["words"])
        kind = "task" if words & {"write", "add", "fix"} else (
            "preference" if "prefer" in words else "question")
        return {"kind": kind}

    def retrieve(state: State) -> State:
        words = set(state["words"])
        related = [h for h in state.get("history", []) if words & set(h[0].lower().split())]
        return {"context": related[-3:]}

    def respond(state: State) -> State:
        about = " ".join(state["words"][:8])
        return {"reply": f"({state['kind']}) on {about}; {len(state['context'])} related turns"}

    def record(state: State) -> State:
        history = [*state.get("history", []), [state["text"], state["reply"]]]
        return {"history": history[-HISTORY_KEPT:]}

    graph = StateGraph(State)
    nodes = (read, classify, retrieve, respond, record)
    for node in nodes:
        graph.add_node(node.__name__, node)
    graph.add_edge(START, "read")
    for before, after in itertools.pairwise(nodes):
        graph.add_edge(before.__name__, after.__name__)
    graph.add_edge("record", END)
    return graph


def open_side(name: str, directory: Path, *, commit_each_turn: bool = False) -> Side:
    if name in ("hrm", RULES_ONLY):
        return HrmSide(directory, commit_each_turn=commit_each_turn,
                       sentence_model=name == "hrm")
    return GraphSide(directory)


@dataclass
class Blocks:
    """Per side, one entry per measured block."""

    turns: list[int] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    wchar: list[int] = field(default_factory=list)
    grown: list[int] = field(default_factory=list)


def alternate(tmp: Path, blocks: int, size: int) -> tuple[dict[str, Blocks], int]:
    """Both sides in this process, block by block; also hrm's Python-level fsyncs."""
    sides = {name: open_side(name, tmp / name) for name in ALTERNATED}
    texts = conversation(35, blocks * size)
    measured = {name: Blocks() for name in ALTERNATED}
    syncs_before = SYNCS.count
    try:
        for b in range(blocks):
            chunk = texts[b * size:(b + 1) * size]
            order = ALTERNATED if b % 2 == 0 else ALTERNATED[::-1]
            for name in order:
                side = sides[name]
                grown = tree_bytes(side.directory)
                io = io_now()
                wall, cpu = time.perf_counter(), time.process_time()
                for text in chunk:
                    side.turn(text)
                into = measured[name]
                into.cpu.append(time.process_time() - cpu)
                into.wall.append(time.perf_counter() - wall)
                into.wchar.append((io_now() - io).wchar)
                into.grown.append(tree_bytes(side.directory) - grown)
                into.turns.append(len(chunk))
    finally:
        for side in sides.values():
            side.close()
    return measured, SYNCS.count - syncs_before


def worker(name: str, warm: int, turns: int, *, commit_each_turn: bool = False) -> int:
    """One side alone: `warm` turns, a mark, `turns` turns, a mark (for callgrind and strace)."""
    with tempfile.TemporaryDirectory(prefix=f"bench-anchor-{name}-") as tmp:
        side = open_side(name, Path(tmp) / name, commit_each_turn=commit_each_turn)
        texts = conversation(36, warm + turns)
        for text in texts[:warm]:
            side.turn(text)
        mark()
        for text in texts[warm:]:
            side.turn(text)
        mark()
        side.close()
    return 0


def counted(script: Path, warm: int, turns: int, sync_turns: int, *,
            callgrind: bool) -> dict[str, Any]:
    """Instructions and system-level syncs per turn of each side, from worker processes.

    hrm's group commit syncs at most once per 20 ms, however many turns ended meanwhile, so
    its count per turn depends on how fast turns come; it is also counted with every turn
    committing on its own (``ledger_group_commit_ms: 0``), the most a turn ever asks for.
    """
    found: dict[str, Any] = {}
    for name in SIDES:
        cmd = [sys.executable, str(script), "--worker", name, "--warm", str(warm)]
        instructions = callgrind_between_marks([*cmd, "--turns", str(turns)]) \
            if callgrind else None
        syncs = syscalls_between_marks([*cmd, "--turns", str(sync_turns)])
        found[name] = {
            "instructions_per_turn": None if instructions is None else instructions / turns,
            "syncs_per_turn": None if syncs is None else sum(syncs.values()) / sync_turns,
            "syncs_by_call": syncs,
        }
    each = syscalls_between_marks([sys.executable, str(script), "--worker", "hrm", "--warm",
                                   str(warm), "--turns", str(sync_turns), "--commit-each-turn"])
    found["hrm"]["syncs_per_turn_each_turn_committed"] = \
        None if each is None else sum(each.values()) / sync_turns
    return found


def per_turn(values: list[float] | list[int], turns: list[int]) -> list[float]:
    return [v / n for v, n in zip(values, turns, strict=True)]


def summarise(measured: dict[str, Blocks], python_syncs: int, workers: dict[str, Any],
              *, blocks: int, size: int, callgrind_turns: int) -> dict[str, Any]:
    rows: dict[str, dict[str, Any]] = {}
    for name, m in measured.items():
        total = sum(m.turns)
        rows[name] = {
            "cpu_ms_per_turn": 1000 * sum(m.cpu) / total,
            "cpu_ms_per_turn_by_block": [round(1000 * v, 3) for v in per_turn(m.cpu, m.turns)],
            "wall_ms_per_turn": 1000 * sum(m.wall) / total,
            "wchar_bytes_per_turn": sum(m.wchar) / total,
            "grown_bytes_per_turn": sum(m.grown) / total,
            **workers.get(name, {}),
        }
    hrm, graph = rows["hrm"], rows["langgraph"]
    # Both hrm sides sync from Python, in the same blocks: the count is shared between them.
    hrm_turns = sum(measured["hrm"].turns) + sum(measured[RULES_ONLY].turns)
    hrm["python_fsyncs_per_turn"] = python_syncs / hrm_turns

    def ratio(key: str) -> float | None:
        a, b = hrm.get(key), graph.get(key)
        return None if a is None or b in (None, 0) else a / b

    graph_cpu = per_turn(measured["langgraph"].cpu, measured["langgraph"].turns)
    cpu_paired = median_ratio(per_turn(measured["hrm"].cpu, measured["hrm"].turns), graph_cpu)
    rules = measured[RULES_ONLY]
    rules_paired = median_ratio(per_turn(rules.cpu, rules.turns), graph_cpu)
    return {
        "blocks": blocks, "block_turns": size, "callgrind_turns": callgrind_turns,
        "sides": rows,
        "ratios": {
            "cpu_per_turn": ratio("cpu_ms_per_turn"),
            "cpu_per_turn_median_of_block_pairs": cpu_paired,
            "cpu_per_turn_rules_only_median_of_block_pairs": rules_paired,
            "wall_per_turn": ratio("wall_ms_per_turn"),
            "instructions_per_turn": ratio("instructions_per_turn"),
            "wchar_bytes_per_turn": ratio("wchar_bytes_per_turn"),
            "grown_bytes_per_turn": ratio("grown_bytes_per_turn"),
            "syncs_per_turn": ratio("syncs_per_turn"),
        },
        "goal": {"cpu_per_turn_ratio": GOAL_CPU_RATIO,
                 "met": cpu_paired <= GOAL_CPU_RATIO},
    }


def _fmt(value: float | None, scale: float = 1.0, digits: int = 2, unit: str = "") -> str:
    return "n/a" if value is None else f"{value * scale:.{digits}f}{unit}"


def report(result: dict[str, Any]) -> None:
    hrm, graph = result["sides"]["hrm"], result["sides"]["langgraph"]
    r = result["ratios"]
    lines = [
        ("CPU per turn", _fmt(hrm["cpu_ms_per_turn"], unit=" ms"),
         _fmt(graph["cpu_ms_per_turn"], unit=" ms"), _fmt(r["cpu_per_turn_median_of_block_pairs"])),
        ("instructions per turn (callgrind)", _fmt(hrm["instructions_per_turn"], 1e-6, unit=" M"),
         _fmt(graph["instructions_per_turn"], 1e-6, unit=" M"), _fmt(r["instructions_per_turn"])),
        ("bytes written per turn (write calls)", _fmt(hrm["wchar_bytes_per_turn"], 1e-3, 1, " KB"),
         _fmt(graph["wchar_bytes_per_turn"], 1e-3, 1, " KB"), _fmt(r["wchar_bytes_per_turn"])),
        ("bytes the directory grew per turn", _fmt(hrm["grown_bytes_per_turn"], 1e-3, 1, " KB"),
         _fmt(graph["grown_bytes_per_turn"], 1e-3, 1, " KB"), _fmt(r["grown_bytes_per_turn"])),
        ("fsync + fdatasync per turn (strace)", _fmt(hrm["syncs_per_turn"]),
         _fmt(graph["syncs_per_turn"]), _fmt(r["syncs_per_turn"])),
        ("wall per turn", _fmt(hrm["wall_ms_per_turn"], unit=" ms"),
         _fmt(graph["wall_ms_per_turn"], unit=" ms"), _fmt(r["wall_per_turn"])),
    ]
    print(f"{'measure':<40} {'hrm':>12} {'LangGraph':>12} {'ratio':>7}")
    for label, a, b, ratio in lines:
        print(f"{label:<40} {a:>12} {b:>12} {ratio:>7}")
    rules = result["sides"][RULES_ONLY]
    label = "CPU per turn, sentence model off"
    print(f"{label:<40} {_fmt(rules['cpu_ms_per_turn'], unit=' ms'):>12}"
          f" {_fmt(graph['cpu_ms_per_turn'], unit=' ms'):>12}"
          f" {_fmt(r['cpu_per_turn_rules_only_median_of_block_pairs']):>7}"
          f"   (bytes written {_fmt(rules['wchar_bytes_per_turn'], 1e-3, 1, ' KB')})")
    print(f"hrm's fsyncs per turn: {_fmt(hrm['syncs_per_turn_each_turn_committed'])} with "
          "every turn committed on its own (group commit off); "
          f"{hrm['python_fsyncs_per_turn']:.2f} from Python in the alternating blocks")
    goal = result["goal"]
    print(f"CPU ratio is the median over {result['blocks']} pairs of blocks of "
          f"{result['block_turns']} turns; goal ≤ {goal['cpu_per_turn_ratio']}×: "
          f"{'met' if goal['met'] else 'NOT met'}")
    spread = statistics.quantiles(hrm["cpu_ms_per_turn_by_block"], n=4) \
        if len(hrm["cpu_ms_per_turn_by_block"]) >= 4 else None
    if spread is not None:
        print(f"hrm CPU per turn by block, quartiles: {[round(s, 2) for s in spread]} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer, smaller blocks")
    parser.add_argument("--blocks", type=int, help="blocks per side (default 10; --quick 4)")
    parser.add_argument("--block", type=int, help="turns per block (default 100; --quick 40)")
    parser.add_argument("--no-callgrind", action="store_true", help="skip the instruction counts")
    parser.add_argument("--worker", choices=SIDES, help=argparse.SUPPRESS)
    parser.add_argument("--warm", type=int, default=30, help=argparse.SUPPRESS)
    parser.add_argument("--turns", type=int, default=40, help=argparse.SUPPRESS)
    parser.add_argument("--commit-each-turn", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.worker, args.warm, args.turns,
                      commit_each_turn=args.commit_each_turn)
    blocks = args.blocks or (4 if args.quick else 10)
    size = args.block or (40 if args.quick else 100)
    callgrind_turns = 15 if args.quick else 50
    with tempfile.TemporaryDirectory(prefix="bench-anchor-") as tmp:
        measured, python_syncs = alternate(Path(tmp), blocks, size)
    workers = counted(Path(__file__).resolve(), 20, callgrind_turns, 60 if args.quick else 300,
                      callgrind=not args.no_callgrind)
    result = summarise(measured, python_syncs, workers, blocks=blocks, size=size,
                       callgrind_turns=callgrind_turns)
    result["quick"] = args.quick
    report(result)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
