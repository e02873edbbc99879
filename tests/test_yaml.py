"""Bounded YAML: alias bombs and oversized texts fail fast, ordinary YAML loads as before."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from hrm import _yaml
from hrm.errors import ErrorCode, HRMError


def billion_laughs(levels: int = 9, width: int = 9) -> str:
    """The classic alias bomb: `width`**`levels` leaves from a few hundred bytes."""
    lines = ["a: &a [" + ", ".join(['"lol"'] * width) + "]"]
    previous = "a"
    for index in range(1, levels):
        name = chr(ord("a") + index)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * width) + "]")
        previous = name
    return "\n".join(lines) + "\n"


def test_a_billion_laughs_fails_fast_with_little_memory() -> None:
    tracemalloc.start()
    try:
        with pytest.raises(_yaml.YAMLLimitError, match="expand"):
            _yaml.safe_load(billion_laughs())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5 << 20


def test_too_many_aliases_fail_even_when_each_is_small() -> None:
    text = "base: &b 1\nitems: [" + ", ".join(["*b"] * (_yaml.MAX_ALIASES + 1)) + "]\n"
    with pytest.raises(_yaml.YAMLLimitError, match="aliases"):
        _yaml.safe_load(text)


def test_an_alias_inside_what_it_names_is_refused() -> None:
    with pytest.raises(_yaml.YAMLLimitError, match="contains it"):
        _yaml.safe_load("&a [1, *a]")


def test_a_text_over_the_size_bound_is_refused() -> None:
    with pytest.raises(_yaml.YAMLLimitError, match="longer"):
        _yaml.safe_load("x: 1\n" * 10, max_bytes=20)


def test_the_limit_error_is_a_yaml_error_so_callers_handle_it_as_bad_yaml() -> None:
    assert issubclass(_yaml.YAMLLimitError, yaml.YAMLError)
    error = _yaml.YAMLLimitError("too much")
    assert error.problem == "too much" and error.problem_mark is None


def test_ordinary_anchors_and_merge_keys_still_load() -> None:
    text = "base: &b {x: 1, y: [1, 2]}\none: *b\ntwo: {<<: *b, z: 3}\n"
    assert _yaml.safe_load(text) == {
        "base": {"x": 1, "y": [1, 2]},
        "one": {"x": 1, "y": [1, 2]},
        "two": {"x": 1, "y": [1, 2], "z": 3},
    }


def test_an_empty_document_is_none() -> None:
    assert _yaml.safe_load("") is None
    assert _yaml.safe_load("# only a comment\n") is None


def test_load_file_names_the_file_and_line_of_a_bomb(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(billion_laughs(), encoding="utf-8")
    with pytest.raises(HRMError) as caught:
        _yaml.load_file(path, what="agent definition")
    assert caught.value.code is ErrorCode.PARSE_ERROR
    assert str(path) in caught.value.message and "expand" in caught.value.message


def test_load_file_reports_the_line_of_invalid_yaml(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("a: 1\nb: [\n", encoding="utf-8")
    with pytest.raises(HRMError) as caught:
        _yaml.load_file(path)
    assert caught.value.context["path"] == str(path) and caught.value.context.get("line")


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=4),
    max_leaves=25,
)


@given(_JSONISH)
def test_bounded_loading_agrees_with_safe_load_on_ordinary_documents(value: object) -> None:
    text = yaml.safe_dump(value)
    assert _yaml.safe_load(text) == yaml.safe_load(text)
