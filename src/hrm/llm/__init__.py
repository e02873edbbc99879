"""Models (001 §11): the adapter protocol, the providers, the factory and the gateway.

Provider SDKs are imported only by their own modules (`hrm.llm.anthropic`, `hrm.llm.openai`,
`hrm.llm.local`), which the factory loads on demand; importing `hrm.llm` needs none of them.
"""

from __future__ import annotations

from hrm.llm._json import chat_json, extract_json
from hrm.llm._retry import RetryPolicy
from hrm.llm.factory import LLMAdapterFactory, ProviderInfo
from hrm.llm.gateway import LLMGateway, RecordFn
from hrm.llm.offline import OFFLINE_MARKER, OfflineAdapter
from hrm.llm.types import (
    ILLMAdapter,
    LLMCallConfig,
    LLMResponse,
    Message,
    StreamChunk,
    estimate_tokens,
)

__all__ = [
    "OFFLINE_MARKER",
    "ILLMAdapter",
    "LLMAdapterFactory",
    "LLMCallConfig",
    "LLMGateway",
    "LLMResponse",
    "Message",
    "OfflineAdapter",
    "ProviderInfo",
    "RecordFn",
    "RetryPolicy",
    "StreamChunk",
    "chat_json",
    "estimate_tokens",
    "extract_json",
]
