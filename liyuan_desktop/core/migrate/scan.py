"""``scan(path) -> MigrationPlan``: what a SillyTavern data folder holds and what importing it would do here.

Nothing is written to the data folder by a scan (a zip is extracted into a temp folder). Every file is checked the
way the import will read it (cards with :func:`core.cards.load_card`, books with :meth:`Lorebook.from_any`, presets
with :func:`load_preset`, personas with :func:`import_st_personas`), so damaged ones show as ``error`` items in the
plan. ``secrets.json`` is never opened: only its presence is noted (the directory listing).

SillyTavern facts used (its ``src/endpoints/`` and ``public/scripts/world-info.js``): a card's chats are in
``chats/<card file name without extension>/``; a card's primary world book is ``data.extensions.world`` (a
``worlds/`` file stem), its additional books are ``settings.json`` ``world_info.charLore`` =
``[{name: <card file stem>, extraBooks: [...]}]``; the globally active books are ``world_info.globalSelect``; a
chat's own book is ``chat_metadata.world_info`` in the chat file's first line; a card whose regex scripts the user
allowed is in ``extension_settings.character_allowed_regex`` (avatar file names); the active chat-completion preset is
``oai_settings.preset_settings_openai``; personas are ``power_user.personas`` (avatar file → name) with
``power_user.persona_descriptions`` and ``power_user.default_persona``; a chat locked to a persona has
``chat_metadata.persona``.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Optional

from ..cards import CardError, load_card
from ..cards._common import MAX_CARD_BYTES
from ..cards.library import cards_root, numbered_name
from ..cards.personas import Persona, PersonaError, import_st_personas, load_personas
from ..cards.st_chat import MAX_CHAT_BYTES, StChatError, read_header, st_authors_note
from ..group.model import GroupError, group_dir, load_group
from ..group.st import read_st_group
from ..jsonfile import object_at, read_json_file
from ..lore.books import global_books_dir, library_books_dir
from ..lore.lorebook import Lorebook
from ..lore.settings import from_st_settings
from ..messages import message
from ..paths import chats_dir, home, home_folder, safe_name
from ..prompt.presets.model import SENSITIVE_KEYS, PresetError
from ..prompt.presets.store import load_preset, presets_dir
from ..settings import load_settings
from .index import MigrationIndex
from .model import Action, MigrationPlan, NotImported, PlanItem, error_text
from .source import MigrationError, extract_zip, find_user_dir

CARD_SUFFIXES = (".png", ".json", ".charx", ".apng")
#: the largest file of each kind that is read at all (bytes; checked on disk first, so a huge or sparse file costs
#: nothing): far above real data — a 50,000-entry world book is ~20 MB, a preset or settings.json well under 1 MB
MAX_BYTES = {"card": MAX_CARD_BYTES, "chat": MAX_CHAT_BYTES, "book": 256 * 1024 ** 2, "preset": 32 * 1024 ** 2,
             "settings": 64 * 1024 ** 2, "avatar": 32 * 1024 ** 2}

#: the folder persona avatars are copied to
AVATARS_FOLDER = "人设头像"  # the Chinese layout's name; the avatars go to home_folder("persona_avatars")

#: what is found but never imported: (folder or file, glob, label key, why key) — catalog keys (core/messages.py)
NOT_IMPORTED = (
    ("group chats", "*.jsonl", "migrate.ni.group_chats", "migrate.ni.group_chats.why"),
    ("QuickReplies", "*.json", "migrate.ni.quick_replies", "migrate.ni.quick_replies.why"),
    ("extensions", "*", "migrate.ni.extensions", "migrate.ni.extensions.why"),
    ("themes", "*.json", "migrate.ni.themes", "migrate.ni.themes.why"),
    ("TextGen Settings", "*.json", "migrate.ni.textgen", "migrate.ni.chat_only.why"),
    ("KoboldAI Settings", "*.json", "migrate.ni.kobold", "migrate.ni.chat_only.why"),
    ("NovelAI Settings", "*.json", "migrate.ni.novelai", "migrate.ni.chat_only.why"),
    ("instruct", "*.json", "migrate.ni.instruct", "migrate.ni.textgen_only.why"),
    ("context", "*.json", "migrate.ni.context", "migrate.ni.textgen_only.why"),
)


def sha256(path: Path) -> str:
    """Hex SHA-256 of a file's bytes (read in 1 MB chunks). Raises OSError."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


