"""Capabilities of the configured providers, probed and kept in the app settings (issue 18 §1).

The one place that reads and writes ``ProviderSettings.capabilities`` through ``settings.json``:
:func:`probe_provider` runs :func:`.llm.capabilities.probe` on a provider and stores the result,
:func:`record_capabilities` stores a result, :func:`mark_tools_ignored` records that a model never calls tools
(the beat side calls it after 3 sealed beats without a tool call), :func:`capabilities_of` reads.
Model objects built by :func:`.llm.providers.build_model` carry ``provider_name``, so the beat side can pass the
model itself.
"""

from __future__ import annotations

import logging
from typing import Any, Optional, Union

from .llm.capabilities import Capabilities, capabilities_for, now_iso, probe, set_capabilities
from .llm.providers import ProviderSettings, build_model
from .messages import message
from .settings import load_settings, resolve_key, save_settings

log = logging.getLogger(__name__)

__all__ = ["capabilities_of", "ensure_probed", "mark_endpoint_tools", "mark_tools_ignored", "model_capabilities",
           "probe_provider",
           "record_capabilities"]


def _provider(provider: Union[str, ProviderSettings]) -> Optional[ProviderSettings]:
    if isinstance(provider, ProviderSettings):
        return provider
    return load_settings().provider(provider)


def capabilities_of(provider: Union[str, ProviderSettings], model: Optional[str] = None) -> Capabilities:
    """The stored capabilities of a configured provider (by name, read from ``settings.json``, or a
    ``ProviderSettings``) for ``model`` (default its model); unknown when nothing is stored or the provider does not
    exist."""
    p = _provider(provider)
    if p is None:
        return Capabilities(model=model or "")
    return capabilities_for(p, model)


def record_capabilities(provider_name: str, caps: Capabilities) -> bool:
    """Store ``caps`` with the provider called ``provider_name`` in ``settings.json`` (keeping that entry's
    overridden fields). False when there is no such provider or the file cannot be written (logged)."""
    settings = load_settings()
    p = settings.provider(provider_name)
    if p is None:
        return False
    set_capabilities(p, caps)
    try:
        save_settings(settings)
    except OSError as exc:
        log.warning("capabilities of %s not saved: %s", provider_name, exc)
        return False
    return True


def _endpoint(model: Any) -> tuple[str, str, str]:
    """(provider name, base URL, model name) a model object built by ``build_model`` talks to."""
    return (getattr(model, "provider_name", "") or "", (getattr(model, "base_url", "") or "").rstrip("/"),
            getattr(model, "model", "") or "")


def model_capabilities(model: Any) -> Capabilities:
    """What is stored about the server and model a model object really talks to (issue 30 §4): the configured
    provider's entry for the model's own base URL (an overridden ``--base-url`` is its own key), else the entry
    kept for that (base URL, model) in ``AppSettings.endpoint_capabilities`` (a built-in preset used by name, or
    an override); unknown when neither exists (a replay or hand-built model)."""
    name, url, mname = _endpoint(model)
    settings = load_settings()
    p = settings.provider(name) if name else None
    if p is not None:
        return capabilities_for(p.model_copy(update={"base_url": url}) if url else p, mname or None)
    if url and mname:
        return capabilities_for(_Endpoints(url, settings.endpoint_capabilities), mname)
    return Capabilities(model=mname)


class _Endpoints:
    """``endpoint_capabilities`` seen as one provider at ``base_url`` (what ``capabilities_for`` reads)."""

    def __init__(self, base_url: str, capabilities: list[Capabilities]):
        self.base_url, self.capabilities, self.model = base_url, capabilities, ""


