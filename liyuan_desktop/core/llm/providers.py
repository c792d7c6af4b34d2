"""Provider settings, API-key lookup and model construction.

API keys are never fields of these models (so they cannot leak through ``repr``, logs or saved settings):
they come from an environment variable, the OS keyring or the user-only key file (``core/secrets.py``), and only
the client holds them.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .. import secrets
from ..messages import message
from .capabilities import Capabilities, capabilities_for
from .sampling import provider_kind

if TYPE_CHECKING:  # the HTTP client (httpx, tenacity) is imported when a model is built (issue 15: start-up)
    from .openai_client import OpenAIChatModel

log = logging.getLogger(__name__)

DEFAULT_KEYRING_SERVICE = secrets.DEFAULT_KEYRING_SERVICE
"""The keyring service keys are stored under (user = provider name); key storage lives in core/secrets.py."""


class ProviderSettings(BaseModel):
    """One model provider.

    Fields:
        name: the provider id, also the keyring user name (e.g. "deepseek").
        base_url: API root of an OpenAI-compatible endpoint (http:// or https://).
        model: model for actor calls; ``scribe_model`` (optional) for scribe/summary calls.
        api_key_env: environment variable holding the key (read first), or None.
        keyring_service: keyring service name under which the key is stored (user = ``name``).
        context_window: the model's context size in tokens.
        thinking_off_body: merged into the request body when thinking is switched off.
        extra_body: merged into every request body.
        connect_timeout / read_timeout: seconds (see :class:`OpenAIChatModel`).
        idle_timeout: seconds a started answer may go without new content (keep-alives do not count); default 180.
        total_timeout: seconds one whole model call may take; default 600 (10 minutes). Both end the beat unsealed
            with the draft kept (see :class:`OpenAIChatModel`).
        min_rate_chars / min_rate_window: the minimum output rate once the answer has started — at least
            ``min_rate_chars`` characters in every ``min_rate_window`` seconds (default 60 in 60 s), else the call
            ends the same way (:mod:`.rate`); ``min_rate_chars`` 0 switches the rule off.
        max_tokens: output cap in tokens of every actor call (default 2048: a looping local model must stop;
            enough for a beat's prose in one ``draft_write``); None or 0 = send no cap.
        scribe_max_tokens: the same for scribe and summary calls (default 1024); None or 0 = their own value.
        stream: True/False forces streaming on or off; None = as detected (``capabilities``: a server whose
            streamed calls break is called without streaming).
        compact_prompt: role-play beats send the compact rules and tool set (issue 30 §6, for 0.5B–3B models on a
            CPU: ``prompt.prose_only.compact_system``, ``beat.tools.sets.COMPACT_ROLEPLAY_TOOLS``); default False.
        capabilities: what each (base URL, model) of this provider can do, probed and/or set by hand
            (:mod:`.capabilities`; read with :meth:`caps`).

    Unknown fields are rejected, so an ``api_key`` can never be stored here by mistake.
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    base_url: str
    model: str
    api_key_env: Optional[str] = None
    keyring_service: str = DEFAULT_KEYRING_SERVICE
    scribe_model: Optional[str] = None
    context_window: int = Field(default=65536, gt=0)
    thinking_off_body: dict[str, Any] = Field(default_factory=dict)
    extra_body: dict[str, Any] = Field(default_factory=dict)
    connect_timeout: float = Field(default=10.0, gt=0)
    read_timeout: float = Field(default=120.0, gt=0)
    idle_timeout: float = Field(default=180.0, gt=0)
    total_timeout: float = Field(default=600.0, gt=0)
    min_rate_chars: int = Field(default=60, ge=0)
    min_rate_window: float = Field(default=60.0, gt=0)
    max_tokens: Optional[int] = Field(default=2048, ge=0)
    scribe_max_tokens: Optional[int] = Field(default=1024, ge=0)
    stream: Optional[bool] = None
    compact_prompt: bool = False
    capabilities: list[Capabilities] = Field(default_factory=list)

    @field_validator("max_tokens", "scribe_max_tokens")
    @classmethod
    def _zero_is_none(cls, value: Optional[int]) -> Optional[int]:
        return value or None

    def caps(self, model: Optional[str] = None) -> Capabilities:
        """The capabilities stored for ``model`` (default :attr:`model`) on the current base URL; unknown when none
        (:func:`.capabilities.capabilities_for`)."""
        return capabilities_for(self, model)

    def streams(self, model: Optional[str] = None) -> bool:
        """Whether calls stream: :attr:`stream` when set, else False only when the probe found streaming broken."""
        if self.stream is not None:
            return self.stream
        return self.caps(model).streaming is not False

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        value = value.strip()
        if not value.lower().startswith(("http://", "https://")):
            raise ValueError(message("provider.bad_base_url"))
        return value.rstrip("/")

    @field_validator("name", "model")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError(message("field.required"))
        return value


#: Built-in presets, keyed by provider name. Use :func:`preset` to get an editable copy.
PRESETS: dict[str, ProviderSettings] = {
    "deepseek": ProviderSettings(
        name="deepseek", base_url="https://api.deepseek.com", model="deepseek-chat",
        api_key_env="DEEPSEEK_API_KEY", context_window=131072,
    ),
    "openai": ProviderSettings(
        name="openai", base_url="https://api.openai.com/v1", model="gpt-4o-mini",
        api_key_env="OPENAI_API_KEY", context_window=128000,
    ),
    "openrouter": ProviderSettings(
        name="openrouter", base_url="https://openrouter.ai/api/v1", model="deepseek/deepseek-chat",
        api_key_env="OPENROUTER_API_KEY", context_window=65536,
    ),
    "ollama": ProviderSettings(
        name="ollama", base_url="http://127.0.0.1:11434/v1", model="qwen3:8b",
        api_key_env=None, context_window=32768,
    ),
    "lmstudio": ProviderSettings(
        name="lmstudio", base_url="http://127.0.0.1:1234/v1", model="local-model",
        api_key_env=None, context_window=32768,
    ),
    "llamacpp": ProviderSettings(
        name="llamacpp", base_url="http://127.0.0.1:8080/v1", model="local-model",
        api_key_env=None, context_window=32768,
        thinking_off_body={"chat_template_kwargs": {"enable_thinking": False}},
    ),
}


def preset(name: str) -> ProviderSettings:
    """A copy of the built-in preset ``name``; raises ``KeyError`` listing the known names."""
    try:
        return PRESETS[name].model_copy(deep=True)
    except KeyError:
        raise KeyError(message("provider.no_preset", name=name, presets=", ".join(PRESETS))) from None


def resolve_api_key(settings: ProviderSettings) -> Optional[str]:
    """The API key for ``settings``: the environment variable ``api_key_env`` first, then the OS keyring (service
    ``keyring_service``, user ``name``), then the 0600 key file used without a keyring, then this run's memory
    (``core.secrets.lookup``). Returns None when none has one; never raises."""
    return secrets.lookup(settings)[1]


def store_api_key(name: str, key: str, service: str = DEFAULT_KEYRING_SERVICE) -> None:
    """Save ``key`` in the OS keyring for provider ``name`` (``core.secrets.keyring_set``).

    Raises ``ValueError`` for an empty key and ``RuntimeError`` (Chinese message, no key in it) when the keyring
    cannot store it (e.g. no keyring backend on this system).
    """
    secrets.keyring_set(service, name, key)


def delete_api_key(name: str, service: str = DEFAULT_KEYRING_SERVICE) -> bool:
    """Remove the key of provider ``name`` from the OS keyring and the key file; True if one was removed. Never
    raises."""
    in_keyring = secrets.keyring_delete(service, name)
    return secrets.file_delete(service, name) or in_keyring


def build_model(
    settings: ProviderSettings,
    *,
    scribe: bool = False,
    api_key: Optional[str] = None,
    **client_kwargs: Any,
) -> OpenAIChatModel:
    """An :class:`OpenAIChatModel` for ``settings``.

    ``scribe=True`` uses ``scribe_model`` when set. ``api_key`` overrides the lookup through
    :func:`resolve_api_key`. Other keyword arguments go to the client (``max_retries``, ``transport``…).
    The client gets the provider's output caps, its streaming choice (:meth:`ProviderSettings.streams`), its name
    and its context window — the server's, when the probe found one smaller than the configured one (a prompt
    over the server's window always fails).
    """
    key = api_key if api_key is not None else resolve_api_key(settings)
    kwargs: dict[str, Any] = {
        "connect_timeout": settings.connect_timeout,
        "read_timeout": settings.read_timeout,
        "idle_timeout": settings.idle_timeout,
        "total_timeout": settings.total_timeout,
        "min_rate_chars": settings.min_rate_chars,
        "min_rate_window": settings.min_rate_window,
        "extra_body": settings.extra_body,
        "thinking_off_body": settings.thinking_off_body,
        "provider": provider_kind(settings.name, settings.base_url),
    }
    model = settings.scribe_model if scribe and settings.scribe_model else settings.model
    window = settings.context_window
    server = settings.caps(model).context_window
    if server and server < window:
        window = server
    kwargs.update(max_tokens=settings.max_tokens, scribe_max_tokens=settings.scribe_max_tokens,
                  stream=settings.streams(model), provider_name=settings.name, context_window=window)
    kwargs.update(client_kwargs)
    from .openai_client import OpenAIChatModel

    client = OpenAIChatModel(settings.base_url, model, key, **kwargs)
    client.context_window = kwargs["context_window"]  # the chat's context meter and compaction read it
    client.compact_prompt = settings.compact_prompt  # the beat reads it (issue 30 §6: the compact prompt)
    return client