#: ``name`` when free, else 「name-2」, 「name-3」…: the library's one renaming rule (:func:`cards.library.numbered_name`,
#: which the card importer follows too)
numbered = numbered_name


def _rel(p: Path, root: Path) -> str:
    try:
        return p.relative_to(root).as_posix()
    except ValueError:
        return str(p)


def inside(p: Path, root: Path) -> bool:
    """Whether ``p``, with every symbolic link on its way resolved, is ``root`` or below it (``root`` resolved).
    A SillyTavern folder is read only where it lies: a link that leaves it is refused (:func:`refused_link`), as
    the zip path refuses link members (:mod:`.source`)."""
    try:
        real = p.resolve()
        base = root.resolve()
    except (OSError, RuntimeError):  # a link loop
        return False
    return real == base or base in real.parents


def refused_link(plan: MigrationPlan, p: Path, root: Path) -> bool:
    """True (and one line in ``plan.problems``) when ``p`` leads out of ``root`` through a symbolic link."""
    if inside(p, root):
        return False
    try:
        target = str(p.resolve())
    except (OSError, RuntimeError):
        target = "?"
    line = message("migrate.link_out", name=_rel(p, root), target=target)
    if line not in plan.problems:
        plan.problems.append(line)
    return True


def _files(d: Path, pattern: str, plan: Optional[MigrationPlan] = None, root: Optional[Path] = None) -> list[Path]:
    """The regular files matching ``pattern`` in ``d``, by name. With ``plan``/``root``: the folder itself and every
    file that leads out of ``root`` through a link are left out, each said once in ``plan.problems``."""
    if not d.is_dir():
        return []
    if plan is not None and root is not None and refused_link(plan, d, root):
        return []
    out = []
    for f in d.glob(pattern):
        if plan is not None and root is not None and f.is_symlink() and refused_link(plan, f, root):
            continue
        if f.is_file():
            out.append(f)
    return sorted(out, key=lambda f: f.name)


def authors_note_line(note: Any) -> str:
    """A chat's Author's Note (an ``AuthorsNote``) in one line for the report: ``AuthorsNote.summary`` (a catalog
    message, ``migrate.an.*``), e.g. 「作者注：对话中深度 4（system），每 1 条用户消息插入一次」."""
    line: str = note.summary()
    return line


def too_big(item: PlanItem, what: str) -> bool:
    """True (``item`` made an ``error`` naming its size and the limit) when its file is over ``MAX_BYTES`` of its
    kind; nothing is read."""
    limit = MAX_BYTES.get(item.kind)
    if limit is None or item.size <= limit:
        return False
    item.action = "error"
    item.reason = message("migrate.too_big", name=item.source, size=f"{item.size / 1024 ** 2:.1f}", what=what,
                          max=f"{limit / 1024 ** 2:.0f}")
    return True


def read_json(path: Path, max_bytes: int = MAX_BYTES["settings"]) -> Any:
    """A JSON file of the SillyTavern folder (UTF-8, BOM tolerated) through the one reader of users' JSON
    (``core.jsonfile.read_json_file``: size checked before reading, nesting depth bounded). Raises OSError /
    ValueError (``jsonfile.JsonFileError`` included)."""
    return read_json_file(path, max_bytes=max_bytes)


def preset_text(raw: dict[str, Any]) -> str:
    """The library file text of a preset as :func:`install_preset` writes it (sensitive keys dropped)."""
    clean = {k: v for k, v in raw.items() if k not in SENSITIVE_KEYS}
    return json.dumps(clean, ensure_ascii=False, indent=4)


def persona_key(p: Persona) -> str:
    """What makes two personas the same one, whatever their ids: every field but ``id`` as sorted JSON (a persona
    imported twice is recognised and not added again)."""
    d = p.model_dump(mode="json")
    d.pop("id", None)
    return json.dumps(d, sort_keys=True, ensure_ascii=False)


