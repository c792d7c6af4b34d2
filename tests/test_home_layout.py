"""The data folder's own folder names (issue 32, core/paths.py): a data folder first written in English gets
English names (card chats, import reports, trash, presets, quick replies, persona avatars, world books), one first
written in Chinese Chinese names, and an existing Chinese data folder keeps working, untouched, in an English window
or CLI — no English twin folder appears beside its Chinese ones. The commands are the real ones (``liyuan …`` in
this process, the window's language switch), on a SillyTavern folder built here (tests/st_folder.py)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from st_folder import build_st_folder

from liyuan_desktop import cli
from liyuan_desktop.core import paths
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat import manage
from liyuan_desktop.core.lore.books import global_books_dir, library_books_dir
from liyuan_desktop.core.paths import EN_HOME, ZH_HOME, chat_dir, layout_of_home, set_reader_language
from liyuan_desktop.core.prompt.presets.store import list_presets, presets_dir

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
QR = {"version": 2, "name": "Moves", "qrList": [{"id": 1, "label": "Look", "message": "I look around."}]}


def _home() -> Path:
    return Path(os.environ["LIYUAN_HOME"])


def _liyuan(capsys, lang: str, *argv: str) -> str:
    assert cli.main(["--lang", lang, *argv]) == 0, capsys.readouterr()
    got = capsys.readouterr()
    return got.out + got.err


def _fill(capsys, tmp_path: Path, lang: str) -> None:
    """What a user does first, in ``lang``: the demo, a SillyTavern import (cards, chats with their own book, world
    books global and not, presets, persona avatars, a report), a quick-reply set, a chat deleted to the trash."""
    st = build_st_folder(tmp_path / "st")
    qr = tmp_path / "Moves.json"
    qr.write_text(json.dumps(QR), "utf-8")
    _liyuan(capsys, lang, "chat", "--demo", "--delay-ms", "0")
    _liyuan(capsys, lang, "import-sillytavern", str(st))
    _liyuan(capsys, lang, "qr", "import", str(qr))
    _liyuan(capsys, lang, "chats", "delete", "阿梨/第二局")


def _app_names(home: Path) -> set[str]:
    """Every folder name of either layout found anywhere in ``home``."""
    names = {*ZH_HOME.top, *EN_HOME.top, ZH_HOME.chats, EN_HOME.chats, ZH_HOME.books_off, EN_HOME.books_off}
    return {p.name for p in home.rglob("*") if p.is_dir() and p.name in names}


def test_a_new_home_in_english_gets_english_names(capsys, tmp_path):
    _fill(capsys, tmp_path, "en")
    home = _home()
    assert layout_of_home(home) is EN_HOME
    assert {"chats", "import-reports", "trash", "presets", "quick-replies", "persona-avatars", "world-books",
            "disabled"} <= _app_names(home)
    assert not _app_names(home) & {*ZH_HOME.top, ZH_HOME.chats, ZH_HOME.books_off}
    assert (home / "cards" / "Qingwu" / "chats").is_dir()
    assert list((home / "cards" / "阿梨" / "chats").glob("*/world-books/*.json"))  # a chat's own book
    assert list((home / "import-reports").glob("*/report.md"))
    assert (home / "quick-replies" / "Moves.json").is_file()
    assert [p.name for p in (home / "trash").iterdir()]  # the deleted chat
    assert list((home / "persona-avatars").iterdir()) and list((home / "presets").glob("*.json"))
    assert (home / "world-books" / "全局之书.json").is_file() and list((home / "world-books" / "disabled").glob("*.json"))
    # no name the app chose holds CJK (the cards, chats and books keep their SillyTavern names: user content)
    user = {p.stem for p in (tmp_path / "st").rglob("*") if CJK.search(p.stem)} | {"阿梨", "阿柏"}  # + card names
    chosen = [p for p in home.rglob("*") if CJK.search(p.name) and not any(u in p.name for u in user)]
    assert not chosen, chosen


def test_a_new_home_in_chinese_gets_chinese_names(capsys, tmp_path):
    _fill(capsys, tmp_path, "zh")
    home = _home()
    assert layout_of_home(home) is ZH_HOME
    assert {*ZH_HOME.top, ZH_HOME.chats, ZH_HOME.books_off} <= _app_names(home)
    assert not _app_names(home) & {*EN_HOME.top, EN_HOME.chats, EN_HOME.books_off}
    assert list((home / "导入记录").glob("*/报告.md"))


def _snapshot(home: Path) -> dict[str, bytes]:
    return {p.relative_to(home).as_posix(): p.read_bytes() for p in home.rglob("*") if p.is_file()}


def test_an_existing_chinese_home_keeps_working_in_english(capsys, tmp_path):
    """A data folder written in Chinese, then used with ``--lang en`` and the window in English: everything is found
    where it is, what is new goes beside it under the Chinese names, no English twin folder appears, and nothing
    that was there is renamed or moved."""
    _fill(capsys, tmp_path, "zh")
    home = _home()
    before = _snapshot(home)
    listed = _liyuan(capsys, "en", "chats", "list")
    assert "第一局" in listed and "演示" in listed
    assert "Moves" in _liyuan(capsys, "en", "qr", "list")
    assert "梨园预设" in _liyuan(capsys, "en", "preset", "list")
    assert "第二局" in _liyuan(capsys, "en", "chats", "trash")
    _liyuan(capsys, "en", "chat", "--demo", "--delay-ms", "0")  # a new chat: in 对话/
    _liyuan(capsys, "en", "chats", "delete", "阿梨/第一局")  # into 回收站/
    _liyuan(capsys, "en", "import-sillytavern", str(tmp_path / "st"))  # another report, in English: 导入记录/*/report.md
    assert list((home / "导入记录").glob("*/report.md"))
    from liyuan_desktop.ui.infra import i18n  # the window's language switch tells core the reader's language

    try:
        i18n.set_language("en")
        card = library.list_cards()[0]
        assert library.new_chat_dir(card, "x", "en").parent.name == "对话"
        assert manage.trash_root() == home / "回收站" and presets_dir() == home / "预设"
        assert global_books_dir() == home / "世界书" and library_books_dir() == home / "世界书" / "未启用"
        assert chat_dir("阿梨", "y").parent.name == "对话"
        assert "梨园预设" in list_presets()
    finally:
        i18n.set_language("zh")
    assert not _app_names(home) & {*EN_HOME.top, EN_HOME.chats, EN_HOME.books_off}, _app_names(home)
    after = _snapshot(home)
    kept = {k for k in before if not k.startswith(("回收站/", "cards/阿梨/对话/第一局/")) and k in after}
    gone = {k for k in before if k not in after}
    assert all(k.startswith(("cards/阿梨/对话/第一局/", "cards/阿梨/对话/第二局")) or "/.liyuan" in k for k in gone), gone
    assert kept and all(before[k] == after[k] or k.endswith((".json", ".jsonl")) for k in kept)


def test_the_decision_is_stable(capsys, tmp_path):
    """The first folder written decides; switching the reader's language afterwards changes nothing. Before any
    folder of either layout exists, the layout follows the reader."""
    home = _home()
    home.mkdir(parents=True)
    (home / "settings.json").write_text("{}", "utf-8")  # something, but nothing of either layout
    set_reader_language("zh")
    assert paths.home_layout() is ZH_HOME
    set_reader_language("en")
    assert paths.home_layout() is EN_HOME
    manage.trash_root()  # the first folder: English from now on
    for lang in ("zh", "en", None):
        set_reader_language(lang)
        assert paths.home_layout() is EN_HOME
        assert manage.trash_root() == home / "trash"
    _liyuan(capsys, "zh", "chat", "--demo", "--delay-ms", "0")  # a Chinese reader, an English data folder
    assert (home / "cards" / "青梧" / "chats").is_dir() and not (home / "cards" / "青梧" / "对话").exists()


def test_what_on_disk_decides(tmp_path):
    """The rules of core/paths.py, on bare folders: a Chinese top-level folder wins; an English one decides
    English even when a card folder copied in holds 对话/ (that card keeps its own); ``presets/`` alone (the
    pre-issue-14 preset folder) decides nothing; a card's 对话/ alone decides Chinese."""
    def home(*dirs: str) -> Path:
        root = tmp_path / f"h{len(list(tmp_path.iterdir()))}"
        for d in dirs:
            (root / d).mkdir(parents=True)
        return root

    set_reader_language("en")
    assert layout_of_home(home("预设", "trash")) is ZH_HOME
    mixed = home("trash", "cards/Copied/对话/old", "cards/New")
    assert layout_of_home(mixed) is EN_HOME
    assert layout_of_home(home("presets")) is EN_HOME  # undecided: the reader's
    set_reader_language("zh")
    assert layout_of_home(home("presets")) is ZH_HOME
    assert layout_of_home(home("cards/A/对话")) is ZH_HOME
    set_reader_language("en")
    assert layout_of_home(home("cards/A/对话")) is ZH_HOME
    assert layout_of_home(home("groups/G/chats")) is EN_HOME


