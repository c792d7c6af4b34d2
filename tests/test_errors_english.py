"""Errors about the user's files come out in the user's language (design rule "UI text Chinese first, English
complete"): a corpus of broken inputs, built here, goes through the real import functions — cards (PNG, JSON,
CHARX), world books, presets, SillyTavern chats, the SillyTavern migration — and each error's English rendering
(``core.messages.render(e, "en")``, what the window's ``show`` and the CLI's ``--lang en`` use) has no Chinese in
it and is no bare catalog key, while its Chinese text stays what the engine raised. One end-to-end run of
``liyuan --lang en card import`` on a broken PNG."""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path
from typing import Callable

import pytest

from liyuan_desktop.core.messages import CATALOG, render

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


SIG = b"\x89PNG\r\n\x1a\n"
IHDR = _chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0))
IDAT = _chunk(b"IDAT", zlib.compress(b"\x00\x00\x00\x00\x00"))
IEND = _chunk(b"IEND", b"")


def _png(*chunks: bytes) -> bytes:
    return SIG + IHDR + b"".join(chunks) + IDAT + IEND


def _text(keyword: bytes, payload: bytes) -> bytes:
    return _chunk(b"tEXt", keyword + b"\x00" + payload)


GOOD_CARD = json.dumps({"spec": "chara_card_v2", "spec_version": "2.0",
                        "data": {"name": "Alice", "description": "d", "first_mes": "hi"}}).encode()


def _zip(members: dict[str, bytes]) -> bytes:
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _bad_crc_png() -> bytes:
    good = _text(b"chara", __import__("base64").b64encode(GOOD_CARD))
    return _png(good[:-4] + b"\x00\x00\x00\x00")


# (file name, bytes) of things given as a card; every one must be refused with a CardError
CARD_CORPUS: list[tuple[str, bytes]] = [
    ("empty.png", b""),
    ("truncated.png", _png(_text(b"chara", __import__("base64").b64encode(GOOD_CARD)))[:60]),
    ("plain-image.png", _png()),
    ("no-iend.png", SIG + IHDR + IDAT),
    ("bad-crc.png", _bad_crc_png()),
    ("bad-base64.png", _png(_text(b"chara", b"!!!not base64!!!"))),
    ("non-ascii-base64.png", _png(_text(b"chara", "名字".encode("utf-8")))),
    ("chunk-bad-json.png", _png(_text(b"chara", __import__("base64").b64encode(b'{"name": "a",}')))),
    ("empty-chunk.png", _png(_chunk(b"zTXt", b"chara\x00"))),
    ("bad-zlib.png", _png(_chunk(b"zTXt", b"chara\x00\x00not zlib"))),
    ("first-not-ihdr.png", SIG + IDAT + IEND),
    ("photo.jpg", b"\xff\xd8\xff\xe0" + b"\x00" * 64),
    ("doc.pdf", b"%PDF-1.7\n" + b"x" * 64),
    ("archive.gz", b"\x1f\x8b\x08\x00" + b"\x00" * 64),
    ("not-utf8.json", b'{"name": "\xff\xfe"}'),
    ("syntax.json", b'{"name": "a",}'),
    ("missing-comma.json", b'{"name": "a" "description": "b"}'),
    ("missing-colon.json", b'{"name" "a"}'),
    ("unterminated.json", b'{"name": "a'),
    ("deep.json", b"[" * 200_000 + b"]" * 200_000),
    ("digits.json", b'{"name": 1' + b"1" * 5000 + b"}"),
    ("array.json", b"[1, 2, 3]"),
    ("string.json", b'"just a string"'),
    ("null.json", b"null"),
    ("whitespace.json", b"   \n  "),
    ("chat.jsonl", b'{"user_name": "You", "character_name": "Alice"}\n{"name": "Alice", "mes": "hi"}\n'),
    ("preset.json", json.dumps({"prompts": [], "prompt_order": []}).encode()),
    ("instruct.json", json.dumps({"input_sequence": "a", "output_sequence": "b"}).encode()),
    ("sampler.json", json.dumps({"temperature": 1, "top_p": 0.9}).encode()),
    ("worldinfo.json", json.dumps({"entries": {"0": {"key": ["a"], "content": "b"}}}).encode()),
    ("lorebook.json", json.dumps({"spec": "lorebook_v3", "data": {"entries": []}}).encode()),
    ("nothing.json", json.dumps({"foo": 1}).encode()),
    ("binary.bin", b"\x00\x01\x02garbage" * 10),
    ("no-card.charx", _zip({"assets/a.txt": b"x"})),
    ("card-bad-json.charx", _zip({"card.json": b'{"name": '})),
    ("cut.charx", b"PK\x03\x04" + b"\x00" * 40),
]


