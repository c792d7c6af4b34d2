"""Issue 32 §1: with no persona of its own, the user's avatar beside their turns is the letter of the window's own
"You" / 「你」 — in English a "Y", not the Chinese default user name of the chat."""

from __future__ import annotations

import json

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.frames.avatars import chat_avatars, data_url, default_avatar
from liyuan_desktop.ui.infra import i18n


def test_the_default_user_avatar_follows_the_window_language(qtbot, tmp_path):
    card = tmp_path / "mira.json"
    card.write_text(json.dumps({"spec": "chara_card_v2", "spec_version": "2.0", "data": {
        "name": "Mira", "description": "A ferrywoman.", "first_mes": "Rain again."}}), "utf-8")
    chat = Chat.create(tmp_path / "chat", load_card(card), ReplayModel([]))
    try:
        assert chat.user_label == ""  # the card's language default (User): no persona of its own
        before = i18n.language()
        i18n.set_language("en")
        try:
            assert chat_avatars(chat)["user"] == data_url(default_avatar("You"))
            i18n.set_language("zh")
            assert chat_avatars(chat)["user"] == data_url(default_avatar("你"))
        finally:
            i18n.set_language(before or "zh")
    finally:
        chat.close()
