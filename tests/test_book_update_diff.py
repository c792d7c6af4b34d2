"""Issue 33 §4, world books: a library book (a global one, or one linked to the card) replaced by a newer version
while a chat uses it — the chat gets the diff (entries added / removed / changed, settings) and either uses the new
version from the next beat (the next request to the model carries exactly the new entries), keeps the old one (also
when opened again), or takes single entries; undo steps back to the version played before."""

from __future__ import annotations

import copy
import json

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.cards.update_diff import book_update_diff, merge_book_picked, pick_key
from liyuan_desktop.core.chat import book_update
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.lore.books import global_books_dir, library_books_dir


class Recorder(ReplayModel):
    """The replay model, keeping each request (the test reads what the model was sent)."""

    def __init__(self, beats: int):
        super().__init__(actor=[{"content": "嗯，知道了。"}] * beats, scribe=['{"patch": {}}'] * beats)
        self.requests: list = []

    async def complete(self, request, on_delta=None):
        self.requests.append(request)
        return await super().complete(request, on_delta)

    def last_prompt(self) -> str:
        """The text of the newest beat's request to the actor (prose-only play: the hit entries' text is in it)."""
        req = next(r for r in reversed(self.requests) if r.purpose == "actor")
        return "\n".join(str(m.content) for m in req.messages)


def make_chat(folder, card, model) -> Chat:
    """A chat played prose-only (the hit lore's text goes into the request, not just its titles)."""
    chat = Chat.create(folder, load_card(card), model)
    chat.set_prose_only(True)
    return chat


def wi_entry(uid: int, key: str, content: str, **kw) -> dict:
    return {"uid": uid, "key": [key], "keysecondary": [], "comment": f"条目{uid}", "content": content,
            "constant": False, "selective": True, "order": 100, "position": 0, "disable": False,
            "displayIndex": uid, **kw}


def book(*entries: dict, scan_depth: int = 2) -> dict:
    return {"entries": {str(e["uid"]): e for e in entries}, "scan_depth": scan_depth}


OLD = book(wi_entry(1, "茶馆", "茶馆在镇北。"), wi_entry(2, "渡口", "渡口有船夫老周。"))
NEW = book(wi_entry(1, "茶馆", "茶馆在镇南。", order=50), wi_entry(3, "城门", "城门寅时开。"), scan_depth=4)

CARD = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {
    "name": "阿棠", "description": "茶馆掌柜。", "first_mes": "雨夜，茶馆。", "extensions": {}}}


def put(path, doc) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, ensure_ascii=False), "utf-8")


def test_the_diff_names_entries_and_settings():
    d = book_update_diff(OLD, NEW)
    assert [(c.key, c.kind, c.label, c.parts) for c in d.entries] == [
        ("1", "changed", "条目1", ["content", "order"]), ("2", "removed", "条目2", []), ("3", "added", "条目3", [])]
    assert [(c.key, c.old, c.new) for c in d.settings] == [("scan_depth", 2, 4)]
    assert d.counts() == {"entries": 3, "settings": 1}
    moved = copy.deepcopy(OLD)
    moved["entries"]["1"]["displayIndex"] = 9  # only the editor's list position: no change
    assert book_update_diff(OLD, moved).empty()
    # a card-book shaped (list) book and a lorebook_v3 export compare the same way
    as_list = {"entries": [{"id": 1, "keys": ["茶馆"], "content": "a"}]}
    v3 = {"spec": "lorebook_v3", "data": {"entries": [{"id": 1, "keys": ["茶馆"], "content": "b"}]}}
    assert [(c.key, c.parts) for c in book_update_diff(as_list, v3).entries] == [("1", ["content"])]
    # picking: only the added entry and the settings
    picks = [pick_key("entries", d.entries[2]), pick_key("settings", d.settings[0])]
    assert picks == ["entries:3", "settings"]
    merged = merge_book_picked(OLD, NEW, picks)
    assert sorted(merged["entries"]) == ["1", "2", "3"] and merged["scan_depth"] == 4
    assert merged["entries"]["1"]["content"] == "茶馆在镇北。" and OLD["entries"].get("3") is None