def api_of(st: dict[str, Any]) -> tuple[Optional[dict[str, str]], list[str]]:
    """The active API of a SillyTavern ``settings.json`` as ``{"source", "base_url", "model"}`` (None when it is not
    an OpenAI-compatible one Liyuan can call) and notes. Chat completion (``main_api`` "openai"): the source's
    ``<source>_model`` and its URL (``custom_url`` for custom, ``reverse_proxy`` when set); text completion
    (``textgenerationwebui``): the local server's URL + ``/v1`` (Ollama, llama.cpp, KoboldCpp, TabbyAPI, vLLM …
    all serve an OpenAI-compatible ``/v1``). Keys are never read (they are in ``secrets.json``)."""
    oai = object_at(st, "oai_settings")
    main = str(st.get("main_api") or ("openai" if oai else ""))
    if main == "openai":
        source = str(oai.get("chat_completion_source") or "openai")
        known = {"openai": "https://api.openai.com/v1", "openrouter": "https://openrouter.ai/api/v1",
                 "deepseek": "https://api.deepseek.com", "mistralai": "https://api.mistral.ai/v1",
                 "groq": "https://api.groq.com/openai/v1", "xai": "https://api.x.ai/v1"}
        if source == "custom":
            url, model = str(oai.get("custom_url") or ""), str(oai.get("custom_model") or "")
        elif source in known:
            url = str(oai.get("reverse_proxy") or "") or known[source]
            model = str(oai.get(f"{source}_model") or "")
        else:
            return None, [message("migrate.api_unsupported", source=source)]
        if url.lower().startswith(("http://", "https://")) and model:
            return {"source": source, "base_url": url.rstrip("/"), "model": model}, []
        return None, [message("migrate.api_incomplete", source=source)]
    if main == "textgenerationwebui":
        tg = object_at(st, "textgen_settings")
        kind = str(tg.get("type") or "ooba")
        urls = object_at(tg, "server_urls")
        url = str(urls.get(kind) or "")
        if url.lower().startswith(("http://", "https://")):
            base = url.rstrip("/")
            base = base if base.endswith("/v1") else base + "/v1"
            model = str(tg.get(f"{kind}_model") or tg.get("custom_model") or "local-model")
            return {"source": kind, "base_url": base, "model": model}, [
                message("migrate.api_textgen", kind=kind, base=base)]
        return None, [message("migrate.api_textgen_no_url", kind=kind)]
    if main:
        return None, [message("migrate.api_other", main=main)]
    return None, []


def scan(path: str | Path) -> MigrationPlan:
    """Find a SillyTavern data folder at ``path`` (folder or backup zip, :mod:`.source`) and plan its import into
    our data folder (module doc). Raises :class:`MigrationError` when ``path`` is missing, is no SillyTavern data
    or is a refused zip; damaged files inside are items with action ``error``."""
    src = Path(path).expanduser()
    if not src.exists():
        raise MigrationError(message("migrate.not_found", path=str(src)))
    temp: Optional[Path] = None
    problems: list[str] = []
    base = src
    if src.is_file():
        if not src.suffix.lower() == ".zip":
            raise MigrationError(message("migrate.pick_folder", name=src.name))
        temp, problems = extract_zip(src)
        base = temp
    root, layout, notes = find_user_dir(base)
    if root is None:
        if temp:
            import shutil

            shutil.rmtree(temp, ignore_errors=True)
        raise MigrationError(message("migrate.no_data", path=str(src)))
    plan = MigrationPlan(source=str(src), root=str(root), layout=layout, home=str(home()), problems=problems,
                         notes=notes, temp_dir=str(temp) if temp else None)
    try:
        index = MigrationIndex.load()
        st = _scan_settings(plan, root)
        _scan_books(plan, root, st, index)
        _scan_presets(plan, root, index)
        _scan_cards_and_chats(plan, root, st, index)
        _scan_personas(plan, root, st)
        _scan_groups(plan, root)
        _scan_not_imported(plan, root)
        _preview_settings(plan)
    except BaseException:
        plan.discard()  # the extracted zip is not left behind
        raise
    return plan


