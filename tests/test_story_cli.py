"""``liyuan story checkpoints | restore [--with-conversation] | export`` run as a real process (seed 000,
「检查点：改坏了能回去」): the chat is built in-process first (an import checkpoint, then one agent turn that edits
a chapter and adds one), then the CLI is driven with ``LIYUAN_HOME`` pointing at the test's data folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers import DEMO_CARD, ROOT

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.paths import chat_dir
from liyuan_desktop.core.session.tree import SessionTree
from liyuan_desktop.core.story.checkpoints import StoryHistory

CHAPTERS = {
    "000-开场.md": "*雨下到第三天。*\n\n「茶是热的。」\n",
    "001-雨夜问名.md": "她抬起头。\n\n「记得。」她说。\n",
    "002-坦言.md": "她把伞挂回去。\n",
}
EDITED = "「记得。」她背对着你，声音很慢。"
NEW_CHAPTER = ("003-雨停.md", "檐外的雨停了。\n")
SPEC = "青梧/局T"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)  # LIYUAN_HOME is the test's own folder (conftest)
    env["PYTHONIOENCODING"] = "utf-8"
    return subprocess.run([sys.executable, "-m", "liyuan_desktop", *args], cwd=str(ROOT), env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)


def files_of(d: Path) -> dict[str, str]:
    return {p.name: p.read_bytes().decode("utf-8") for p in sorted((d / "正文").glob("*.md"))}


@pytest.fixture
async def book():
    """An agent chat 青梧/局T: checkpoint 1 = user import of three chapters; checkpoint 2 = an agent turn that
    edited 001 and wrote 003. Returns (chat folder, user entry id of that turn)."""
    assert os.environ["LIYUAN_HOME"]  # set per test by conftest (monkeypatch); the CLI processes inherit it
    card = load_card(DEMO_CARD)
    d = chat_dir(card.name, "局T")
    model = ReplayModel(
        actor=[{"tool_calls": [
                   {"name": "edit", "arguments": {"path": "001-雨夜问名.md", "oldText": "「记得。」她说。", "newText": EDITED}},
                   {"name": "write", "arguments": {"path": NEW_CHAPTER[0], "content": NEW_CHAPTER[1]}}]},
               {"content": "改好了：001 那句放慢了，另起一章写雨停。"}],
        scribe=['{"patch": {"time": "雨停之后"}}'])
    chat = Chat.create(d, card, model, mode="agent")
    chat.import_chapters(list(CHAPTERS.items()), message="导入三章")
    res = await chat.send("把「记得。」改得有余味些，再补一章雨停。")
    assert res.outcome == "discussed", res.error
    user = chat.tree.latest("user")
    (d / "正文" / "笔记.txt").write_text("不是章节，恢复时不动。", "utf-8")
    return d, user.id


def checkpoints(d: Path) -> list[dict]:
    r = run_cli("story", "checkpoints", str(d), "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def after_turn() -> dict[str, str]:
    out = dict(CHAPTERS)
    out["001-雨夜问名.md"] = out["001-雨夜问名.md"].replace("「记得。」她说。", EDITED)
    out[NEW_CHAPTER[0]] = NEW_CHAPTER[1]
    return out


# --- checkpoints -------------------------------------------------------------------------------------------------


def test_checkpoints_listed(book):
    d, turn = book
    r = run_cli("story", "checkpoints", SPEC, "--json")
    assert r.returncode == 0, r.stderr
    cps = json.loads(r.stdout)
    assert [c["author"] for c in cps] == ["user", "agent"]
    imp, agent = cps
    assert imp["message"] == "导入三章" and "turnId" not in imp
    assert sorted(imp["files"]) == sorted(CHAPTERS) and imp["changed"]["added"] == sorted(CHAPTERS)
    assert agent["turnId"] == turn and agent["message"].startswith("把「记得。」")
    assert agent["changed"]["modified"] == ["001-雨夜问名.md"] and agent["changed"]["added"] == [NEW_CHAPTER[0]]
    assert cps == [c.model_dump(exclude_none=True) for c in StoryHistory(d / "正文", d / "历史").checkpoints()]

    text = run_cli("story", "checkpoints", str(d))  # the folder works as well as 卡名/对话名
    assert text.returncode == 0, text.stderr
    lines = text.stdout.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(agent["id"]) and "agent" in lines[0] and "新增 1" in lines[0] and "修改 1" in lines[0]
    assert lines[1].startswith(imp["id"]) and "你" in lines[1] and "导入三章" in lines[1]


# --- restore -----------------------------------------------------------------------------------------------------


def test_restore_rewrites_removes_and_undo(book):
    d, _ = book
    imp, agent = checkpoints(d)
    leaf_before = SessionTree.open(d / "session.jsonl").leaf_id
    assert files_of(d) == after_turn()

    r = run_cli("story", "restore", SPEC, imp["id"])
    assert r.returncode == 0, r.stderr
    assert imp["id"] in r.stdout
    assert files_of(d) == CHAPTERS                     # 001 rewritten, 003 (added by the turn) removed
    assert not (d / "正文" / NEW_CHAPTER[0]).exists()
    assert (d / "正文" / "笔记.txt").read_text("utf-8") == "不是章节，恢复时不动。"
    cps = checkpoints(d)
    assert len(cps) == 3                                # the folder equalled the latest: no auto-save needed
    new = cps[-1]
    assert new["restoredFrom"] == imp["id"] and new["author"] == "user" and new["id"] in r.stdout
    assert new["files"] == imp["files"] and new["changed"]["removed"] == [NEW_CHAPTER[0]]
    assert SessionTree.open(d / "session.jsonl").leaf_id == leaf_before  # files only: the conversation stays

    # undo = restore the checkpoint made just before the restore
    before = cps[-2]
    assert before["id"] == agent["id"]
    r = run_cli("story", "restore", SPEC, before["id"])
    assert r.returncode == 0, r.stderr
    assert files_of(d) == after_turn()
    last = checkpoints(d)[-1]
    assert last["restoredFrom"] == agent["id"] and last["files"] == agent["files"]


def test_restore_saves_unsaved_edits_first_and_undo_brings_them_back(book):
    d, _ = book
    imp, _agent = checkpoints(d)
    mine = "我自己在编辑器里改的。\n"
    (d / "正文" / "002-坦言.md").write_text(mine, "utf-8")
    cps = [c["id"] for c in checkpoints(d)]
    prefix = next(imp["id"][:n] for n in range(1, len(imp["id"]) + 1)
                  if sum(c.startswith(imp["id"][:n]) for c in cps) == 1)
    r = run_cli("story", "restore", SPEC, prefix)       # a unique prefix is enough
    assert r.returncode == 0, r.stderr
    assert files_of(d) == CHAPTERS
    cps = checkpoints(d)
    saved, new = cps[-2], cps[-1]
    assert saved["message"] == "恢复前自动保存" and saved["changed"]["modified"] == ["002-坦言.md"]
    assert new["restoredFrom"] == imp["id"]
    r = run_cli("story", "restore", SPEC, saved["id"])
    assert r.returncode == 0, r.stderr
    assert files_of(d)["002-坦言.md"] == mine and files_of(d)[NEW_CHAPTER[0]] == NEW_CHAPTER[1]


def test_restore_with_conversation_moves_the_leaf_before_the_turn(book):
    d, turn = book
    imp, agent = checkpoints(d)
    tree = SessionTree.open(d / "session.jsonl")
    parent = tree.get(turn).parent_id
    assert tree.leaf_id != parent and parent is not None

    r = run_cli("story", "restore", SPEC, agent["id"], "--with-conversation")
    assert r.returncode == 0, r.stderr
    assert "对话也回到了那一轮之前" in r.stdout
    tree = SessionTree.open(d / "session.jsonl")
    assert tree.leaf_id == parent                        # the turn is off the active branch …
    assert turn not in [e.id for e in tree.path_to()]
    assert turn in tree.entries                          # … but nothing was deleted
    cps = checkpoints(d)
    assert cps[-1]["restoredFrom"] == imp["id"]  # 撤销本轮: the files go back to before the turn as well
    chat = Chat.open(d, load_card(DEMO_CARD), ReplayModel(actor=[]))
    assert [i for i in chat.transcript() if i["role"] == "user"] == []

    # undo the file part by restoring the checkpoint made just before
    r = run_cli("story", "restore", SPEC, cps[-2]["id"])
    assert r.returncode == 0, r.stderr
    assert checkpoints(d)[-1]["restoredFrom"] == cps[-2]["id"]


def test_restore_with_conversation_files_go_back_before_the_turn_too(book):
    d, _ = book
    _imp, agent = checkpoints(d)
    r = run_cli("story", "restore", SPEC, agent["id"], "--with-conversation")
    assert r.returncode == 0, r.stderr
    assert files_of(d) == CHAPTERS


# --- export ------------------------------------------------------------------------------------------------------

TITLES = ["开场", "雨夜问名", "坦言", "雨停"]


def test_export_markdown(book, tmp_path):
    d, _ = book
    out = tmp_path / "书.md"
    r = run_cli("story", "export", SPEC, "--format", "md", "-o", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text("utf-8")
    assert text.startswith("# 局T\n")
    heads = [ln[3:] for ln in text.splitlines() if ln.startswith("## ")]
    assert heads == TITLES
    assert EDITED in text and "檐外的雨停了。" in text


def test_export_epub(book, tmp_path):
    d, _ = book
    out = tmp_path / "书.epub"
    r = run_cli("story", "export", SPEC, "--format", "epub", "-o", str(out))
    assert r.returncode == 0, r.stderr
    with zipfile.ZipFile(out) as z:
        assert z.read("mimetype") == b"application/epub+zip"
        docs = {n: z.read(n).decode("utf-8") for n in z.namelist() if n.endswith(".xhtml") and "chap_" in n}
    assert len(docs) == 4
    ordered = [docs[n] for n in sorted(docs)]
    for title, html in zip(TITLES, ordered):
        assert f"<h2>{title}</h2>" in html
    assert "声音很慢" in ordered[1] and "檐外的雨停了" in ordered[3]


def test_export_docx(book, tmp_path):
    docx = pytest.importorskip("docx")
    d, _ = book
    out = tmp_path / "书.docx"
    r = run_cli("story", "export", SPEC, "--format", "docx", "-o", str(out))
    assert r.returncode == 0, r.stderr
    doc = docx.Document(str(out))
    heads = [p.text for p in doc.paragraphs if p.style.name.startswith("Heading")]
    assert heads == TITLES
    body = "\n".join(p.text for p in doc.paragraphs)
    assert "声音很慢" in body and "檐外的雨停了。" in body


# --- bad input ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ("story", "checkpoints", "青梧/没有这局", "--json"),
    ("story", "restore", "没有这局", "abc"),
    ("story", "export", "青梧/没有这局", "--format", "epub", "-o", "x.epub"),
])
def test_bad_chat_name_exit_2_one_line(args):
    r = run_cli(*args)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("liyuan: ") and "找不到对话" in lines[0]
    assert "Traceback" not in r.stderr


def test_bad_checkpoint_id_exit_2_one_line(book):
    d, _ = book
    before = files_of(d)
    r = run_cli("story", "restore", SPEC, "zzzz-nope")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "检查点" in lines[0] and "Traceback" not in r.stderr
    assert files_of(d) == before and len(checkpoints(d)) == 2


def test_story_without_subcommand_is_a_usage_error():
    r = run_cli("story")
    assert r.returncode == 2 and "Traceback" not in r.stderr
