"""A card in the shape of the real one from issue 13 §4 (a display regex ``/([\\s\\S]*)<\\/(think|planning)>/g`` that
drops the model's thinking; QuickJS backtracks over the rest of a long reply, about 0.5 s per message) and a chat
of such replies built directly in the session file (no model). Used by tests/test_regex_offthread.py,
tests/ui/test_regex_offthread_window.py and bench/regex_display.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from liyuan_desktop.core.cards import card_from_json
from liyuan_desktop.core.cards.meta import set_card_scripts_allowed
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel

THINK_SCRIPT = {"scriptName": "去掉思考", "findRegex": "/([\\s\\S]*)<\\/(think|planning)>/g", "replaceString": "",
                "placement": [2], "markdownOnly": True, "promptOnly": False, "disabled": False}
#: catastrophic on a run of "a" followed by "!" — always past the time limit
SLOW_SCRIPT = {"scriptName": "卡死的正则", "findRegex": "/(a+)+$/g", "replaceString": "X", "placement": [2],
               "markdownOnly": True, "promptOnly": False, "disabled": False}


def heavy_reply(i: int, chars: int) -> str:
    """A reply with a thinking block and ``chars`` characters of story after it (lines of 20 characters)."""
    line = f"第{i}拍，雨落在青石板上，灯影摇晃。"[:19]
    body = "\n".join(line for _ in range(max(1, chars // 20)))
    return f"<think>想一想第{i}拍该怎么写。</think>\n{body}"


def make_card(root: Path, scripts: list[dict], allowed: bool = True):
    """A card folder under ``root`` with these display scripts (allowed unless ``allowed`` is False)."""
    d = root / "card"
    d.mkdir(parents=True, exist_ok=True)
    raw = {"spec": "chara_card_v3", "spec_version": "3.0",
           "data": {"name": "雨夜", "first_mes": "雨夜。", "description": "d", "extensions": {"regex_scripts": scripts}}}
    (d / "card.json").write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    set_card_scripts_allowed(d, allowed)
    return card_from_json(raw, str(d / "card.json")), d


def make_chat(root: Path, card, beats: int, chars: int = 7000, reply: Optional[str] = None) -> Path:
    """A chat folder with ``beats`` user/reply pairs (replies from :func:`heavy_reply`, or ``reply``)."""
    d = root / "chat"
    chat = Chat.create(d, card, ReplayModel(actor=[]))
    for i in range(1, beats + 1):
        chat.tree.append("user", text=f"第{i}句话。")
        chat.tree.append("assistant", text=reply if reply is not None else heavy_reply(i, chars))
    chat.tree.commit()
    return d
