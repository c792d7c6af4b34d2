"""Card import, inspection and lossless export on the real cards in ../shared/fixtures/cards (read in place, never
copied into the repository; skipped with a reason when that folder is absent) and on cards built here.

Expected counts are computed in this file from the raw JSON, with its own minimal PNG chunk reader, so the
importer is checked against an independent reading of the same bytes."""

from __future__ import annotations

import base64
import io
import json
import os
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest
from helpers import shared_path

from liyuan_desktop.cli.card import add_parser as add_card_parser
from liyuan_desktop.cli.card import run as run_card
from liyuan_desktop.core.cards import (
    Card,
    CardError,
    export_json,
    export_png,
    icon_bytes,
    inspect_card,
    load_card,
    load_card_bytes,
)
from liyuan_desktop.core.cards import library as library

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = shared_path("fixtures", "cards")
SKIP_REASON = f"card fixtures {FIXTURES} not found (the shared/ folder is not beside this checkout)"
NOT_CARDS = {"openai-preset-Default.json": "预设", "Eldoria.json": "世界书"}


def fixture(name: str) -> Path:
    p = FIXTURES / name
    if not p.exists():
        pytest.skip(SKIP_REASON)
    return p


def all_fixture_files() -> list:
    if not FIXTURES.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=SKIP_REASON), id="no-fixtures")]
    files = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix.lower() in (".png", ".json", ".charx"))
    return [pytest.param(p, id=str(p.relative_to(FIXTURES))) for p in files]


# -- an independent, minimal PNG reader / writer for the tests ------------------------------------------------


def chunks_of(png: bytes) -> list[tuple[bytes, bytes]]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    out, i = [], 8
    while i < len(png):
        n, t = struct.unpack(">I4s", png[i:i + 8])
        out.append((t, png[i + 8:i + 8 + n]))
        i += 12 + n
        if t == b"IEND":
            break
    return out


def text_chunks(png: bytes) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for t, d in chunks_of(png):
        if t == b"tEXt":
            k, _, v = d.partition(b"\0")
            found.setdefault(k.decode("latin-1").lower(), v)
    return found


def raw_card_json(path: Path) -> dict:
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return json.loads(data.decode("utf-8-sig"))
    t = text_chunks(data)
    return json.loads(base64.b64decode(t.get("ccv3") or t["chara"]))


def chunk(ctype: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + ctype + data + struct.pack(">I", zlib.crc32(ctype + data))


def ihdr(w: int = 2, h: int = 2) -> bytes:
    return chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))


IDAT = chunk(b"IDAT", zlib.compress(b"\x00" + b"\x80" * 6 + b"\x00" + b"\x80" * 6))
IEND = chunk(b"IEND", b"")
SIG = b"\x89PNG\r\n\x1a\n"


def b64json(obj) -> bytes:
    return base64.b64encode(json.dumps(obj, ensure_ascii=False).encode("utf-8"))


def png_with(*middle: bytes, after: tuple = ()) -> bytes:
    return SIG + ihdr() + b"".join(middle) + IDAT + b"".join(after) + IEND


def v3(**data) -> dict:
    base = {"name": "测试", "description": "描述", "personality": "", "scenario": "", "first_mes": "你好",
            "mes_example": "", "creator_notes": "", "system_prompt": "", "post_history_instructions": "",
            "alternate_greetings": [], "tags": [], "creator": "", "character_version": "", "extensions": {},
            "group_only_greetings": []}
    base.update(data)
    return {"spec": "chara_card_v3", "spec_version": "3.0", "data": base}


# -- expected values computed from the raw JSON ----------------------------------------------------------------


