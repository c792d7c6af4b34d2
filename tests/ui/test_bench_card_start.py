"""bench/ui_start.py --card (issue 15): ``liyuan --bench-start FILE`` with ``LIYUAN_BENCH_CARD`` imports that card
(its regex scripts allowed), fills a new chat with ``LIYUAN_BENCH_MESSAGES`` replies carrying its status bar, opens it
and writes the stamp file once every bar's frame said hello, with the card's name and the number of frames built
(``liyuan_desktop/ui/window/bench_hooks.py``). The app is started as the bench starts it (offscreen, fresh data folder);
the card is a tiny one built here (no ../shared needed)."""

from __future__ import annotations

import json
from pathlib import Path

from uihelpers import bench_started_app

from liyuan_desktop.ui.window.bench_hooks import PLACEHOLDER, st_chat_lines

BAR = ("```html\n<!DOCTYPE html><html><body><div id=\"hp\">…</div><script>\n"
       "var d = (getChatMessages(getCurrentMessageId())[0] || {}).data || {};\n"
       "document.getElementById('hp').textContent = 'HP ' + ((d.stat_data || {}).hp);\n"
       "</script></body></html>\n```")


def tiny_card(path: Path) -> Path:
    """A V2 card whose display regex turns MVU's placeholder into a small status bar, with an [InitVar] entry."""
    card = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {
        "name": "小栏", "description": "测试用", "personality": "", "scenario": "", "mes_example": "",
        "first_mes": "你好。\n\n" + PLACEHOLDER,
        "character_book": {"entries": [{"keys": [], "content": "{\"hp\": 7}", "comment": "[InitVar]",
                                        "enabled": False, "constant": False, "insertion_order": 0, "id": 0}]},
        "extensions": {"regex_scripts": [{"id": "bar", "scriptName": "状态栏", "findRegex": PLACEHOLDER,
                                          "replaceString": BAR, "placement": [2], "markdownOnly": True,
                                          "promptOnly": False, "disabled": False, "trimStrings": []}]}}}
    path.write_text(json.dumps(card, ensure_ascii=False), encoding="utf-8")
    return path


def test_st_chat_lines_put_the_bar_and_the_variables_on_every_reply():
    class Card:
        name, first_mes = "小栏", "你好。"

    lines = st_chat_lines(Card(), 2, {"hp": 7})
    assert lines[0]["character_name"] == "小栏" and len(lines) == 1 + 1 + 2 * 2
    replies = [m for m in lines[1:] if not m["is_user"]]
    assert len(replies) == 3 and all(PLACEHOLDER in m["mes"] for m in replies)
    assert all(m["variables"] == [{"stat_data": {"hp": 7}}] for m in replies)


def test_bench_start_with_a_card_stamps_when_every_bar_said_hello(tmp_path):
    with bench_started_app(tmp_path, "the card chat", LIYUAN_BENCH_CARD=str(tiny_card(tmp_path / "tiny.json")),
                           LIYUAN_BENCH_MESSAGES="3") as (_proc, s):
        pass
    assert s["card"] == "小栏" and s["messages"] == 3
    assert s["frames"] == 4 and s["failed"] == 0  # the opening's bar and the three replies'
    assert s["paint"] <= s["interactive"]
    chats = list((tmp_path / "home").rglob("session.jsonl"))
    assert len(chats) == 1 and "bench" in str(chats[0])  # the card's chat, not the demo