def _preview_settings(plan: MigrationPlan) -> None:
    """Would the settings change anything here? (``merge_settings`` on a copy): the settings item becomes "same"
    when not, and lists the changes it would make in ``detail["changes"]``."""
    from .merge import merge_settings

    for item in plan.of("settings"):
        if item.action == "error":
            continue
        changed, kept, _ = merge_settings(load_settings().model_copy(deep=True), plan)
        item.detail["changes"] = changed
        if kept:
            item.detail["kept"] = kept
        if not changed:
            item.action, item.reason = "same", message("migrate.settings_same")


def _scan_settings(plan: MigrationPlan, root: Path) -> dict[str, Any]:
    f = root / "settings.json"
    if not f.exists() or refused_link(plan, f, root):
        plan.notes.append(message("migrate.no_settings"))
        return {}
    item = PlanItem(kind="settings", source="settings.json", name="settings.json", target="settings.json",
                    size=f.stat().st_size)
    plan.items.append(item)
    if too_big(item, "settings.json"):
        return {}
    try:
        st = read_json(f)
        if not isinstance(st, dict):
            raise ValueError(message("migrate.top_not_object"))
    except (OSError, ValueError) as e:
        item.action, item.reason = "error", message("migrate.settings_unreadable", error=error_text(e))
        return {}
    s: dict[str, Any] = {}
    if isinstance(st.get("username"), str) and st["username"].strip():
        s["user_name"] = st["username"].strip()
    try:
        wi, wi_notes = from_st_settings(st)
        s["world_info"] = wi.model_dump()
        plan.notes.extend(n for n in wi_notes if getattr(n, "key", "") != "wiset.st_global_books")  # we do import the global books
    except ValueError:
        pass
    api, api_notes = api_of(st)
    if api:
        s["api"] = api
    plan.notes.extend(api_notes)
    oai = object_at(st, "oai_settings")
    active = oai.get("preset_settings_openai") or st.get("preset_settings_openai")
    if isinstance(active, str) and active:
        s["default_preset"] = active
    pu = object_at(st, "power_user")
    if pu.get("default_persona"):
        s["default_persona"] = str(pu["default_persona"])
    ext = object_at(st, "extension_settings")
    allowed = ext.get("character_allowed_regex")
    if isinstance(allowed, list):
        s["regex_allowed"] = [str(a) for a in allowed if isinstance(a, str)]
    if isinstance(ext.get("regex"), list) and ext["regex"]:
        plan.not_imported.append(NotImported(what=message("migrate.ni.regex"), count=len(ext["regex"]),
                                             why=message("migrate.ni.regex.why")))
    plan.settings = s
    item.detail = {k: v for k, v in s.items() if k not in ("world_info", "regex_allowed")}
    return st


def _world_info(st: dict[str, Any]) -> dict[str, Any]:
    """SillyTavern's world-info selection (``globalSelect``, ``charLore``): ``world_info_settings.world_info`` as
    1.12–1.13 save it (``public/scripts/world-info.js`` ``getWorldInfoSettings``), else a top-level ``world_info``
    (older files keep the world-info keys at the top level; SillyTavern reads ``world_info_settings ?? settings``)."""
    block = st.get("world_info_settings")
    for where in ((block,) if isinstance(block, dict) else ()) + (st,):
        wi = where.get("world_info")
        if isinstance(wi, dict):
            return wi
    return {}


