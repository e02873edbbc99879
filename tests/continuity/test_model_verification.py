"""The embedding model's sha256 check: done once per installation, redone when the file changes."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from hrm.continuity import embeddings
from hrm.errors import HRMError


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "model.onnx"
    path.write_bytes(b"weights " * 1000)
    monkeypatch.setattr(embeddings, "MODEL_SHA256", hashlib.sha256(path.read_bytes()).hexdigest())
    monkeypatch.setattr(embeddings, "_stamp_file", lambda: tmp_path / "cache" / "verified")
    monkeypatch.setattr(embeddings, "_verified", set())
    return path


def _forget_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "_verified", set())  # as a new process starts


def test_a_verified_model_is_not_hashed_again_by_the_next_process(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embeddings._verify(model)
    _forget_this_process(monkeypatch)

    def no_hashing() -> None:
        raise AssertionError("hashed again although nothing changed")

    monkeypatch.setattr(embeddings.hashlib, "sha256", no_hashing)
    embeddings._verify(model)


def test_a_model_replaced_after_verification_is_refused(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embeddings._verify(model)
    _forget_this_process(monkeypatch)
    stat = model.stat()
    model.write_bytes(b"tampered" * 1000)  # same size
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    with pytest.raises(HRMError, match="sha256"):
        embeddings._verify(model)


def test_a_wrong_model_is_refused_and_leaves_no_stamp(
    model: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(embeddings, "MODEL_SHA256", "0" * 64)
    with pytest.raises(HRMError, match="expected 0000"):
        embeddings._verify(model)
    assert not (tmp_path / "cache" / "verified").exists()


def test_a_read_only_installation_still_verifies(
    model: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setattr(embeddings, "_stamp_file", lambda: blocked / "verified")
    embeddings._verify(model)  # hashed, found right, the stamp cannot be written: no error
    assert model in embeddings._verified
