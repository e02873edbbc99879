"""A governed turn on the local model against a direct call with the same prompt (issue 35, item 7).

With the local model (SmolLM2-135M on xllamacpp), most of a turn's time is llama.cpp evaluating
the prompt and decoding the answer. A governed turn adds hrm's own work (milliseconds) and a
prompt it assembles: what matters is how much of that prompt llama.cpp must evaluate anew each
turn, and that depends on the prompt keeping a stable start and the server reusing its cache
across turns (D230, D231).

Each governed turn (``HRM.turn`` on a ``local`` ADMIN stack, temperature 0) is followed at once
by a **direct call**: the exact request the turn sent, handed to the same in-process server,
whose cache then holds that whole prompt — the best case a caller of llama.cpp gets. The figure
is end-to-end tokens per second (answer tokens over wall time) of the turn as a ratio to the
direct call's, per turn, and the share of the turn's prompt the server took from its cache.

Two scenarios:

* **short**: a fresh home, short answers; prompts of about a hundred tokens;
* **long**: a home with preferences and 40 learnings on the conversation's subjects (a
  different five retrieved each turn), longer answers, four exchanges kept: prompts of about
  550 tokens once the conversation has filled.

Goal (issue 35): ≥ 0.8× at the ~550-token prompt. The machine's load moves both sides of each
pair alike; the cache share is a count and does not move with it.

    .venv/bin/python bench/bench_prompt_cache.py [--quick] [--turns N]

Skipped (exit 0, noted in the JSON) when the local model is not installed. Writes
bench/out/prompt_cache.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from costs import ROOT, bench_config

OUT = ROOT / "bench" / "out" / "prompt_cache.json"
GOAL = 0.8
LONG_PROMPT_TOKENS = 400
"""Turns whose prompt reaches this many tokens count as the ~550-token case."""
PREFERENCES = (
    "I prefer short answers with examples",
    "I prefer answers that start with the command",
    "I prefer British spelling in documents",
)
MESSAGES = (
    "How do I rename a git branch in the billing repo?",
    "What should we check first for the billing launch next week?",
    "Write the migration step for the invoices table, adding a currency column",
    "Why does the lint step fail on CI but not locally in the payments repo?",
    "And how do I rename it on the remote as well?",
    "Which index does the invoices migration need?",
    "Summarise what we decided about the retry policy for billing",
    "What should we check before the billing launch goes to enterprise customers?",
    "Why does the integration test fail only on the ARM runners?",
    "How do I squash the last three commits on the release branch?",
)
SUBJECTS = ("git branches", "the billing launch", "the invoices table", "CI lint failures",
            "database indexes", "the retry policy", "enterprise customers", "ARM runners")


@dataclass
class Pair:
    """One governed turn and the direct call of its exact request: wall and CPU seconds (the
    process's, llama.cpp's threads included) and the answer tokens of each."""

    prompt_tokens: int
    cached_tokens: int
    turn_s: float
    turn_cpu_s: float
    turn_tokens: int
    direct_s: float
    direct_cpu_s: float
    direct_tokens: int

    @property
    def ratio(self) -> float:
        """Tokens per wall second, the turn's over the direct call's."""
        return (self.turn_tokens / self.turn_s) / (self.direct_tokens / self.direct_s)

    @property
    def cpu_ratio(self) -> float:
        """Tokens per CPU second, the same: what a loaded machine moves least."""
        return (self.turn_tokens / self.turn_cpu_s) / (self.direct_tokens / self.direct_cpu_s)


@dataclass
class Recorder:
    """Wraps the adapter's request builder and chat: what each turn sent and got back."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    output_tokens: list[int] = field(default_factory=list)
    timings: list[dict[str, Any]] = field(default_factory=list)
    """The server's count for each call that finished: ``prompt_n`` evaluated, ``cache_n``
    taken from its cache."""


