"""File names that work on every OS (issue 32 §2): one function, ``core.paths.safe_name``, applies Windows' rules
(device names, trailing dots and spaces, forbidden and control characters, MAX_PATH) on every OS, so a data folder
made on Linux opens on Windows; ``name_taken`` keeps names that would be one file on Windows or macOS apart."""

from __future__ import annotations

import pytest

from liyuan_desktop.core.cards.library import import_card, new_chat_dir
from liyuan_desktop.core.paths import (
    CHAPTER_NAME_MAX_UTF16,
    NAME_MAX_UTF16,
    WINDOWS_HOME_BUDGET,
    WINDOWS_MAX_PATH,
    chat_dir,
    is_reserved_name,
    name_taken,
    safe_name,
    utf16_units,
)
from liyuan_desktop.core.story.chapters import chapter_filename

DEVICES = ["CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))]


@pytest.mark.parametrize("device", DEVICES)
def test_windows_device_names_never_come_out(device):
    for name in (device, device.lower(), device.title(), f"{device}.json", f"{device.lower()}.tar.gz",
                 f"{device} .md", f"{device}."):
        out = safe_name(name)
        assert not is_reserved_name(out), (name, out)
        assert device.lower() in out.lower()  # the user's word is still there
    assert safe_name(f"{device}X") == f"{device}X"  # only the exact device name is reserved
    assert safe_name(f"我的{device}") == f"我的{device}"


def test_forbidden_and_control_characters_become_underscores():
    assert safe_name('a<b>c:d"e/f\\g|h?i*j') == "a_b_c_d_e_f_g_h_i_j"
    assert safe_name("行\x00一\x1f二\x7f三") == "行_一_二_三"
    assert safe_name("001-\u202edm.exe") == "001-_dm.exe"  # a bidi override could make the name display as another
    assert safe_name("青梧 🌧️ 雨夜") == "青梧 🌧️ 雨夜"  # CJK and emoji are kept


def test_trailing_dots_and_spaces_are_dropped():
    # Windows drops them itself: "雨夜." and "雨夜" would be one file there
    for name in ("雨夜.", "雨夜 ", "雨夜. . ", "  雨夜", ".雨夜", "雨夜\u3000"):
        assert safe_name(name) == "雨夜", name
    assert safe_name("...") == "未命名" and safe_name("", "") == ""


def test_names_are_capped_in_utf16_units_on_a_clean_end():
    assert utf16_units(safe_name("长" * 200)) == NAME_MAX_UTF16
    emoji = safe_name("🌧" * 200)  # each is 2 UTF-16 units: half as many fit
    assert utf16_units(emoji) <= NAME_MAX_UTF16 and len(emoji) == NAME_MAX_UTF16 // 2
    cut = safe_name("a" * (NAME_MAX_UTF16 - 1) + ". b")  # the cut leaves "…a." : trimmed again
    assert not cut.endswith((".", " "))


def test_the_same_rules_on_every_platform_make_the_same_names():
    # safe_name reads no platform: the result is a function of the text alone (a folder copied between machines
    # keeps its names); chapter names use it for their titles
    assert chapter_filename(1, "第一章 雨夜/问名?") == "001-雨夜_问名.md"
    assert chapter_filename(2, "NUL") == "002-NUL.md"  # not a device name: the number comes first
    assert chapter_filename(3, "标题. . ") == "003-标题.md"
    assert utf16_units(chapter_filename(1234, "长" * 300, width=4)) <= CHAPTER_NAME_MAX_UTF16


def test_the_deepest_path_fits_windows_max_path(tmp_path, monkeypatch):
    # the longest data folder the caps leave room for, e.g. C:\Users\<long name>\AppData\Local\liyuan
    home = tmp_path / ("h" * max(1, WINDOWS_HOME_BUDGET - utf16_units(str(tmp_path)) - 1))
    assert utf16_units(str(home)) == WINDOWS_HOME_BUDGET
    monkeypatch.setenv("LIYUAN_HOME", str(home))
    card, chat = safe_name("卡" * 300) + "-999", safe_name("🌧" * 300) + "-999"  # numbered: "name-999"
    chapter = chapter_filename(9999, "章" * 300, width=4)
    deepest = chat_dir(card, chat) / "正文" / chapter
    assert utf16_units(str(deepest)) < WINDOWS_MAX_PATH, utf16_units(str(deepest))
    tmp = chat_dir(card, chat) / "正文" / ".liyuan-4194304-abcdefgh.tmp"  # fsutil's temp file beside it
    assert utf16_units(str(tmp)) < WINDOWS_MAX_PATH


def test_names_that_clash_on_windows_or_macos_are_taken(tmp_path):
    (tmp_path / "Alice").mkdir()
    assert name_taken(tmp_path, "Alice") and name_taken(tmp_path, "alice") and name_taken(tmp_path, "ALICE")
    assert not name_taken(tmp_path, "Alicia")
    (tmp_path / "Cafe\u0301").mkdir()  # "Café" decomposed (as macOS' HFS+ wrote it) and composed are one name
    assert name_taken(tmp_path, "Caf\u00e9")
    assert not name_taken(tmp_path / "missing", "x")


def test_a_new_chat_never_clashes_with_another_by_case(tmp_path, monkeypatch):
    monkeypatch.setenv("LIYUAN_HOME", str(tmp_path / "home"))
    from liyuan_desktop.core.cards.library import CardRef

    card = CardRef(name="青梧", dir=str(tmp_path / "home" / "cards" / "青梧"))
    (tmp_path / "home" / "cards" / "青梧" / "对话" / "Night").mkdir(parents=True)
    d = new_chat_dir(card, "night")
    assert d.name == "night-2"


def test_a_card_named_like_another_but_for_case_gets_its_own_folder(tmp_path, monkeypatch):
    import json

    monkeypatch.setenv("LIYUAN_HOME", str(tmp_path / "home"))

    def card_file(name: str, desc: str):
        p = tmp_path / f"{desc}.json"
        p.write_text(json.dumps({"spec": "chara_card_v2", "spec_version": "2.0",
                                 "data": {"name": name, "description": desc, "first_mes": "hi"}}), encoding="utf-8")
        return p

    a = import_card(card_file("Alice", "one"))
    b = import_card(card_file("alice", "two"))
    assert a.name == "Alice" and b.name == "alice-2"
    assert import_card(card_file("Alice", "one")).name == "Alice"  # the very same card file again: the same folder


def test_a_card_imported_under_the_old_80_character_rule_is_met_again(tmp_path, monkeypatch):
    """Issue 32: names are now cut at 48 UTF-16 units; a card whose folder an earlier release made with the old
    rule (cut at 80) is still the card a re-import meets (asked replace / keep both), not a silent duplicate."""
    import json

    from liyuan_desktop.core.cards import library
    from liyuan_desktop.core.paths import legacy_safe_name, safe_name

    monkeypatch.setenv("LIYUAN_HOME", str(tmp_path / "home"))
    name = "很长的名字" * 12  # 60 characters: cut at 48 now, kept whole by the old rule
    card = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": name, "first_mes": "hi"}}
    src = tmp_path / "c.json"
    src.write_text(json.dumps(card, ensure_ascii=False), encoding="utf-8")
    old = library.cards_root() / legacy_safe_name(name)
    assert old.name != safe_name(name)
    old.mkdir(parents=True)
    (old / "card.json").write_text(json.dumps(card, ensure_ascii=False), encoding="utf-8")
    (old / "original.json").write_bytes(src.read_bytes())
    assert library.card_folder(name) == old
    assert library.import_card(src).dir == str(old)  # the very same file again: the card already there
    src.write_text(json.dumps({**card, "data": {**card["data"], "first_mes": "changed"}}, ensure_ascii=False),
                   encoding="utf-8")
    assert library.existing_card(src) is not None  # a changed file meets it: the user is asked