def _check(e: BaseException) -> tuple[str, str]:
    """(zh, en) of an error; asserts the English is English and no bare key, and the Chinese is the error's text."""
    zh, en = render(e, "zh"), render(e, "en")
    assert zh == str(e)
    assert en and en not in CATALOG, en
    assert not CJK.search(en), f"still Chinese in English: {en!r} (from {zh!r})"
    return zh, en


@pytest.mark.parametrize("name,data", CARD_CORPUS, ids=[n for n, _ in CARD_CORPUS])
def test_broken_card_files_explain_themselves_in_english(tmp_path: Path, name: str, data: bytes):
    from liyuan_desktop.core.cards import CardError, load_card

    p = tmp_path / name
    p.write_bytes(data)
    with pytest.raises(CardError) as ei:
        load_card(p)
    zh, en = _check(ei.value)
    assert zh.startswith(f"{name}：") and CJK.search(zh)
    assert en.startswith(f"{name}: ")


def test_card_errors_keep_their_chinese_exactly(tmp_path: Path):
    """The Chinese is byte-identical to what the engine said before the catalog knew it (tests and golden runs
    compare it); the English is the catalog's sentence with the values filled in."""
    from liyuan_desktop.core.cards import CardError, load_card, load_card_bytes

    cases = {
        "syntax.json": (b'{"name": "a",}', "syntax.json：不是有效的 JSON（第 1 行第 14 列：属性名要用双引号）",
                        "syntax.json: not valid JSON (line 1, column 14: property names need double quotes)"),
        "chunk.png": (_png(_text(b"chara", __import__("base64").b64encode(b'{"a" 1}'))),
                      "chunk.png：PNG 里的 chara 块（tEXt）不是有效的 JSON（第 1 行第 6 列：缺少冒号）",
                      "chunk.png: the PNG's chara chunk (tEXt): not valid JSON (line 1, column 6: a colon is missing)"),
        "empty.json": (b"", "empty.json：文件是空的（0 字节），不是角色卡", "empty.json: The file is empty (0 bytes); not a card"),
    }
    for name, (data, zh, en) in cases.items():
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(CardError) as ei:
            load_card(p)
        assert str(ei.value) == zh
        assert render(ei.value, "en") == en
    with pytest.raises(CardError) as ei:
        load_card_bytes(b"[]")
    assert str(ei.value) == "角色卡：JSON 的最外层是数组，不是对象，不是角色卡"
    assert render(ei.value, "en") == "Card: The JSON's top level is an array, not an object; not a card"


def test_missing_and_folder_cards(tmp_path: Path):
    from liyuan_desktop.core.cards import CardError, load_card

    for p in (tmp_path / "gone.png", tmp_path):
        with pytest.raises(CardError) as ei:
            load_card(p)
        _check(ei.value)


def test_a_card_error_renders_by_key_and_plain_text_is_never_matched_back():
    """A card error carries its key (the file name a parameter, the sentence a nested message); its plain text is
    shown as it is — nothing is matched back from Chinese (issue 32)."""
    from liyuan_desktop.core.cards import CardError, load_card_bytes

    with pytest.raises(CardError) as ei:
        load_card_bytes(b'{"name": "a",}', "x.json")
    assert render(ei.value, "en") == "x.json: not valid JSON (line 1, column 14: property names need double quotes)"
    plain = str(ei.value)
    assert type(plain) is str and render(plain, "en") == plain
    assert render("林黛玉：不是这个文件", "en") == "林黛玉：不是这个文件"


BOOK_CORPUS: list[tuple[str, bytes]] = [
    ("empty.json", b""),
    ("image.json", _png()),
    ("not-utf8.json", b'{"entries": "\xff"}'),
    ("syntax.json", b'{"entries": {,}}'),
    ("deep.json", b"[" * 200_000 + b"]" * 200_000),
    ("array.json", b"[]"),
    ("card.json", GOOD_CARD),
    ("no-entries.json", b'{"name": "book"}'),
    ("null-entries.json", b'{"entries": null}'),
]