def expected_summary(raw: dict) -> dict:
    d = raw["data"] if isinstance(raw.get("data"), dict) and str(raw.get("spec", "")).startswith("chara_card") else raw
    book = d.get("character_book") if d.get("character_book") is not None else raw.get("character_book")
    entries = (book or {}).get("entries") or []
    ext = d.get("extensions") or {}
    scripts = ext.get("regex_scripts") or []
    markers = ("<!doctype html", "<html", "<head>", "<body", "<div", "<style", "<script")

    def html(s):
        return isinstance(s, str) and any(m in s.lower() for m in markers)

    first = d.get("first_mes") or ""
    alts = d.get("alternate_greetings") or []
    shown = [s for s in scripts if not s.get("disabled") and not (s.get("promptOnly") and not s.get("markdownOnly"))]
    return {
        "name": d.get("name") or raw.get("name"),
        "spec": {"chara_card_v2": "v2", "chara_card_v3": "v3"}.get(raw.get("spec"), "v1"),
        "lorebook": {"entries": len(entries),
                     "constant": len([e for e in entries if e.get("constant") and e.get("enabled", True)])},
        "regex_scripts": len(scripts),
        "status_bar_html": any(html(s.get("replaceString")) for s in shown) or any(html(g) for g in [first, *alts]),
        "mvu": {"initvar_entries": len([e for e in entries if "[initvar]" in (e.get("comment") or "").lower()])},
        "greetings": (1 if first.strip() else 0) + len(alts),
    }


@pytest.mark.parametrize("path", all_fixture_files())
def test_every_fixture_inspects_or_is_refused(path: Path):
    if path.name in NOT_CARDS:
        with pytest.raises(CardError) as ei:
            inspect_card(path)
        msg = str(ei.value)
        assert "\n" not in msg and msg.startswith(path.name) and NOT_CARDS[path.name] in msg and "不是角色卡" in msg
        return
    info = inspect_card(path)
    raw = raw_card_json(path)
    want = expected_summary(raw)
    got = {k: v for k, v in info.items() if k not in ("source_format", "warnings", "templates", "th_scripts")}
    assert got == want
    assert isinstance(info["templates"]["broken"], list)  # prompt templates: tests/test_ejs.py
    assert info["source_format"] == path.suffix.lower().lstrip(".")
    assert isinstance(info["warnings"], list)
    assert load_card(path).raw == raw


def test_fixture_facts_from_sources_md():
    """The counts SOURCES.md states, as a cross-check of the computed ones."""
    q = inspect_card(fixture("青空 理.png"))
    assert q["lorebook"]["entries"] == 7 and q["regex_scripts"] == 6 and q["mvu"]["initvar_entries"] == 1
    assert q["status_bar_html"] is True and q["spec"] == "v3" and q["source_format"] == "png"
    n = inspect_card(fixture("角色卡_修女与女忍的双面日常.json"))
    assert n["lorebook"]["entries"] == 10 and n["regex_scripts"] == 2 and n["status_bar_html"] and n["mvu"]["initvar_entries"] == 1
    s = inspect_card(fixture("default_Seraphina.png"))
    assert s["lorebook"] == {"entries": 4, "constant": 0} and s["status_bar_html"] is False and s["spec"] == "v3"
    k = inspect_card(fixture("Skynet_v2.png"))
    assert k["spec"] == "v1" and k["name"] == "Skynet" and k["lorebook"]["entries"] == 0


def test_ccv3_wins_and_engine_fields():
    card = load_card(fixture("default_Seraphina.png"))
    assert card.spec == "v3" and card.raw["spec"] == "chara_card_v3"  # ccv3 read, not the V2 chara chunk
    assert card.name == "Seraphina" and "\r\n" in card.description
    assert len(card.lorebook.entries) == 4 and card.lorebook.name == "Eldoria"
    q = load_card(fixture("青空 理.png"))
    assert [e.enabled for e in q.lorebook.entries].count(False) == 1
    assert len(q.alternate_greetings) == 3 and q.extensions["regex_scripts"]
    assert q.persona_name == "" and q.language == "zh"


def test_root_vs_data_precedence():
    p = fixture("角色卡_修女与女忍的双面日常.json")
    raw = json.loads(p.read_text("utf-8"))
    raw["name"] = "根上的旧名字"
    raw["data"].pop("scenario")
    raw["scenario"] = "只在根上的场景"
    card = load_card_bytes(json.dumps(raw, ensure_ascii=False).encode(), "x.json")
    assert card.name == raw["data"]["name"]  # data first
    assert card.scenario == "只在根上的场景"  # root as fallback


# -- round trips ---------------------------------------------------------------------------------------------


