"""Issue 33 §4, world books replaced while chats use them — the gaps: a chat records the books it reads when it is
created (and when an older chat is opened), so a book replaced before its first beat is offered; a group chat is
offered the updates of the global books and of every member's linked library books."""

from __future__ import annotations

import json

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.cards.library import import_card
from liyuan_desktop.core.cards.meta import set_card_linked_books
from liyuan_desktop.core.chat import book_update
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.group import Group, save_group
from liyuan_desktop.core.group.model import group_dir
from liyuan_desktop.core.lore.books import global_books_dir, library_books_dir
from tests.test_book_update_diff import CARD, NEW, OLD, Recorder, make_chat, put


async def test_a_book_replaced_before_the_first_beat_is_offered(tmp_path):
    put(global_books_dir() / "镇子.json", OLD)
    card = tmp_path / "card.json"
    put(card, CARD)
    model = Recorder(2)
    chat = make_chat(tmp_path / "c", card, model)
    assert book_update.recorded(chat.tree).keys() == {"镇子"}  # recorded when the chat was created
    src = tmp_path / "new.json"
    put(src, NEW)
    book_update.update_library_book("镇子", src)
    [u] = chat.book_updates()
    assert [(c.key, c.kind) for c in u.diff.entries] == [("1", "changed"), ("2", "removed"), ("3", "added")]
    chat.answer_book_update("镇子", "old")
    await chat.send("去茶馆，再去渡口，看城门")  # the first beat plays the version the chat started with
    p = model.last_prompt()
    assert "茶馆在镇北。" in p and "渡口有船夫老周。" in p and "城门寅时开。" not in p
    chat.close()


async def test_a_chat_without_a_record_gets_one_when_opened(tmp_path):
    card = tmp_path / "card.json"
    put(card, CARD)
    model = Recorder(1)
    chat = make_chat(tmp_path / "c", card, model)  # no library book yet: nothing recorded
    assert book_update.recorded(chat.tree) == {}
    chat.close()
    put(global_books_dir() / "镇子.json", OLD)  # e.g. a chat made before books were recorded
    chat = Chat.open(tmp_path / "c", load_card(card), model)
    assert book_update.recorded(chat.tree).keys() == {"镇子"}
    n = len(chat.tree.order)
    chat.close()
    chat = Chat.open(tmp_path / "c", load_card(card), model)  # nothing new: opening writes nothing
    assert len(chat.tree.order) == n
    src = tmp_path / "new.json"
    put(src, NEW)
    book_update.update_library_book("镇子", src)
    chat.close()
    chat = Chat.open(tmp_path / "c", load_card(card), model)  # opened after the update: still offered, not taken
    assert [u.name for u in chat.book_updates()] == ["镇子"]
    chat.answer_book_update("镇子", "new")
    await chat.send("去茶馆，看城门")
    assert "茶馆在镇南。" in model.last_prompt() and "城门寅时开。" in model.last_prompt()
    chat.close()


def member(folder, name: str, first: str):
    p = folder / f"{name}.json"
    put(p, {"spec": "chara_card_v2", "spec_version": "2.0",
            "data": {"name": name, "description": f"{name}。", "first_mes": first, "extensions": {}}})
    return import_card(p, replace=True)


class GroupRecorder(Recorder):
    """The recorder with ``n`` prose replies (a group member's each)."""

    def __init__(self, n: int):
        Recorder.__bases__[0].__init__(self, actor=[{"content": f"回{i}。"} for i in range(n)], scribe=["{}"] * n)
        self.requests = []


async def test_a_group_chat_is_offered_its_members_books(tmp_path):
    put(global_books_dir() / "镇子.json", OLD)
    put(library_books_dir() / "药谱.json", {"entries": {"1": {
        "uid": 1, "key": ["药"], "content": "月叶治烫伤。", "comment": "月叶", "constant": False, "order": 100,
        "position": 0, "disable": False}}})
    ra, rb = member(tmp_path, "阿棠", "阿棠抬头。"), member(tmp_path, "白桦", "白桦笑了。")
    a, b = ra.name, rb.name
    set_card_linked_books(rb.dir, ["药谱"])  # only the second member links the library book
    g = Group(name="茶馆", members=[a, b], strategy="list")
    save_group(g)
    model = GroupRecorder(4)
    chat = Chat.create_group(group_dir(g.name) / "对话" / "一", g, model)
    chat.set_prose_only(True)
    assert book_update.recorded(chat.tree).keys() == {"镇子", "药谱"}  # every member's books, from the start
    # both books are replaced before anyone spoke: both offered, whoever speaks next
    src = tmp_path / "new.json"
    put(src, NEW)
    book_update.update_library_book("镇子", src)
    put(src, {"entries": {"1": {"uid": 1, "key": ["药"], "content": "月叶治刀伤。", "comment": "月叶",
                                "constant": False, "order": 100, "position": 0, "disable": False}}})
    book_update.update_library_book("药谱", src)
    assert [u.name for u in chat.book_updates()] == ["药谱", "镇子"]
    chat.answer_book_update("药谱", "old")  # keep the member's linked book as it was
    chat.answer_book_update("镇子", "new")
    assert chat.book_updates() == []
    await chat.send("去茶馆，看城门，要药")
    await chat.send("去茶馆，看城门，要药")
    speakers = [e.speaker for e in chat.tree.path_to() if e.type == "assistant"]
    assert set(speakers) == {a, b}
    actor = [r for r in model.requests if r.purpose == "actor"]
    texts = ["\n".join(str(m.content) for m in r.messages) for r in actor]
    assert all("茶馆在镇南。" in t and "城门寅时开。" in t for t in texts)
    # the linked book is read when its member speaks, in the version the chat kept
    by_b = [t for t in texts if "月叶" in t]
    assert by_b and all("月叶治烫伤。" in t and "刀伤" not in t for t in by_b)
    assert chat.book_updates() == []
    chat.close()


