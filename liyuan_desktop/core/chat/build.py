"""One way to make a :class:`Chat` from the app's settings (issue 25): the window and every CLI command call these.

Before this module the window and ``liyuan chat`` each turned settings into a chat, differently: the window applied
the compaction share, the connection profile's sampling, the separate scribe provider and the library's default
persona; the CLI applied none of them, so the same card, settings and words gave different first prompts.

- :func:`provider_settings` — which provider a name means (the configured one, else the built-in preset).
- :func:`chat_models` — the story model and the scribe's model the settings name (plus why there is none).
- :func:`persona_for_new_chat` — the persona a new chat starts with.
- :func:`build_chat` — open the chat in a folder (or create it) with everything the settings say.

Nothing here touches the disk beyond what :meth:`Chat.open` / :meth:`Chat.create` write.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from ..cards import Card
    from ..cards.personas import Persona
    from ..llm.providers import ProviderSettings
    from ..llm.types import ChatModel
    from ..prompt.presets.model import Preset
    from ..settings import AppSettings
    from .facade import Chat


def provider_settings(settings: "AppSettings", name: str) -> "ProviderSettings":
    """The provider ``name`` means: a copy of the one configured under that name (everything the user set up — base
    URL, context window, timeouts, scribe model, capabilities), else the built-in preset of that name. KeyError
    (Chinese, listing both kinds of names) when neither exists."""
    from ..llm.providers import PRESETS, preset

    found = settings.provider(name)
    if found is not None:
        return found.model_copy(deep=True)
    if name in PRESETS:
        return preset(name)
    names = [p.name for p in settings.providers]
    mine = f"已配置的：{', '.join(names)}；" if names else ""
    raise KeyError(f"没有名为 {name!r} 的服务商（{mine}内置预设：{', '.join(PRESETS)}）")


@dataclass
class ChatModels:
    """What :func:`chat_models` found: the story model (None when no provider is configured — ``why`` says so, as
    a message key), the scribe's model (None: the story model keeps the ledger) and the provider used."""

    main: Optional["ChatModel"]
    scribe: Optional["ChatModel"] = None
    provider: Optional["ProviderSettings"] = None
    why: str = ""


def chat_models(settings: "AppSettings", provider: Optional[str] = None, *, base_url: Optional[str] = None,
                model: Optional[str] = None) -> ChatModels:
    """The models a chat plays with under ``settings``.

    ``provider``: a provider name (:func:`provider_settings`); None = the settings' active provider (none configured:
    ``ChatModels(main=None, why="model.none.why")``). ``base_url`` / ``model`` override the provider's for this
    call (the CLI's ``--base-url`` / ``--model``). Keys come from each provider's own lookup (environment variable,
    keyring, key file: :func:`..llm.providers.resolve_api_key`). The scribe's model: the settings'
    ``scribe_provider`` when one is configured, else the provider's own ``scribe_model`` when set, else None.
    Raises KeyError for an unknown provider name, ValueError for an override the provider model refuses.
    """
    from pydantic import ValidationError

    from ..llm.providers import ProviderSettings, build_model

    name = provider if provider is not None else settings.active_provider
    if name is None:
        return ChatModels(main=None, why="model.none.why")
    prov = provider_settings(settings, name)
    if base_url or model:
        try:
            prov = ProviderSettings.model_validate({**prov.model_dump(), **({"base_url": base_url} if base_url else {}),
                                                    **({"model": model} if model else {})})
        except ValidationError as e:
            raise ValueError("；".join(str(x.get("ctx", {}).get("error", x["msg"])) for x in e.errors())) from None
    main = build_model(prov)
    scribe = None
    sp = settings.provider(settings.scribe_provider) if settings.scribe_provider else None
    if sp is not None and sp.name != prov.name:
        scribe = build_model(sp, scribe=True)
    elif prov.scribe_model:
        scribe = build_model(prov, scribe=True)
    return ChatModels(main=main, scribe=scribe, provider=prov)


def persona_for_new_chat(settings: Optional["AppSettings"]) -> Optional["Persona"]:
    """The persona a new chat starts with: the library's default persona, else the settings' 我的角色 (name and
    description), else None (the card's suggestion, or the language's default user name)."""
    from ..cards.personas import Persona, PersonaStore, load_personas

    try:
        store = load_personas()
    except OSError:
        store = PersonaStore()
    if store.default_persona is not None:
        return store.default_persona
    name = (getattr(settings, "persona_name", "") or "").strip() if settings is not None else ""
    if name:
        return Persona(name=name, description=getattr(settings, "persona_description", "") or "")
    return None


@dataclass
class NewChat:
    """How to create a chat when the folder has none: the mode (``roleplay`` / ``agent``), the preset (None: the
    settings' preset for a new chat is *not* looked up here — the caller chose), the persona (None: :func:`persona_for_new_chat`),
    ``demo`` (the recorded demo: no persona, the card book's own world-info settings, as the golden runs have it)
    and anything else the session header should keep."""

    mode: str = "roleplay"
    persona: Optional["Persona"] = None
    demo: bool = False
    header: dict[str, Any] = field(default_factory=dict)


def build_chat(directory: Path, card: "Card", settings: Optional["AppSettings"], model: "ChatModel",
               scribe: Optional["ChatModel"] = None, *, preset: Optional["Preset"] = None,
               new: Optional[NewChat] = None) -> "Chat":
    """Open the chat in ``directory`` — or create it there (``new``; default :class:`NewChat`) when it has no session
    yet — and give it what ``settings`` say: the app's world-info settings (the chat's own overrides stay on top;
    a demo chat keeps its card book's own), the compaction share and the active connection profile's sampling.
    ``settings`` None: the engine's defaults (tests, a chat made before any settings exist). ``preset``: the
    preset to use (on open: instead of the one the header names). Raises SessionError / OSError from the session,
    CardError from the card.
    """
    from .facade import Chat
    from .folder import chat_info

    directory = Path(directory)
    exists = (directory / "session.jsonl").exists()
    demo = chat_info(directory).demo if exists else bool(new is not None and new.demo)
    world_info = None if demo or settings is None else settings.world_info
    if exists:
        chat = Chat.open(directory, card, model, scribe, preset=preset, world_info=world_info)
    else:
        new = new or NewChat()
        persona = None if new.demo else (new.persona or persona_for_new_chat(settings))
        header = dict(new.header)
        if new.demo:
            header["demo"] = True
        chat = Chat.create(directory, card, model, mode=new.mode, scribe_model=scribe, preset=preset,
                           persona_obj=persona, world_info=world_info, **header)
    if settings is not None:
        chat.compaction_share = settings.compaction_share
        chat.profile_sampling = settings.profile_sampling()
    return chat


__all__ = ["ChatModels", "NewChat", "build_chat", "chat_models", "persona_for_new_chat", "provider_settings"]
