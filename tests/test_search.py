"""Issue 17 "Search": words in one chat (the shown branch, every branch) and in every chat of the library, from the
engine and from ``liyuan search``."""

from __future__ import annotations

import json
import re

import pytest

from liyuan_desktop.cli import main as cli_main
from liyuan_desktop.core.cards import card_from_json
from liyuan_desktop.core.cards.library import cards_root
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.chat.search import Matcher, make_snippet, search_library
from liyuan_desktop.core.linear_regex import LinearRegexRefused
from liyuan_desktop.core.llm.replay import ReplayModel


def w(text: str) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]}


SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}


def make_card(name: str = "青梧"):
    d = cards_root() / name
    d.mkdir(parents=True, exist_ok=True)
    raw = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": name, "first_mes": "雨夜，茶馆。Rainy NIGHT."}}
    (d / "card.json").write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    return card_from_json(raw, str(d / "card.json")), d


async def played(tmp_dir, replies: list[str], users: list[str]) -> Chat:
    actor = []
    for r in replies:
        actor += [w(r), SEAL]
    card, d = make_card()
    chat = Chat.create(d / "对话" / "一号", card, ReplayModel(actor=actor, scribe=["{}"] * 10))
    for u in users:
        await chat.send(u)
    return chat


def test_matcher_is_case_insensitive_and_cjk_substring():
    m = Matcher("night")
    assert m.find("Rainy NIGHT.") == (6, 11)
    assert Matcher("茶馆").find("雨夜，茶馆。") == (3, 5)
    with pytest.raises(ValueError):
        Matcher("   ")
    assert Matcher("straße").find("STRASSE und Straße") is not None
    rx = Matcher(r"掌柜\w{2}", regex=True)
    assert rx.find("那位掌柜娘子笑了") == (2, 6)
    with pytest.raises(re.error):
        Matcher("(", regex=True)
    with pytest.raises(LinearRegexRefused):
        Matcher(r"(a)\1", regex=True)


def test_snippet_keeps_the_match_and_says_where_it_cut():
    text = "甲" * 200 + "\n\n 目标 \n" + "乙" * 200
    s, start, length = make_snippet(text, (text.index("目标"), text.index("目标") + 2))
    assert s[start:start + length] == "目标"
    assert s.startswith("…") and s.endswith("…") and "\n" not in s and len(s) <= 84


async def test_branch_search_finds_every_message_with_its_index_and_other_branches_on_request(tmp_path):
    chat = await played(tmp_path, ["掌柜抬头看你。", "她说：「住店吗？」", "另一条回答：掌柜笑了。"],
                        ["我推门进去", "我问掌柜有没有房"])
    hits = chat.search_messages("掌柜")
    assert [(h.role, h.index, h.beat) for h in hits] == [("assistant", 2, 1), ("user", 3, 2)]
    assert all(h.on_branch for h in hits)
    assert hits[0].snippet[hits[0].start:hits[0].start + hits[0].length] == "掌柜"
    assert chat.search_messages("rainy night")[0].role == "opening"
    # a regenerated reply puts the old one on another branch
    old_reply = chat.transcript()[-1]["id"]
    await chat.regenerate()
    assert [h.role for h in chat.search_messages("住店")] == []
    other = chat.search_messages("住店", all_branches=True)
    assert [(h.entry_id, h.index) for h in other] == [(old_reply, -1)]
    # jumping there: selecting the entry shows its branch, where it has an index
    chat.select(old_reply)
    assert chat.message_index(old_reply) == len(chat.transcript()) - 1
    assert chat.search_messages("住店")[0].index == chat.message_index(old_reply)


async def test_search_reads_a_revised_reply_by_its_new_text(tmp_path):
    chat = await played(tmp_path, ["原来的话。"], ["你好"])
    reply = chat.transcript()[-1]["id"]
    chat.tree.append("revision", target=reply, text="改过的话。", version=2)
    chat.tree.commit()
    assert [h.entry_id for h in chat.search_messages("改过")] == [reply]
    assert chat.search_messages("原来") == []
    assert [h.entry_id for h in chat.search_messages("原来", all_branches=True)] == [reply]


async def test_library_search_streams_every_chat_and_the_cli_prints_it(tmp_path, capsys):
    chat = await played(tmp_path, ["掌柜抬头看你。"], ["我推门进去"])
    card2, d2 = make_card("白鹭")
    Chat.create(d2 / "对话" / "二号", card2, ReplayModel(actor=[]))
    hits = list(search_library("雨夜"))
    assert sorted((h.card, h.chat) for h in hits) == [("白鹭", "二号"), ("青梧", "一号")]
    assert all(h.ts > 0 and h.chat_dir for h in hits)
    assert [h.card for h in search_library("雨夜", card="白鹭")] == ["白鹭"]
    assert [h.role for h in search_library("推门")] == ["user"]
    assert [h.role for h in search_library(r"掌柜\w", regex=True)] == ["assistant"]
    assert list(search_library("NIGHT", limit=1)).__len__() == 1
    with pytest.raises(ValueError):
        list(search_library("雨夜", card="没有这张卡"))
    # the CLI
    assert cli_main(["search", "推门", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(h["card"], h["chat"], h["role"], h["entry_id"]) for h in out] == \
        [("青梧", "一号", "user", chat.transcript()[1]["id"])]
    assert cli_main(["search", "掌柜"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("青梧 / 一号") and "【掌柜】" in line
    assert cli_main(["search", "(", "--regex"]) == 2
    assert "liyuan:" in capsys.readouterr().err
    assert cli_main(["search", "雨夜", "--card", "nope"]) == 2


def test_cli_search_prints_a_catalogued_refusal_in_the_chosen_language(capsys):
    """Issue 29: a regex nested too deeply for Python's parser is refused as ``regex.too_deep``, and ``liyuan
    search`` prints it in the --lang language (not the Chinese text of the exception)."""
    from liyuan_desktop.cli.common import set_language
    from liyuan_desktop.core.messages import message, render

    deep = "(" * 1000 + "a" + ")" * 1000
    try:
        assert cli_main(["--lang", "en", "search", deep, "--regex"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("liyuan: ") and render(message("regex.too_deep"), "en") in err
        assert not re.search(r"[\u4e00-\u9fff]", err)
    finally:
        set_language("zh")
