"""One way to make a :class:`Chat` from the app's settings (issue 25): the window and every CLI command call these.

Before this module the window and ``liyuan chat`` each turned settings into a chat, differently: the window applied
the compaction share, the connection profile's sampling, the separate scribe provider and the library's default
persona; the CLI applied none of them, so the same card, settings and words gave different first prompts.

- :func:`provider_settings` — which provider a name means (the configured one, else the built-in preset).
- :func:`chat_models` — the story model and the scribe's model the settings name (plus why there is none).
- :func:`persona_for_new_chat` — the persona a new chat starts with.
- :func:`build_chat` — open the chat in a folder (or create it) with everything the settings say.
- :func:`create_novel` — a new novel without a character card (issue 28): its own small card in the library (the
  book's title, author, language and cast) and one agent chat, the manuscript, made through :func:`build_chat`.

Nothing here touches the disk beyond what :meth:`Chat.open` / :meth:`Chat.create` write.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Optional

from pydantic import Field, field_validator

from ..deferred import DeferredModel
from ..messages import joined_semi, message

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
    mine = message("provider.configured", names=", ".join(names)) if names else ""
    raise KeyError(message("provider.unknown", name=repr(name), mine=mine, presets=", ".join(PRESETS)))


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
            raise ValueError(joined_semi([x.get("ctx", {}).get("error", x["msg"]) for x in e.errors()])) from None
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


# -- a new novel (issue 28) -----------------------------------------------------------------------------------

#: Where a novel's card keeps the book (``extensions.liyuan.novel``).
NOVEL_KEY = "novel"
#: The manuscript chat's folder name under the novel's card, per language.
MANUSCRIPT = {"zh": "书稿", "en": "Manuscript"}
#: The outline a new novel starts with, per language (ids are added when it is written).
STARTER_OUTLINE = {"zh": "# 第一卷\n\n## 第一章\n", "en": "# Volume One\n\n## Chapter 1\n"}
#: Bounds of what a novel's card keeps.
NOVEL_TITLE_MAX = 80
CAST_MAX = 64
CAST_DESCRIPTION_MAX = 4000


class NovelSpec(DeferredModel):
    """A new novel: ``title`` (required, one line, cut to 80 characters), ``author`` (""; whitespace folded),
    ``language`` (``zh`` or ``en``: the prose language the agent writes in, kept as the card's
    ``extensions.liyuan.language``), ``cast`` (names: a library card's name — its description becomes the person's
    codex description — or just a person's name; each becomes a written codex entry of kind character; at most 64).
    Raises pydantic ValidationError (a ValueError) for an empty or multi-line title or another language."""

    title: str
    author: str = ""
    language: Literal["zh", "en"] = "zh"
    cast: list[str] = Field(default_factory=list)

    @field_validator("title")
    @classmethod
    def _title(cls, v: str) -> str:
        t = v.strip()
        if not t or "\n" in t or "\r" in t:
            raise ValueError("title must be one non-empty line")
        return t[:NOVEL_TITLE_MAX]

    @field_validator("author")
    @classmethod
    def _author(cls, v: str) -> str:
        return " ".join(v.split())[:NOVEL_TITLE_MAX]

    @field_validator("cast")
    @classmethod
    def _cast(cls, v: list[str]) -> list[str]:
        return [c.strip() for c in v if c and c.strip()][:CAST_MAX]


def novel_info(card: "Card") -> Optional[dict[str, Any]]:
    """The book a novel's card describes (``{"title", "author", "language", "cast"}``), or None for a character
    card. Export and the window read the title and author here."""
    lj = card.extensions.get("liyuan") if isinstance(card.extensions, dict) else None
    info = lj.get(NOVEL_KEY) if isinstance(lj, dict) else None
    return dict(info) if isinstance(info, dict) else None


def novel_first_steps() -> Any:
    """What to do first in an empty novel (a :class:`core.messages.Msg`, key ``novel.first_steps``; the front ends
    render it in their language)."""
    from ..messages import message

    return message("novel.first_steps")


def _cast_records(cast: list[str]) -> list[Any]:
    from ..cards.library import list_cards
    from ..story.codex import CodexRecord

    cards = {c.name: c for c in list_cards()}
    out: list[Any] = []
    for name in cast:
        desc, tags = "", []
        ref = cards.get(name)
        if ref is not None:
            try:
                card = ref.load()
                desc = (card.description or card.personality or "")[:CAST_DESCRIPTION_MAX]
                tags = [f"card:{ref.name}"]
                name = card.name.strip() or name
            except Exception:  # noqa: BLE001 - a card that does not load is just a name (card data is hostile)
                pass
        if all(r.name != name for r in out):
            out.append(CodexRecord(name=name[:100], kind="character", description=desc, tags=tags))
    return out


def create_novel(spec: NovelSpec, settings: Optional["AppSettings"], model: "ChatModel",
                 scribe: Optional["ChatModel"] = None) -> "Chat":
    """Create a novel without a character card and return its manuscript chat (agent mode).

    The library keeps every chat under a card, and agent chats need one (the chat header, the agent prompt's card
    path, the window's tree, ``卡名/对话名`` on the command line), so a novel gets its *own* small card:
    ``cards/<title>/card.json`` (a V2 card named after the book — 「名字-2」 when the name is taken — whose
    ``creator`` is the author and whose ``extensions.liyuan`` holds the language and the book, :func:`novel_info`),
    and one chat ``对话/书稿`` (``Manuscript`` in English) made by :func:`build_chat` in agent mode, with a starter
    outline (one volume, one chapter) and the cast as written codex entries (``名录.json``). Existing agent chats on
    character cards are untouched. Raises ValueError (bad spec), OSError, SessionError."""
    import json

    from ..cards import load_card
    from ..cards.library import cards_root, numbered_name
    from ..fsutil import atomic_write_text
    from ..paths import chats_dir, safe_name
    from ..story.codex import CodexBook, save_codex
    from ..story.outline import outline_path
    from ..story.outline_tree import ensure_ids

    root = cards_root()
    folder = root / numbered_name(safe_name(spec.title), lambda n: (root / n).exists())
    book = {"title": spec.title, "author": spec.author, "language": spec.language, "cast": spec.cast}
    card_json = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {
        "name": spec.title, "description": "", "personality": "", "scenario": "", "first_mes": "",
        "mes_example": "", "creator_notes": "", "system_prompt": "", "post_history_instructions": "",
        "alternate_greetings": [], "tags": ["novel"], "creator": spec.author, "character_version": "",
        "extensions": {"liyuan": {"language": spec.language, NOVEL_KEY: book}}}}
    folder.mkdir(parents=True)
    try:
        atomic_write_text(folder / "card.json", json.dumps(card_json, ensure_ascii=False, indent=1))
        card = load_card(folder / "card.json")
        directory = chats_dir(folder) / MANUSCRIPT[spec.language]
        chat = build_chat(directory, card, settings, model, scribe, new=NewChat(mode="agent"))
    except BaseException:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)  # the folder was made just now, empty of anything the user had
        raise
    atomic_write_text(outline_path(directory, spec.language), ensure_ids(STARTER_OUTLINE[spec.language]))
    records = _cast_records(spec.cast)
    if records:
        save_codex(directory, CodexBook(entries=records))
    return chat


__all__ = ["ChatModels", "NewChat", "NovelSpec", "build_chat", "chat_models", "create_novel", "novel_first_steps",
           "novel_info", "persona_for_new_chat", "provider_settings"]