async def test_use_new_keep_old_and_undo(tmp_path):
    path = global_books_dir() / "镇子.json"
    put(path, OLD)
    card = tmp_path / "card.json"
    put(card, CARD)
    model = Recorder(6)
    chat = make_chat(tmp_path / "c", card, model)
    await chat.send("去茶馆，再去渡口")
    p = model.last_prompt()
    assert "茶馆在镇北。" in p and "渡口有船夫老周。" in p
    assert chat.book_updates() == [] and book_update.recorded(chat.tree).keys() == {"镇子"}
    # the library book is replaced (an update from a file, the library's path)
    src = tmp_path / "new.json"
    put(src, NEW)
    book_update.update_library_book("镇子", src)
    [u] = chat.book_updates()
    assert u.name == "镇子" and not u.in_prefix and not u.kept
    assert [(c.key, c.kind) for c in u.diff.entries] == [("1", "changed"), ("2", "removed"), ("3", "added")]
    # keep the old: the next prompt is the old one, also after reopening
    chat.answer_book_update("镇子", "old")
    assert chat.book_updates() == [] and chat.last_changes.names() == {"settings"}
    await chat.send("去茶馆，再去渡口，看城门")
    p = model.last_prompt()
    assert "茶馆在镇北。" in p and "渡口有船夫老周。" in p and "城门寅时开。" not in p
    chat.close()
    chat = Chat.open(tmp_path / "c", load_card(card), model)
    assert chat.book_updates() == [] and "镇子" in book_update.kept_books(tmp_path / "c")
    await chat.send("去茶馆，再去渡口，看城门")
    assert "茶馆在镇北。" in model.last_prompt() and "城门寅时开。" not in model.last_prompt()
    # the library changes once more: asked again, compared with the kept version; use the new one
    newer = copy.deepcopy(NEW)
    newer["entries"]["3"]["content"] = "城门卯时开。"
    put(src, newer)
    book_update.update_library_book("镇子", src)
    [u] = chat.book_updates()
    assert u.kept and [(c.key, c.kind) for c in u.diff.entries] == [("1", "changed"), ("2", "removed"),
                                                                  ("3", "added")]
    chat.answer_book_update("镇子", "new")
    assert chat.book_updates() == [] and not (tmp_path / "c" / book_update.KEPT_BOOKS).exists()
    await chat.send("去茶馆，再去渡口，看城门")
    p = model.last_prompt()
    assert "茶馆在镇南。" in p and "城门卯时开。" in p and "渡口有船夫老周。" not in p and "镇北" not in p
    # undo: back to the version played before (the checkpoint kept in the version store)
    assert book_update.can_undo(chat.tree, "镇子")
    chat.answer_book_update("镇子", "undo")
    [again] = chat.book_updates()  # played as before, and the library's version offered again
    assert again.kept and again.diff.entries
    await chat.send("去茶馆，再去渡口，看城门")
    p = model.last_prompt()
    assert "茶馆在镇北。" in p and "渡口有船夫老周。" in p and "城门" not in p.replace("看城门", "")
    chat.close()


async def test_pick_some_entries_of_a_linked_book(tmp_path):
    from liyuan_desktop.core.cards.meta import set_card_linked_books

    path = library_books_dir() / "镇子.json"
    put(path, OLD)
    card_dir = tmp_path / "card"
    put(card_dir / "card.json", CARD)
    set_card_linked_books(card_dir, ["镇子"])
    model = Recorder(3)
    chat = make_chat(tmp_path / "c", card_dir / "card.json", model)
    await chat.send("茶馆")
    assert "茶馆在镇北。" in model.last_prompt()
    src = tmp_path / "new.json"
    put(src, NEW)
    book_update.update_library_book("镇子", src)
    [u] = chat.book_updates()
    assert u.path == str(path)
    # take the added entry only: 城门 joins, the changed 茶馆 and the removed 渡口 stay as they were
    chat.answer_book_update("镇子", "pick", [pick_key("entries", u.diff.entries[2])])
    assert chat.book_updates() == []
    await chat.send("去茶馆，再去渡口，看城门")
    p = model.last_prompt()
    assert "茶馆在镇北。" in p and "渡口有船夫老周。" in p and "城门寅时开。" in p and "镇南" not in p
    chat.close()


async def test_an_update_left_alone_is_taken_by_the_next_beat(tmp_path):
    path = global_books_dir() / "镇子.json"
    put(path, book(wi_entry(1, "茶馆", "茶馆在镇北。", constant=True)))
    card = tmp_path / "card.json"
    put(card, CARD)
    model = Recorder(2)
    chat = make_chat(tmp_path / "c", card, model)
    await chat.send("一")
    assert "茶馆在镇北。" in chat.system  # a constant entry: in the system prompt (the cached prefix)
    put(path, book(wi_entry(1, "茶馆", "茶馆在镇南。", constant=True)))
    [u] = chat.book_updates()
    assert u.in_prefix
    said: list[str] = []
    await chat.send("二", on_event=lambda ev: said.append(str(getattr(ev, "text", ""))))
    assert "茶馆在镇南。" in model.last_prompt() and "茶馆在镇南。" in chat.system and chat.book_updates() == []
    assert "世界书「镇子」已更新，这一拍起用新版。" in said
    assert "settings" in chat.last_changes.names()  # the window's bar looks again
    # undo brings the version the chat played before back (kept), and offers the library's again
    chat.answer_book_update("镇子", "undo")
    assert "茶馆在镇北。" in chat.system and [u.name for u in chat.book_updates()] == ["镇子"]
    chat.close()


