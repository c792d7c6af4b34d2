"""Issue 28, a summary per chapter: after an agent turn that wrote a chapter the model summarises it (real HTTP on
loopback: the turn's calls, the scribe, then the summary call), the summary is kept with the checkpoints (a restore
brings back the summaries of that moment), stale ones are marked and remade, the author can write their own, and the
agent's state block carries the summaries of the chapters before the one being written. A replay model is never
asked (its recorded runs stay byte-for-byte)."""

from __future__ import annotations

import json

import pytest
from helpers import DEMO_CARD
from sse_server import ScriptedServer, chunk, sse_reply

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm import OpenAIChatModel
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.story.summaries import summaries_block


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


def _tool(name: str, args: dict) -> list:
    return [chunk(tool_calls=[{"index": 0, "id": "c1", "type": "function",
                               "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}]),
            chunk(finish="tool_calls")]


async def test_a_written_chapter_is_summarised_after_the_turn(tmp_path, server):
    model = OpenAIChatModel(server.base_url, "test-model", "sk-test", retry_base_wait=0.0, read_timeout=5.0)
    chat = Chat.create(tmp_path / "书", load_card(DEMO_CARD), model, mode="agent")
    server.script(
        sse_reply(*_tool("write", {"path": "001-雨夜.md", "content": "林青在雨夜捡到玉佩。阿檀看见了。"})),
        sse_reply(chunk("第一章写好了。"), chunk(finish="stop")),
        sse_reply(chunk('{"patch": {}}'), chunk(finish="stop")),                    # the scribe
        sse_reply(chunk("林青在雨夜捡到一块玉佩，阿檀目睹了这一幕。"), chunk(finish="stop")),  # the summary
    )
    events: list = []
    res = await chat.send("写第一章", on_event=events.append)
    assert res.error is None
    sent = server.requests[-1].json
    assert sent["messages"][0]["content"].startswith("你在给一部长篇小说做章节摘要")
    assert "林青在雨夜捡到玉佩" in sent["messages"][1]["content"] and not sent.get("tools")
    (row,) = chat.chapter_summaries()
    assert (row.file, row.stale, row.by) == ("001-雨夜.md", False, "model")
    assert row.text == "林青在雨夜捡到一块玉佩，阿檀目睹了这一幕。"
    assert any("已为 1 章做了摘要" in getattr(e, "text", "") for e in events)
    first = chat.history_log.latest()

    # the next turn: the state block carries chapter 1's summary; the summary file joins the checkpoint
    server.script(
        sse_reply(*_tool("write", {"path": "002-天明.md", "content": "天亮了，林青把玉佩藏进袖中。"})),
        sse_reply(chunk("第二章好了。"), chunk(finish="stop")),
        sse_reply(chunk('{"patch": {}}'), chunk(finish="stop")),
        sse_reply(chunk("天亮后林青藏起了玉佩。"), chunk(finish="stop")),
    )
    n = len(server.requests)
    res = await chat.send("写第二章")
    assert res.error is None
    assert "【章节摘要】" in res.injection and "001-雨夜.md：林青在雨夜捡到一块玉佩" in res.injection
    assert "../章节摘要.json" in chat.history_log.latest().files
    assert len(server.requests) == n + 4

    # stale after a hand edit; the author's own summary is fresh
    (chat.dir / "正文" / "001-雨夜.md").write_text("林青在雨夜捡到玉佩，又丢了。", "utf-8")
    rows = {r.file: r for r in chat.chapter_summaries()}
    assert rows["001-雨夜.md"].stale and not rows["002-天明.md"].stale
    assert "001-雨夜.md（旧）" in summaries_block(chat.dir, chat.dir / "正文")
    chat.set_chapter_summary("001-雨夜.md", "玉佩得而复失。")
    rows = {r.file: r for r in chat.chapter_summaries()}
    assert not rows["001-雨夜.md"].stale and rows["001-雨夜.md"].by == "user"
    assert "files" in chat.last_changes.names()

    # a restore brings back the summaries of that moment
    chat.restore_checkpoint(first.id)
    assert [r.file for r in chat.chapter_summaries()] == ["001-雨夜.md"]
    # a failed call is said, not raised
    server.script(sse_reply(chunk(""), chunk(finish="stop")))
    (chat.dir / "正文" / "001-雨夜.md").write_text("又改了。", "utf-8")
    done, problems = await chat.summarize_chapters()
    assert done == [] and problems and "001-雨夜.md」的章节摘要没做成" in problems[0]
    chat.close()
    await model.aclose()


async def test_a_replay_model_is_never_asked(tmp_path):
    steps = [{"content": "", "tool_calls": [{"name": "write", "arguments": json.dumps(
        {"path": "001-x.md", "content": "雨。"}, ensure_ascii=False)}]}, {"content": "好了。", "tool_calls": []}]
    chat = Chat.create(tmp_path / "书", load_card(DEMO_CARD), ReplayModel(actor=steps, scribe=['{"patch": {}}']),
                       mode="agent")
    res = await chat.send("写")
    assert res.error is None and chat.chapter_summaries()[0].text == ""  # the scribe queue was not touched again
    chat.close()


def test_the_cli_lists_sets_and_makes_summaries(tmp_path):
    import contextlib
    import io

    from liyuan_desktop.cli import main

    chat = Chat.create(tmp_path / "书", load_card(DEMO_CARD), ReplayModel(actor=[], scribe=[]), mode="agent")
    chat.import_chapters([("001-雨夜.md", "雨。"), ("002-天明.md", "晴。")], message="导入")
    chat.close()
    replay = tmp_path / "answers.json"
    replay.write_text(json.dumps({"format": "liyuan-replay", "version": 1, "label": "摘要",
                                  "beats": [{"actor": [], "scribe": ["天晴了。"]}]}, ensure_ascii=False), "utf-8")

    def cli(*argv: str) -> tuple[int, str]:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = main(list(argv))
        return rc, buf.getvalue()

    rc, text = cli("story", "summaries", str(chat.dir), "--set", "001-雨夜.md", "--text", "下雨。")
    assert rc == 0 and "001-雨夜.md: 下雨。" in text and "002-天明.md: （还没有摘要）" in text
    rc, text = cli("story", "summaries", str(chat.dir), "--make", "--model", f"replay:{replay}")
    assert rc == 0 and "已为 1 章做了摘要：002-天明.md" in text and "002-天明.md: 天晴了。" in text
    rc, text = cli("--lang", "en", "story", "summaries", str(chat.dir), "--json")
    assert rc == 0 and [r["text"] for r in json.loads(text)] == ["下雨。", "天晴了。"]
    (chat.dir / "正文" / "001-雨夜.md").write_text("雨停了。", "utf-8")
    rc, text = cli("--lang", "en", "story", "summaries", str(chat.dir))
    assert "001-雨夜.md (stale): 下雨。" in text
