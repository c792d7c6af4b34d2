"""Character cards. This module reads JSON cards (V1 flat, V2 ``chara_card_v2``, V3 ``chara_card_v3``) with
``data.*`` first and root fields as fallback, as SillyTavern does. PNG/CHARX import, export and the full
world-info mapping come with the card-import issue; :class:`Card` keeps every unknown key so nothing is lost.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, Field

from ..lorebook import Lorebook

_TEXT_FIELDS = (
    "name", "description", "personality", "scenario", "first_mes", "mes_example", "creator_notes",
    "system_prompt", "post_history_instructions", "creator", "character_version",
)


class CardError(Exception):
    """A card file cannot be read; ``message`` says which file and why (for the UI and CLI)."""


class Card(BaseModel):
    """A character card, normalised. ``raw`` is the file's JSON as read (unknown keys kept)."""

    name: str = ""
    description: str = ""
    personality: str = ""
    scenario: str = ""
    first_mes: str = ""
    mes_example: str = ""
    creator_notes: str = ""
    system_prompt: str = ""
    post_history_instructions: str = ""
    creator: str = ""
    character_version: str = ""
    alternate_greetings: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    extensions: dict[str, Any] = Field(default_factory=dict)
    character_book: Optional[dict[str, Any]] = None
    spec: str = "v1"
    path: str = ""
    raw: dict[str, Any] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)

    @property
    def lorebook(self) -> Lorebook:
        """The card's embedded book (empty when the card has none)."""
        return Lorebook.from_card_book(self.character_book, name=self.name)

    @property
    def persona_name(self) -> str:
        """Persona name suggested by the card (``extensions.liyuan.persona.name``), else ""."""
        p = (self.extensions.get("liyuan") or {}).get("persona") or {}
        return str(p.get("name") or "")

    @property
    def language(self) -> str:
        """Prose language the card asks for (``extensions.liyuan.language``), default "zh"."""
        return str((self.extensions.get("liyuan") or {}).get("language") or "zh")


def card_from_json(obj: Any, path: str = "") -> Card:
    """Normalise a parsed JSON card. Raises :class:`CardError` when ``obj`` is not a card object."""
    if not isinstance(obj, dict):
        raise CardError(f"{path or '角色卡'}：不是 JSON 对象，不是角色卡")
    spec = str(obj.get("spec") or "")
    card_keys = ("name", "description", "first_mes", "personality", "scenario", "char_name", "char_persona", "data")
    if not any(k in obj for k in card_keys):
        raise CardError(f"{Path(path).name if path else '角色卡'}：这个 JSON 里没有角色卡的字段（name、description、first_mes…），不像角色卡")
    data = obj.get("data") if isinstance(obj.get("data"), dict) and spec.startswith("chara_card") else None
    src: dict[str, Any] = data if data is not None else obj
    fields: dict[str, Any] = {}
    for key in _TEXT_FIELDS:
        v = src.get(key, obj.get(key))
        fields[key] = v if isinstance(v, str) else ("" if v is None else str(v))
    warnings: list[str] = []
    if not fields["name"].strip():
        fields["name"] = Path(path).stem if path else "未命名"
        warnings.append(f"卡里没有名字，已用文件名「{fields['name']}」")
    book = src.get("character_book")
    if book is not None and not isinstance(book, dict):
        warnings.append(f"character_book 不是对象（{type(book).__name__}），世界书已忽略")
    elif isinstance(book, dict) and book.get("entries") is not None and not isinstance(book.get("entries"), (list, dict)):
        warnings.append("character_book.entries 不是数组，世界书已忽略")
        book = None
    ext = src.get("extensions")
    return Card(
        **fields,
        alternate_greetings=[str(x) for x in (src.get("alternate_greetings") or []) if isinstance(x, str)],
        tags=[str(x) for x in (src.get("tags") or []) if isinstance(x, (str, int))],
        extensions=ext if isinstance(ext, dict) else {},
        character_book=book if isinstance(book, dict) else None,
        spec={"chara_card_v2": "v2", "chara_card_v3": "v3"}.get(spec, "v1"),
        path=path,
        raw=obj,
        warnings=warnings,
    )


def load_card(path: str | Path) -> Card:
    """Read a JSON card file. Raises :class:`CardError` with the file name for unreadable or non-card files."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise CardError(f"无法读取角色卡 {p}：{e.strerror or e}") from e
    if raw[:8] == b"\x89PNG\r\n\x1a\n":
        raise CardError(f"{p.name}：PNG 角色卡的导入在下一版提供；请先用 JSON 卡")
    try:
        obj = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CardError(f"{p.name}：不是有效的 JSON 角色卡（{e}）") from e
    return card_from_json(obj, str(p))
