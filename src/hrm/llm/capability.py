"""Whether the configured model can do more than answer: read what the rules leave unsure,
second-guess governance, run a plan, check another model's work.

One answer for the whole system, so the reading's model tier, model-assisted governance and
the plan engine never disagree about the same model. ``llm.capable`` decides it: ``on`` and
``off`` are the person's word; ``auto`` trusts the hosted providers (Anthropic, OpenAI at their
own endpoints) and nothing else — the offline model answers from templates, the in-process
local models (135M, 0.5B) cannot follow a structured brief reliably, and an OpenAI-compatible
server at a ``base_url`` may serve anything from a 1B model to a 70B one, so hrm does not guess
its size; the person says ``llm.capable: on`` for it (D233).
"""

from __future__ import annotations

from dataclasses import dataclass

from hrm.config import LLMConfig

__all__ = ["HOSTED_PROVIDERS", "ModelCapability", "model_capability"]

HOSTED_PROVIDERS = frozenset({"anthropic", "openai"})
"""Providers whose own endpoints serve models able to follow a structured brief."""


@dataclass(frozen=True, slots=True)
class ModelCapability:
    """What the configured model may be trusted with, and why, in words a person can act on."""

    capable: bool
    provider: str
    model: str
    reason: str
    """Why, e.g. "the in-process local model is too small for structured work"."""

    @property
    def hint(self) -> str:
        """What the person can do when the model is not capable (empty when it is)."""
        if self.capable:
            return ""
        return (
            "point hrm at a capable model (`hrm models` shows how), or set `llm.capable: on` "
            "if the configured one is"
        )


def model_capability(config: LLMConfig) -> ModelCapability:
    """The capability of the model `config` names (module docstring)."""
    from hrm.llm.factory import LLMAdapterFactory

    provider = LLMAdapterFactory.resolve_provider(config.provider)
    model = config.model or "(provider default)"

    def verdict(capable: bool, reason: str) -> ModelCapability:
        return ModelCapability(capable, provider, model, reason)

    if config.capable == "on":
        return verdict(True, "llm.capable is on")
    if config.capable == "off":
        return verdict(False, "llm.capable is off")
    if provider == "offline":
        return verdict(False, "the offline model answers from templates")
    if provider == "local":
        return verdict(False, "the in-process local model is too small for structured work")
    if config.base_url:
        return verdict(
            False, f"the server at {config.base_url} may serve a small model; hrm does not guess"
        )
    if provider in HOSTED_PROVIDERS:
        return verdict(True, f"{provider} serves models that follow a structured brief")
    return verdict(False, f"hrm knows nothing of provider {provider!r}")
