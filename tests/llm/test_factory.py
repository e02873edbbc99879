"""The adapter factory: providers by name, `auto`, custom registrations, clear failures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hrm.config import LLMConfig
from hrm.errors import ErrorCode, HRMError
from hrm.llm import LLMAdapterFactory, OfflineAdapter
from hrm.llm import local as local_module


@pytest.fixture
def no_local(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_module, "default_model_path", lambda: None)


@pytest.fixture
def registered() -> Iterator[str]:
    LLMAdapterFactory.register("echo", OfflineAdapter)
    yield "echo"
    LLMAdapterFactory.unregister("echo")


def test_offline_by_name() -> None:
    adapter = LLMAdapterFactory.create(LLMConfig(provider="offline"))
    assert adapter.provider == "offline"


def test_auto_falls_back_to_offline_without_the_local_model(no_local: None) -> None:
    assert LLMAdapterFactory.default_provider() == "offline"
    assert LLMAdapterFactory.create(LLMConfig(provider="auto")).provider == "offline"
    assert not LLMAdapterFactory.is_installed("local")


def test_auto_prefers_local_when_installed() -> None:
    expected = "local" if local_module.is_local_model_installed() else "offline"
    assert LLMAdapterFactory.resolve_provider("auto") == expected
    assert LLMAdapterFactory.resolve_provider(None) == expected


def test_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(HRMError) as caught:
        LLMAdapterFactory.create(LLMConfig(provider="gemini"))
    assert caught.value.code is ErrorCode.VALIDATION_FAILED
    for name in ("auto", "anthropic", "local", "offline", "openai"):
        assert name in caught.value.message


def test_register_a_custom_adapter(registered: str) -> None:
    assert "echo" in LLMAdapterFactory.available_providers()
    assert LLMAdapterFactory.is_installed("echo")
    adapter = LLMAdapterFactory.create(LLMConfig(provider="echo"))
    assert isinstance(adapter, OfflineAdapter)
    assert [p.name for p in LLMAdapterFactory.providers() if p.name == "echo"] == ["echo"]


def test_reserved_names_cannot_be_registered() -> None:
    with pytest.raises(HRMError):
        LLMAdapterFactory.register("auto", OfflineAdapter)


def test_unregistering_a_builtin_restores_it() -> None:
    LLMAdapterFactory.register("offline", lambda config: OfflineAdapter())
    LLMAdapterFactory.unregister("offline")
    assert LLMAdapterFactory.create(LLMConfig(provider="offline")).provider == "offline"


def test_options_reach_the_adapter() -> None:
    adapter = LLMAdapterFactory.create(
        LLMConfig(provider="openai", api_key="sk-test-" + "x" * 30), http_client=None
    )
    assert adapter.provider == "openai"


def test_sdk_providers_report_installed() -> None:
    assert LLMAdapterFactory.is_installed("anthropic")
    assert LLMAdapterFactory.is_installed("openai")
    assert not LLMAdapterFactory.is_installed("nope")


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins
    import sys

    real_import = builtins.__import__

    def fake_import(name: str, *args: object, **kwargs: object) -> object:
        if name == "anthropic":
            raise ImportError("No module named 'anthropic'")
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.delitem(sys.modules, "hrm.llm.anthropic", raising=False)
    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ImportError) as caught:
        LLMAdapterFactory.create(LLMConfig(provider="anthropic", api_key="k"))
    assert "hrm-runtime[anthropic]" in str(caught.value)


def test_missing_local_model_is_a_clear_error(no_local: None) -> None:
    with pytest.raises(HRMError) as caught:
        LLMAdapterFactory.create(LLMConfig(provider="local"))
    assert "hrm models install local" in caught.value.message


def test_local_with_a_missing_gguf_path(tmp_path) -> None:
    with pytest.raises(HRMError) as caught:
        LLMAdapterFactory.create(LLMConfig(provider="local", model_path=str(tmp_path / "x.gguf")))
    assert "x.gguf" in caught.value.message