def test_json_round_trip_is_lossless(tmp_path):
    p = fixture("角色卡_修女与女忍的双面日常.json")
    raw = json.loads(p.read_text("utf-8"))
    card = load_card(p)
    out = export_json(card)
    assert out == raw
    q = tmp_path / "again.json"
    q.write_text(json.dumps(out, ensure_ascii=False), "utf-8")
    assert load_card(q).raw == raw


@pytest.mark.parametrize("name", ["default_Seraphina.png", "青空 理.png", "Skynet_v2.png"])
def test_png_round_trip(name):
    p = fixture(name)
    original = p.read_bytes()
    card = load_card(p)
    out = export_png(card, original)
    again = load_card_bytes(out, name)
    assert again.source_format == "png" and again.spec == "v3"
    for f in ("name", "description", "personality", "scenario", "first_mes", "mes_example", "alternate_greetings",
              "tags", "extensions", "character_book", "system_prompt", "post_history_instructions"):
        assert getattr(again, f) == getattr(card, f), f
    if card.spec == "v3":
        assert again.raw == card.raw  # a V3 card comes back byte-equal as JSON
    else:  # V1 is upgraded in the chunks; every original root key stays
        assert all(again.raw[k] == v for k, v in card.raw.items())
    # the image is untouched: every non-card chunk identical and in order
    keep = [c for c in chunks_of(original) if not (c[0] == b"tEXt" and c[1].split(b"\0")[0].lower() in (b"chara", b"ccv3"))]
    new = [c for c in chunks_of(out) if not (c[0] == b"tEXt" and c[1].split(b"\0")[0].lower() in (b"chara", b"ccv3"))]
    assert keep == new
    # both chunks, chara as V2 and ccv3 as V3, right before IEND
    types = chunks_of(out)
    assert [t[1].split(b"\0")[0] for t in types[-3:-1]] == [b"chara", b"ccv3"] and types[-1][0] == b"IEND"
    t = text_chunks(out)
    assert json.loads(base64.b64decode(t["chara"]))["spec"] == "chara_card_v2"
    assert json.loads(base64.b64decode(t["ccv3"]))["spec"] == "chara_card_v3"
    # exporting the re-imported card again changes nothing
    assert export_png(again, out) == out


def test_export_png_without_image_uses_default(tmp_path):
    card = load_card(fixture("角色卡_修女与女忍的双面日常.json"))
    out = export_png(card)
    assert out[:8] == SIG and chunks_of(out)[0][0] == b"IHDR"
    again = load_card_bytes(out, "x.png")
    assert again.raw["data"] == {**card.raw["data"], "group_only_greetings": []}
    assert again.raw["name"] == card.raw["name"] and again.raw["extensions"] == card.raw["extensions"]


def test_export_refuses_non_png_image():
    card = load_card_bytes(json.dumps(v3()).encode(), "x.json")
    with pytest.raises(CardError, match="JPEG"):
        export_png(card, b"\xff\xd8\xff\xe0" + b"\0" * 100)


def test_v3_fields_and_unknown_keys_survive_round_trips():
    raw = v3(nickname="小测", creator_notes_multilingual={"en": "hi"}, source=["https://example.org"],
             creation_date=1700000000, modification_date=1700000001,
             assets=[{"type": "icon", "uri": "ccdefault:", "name": "main", "ext": "png"}],
             group_only_greetings=["群聊开场"], x_unknown_data={"deep": [1, {"z": None}]},
             extensions={"talkativeness": "0.5", "my_tool": {"a": [1, 2], "b": {"c": "中"}}, "regex_scripts": []},
             character_book={"name": "书", "x_book": 1, "extensions": {"x_bookext": True},
                             "entries": [{"keys": ["k"], "content": "c", "enabled": True, "insertion_order": 10,
                                          "use_regex": False, "id": "str-id", "x_entry": "keep",
                                          "extensions": {"position": 4, "depth": 2, "x_entry_ext": [None]}}]})
    raw["x_root"] = {"kept": True}
    card = load_card_bytes(json.dumps(raw, ensure_ascii=False).encode(), "v3.json")
    assert export_json(card) == raw
    png = export_png(card)
    assert load_card_bytes(png, "v3.png").raw == raw
    assert card.lorebook.entries[0].uid == 0  # a string id does not break the engine's book


