"""Issue 32: the names the app makes up when the user gave none follow the reader's language — a group chat with no
title (「群聊」 / "Group chat") and a card that names nobody and has no file name (「未命名」 / "Untitled")."""

from __future__ import annotations

import pytest

from liyuan_desktop.core.cards import card_from_json
from liyuan_desktop.core.group.model import Group, new_group_chat_dir
from liyuan_desktop.core.paths import set_reader_language


@pytest.mark.parametrize("lang, chat, card", [("en", "Group chat", "Untitled"), ("zh", "群聊", "未命名")])
def test_made_up_names_follow_the_reader(tmp_path, monkeypatch, lang, chat, card):
    monkeypatch.setenv("LIYUAN_HOME", str(tmp_path))
    set_reader_language(lang)
    assert new_group_chat_dir(Group(name="Band", members=[])).name == chat
    assert card_from_json({"spec": "chara_card_v2", "data": {"name": ""}}, "").name == card
