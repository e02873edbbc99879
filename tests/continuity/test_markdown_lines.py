"""The hand-kept line reader (ledgers, front matter) agrees with CommonMark on what ledgers use."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.continuity import _commonmark as cm
from hrm.continuity import _markdown as lines

words = st.lists(
    st.sampled_from(["Goal", "Now", "phase", "fix", "parser", "tests", "`src/a.py`", "**key**"]),
    min_size=1,
    max_size=4,
).map(" ".join)
checkbox = st.sampled_from(["", "[x] ", "[ ] ", "[->] "])


@st.composite
def bullet_list(draw: st.DrawFn) -> str:
    out = []
    for _ in range(draw(st.integers(1, 4))):
        out.append(f"- {draw(checkbox)}{draw(words)}")
        out.extend(f"  - {draw(checkbox)}{draw(words)}" for _ in range(draw(st.integers(0, 2))))
    return "\n".join(out)


block = st.one_of(
    bullet_list(),
    words.map(lambda w: f"{w.split()[0].strip('*`')}: {w}"),  # a `Key: value` line
    words.map(lambda w: f"**{w.replace('*', '')}**"),  # a bold line opening a group
    words.map(lambda w: f"```bash\n# {w}\nmake build\n```"),
)


@st.composite
def ledgers(draw: st.DrawFn) -> str:
    parts = [f"# Session: {draw(words)}"]
    for _ in range(draw(st.integers(1, 5))):
        parts.append(f"{'#' * draw(st.integers(2, 3))} {draw(words)}")
        parts.extend(draw(st.lists(block, max_size=3)))
    return "\n\n".join(parts) + "\n"


@settings(max_examples=300, deadline=None)
@given(ledgers())
def test_sections_items_and_pairs_match_commonmark_on_ledger_markdown(text: str) -> None:
    ours = lines.parse_sections(text)
    theirs = cm.read(text)
    assert [(s.level, s.title) for s in ours] == [(s.level, s.title) for s in theirs]
    for mine, reference in zip(ours, theirs, strict=True):
        assert lines.list_items(mine.lines) == cm.list_items(reference.blocks)
        assert lines.key_values(mine.lines) == cm.key_values(reference.blocks)


front = st.text(
    st.characters(
        blacklist_categories=("Cs",), blacklist_characters="\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
    ),
    max_size=80,
)


@settings(max_examples=200, deadline=None)
@given(front, st.text(max_size=200))
def test_front_matter_splits_back_into_what_was_joined(yaml_text: str, body: str) -> None:
    yaml_lines = [line for line in yaml_text.split("\n") if line.rstrip(" \t") != "---"]
    joined_yaml = "".join(line + "\n" for line in yaml_lines)
    split = lines.split_front_matter(f"---\n{joined_yaml}---\n{body}")
    assert (split.yaml_text, split.body) == (joined_yaml, body)
    assert split.body_line == len(yaml_lines) + 3


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_the_line_reader_never_raises(text: str) -> None:
    split = lines.split_front_matter(text)
    assert split.body in text
    for section in lines.parse_sections(split.body):
        lines.list_items(section.lines)
        lines.key_values(section.lines)