def test_deliberate_edits_are_applied_and_nothing_else():
    p = fixture("角色卡_修女与女忍的双面日常.json")
    raw = json.loads(p.read_text("utf-8"))
    card = load_card(p)
    card.name = "新名字"
    card.description = "新描述"
    card.extensions = {**card.extensions, "liyuan": {"language": "zh"}}
    card.alternate_greetings = card.alternate_greetings + ["另一个开场"]
    out = export_json(card)
    assert out["data"]["name"] == out["name"] == "新名字"  # the root copy is kept in step
    assert out["data"]["description"] == out["description"] == "新描述"
    assert out["data"]["extensions"]["liyuan"] == {"language": "zh"}
    assert out["data"]["alternate_greetings"][-1] == "另一个开场"
    for k in raw:
        if k not in ("name", "description", "extensions", "alternate_greetings", "data"):
            assert out[k] == raw[k], k
    for k in raw["data"]:
        if k not in ("name", "description", "extensions", "alternate_greetings"):
            assert out["data"][k] == raw["data"][k], k
    assert raw == json.loads(p.read_text("utf-8")) and card.raw == raw  # the card's raw is not mutated


def test_v1_stays_v1_in_json_and_code_made_card_exports():
    raw = {"name": "老卡", "description": "d", "personality": "p", "scenario": "s", "first_mes": "f",
           "mes_example": "", "creatorcomment": "注", "metadata": {"version": 1}}
    card = load_card_bytes(json.dumps(raw, ensure_ascii=False).encode(), "v1.json")
    assert card.spec == "v1" and card.creator_notes == "注"
    assert export_json(card) == raw
    card.creator_notes = "新注"
    assert export_json(card)["creatorcomment"] == "新注" and "creator_notes" not in export_json(card)
    fresh = Card(name="新卡", first_mes="嗨")
    out = export_json(fresh)
    assert out["spec"] == "chara_card_v3" and out["data"]["name"] == "新卡" and out["data"]["first_mes"] == "嗨"
    assert load_card_bytes(export_png(fresh), "n.png").name == "新卡"


# -- known failure classes -----------------------------------------------------------------------------------


def test_foreign_text_chunk_first():
    comfy = chunk(b"tEXt", b"prompt\0" + json.dumps({"3": {"class_type": "KSampler"}}).encode())
    png = png_with(comfy, chunk(b"tEXt", b"chara\0" + b64json(v3(name="甲"))))
    assert load_card_bytes(png, "a.png").name == "甲"


def test_ztxt_only_card():
    z = chunk(b"zTXt", b"chara\0\0" + zlib.compress(b64json(v3(name="压缩卡"))))
    card = load_card_bytes(png_with(z), "z.png")
    assert card.name == "压缩卡" and card.source_format == "png"


@pytest.mark.parametrize("compressed", [0, 1])
def test_itxt_card(compressed):
    text = b64json(v3(name="国际"))
    body = zlib.compress(text) if compressed else text
    it = chunk(b"iTXt", b"ccv3\0" + bytes([compressed, 0]) + b"zh\0ccv3\0" + body)
    assert load_card_bytes(png_with(it), "i.png").name == "国际"


def test_card_chunks_after_idat_and_ccv3_precedence():
    png = png_with(after=(chunk(b"tEXt", b"chara\0" + b64json(v3(name="旧"))),
                          chunk(b"tEXt", b"CCV3\0" + b64json(v3(name="新")))))
    assert load_card_bytes(png, "p.png").name == "新"
    before = png_with(chunk(b"tEXt", b"chara\0" + b64json({"name": "V1", "description": "x"})))
    assert load_card_bytes(before, "p.png").spec == "v1"


def test_empty_or_missing_name_uses_file_name():
    for data in (v3(name=""), v3(name=None), {"description": "only"}):
        card = load_card_bytes(json.dumps(data).encode(), "无名氏.json")
        assert card.name == "无名氏" and any("文件名" in w for w in card.warnings)