def _scan_books(plan: MigrationPlan, root: Path, st: dict[str, Any], index: MigrationIndex) -> None:
    glob = {str(b) for b in (_world_info(st).get("globalSelect") or []) if isinstance(b, str)}
    claimed: dict[Path, set[str]] = {}
    for f in _files(root / "worlds", "*.json", plan, root):
        item = PlanItem(kind="book", source=_rel(f, root), name=f.stem, size=f.stat().st_size)
        plan.items.append(item)
        if too_big(item, message("migrate.limit.book")):
            continue
        try:
            data = read_json(f, MAX_BYTES["book"])
            if not isinstance(data, dict) or not isinstance(data.get("entries"), (dict, list)):
                raise ValueError(message("migrate.no_entries"))
            book = Lorebook.from_any(data, f.stem)
            item.detail["entries"] = len(book.entries)
        except json.JSONDecodeError as e:
            item.action, item.reason = "error", message("migrate.book_not_json", line=e.lineno, col=e.colno)
            continue
        except (OSError, ValueError) as e:
            item.action, item.reason = "error", message("migrate.book_bad", error=error_text(e))
            continue
        folder = global_books_dir() if f.stem in glob else library_books_dir()
        item.detail["global"] = f.stem in glob
        data_bytes = f.read_bytes()
        item.detail["sha256"] = hashlib.sha256(data_bytes).hexdigest()
        name = safe_name(f.stem, "世界书")
        taken = claimed.setdefault(folder, set())
        if index.exists(item.detail["sha256"]):
            item.action, item.target = "same", index.target(item.detail["sha256"]) or name
            continue
        here = _library_book(name) if name not in taken and index.brought("book", name) else None
        if here is not None:  # the book is here (on or off): the same, or SillyTavern's is a newer version
            taken.add(name)
            item.target, item.detail["replaces"] = name, str(here)
            if here.read_bytes() == data_bytes:
                item.action = "same"
            else:
                item.action, item.reason = "update", message("migrate.update.book")
            continue
        target = numbered(name, lambda n: n in taken or (folder / f"{n}.json").exists())
        taken.add(target)
        item.target = target
        if target != name:
            item.action, item.reason = "rename", message("migrate.rename.book")


def _library_book(name: str) -> Optional[Path]:
    """The library's book ``name`` — global (``<home>/世界书``) or switched off (``未启用``), the places
    ``chat.book_update.update_book_file`` replaces in — or None."""
    places = (global_books_dir() / f"{name}.json", library_books_dir() / f"{name}.json")
    return next((p for p in places if p.is_file()), None)


