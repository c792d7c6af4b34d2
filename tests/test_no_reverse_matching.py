"""No engine text is matched back from its Chinese wording (issue 32): every producer builds a catalog message
(key + params) and ``core/messages.render`` returns a plain ``str`` as it is.

With every name a matcher ever had (``find_message``, ``translate``, ``_labelled``) made to raise, broken files of
many kinds — malformed JSON, a truncated PNG, a PNG without a card chunk, a bad CHARX zip, a bad world book, a bad
preset, a card with a bad regex script list, a bad SillyTavern chat — are read by the engine, shown by ``liyuan
card inspect`` and imported with ``liyuan import-sillytavern`` from a small SillyTavern folder with broken pieces,
all under ``--lang en``: nothing escapes as an exception and the English output has no CJK character outside the
user's content (every file and card name here is English, so any CJK is the program's own; the data folder's own
folder names are taken out, as in tests/test_cli_english_output.py). A static check keeps the matcher gone."""

from __future__ import annotations

import ast
import json
import re
import zipfile
from io import BytesIO
from pathlib import Path

import pytest

from liyuan_desktop import cli
from liyuan_desktop.cli import common
from liyuan_desktop.core import messages
from liyuan_desktop.core.messages import Msg, render

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")
LAYOUT = ("对话", "正文", "导入记录", "回收站", "预设", "快速回复", "人设头像", "世界书", "未启用")
PKG = Path(__file__).resolve().parents[1] / "liyuan_desktop"


@pytest.fixture(autouse=True)
def no_matcher(monkeypatch):
    """Every way back from a text to a key raises (the names are gone: they are put back only to refuse)."""
    def refuse(*_a, **_k):
        raise AssertionError("an engine text was matched back from its wording")

    for name in ("find_message", "translate", "_labelled"):
        monkeypatch.setattr(messages, name, refuse, raising=False)
    yield
    common._LANG.clear()


def _card(name: str, **data) -> dict:
    return {"spec": "chara_card_v2", "spec_version": "2.0",
            "data": {"name": name, "description": "A ferryman.", "first_mes": "The ferry waits.", **data}}


def _zip(members: dict[str, bytes]) -> bytes:
    buf = BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for k, v in members.items():
            z.writestr(k, v)
    return buf.getvalue()


PNG_HEAD = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
IEND = b"\x00\x00\x00\x00IEND\xaeB`\x82"

BROKEN_CARDS: list[tuple[str, bytes]] = [
    ("malformed.json", b'{"name": "a",}'),
    ("unclosed.json", b'{"name": "a'),
    ("array.json", b"[1, 2]"),
    ("empty.json", b""),
    ("not-utf8.json", b'{"name": "\xff"}'),
    ("truncated.png", PNG_HEAD[:20]),
    ("plain-image.png", PNG_HEAD + IEND),
    ("no-iend.png", PNG_HEAD),
    ("bad-zip.charx", b"PK\x03\x04" + b"\x00" * 40),
    ("no-card.charx", _zip({"assets/a.txt": b"x"})),
    ("bad-json.charx", _zip({"card.json": b'{"name": '})),
    ("preset-as-card.json", json.dumps({"prompts": [], "temperature": 1}).encode()),
    ("book-as-card.json", json.dumps({"entries": {}}).encode()),
    ("chat.jsonl", b'{"user_name": "You", "character_name": "Birch"}\n{"name": "Birch", "mes": "Hi"}\n'),
    ("photo.jpg", b"\xff\xd8\xff\xe0" + b"\x00" * 40),
    ("odd-fields.json", json.dumps({"spec": "chara_card_v3", "spec_version": "9.0",
                                    "data": {"name": "", "description": 5, "first_mes": "x",
                                             "alternate_greetings": ["a", 3], "extensions": [],
                                             "character_book": "x"}}).encode()),
    ("bad-regex.json", json.dumps(_card("Regex", extensions={"regex_scripts": [5, {"findRegex": "(unclosed"}]})).encode()),
]


def _english(text: str) -> str:
    """``text`` with the data folder's own folder names and the test's paths taken out."""
    for name in LAYOUT:
        text = text.replace(name, "<dir>")
    return text


def _no_cjk(text: str) -> None:
    bad = [ln for ln in _english(text).splitlines() if CJK.search(ln)]
    assert not bad, bad


def _run(capsys, argv: list[str]) -> tuple[int, str]:
    try:
        code = cli.main(["--lang", "en", *argv])
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 2
    got = capsys.readouterr()
    return code, got.out + got.err


def test_broken_cards_render_in_english_by_key(tmp_path):
    from liyuan_desktop.core.cards import CardError, load_card

    refused = 0
    for name, data in BROKEN_CARDS:
        p = tmp_path / name
        p.write_bytes(data)
        try:
            card = load_card(p)
        except CardError as e:
            refused += 1
            assert isinstance(e.args[0], Msg), name
            en = render(e, "en")
            assert en.startswith(name + ": "), en
            _no_cjk(en)
            assert render(e, "zh") == str(e) and CJK.search(str(e))  # the Chinese text is unchanged
            continue
        for w in card.warnings:
            assert isinstance(w, Msg), (name, w)
            _no_cjk(render(w, "en"))
    assert refused >= 14


def test_card_inspect_on_broken_cards_prints_english(tmp_path, capsys):
    for name, data in BROKEN_CARDS:
        p = tmp_path / name
        p.write_bytes(data)
        code, out = _run(capsys, ["card", "inspect", str(p)])
        assert code in (0, 1, 2), (name, code)
        assert out.strip(), name
        _no_cjk(out.replace(str(tmp_path), "<path>"))