@pytest.mark.parametrize("name,data", BOOK_CORPUS, ids=[n for n, _ in BOOK_CORPUS])
def test_broken_world_books_explain_themselves_in_english(tmp_path: Path, name: str, data: bytes):
    from liyuan_desktop.core.lore.books import import_book_file

    p = tmp_path / name
    p.write_bytes(data)
    with pytest.raises(ValueError) as ei:
        import_book_file(p, tmp_path / "books")
    zh, en = _check(ei.value)
    assert zh.startswith(f"{name}：") and en.startswith(f"{name}: ")
    assert not (tmp_path / "books").exists() or not any((tmp_path / "books").iterdir())


def test_world_books_that_are_books_still_import(tmp_path: Path):
    from liyuan_desktop.core.lore.books import import_book_file

    for name, obj in (("wi.json", {"entries": {}}), ("card-book.json", {"entries": []}),
                      ("v3.json", {"spec": "lorebook_v3", "data": {"entries": []}})):
        p = tmp_path / name
        p.write_text(json.dumps(obj), "utf-8")
        assert import_book_file(p, tmp_path / "books").is_file()


PRESET_CORPUS: list[tuple[str, bytes]] = [
    ("image.json", _png()),
    ("not-utf8.json", b'{"prompts": "\xff"}'),
    ("syntax.json", b'{"prompts": [,]}'),
    ("chat.jsonl", b'{"user_name": "a"}\n{"mes": "b"}\n'),
    ("array.json", b"[]"),
    ("card.json", GOOD_CARD),
    ("worldinfo.json", b'{"entries": {}}'),
    ("chat-head.json", b'{"user_name": "a", "character_name": "b"}'),
    ("instruct.json", b'{"input_sequence": "a"}'),
    ("context.json", b'{"story_string": "a"}'),
    ("settings.json", b'{"power_user": {}}'),
    ("textgen.json", b'{"temp": 1, "rep_pen": 1.1}'),
    ("nothing.json", b'{"foo": 1}'),
    ("prompts-type.json", b'{"prompts": {"a": 1}}'),
]


@pytest.mark.parametrize("name,data", PRESET_CORPUS, ids=[n for n, _ in PRESET_CORPUS])
def test_broken_presets_explain_themselves_in_english(tmp_path: Path, name: str, data: bytes):
    from liyuan_desktop.core.prompt.presets.store import PresetError, load_preset

    p = tmp_path / name
    p.write_bytes(data)
    with pytest.raises(PresetError) as ei:
        load_preset(p)
    _check(ei.value)


def test_missing_preset_files(tmp_path: Path):
    from liyuan_desktop.core.prompt.presets.store import PresetError, load_preset

    with pytest.raises(PresetError) as ei:
        load_preset(tmp_path / "gone.json")
    zh, en = _check(ei.value)
    assert en.startswith("Cannot read the preset ")


CHAT_CORPUS: list[tuple[str, bytes]] = [
    ("image.jsonl", _png()),
    ("empty.jsonl", b"\n\n"),
    ("text.jsonl", b"hello there\nnot json\n"),
    ("card.jsonl", GOOD_CARD),
    ("preset.jsonl", b'{"prompts": []}'),
    ("book.jsonl", b'{"entries": {}}'),
    ("card-lines.jsonl", b'{"spec": "chara_card_v2", "data": {"first_mes": "x"}}\n{"mes": "y"}\n'),
    ("neither.jsonl", b'[1, 2]\n{"mes": "y"}\n'),
]


@pytest.mark.parametrize("name,data", CHAT_CORPUS, ids=[n for n, _ in CHAT_CORPUS])
def test_broken_sillytavern_chats_explain_themselves_in_english(tmp_path: Path, name: str, data: bytes):
    from liyuan_desktop.core.cards.st_chat import StChatError, read_st_chat

    p = tmp_path / name
    p.write_bytes(data)
    with pytest.raises(StChatError) as ei:
        read_st_chat(p)
    _check(ei.value)


def test_damaged_chat_lines_warn_in_english():
    from liyuan_desktop.core.cards.st_chat import parse_st_chat

    data = (b'{"user_name": "You", "character_name": "Alice"}\n{"name": "Alice", "mes": "hi"}\nnot json\n[1]\n'
            b'{"name": "x"}\n{"mes": "torn')
    chat = parse_st_chat(data, "c.jsonl")
    assert len(chat.warnings) == 4
    for w in chat.warnings:
        assert not CJK.search(render(w, "en")), w
    headless = parse_st_chat(b'{"name": "Alice", "mes": "hi"}\n', "h.jsonl")
    assert not CJK.search(render(headless.warnings[0], "en"))