class _Observed:
    """The in-process server, noting the ``timings`` each streamed call ends with.

    Read here rather than from the adapter, so the same benchmark measures code from before
    the adapter counted them (``--src``)."""

    def __init__(self, server: Any, recorder: Recorder) -> None:
        self.server = server
        self.recorder = recorder

    def handle_chat_completions(self, request: dict[str, Any], callback: Any = None) -> Any:
        if callback is None:
            return self.server.handle_chat_completions(request)

        def noting(chunk: Any) -> Any:
            if isinstance(chunk, dict) and isinstance(chunk.get("timings"), dict):
                self.recorder.timings.append(chunk["timings"])
            return callback(chunk)

        return self.server.handle_chat_completions(request, noting)


def _learnings(home: Path, count: int) -> None:
    from hrm.continuity.learnings import LearningsRepository
    from hrm.continuity.learnings_types import LearningInput
    from hrm.home import HRMHome

    with LearningsRepository.open(HRMHome(home), embeddings="off") as repo:
        for i in range(count):
            subject = SUBJECTS[i % len(SUBJECTS)]
            repo.store_learning(LearningInput(
                content=f"For {subject}, check step {i} first: it failed twice before "
                        f"because the {subject} config drifted (note {i})",
                type="CODEBASE_PATTERN"))


def _stack(home: Path, max_tokens: int) -> tuple[Any, Recorder]:
    from hrm.pipeline import HRM

    config = bench_config(home)
    # No time limit: on a loaded machine a call that timed out would leave hrm's error
    # message as the "answer" in the conversation, which the model never wrote.
    llm = replace(config.llm, provider="local", temperature=0.0, max_tokens=max_tokens,
                  timeout_ms=3_600_000)
    hrm = HRM.open(home, "ADMIN", config=replace(config, llm=llm))
    adapter = hrm.stack.gateway.adapter
    recorder = Recorder()
    build, chat = adapter._request, adapter.chat

    def recording_request(messages: Any, system: str, call: Any) -> dict[str, Any]:
        request: dict[str, Any] = build(messages, system, call)
        recorder.requests.append(request)
        return request

    def recording_chat(messages: Any, system: str, config: Any = None) -> Any:
        response = chat(messages, system, config)
        recorder.output_tokens.append(response.output_tokens)
        return response

    adapter._request, adapter.chat = recording_request, recording_chat
    from hrm.llm import local

    key = (str(adapter.model_path), adapter.context_window, adapter._n_threads)
    server = local._load(adapter.model_path, adapter.context_window, adapter._n_threads)
    local._servers[key] = _Observed(getattr(server, "server", server), recorder)
    return hrm, recorder


def _direct(server: Any, request: dict[str, Any]) -> tuple[float, float, int]:
    started, cpu = time.perf_counter(), time.process_time()
    response = server.handle_chat_completions({**request, "stream": False})
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    if not isinstance(response, dict) or "usage" not in response:
        raise SystemExit(f"the direct call failed: {str(response)[:300]}")
    return elapsed, cpu, int(response["usage"]["completion_tokens"])


