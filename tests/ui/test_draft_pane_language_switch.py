"""The live language switch re-renders the draft pane from message keys (issue 32 §1): after a beat played in
Chinese — world info, a refused tool call, a notice, the scribe's applied lines and a warning — choosing English in
the settings dialog turns every activity line and notice English (no CJK: the story text and names here are
English), with the engine's reverse matcher made to fail; back to Chinese gives the Chinese lines again. The window
is built again in the new language and its draft pane takes over the old one's lines (``DraftPane.adopt``)."""

from __future__ import annotations

import json
import re

from uihelpers import wait_for

from liyuan_desktop.core import messages
from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library, load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.ledger import wording
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.messages import message
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.window.language_switch import current
from liyuan_desktop.ui.window.main_window import MainWindow

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
CARD = {"spec": "chara_card_v2", "spec_version": "2.0",
        "data": {"name": "Birch", "description": "A ferryman.", "personality": "", "scenario": "",
                 "first_mes": "The ferry waits.", "mes_example": "",
                 "character_book": {"entries": [{"id": 1, "keys": ["river"], "content": "The river is wide.",
                                                 "enabled": True, "insertion_order": 1, "comment": "River"}]}}}


def call(name: str, **args) -> dict:
    return {"tool_calls": [{"name": name, "arguments": args}]}


def _lines(win) -> list[str]:
    a = win.draft_pane.activity
    return [a.item(i).text() for i in range(a.count())]


async def test_activity_lines_follow_a_live_language_switch(qtbot, tmp_path, monkeypatch):
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    card_file = tmp_path / "birch.json"
    card_file.write_text(json.dumps(CARD), "utf-8")
    ref = library.ensure_demo_card()
    d = library.new_chat_dir(ref, "ferry")
    model = ReplayModel(actor=[call("lorebook_search", query="river"),
                               call("draft_write", version=0, content="The ferry pushes off."),
                               call("draft_edit", version=1, edits=[{"old": "no such words", "new": "x"}]),
                               call("draft_seal", version=1)],
                        scribe=['{"patch": {"time": "dusk", "flags": {"ferry": "out"}, "weather": "fog"}}'])
    chat = Chat.create(d, load_card(card_file), model)
    win.chat, win.chat_ref, win.card_ref, win.is_demo = chat, library.ChatRef(name=d.name, dir=str(d)), ref, False
    win._after_open()
    chat.pending_notices.append(message("persona.changed", name="Ann"))
    n = len(win.results)
    win.input.setPlainText("We cross the river.")
    win.send_clicked()
    await wait_for(lambda: len(win.results) > n and not win.busy)
    win.draft_pane.notice(message("card.edited_notice", name="Birch"))  # a notice after the beat (⚠ line)
    zh = _lines(win)
    assert any("场记记账" in t for t in zh) and any("场记告警" in t for t in zh) and any(t.startswith("⚠") for t in zh)
    assert any(t.startswith("✗ draft_edit") for t in zh)

    def refuse(*_a, **_k):
        raise AssertionError("an engine line was matched back from its text")

    monkeypatch.setattr(messages, "find_message", refuse, raising=False)  # (removed: issue 32)
    monkeypatch.setattr(messages, "translate", refuse, raising=False)
    monkeypatch.setattr(wording, "_APPLIED", ())
    try:
        win.open_settings()
        dlg = win.settings_dialog
        dlg.language_combo.setCurrentIndex(dlg.language_combo.findData("en"))
        win = current(win)
        qtbot.addWidget(win)
        en = _lines(win)
        assert len(en) == len(zh)
        assert not [t for t in en if CJK.search(t)], [t for t in en if CJK.search(t)]
        assert any(t.startswith("Scribe's ledger: Time: dusk") for t in en)
        assert any(t.startswith("Scribe warning: Unknown field weather") for t in en)
        assert any(t.startswith("✗ draft_edit  refused") for t in en)
        assert any("River: the key “river” is in your words this beat" in t for t in en)
        assert any(t.startswith("⚠ The card “Birch”") or t.startswith("⚠ ") and "Birch" in t for t in en)
        dlg.language_combo.setCurrentIndex(dlg.language_combo.findData("zh"))
        win = current(win)
        qtbot.addWidget(win)
        assert _lines(win) == zh  # back to Chinese: the very lines the beat showed
    finally:
        i18n.set_language("zh")


def test_a_damaged_settings_file_is_said_in_the_window_and_follows_the_language(qtbot):
    from liyuan_desktop import app
    from liyuan_desktop.core.settings import settings_path

    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"language": "zh", ', "utf-8")  # cut off: not JSON
    win = app.open_window()
    qtbot.addWidget(win)
    try:
        lines = _lines(win)
        assert any(t.startswith("⚠ 设置文件 settings.json 已损坏") for t in lines), lines
        i18n.set_language("en")
        win = win.language_changed("en")  # the window built again in English keeps the notice
        qtbot.addWidget(win)
        en = [t for t in _lines(win) if t.startswith("⚠")]
        assert en and en[0].startswith("⚠ The settings file settings.json is damaged") and not CJK.search(en[0])
    finally:
        i18n.set_language("zh")
        win.close()
