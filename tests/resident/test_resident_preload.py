"""What the resident process imports before it forks: all a turn needs, and no threads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_SCRIPT = """
import json, os, sys
from hrm.resident import server
server.preload()
threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1
before = set(sys.modules)
sys.argv = ["hrm", "turn", sys.argv[1], "--provider", "offline"]
from hrm.cli.app import run
try:
    run()
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "threads": threads, "native": sorted(
    m for m in before if m.split(".")[0] in ("numpy", "onnxruntime", "tokenizers")),
    "new": sorted(set(sys.modules) - before)}), file=sys.stderr)
"""

MESSAGES = (
    "How do I rename a git branch?",
    "Decided: we use Postgres. forget that. focus on the API for the next two turns, "
    "I prefer metric units and remember that the release goes out on the 14th",
)


def test_a_turn_after_the_preload_imports_no_hrm_module_and_the_preload_starts_no_thread(
    tmp_path: Path,
) -> None:
    for i, message in enumerate(MESSAGES):
        done = subprocess.run(
            [sys.executable, "-c", _SCRIPT, message], capture_output=True, text=True,
            timeout=180, check=False,
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HRM_RESIDENT": "0",
                 "HRM_HOME": str(tmp_path / f"home-{i}"), "HRM_PROVIDER": "offline"},
        )
        found = json.loads(done.stderr.strip().splitlines()[-1])
        assert found["code"] in (0, None), done.stderr
        assert found["threads"] == 1
        assert found["native"] == []
        # The sentence model's index imports numpy: it is left to the turns that need it.
        missing = [m for m in found["new"]
                   if m.startswith("hrm.") and m != "hrm.reading._exemplar_index"]
        assert missing == [], f"add these to hrm.resident.server.PRELOAD: {missing}"