def test_missing_chat_file(tmp_path: Path):
    from liyuan_desktop.core.cards.st_chat import StChatError, read_st_chat

    with pytest.raises(StChatError) as ei:
        read_st_chat(tmp_path / "gone.jsonl")
    _check(ei.value)


def test_migration_sources_explain_themselves_in_english(tmp_path: Path, monkeypatch):
    from liyuan_desktop.core.migrate import MigrationError, scan

    monkeypatch.setenv("LIYUAN_HOME", str(tmp_path / "home"))
    (tmp_path / "empty-folder").mkdir()
    (tmp_path / "notes.txt").write_text("x", "utf-8")
    (tmp_path / "broken.zip").write_bytes(b"PK\x03\x04 not really a zip")
    for src in (tmp_path / "gone", tmp_path / "empty-folder", tmp_path / "notes.txt", tmp_path / "broken.zip"):
        with pytest.raises(MigrationError) as ei:
            scan(src)
        _check(ei.value)


def test_the_corpus_counts(tmp_path: Path):
    """How many of the corpus's errors render in English (the report's figure): all of them."""
    from liyuan_desktop.core.cards import load_card
    from liyuan_desktop.core.cards.st_chat import read_st_chat
    from liyuan_desktop.core.lore.books import import_book_file
    from liyuan_desktop.core.prompt.presets.store import load_preset

    runs: list[tuple[list[tuple[str, bytes]], Callable[[Path], object]]] = [
        (CARD_CORPUS, load_card), (BOOK_CORPUS, lambda p: import_book_file(p, tmp_path / "books")),
        (PRESET_CORPUS, load_preset), (CHAT_CORPUS, read_st_chat)]
    total = english = 0
    for corpus, fn in runs:
        for name, data in corpus:
            p = tmp_path / "in" / name
            p.parent.mkdir(exist_ok=True)
            p.write_bytes(data)
            try:
                fn(p)
            except Exception as e:  # noqa: BLE001 - every kind of refusal is counted
                total += 1
                english += not CJK.search(render(e, "en"))
    print(f"\ncorpus: {english}/{total} errors render in English")
    assert total == len(CARD_CORPUS) + len(BOOK_CORPUS) + len(PRESET_CORPUS) + len(CHAT_CORPUS)
    assert english == total


def test_cli_card_import_prints_an_english_error(tmp_path: Path):
    """End to end in a fresh interpreter: ``liyuan --lang en card import broken.png``."""
    broken = tmp_path / "broken.png"
    broken.write_bytes(_png(_text(b"chara", __import__("base64").b64encode(GOOD_CARD)))[:60])
    env = dict(os.environ, LIYUAN_HOME=str(tmp_path / "home"), PYTHONIOENCODING="utf-8")
    env.pop("LIYUAN_LANG", None)
    run = subprocess.run([sys.executable, "-m", "liyuan_desktop.cli", "--lang", "en", "card", "import", str(broken)],
                         capture_output=True, text=True, encoding="utf-8", env=env, timeout=120)
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith("liyuan: broken.png: "), run.stderr
    assert "PNG" in run.stderr and not CJK.search(run.stderr), run.stderr
    zh = subprocess.run([sys.executable, "-m", "liyuan_desktop.cli", "--lang", "zh", "card", "import", str(broken)],
                        capture_output=True, text=True, encoding="utf-8", env=env, timeout=120)
    assert zh.returncode == 2 and zh.stderr.startswith("liyuan: broken.png：") and CJK.search(zh.stderr)


def _all_english(lines: list[str]) -> None:
    assert lines
    for w in lines:
        en = render(w, "en")
        assert not CJK.search(en), f"still Chinese in English: {en!r} (from {w!r})"


