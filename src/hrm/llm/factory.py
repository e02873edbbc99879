"""Creating the adapter a config names (001 §11.5), with ``auto`` and custom registrations.

Built-in providers are kept as import paths and imported only when created, so choosing
``offline`` never imports a provider SDK. ``auto`` picks ``local`` when its runtime and weights
are installed, else ``offline`` (ARCHITECTURE §6: offline is the last fallback).

Where a credential may go is decided here, once (D218): `api_key_for` is how the built-in
adapters get their key, and `check_endpoint` (run by `LLMAdapterFactory.create` for every
adapter, registered ones too) refuses a base URL that came from a project's file that is no
longer trusted with the content it was read from. A base URL from an untrusted project never
gets this far: `hrm.config.load_config` leaves it aside (D216).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from hrm.errors import HRMError
from hrm.llm.types import ILLMAdapter

if TYPE_CHECKING:
    from hrm.config import LLMConfig

__all__ = ["AUTO_PROVIDER", "LLMAdapterFactory", "ProviderInfo", "api_key_for", "check_endpoint"]

AUTO_PROVIDER = "auto"
"""The provider name that means "local if installed, else offline"."""

AdapterClass = Callable[..., ILLMAdapter]

_BUILTIN: dict[str, str] = {
    "anthropic": "hrm.llm.anthropic:ClaudeAdapter",
    "local": "hrm.llm.local:LocalAdapter",
    "offline": "hrm.llm.offline:OfflineAdapter",
    "openai": "hrm.llm.openai:OpenAIAdapter",
}
_DESCRIPTIONS = {
    "anthropic": "Claude through the official SDK (extra: hrm-runtime[anthropic])",
    "local": "SmolLM2-135M (or any GGUF) in-process on xllamacpp; `hrm models install local`",
    "offline": "built in, deterministic, no network; quotes the context it is given",
    "openai": "OpenAI or any compatible server via base_url (extra: hrm-runtime[openai])",
}
_REQUIRES = {"anthropic": "anthropic", "openai": "openai"}


@dataclass(frozen=True, kw_only=True)
class ProviderInfo:
    """One provider as `hrm models list` shows it."""

    name: str
    """The provider name a config uses."""
    installed: bool
    """Whether it can be created on this machine now."""
    is_default: bool
    """Whether ``auto`` resolves to it."""
    description: str
    """One line on what it is and how to install it."""


def check_endpoint(config: LLMConfig) -> None:
    """Refuse a base URL the person no longer trusts to receive requests and credentials.

    A base URL set in code, the home's config or the environment is the person's; one from a
    project's file was trusted when the config was loaded, and is checked again here: a long
    process (``hrm serve``, ``hrm chat``, agents built lazily) may outlive that trust.

    Raises:
        HRMError: ``GATE_DENIED`` naming the URL, the file and how to trust it again.
    """
    origin = config.base_url_project
    if not config.base_url or origin is None or origin.still_trusted():
        return
    raise HRMError.gate_denied(
        "project_trust",
        f"llm.base_url {config.base_url} comes from {origin.path}, which is no longer trusted "
        f"with the content it was read from, so no request or credential goes there; "
        f"`hrm trust {origin.project}` trusts it again",
        base_url=config.base_url,
        file=origin.path,
    )


def api_key_for(config: LLMConfig, default_env: str) -> str | None:
    """The API key a built-in adapter sends, or None: from ``llm.api_key``, the variable
    ``llm.api_key_env`` names, or `default_env` — only once `check_endpoint` passed.

    Raises:
        HRMError: ``GATE_DENIED`` from `check_endpoint`.
    """
    check_endpoint(config)
    return config.resolve_api_key() or os.environ.get(default_env) or None


class LLMAdapterFactory:
    """Creates the adapter for a configured provider; ``register`` adds custom ones."""

    _adapters: ClassVar[dict[str, AdapterClass | str]] = dict(_BUILTIN)
    _lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def create(cls, config: LLMConfig | None = None, **options: Any) -> ILLMAdapter:
        """The adapter for ``config.provider`` (``auto`` resolved), built from ``config``.

        Args:
            config: LLM settings; ``None`` uses the defaults (provider ``auto``).
            **options: Passed to the adapter's constructor (e.g. ``http_client=``).

        Raises:
            HRMError: ``VALIDATION_FAILED`` for an unknown provider, naming the known ones;
                ``GATE_DENIED`` for a base URL from a project no longer trusted.
            ImportError: When the provider's optional SDK is missing, naming the extra.
        """
        if config is None:
            from hrm.config import LLMConfig

            config = LLMConfig()
        name = cls.resolve_provider(config.provider)
        check_endpoint(config)
        adapter_class = cls._adapter_class(name)
        return adapter_class(config, **options)

    @classmethod
    def register(cls, provider: str, adapter_class: AdapterClass) -> None:
        """Register (or replace) a provider; ``adapter_class(config)`` must build an adapter."""
        name = provider.strip().lower()
        if not name or name == AUTO_PROVIDER:
            raise HRMError.validation_failed(
                f"'{provider}' cannot be registered as a provider name", provider=provider
            )
        with cls._lock:
            cls._adapters[name] = adapter_class

    @classmethod
    def unregister(cls, provider: str) -> None:
        """Remove a custom provider; built-ins return to their shipped adapter."""
        name = provider.strip().lower()
        with cls._lock:
            if name in _BUILTIN:
                cls._adapters[name] = _BUILTIN[name]
            else:
                cls._adapters.pop(name, None)

    @classmethod
    def available_providers(cls) -> list[str]:
        """Every provider name a config may use (besides ``auto``), sorted."""
        with cls._lock:
            return sorted(cls._adapters)

    @classmethod
    def is_installed(cls, provider: str) -> bool:
        """Whether ``provider`` can be created here (SDK importable, local weights present)."""
        name = provider.strip().lower()
        with cls._lock:
            entry = cls._adapters.get(name)
        if entry is None:
            return False
        if not isinstance(entry, str):
            return True
        if name == "local":
            from hrm.llm.local import is_local_model_installed

            return is_local_model_installed()
        module = _REQUIRES.get(name)
        return module is None or importlib.util.find_spec(module) is not None

    @classmethod
    def default_provider(cls) -> str:
        """What ``auto`` means on this machine: ``local`` when installed, else ``offline``."""
        return "local" if cls.is_installed("local") else "offline"

    @classmethod
    def resolve_provider(cls, provider: str | None) -> str:
        """The concrete provider for a configured name (``auto`` and empty resolved)."""
        name = (provider or AUTO_PROVIDER).strip().lower()
        if name == AUTO_PROVIDER:
            return cls.default_provider()
        with cls._lock:
            known = name in cls._adapters
        if not known:
            raise HRMError.validation_failed(
                f"Unknown LLM provider '{provider}'; known providers: "
                f"{', '.join([AUTO_PROVIDER, *cls.available_providers()])}",
                key="llm.provider",
                provider=provider,
            )
        return name

    @classmethod
    def providers(cls) -> list[ProviderInfo]:
        """Every provider with whether it is installed and which one ``auto`` picks."""
        default = cls.default_provider()
        return [
            ProviderInfo(
                name=name,
                installed=cls.is_installed(name),
                is_default=name == default,
                description=_DESCRIPTIONS.get(name, "registered adapter"),
            )
            for name in cls.available_providers()
        ]

    @classmethod
    def _adapter_class(cls, name: str) -> AdapterClass:
        with cls._lock:
            entry = cls._adapters[name]
        if not isinstance(entry, str):
            return entry
        module_name, _, attribute = entry.partition(":")
        module = importlib.import_module(module_name)
        adapter_class: AdapterClass = getattr(module, attribute)
        return adapter_class
