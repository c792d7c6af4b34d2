"""Importing prose into an agent-mode chat (core.prose_import): a folder of chapters, one long .txt, a role-play
chat's finals (seed 000: the opening and the first finals became three chapters, one user checkpoint)."""

from __future__ import annotations

import json

import pytest
from helpers import DEMO_CARD

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.chat.prose_import import (
    ProseImportError,
    chapters_from_roleplay,
    decode_text,
    import_folder,
    import_long_text,
    natural_key,
    roleplay_to_agent,
    title_from_filename,
)
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.paths import chat_dir
from liyuan_desktop.core.session.tree import SessionError, SessionTree


def write(text: str, version: int = 0) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": version, "content": text}}]}


def seal(version: int = 1) -> dict:
    return {"tool_calls": [{"name": "draft_seal", "arguments": {"version": version}}]}


def prev_edit(old: str, new: str, version: int = 0) -> dict:
    return {"tool_calls": [{"name": "previous_draft_edit",
                            "arguments": {"version": version, "edits": [{"old": old, "new": new}]}}]}


def ask(question: str = "接下来？") -> dict:
    return {"tool_calls": [{"name": "ask", "arguments": {"question": question, "options": ["甲", "乙"]}}]}


def patch(p: dict) -> str:
    return json.dumps({"patch": p}, ensure_ascii=False)


@pytest.fixture
def card():
    return load_card(DEMO_CARD)


@pytest.fixture
def agent(card) -> Chat:
    return Chat.create(chat_dir(card.name, "长篇"), card, ReplayModel(actor=[]), mode="agent")


def _files(chat: Chat) -> dict[str, str]:
    return {p.name: p.read_bytes().decode("utf-8") for p in sorted((chat.dir / "正文").glob("*.md"))}


# --- helpers -----------------------------------------------------------------------------------------------------


def test_natural_order_and_titles():
    names = ["第十章 归.txt", "10-尾声.md", "2-雨停.md", "第二章 问.txt", "1-开篇.md", "第一章 雨.txt"]
    assert sorted(names, key=natural_key) == ["1-开篇.md", "2-雨停.md", "10-尾声.md",
                                              "第一章 雨.txt", "第二章 问.txt", "第十章 归.txt"]
    assert title_from_filename("01-雨夜问名.txt") == "雨夜问名"
    assert title_from_filename("003 坦言.md") == "坦言"
    assert title_from_filename("2024年的雨.md") == "2024年的雨"
    assert title_from_filename("07.txt") == ""


def test_decode_text():
    s = "第一章\r\n「雨。」——全角，标点\n"
    assert decode_text(b"\xef\xbb\xbf" + s.encode("utf-8")) == s
    assert decode_text(s.encode("gb18030")) == s
    assert decode_text(b"\xff\xfe" + s.encode("utf-16-le")) == s
    with pytest.raises(ProseImportError):
        decode_text(b"abc\x00def")


# --- a folder ----------------------------------------------------------------------------------------------------


def test_import_folder_md_txt_natural_order_gb18030(agent, tmp_path):
    src = tmp_path / "书稿"
    src.mkdir()
    one = "*雨下到第三天。*\r\n\r\n「客官。」她说。\n"          # CRLF kept exactly
    two = "她把伞挂回去。\n\n——雨停了。"                        # no final newline, kept
    ten = "十年。\n"
    (src / "1-雨夜.md").write_bytes(one.encode("utf-8"))
    (src / "2-坦言.txt").write_bytes(two.encode("gb18030"))      # a Windows-Chinese .txt
    (src / "10-尾声.txt").write_bytes(b"\xef\xbb\xbf" + ten.encode("utf-8"))  # BOM dropped
    (src / "notes.json").write_text("{}", "utf-8")              # not prose
    (src / ".hidden.md").write_text("x", "utf-8")
    (src / "sub").mkdir()
    (src / "sub" / "3-子.md").write_text("不进来", "utf-8")

    cp = import_folder(agent, src)

    assert cp is not None and cp.author == "user" and cp.message == "导入 3 章"
    files = _files(agent)
    assert list(files) == ["001-雨夜.md", "002-坦言.md", "003-尾声.md"]
    assert files["001-雨夜.md"] == one
    assert files["002-坦言.md"] == two
    assert files["003-尾声.md"] == ten
    assert sorted(cp.files) == list(files) and cp.changed.added == list(files)
    assert agent.history_log.checkpoints() == [cp]


