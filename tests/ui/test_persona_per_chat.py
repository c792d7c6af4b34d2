"""The persona per chat (issue 17): Chat.set_persona switches who the user plays from the next beat (the system
prompt's {{user}} changes, the choice survives reopening, None goes back to the persona the chat was created
with); new chats take the library's default persona; the window's 本对话的角色 dialog lists the personas, adds one
and applies the choice."""

from __future__ import annotations

from pathlib import Path

import pytest

from liyuan_desktop.core.cards.library import ensure_demo_card
from liyuan_desktop.core.cards.personas import Persona, chosen_for_chat, load_personas, save_personas
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.settings import AppSettings


class _M:
    name = "none"
    is_replay = False

    async def complete(self, request, on_delta=None):  # pragma: no cover - never called
        raise AssertionError


def _store_with(*names: str) -> list[Persona]:
    store = load_personas()
    out = [store.add(n, f"{n}的描述：总是和{{{{char}}}}一起") for n in names]
    save_personas(store)
    return out


def _chat(tmp_path: Path, **kw) -> Chat:
    card = ensure_demo_card().load()
    return Chat.create(tmp_path / "c", card, _M(), persona_obj=Persona(name="旅人", description="一个旅人"), **kw)


def test_set_persona_applies_from_the_next_beat_and_survives_reopening(tmp_path: Path):
    chat = _chat(tmp_path)
    assert chat.persona == "旅人" and chat.persona_info() == {"name": "旅人", "description": "一个旅人", "id": None}
    (shu,) = _store_with("书生")
    name = chat.set_persona(shu.id)
    assert name == "书生" and chat.persona == "书生" and chat.ctx.user == "书生"
    assert chat.persona_info()["id"] == shu.id
    assert any("书生" in n for n in chat.pending_notices)  # the next beat's activity list says so
    assert chosen_for_chat(chat.dir).id == shu.id
    card = ensure_demo_card().load()
    again = Chat.open(chat.dir, card, _M())
    assert again.persona == "书生" and again.persona_info()["description"].startswith("书生的描述")
    # back to the persona the chat was created with
    assert again.set_persona(None) == "旅人"
    assert Chat.open(chat.dir, card, _M()).persona == "旅人"
    with pytest.raises(KeyError):
        again.set_persona("no-such-id")


def test_set_persona_is_refused_while_a_beat_runs(tmp_path: Path):
    chat = _chat(tmp_path)
    (shu,) = _store_with("书生")
    chat.running = object()
    with pytest.raises(RuntimeError):
        chat.set_persona(shu.id)
    chat.running = None
    assert chat.persona == "旅人" and chosen_for_chat(chat.dir) is None


def test_new_chats_take_the_default_persona(tmp_path: Path):
    from liyuan_desktop.core.chat.build import persona_for_new_chat

    assert persona_for_new_chat(AppSettings()) is None
    assert persona_for_new_chat(AppSettings(persona_name="阿梨", persona_description="梨园的常客")).name == "阿梨"
    a, b = _store_with("甲", "乙")
    store = load_personas()
    store.set_default(b.id)
    save_personas(store)
    p = persona_for_new_chat(AppSettings(persona_name="阿梨"))
    assert p is not None and p.id == b.id
    chat = Chat.create(tmp_path / "n", ensure_demo_card().load(), _M(), persona_obj=p)
    assert chat.persona == "乙"


def test_dialog_lists_adds_and_applies(qtbot, tmp_path: Path):
    from liyuan_desktop.ui.dialogs.persona_picker import PersonaDialog

    chat = _chat(tmp_path)
    (shu,) = _store_with("书生")
    dlg = PersonaDialog(chat)
    qtbot.addWidget(dlg)
    changed: list[str] = []
    dlg.personaChanged.connect(changed.append)
    items = [dlg.combo.itemText(i) for i in range(dlg.combo.count())]
    assert items[0].endswith("旅人") and "书生" in items[1]
    assert dlg.description.toPlainText() == "一个旅人"
    dlg.new_name.setText("侠客")
    dlg.new_desc.setPlainText("仗剑走天涯")
    p = dlg.add_persona()
    assert p is not None and dlg.combo.currentData() == p.id and dlg.description.toPlainText() == "仗剑走天涯"
    dlg.default_check.setChecked(True)
    assert dlg.apply()
    assert changed == ["侠客"] and chat.persona == "侠客"
    store = load_personas()
    assert store.default == p.id and store.find("侠客") is not None


def test_window_menu_opens_the_dialog_and_the_label_follows(qtbot, tmp_path: Path):
    from liyuan_desktop.core.cards import library
    from liyuan_desktop.ui.window.main_window import MainWindow

    win = MainWindow(AppSettings())
    qtbot.addWidget(win)
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card)
    Chat.create(d, card.load(), _M(), persona_obj=Persona(name="旅人"))
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    (shu,) = _store_with("书生")
    win.persona_action.trigger()
    dlg = win.persona_dialog
    dlg.choose(shu.id)
    assert dlg.apply()
    assert win.chat.persona == "书生"
    assert "书生" in win.statusBar().currentMessage()


def test_the_persona_list_is_searched_by_any_part_of_the_name(qtbot, tmp_path: Path):
    """Issue 26 §3: typing part of a persona's name in the picker offers the personas that contain it."""
    from liyuan_desktop.ui.dialogs.persona_picker import PersonaDialog

    chat = _chat(tmp_path)
    _store_with("林小满", "苏晚", "小满的姐姐")
    dlg = PersonaDialog(chat)
    qtbot.addWidget(dlg)
    c = dlg.combo.completer()
    c.setCompletionPrefix("小满")
    got = [c.completionModel().index(i, 0).data() for i in range(c.completionCount())]
    assert [g for g in got if "小满" in g] == got and len(got) == 2