def test_broken_books_presets_and_chats_render_in_english(tmp_path):
    from liyuan_desktop.core.cards.st_chat import StChatError, read_st_chat
    from liyuan_desktop.core.lore.books import import_book_file
    from liyuan_desktop.core.prompt.presets.store import load_preset

    books = [("empty.json", b""), ("bad.json", b"{ not json"), ("card.json", json.dumps(_card("A")).encode()),
             ("no-entries.json", b'{"name": "x"}'), ("image.json", PNG_HEAD + IEND)]
    presets = [("bad.json", b"{,}"), ("card.json", json.dumps(_card("A")).encode()), ("array.json", b"[]"),
               ("odd.json", json.dumps({"temperature": "hot", "prompts": [3, {"name": "A", "role": "x"}],
                                        "prompt_order": 5}).encode())]
    chats = [("empty.jsonl", b""), ("card.jsonl", json.dumps(_card("A")).encode()), ("garbage.jsonl", b"not json\n"),
             ("torn.jsonl", b'{"user_name": "You", "character_name": "A"}\n{"name": "A", "mes": "Hi"}\n{"name": "A", "mes": ')]
    said: list[str] = []
    for name, data in books:
        p = tmp_path / "b" / name
        p.parent.mkdir(exist_ok=True)
        p.write_bytes(data)
        with pytest.raises(Exception) as ei:
            import_book_file(p, tmp_path / "books")
        said.append(render(ei.value, "en"))
    for name, data in presets:
        p = tmp_path / "p" / name
        p.parent.mkdir(exist_ok=True)
        p.write_bytes(data)
        try:
            preset = load_preset(p)
        except Exception as e:  # noqa: BLE001 - a refusal is what is checked
            said.append(render(e, "en"))
        else:
            assert preset.warnings and all(isinstance(w, Msg) for w in preset.warnings)
            said += [render(w, "en") for w in preset.warnings]
    for name, data in chats:
        p = tmp_path / "c" / name
        p.parent.mkdir(exist_ok=True)
        p.write_bytes(data)
        try:
            st = read_st_chat(p)
        except StChatError as e:
            said.append(render(e, "en"))
        else:
            said += [render(w, "en") for w in st.warnings]
    assert len(said) >= len(books) + len(presets) + len(chats)
    for line in said:
        _no_cjk(line)


def _st_folder(base: Path) -> Path:
    d = base / "data" / "default-user"
    for sub in ("characters", "chats/alice", "chats/ghost", "worlds", "OpenAI Settings", "User Avatars"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    (d / "characters" / "alice.json").write_text(json.dumps(_card("Alice")), "utf-8")
    (d / "characters" / "broken.png").write_bytes(PNG_HEAD[:20])
    (d / "characters" / "bad.json").write_bytes(b'{"name": "a",}')
    header = json.dumps({"user_name": "You", "character_name": "Alice", "create_date": "2024-10-18@20h52m17s"})
    line = json.dumps({"name": "Alice", "is_user": False, "mes": "Hello.", "send_date": "October 18, 2024 8:52pm"})
    (d / "chats/alice/first.jsonl").write_text(f"{header}\n{line}\n", "utf-8")
    (d / "chats/alice/torn.jsonl").write_text(f"{header}\n{line}\n{line[:-9]}", "utf-8")
    (d / "chats/alice/empty.jsonl").write_bytes(b"")
    (d / "chats/alice/garbage.jsonl").write_text("not json\n", "utf-8")
    (d / "chats/ghost/x.jsonl").write_text(f"{header}\n{line}\n", "utf-8")
    (d / "worlds" / "Bad.json").write_text("{ not json", "utf-8")
    (d / "worlds" / "NoEntries.json").write_text('{"name": "x"}', "utf-8")
    (d / "OpenAI Settings" / "Broken.json").write_text("[1, 2]", "utf-8")
    (d / "OpenAI Settings" / "Card.json").write_text(json.dumps(_card("B")), "utf-8")
    (d / "settings.json").write_text(json.dumps({"username": "Traveller", "power_user": {"personas": {}}}), "utf-8")
    return d


def test_import_sillytavern_with_broken_pieces_prints_english(tmp_path, capsys):
    st = _st_folder(tmp_path)
    for argv in (["import-sillytavern", str(st), "--dry-run"], ["import-sillytavern", str(st)]):
        code, out = _run(capsys, argv)
        assert code in (0, 1), out
        _no_cjk(out.replace(str(tmp_path), "<path>"))


def test_no_module_calls_a_reverse_matcher():
    """The matcher is gone from core/messages.py and nothing in the package names it."""
    source = (PKG / "core" / "messages.py").read_text("utf-8")
    for name in ("find_message", "translate", "_labelled"):
        assert f"def {name}(" not in source
    calls = []
    for path in PKG.rglob("*.py"):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.endswith("messages"):
                calls += [f"{path}: import {a.name}" for a in node.names if a.name in ("find_message", "translate")]
            if isinstance(node, ast.Attribute) and node.attr in ("find_message", "_labelled") or (
                    isinstance(node, ast.Attribute) and node.attr == "translate"
                    and isinstance(node.value, ast.Name) and node.value.id == "messages"):
                calls.append(f"{path}:{node.lineno}: .{node.attr}")
    assert not calls, calls