def test_import_folder_continues_numbering_and_bad_file_writes_nothing(agent, tmp_path):
    agent.import_chapters([("000-开场.md", "开场。\n")], message="导入 1 章")
    src = tmp_path / "更多"
    src.mkdir()
    (src / "第一章 雨夜问名.md").write_text("甲\n", "utf-8")
    (src / "第二章.txt").write_text("乙\n", "utf-8")
    cp = import_folder(agent, src)
    assert cp.message == "导入 2 章"
    assert list(_files(agent)) == ["000-开场.md", "001-雨夜问名.md", "002-第二章.md"]
    assert cp.changed.added == ["001-雨夜问名.md", "002-第二章.md"]

    bad = tmp_path / "坏"
    bad.mkdir()
    (bad / "1.md").write_text("好的\n", "utf-8")
    (bad / "2.txt").write_bytes(b"\xff\xfe" + "半个\x00".encode("utf-16-le"))  # NUL inside: not prose
    before = _files(agent)
    with pytest.raises(ProseImportError):
        import_folder(agent, bad)
    assert _files(agent) == before and len(agent.history_log.checkpoints()) == 2

    empty = tmp_path / "空"
    empty.mkdir()
    assert import_folder(agent, empty) is None
    with pytest.raises(ProseImportError):
        import_folder(agent, tmp_path / "没有这个文件夹")


# --- one long text -----------------------------------------------------------------------------------------------


def test_import_long_text_splits_at_headings(agent, tmp_path):
    text = ("雨夜问名·全本\n\n"
            "第一章 雨夜问名\n\n她抬起头。\n「客官。」\n\n"
            "第二章：坦言\n她说了实话。\n\n\n"
            "Chapter 3 Dawn\nThe rain stopped.\n")
    p = tmp_path / "全本.txt"
    p.write_bytes(text.encode("gb18030"))
    cp = import_long_text(agent, p)
    assert cp is not None and cp.message == "导入 4 章" and cp.author == "user"
    files = _files(agent)
    assert list(files) == ["001-序.md", "002-雨夜问名.md", "003-坦言.md", "004-Dawn.md"]
    assert files["001-序.md"] == "雨夜问名·全本\n"
    assert files["002-雨夜问名.md"] == "她抬起头。\n「客官。」\n"
    assert files["003-坦言.md"] == "她说了实话。\n"
    assert files["004-Dawn.md"] == "The rain stopped.\n"


def test_import_long_text_without_headings_is_one_chapter(agent, tmp_path):
    p = tmp_path / "03-短篇.txt"
    p.write_text("只有一段。\n", "utf-8")
    cp = import_long_text(agent, p)
    assert cp.message == "导入 1 章" and list(_files(agent)) == ["001-短篇.md"]
    empty = tmp_path / "空.txt"
    empty.write_text("  \n", "utf-8")
    assert import_long_text(agent, empty) is None


# --- role-play → agent -------------------------------------------------------------------------------------------


async def _play_roleplay(card) -> Chat:
    """Five beats: two sealed, one revising beat 2, one stopped before 收笔 (draft only), one more sealed."""
    model = ReplayModel(
        actor=[write("她抬起头。\n\n「记得。」\n"), seal(),
               write("雨还在下。\n她把伞挂回去。"), seal(),
               prev_edit("雨还在下。", "雨渐渐小了。"),
               write("没写完的稿子"), ask(),
               write("天亮了。\n"), seal()],
        scribe=[patch({"time": "傍晚（雨中）", "location": "听雨轩", "flags": {"旅人入住天数": "三天"}}),
                patch({"characters": {"青梧": {"affinity": 5, "status": "客栈掌柜"}}, "plot_threads": ["旧油纸伞"]}),
                patch({"time": "清晨"})])
    rp = Chat.create(chat_dir(card.name, "扮演"), card, model)
    r = [await rp.send(t) for t in ("你好", "再说说", "把上一拍改一下", "然后呢", "天亮")]
    assert [x.outcome for x in r] == ["sealed", "sealed", "revised_previous", "stopped", "sealed"]
    return rp


