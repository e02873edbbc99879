"""The ways to a model that can do the work, as `hrm models guide` shows them (issue 33 §5).

The default model (SmolLM2-135M in process, or the offline templates) needs nothing and answers
small questions; plans, agents and model-assisted governance need a capable model
(`hrm.llm.capability`, D233). Each `ModelRoute` is one way there: what to run, and the exact
lines for ``config.yaml``. The lines are data, so a test can load each one through the config
loader and check that it means what the guide says (D282).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ROUTES", "ModelRoute"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRoute:
    """One way to a model, in the steps a person takes."""

    name: str
    """What it is, e.g. ``Ollama``."""
    summary: str
    """One line: what it costs and what it gives."""
    commands: tuple[str, ...]
    """Shell commands to run first, in order (none for a hosted provider's config)."""
    config: str
    """The ``llm:`` section of ``config.yaml``, exactly."""
    capable: bool
    """Whether hrm treats the route's model as capable of plans and checks once configured."""


def _compatible(base_url: str, model: str) -> str:
    # `capable: on` is the person's word for a server hrm cannot size (D233): the guide says
    # it only beside a model large enough to deserve it.
    return (
        "llm:\n"
        "  provider: openai\n"
        f"  base_url: {base_url}\n"
        f"  model: {model}\n"
        "  capable: on\n"
    )


ROUTES: tuple[ModelRoute, ...] = (
    ModelRoute(
        name="Ollama",
        summary="a local OpenAI-compatible server; free, private, needs ~8 GB of RAM for 7B",
        commands=("ollama pull qwen2.5:7b-instruct", "ollama serve"),
        config=_compatible("http://localhost:11434/v1", "qwen2.5:7b-instruct"),
        capable=True,
    ),
    ModelRoute(
        name="llama.cpp server",
        summary="any GGUF file behind llama.cpp's OpenAI-compatible server",
        commands=("llama-server -m ./Qwen2.5-7B-Instruct-Q4_K_M.gguf --port 8080",),
        config=_compatible("http://localhost:8080/v1", "qwen2.5-7b-instruct"),
        capable=True,
    ),
    ModelRoute(
        name="vLLM",
        summary="a GPU server for larger models, OpenAI-compatible",
        commands=("vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000",),
        config=_compatible("http://localhost:8000/v1", "Qwen/Qwen2.5-7B-Instruct"),
        capable=True,
    ),
    ModelRoute(
        name="Anthropic (hosted)",
        summary="a hosted model; paid per token, capable without further settings",
        commands=("pip install 'hrm-runtime[anthropic]'", "export ANTHROPIC_API_KEY=..."),
        config="llm:\n  provider: anthropic\n",
        capable=True,
    ),
    ModelRoute(
        name="OpenAI (hosted)",
        summary="a hosted model; paid per token, capable without further settings",
        commands=("pip install 'hrm-runtime[openai]'", "export OPENAI_API_KEY=..."),
        config="llm:\n  provider: openai\n",
        capable=True,
    ),
    ModelRoute(
        name="Qwen2.5-Coder-0.5B (opt-in, in process)",
        summary=(
            "better answers than the 135M default with nothing to run beside hrm; still too "
            "small for plans and checks"
        ),
        commands=("hrm models install qwen2.5-coder-0.5b",),
        config="llm:\n  provider: local\n  model: qwen2.5-coder-0.5b\n",
        capable=False,
    ),
)
"""The routes, the local servers first: they cost nothing and keep the data on the machine."""
