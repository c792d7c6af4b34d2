"""A card's linked world books (SillyTavern's character lore) load in every chat of the card, new ones included.

SillyTavern facts (``public/scripts/world-info.js`` ``getCharacterLore``): a character's books are its primary book
``data.extensions.world`` and the "additional" books of ``settings.json`` ``world_info.charLore``, looked up by name
in ``worlds/`` on every generation; a linked book that is globally selected or is the chat's own book is skipped,
a missing one is skipped without an error. Here the links live per card in ``liyuan.json`` (cards.meta), written by
card import and by the SillyTavern migration, read by cards.book_links when a chat is created or opened.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from st_folder import _card, _world, build_st_folder

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.cards.book_links import link_states
from liyuan_desktop.core.cards.library import import_card, new_chat_dir
from liyuan_desktop.core.cards.meta import card_linked_books
from liyuan_desktop.core.chat import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.lore.books import OFF_FOLDER, global_books_dir, library_books_dir
from liyuan_desktop.core.migrate import run, scan
from liyuan_desktop.core.paths import home


def _contents(chat: Chat) -> list[str]:
    return [e.content for e in chat.book.entries]


def _new_chat(card_name: str, title: str = "新的一局") -> Chat:
    d = home() / "cards" / card_name
    card = load_card(d / "card.json")
    from liyuan_desktop.core.cards.library import CardRef

    return Chat.create(new_chat_dir(CardRef(name=card_name, dir=str(d)), title), card, ReplayModel(actor=[]))


def _open(card_name: str, chat: str) -> Chat:
    d = home() / "cards" / card_name
    return Chat.open(d / "对话" / chat, load_card(d / "card.json"), ReplayModel(actor=[]))


def test_a_new_chat_of_a_migrated_card_reads_its_linked_books_once(tmp_path):
    build_st_folder(tmp_path / "st")
    run(scan(tmp_path / "st"))
    assert card_linked_books(home() / "cards" / "阿梨") == ["阿梨的世界"]  # extensions.world
    assert card_linked_books(home() / "cards" / "阿柏") == ["额外之书"]  # charLore
    fresh = _new_chat("阿梨")
    c = _contents(fresh)
    assert c.count("渡口在镇子东边。") == 1  # the linked library book
    assert c.count("天下分九州。") == 1  # the global one, once
    assert c.count("梨园是阿梨长大的地方。") == 1  # the card's embedded book
    assert "第一局里灯笼是红的。" not in c  # another chat's own book stays there
    assert not fresh.load_warnings
    assert _contents(_new_chat("阿柏")).count("阿柏的剑叫长风。") == 1
    # the imported chat reads the card's link too, once: no copy of it was attached (one shared file, as in ST)
    first = _open("阿梨", "第一局")
    assert _contents(first).count("渡口在镇子东边。") == 1 and _contents(first).count("第一局里灯笼是红的。") == 1
    assert sorted(p.stem for p in (first.books_folder()).glob("*.json")) == ["聊天之书"]
    assert [(b.name, b.state, b.primary) for b in first.linked_books()] == [("阿梨的世界", "read", True)]


def test_a_chat_with_its_own_copy_does_not_get_the_link_twice(tmp_path):
    build_st_folder(tmp_path / "st")
    run(scan(tmp_path / "st"))
    chat_dir = home() / "cards" / "阿梨" / "对话" / "第二局"
    (chat_dir / "世界书").mkdir(exist_ok=True)  # what an earlier import attached to each chat
    shutil.copy(library_books_dir() / "阿梨的世界.json", chat_dir / "世界书" / "阿梨的世界.json")
    chat = _open("阿梨", "第二局")
    assert _contents(chat).count("渡口在镇子东边。") == 1
    assert [b.state for b in chat.linked_books()] == ["chat"]
    (chat_dir / "世界书" / OFF_FOLDER).mkdir()
    shutil.move(chat_dir / "世界书" / "阿梨的世界.json", chat_dir / "世界书" / OFF_FOLDER / "阿梨的世界.json")
    chat.reload_books()  # the chat's copy switched off: the chat's choice holds, the link does not bring it back
    assert "渡口在镇子东边。" not in _contents(chat)


def _card_file(tmp_path: Path, name: str, **data) -> Path:
    p = tmp_path / f"{name}.json"
    p.write_text(json.dumps(_card(name, "「你好。」", **data), ensure_ascii=False), "utf-8")
    return p


def test_card_import_links_a_library_book_and_says_when_it_is_missing(tmp_path):
    library_books_dir().mkdir(parents=True)
    (library_books_dir() / "雾之书.json").write_text(json.dumps(_world(("雾", "雾从河上来。")), ensure_ascii=False), "utf-8")
    ref = import_card(_card_file(tmp_path, "雾", extensions={"world": "雾之书"}))
    assert ref.notes == [] and card_linked_books(ref.dir) == ["雾之书"]
    assert _contents(_new_chat(ref.name)).count("雾从河上来。") == 1

    lost = import_card(_card_file(tmp_path, "失书", extensions={"world": "没有这本"}))
    assert card_linked_books(lost.dir) is None and len(lost.notes) == 1 and "没有这本" in lost.notes[0]
    chat = _new_chat(lost.name)  # opens: the missing book is said, not an error (SillyTavern skips it)
    assert any("没有这本" in w for w in chat.load_warnings)
    assert [b.state for b in chat.linked_books()] == ["missing"]

    # the card carries its linked book embedded (SillyTavern embeds it when it saves a card): read once
    book = {"entries": [{"id": 0, "keys": ["雾"], "content": "雾从河上来。", "enabled": True}]}
    both = import_card(_card_file(tmp_path, "雾二", character_book=book, extensions={"world": "雾之书"}))
    chat = _new_chat(both.name)
    assert _contents(chat).count("雾从河上来。") == 1 and [b.state for b in chat.linked_books()] == ["embedded"]
    # a card naming a book it carries embedded but the library lacks: nothing to say
    assert import_card(_card_file(tmp_path, "雾三", character_book=book, extensions={"world": "没有这本"})).notes == []


def test_links_are_edited_per_card_and_every_chat_of_the_card_follows(tmp_path):
    library_books_dir().mkdir(parents=True)
    for name, content in (("甲书", "甲的内容。"), ("乙书", "乙的内容。")):
        (library_books_dir() / f"{name}.json").write_text(json.dumps(_world((name, content)), ensure_ascii=False), "utf-8")
    global_books_dir().joinpath("全局书.json").write_text(json.dumps(_world(("天", "全局的内容。")), ensure_ascii=False), "utf-8")
    ref = import_card(_card_file(tmp_path, "丙", extensions={"world": "甲书"}))
    one, two = _new_chat(ref.name, "一"), _new_chat(ref.name, "二")
    assert one.library_book_names() == ["乙书", "全局书", "甲书"]
    one.set_linked_books(["甲书", "乙书", "全局书"])
    assert {"甲的内容。", "乙的内容。"} <= set(_contents(one)) and _contents(one).count("全局的内容。") == 1
    assert [(b.name, b.state) for b in one.linked_books()] == [("甲书", "read"), ("乙书", "read"), ("全局书", "global")]
    two.reload_books()
    assert "乙的内容。" in _contents(two)  # a per-card record
    one.set_linked_books([])  # none: the card's extensions.world no longer applies either
    assert "甲的内容。" not in _contents(one) and card_linked_books(ref.dir) == []
    assert link_states(one.card) == []


def test_a_clashing_card_is_renamed_by_the_same_rule_as_the_other_kinds(tmp_path):
    build_st_folder(tmp_path / "st")
    import_card(_card_file(tmp_path, "阿梨", description="早就在这里的另一张阿梨"))
    library_books_dir().mkdir(parents=True)
    (library_books_dir() / "阿梨的世界.json").write_text('{"entries": {}}', "utf-8")
    plan = scan(tmp_path / "st")
    planned = {(i.kind, i.name): i.target for i in plan.items if i.action == "rename"}
    assert planned == {("card", "阿梨"): "阿梨-2", ("book", "阿梨的世界"): "阿梨的世界-2"}
    report = run(plan)
    done = {(i.kind, i.name): i.target for i in report.plan.items if i.action == "rename"}
    assert done == planned and (home() / "cards" / "阿梨-2" / "card.json").is_file()
    assert card_linked_books(home() / "cards" / "阿梨-2") == ["阿梨的世界-2"]  # the link follows the renamed book
    assert _contents(_new_chat("阿梨-2")).count("渡口在镇子东边。") == 1


def test_cli_card_import_says_the_linked_book_is_missing(tmp_path):
    import subprocess
    import sys

    from helpers import ROOT

    env = {"LIYUAN_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "utf-8",
           "LIYUAN_LANG": "zh"}  # no locale at all would be English (issue 32); this test reads the Chinese line
    out = subprocess.run([sys.executable, "-m", "liyuan_desktop.cli", "card", "import",
                          str(_card_file(tmp_path, "失书", extensions={"world": "没有这本"}))],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0 and out.stdout.strip().endswith("失书")
    assert "没有这本" in out.stderr and "不在书库里" in out.stderr