def test_null_book_means_no_lorebook():
    for book in (None, {"entries": None}, {"name": "x", "entries": None}):
        card = load_card_bytes(json.dumps(v3(character_book=book)).encode(), "b.json")
        assert card.character_book is None and card.lorebook.entries == []
        assert inspect_summary(card)["lorebook"] == {"entries": 0, "constant": 0}
    card = load_card_bytes(json.dumps(v3(character_book={"entries": "nope"})).encode(), "b.json")
    assert card.character_book is None and card.warnings


def inspect_summary(card):
    from liyuan_desktop.core.cards import inspect_loaded

    return inspect_loaded(card)


def test_apng_chunks_kept_on_export():
    actl = chunk(b"acTL", struct.pack(">II", 1, 0))
    fctl = chunk(b"fcTL", struct.pack(">IIIIIHHBB", 0, 2, 2, 0, 0, 1, 10, 0, 0))
    png = SIG + ihdr() + actl + fctl + IDAT + chunk(b"tEXt", b"chara\0" + b64json(v3(name="动图"))) + IEND
    card = load_card_bytes(png, "a.png")
    out = export_png(card, png)
    assert [t for t, _ in chunks_of(out)][:4] == [b"IHDR", b"acTL", b"fcTL", b"IDAT"]
    assert load_card_bytes(out, "a.png").name == "动图"


def test_pygmalion_keys():
    raw = {"char_name": "皮格", "char_persona": "人设", "char_greeting": "哈喽", "world_scenario": "场景",
           "example_dialogue": "例"}
    card = load_card_bytes(json.dumps(raw, ensure_ascii=False).encode(), "pyg.json")
    assert (card.name, card.description, card.first_mes, card.scenario, card.mes_example) == ("皮格", "人设", "哈喽", "场景", "例")


def test_renamed_images_are_named():
    for head, kind in ((b"\xff\xd8\xff\xe0\0\x10JFIF\0", "JPEG"), (b"RIFF\x10\0\0\0WEBPVP8 ", "WEBP"), (b"GIF89a\x01\0\x01\0", "GIF")):
        with pytest.raises(CardError) as ei:
            load_card_bytes(head + b"\0" * 64, "卡.png")
        assert str(ei.value) == f"卡.png：这是 {kind} 图片，不是 PNG 角色卡（角色卡只能是 PNG、JSON 或 CHARX）"


# -- CHARX ---------------------------------------------------------------------------------------------------


def make_charx(card: dict, files: dict[str, bytes] | None = None, prefix: bytes = b"") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("card.json", json.dumps(card, ensure_ascii=False))
        for name, data in (files or {}).items():
            z.writestr(name, data)
    return prefix + buf.getvalue()


def charx_card() -> dict:
    return v3(name="压缩包卡", assets=[
        {"type": "icon", "uri": "embeded://assets/icon/images/main.png", "name": "main", "ext": "png"},
        {"type": "emotion", "uri": "embeded://assets/emotion/images/smile.png", "name": "smile", "ext": "png"},
        {"type": "icon", "uri": "ccdefault:", "name": "alt", "ext": "png"},
        {"type": "other", "uri": "embeded://assets/other/missing.bin", "name": "gone", "ext": "bin"}])


def test_charx_import_assets_and_export(tmp_path):
    icon = png_with()
    data = make_charx(charx_card(), {"assets/icon/images/main.png": icon, "assets/emotion/images/smile.png": b"smile",
                                     "module.risum": b"\0binary", "x_meta/1.json": b"{}"})
    p = tmp_path / "卡.charx"
    p.write_bytes(data)
    card = load_card(p)
    assert card.source_format == "charx" and card.name == "压缩包卡" and card.spec == "v3"
    assert card.assets == {"embeded://assets/icon/images/main.png": icon, "embeded://assets/emotion/images/smile.png": b"smile"}
    assert any("missing.bin" in w for w in card.warnings)
    assert icon_bytes(card) == icon
    info = inspect_card(p)
    assert info["source_format"] == "charx" and info["greetings"] == 1
    assert export_json(card) == charx_card()
    out = export_png(card, icon_bytes(card))
    assert load_card_bytes(out, "x.png").raw == charx_card()


