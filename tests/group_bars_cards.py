"""Three group members whose cards each carry a distinct status bar (a display regex turning MVU's
``<StatusPlaceHolderImpl/>`` into that card's HTML bar, and one rewriting the reply's own text) and their own MVU
``stat_data`` ([InitVar]): shared by tests/test_group_bars.py and tests/ui/test_group_bars_window.py."""

from __future__ import annotations

import json
from pathlib import Path

from liyuan_desktop.core.cards.library import card_folder, import_card
from liyuan_desktop.core.cards.meta import set_card_scripts_allowed
from liyuan_desktop.core.group import Group, save_group
from liyuan_desktop.core.llm.replay import ReplayModel

SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
#: member → (bar colour, initial stat_data)
BARS = {"Aster": ("#c0392b", {"hp": 10, "arrows": 20}),
        "Birch": ("#27ae60", {"hp": 7, "herbs": 3}),
        "Cedar": ("#2e86c1", {"hp": 12, "coins": 40})}


def bar_html(name: str) -> str:
    """The status-bar HTML the card of ``name`` renders: a fenced html document (a status-bar frame) holding one
    bar in the member's colour."""
    colour, _ = BARS[name]
    return ("```html\n<html><body style=\"margin:0\"><div class=\"bar\" id=\"bar-" + name + "\" style=\"background:"
            + colour + ";color:#fff;height:48px;padding:6px\">" + name + "'s bar · {{char}} · HP {{get_message_variable::stat_data.hp}}"
            "</div></body></html>\n```")


def card_json(name: str, hp_macro: bool = False) -> dict:
    """A V2 card for ``name``: its own [InitVar] stat_data, a status bar and a text rewrite as display scripts;
    ``hp_macro``: its description says the member's HP through TavernHelper's message-variable macro."""
    _, stat = BARS[name]
    scripts = [{"id": f"bar-{name}", "scriptName": f"{name} status bar", "findRegex": "/<StatusPlaceHolderImpl\\/>/g",
                "replaceString": bar_html(name), "placement": [2], "disabled": False, "markdownOnly": True},
               {"id": f"mark-{name}", "scriptName": f"{name} mark", "findRegex": "/^reply (\\d+)/gm",
                "replaceString": f"[{name} says] reply $1", "placement": [2], "disabled": False,
                "markdownOnly": True}]
    book = {"name": f"{name} vars", "entries": [
        {"id": 0, "comment": "[InitVar]", "keys": [], "enabled": False, "insertion_order": 100, "extensions": {},
         "content": json.dumps(stat)}]}
    return {"spec": "chara_card_v2", "spec_version": "2.0",
            "data": {"name": name, "first_mes": f"{name} waves.",
                     "description": f"{name} is a member of the party."
                     + (" HP now: {{get_message_variable::stat_data.hp}}." if hp_macro else ""),
                     "personality": "", "character_book": book, "extensions": {"regex_scripts": scripts}}}


def make_group(tmp: Path, name: str = "Bars", hp_macro: bool = False, **kw: object) -> Group:
    """Import the three cards (scripts allowed; ``hp_macro``: :func:`card_json`) and save a list-order group."""
    tmp.mkdir(parents=True, exist_ok=True)
    members = []
    for who in BARS:
        p = tmp / f"{who}.json"
        p.write_text(json.dumps(card_json(who, hp_macro)), "utf-8")
        members.append(import_card(p, replace=True).name)
        set_card_scripts_allowed(card_folder(members[-1]), True)
    group = Group(name=name, members=members, strategy="list", **kw)  # type: ignore[arg-type]
    save_group(group)
    return group


def w(text: str) -> dict:
    """The actor writing ``text`` as the draft."""
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]}


def replay(n: int, scribe: list[str] | None = None, texts: dict[int, str] | None = None) -> ReplayModel:
    """``n`` beats that write 「reply i」 (or ``texts[i]``, i from 1) and seal; the scribe answers ``scribe`` (else no
    change)."""
    actor: list[dict] = []
    for i in range(1, n + 1):
        actor += [w((texts or {}).get(i, f"reply {i}")), SEAL]
    return ReplayModel(actor=actor, scribe=scribe or ['{"patch": {}, "mvu_patch": {}}'] * n)
