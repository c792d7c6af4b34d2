"""Small English words an English user meets on the first screen (issue 32): a chat row with one message says
"1 message"; the status bar does not tell an English user to install Chinese fonts while the bundled one works."""

from __future__ import annotations

from liyuan_desktop.ui.infra import cjk_font, i18n


def test_one_message_is_singular_in_english_and_chinese_unchanged():
    try:
        i18n.set_language("en")
        assert i18n.tr("cards.chat.line", date="12-06", n=1, text="Hi") == "12-06 · 1 message · Hi"
        assert i18n.tr("cards.chat.line", date="12-06", n=2, text="Hi") == "12-06 · 2 messages · Hi"
        i18n.set_language("zh")
        assert i18n.tr("cards.chat.line", date="12-06", n=1, text="Hi") == "12-06 · 1 条 · Hi"
    finally:
        i18n.set_language("zh")


def test_bundled_font_hint_only_in_a_chinese_window():
    try:
        i18n.set_language("en")
        assert cjk_font.cjk_hint(["WenQuanYi Micro Hei"], "apt", bundled_in_use=True) is None
        missing = cjk_font.cjk_hint([], "apt")  # boxes: said in English too
        assert missing and "fonts-noto-cjk" in missing and not any("\u4e00" <= c <= "\u9fff" for c in missing)
        i18n.set_language("zh")
        assert "内置" in cjk_font.cjk_hint(["WenQuanYi Micro Hei"], "apt", bundled_in_use=True)
    finally:
        i18n.set_language("zh")
