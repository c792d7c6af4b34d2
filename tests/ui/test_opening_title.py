"""The opening's title in the window is the reader's (issue 32): the stored header line (「【开场 · 名字】」 in a Chinese
chat, "[Opening · Name]" in an English one) reaches the page as the title in the window's language, written 「【…】」
(the line conversation.js shows as the opening's small title); Copy and Edit keep the stored text."""

from __future__ import annotations

import pytest

from liyuan_desktop.ui.frames.conversation import page_item
from liyuan_desktop.ui.infra.i18n import set_language


@pytest.fixture
def lang():
    yield set_language
    set_language("zh")


@pytest.mark.parametrize("window, stored, shown", [
    ("zh", "【开场 · 青梧】\n*雨。*", "【开场 · 青梧】\n*雨。*"),      # a Chinese chat in Chinese: as it always was
    ("en", "【开场 · 青梧】\n*雨。*", "【Opening · 青梧】\n*雨。*"),
    ("en", "[Opening · Qingwu]\n*Rain.*", "【Opening · Qingwu】\n*Rain.*"),
    ("zh", "[Opening · Qingwu]\n*Rain.*", "【开场 · Qingwu】\n*Rain.*"),
])
def test_the_opening_title_is_in_the_windows_language(lang, window, stored, shown):
    lang(window)
    item = {"id": "0", "role": "opening", "text": stored, "beat": 0}
    got = page_item(item)
    assert got["text"] == shown and got["raw"] == stored
    assert item["text"] == stored  # the caller's item is not changed


def test_other_items_and_an_opening_without_a_header_are_left_alone(lang):
    lang("en")
    for item in ({"id": "1", "role": "assistant", "text": "[Opening · Qingwu]\nx"},
                 {"id": "0", "role": "opening", "text": "*Rain.*"}):
        assert page_item(item) == item
