"""The sentence model's weights run as integers: a graph derived once from the packaged one.

The packaged ``model.onnx`` stores MiniLM's weights as int8 and turns them back into floats
inside the graph (``Cast`` then ``Mul``). ONNX Runtime's constant folding does that once at
load, so every encode runs 42 float32 matrix products: 4.0 of 5.5 ms for a 24-token sentence
on one core of this machine, close to what the core can do in float32. Rewritten as
``MatMulNBits`` nodes (8-bit weights in blocks of 32, accuracy level 4: each block of the
activations quantized to int8 and multiplied with integer dot products), the same weights
encode a sentence in 1.7 ms instead of 3.6 ms, the session loads in half the CPU and holds
~100 MB less, and each vector has cosine ≥ 0.998 with the packaged graph's (D407).

Deriving it needs ``onnx`` (the `embeddings` extra brings it) and ~1.4 s of CPU, so it is
done once and kept where the installation keeps its other derived data
(``<venv>/share/hrm/cache``; ``~/.cache/hrm`` when the installation is read-only), under a
name holding the packaged model's sha256 and onnxruntime's version. Written to a temporary
file and renamed, so a reader never sees half a graph; two processes deriving at once write
the same bytes. Anything that fails here leaves the packaged graph in use: a slower encode,
never a failed one; a derivation that failed leaves a ``.failed`` note beside where the graph
would be, so later processes with the same onnxruntime do not try again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import sys
from pathlib import Path

__all__ = ["derive", "derived_graph"]

logger = logging.getLogger(__name__)

_BLOCK = 32
_ACCURACY_LEVEL = 4
"""MatMulNBits' accuracy level 4: int8 activations, integer dot products (VNNI where the CPU
has it); the lower levels compute in float and were slower than the packaged graph (11.9 ms)."""


def derived_graph(source_sha256: str) -> Path | None:
    """The derived graph for the packaged model with `source_sha256`, if one was made and is
    safe to load (a regular file of ours, in a directory no one else may write)."""
    import onnxruntime

    for folder in _folders():
        path = folder / _name(source_sha256, onnxruntime.__version__)
        if _ours(path):
            return path
    return None


def derive(source: Path, source_sha256: str) -> Path | None:
    """Derive the integer graph of `source` (whose sha256 the caller checked) and keep it;
    returns where, or None when `onnx` is missing or anything fails (logged)."""
    try:
        import onnx  # noqa: F401 - the quantizer's own dependency, checked before any work
        import onnxruntime
    except ImportError:
        logger.info("onnx is not installed: the sentence model runs its packaged graph")
        return None
    for folder in _folders():
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            continue
        if not _ours(folder, directory=True):
            continue
        target = folder / _name(source_sha256, onnxruntime.__version__)
        failed = target.with_name(target.name + ".failed")
        if failed.exists():
            return None  # tried with this onnxruntime and failed: not every process again
        try:
            _write(source, target)
        except Exception as exc:  # a slower encode, never a failed one
            logger.warning(
                "could not derive the sentence model's integer graph (%s); the packaged graph "
                "runs", exc, exc_info=logger.isEnabledFor(logging.DEBUG),
            )
            with contextlib.suppress(OSError):  # unwritten: the next process tries again
                failed.write_text(f"{type(exc).__name__}: {exc}\n", encoding="utf-8")
            return None
        return target
    return None


def _write(source: Path, target: Path) -> None:
    import tempfile

    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".deriving-") as scratch:
        folded = Path(scratch) / "folded.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        options.log_severity_level = 3
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        quiet = logging.getLogger("onnxruntime.quantization.matmul_nbits_quantizer")
        level = quiet.level
        quiet.setLevel(logging.ERROR)  # it logs every node it leaves alone, at INFO
        try:
            quantizer = MatMulNBitsQuantizer(
                onnx.load(str(folded)), bits=8, block_size=_BLOCK, is_symmetric=True,
                accuracy_level=_ACCURACY_LEVEL,
            )
            quantizer.process()
        finally:
            quiet.setLevel(level)
        written = Path(scratch) / target.name
        quantizer.model.save_model_to_file(str(written))
        os.chmod(written, 0o600)
        os.replace(written, target)


def _name(source_sha256: str, runtime_version: str) -> str:
    return f"minilm-{source_sha256[:16]}-int8-b{_BLOCK}-ort{runtime_version}.onnx"


def _folders() -> list[Path]:
    """Where derived graphs are kept, in order: the installation's, then the user's cache."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return [Path(sys.prefix) / "share" / "hrm" / "cache", Path(cache) / "hrm"]


def _ours(path: Path, *, directory: bool = False) -> bool:
    """A file (or directory) this user owns, whose directory no other user may write."""
    try:
        info = path.lstat()
        parent = path.parent.lstat()
    except OSError:
        return False
    kind = stat.S_ISDIR if directory else stat.S_ISREG
    writable_by_others = stat.S_IWGRP | stat.S_IWOTH
    uid = os.getuid() if hasattr(os, "getuid") else None  # no owners to compare on Windows
    return (
        kind(info.st_mode)
        and (uid is None or (info.st_uid == uid and parent.st_uid == uid))
        and not parent.st_mode & writable_by_others
        and not (directory and info.st_mode & writable_by_others)
    )
