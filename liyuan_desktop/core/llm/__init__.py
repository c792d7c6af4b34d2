"""Model clients: the streaming OpenAI-compatible HTTP client, the offline replay model, provider settings."""

from .capabilities import Capabilities, capabilities_for
from .openai_client import OpenAIChatModel
from .providers import (
    PRESETS,
    ProviderSettings,
    build_model,
    delete_api_key,
    preset,
    resolve_api_key,
    store_api_key,
)
from .replay import ReplayBeat, ReplayFile, ReplayModel
from .sampling import Sampling, apply_sampling, provider_kind, with_sampling
from .types import (
    ChatMessage,
    ChatModel,
    ChatRequest,
    ChatResponse,
    ModelError,
    OnDelta,
    StreamDelta,
    ToolCall,
    Usage,
)
from .usage import parse_usage

__all__ = [
    "Capabilities",
    "capabilities_for",
    "ChatMessage",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "ModelError",
    "OnDelta",
    "OpenAIChatModel",
    "PRESETS",
    "ProviderSettings",
    "ReplayBeat",
    "ReplayFile",
    "ReplayModel",
    "Sampling",
    "StreamDelta",
    "ToolCall",
    "Usage",
    "apply_sampling",
    "build_model",
    "delete_api_key",
    "parse_usage",
    "preset",
    "provider_kind",
    "resolve_api_key",
    "store_api_key",
    "with_sampling",
]
