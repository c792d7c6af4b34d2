"""Damaged session files open (issue 15 items 3 and 6): a 0-byte file (header rebuilt from meta.json and the
card), a BOM and CRLF line ends (Notepad), a parent-id cycle and dangling parents (no endless walk)."""

from __future__ import annotations

import json
import threading

from liyuan_desktop.core.cards import card_from_json
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.session.tree import SessionTree


def _card(tmp_path):
    data = {"name": "青梧", "description": "{{char}}是客栈掌柜。", "first_mes": "「客官请进。」"}
    folder = tmp_path / "cards" / "青梧"
    folder.mkdir(parents=True)
    obj = {"spec": "chara_card_v2", "spec_version": "2.0", "data": data}
    (folder / "card.json").write_text(json.dumps(obj, ensure_ascii=False), "utf-8")
    return card_from_json(obj, str(folder / "card.json"))


def _played_chat(tmp_path):
    card = _card(tmp_path)
    model = ReplayModel(actor=[{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "好。"}}]},
                               {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}],
                        scribe=['{"patch": {}}'])
    import asyncio

    chat = Chat.create(tmp_path / "chat", card, model, title="雨夜")
    asyncio.run(chat.send("你好"))
    return card, tmp_path / "chat"


def test_a_zero_byte_session_opens_with_its_header_rebuilt(tmp_path):
    card, d = _played_chat(tmp_path)
    (d / "session.jsonl").write_bytes(b"")  # a crash between create and the first write
    chat = Chat.open(d, card, ReplayModel(actor=[]))
    assert chat.mode == "roleplay" and chat.tree.header.title == "雨夜" and chat.tree.header.card_name == "青梧"
    assert any("重建开头记录" in w for w in chat.load_warnings)
    again = Chat.open(d, card, ReplayModel(actor=[]))  # the repair is on disk
    assert again.load_warnings == [] and again.tree.header.id == chat.tree.header.id


def test_a_lost_header_line_is_rebuilt_and_the_old_lines_kept(tmp_path):
    card, d = _played_chat(tmp_path)
    path = d / "session.jsonl"
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join([b'{"id":"torn'] + lines[1:]))
    chat = Chat.open(d, card, ReplayModel(actor=[]))
    assert any("重建开头记录" in w for w in chat.load_warnings)
    assert chat.last_user_text() == "你好" and chat.sealed_beat_count() == 1  # nothing after the header was lost
    assert list(d.glob("session.jsonl.damaged-*"))


def test_bom_and_crlf_open(tmp_path):
    card, d = _played_chat(tmp_path)
    path = d / "session.jsonl"
    before = Chat.open(d, card, ReplayModel(actor=[])).transcript()
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))  # Notepad
    chat = Chat.open(d, card, ReplayModel(actor=[]))
    assert any("BOM" in w for w in chat.load_warnings)
    assert [i["text"] for i in chat.transcript()] == [i["text"] for i in before]
    assert SessionTree.read_header(path).title == "雨夜"
    chat.tree.append("user", text="再来")
    chat.tree.commit()  # appending after CRLF lines still works
    assert SessionTree.open(path).latest("user").text == "再来"


def _open_bounded(path, seconds=20.0):
    """SessionTree.open + a walk of the active branch in a thread; fails (instead of eating memory) on a loop."""
    out: dict = {}

    def run():
        t = SessionTree.open(path)
        out["tree"], out["path"] = t, t.path_to()

    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(seconds)
    assert not th.is_alive(), "opening a session with a parent-id cycle did not finish"
    return out["tree"], out["path"]


def test_a_parent_id_cycle_loads_the_sane_branch(tmp_path):
    p = tmp_path / "session.jsonl"
    rows = [
        {"id": "h", "parent_id": None, "type": "header", "ts": 1},
        {"id": "a", "parent_id": "c", "type": "user", "ts": 2, "text": "一"},   # a -> c -> b -> a: a cycle
        {"id": "b", "parent_id": "a", "type": "assistant", "ts": 3, "text": "二"},
        {"id": "c", "parent_id": "b", "type": "user", "ts": 4, "text": "三"},
        {"id": "d", "parent_id": "zz", "type": "assistant", "ts": 5, "text": "四"},  # dangling parent
        {"id": "l", "parent_id": None, "type": "leaf", "ts": 6, "target": "d"},
    ]
    p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", "utf-8")
    tree, path = _open_bounded(p)
    assert [e.id for e in path] == ["h", "a", "b", "c", "d"]
    assert any("环" in w for w in tree.load_warnings) and any("损坏" in w for w in tree.load_warnings)


def test_a_header_pointing_into_a_cycle_is_cut(tmp_path):
    p = tmp_path / "session.jsonl"
    rows = [{"id": "h", "parent_id": "a", "type": "header", "ts": 1},
            {"id": "a", "parent_id": "h", "type": "user", "ts": 2, "text": "一"}]
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n", "utf-8")
    tree, path = _open_bounded(p)
    assert [e.id for e in path] == ["h", "a"] and tree.load_warnings