def test_what_reading_a_damaged_card_repaired_is_said_in_english(tmp_path: Path):
    """The load warnings of a card with wrongly typed fields (the window's notices, ``liyuan card inspect``)."""
    from liyuan_desktop.core.cards import load_card, load_card_bytes

    odd = {"spec": "chara_card_v3", "spec_version": "9.0",
           "data": {"name": "", "description": 5, "first_mes": "hi", "alternate_greetings": ["a", 3],
                    "extensions": [], "character_book": "x"}}
    p = tmp_path / "odd.json"
    p.write_text(json.dumps(odd), "utf-8")
    card = load_card(p)
    assert len(card.warnings) >= 5
    _all_english(card.warnings)
    flat = load_card_bytes(json.dumps({"spec": "chara_card_v2", "name": "A", "first_mes": "x",
                                       "alternate_greetings": "no"}).encode(), "flat.json")
    _all_english(flat.warnings)
    no_iend = load_card_bytes(SIG + IHDR + _text(b"chara", __import__("base64").b64encode(GOOD_CARD)), "c.png")
    _all_english(no_iend.warnings)
    fallback = load_card_bytes(_png(_text(b"ccv3", b"!!!"), _text(b"chara", __import__("base64").b64encode(GOOD_CARD))),
                               "two.png")
    _all_english(fallback.warnings)


def test_what_reading_a_damaged_preset_repaired_is_said_in_english(tmp_path: Path):
    from liyuan_desktop.core.prompt.presets.store import load_preset

    odd = {"temperature": "hot", "prompts": [3, {"name": "A", "role": "narrator", "content": "x"},
                                             {"identifier": "b", "role": "system", "injection_position": 7,
                                              "injection_depth": "deep", "content": "y"},
                                             {"identifier": "b", "content": "z"}],
           "prompt_order": [5, {"character_id": "x", "order": []},
                            {"character_id": 100001, "order": [3, {"identifier": "b"}]}]}
    p = tmp_path / "odd.json"
    p.write_text(json.dumps(odd), "utf-8")
    preset = load_preset(p)
    assert len(preset.warnings) >= 6
    _all_english(preset.warnings)


def test_what_reading_a_damaged_world_book_repaired_is_said_in_english():
    from liyuan_desktop.core.lore import Lorebook

    wi = Lorebook.from_any({"entries": {"0": 5, "1": {"uid": 1, "key": ["a"], "content": "b"}}}, "wi")
    card_book = Lorebook.from_any({"entries": [7, {"keys": ["a"], "content": "b", "enabled": True}]}, "cb")
    _all_english([w for w in wi.warnings + card_book.warnings if "regex" not in w.lower()])


def test_persona_file_errors_in_english(tmp_path: Path):
    from liyuan_desktop.core.cards.personas import PersonaError, import_st_personas

    for name, data in (("bad.json", b"{"), ("list.json", b"[]"), ("none.json", b'{"a": 1}')):
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(PersonaError) as ei:
            import_st_personas(p)
        _check(ei.value)
    with pytest.raises(PersonaError) as ei:
        import_st_personas(tmp_path / "gone.json")
    _check(ei.value)
    with pytest.raises(PersonaError) as ei:
        import_st_personas({"power_user": {}})
    assert str(ei.value).startswith("人设文件：")
    assert render(ei.value, "en").startswith("Persona file: no personas inside")


def test_world_info_settings_errors_in_english():
    """``--wi NAME=VALUE`` and a SillyTavern settings.json given for the world-info settings."""
    from liyuan_desktop.core.lore import settings as wis

    calls = [lambda: wis.parse_assignments(["nonsense"]), lambda: wis.parse_assignments(["no_such_setting=1"]),
             lambda: wis.parse_assignments(["world_info_depth=deep"]),
             lambda: wis.parse_assignments(["world_info_recursive=maybe"]),
             lambda: wis.check_overrides({"world_info_depth": -5}),
             lambda: wis.from_st_settings([]), lambda: wis.from_st_settings({"x": 1})]
    for call in calls:
        with pytest.raises(ValueError) as ei:
            call()
        _check(ei.value)


def test_connection_errors_and_no_model_are_said_by_key():
    """Issue 32: a failed connection and "no model configured" carry their catalog keys, so the English window and
    `--lang en` say them in English (no Chinese matched back)."""
    import httpx

    from liyuan_desktop.core.llm import OpenAIChatModel
    from liyuan_desktop.core.messages import render

    m = OpenAIChatModel("http://127.0.0.1:9/v1", "m", None)
    for exc, key in ((httpx.ConnectError("refused"), "llm.cannot_connect"),
                     (httpx.ConnectTimeout("slow"), "llm.connect_timeout"),
                     (httpx.ReadTimeout("slow"), "llm.read_timeout")):
        err = m._transport_error(exc, retries=2)
        assert err.message.key == key
        en = render(err.message, "en")
        assert "127.0.0.1" in en or "s)" in en
        assert not any("\u4e00" <= ch <= "\u9fff" for ch in en)