def test_jpeg_zip_hybrid_reads_as_charx():
    data = make_charx(charx_card(), {"assets/icon/images/main.png": b"img"}, prefix=b"\xff\xd8\xff\xe0" + b"\0" * 200 + b"\xff\xd9")
    card = load_card_bytes(data, "hybrid.jpeg")
    assert card.source_format == "charx" and card.name == "压缩包卡"


# -- library and CLI -----------------------------------------------------------------------------------------


def test_library_import_png_keeps_raw(tmp_path):
    ref = library.import_card(fixture("青空 理.png"))
    d = Path(ref.dir)
    assert (d / "original.png").read_bytes() == fixture("青空 理.png").read_bytes()
    card = ref.load()
    assert card.raw == load_card(fixture("青空 理.png")).raw and card.name == "青空 理"


def _run(argv: list[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="liyuan")
    add_card_parser(p.add_subparsers(dest="cmd"))
    return run_card(p.parse_args(argv))


def test_cli_inspect_import_export(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = fixture("青空 理.png")
    assert _run(["card", "inspect", str(src), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == inspect_card(src)
    assert _run(["card", "inspect", str(src)]) == 0
    human = capsys.readouterr().out
    assert "青空 理" in human and "世界书：7 条" in human and "正则脚本：6 个" in human and "状态栏 HTML：有" in human
    assert _run(["card", "import", str(src)]) == 0
    folder = Path(capsys.readouterr().out.strip())
    assert (folder / "card.json").is_file() and (folder / "original.png").is_file()
    assert _run(["card", "export", folder.name, "--format", "png"]) == 0
    out_png = Path(capsys.readouterr().out.strip())
    assert out_png.parent == tmp_path and load_card(out_png).raw == load_card(src).raw
    assert chunks_of(out_png.read_bytes())[1] == chunks_of(src.read_bytes())[1]  # the card's own image
    assert _run(["card", "export", folder.name, "--format", "json", "-o", str(tmp_path / "x.json")]) == 0
    assert json.loads((tmp_path / "x.json").read_text("utf-8")) == load_card(src).raw
    assert _run(["card", "export", str(src), "--format", "json"]) == 0  # a path works too
    assert Path(capsys.readouterr().out.strip().splitlines()[-1]).is_file()


def test_cli_bad_file_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "坏.png"
    bad.write_bytes(b"\xff\xd8\xff\xe0" + b"\0" * 50)
    env = {**os.environ, "LIYUAN_HOME": str(tmp_path / "home")}
    for argv in (["card", "inspect", str(bad)], ["card", "import", str(bad)], ["card", "export", "没有这张卡"],
                 ["card", "inspect", str(fixture("formats/openai-preset-Default.json"))]):
        r = subprocess.run([sys.executable, "-m", "liyuan_desktop.cli", *argv], capture_output=True, text=True,
                           env=env, cwd=tmp_path, timeout=60)
        assert r.returncode == 2, r
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("liyuan: ") and "Traceback" not in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-m", "liyuan_desktop.cli", "card", "inspect", str(bad)],
                       capture_output=True, text=True, env=env, timeout=60)
    assert "这是 JPEG 图片，不是 PNG 角色卡" in r.stderr


def test_prose_language_follows_the_card():
    """An English card is played in English (the 【语言】 line), a Chinese one in Chinese; the card's own
    extensions.liyuan.language wins."""
    from liyuan_desktop.core.cards import card_from_json

    def lang(first, desc="", ext=None):
        data = {"name": "x", "first_mes": first, "description": desc, "extensions": ext or {}}
        return card_from_json({"spec": "chara_card_v2", "spec_version": "2.0", "data": data}, "x.json").language

    assert lang("The rain had not stopped for three days when you pushed open the tavern door.") == "en"
    assert lang("雨下到第三天，你推开听雨轩的门。*She looks up.*") == "zh"
    assert lang("雨が三日も降り続いている。あなたは扉を開けた。") == "ja"
    assert lang("The rain.", ext={"liyuan": {"language": "zh"}}) == "zh"
    assert lang("") == "zh"
