"""Generate ``src/hrm/data/injection/confusables_ascii.json`` from Unicode's confusables (TR39).

The injection firewall folds look-alike characters (Cyrillic ``а``, Greek ``ο``, Cherokee
``Ꭺ`` …) to the ASCII letter they imitate before it looks for phrasings. The data comes from
the `confusable_homoglyphs` package (MIT; its ``confusables.json`` is built from Unicode's
``confusables.txt``), but loading that package costs ~40 ms (900 KB of JSON, and it imports
``urllib.request``), too much for a hook that starts on every session. So the table is generated
once, here, and shipped: one non-ASCII character -> the single printable ASCII character it is
confusable with, for the characters that have exactly one (case aside), lower-cased.

    .venv/bin/pip install confusable-homoglyphs
    .venv/bin/python scripts/generate_confusables.py

`tests/runtime/test_normalise.py` checks the shipped file is what this produces.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src/hrm/data/injection/confusables_ascii.json"


def table() -> dict[str, str]:
    """Every non-ASCII character with one ASCII look-alike -> that look-alike, lower-cased."""
    import confusable_homoglyphs

    source = Path(confusable_homoglyphs.__file__).with_name("confusables.json")
    data = json.loads(source.read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for char, entries in data.items():
        if len(char) != 1 or char.isascii():
            continue
        ascii_ = {
            e["c"].lower()
            for e in entries
            if len(e["c"]) == 1 and e["c"].isascii() and e["c"].isprintable()
        }
        if len(ascii_) == 1:
            out[char] = ascii_.pop()
    return dict(sorted(out.items()))


def render() -> str:
    """The file's text: sorted, ASCII-escaped JSON, one entry a line (reviewable diffs)."""
    body = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in table().items())
    return "{\n" + body + "\n}\n"


def main() -> int:
    OUT.write_text(render(), encoding="ascii")
    print(f"wrote {OUT} ({len(table())} characters)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
