"""Issue 17 "Export in the window": the 导出 menu writes the chat as a SillyTavern .jsonl, an agent chat's story as
Markdown / EPUB / DOCX titled after the card, and the card as PNG / JSON that import again — off the UI thread."""

from __future__ import annotations

import json

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library, load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.dialogs import export_menu
from liyuan_desktop.ui.window.main_window import MainWindow

SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}


def w(text: str) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]}


async def test_export_menu_writes_chat_story_and_card(qtbot, tmp_path, monkeypatch):
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "导出")
    chat = Chat.create(d, card.load(), ReplayModel(actor=[w("雨声。"), SEAL], scribe=['{"patch": {}}']))
    await chat.send("你好")
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    menu = win.export_menu
    menu.aboutToShow.emit()
    texts = [a.text() for a in menu.actions() if a.text()]
    assert texts[0].startswith("对话为 SillyTavern") and texts[-1] == "角色卡为 JSON…"
    story = [a for a in menu.actions() if a.text().startswith("故事为")]
    assert len(story) == 3 and not any(a.isEnabled() for a in story)  # a role-play chat has no chapters

    answers: list[str] = []
    monkeypatch.setattr(export_menu, "ask_path", lambda *_a: answers.pop(0))
    answers.append(str(tmp_path / "chat"))  # the suffix is added
    await win.exporter.export_chat()
    lines = [json.loads(x) for x in (tmp_path / "chat.jsonl").read_text("utf-8").splitlines()]
    assert lines[0]["character_name"] == "青梧" and lines[-1]["mes"] == "雨声。"

    answers.append(str(tmp_path / "card.png"))
    await win.exporter.export_card("png")
    png = (tmp_path / "card.png").read_bytes()
    assert png.startswith(b"\x89PNG") and load_card(tmp_path / "card.png").name == "青梧"
    answers.append(str(tmp_path / "card.json"))
    await win.exporter.export_card("json")
    assert load_card(tmp_path / "card.json").first_mes == card.load().first_mes

    # an agent chat's story, picked in the card list (not open)
    a = library.new_chat_dir(card)
    Chat.create(a, card.load(), ReplayModel(actor=[]), mode="agent")
    (a / "正文").mkdir(exist_ok=True)
    (a / "正文" / "001-开场.md").write_text("灯亮了。", "utf-8")
    answers.append(str(tmp_path / "book.md"))
    await win.exporter.export_story("md", library.ChatRef(name=a.name, dir=str(a), mode="agent"))
    text = (tmp_path / "book.md").read_text("utf-8")
    assert text.startswith("# 青梧\n") and "## 开场" in text and a.name not in text
    assert "book.md" in win.statusBar().currentMessage()
    assert win.exporter.export_story("md") is None  # the open chat is role-play: nothing asked
    assert answers == []


async def test_a_chat_exports_as_a_readable_transcript(qtbot, tmp_path, monkeypatch):
    """Issue 28: 导出 → 对话为可读的 Markdown / 网页 — names, the shown replies, status bars left out or as text."""
    from liyuan_desktop.core.chat.transcript_export import TranscriptOptions

    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "可读")
    chat = Chat.create(d, card.load(), ReplayModel(actor=[w("雨声渐密。"), SEAL], scribe=['{"patch": {}}']))
    await chat.send("我推门进去。")
    chat.close()
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    menu = win.export_menu
    menu.aboutToShow.emit()
    texts = [a.text() for a in menu.actions()]
    assert "对话为可读的 Markdown…" in texts and "对话为可读的网页（HTML）…" in texts
    monkeypatch.setattr(export_menu, "ask_transcript_options", lambda _p: TranscriptOptions(title="雨夜"))
    answers = [str(tmp_path / "t.md"), str(tmp_path / "t.html")]
    monkeypatch.setattr(export_menu, "ask_path", lambda *_a: answers.pop(0))
    await win.exporter.export_transcript("md")
    md = (tmp_path / "t.md").read_text("utf-8")
    assert "雨夜" in md and "我推门进去。" in md and "雨声渐密。" in md
    await win.exporter.export_transcript("html")
    html = (tmp_path / "t.html").read_text("utf-8")
    assert html.lstrip().lower().startswith("<!doctype html") and "雨声渐密。" in html
    monkeypatch.setattr(export_menu, "ask_transcript_options", lambda _p: None)  # cancelled: nothing asked, written
    assert win.exporter.export_transcript("md") is None