async def test_roleplay_to_agent(card):
    rp = await _play_roleplay(card)
    chapters = chapters_from_roleplay(rp)
    assert chapters == [("000-开场.md", card.first_mes),                       # 【开场 · 青梧】 line dropped
                        ("001-第1拍.md", "她抬起头。\n\n「记得。」\n"),
                        ("002-第2拍.md", "雨渐渐小了。\n她把伞挂回去。"),       # the revision applied
                        ("003-第5拍.md", "天亮了。\n")]                         # the stopped draft left out

    dest = chat_dir(card.name, "长篇-从扮演")
    agent = roleplay_to_agent(rp, dest, ReplayModel(actor=[]))
    assert agent.mode == "agent" and agent.dir == dest
    assert _files(agent) == dict(chapters)
    cps = agent.history_log.checkpoints()
    assert len(cps) == 1
    assert cps[0].author == "user" and cps[0].message == "从扮演对话导入 4 章" and cps[0].turnId is None
    assert cps[0].changed.added == [n for n, _ in chapters]

    # the ledger carried over as the agent chat's first snapshot (source init), on disk
    tree = SessionTree.open(dest / "session.jsonl")
    assert tree.header.mode == "agent"
    states = list(tree.iter_type("rp-state"))
    assert len(states) == 1 and states[0].source == "init"
    assert states[0].state == rp.current_state().to_dict()
    assert rp.current_state().time == "清晨"
    assert agent.current_state().to_dict() == rp.current_state().to_dict()
    assert tree.latest("opening") is None and tree.latest("user") is None  # the conversation starts empty
    block = agent.agent.state_block(agent.current_state())
    assert "清晨" in block and "听雨轩" in block and "003-第5拍.md" in block

    # reopening works and the role-play chat is untouched
    again = Chat.open(dest, card, ReplayModel(actor=[]))
    assert again.mode == "agent" and again.current_state().to_dict() == rp.current_state().to_dict()
    assert SessionTree.open(rp.dir / "session.jsonl").header.mode == "roleplay"
    with pytest.raises(SessionError):
        roleplay_to_agent(rp, dest, ReplayModel(actor=[]))


async def test_roleplay_seed_shape_three_chapters(card):
    """As in the seed: the opening and the first two finals become three chapters, 「从扮演对话导入 3 章」."""
    model = ReplayModel(actor=[write("一。\n"), seal(), write("二。\n"), seal()],
                        scribe=[patch({"time": "夜"}), patch({"location": "渡口"})])
    rp = Chat.create(chat_dir(card.name, "局C-扮演"), card, model)
    await rp.send("一")
    await rp.send("二")
    agent = roleplay_to_agent(rp, chat_dir(card.name, "局C"), ReplayModel(actor=[]))
    assert list(_files(agent)) == ["000-开场.md", "001-第1拍.md", "002-第2拍.md"]
    cp = agent.history_log.latest()
    assert cp.message == "从扮演对话导入 3 章" and len(cp.files) == 3
    st = agent.current_state()
    assert st.time == "夜" and st.location == "渡口"


async def test_roleplay_without_beats(card):
    rp = Chat.create(chat_dir(card.name, "空扮演"), card, ReplayModel(actor=[]))
    assert chapters_from_roleplay(rp) == [("000-开场.md", card.first_mes)]
    agent = roleplay_to_agent(rp, chat_dir(card.name, "空长篇"), ReplayModel(actor=[]))
    assert agent.history_log.latest().message == "从扮演对话导入 1 章"
    assert agent.tree.latest("rp-state").source == "init"
