"""Issue 28 "Export": a role-play chat as a readable transcript (Markdown, HTML) — speaker names, the chosen swipe of
the shown branch, the card's display regex scripts applied as the window applies them, status bars left out or kept
as text, card HTML and hostile text never carried over as markup. Chats are made from real SillyTavern ``.jsonl``
files through the importer; the CLI is run as a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

from liyuan_desktop.core.cards import card_from_json, library
from liyuan_desktop.core.cards.meta import set_card_scripts_allowed
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.chat.folder import import_st_file
from liyuan_desktop.core.chat.transcript_export import (
    TranscriptOptions,
    export_transcript,
    html_text,
    readable,
    transcript_messages,
)
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.paths import chat_dir

#: MVU's placeholder → a TavernHelper-style status bar (a fenced HTML document the window puts in a frame)
BAR = {"scriptName": "状态栏", "findRegex": "/<StatusPlaceHolderImpl\\/>/g",
       "replaceString": "```html\n<html><head><style>.x{color:red}</style><script>fetch('https://evil.example/s')"
                        "</script></head><body><div class=x>好感度：{{user}} 80</div><div>地点：  茶馆</div></body>"
                        "</html>\n```",
       "placement": [2], "markdownOnly": True, "promptOnly": False, "disabled": False}
THINK = {"scriptName": "藏思考", "findRegex": "/<think>[\\s\\S]*?<\\/think>/g", "replaceString": "", "placement": [2],
         "markdownOnly": True, "promptOnly": False, "disabled": False}
HOSTILE = ("<think>秘密的想法</think>她笑了，**很轻**。\n\n<div onclick=\"steal()\">雨停了</div>"
           "<img src=https://evil.example/x.png><style>@import url(https://evil.example/c.css)</style>"
           "<a href=\"javascript:go()\">别点</a> a < b && c\n\n<StatusPlaceHolderImpl/>")


def st_chat(path: Path, user: str, char: str, reply_swipes: list[str], chosen: int, user_text: str) -> Path:
    lines = [{"user_name": user, "character_name": char, "create_date": "2024-01-01@10h00m00s", "chat_metadata": {}},
             {"name": char, "is_user": False, "mes": "雨夜，茶馆。", "send_date": "2024-01-01@10h00m00s"},
             {"name": user, "is_user": True, "mes": user_text, "send_date": "2024-01-01@10h01m00s"},
             {"name": char, "is_user": False, "mes": reply_swipes[chosen], "swipe_id": chosen, "swipes": reply_swipes,
              "variables": [{"好感度": 80} for _ in reply_swipes], "send_date": "2024-01-01@10h02m00s"}]
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", "utf-8")
    return path


@pytest.fixture
def chat(tmp_path):
    """A role-play chat of a card with a status-bar script and a thinking-hiding script, imported from a
    SillyTavern file whose reply has three swipes (the second chosen) and hostile HTML."""
    d = tmp_path / "card"
    d.mkdir()
    raw = {"spec": "chara_card_v3", "spec_version": "3.0",
           "data": {"name": "青梧", "first_mes": "雨夜。", "description": "d",
                    "extensions": {"regex_scripts": [BAR, THINK]}}}
    (d / "card.json").write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    set_card_scripts_allowed(d, True)
    card = card_from_json(raw, str(d / "card.json"))
    src = st_chat(tmp_path / "茶馆.jsonl", "林晚", "青梧", ["第一个回复", HOSTILE, "第三个回复"], 1,
                  "你好<script>alert(1)</script>")
    import_st_file(src, card, tmp_path / "chat")
    c = Chat.open(tmp_path / "chat", card, ReplayModel(actor=[]))
    yield c
    c.close()


def test_messages_have_names_the_chosen_swipe_and_the_display_rules(chat):
    msgs = transcript_messages(chat)
    assert [(m.role, m.speaker) for m in msgs] == [("opening", "青梧"), ("user", "林晚"), ("assistant", "青梧")]
    reply = msgs[-1]
    assert reply.swipe == [2, 3] and "第一个回复" not in reply.text and "第三个回复" not in reply.text
    assert reply.text.startswith("她笑了，**很轻**。") and "秘密的想法" not in reply.text  # the card's script hid it
    assert "雨停了" in reply.text and "好感度" not in reply.text and reply.status == []  # status bar left out
    assert msgs[1].text == "你好"  # the window drops a script element with its content
    kept = transcript_messages(chat, TranscriptOptions(status_bars="text"))[-1]
    assert kept.status == ["好感度：林晚 80\n地点： 茶馆"]  # macros filled by the script run; whitespace tidied
    raw = transcript_messages(chat, TranscriptOptions(display=False))[-1]
    assert "秘密的想法" in raw.text and raw.status == []  # stored text: no script ran, no status bar was made


def test_markdown_transcript(chat, tmp_path):
    out = export_transcript(chat, "md", tmp_path / "t.md", TranscriptOptions(status_bars="text", title="茶馆夜话"))
    md = out.read_text("utf-8")
    assert md.startswith("# 茶馆夜话\n\n青梧 与 林晚\n\n### 青梧\n")
    assert "### 林晚\n\n你好\n" in md and "### 青梧 （第 2/3 个回复）" in md
    assert "> **状态栏**\n>\n> 好感度：林晚 80\n> 地点： 茶馆" in md
    assert "<" not in md.replace("a < b", "")  # no tag of the card's is left in the text
    en = export_transcript(chat, "md", tmp_path / "e.md", TranscriptOptions(language="en")).read_text("utf-8")
    assert "青梧 with 林晚" in en and "(reply 2 of 3)" in en and "Status bar" not in en


def test_html_transcript_is_escaped_runs_nothing_and_loads_nothing(chat, tmp_path):
    page = export_transcript(chat, "html", tmp_path / "t.html", TranscriptOptions(status_bars="text")).read_text("utf-8")
    assert page.startswith("<!DOCTYPE html>") and "default-src 'none'" in page and "<style>" in page
    assert "evil.example" not in page and "javascript:" not in page and "onclick" not in page
    for tag in ("<script", "<img", "<iframe", "<a ", "<div onclick", "<link", "@import", "url("):
        assert tag not in page, tag
    assert "<strong>很轻</strong>" in page and "a &lt; b &amp;&amp; c" in page
    assert '<p class="speaker">青梧 <span class="swipe">（第 2/3 个回复）</span></p>' in page
    assert '<div class="status">好感度：林晚 80\n地点： 茶馆</div>' in page
    assert "<title>茶馆</title>" in page  # the chat's title (the imported file's name)
    with pytest.raises(ValueError, match="不认识的导出格式"):
        export_transcript(chat, "pdf", tmp_path / "t.pdf")


def test_readable_and_html_text_rules():
    text, bars = readable("前文\n```html\n<body><p>HP 10</p><script>x()</script></body>\n```\n```python\nprint(1)\n```\n后文",
                          "text")
    assert bars == ["HP 10"] and text == "前文\n```python\nprint(1)\n```\n后文"
    assert readable("纯文本 &amp; <3 没有标签", "omit") == ("纯文本 &amp; <3 没有标签", [])  # shown as written
    assert html_text("<details><summary>想法</summary>内容</details>&lt;b&gt;", collapse=True) == "想法\n内容\n<b>"
    assert html_text("<p>a" + "<span>" * 50_000 + "b</p>") == "\na" + "b\n"


def test_cli_export_chat_as_html_and_markdown_keeps_jsonl_default(tmp_path):
    card = library.ensure_demo_card()
    src = st_chat(tmp_path / "茶馆.jsonl", "Ann", card.name, ["first", "second <b>bold</b>", "third"], 2, "Hello")
    import_st_file(src, card.load(), chat_dir(card.name, "茶馆"))
    env = dict(os.environ, PYTHONIOENCODING="utf-8")

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "liyuan_desktop", *args], cwd=str(ROOT), env=env,
                              capture_output=True, text=True, encoding="utf-8", timeout=120)

    r = cli("export-chat", str(tmp_path / "t.html"), "--card", card.name, "--chat", "茶馆", "--format", "html")
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "t.html").read_text("utf-8")
    assert "third" in page and "second" not in page and ">Ann<" in page and "（第 3/3 个回复）" in page
    r = cli("--lang", "en", "export-chat", str(tmp_path / "t.md"), "--card", card.name, "--chat", "茶馆",
            "--format", "md")
    assert r.returncode == 0, r.stderr
    assert "### Ann\n\nHello" in (tmp_path / "t.md").read_text("utf-8")
    r = cli("export-chat", str(tmp_path / "t.jsonl"), "--card", card.name, "--chat", "茶馆")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "t.jsonl").read_text("utf-8").splitlines()[-1])["swipe_id"] == 2
    r = cli("export-chat", str(tmp_path / "x.md"), "--card", card.name, "--chat", "没有这局", "--format", "md")
    assert r.returncode == 2 and r.stderr.startswith("liyuan: ") and "Traceback" not in r.stderr
