"""Salience anchors read from the governance ledger: kept between reads, always current."""

from __future__ import annotations

from pathlib import Path

import pytest

from hrm.home import HRMHome, initialize
from hrm.stacks.anchors import add_anchor, read_anchors, retire_anchor
from hrm.storage.ledger import Ledger


@pytest.fixture
def home(tmp_path: Path) -> HRMHome:
    found = HRMHome(tmp_path / "home")
    initialize(found)
    return found


def _texts(home: HRMHome, agent_class: str | None = None) -> list[str]:
    return [a["text"] for a in read_anchors(home.governance_ledger, agent_class=agent_class)]


def test_anchors_added_and_retired_between_reads_are_seen(home: HRMHome) -> None:
    first = add_anchor(home, "the person is vegetarian", must_mention=True)
    assert _texts(home) == ["the person is vegetarian"]
    add_anchor(home, "prefers metric units", agent_class="RESIDENT:ana")
    assert _texts(home) == ["the person is vegetarian", "prefers metric units"]
    assert _texts(home, "RESIDENT:bo") == ["the person is vegetarian"]
    retire_anchor(home, first["id"])
    assert _texts(home) == ["prefers metric units"]
    assert _texts(home, "RESIDENT:bo") == []


def test_what_a_read_returns_cannot_change_the_next(home: HRMHome) -> None:
    add_anchor(home, "ships on Fridays")
    read_anchors(home.governance_ledger)[0]["text"] = "changed by a caller"
    assert _texts(home) == ["ships on Fridays"]


def _anchor(ledger: Ledger, anchor_id: str, text: str) -> None:
    ledger.append("salience_anchor", {"id": anchor_id, "text": text, "agent_class": None,
                                      "must_mention": False})


def test_another_writer_is_seen_and_a_replaced_ledger_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "governance.jsonl"
    with Ledger(path) as ledger:
        _anchor(ledger, "anc_1", "first")
    assert [a["text"] for a in read_anchors(path)] == ["first"]
    with Ledger(path) as ledger:  # another process appending
        _anchor(ledger, "anc_2", "second")
    assert [a["text"] for a in read_anchors(path)] == ["first", "second"]
    # The file replaced by another ledger (a restore): the records known before are gone.
    for stale in tmp_path.iterdir():
        stale.unlink()
    with Ledger(path) as ledger:
        _anchor(ledger, "anc_3", "only this")
    assert [a["text"] for a in read_anchors(path)] == ["only this"]


def test_a_missing_ledger_has_no_anchors(tmp_path: Path) -> None:
    assert read_anchors(tmp_path / "nowhere.jsonl") == []