def scenario(home: Path, *, turns: int, max_tokens: int, learnings: int,
             preferences: tuple[str, ...]) -> list[Pair]:
    if learnings:
        _learnings(home, learnings)
    hrm, recorder = _stack(home, max_tokens)
    adapter = hrm.stack.gateway.adapter
    server = adapter._server().server
    pairs: list[Pair] = []
    try:
        for text in preferences:
            hrm.turn(text)
        for text in MESSAGES[:turns]:
            calls, noted = len(recorder.requests), len(recorder.timings)
            started, cpu = time.perf_counter(), time.process_time()
            result = hrm.turn(text)
            turn_s, turn_cpu = time.perf_counter() - started, time.process_time() - cpu
            if len(recorder.requests) == calls or not recorder.output_tokens:
                raise SystemExit(f"the turn made no model call ({result.action}): {text!r}")
            # the turn's last call that ran to its end (one stopped early reports nothing)
            last = recorder.timings[-1] if len(recorder.timings) > noted else {}
            cached = int(last.get("cache_n") or 0)
            turn_tokens = sum(recorder.output_tokens[-(len(recorder.requests) - calls):])
            direct_s, direct_cpu, direct_tokens = _direct(server, recorder.requests[-1])
            pair = Pair(cached + int(last.get("prompt_n") or 0), cached, turn_s, turn_cpu,
                        max(1, turn_tokens), direct_s, direct_cpu, max(1, direct_tokens))
            pairs.append(pair)
            print(f"  prompt {pair.prompt_tokens:4d} tokens, {pair.cached_tokens:4d} from the "
                  f"cache; turn {pair.turn_tokens / turn_s:5.1f} tok/s, direct "
                  f"{pair.direct_tokens / direct_s:5.1f} tok/s: {pair.ratio:.2f}× "
                  f"(per CPU second {pair.cpu_ratio:.2f}×)", flush=True)
    finally:
        hrm.close()
    return pairs


def summary(pairs: list[Pair]) -> dict[str, Any]:
    if not pairs:
        return {"turns": 0}
    return {
        "turns": len(pairs),
        "prompt_tokens_median": statistics.median(p.prompt_tokens for p in pairs),
        "cached_share": sum(p.cached_tokens for p in pairs) / sum(p.prompt_tokens for p in pairs),
        "turn_tokens_per_s_median": statistics.median(p.turn_tokens / p.turn_s for p in pairs),
        "direct_tokens_per_s_median": statistics.median(
            p.direct_tokens / p.direct_s for p in pairs),
        "ratio_median": statistics.median(p.ratio for p in pairs),
        "cpu_ratio_median": statistics.median(p.cpu_ratio for p in pairs),
        "pairs": [vars(p) for p in pairs],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer turns")
    parser.add_argument("--turns", type=int, help="turns per scenario (default 10; --quick 5)")
    args = parser.parse_args()
    from hrm.llm.local import is_local_model_installed

    OUT.parent.mkdir(parents=True, exist_ok=True)
    if not is_local_model_installed():
        print("skipped: the local model is not installed (`hrm models install local`)")
        OUT.write_text(json.dumps({"skipped": "local model not installed"}) + "\n")
        return 0
    turns = min(len(MESSAGES), args.turns or (5 if args.quick else 10))
    with tempfile.TemporaryDirectory(prefix="bench-prompt-cache-") as tmp:
        print("short prompts:")
        short = scenario(Path(tmp) / "short", turns=turns, max_tokens=32, learnings=0,
                         preferences=())
        print("long prompts:")
        long = scenario(Path(tmp) / "long", turns=turns, max_tokens=96, learnings=40,
                        preferences=PREFERENCES)
    long_kept = [p for p in long if p.prompt_tokens >= LONG_PROMPT_TOKENS]
    result = {"short": summary(short), "long": summary(long_kept), "long_all": summary(long),
              "goal": GOAL, "quick": args.quick}
    for name in ("short", "long"):
        row = result[name]
        if not row["turns"]:
            print(f"{name}: no turn reached the prompt size")
            continue
        print(f"{name:<6} prompt ~{row['prompt_tokens_median']:.0f} tokens, "
              f"{100 * row['cached_share']:.0f}% from the cache: turn "
              f"{row['turn_tokens_per_s_median']:.1f} tok/s vs direct "
              f"{row['direct_tokens_per_s_median']:.1f} tok/s = {row['ratio_median']:.2f}× "
              f"(per CPU second {row['cpu_ratio_median']:.2f}×; median of {row['turns']} "
              "pairs)")
    met = result["long"].get("ratio_median", 0) >= GOAL
    print(f"goal ≥ {GOAL}× at the long prompt: {'met' if met else 'NOT met'}")
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
