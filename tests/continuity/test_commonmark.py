"""Legacy handoff Markdown read as CommonMark: sections, items, tables, paths, and no crash."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.continuity import _commonmark as cm
from hrm.continuity._legacy_handoff import legacy_document
from hrm.continuity.handoffs import handoff_from_dict

DOC = """# Handoff: Phase 3

## Metadata
| Field | Value |
|---|---|
| Commit | 9f83ac49 |
| **Branch** | `main` |

- **Created**: 2026-01-14T05:06:00Z
- **Plan File**: `docs/plans/phase3.md`

## Action Items & Next Steps
1. Wire the CLI
   - see `cmd/main.go:12`
2. Run the [suite](docs/testing.md)

```bash
# Build the binary
make build
```

## What Worked
**1. Graceful degradation**
- fall back to defaults
- log once

Result: kept

## Critical References
- `scripts/codereview/types.go` - core types
- not a path: `make build`
"""


def test_sections_skip_headings_inside_fences() -> None:
    sections = cm.read(DOC)
    assert [(s.level, s.title) for s in sections] == [
        (0, ""), (1, "Handoff: Phase 3"), (2, "Metadata"), (2, "Action Items & Next Steps"),
        (2, "What Worked"), (2, "Critical References"),
    ]  # fmt: skip
    assert cm.looks_like_markdown(DOC) and not cm.looks_like_markdown("```\n# not\n```\nplain")


def test_key_values_come_from_tables_and_bullets_first_one_winning() -> None:
    pairs = cm.key_values(cm.find(cm.read(DOC), ["metadata"]))
    assert pairs == {
        "commit": "9f83ac49",
        "branch": "main",
        "created": "2026-01-14T05:06:00Z",
        "plan file": "docs/plans/phase3.md",
    }


def test_items_join_nested_items_and_drop_markup() -> None:
    sections = cm.read(DOC)
    assert cm.list_items(cm.find(sections, ["action items"])) == [
        "Wire the CLI; see cmd/main.go:12",
        "Run the suite",
    ]
    assert cm.list_items(cm.find(sections, ["what worked"])) == [
        "1. Graceful degradation; fall back to defaults; log once"
    ]


def test_paths_are_code_spans_that_look_like_files() -> None:
    sections = cm.read(DOC)
    assert cm.paths(cm.find(sections, ["critical references"])) == ["scripts/codereview/types.go"]
    assert cm.paths(cm.find(sections, ["action items"])) == ["cmd/main.go"]


def test_a_ring_handoff_maps_its_sections() -> None:
    doc = legacy_document({}, DOC, "/p/thoughts/shared/handoffs/phase3/2026-01-14_05-06-00_x.md")
    handoff = handoff_from_dict(doc)
    assert handoff.task.description == "Phase 3"
    assert handoff.session.id == "phase3"
    assert (handoff.context.git_commit, handoff.context.git_branch) == ("9f83ac49", "main")
    assert handoff.context.project_path == "/p"
    assert handoff.resume.next_steps == ["Wire the CLI; see cmd/main.go:12", "Run the suite"]
    assert handoff.context.key_files == ["scripts/codereview/types.go"]
    assert [item.type for item in handoff.learnings] == ["WORKING_SOLUTION"]


def test_decisions_read_from_subsections_with_their_text() -> None:
    text = (
        "# T\n## Key Decisions\n### Decision 1: Use FTS5\nBM25 **ranks** well.\n\n"
        "```sql\nSELECT 1;\n```\n### Decision 2: Keep YAML\n- readable\n"
    )
    decisions = legacy_document({}, text, None)["decisions"]
    assert [(d["decision"], d["rationale"]) for d in decisions] == [
        ("Use FTS5", "BM25 ranks well."),
        ("Keep YAML", "readable"),
    ]


PIECES = [*"#-*_`|>[]()!:1. \n\tabcxyz~=<", "```", "---", "**", "- [x] ", "\n  - ", "| a |"]
markdownish = st.lists(st.sampled_from(PIECES), max_size=120).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(markdownish, st.text(max_size=300)))
def test_any_text_maps_without_raising(text: str) -> None:
    """Whatever a person or agent wrote, the mapping yields a document the records accept."""
    doc = legacy_document({}, text, None)
    handoff_from_dict(doc)
    assert doc["notes"] == text
    for section in cm.read(text):
        cm.key_values(section.blocks)
        cm.paths(section.blocks)
        assert all(item for item in cm.list_items(section.blocks))
