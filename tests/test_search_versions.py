"""Issue 24 §3: searching every chat counts messages, not rows, and folds the versions of one message (swipes, an
edited user message, a revised reply) into one — in the engine (``group_hits``) and in ``liyuan search``."""

from __future__ import annotations

import json

from test_search import played

from liyuan_desktop.cli import main as cli_main
from liyuan_desktop.core.chat.search import found_label, group_hits, search_library
from liyuan_desktop.core.messages import render


async def test_versions_of_one_reply_are_one_message_with_the_shown_one_first(tmp_path, capsys):
    chat = await played(tmp_path, ["灯亮了。", "灯灭了。", "灯又亮了。"], ["我看那盏灯"])
    first = chat.transcript()[-1]["id"]
    await chat.regenerate()
    await chat.regenerate()
    third = chat.transcript()[-1]["id"]
    chat.select(first)  # the shown branch has the first version again
    chat.tree.append("revision", target=first, text="灯亮了，又暗了。", version=2)
    chat.tree.commit()
    hits = list(search_library("灯"))
    # the user message, three replies and one revised text
    assert len(hits) == 5
    groups = group_hits(hits)
    assert [(g.first.role, len(g.versions)) for g in groups] == [("user", 1), ("assistant", 4)]
    reply = groups[1]
    assert [(h.version, h.revised) for h in reply.versions] == [(1, 0), (2, 0), (3, 0), (1, 2)]
    assert reply.first.entry_id == first and reply.first.revised == 2 and reply.first.active
    assert [h.active for h in reply.versions] == [False, False, False, True]
    assert render(found_label(groups), "en") == "2 messages found (5 versions)"
    assert render(found_label(groups), "zh") == "找到 2 条消息（共 5 个版本）"
    # the CLI says the same: two lines, the reply's with its versions, the same count
    assert cli_main(["--lang", "en", "search", "灯"]) == 0
    out = capsys.readouterr()
    lines = out.out.strip().splitlines()
    assert len(lines) == 2 and lines[1].count("[灯]") == 1  # the match marked the English way (Chinese: 【灯】)
    assert "[4 versions: version 1, version 2, version 3, version 1 (revised)]" in lines[1]
    assert "2 messages found (5 versions)" in out.err
    assert cli_main(["search", "灯", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [len(m["versions"]) for m in data] == [1, 4]
    assert data[1]["entry_id"] == first and third in [v["entry_id"] for v in data[1]["versions"]]


async def test_an_edited_user_message_is_one_message_in_two_versions(tmp_path):
    chat = await played(tmp_path, ["好。", "行。"], ["我问掌柜有没有房"])
    user = chat.transcript()[1]["id"]
    await chat.edit_user(user, "我问掌柜还有没有空房")
    hits = list(search_library("掌柜"))
    assert len(hits) == 2
    groups = group_hits(hits)
    assert len(groups) == 1 and groups[0].first.role == "user"
    assert [(h.version, h.active) for h in groups[0].versions] == [(1, False), (2, True)]
