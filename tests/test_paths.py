"""Reading files whose path hrm did not choose: regular files only, bounded, inside a root."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from hrm._paths import is_within, open_regular, read_bytes, read_text
from hrm.errors import ErrorCode, HRMError


def _within_seconds(fn: object, seconds: float = 20.0) -> object:
    """Run `fn` on a thread; fail (instead of hanging the suite) if it does not return."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = fn()  # type: ignore[operator]
        except BaseException as exc:  # handed back to the test
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "the read blocked"
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box.get("value")


def test_a_regular_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("héllo", encoding="utf-8")
    assert read_text(path) == "héllo"
    assert read_bytes(path, root=tmp_path) == "héllo".encode()


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "transcript.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(HRMError) as caught:
        _within_seconds(lambda: read_bytes(fifo, what="transcript"))
    assert caught.value.code is ErrorCode.UNKNOWN_FORMAT
    assert "FIFO" in caught.value.message and str(fifo) in caught.value.message


@pytest.mark.parametrize(("device", "kind"), [("/dev/zero", "character device"),
                                               ("/dev/null", "character device")])
def test_a_device_is_refused(device: str, kind: str) -> None:
    if not os.path.exists(device):
        pytest.skip(f"no {device} here")
    with pytest.raises(HRMError, match=kind):
        _within_seconds(lambda: read_bytes(device))


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HRMError, match="a directory"):
        read_bytes(tmp_path)


def test_a_missing_file_is_source_not_found(tmp_path: Path) -> None:
    with pytest.raises(HRMError) as caught:
        read_bytes(tmp_path / "nope")
    assert caught.value.code is ErrorCode.SOURCE_NOT_FOUND


def test_a_symlink_leaving_its_root_is_refused_and_one_inside_is_followed(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("not yours")
    (root / "inside.txt").write_text("yours")
    (root / "escape.txt").symlink_to(outside / "secret.txt")
    (root / "alias.txt").symlink_to(root / "inside.txt")
    with pytest.raises(HRMError) as caught:
        read_bytes(root / "escape.txt", root=root)
    assert caught.value.code is ErrorCode.PERMISSION_DENIED
    assert "outside" in caught.value.message
    assert read_bytes(root / "alias.txt", root=root) == b"yours"
    assert read_bytes(root / ".." / "outside" / "secret.txt") == b"not yours"  # no root: allowed
    with pytest.raises(HRMError):
        read_bytes(root / ".." / "outside" / "secret.txt", root=root)


def test_is_within_resolves_dots_and_links(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "a")
    assert is_within(tmp_path / "link" / "x", tmp_path / "a")
    assert not is_within(tmp_path / "a" / ".." / "b", tmp_path / "a")
    assert not is_within(tmp_path / "ab", tmp_path / "a")


def test_a_file_over_the_bound_is_refused_or_cut(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"x" * 100)
    with pytest.raises(HRMError) as caught:
        read_bytes(path, max_bytes=10)
    assert caught.value.code is ErrorCode.PARSE_ERROR
    assert read_bytes(path, max_bytes=10, truncate=True) == b"x" * 10


def test_text_that_is_not_utf8_is_a_parse_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"key: \xff\xfe")
    with pytest.raises(HRMError, match="not UTF-8") as caught:
        read_text(path)
    assert caught.value.context["path"] == str(path)


def test_an_opened_file_is_blocking_again_for_ordinary_reads(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    with open_regular(path) as handle:
        assert os.get_blocking(handle.fileno())
        assert handle.read() == b"abc"


def test_a_file_may_lie_in_any_of_several_roots(tmp_path: Path) -> None:
    first, second, other = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for folder in (first, second, other):
        folder.mkdir()
        (folder / "f.md").write_text(folder.name)
    assert read_bytes(second / "f.md", root=[first, second]) == b"b"
    with pytest.raises(HRMError, match="outside") as caught:
        read_bytes(other / "f.md", root=[first, second])
    assert caught.value.context["roots"] == [str(first), str(second)]