# -- the SillyTavern migration run again over an updated folder ------------------------------------------------


def _st_update(st):
    """The SillyTavern player edited a world book (an entry changed, one added) and the card 「阿梨」 (its
    description) since the first migration."""
    d = st  # build_st_folder gives the user folder
    wp = d / "worlds" / "阿梨的世界.json"
    w = json.loads(wp.read_text("utf-8"))
    first = next(iter(w["entries"].values()))
    first["content"] = "渡口搬到了镇子西边。"
    w["entries"]["99"] = {**first, "uid": 99, "key": ["钟楼"], "comment": "钟楼", "content": "钟楼每晚敲九下。"}
    wp.write_text(json.dumps(w, ensure_ascii=False, indent=2), "utf-8")
    cp = d / "characters" / "alice.json"
    c = json.loads(cp.read_text("utf-8"))
    c["data"]["description"] = "阿梨换了新的说明。"
    cp.write_text(json.dumps(c, ensure_ascii=False), "utf-8")


async def test_rerunning_the_migration_updates_a_book_and_a_card_in_running_chats(tmp_path):
    from st_folder import build_st_folder

    from liyuan_desktop.core.migrate import run, scan
    from liyuan_desktop.core.paths import home

    st = build_st_folder(tmp_path / "st")
    run(scan(st))
    card_file = home() / "cards" / "阿梨" / "card.json"
    chat_dir = home() / "cards" / "阿梨" / "对话" / "第一局"
    model = Recorder(1)
    chat = Chat.open(chat_dir, load_card(card_file), model)  # an imported chat: its books recorded when opened
    assert "阿梨的世界" in book_update.recorded(chat.tree)
    assert chat.book_updates() == [] and chat.card_update() is None
    _st_update(st)
    plan = scan(st)
    how = {(i.kind, i.name): i.action for i in plan.items if i.kind in ("book", "card")}
    assert how[("book", "阿梨的世界")] == "update" and how[("card", "阿梨")] == "update"
    assert how[("book", "额外之书")] == "same" and how[("card", "阿柏")] == "same"  # identical: nothing to do
    assert {i.action for i in plan.of("chat") if i.owner == "alice"} <= {"same", "error", "skip"}
    assert plan.to_import() == 2
    assert any("替换为新版 1" in line for line in plan.summary_lines())
    report = run(plan)
    assert report.imported == {"book": 1, "card": 1}
    assert not (home() / "cards" / "阿梨-2").exists()
    assert not (library_books_dir() / "阿梨的世界-2.json").exists()
    assert "替换为新版" in report.markdown()
    # the chat that uses them is offered both changes
    [u] = chat.book_updates()
    assert u.name == "阿梨的世界"
    assert {(c.kind, c.label) for c in u.diff.entries} >= {("added", "钟楼")}
    assert any(c.kind == "changed" for c in u.diff.entries)
    diff = chat.card_update()
    assert diff is not None and any(f.key == "description" for f in diff.fields)
    chat.answer_book_update("阿梨的世界", "new")
    assert chat.book_updates() == []
    # a third run over the same folder: nothing left to do
    assert scan(st).to_import() == 0
    chat.close()


def test_a_cancelled_update_puts_the_old_book_and_card_back(tmp_path):
    import threading

    from st_folder import build_st_folder

    from liyuan_desktop.core.migrate import run, scan
    from liyuan_desktop.core.paths import home

    st = build_st_folder(tmp_path / "st")
    run(scan(st))
    before = {p.relative_to(home()).as_posix(): p.read_bytes() for p in sorted(home().rglob("*")) if p.is_file()}
    _st_update(st)
    stop = threading.Event()
    seen: list[str] = []

    def progress(done, total, label):
        seen.append(label)
        if label.startswith("角色卡"):  # the book is replaced by now, the card is being replaced
            stop.set()

    report = run(scan(st), progress, stop)
    assert report.cancelled and any(s.startswith("世界书") for s in seen)
    after = {p.relative_to(home()).as_posix(): p.read_bytes() for p in sorted(home().rglob("*")) if p.is_file()}
    assert after == before


def test_a_read_only_data_folder_still_opens_the_chat(tmp_path, monkeypatch):
    """Recording the books at opening is best effort: a disk that refuses leaves the tree as it was."""
    card = tmp_path / "card.json"
    put(card, CARD)
    chat = Chat.create(tmp_path / "c", load_card(card), Recorder(0))
    chat.close()
    put(global_books_dir() / "镇子.json", OLD)

    def refuse(*_a, **_k):
        raise PermissionError("read-only")

    monkeypatch.setattr(book_update, "store_version", refuse)
    chat = Chat.open(tmp_path / "c", load_card(card), Recorder(0))
    assert book_update.recorded(chat.tree) == {} and not chat.tree.pending_mark()[0]
    chat.close()