async def test_cli_lists_and_answers_book_updates(tmp_path, capsys):
    from liyuan_desktop import cli

    put(global_books_dir() / "镇子.json", OLD)
    card = tmp_path / "card.json"
    put(card, CARD)
    model = Recorder(1)
    chat = make_chat(tmp_path / "c", card, model)
    await chat.send("茶馆")
    chat.close()
    src = tmp_path / "new.json"
    put(src, NEW)
    assert cli.main(["book", "update", "镇子", str(src)]) == 0  # without --yes: only said, nothing written
    assert "加 --yes 才会替换" in capsys.readouterr().out
    assert json.loads((global_books_dir() / "镇子.json").read_text("utf-8")) == OLD
    assert cli.main(["book", "update", "没有这本", str(src), "--yes"]) == 2
    assert "书库里没有世界书「没有这本」" in capsys.readouterr().err
    assert cli.main(["book", "update", "镇子", str(src), "--yes"]) == 0
    capsys.readouterr()
    chat_dir = str(tmp_path / "c")
    assert cli.main(["book", "updates", chat_dir]) == 0
    out = capsys.readouterr().out
    assert "世界书「镇子」：条目 3 条、设置 1 处" in out and "  3 (条目3): added" in out and "settings.scan_depth: 2 → 4" in out
    assert cli.main(["--lang", "en", "book", "updates", chat_dir, "--json"]) == 0
    [u] = json.loads(capsys.readouterr().out)
    assert u["name"] == "镇子" and [c["key"] for c in u["diff"]["entries"]] == ["1", "2", "3"]
    assert cli.main(["book", "updates", chat_dir, "--pick", "镇子"]) == 2
    assert "--pick 要和 --entries 一起用" in capsys.readouterr().err
    assert cli.main(["book", "updates", chat_dir, "--pick", "镇子", "--entries", "3,settings"]) == 0
    assert "勾选的 2 处改动" in capsys.readouterr().out
    assert cli.main(["book", "updates", chat_dir]) == 0
    assert "都没有更新" in capsys.readouterr().out
    assert cli.main(["book", "updates", chat_dir, "--undo", "镇子"]) == 0
    assert cli.main(["book", "updates", chat_dir, "--use-new", "镇子"]) == 0
    assert "下一拍起用新版" in capsys.readouterr().out
    assert cli.main(["book", "updates", chat_dir, "--keep-old", "镇子"]) == 2  # nothing left to answer
    assert "没有世界书「镇子」的更新" in capsys.readouterr().err


async def test_a_book_attached_to_the_chat_is_offered_too(tmp_path):
    # a global book and a book attached to the chat, both named 镇子: two books, told apart by their keys
    put(global_books_dir() / "镇子.json", book(wi_entry(7, "钟楼", "钟楼在镇心。")))
    card = tmp_path / "card.json"
    put(card, CARD)
    model = Recorder(3)
    chat = make_chat(tmp_path / "c", card, model)
    own = tmp_path / "c" / "世界书"
    put(own / "镇子.json", OLD)
    chat.reload_books()
    await chat.send("去茶馆，看钟楼")
    assert "茶馆在镇北。" in model.last_prompt() and "钟楼在镇心。" in model.last_prompt()
    assert book_update.recorded(chat.tree).keys() == {"镇子", "chat/镇子"}
    src = tmp_path / "new.json"
    put(src, NEW)
    assert book_update.update_book_file(own, "镇子", src) == own / "镇子.json"
    [u] = chat.book_updates()
    assert (u.key, u.name, u.chat, u.path) == ("chat/镇子", "镇子", True, str(own / "镇子.json"))
    chat.reload_books()  # the window's books dialog re-reads them after the update
    chat.answer_book_update("chat/镇子", "old")
    await chat.send("去茶馆，看钟楼，去城门")
    p = model.last_prompt()
    assert "茶馆在镇北。" in p and "钟楼在镇心。" in p and "城门寅时开。" not in p
    # the library's 镇子 is untouched by all this
    assert chat.book_updates() == [] and "镇子" not in book_update.kept_books(tmp_path / "c")
    chat.close()


def test_the_record_follows_the_tree_and_its_rollbacks(tmp_path):
    card = tmp_path / "card.json"
    put(card, CARD)
    chat = Chat.create(tmp_path / "c", load_card(card), ReplayModel(actor=[], scribe=[]))
    tree = chat.tree
    assert book_update.recorded(tree) == {}
    tree.append("chat-settings", parent_id=None, move_leaf=False, library_books={"甲": "1"})
    assert book_update.recorded(tree) == {"甲": "1"}
    mark = tree.pending_mark()
    tree.append("chat-settings", parent_id=None, move_leaf=False, library_books={"甲": "2"})
    assert book_update.recorded(tree) == {"甲": "2"}
    tree.rollback(mark)  # a write that failed: the entry is taken back, and so is the record
    assert book_update.recorded(tree) == {"甲": "1"}
    tree.append("chat-settings", parent_id=None, move_leaf=False, sampling={})  # another setting: no record
    assert book_update.recorded(tree) == {"甲": "1"} and not book_update.can_undo(tree, "甲")
    chat.close()
