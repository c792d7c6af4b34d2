"""Default names per language (issue 32 §1): a new chat is 对话-… / Chat-…, the demo 演示-… / Demo-…, a duplicate
「<old> 的副本」 / "<old> copy"; the user's turns show the persona's name, or the window's own 你 / You when none is
set (``Chat.user_label`` is then ""); sampling labels are one language each; the preset report follows ``lang``."""

from __future__ import annotations

import re

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.cards.library import dated_chat_name, ensure_demo_card, new_chat_dir
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.chat.manage import duplicate_chat
from liyuan_desktop.core.llm import ReplayModel
from liyuan_desktop.core.llm.sampling import SAMPLING_FIELDS, field_label
from liyuan_desktop.core.messages import render
from liyuan_desktop.core.paths import demo_card_path
from liyuan_desktop.core.prompt.presets.store import PresetReport

CJK = re.compile(r"[\u4e00-\u9fff]")


def test_dated_names_per_language():
    assert re.fullmatch(r"对话-\d{8}-\d{6}", dated_chat_name("chat", "zh"))
    assert re.fullmatch(r"Chat-\d{8}-\d{6}", dated_chat_name("chat", "en"))
    assert re.fullmatch(r"Demo-\d{8}-\d{6}", dated_chat_name("demo", "en"))
    assert re.fullmatch(r"演示-\d{8}-\d{6}", dated_chat_name("demo", "zh"))
    ref = ensure_demo_card()
    assert new_chat_dir(ref, language="en").name.startswith("Chat-")
    assert new_chat_dir(ref).name.startswith("对话-")


def test_duplicate_suffix_per_language(tmp_path):
    ref = ensure_demo_card()
    d = new_chat_dir(ref, "night")
    Chat.create(d, load_card(demo_card_path()), ReplayModel(actor=[], scribe=[]))
    assert duplicate_chat(d, language="en").name == "night copy"
    assert duplicate_chat(d).name == "night 的副本"


def test_user_label_is_empty_without_a_persona(tmp_path):
    card = load_card(demo_card_path())
    assert Chat.create(tmp_path / "x", card, ReplayModel(actor=[], scribe=[])).user_label == card.persona_name
    card.extensions["liyuan"] = {k: v for k, v in card.extensions["liyuan"].items() if k != "persona"}
    chat = Chat.create(tmp_path / "a", card, ReplayModel(actor=[], scribe=[]))
    assert chat.persona == "你" and chat.user_label == ""  # the window shows 你 / You by its language
    named = Chat.create(tmp_path / "b", card, ReplayModel(actor=[], scribe=[]), persona="阿青")
    assert named.user_label == "阿青"


def test_sampling_labels_one_language_each():
    for name in SAMPLING_FIELDS:
        zh, en = render(field_label(name), "zh"), render(field_label(name), "en")
        assert not CJK.search(en), en
        assert not (CJK.search(zh) and re.search(r"[a-z]{3}", zh)), zh  # no 温度 temperature
    report = PresetReport(name="p", sampling={"temperature": 1.1})
    assert "  · Temperature = 1.1" in report.text("en") and "Sampling:" in report.text("en")
    assert "  · 温度 = 1.1" in report.text("zh")
