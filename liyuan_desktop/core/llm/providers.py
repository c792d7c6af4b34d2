"""Provider settings, API-key lookup and model construction.

API keys are never fields of these models (so they cannot leak through ``repr``, logs or saved settings):
they come from an environment variable or the OS keyring, and only the client holds them.
"""

from __future__ import annotations

import logging
import os
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .openai_client import OpenAIChatModel
from .sampling import provider_kind

log = logging.getLogger(__name__)

DEFAULT_KEYRING_SERVICE = "liyuan-desktop"


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

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        value = value.strip()
        if not value.lower().startswith(("http://", "https://")):
            raise ValueError("base_url 必须以 http:// 或 https:// 开头")
        return value.rstrip("/")

    @field_validator("name", "model")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("不能为空")
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
        raise KeyError(f"没有名为 {name!r} 的预设服务商，可选：{', '.join(PRESETS)}") from None


def resolve_api_key(settings: ProviderSettings) -> Optional[str]:
    """The API key for ``settings``: the environment variable ``api_key_env`` first, then the OS keyring
    (service ``keyring_service``, user ``name``). Returns None when neither has one; never raises (a missing or
    broken keyring backend counts as "no key")."""
    if settings.api_key_env:
        value = os.environ.get(settings.api_key_env, "").strip()
        if value:
            return value
    try:
        import keyring  # inside the try: a missing or broken keyring must not stop the app (key lookup goes on)

        value = keyring.get_password(settings.keyring_service, settings.name)
    except Exception as exc:  # any backend failure: no key
        log.debug("keyring lookup failed for provider %s: %s", settings.name, type(exc).__name__)
        return None
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def store_api_key(name: str, key: str, service: str = DEFAULT_KEYRING_SERVICE) -> None:
    """Save ``key`` in the OS keyring for provider ``name``.

    Raises ``ValueError`` for an empty key and ``RuntimeError`` (Chinese message, no key in it) when the keyring
    cannot store it (e.g. no keyring backend on this system).
    """
    key = (key or "").strip()
    if not key:
        raise ValueError("API key 为空，没有保存。")
    try:
        import keyring  # inside the try: a missing or broken keyring must not stop the app (key lookup goes on)

        keyring.set_password(service, name, key)
    except Exception as exc:
        raise RuntimeError(
            f"无法把 {name} 的 API key 存进系统钥匙串（{type(exc).__name__}）：可以改用环境变量提供密钥。"
        ) from None


def delete_api_key(name: str, service: str = DEFAULT_KEYRING_SERVICE) -> bool:
    """Remove the stored key of provider ``name``; True if one was removed. Never raises."""
    try:
        import keyring  # inside the try: a missing or broken keyring must not stop the app (key lookup goes on)

        keyring.delete_password(service, name)
        return True
    except Exception:
        return False


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
    """
    key = api_key if api_key is not None else resolve_api_key(settings)
    kwargs: dict[str, Any] = {
        "connect_timeout": settings.connect_timeout,
        "read_timeout": settings.read_timeout,
        "idle_timeout": settings.idle_timeout,
        "total_timeout": settings.total_timeout,
        "extra_body": settings.extra_body,
        "thinking_off_body": settings.thinking_off_body,
        "provider": provider_kind(settings.name, settings.base_url),
    }
    kwargs.update(client_kwargs)
    model = settings.scribe_model if scribe and settings.scribe_model else settings.model
    client = OpenAIChatModel(settings.base_url, model, key, **kwargs)
    client.context_window = settings.context_window  # the chat's context meter and compaction read it
    return client