def mark_tools_ignored(model_or_provider: Union[Any, str], model: Optional[str] = None) -> bool:
    """Record that a model ignores tools ("ignored", unless the user overrode ``tools``), persisted in
    ``settings.json``. ``model_or_provider``: a model object built by ``build_model`` (its ``provider_name``,
    ``base_url`` and ``model`` are used) or a provider name (then ``model`` defaults to the provider's model).
    False when the provider is unknown (a replay or hand-built model) or nothing could be saved."""
    if isinstance(model_or_provider, str):
        name, base_url = model_or_provider, None
    else:
        name = getattr(model_or_provider, "provider_name", "") or ""
        base_url = getattr(model_or_provider, "base_url", None)
        model = model or getattr(model_or_provider, "model", None)
    if not name:
        return False
    settings = load_settings()
    p = settings.provider(name)
    if p is None:  # a built-in preset used by name: kept per (base URL, model) (issue 30 §4)
        return mark_endpoint_tools(settings, base_url, model, "ignored")
    caps = capabilities_for(p.model_copy(update={"base_url": base_url.rstrip("/")}) if base_url else p, model)
    if base_url:
        caps = caps.model_copy(update={"base_url": base_url.rstrip("/")})
    if "tools" in caps.overridden:
        return False
    note = message("caps.prose_only")
    set_capabilities(p, caps.model_copy(update={"tools": "ignored", "probed_at": now_iso(),
                                                "notes": [note] + [n for n in caps.notes if n != note][:3]}))
    try:
        save_settings(settings)
    except OSError as exc:
        log.warning("tools-ignored mark of %s not saved: %s", name, exc)
        return False
    return True


async def probe_provider(provider: Union[str, ProviderSettings], *, api_key: Optional[str] = None,
                         save: bool = True, **client_kwargs: Any) -> Capabilities:
    """Probe a provider (name or ``ProviderSettings``) with short timeouts and no retries
    (:func:`.llm.capabilities.probe`) and, with ``save``, store the result in ``settings.json`` when the provider
    is configured there. ``api_key`` None looks the key up (environment, keyring, session). KeyError for an unknown
    provider name. Never raises for a failed probe (its ``notes`` say what failed)."""
    p = _provider(provider)
    if p is None:
        raise KeyError(message("caps.no_provider", name=provider))
    key = resolve_key(p) if api_key is None else (api_key or None)
    # a hosted API answers "reply OK" in seconds: 30 s of silence means something is wrong. A local server on a
    # CPU may still be reading another request or loading the model (issue 30 item 7: a busy llama.cpp server was
    # reported "unknown" after 30 s), so it gets the provider's own limits.
    from .llm.openai_client import is_local_url  # (the HTTP client's module: imported when a probe runs)

    local = is_local_url(p.base_url)
    kwargs: dict[str, Any] = {"max_retries": 0,
                              "read_timeout": p.read_timeout if local else min(p.read_timeout, 30.0),
                              "total_timeout": p.total_timeout if local else min(p.total_timeout, 60.0),
                              "stream": p.stream is not False}
    kwargs.update(client_kwargs)
    client = build_model(p, api_key=key or "", **kwargs)
    try:
        caps = await probe(client, api_key=key)
    finally:
        try:
            await client.aclose()
        except Exception:
            pass
    if save and load_settings().provider(p.name) is not None:
        record_capabilities(p.name, caps)
    return set_capabilities(p.model_copy(deep=True), caps)


def mark_endpoint_tools(settings: Any, base_url: Optional[str], model: Optional[str], tools: str) -> bool:
    """Record ``tools`` ("ignored" / "rejected") for a server that is no configured provider, in ``settings``'
    ``endpoint_capabilities`` (saved). False without a URL and model, when the user overrode it, or unsaved."""
    if not base_url or not model:
        return False
    holder = _Endpoints(base_url.rstrip("/"), list(settings.endpoint_capabilities))
    caps = capabilities_for(holder, model)
    if "tools" in caps.overridden:
        return False
    set_capabilities(holder, caps.model_copy(update={"tools": tools, "probed_at": now_iso()}))
    settings.endpoint_capabilities = holder.capabilities
    try:
        save_settings(settings)
    except OSError as exc:
        log.warning("tools-%s mark of %s not saved: %s", tools, base_url, exc)
        return False
    return True


async def ensure_probed(provider_name: str, model: Optional[str] = None) -> Optional[Capabilities]:
    """The first-use probe: probe the configured provider ``provider_name`` and store the result, unless its
    current (base URL, ``model``) pair was probed before or the user overrode its tool support; returns the
    capabilities (stored or new), None for an unknown provider. Callers run it as a coroutine next to the chat
    (never on the UI thread's critical path); a failed probe still stores what it saw (its notes)."""
    settings = load_settings()
    p = settings.provider(provider_name)
    if p is None:
        return None
    caps = capabilities_for(p, model)
    if caps.probed_at or "tools" in caps.overridden:
        return caps
    if model and model != p.model:
        p = p.model_copy(update={"model": model})
    return await probe_provider(p)
