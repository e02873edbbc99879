"""Where one governed turn's CPU goes: cProfile over warm turns of the benchmark conversation.

The same conversation and configuration as `turn_instructions.py` (offline model, full
persistence, group commit), profiled instead of counted: the warm-up runs unprofiled, then
`--turns` turns run under cProfile, and the functions with the most cumulative or own time
print. `--sentence-model off` leaves the MiniLM exemplar tier out, as `bench_serve`'s
governance cost measures it.

    python bench/profile_turn.py [--turns 200] [--sentence-model auto|on|off]
                                 [--sort cumulative|tottime] [--limit 40] [--out FILE]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conversation import WARM_UP, conversation


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--sentence-model", default="auto", choices=("auto", "on", "off"))
    parser.add_argument("--sort", default="cumulative", choices=("cumulative", "tottime"))
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--out", type=Path, default=None, help="save the raw pstats here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = str(Path(tmp) / "home")
        os.environ["HRM_HOME"] = home
        os.environ["HRM_READING__SENTENCE_MODEL"] = args.sentence_model
        from hrm import HRM
        from hrm.config import load_config
        from hrm.home import HRMHome

        config = replace(
            load_config(HRMHome.resolve(home)).config, stack_token_budget=10**9,
        )
        texts = conversation(7, args.turns)
        with HRM.open(home, "ADMIN", "offline", config=config) as hrm:
            for text in WARM_UP * 3:
                hrm.turn(text)
            profile = cProfile.Profile()
            cpu = time.process_time()
            profile.enable()
            for text in texts:
                hrm.turn(text)
            profile.disable()
            cpu = time.process_time() - cpu
    print(f"{args.turns} turns profiled: {cpu / args.turns * 1000:.2f} ms CPU a turn "
          "(with cProfile's overhead)")
    if args.out is not None:
        profile.dump_stats(str(args.out))
    pstats.Stats(profile).sort_stats(args.sort).print_stats(args.limit)


if __name__ == "__main__":
    main()
