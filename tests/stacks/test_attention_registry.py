"""The registry stage reads only files inside the home's registries, however they are named."""

from __future__ import annotations

from pathlib import Path

from hrm.pipeline import HRM
from hrm.stacks.attention import _registry_file, _registry_items


def test_a_plain_file_in_the_root_is_found(tmp_path: Path) -> None:
    (tmp_path / "r.csv").write_text("id,name\n1,a\n")
    found = _registry_file(tmp_path, "r.csv")
    assert found is not None and found[0] == tmp_path / "r.csv"


def test_missing_files_directories_and_dots_are_not_registries(tmp_path: Path) -> None:
    (tmp_path / "dir.csv").mkdir()
    for name in ("missing.csv", "dir.csv", "", ".", ".."):
        assert _registry_file(tmp_path, name) is None, name


def test_a_link_leading_outside_the_root_is_refused(tmp_path: Path) -> None:
    root, outside = tmp_path / "registries", tmp_path / "secret.csv"
    root.mkdir()
    outside.write_text("id\n1\n")
    (root / "r.csv").symlink_to(outside)
    assert _registry_file(root, "r.csv") is None
    assert _registry_file(root, "../secret.csv") is None


def test_links_and_subpaths_that_stay_inside_are_followed(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "r.csv").write_text("id\n1\n")
    (tmp_path / "alias.csv").symlink_to(tmp_path / "sub" / "r.csv")
    assert _registry_file(tmp_path, "sub/r.csv") is not None
    found = _registry_file(tmp_path, "alias.csv")
    assert found is not None and found[0] == (tmp_path / "sub" / "r.csv").resolve()


def test_items_are_reread_when_the_file_changes(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("id,name\n1,alpha\n")
    first = _registry_items(*_registry_file(tmp_path, "r.csv"), "r.csv", 50)  # type: ignore[misc]
    assert [i.text for i in first.items] == ["id=1, name=alpha"]
    assert first.words == (frozenset({"alpha"}),)  # values only: no "name"
    path.write_text("id,name\n1,alpha\n2,beta-longer\n")
    second = _registry_items(*_registry_file(tmp_path, "r.csv"), "r.csv", 50)  # type: ignore[misc]
    assert [i.key for i in second.items] == ["r.csv#0", "r.csv#1"]


def test_a_row_is_matched_by_the_words_that_set_it_apart(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("id,name,path\n1,alpha,HOT/x/1\n2,beta,HOT/x/2\n")
    rows = _registry_items(*_registry_file(tmp_path, "r.csv"), "r.csv", 50)  # type: ignore[misc]
    assert rows.words == (frozenset({"alpha"}), frozenset({"beta"}))  # "hot" is in every row


def _admin_context(h: HRM, text: str) -> list[str]:
    retrieved = h.turn(text).decision.attention_state["retrieved"]
    return [r["key"] for r in retrieved if r["source"] == "registry"]


def test_admin_context_holds_the_registry_rows_that_bear_on_the_input(tmp_path: Path) -> None:
    # D65: every row went into every prompt, and the local model answered a question about a
    # failing ETL job with framework ids.
    with HRM.open(tmp_path / "home", "ADMIN", "offline") as h:
        assert _admin_context(h, "Our nightly ETL job fails with a KeyError on customer_id") == []
        assert _admin_context(h, "How does the tier boundary work?") == [
            "frameworks_registry.csv#1"
        ]
        assert len(_admin_context(h, "What is in the framework registry?")) == 4
        assert _admin_context(h, "Is FMWK-011 still current?") == ["frameworks_registry.csv#3"]
