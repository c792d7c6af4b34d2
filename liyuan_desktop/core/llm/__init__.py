"""Model clients: the streaming OpenAI-compatible HTTP client, the offline replay model, provider settings."""

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

# issue 15: a name's module is imported when the name is first read (importing one submodule no longer
# imports them all, and what they import)
__getattr__, __dir__ = lazy_exports(__name__, {
    "Capabilities": ".capabilities",
    "capabilities_for": ".capabilities",
    "OpenAIChatModel": ".openai_client",
    "PRESETS": ".providers",
    "ProviderSettings": ".providers",
    "build_model": ".providers",
    "delete_api_key": ".providers",
    "preset": ".providers",
    "resolve_api_key": ".providers",
    "store_api_key": ".providers",
    "ReplayBeat": ".replay",
    "ReplayFile": ".replay",
    "ReplayModel": ".replay",
    "Sampling": ".sampling",
    "apply_sampling": ".sampling",
    "provider_kind": ".sampling",
    "with_sampling": ".sampling",
    "ChatMessage": ".types",
    "ChatModel": ".types",
    "ChatRequest": ".types",
    "ChatResponse": ".types",
    "ModelError": ".types",
    "OnDelta": ".types",
    "StreamDelta": ".types",
    "ToolCall": ".types",
    "Usage": ".types",
    "parse_usage": ".usage",
})

if TYPE_CHECKING:
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