def _scan_presets(plan: MigrationPlan, root: Path, index: MigrationIndex) -> None:
    taken: set[str] = set()
    folder = presets_dir()
    for f in _files(root / "OpenAI Settings", "*.json", plan, root):
        item = PlanItem(kind="preset", source=_rel(f, root), name=f.stem, size=f.stat().st_size)
        plan.items.append(item)
        if too_big(item, message("migrate.limit.preset")):
            continue
        try:
            preset = load_preset(f)
        except PresetError as e:
            item.action, item.reason = "error", error_text(e)
            continue
        text = preset_text(preset.raw)
        item.detail["sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
        name = safe_name(f.stem, "preset")
        existing = folder / f"{name}.json"
        if existing.is_file() and existing.read_text("utf-8", errors="replace") == text or index.exists(item.detail["sha256"]):
            item.action, item.target = "same", index.target(item.detail["sha256"]) or name
            continue
        target = numbered(name, lambda n: n in taken or (folder / f"{n}.json").exists())
        taken.add(target)
        item.target = target
        if target != name:
            item.action, item.reason = "rename", message("migrate.rename.preset")


def _card_target(card_name: str, original: bytes, suffix: str, taken: set[str],
                 index: MigrationIndex) -> tuple[str, Action]:
    """Where the card goes and how: ``same`` (an identical card — same original file — is already there, under its
    name or a number an earlier import gave it), ``update`` (an earlier migration brought the library's card of its name
    and it differs: the newer one
    replaces it, ``chat.manage.replace_card``), else ``new`` at the first free name (名字, then 名字-2 … when this
    run already claimed 名字)."""
    root = cards_root()
    name = safe_name(card_name)
    dest, n = name, 2
    while (root / dest / "card.json").exists() or dest in taken:
        orig = root / dest / ("original" + suffix)
        if dest not in taken and orig.exists() and orig.read_bytes() == original:
            return dest, "same"
        dest = f"{name}-{n}"
        n += 1
    if name not in taken and (root / name / "card.json").exists() and index.brought("card", name):
        return name, "update"
    return dest, "new"


def _scan_cards_and_chats(plan: MigrationPlan, root: Path, st: dict[str, Any], index: MigrationIndex) -> None:
    lore = _world_info(st).get("charLore")
    char_lore = {str(e.get("name")): [str(b) for b in (e.get("extraBooks") or []) if isinstance(b, str)]
                 for e in (lore if isinstance(lore, list) else []) if isinstance(e, dict)}
    cards: dict[str, PlanItem] = {}
    taken: set[str] = set()
    for f in _files(root / "characters", "*", plan, root):
        if f.suffix.lower() not in CARD_SUFFIXES:
            continue
        item = PlanItem(kind="card", source=_rel(f, root), name=f.stem, size=f.stat().st_size, owner=f.stem)
        plan.items.append(item)
        if too_big(item, message("migrate.limit.card")):
            continue
        try:
            card = load_card(f)
        except CardError as e:
            item.action, item.reason = "error", error_text(e)
            continue
        item.name = card.name or f.stem
        world = card.extensions.get("world")
        # charLore names a card by its avatar file without the extension (SillyTavern's getCharaFilename)
        extra = char_lore.get(f.stem) or char_lore.get(f.name) or []
        item.links = list(dict.fromkeys(([world] if isinstance(world, str) and world else []) + extra))
        item.detail["embedded_book"] = bool(card.lorebook.entries)
        if f.name in (plan.settings.get("regex_allowed") or ()):  # SillyTavern asked once and the user allowed
            item.detail["regex_allowed"] = True
        target, how = _card_target(card.name, f.read_bytes(), f.suffix.lower(), taken, index)
        item.target = target
        if how == "same":
            item.action = "same"
        else:
            taken.add(target)
            if how == "update":
                item.action, item.reason = "update", message("migrate.update.card")
            elif target != safe_name(card.name):
                item.action, item.reason = "rename", message("migrate.rename.card")
        cards[f.stem] = item
    chats_root = root / "chats"
    if not chats_root.is_dir() or refused_link(plan, chats_root, root):
        return
    for d in sorted(p for p in chats_root.iterdir() if p.is_dir()):
        if refused_link(plan, d, root):
            continue
        owner = cards.get(d.name)
        claimed: set[str] = set()
        for f in _files(d, "*.jsonl", plan, root):
            item = PlanItem(kind="chat", source=_rel(f, root), name=f.stem, size=f.stat().st_size, owner=d.name)
            plan.items.append(item)
            if owner is None or owner.action == "error":
                item.action, item.reason = "skip", message("migrate.no_card", name=d.name)
                continue
            if too_big(item, message("migrate.limit.chat")):
                continue
            try:  # what the import will refuse, known now (the first line, the size; st_chat.read_header)
                header, _headerless, torn = read_header(f)
            except StChatError as e:
                item.action, item.reason = "error", error_text(e)
                continue
            if torn:
                item.reason = message("migrate.torn")
            note = st_authors_note(header)
            if note is not None:  # carried into the imported chat (st_chat.write_session)
                from ..prompt.authors_note import AuthorsNote

                item.detail["authors_note"] = authors_note_line(AuthorsNote.model_validate(note))
            meta = object_at(header, "chat_metadata")
            if isinstance(meta.get("world_info"), str) and meta["world_info"]:
                item.links = [meta["world_info"]]
            if isinstance(meta.get("persona"), str) and meta["persona"]:
                item.detail["persona"] = meta["persona"]
            try:
                digest = sha256(f)
            except OSError as e:
                item.action, item.reason = "error", message("migrate.unreadable", error=e.strerror or str(e))
                continue
            item.detail["sha256"] = digest
            if index.exists(digest):
                item.action, item.target = "same", index.target(digest) or f.stem
                continue
            base = chats_dir(cards_root() / owner.target)
            name = safe_name(f.stem)
            target = numbered(name, lambda n: n in claimed or (owner.action in ("same", "update") and (base / n).exists()))
            claimed.add(target)
            item.target = target
            if target != name:
                item.action, item.reason = "rename", message("migrate.rename.chat")


def _scan_personas(plan: MigrationPlan, root: Path, st: dict[str, Any]) -> None:
    if not st:
        return
    try:
        personas, default_id, warnings = import_st_personas(st)
    except PersonaError:
        return
    plan.notes.extend(w for w in warnings)
    store = load_personas()
    have = {persona_key(p) for p in store.personas}
    ids = {p.id for p in store.personas}
    avatars = root / "User Avatars"
    dest = home_folder("persona_avatars")  # 人设头像/ or persona-avatars/ (core.paths)
    for p in personas:
        item = PlanItem(kind="persona", source=f"settings.json#{p.id}", name=p.name, owner=p.id)
        item.detail["persona"] = p.model_dump(mode="json")
        plan.items.append(item)
        if persona_key(p) in have:
            item.action, item.target = "same", p.name
        else:
            new_id = numbered(p.id, lambda n: n in ids)
            ids.add(new_id)
            item.target = p.name
            item.detail["id"] = new_id
            if new_id != p.id:
                item.action, item.reason = "rename", message("migrate.rename.persona", id=new_id)
        a = avatars / p.avatar if p.avatar else None
        if a is not None and a.is_file() and not refused_link(plan, a, root):
            av = PlanItem(kind="avatar", source=_rel(a, root), name=a.name, owner=p.id, size=a.stat().st_size)
            plan.items.append(av)
            if too_big(av, message("migrate.limit.avatar")):
                continue
            old = dest / a.name
            if old.is_file() and old.read_bytes() == a.read_bytes():
                av.action, av.target = "same", a.name
            else:
                av.target = numbered(a.stem, lambda n: (dest / f"{n}{a.suffix}").exists()) + a.suffix
                if av.target != a.name:
                    av.action, av.reason = "rename", message("migrate.rename.avatar")
    if default_id:
        plan.settings["default_persona"] = default_id


def _scan_groups(plan: MigrationPlan, root: Path) -> None:
    """One ``group`` item per ``groups/*.json`` (issue 31): its name, the chats it lists (``detail["chats"]``,
    imported with it from ``group chats/``); a name taken here is numbered; a file that is not a group is an
    ``error`` item."""
    taken: set[str] = set()
    for f in _files(root / "groups", "*.json", plan, root):
        item = PlanItem(kind="group", source=_rel(f, root), name=f.stem, size=f.stat().st_size)
        plan.items.append(item)
        try:
            data = read_st_group(f)
        except (OSError, ValueError) as e:
            item.action, item.reason = "error", error_text(e)
            continue
        item.name = str(data.get("name") or f.stem)
        item.detail["chats"] = [c for c in dict.fromkeys([*(data.get("chats") or []), data.get("chat_id")])
                                if isinstance(c, str) and c and (root / "group chats" / f"{c}.jsonl").is_file()]
        if _same_group(item.name, data):
            item.action, item.target = "same", item.name
            continue
        item.target = numbered_name(item.name, lambda n: n in taken or (group_dir(n) / "group.json").is_file())
        taken.add(item.target)
        if item.target != item.name:
            item.action, item.reason = "rename", message("migrate.rename.group")


def _same_group(name: str, data: dict[str, Any]) -> bool:
    """True when the library's group ``name`` was imported from this very SillyTavern group object."""
    try:
        here = load_group(name)
    except GroupError:
        return False
    return {k: v for k, v in here.st.items() if k != "liyuan_avatars"} == data


def _scan_not_imported(plan: MigrationPlan, root: Path) -> None:
    grouped = {f"{c}.jsonl" for i in plan.of("group") for c in i.detail.get("chats", [])}
    for folder, pattern, label, why in NOT_IMPORTED:
        d = root / folder
        if not d.is_dir():
            continue
        n = len([p for p in d.glob(pattern) if not p.name.startswith(".") and p.name not in grouped])
        if n:
            plan.not_imported.append(NotImported(what=message(label), count=n, why=message(why)))
    try:
        names = set(os.listdir(root))
    except OSError:
        names = set()
    if "secrets.json" in names:  # listed, never opened
        plan.not_imported.append(NotImported(what=message("migrate.ni.secrets"), count=1,
                                             why=message("migrate.ni.secrets.why")))
