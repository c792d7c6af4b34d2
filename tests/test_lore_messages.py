"""What the world-info engine (core/lore) tells the user is built by key from core/messages.py CATALOG: the same
Chinese text as before (so logs, stored warnings and golden runs do not change), rendered in English on request.
What it tells the model (list_titles' 「（常驻）」, the lore text) stays out of the catalog."""

from __future__ import annotations

import re

from liyuan_desktop.core.lore import Lorebook, ScanMessage, activation
from liyuan_desktop.core.lore import settings as wis
from liyuan_desktop.core.messages import CATALOG, Msg, message, render

CJK = re.compile(r"[\u4e00-\u9fff]")


def _english(w: str) -> str:
    en = render(w, "en")
    assert not CJK.search(en), f"still Chinese in English: {en!r} (from {w!r})"
    return en


def test_book_load_warnings_are_catalog_messages():
    wi = Lorebook.from_any({"entries": {"0": 5, "1": {"uid": 1, "key": ["a"], "content": "b"}}}, "wi")
    card_book = Lorebook.from_any({"entries": [7, {"keys": ["a"], "content": "b"}]}, "cb")
    assert wi.warnings == ["世界书条目 0 不是对象，已跳过"]
    assert card_book.warnings == ["世界书第 1 条不是对象，已跳过", "世界书条目 0 没有 enabled 字段，按 SillyTavern 视为禁用"]
    for w in wi.warnings + card_book.warnings:
        assert isinstance(w, Msg) and w.key.startswith("bookwarn.")
        _english(w)
    assert render(wi.warnings[0], "en") == "World-book entry 0 is not an object; skipped"


def test_st_settings_notes_keep_their_chinese_and_render_in_english():
    data = {"world_info_settings": {"world_info_depth": "x", "world_info_budget": 400, "world_info_min_activations": -3,
                                    "world_info_recursive": False, "world_info_newthing": 1,
                                    "world_info": {"globalSelect": ["甲书", "乙书"]}}}
    _settings, notes = wis.from_st_settings(data)
    assert notes == [
        "读入 2 项世界书设置：world_info_budget=25、world_info_recursive=False",
        "world_info_depth = 'x' 不是整数，保留 2",
        "world_info_budget = 400 大于 100（旧版的写法），按 SillyTavern 改为 25",
        "world_info_min_activations = -3 超出范围，保留 0",
        "SillyTavern 里全局启用的世界书（甲书、乙书）没有一起导入：把它们的 JSON 放进梨园数据文件夹的「世界书」文件夹即可全局启用",
        "这些设置梨园还不认识，已忽略：world_info_newthing",
    ]
    assert all(isinstance(n, Msg) for n in notes)
    assert render(notes[0], "en") == "Read 2 world-info settings: world_info_budget=25, world_info_recursive=False"
    assert render(notes[1], "en") == "world_info_depth = 'x' is not an integer; kept 2"
    for n in notes[2:4] + notes[5:]:
        _english(n)
    assert render(notes[4], "en").startswith("The world books SillyTavern enables globally (甲书, 乙书)")


def test_refused_regex_key_reasons_render_with_their_cause():
    inner = message("regex.too_deep")
    why = message("lorekey.unsafe", key="/(a)\\1/", why=inner)
    assert why == f"正则关键词 /(a)\\1/ 无法安全运行：{inner}（JavaScript 引擎不可用）"
    assert render(why, "en") == ("The regex key /(a)\\1/ cannot be run safely: " + inner.render("en")
                                 + " (the JavaScript engine is not available)")
    plain = message("lorekey.unusable", key="/x/u", why="Unicode property escapes (\\p{…}) are not supported")
    assert _english(plain).startswith("The regex key /x/u cannot be used: Unicode property escapes")
    # a plain text is never matched back to a key (issue 32): it is shown as it is
    assert render(str(why), "en") == str(why)
    assert "lorekey.unsafe" in CATALOG and "lorekey.unusable" in CATALOG


def test_the_safety_notice_is_a_catalog_message(monkeypatch):
    monkeypatch.setattr(activation, "SAFETY_MAX_ENTRIES", 3)
    book = Lorebook.from_any({"entries": {str(i): {"uid": i, "key": ["剑"], "content": f"第{i}条。"}
                                          for i in range(8)}}, "b")
    res = book.activate_detailed([ScanMessage(name="甲", text="拔剑")])
    notes = [w for w in res.warnings if "停止扫描" in w]  # ActivationResult.warnings keeps the Msg (issue 32)
    assert notes and isinstance(notes[0], Msg)
    assert notes and notes[0] == "世界书激活条目过多：已激活 3 条（约 12 字）后停止扫描，其余条目这一拍不发送（可在世界书设置里设预算或递归步数上限）"
    assert render(notes[0], "en") == message("beat.lore_safety", n=3, chars="12").render("en")
    _english(notes[0])