def test_a_card_keeps_its_own_chat_folder(monkeypatch, tmp_path):
    """In an English data folder a card copied in from a Chinese one keeps 对话/; its chats are listed and each
    still knows its card (``card_of_chat`` accepts either name)."""
    set_reader_language("en")
    manage.trash_root()
    home = _home()
    old = home / "cards" / "Old"
    library.import_card(Path(__file__).parent.parent / "cards" / "Qingwu" / "default_Qingwu.json")
    new = library.list_cards()[0]
    (Path(new.dir).rename(old))
    (old / "对话").mkdir()
    ref = library.CardRef(name="Old", dir=str(old))
    assert library.new_chat_dir(ref, "c").parent == old / "对话"
    assert library.card_of_chat(old / "对话" / "c") is not None
    fresh = home / "cards" / "Fresh"
    fresh.mkdir()
    (fresh / "card.json").write_bytes((old / "card.json").read_bytes())
    assert library.new_chat_dir(library.CardRef(name="Fresh", dir=str(fresh)), "c").parent == fresh / "chats"
    assert library.card_of_chat(fresh / "chats" / "c") is not None


@pytest.mark.parametrize("lang, layout", [("en", EN_HOME), ("ja", EN_HOME), ("zh", ZH_HOME), ("zh_CN", ZH_HOME)])
def test_the_layout_of_a_readers_language(lang, layout):
    assert paths.layout_for_language(lang) is layout
