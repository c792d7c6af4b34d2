"""Issue 28, for web-novel authors: chapter length norms per book, a daily target with its streak (日更) and the buffer
of written-but-unpublished chapters (存稿) — computed from the chapter folder and the checkpoints (no log of their
own), with only the published marks and the settings kept in ``<chat>/网文.json``. Through the real engine (replayed
agent turns writing chapter files) and the CLI."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from helpers import DEMO_CARD

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.paths import chat_dir
from liyuan_desktop.core.story.webnovel import WebNovelSettings, load_webnovel, norm_of, status, streaks


def test_streaks_count_days_in_a_row_that_met_the_target():
    today = dt.date(2026, 12, 6)
    days = [("2026-12-01", 5000), ("2026-12-02", 4100), ("2026-12-03", 3000), ("2026-12-04", 4000),
            ("2026-12-05", 4500)]
    assert streaks(days, 4000, today) == (2, 2)  # 04 and 05; today not over yet
    assert streaks(days + [("2026-12-06", 4000)], 4000, today) == (3, 3)
    assert streaks(days, 0, today) == (5, 5)  # no target: any day that wrote
    assert streaks(days[:3], 4000, today) == (0, 2)  # the streak broke on the 3rd and nothing since
    assert streaks([], 4000, today) == (0, 0)
    assert streaks([("2026-12-05", -300)], 0, today) == (0, 0)  # a day that only cut text did not write


def test_norms_and_the_buffer():
    s = WebNovelSettings(chapter_min=2000, chapter_max=3000, published=["001.md"])
    assert (norm_of(1999, s), norm_of(2000, s), norm_of(3000, s), norm_of(3001, s)) == ("short", "", "", "long")
    assert norm_of(10, WebNovelSettings(chapter_min=0, chapter_max=0)) == ""
    st = status([("001.md", "一", 2500), ("002.md", "二", 1200), ("003.md", "三", 3600)], [], 0, s,
                dt.date(2026, 12, 6))
    assert (st.buffer_chapters, st.buffer_words, st.published) == (2, 4800, 1)
    assert st.short == ["二"] and st.long == ["三"]
    with pytest.raises(ValueError):
        WebNovelSettings(chapter_min=3000, chapter_max=2000)
    with pytest.raises(ValueError):
        WebNovelSettings(daily_target=-1)


def _turn(i: int, words: int) -> list[dict]:
    name = f"{i:03d}-第{i}章.md"
    return [{"content": "", "tool_calls": [{"name": "write", "arguments": json.dumps(
        {"path": name, "content": "雨" * words}, ensure_ascii=False)}]}, {"content": f"第{i}章好了。", "tool_calls": []}]


async def test_a_book_reports_norms_streak_and_buffer(tmp_path):
    card = load_card(DEMO_CARD)
    sizes = (2500, 1200, 3600)
    actor = [s for i, n in enumerate(sizes, 1) for s in _turn(i, n)]
    d = chat_dir(card.name, "网文")
    chat = Chat.create(d, card, ReplayModel(actor=actor, scribe=['{"patch": {}}'] * 3), mode="agent")
    for i in range(1, 4):
        res = await chat.send(f"写第{i}章")
        assert res.error is None
    p = chat.writing_progress()
    w = p.webnovel
    assert w is not None and (w.chapter_min, w.chapter_max, w.daily_target) == (2000, 3000, 0)  # the defaults
    assert [(c.file, c.norm, c.published) for c in p.chapters] == [
        ("001-第1章.md", "", False), ("002-第2章.md", "short", False), ("003-第3章.md", "long", False)]
    assert (w.buffer_chapters, w.buffer_words, w.today) == (3, 7300, 7300)
    assert w.streak == 1  # wrote today

    chat.set_webnovel(daily_target=8000, publish=["001-第1章.md"])
    assert "outline" in chat.last_changes.names()
    p = chat.writing_progress()
    assert p.chapters[0].published and p.webnovel.buffer_chapters == 2 and p.webnovel.published == 1
    assert p.webnovel.streak == 0  # 7300 of 8000 today: not met yet, and nothing before
    assert load_webnovel(d).published == ["001-第1章.md"]
    with pytest.raises(ValueError):
        chat.set_webnovel(publish=["没有这章.md"])
    with pytest.raises(ValueError):
        chat.set_webnovel(chapter_min=5000)  # above the maximum 3000
    assert load_webnovel(d).chapter_min == 2000  # nothing saved by a refused change
    chat.set_webnovel(unpublish=["001-第1章.md"], chapter_max=0)
    p = chat.writing_progress()
    assert p.webnovel.published == 0 and p.chapters[2].norm == ""
    chat.close()

    # the CLI, in both languages (in-process main, as the other CLI tests)
    import contextlib
    import io

    from liyuan_desktop.cli import main

    def cli(*argv: str) -> tuple[int, str]:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = main(list(argv))
        return rc, buf.getvalue()

    rc, text = cli("story", "webnovel", str(d), "--daily", "5000", "--publish", "002-第2章.md")
    assert rc == 0 and "今日 7300/5000 字 · 连更 1 天" in text and "存稿 2 章（6100 字）" in text
    assert "偏短：第2章" in text or "偏短：002" in text
    rc, text = cli("--lang", "en", "story", "webnovel", str(d))
    assert rc == 0 and "Today 7300/5000 words · streak 1 days" in text and "Buffer 2 chapters (6100 words)" in text
    rc, text = cli("story", "webnovel", str(d), "--json")
    data = json.loads(text)
    assert data["webnovel"]["published"] == 1 and data["chapters"][1]["published"] is True
    rc, _ = cli("story", "webnovel", str(d), "--publish", "nope.md")
    assert rc == 2


async def test_damaged_settings_and_summaries_never_stop_the_room(tmp_path):
    """A hand edit gone wrong — 1 MB of brackets or spaces in 网文.json / 章节摘要.json — gives the defaults, never an
    error in the progress line or the agent's state block."""
    from liyuan_desktop.core.story.summaries import load_summaries, summaries_block

    card = load_card(DEMO_CARD)
    d = chat_dir(card.name, "坏文件")
    chat = Chat.create(d, card, ReplayModel(actor=[], scribe=[]), mode="agent")
    chat.import_chapters([("001-雨.md", "雨。")], message="导入")
    for junk in ("[" * 1_000_000, " " * 1_000_000, "{\"chapter_min\": \"很多\"}"):
        (d / "网文.json").write_text(junk, "utf-8")
        (d / "章节摘要.json").write_text(junk, "utf-8")
        assert load_webnovel(d) == WebNovelSettings()
        assert load_summaries(d).chapters == {} and summaries_block(d, d / "正文") == ""
        assert chat.writing_progress().webnovel.chapter_min == 2000
    chat.set_webnovel(daily_target=3000)  # a save replaces the damaged file
    assert load_webnovel(d).daily_target == 3000
    chat.close()
