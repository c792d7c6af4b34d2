"""Issue 26 §1, the card editor's engine (core/cards/edit.py): every field of SillyTavern's character panel read and
set by key, checked, counted in tokens; saves that are lossless for everything not edited (real cards of
../shared/fixtures and synthetic ones with odd unknown fields) and that keep the previous version; the avatar
replaced with the old picture's other chunks kept; a chat that plays an edited card gets it on its next beat and
says so."""

from __future__ import annotations

import copy
import io
import json
import struct
import zlib
from pathlib import Path

import pytest
from helpers import shared_path

from liyuan_desktop.core.beat.events import Activity
from liyuan_desktop.core.cards import edit, library, load_card
from liyuan_desktop.core.cards.edit import (
    FIELDS,
    CardEditError,
    CardEditor,
    carry_chunks,
    create_card,
    edited_notice,
    list_versions,
    restore_version,
    with_greeting,
)
from liyuan_desktop.core.cards.export import card_image, card_json_bytes, export_png
from liyuan_desktop.core.cards.meta import card_linked_books
from liyuan_desktop.core.cards.png import default_png, iter_chunks, make_chunk, read_png_card, text_chunk
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.messages import CATALOG, render
from liyuan_desktop.core.prompt.tokens import TokenCounter

FIXTURE_CARDS = shared_path("fixtures", "cards")

ODD = {
    "spec": "chara_card_v3", "spec_version": "3.0", "zzz_root": {"nested": [1, None, {"k": "值"}]},
    "name": "奇", "description": "root copy", "creatorcomment": "root notes", "talkativeness": 0.3,
    "data": {
        "name": "奇", "description": "原描述", "personality": "", "first_mes": "你好", "mes_example": "",
        "creator_notes": "旧", "tags": ["a", "很长的标签\n两行"], "alternate_greetings": ["一", "二", "三"],
        "weird": [1.50, {"a": None}], "nickname": "小奇", "source": ["x"],
        "extensions": {"talkativeness": 0.3, "chub": {"id": 7}, "regex_scripts": [
            {"scriptName": "s0", "findRegex": "/a/g", "replaceString": "b", "disabled": False, "extra": {"q": 1}},
            "not a script",
            {"scriptName": "s1", "findRegex": "c", "replaceString": "d", "disabled": True}]},
        "character_book": {"name": "书", "entries": [{"keys": ["k"], "content": "c", "id": 0, "mystery": True}],
                           "odd_book_key": 3},
        "group_only_greetings": [],
    },
}


def write_card(folder: Path, obj: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / "card.json"
    p.write_text(json.dumps(obj, ensure_ascii=False), "utf-8")
    return p


def without(d: dict, *keys: str) -> dict:
    return {k: v for k, v in d.items() if k not in keys}


def test_field_model_covers_sillytavern_panel():
    keys = [f.key for f in FIELDS]
    for k in ("name", "description", "personality", "scenario", "first_mes", "alternate_greetings", "mes_example",
              "system_prompt", "post_history_instructions", "creator_notes", "tags", "creator", "character_version",
              "depth_prompt.prompt", "depth_prompt.depth", "depth_prompt.role", "talkativeness"):
        assert k in keys
    for f in FIELDS:
        assert f.label.key in CATALOG and render(f.label, "en") != f.label.key  # labels in both languages


def test_no_edit_saves_the_same_card(tmp_path):
    p = write_card(tmp_path / "奇", ODD)
    ed = CardEditor.open(p.parent)
    assert ed.document() == ODD
    ed.save()
    assert json.loads(p.read_text("utf-8")) == ODD
    assert list(json.loads(p.read_text("utf-8"))) == list(ODD)  # key order kept


def test_edits_touch_only_their_fields(tmp_path):
    p = write_card(tmp_path / "奇", ODD)
    ed = CardEditor.open(p)
    ed.set("description", "新描述")
    ed.set("creator_notes", "新的话")
    ed.set("alternate_greetings.1", "改二")
    ed.set("depth_prompt.prompt", "注")
    ed.set("talkativeness", "0.9")
    ed.set_script_enabled(1, True)
    ed.save()
    out = json.loads(p.read_text("utf-8"))
    assert out["data"]["description"] == "新描述" and out["description"] == "新描述"  # the root mirror follows
    assert out["creatorcomment"] == "新的话" and out["data"]["creator_notes"] == "新的话"
    assert out["talkativeness"] == 0.9 and out["data"]["extensions"]["talkativeness"] == 0.9  # its type kept
    assert out["data"]["alternate_greetings"] == ["一", "改二", "三"]
    ext = out["data"]["extensions"]
    assert ext["depth_prompt"] == {"prompt": "注", "depth": 4, "role": "system"}  # SillyTavern's defaults
    assert ext["regex_scripts"][0] == ODD["data"]["extensions"]["regex_scripts"][0]
    assert ext["regex_scripts"][1] == "not a script"
    assert ext["regex_scripts"][2] == {**ODD["data"]["extensions"]["regex_scripts"][2], "disabled": False}
    assert ext["chub"] == {"id": 7}
    edited = ("description", "creator_notes", "alternate_greetings", "extensions")
    assert without(out["data"], *edited) == without(ODD["data"], *edited)  # the odd tag, weird, book … as they were
    assert without(out, "data", "description", "creatorcomment", "talkativeness") == \
        without(ODD, "data", "description", "creatorcomment", "talkativeness")
    assert list(out["data"]) == list(ODD["data"])
    for k in without(ODD["data"], *edited):  # byte for byte (== would take 1 for True, 1.0 for 1)
        assert card_json_bytes(out["data"][k]) == card_json_bytes(ODD["data"][k]), k
    assert card_json_bytes(out["zzz_root"]) == card_json_bytes(ODD["zzz_root"])
    # the odd untouched tag (two lines) is a problem the editor shows, but never stops a save of other fields
    assert [pr.key for pr in ed.problems()] == ["tags"]


@pytest.mark.skipif(not FIXTURE_CARDS.is_dir(), reason="../shared/fixtures/cards not found: shared/ is not beside this checkout")
@pytest.mark.parametrize("name", ["default_Seraphina.png", "Skynet_v2.png", "青空 理.png", "角色卡_修女与女忍的双面日常.json"])
def test_real_cards_round_trip(tmp_path, name):
    src = FIXTURE_CARDS / name
    if not src.is_file():
        pytest.skip(f"{name} not in ../shared/fixtures/cards")
    ref = library.import_card(src)
    before = json.loads((Path(ref.dir) / "card.json").read_text("utf-8"))
    ed = CardEditor.open(ref.dir)
    n = len(ed.get("alternate_greetings"))
    ed.set("scenario", "新场景")
    ed.add_item("alternate_greetings", "新开场", at=0)
    ed.set("tags." + str(len(ed.get("tags"))), "新标签")
    ed.set("depth_prompt.depth", 2)
    ed.save()
    after = json.loads((Path(ref.dir) / "card.json").read_text("utf-8"))
    touched = ("scenario", "alternate_greetings", "tags", "extensions")
    if "data" not in before:  # a flat V1 card is saved as V2 (as SillyTavern does): its root keys all stay
        assert after["spec"] == "chara_card_v2"
        assert without(after, "data", "spec", "spec_version", *touched) == without(before, *touched)
        before = {**before, "spec": after["spec"], "spec_version": after["spec_version"],
                  "data": {k: v for k, v in after["data"].items() if k not in touched}}
    data_b, data_a = before.get("data", {}), after.get("data", {})
    assert without(data_a, *touched) == without(data_b, *touched)
    assert list(without(data_a, *touched)) == list(without(data_b, *touched))  # in their places
    for k in without(data_b, *touched):  # byte for byte (== would take 1 for True, 1.0 for 1)
        assert card_json_bytes(data_a[k]) == card_json_bytes(data_b[k]), k
    assert without(after, "data", *touched) == without(before, "data", *touched)
    assert without(data_a["extensions"], "depth_prompt") == without(data_b.get("extensions") or {}, "depth_prompt")
    assert data_a["alternate_greetings"][1:] == (data_b.get("alternate_greetings") or [])
    assert len(data_a["alternate_greetings"]) == n + 1
    card = load_card(Path(ref.dir) / "card.json")
    assert card.scenario == "新场景" and card.tags[-1] == "新标签"
    if src.suffix == ".png":  # the exported PNG keeps every chunk of the picture but the card's own
        original = src.read_bytes()
        out = export_png(card, card_image(card))
        assert non_card_chunks(out) == non_card_chunks(original)
        assert read_png_card(io.BytesIO(out), len(out), "x").card["data"]["scenario"] == "新场景"


def non_card_chunks(png: bytes) -> list[bytes]:
    keep = []
    for c in iter_chunks(io.BytesIO(png), len(png), "x"):
        body = png[c.start:c.end]
        if c.type in (b"tEXt", b"zTXt", b"iTXt") and body[8:8 + 6].split(b"\x00")[0].lower() in (b"chara", b"ccv3"):
            continue
        keep.append(body)
    return keep


def test_v1_card_is_saved_as_v2(tmp_path):
    p = write_card(tmp_path / "v1", {"name": "老", "description": "d", "first_mes": "f", "personality": "", "scenario": "",
                                     "mes_example": "", "odd": 1})
    ed = CardEditor.open(p)
    ed.set("system_prompt", "系统")
    ed.save()
    out = json.loads(p.read_text("utf-8"))
    assert out["spec"] == "chara_card_v2" and out["data"]["system_prompt"] == "系统"
    assert out["odd"] == 1 and out["description"] == "d" and out["data"]["description"] == "d"


def test_checks_and_clear_errors(tmp_path):
    ed = CardEditor.open(write_card(tmp_path / "奇", ODD))
    cases = [("nope", "x", "cardedit.unknown_field"), ("alternate_greetings.9", "x", "cardedit.bad_index"),
             ("tags.-1", "x", "cardedit.bad_index"), ("name", "  ", "cardedit.name_empty"),
             ("name", "a\nb", "cardedit.one_line"), ("depth_prompt.depth", "-1", "cardedit.out_of_range"),
             ("depth_prompt.depth", "2.5", "cardedit.not_int"), ("talkativeness", "很多", "cardedit.not_number"),
             ("talkativeness", 2, "cardedit.out_of_range"), ("depth_prompt.role", "god", "cardedit.bad_choice"),
             ("description", 5, "cardedit.not_text"), ("alternate_greetings", "x", "cardedit.not_list"),
             ("creator", "x" * 600, "cardedit.too_long")]
    for key, value, code in cases:
        with pytest.raises(CardEditError) as e:
            ed.set(key, value)
        assert e.value.args[0].key == code, key
        assert render(e.value.args[0], "en") and "{" not in render(e.value.args[0], "en")
    assert not ed.dirty  # nothing changed
    with pytest.raises(CardEditError):
        ed.move_item("alternate_greetings", 0, 5)
    with pytest.raises(CardEditError):
        ed.set_script_enabled(2, True)  # two scripts (the string item is not one)
    ed.set("depth_prompt.role", "USER")
    assert ed.get("depth_prompt.role") == "user"


def test_list_operations(tmp_path):
    ed = CardEditor.open(write_card(tmp_path / "奇", ODD))
    assert ed.add_item("alternate_greetings", "四") == 3
    ed.move_item("alternate_greetings", 3, 0)
    assert ed.remove_item("alternate_greetings", 1) == "一"
    assert ed.get("alternate_greetings") == ["四", "二", "三"]
    ed.set("tags", "x, y ,,z")
    assert ed.get("tags") == ["x", "y", "z"] and ed.get("tags.1") == "y"
    ed.set("tags.3", "w")
    assert ed.get("tags") == ["x", "y", "z", "w"]


def test_versions_undo_and_are_pruned(tmp_path, monkeypatch):
    monkeypatch.setattr(edit, "KEEP_VERSIONS", 3)
    p = write_card(tmp_path / "奇", ODD)
    original = p.read_bytes()
    ed = CardEditor.open(p)
    for i in range(5):
        ed.set("description", f"第{i}版")
        ed.save()
    versions = list_versions(p.parent)
    assert len(versions) == 3 and all(v.files == ["card.json"] for v in versions)
    assert json.loads(Path(versions[0].path, "card.json").read_text("utf-8"))["data"]["description"] == "第3版"
    restore_version(p.parent, versions[0].id)
    assert load_card(p).description == "第3版"
    assert load_card(Path(list_versions(p.parent)[0].path) / "card.json").description == "第4版"  # the restore is undoable
    with pytest.raises(CardEditError):
        restore_version(p.parent, "nope")
    assert original != p.read_bytes()


def png_with(extra: list[bytes]) -> bytes:
    base = default_png()
    cut = base.rindex(b"IEND") - 4
    return base[:cut] + b"".join(extra) + base[cut:]


def tiny_png(w: int = 2, h: int = 3) -> bytes:
    row = b"\x00" + b"\x10\x20\x30" * w
    return (b"\x89PNG\r\n\x1a\n" + make_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + make_chunk(b"gAMA", struct.pack(">I", 45455)) + make_chunk(b"IDAT", zlib.compress(row * h))
            + make_chunk(b"IEND", b""))


def test_avatar_keeps_the_old_pictures_other_chunks(tmp_path):
    note = text_chunk("prompt", "a painting")
    private = make_chunk(b"prVt", b"keep me")       # private, safe to copy
    unsafe = make_chunk(b"prVT", b"drop me")        # not safe to copy: dropped after an image edit
    old_card = text_chunk("chara", "e30=")
    src = tmp_path / "奇.png"
    src.write_bytes(export_png(load_card_from(ODD, tmp_path), png_with([note, private, unsafe, old_card])))
    ref = library.import_card(src)
    ed = CardEditor.open(ref.dir)
    ed.set_avatar(tiny_png())
    ed.set("first_mes", "新开场")
    ed.save()
    pic = (Path(ref.dir) / "original.png").read_bytes()
    chunks = [(c.type, pic[c.data_start:c.data_start + c.length]) for c in iter_chunks(io.BytesIO(pic), len(pic), "x")]
    types = [t for t, _ in chunks]
    assert types[:3] == [b"IHDR", b"gAMA", b"IDAT"] and types[-1] == b"IEND"
    assert (b"tEXt", b"prompt\x00a painting") in chunks and (b"prVt", b"keep me") in chunks
    assert b"prVT" not in types
    card = read_png_card(io.BytesIO(pic), len(pic), "x").card  # the picture is the current card too
    assert card["data"]["first_mes"] == "新开场"
    assert [v.files for v in list_versions(ref.dir)] == [["card.json", "original.png"]]
    assert ed.avatar() == pic
    for bad in (b"\xff\xd8\xff\xe0" + b"0" * 20, b"RIFF0000WEBPVP8 ", b"\x89PNG\r\n\x1a\n" + b"junk"):
        with pytest.raises(CardEditError):
            ed.set_avatar(bad)


def load_card_from(obj: dict, tmp_path: Path):
    return load_card(write_card(tmp_path / "src", obj))


def test_carry_chunks_without_old_picture():
    new = tiny_png()
    assert carry_chunks(None, new) == new
    assert carry_chunks(b"not a png", new) == new


def test_tokens_per_field_and_total(tmp_path):
    ed = CardEditor.open(write_card(tmp_path / "奇", ODD))
    ed.set("depth_prompt.prompt", "角色备注的文字")
    tc = TokenCounter()
    rep = ed.tokens(tc)
    assert rep.fields["description"] == tc.text("原描述")
    assert rep.fields["alternate_greetings"] == sum(rep.fields[f"alternate_greetings.{i}"] for i in range(3))
    prompt = [f.key for f in FIELDS if f.prompt]
    assert rep.total == sum(rep.fields[k] for k in prompt)
    assert rep.permanent == sum(rep.fields[f.key] for f in FIELDS if f.permanent) < rep.total
    assert "creator_notes" in rep.fields and "creator_notes" not in prompt  # shown, never sent
    assert ed.tokens() == rep  # the default is the chats' estimate before calibration


def test_book_links_and_scripts(tmp_path):
    p = write_card(tmp_path / "奇", ODD)
    ed = CardEditor.open(p)
    assert ed.book().entries and ed.linked_books() == []
    assert [s["scriptName"] for s in ed.scripts()] == ["s0", "s1"]
    ed.set_linked_books(["地理", "历史", "地理"])
    ed.set_book(None)
    ed.save()
    assert card_linked_books(p.parent) == ["地理", "历史"]
    out = json.loads(p.read_text("utf-8"))
    assert out["data"]["extensions"]["world"] == "地理" and "character_book" not in out["data"]
    with pytest.raises(CardEditError):
        ed.set_linked_books(["../x"])
    s = ed.scripts()[0]
    s["replaceString"] = "B"
    ed.set_script(0, s)
    assert ed.scripts()[0]["replaceString"] == "B" and ed.scripts()[0]["extra"] == {"q": 1}
    with pytest.raises(CardEditError):
        ed.set_script(0, {"findRegex": 3})


def test_new_card_is_what_sillytavern_writes():
    ed = create_card("白鹭", {"description": "鸟", "depth_prompt": {"depth": 1}, "alternate_greetings": ["甲"]})
    raw = json.loads(ed.path.read_text("utf-8"))
    assert raw["spec"] == "chara_card_v3" and raw["data"]["group_only_greetings"] == []
    assert raw["name"] == raw["data"]["name"] == "白鹭" and raw["description"] == "鸟"
    assert raw["data"]["extensions"]["depth_prompt"] == {"prompt": "", "depth": 1, "role": "system"}
    assert raw["data"]["extensions"]["talkativeness"] == "0.5" and raw["avatar"] == "none"
    assert [c.name for c in library.list_cards()] == ["白鹭"]
    again = create_card("白鹭")
    assert again.path.parent.name == "白鹭-2"
    with pytest.raises(CardEditError):
        create_card("坏", {"nope": 1})
    assert not (library.cards_root() / "坏").exists()
    base = copy.deepcopy(ODD)
    third = create_card("复制", base=base)
    assert json.loads(third.path.read_text("utf-8"))["data"]["weird"] == [1.5, {"a": None}]


def test_with_greeting(tmp_path):
    card = load_card(write_card(tmp_path / "奇", ODD))
    g2 = with_greeting(card, 2)
    assert g2.first_mes == "二" and g2.alternate_greetings == ["你好", "一", "三"]
    assert with_greeting(card, 0) is card
    with pytest.raises(CardEditError):
        with_greeting(card, 4)


def write(text: str) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]}


def seal() -> dict:
    return {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}


async def test_a_chat_gets_the_edit_on_its_next_beat(tmp_path):
    ed = create_card("白鹭", {"description": "一只白色的鸟。", "first_mes": "白鹭落在河边。"})
    ref = library.CardRef(name="白鹭", dir=str(ed.path.parent))
    d = library.new_chat_dir(ref, "一")
    model = ReplayModel(actor=[write("第一拍。"), seal(), write("第二拍。"), seal()], scribe=['{"patch": {}}'] * 2)
    chat = Chat.create(d, ref.load(), model)
    events: list = []
    await chat.send("你好", on_event=events.append)
    assert not [e for e in events if isinstance(e, Activity) and "改过了" in e.text]
    assert chat.refresh_card() is None  # nothing changed

    ed.set("description", "一只灰色的鸟。")
    ed.save()
    events.clear()
    await chat.send("再来", on_event=events.append)
    notes = [e.text for e in events if isinstance(e, Activity) and e.text == edited_notice("白鹭")]
    assert len(notes) == 1 and "白鹭" in notes[0]
    assert chat.card.description == "一只灰色的鸟。" and "灰色" in chat.system
    assert "settings" in chat.last_changes.names()
    chat.close()

    ed.set("personality", "安静")  # edited while the chat is closed: the reopened chat says so
    ed.save()
    again = Chat.open(d, ref.load(), ReplayModel(actor=[], scribe=[]))
    assert [n for n in again.pending_notices if getattr(n, "key", "") == "card.edited_notice"]
    again.close()


def test_a_card_file_outside_the_library(tmp_path):
    p = tmp_path / "loose.json"
    p.write_text(json.dumps(ODD, ensure_ascii=False), "utf-8")
    ed = CardEditor.open(p)
    ed.set("scenario", "野外")
    ed.save()
    assert load_card(p).scenario == "野外"
    [v] = list_versions(tmp_path)
    assert v.files == ["loose.json"] and json.loads(Path(v.path, "loose.json").read_text("utf-8")) == ODD
    restore_version(tmp_path, v.id)
    assert json.loads(p.read_text("utf-8")) == ODD
    src = tmp_path / "x.png"
    src.write_bytes(export_png(load_card(p)))
    with pytest.raises(CardEditError) as e:
        CardEditor.open(src)  # a PNG is edited in the library (imported first)
    assert e.value.args[0].key == "cardedit.not_json"


def test_a_broken_card_file_keeps_the_chats_card(tmp_path):
    ed = create_card("白鹭", {"first_mes": "白鹭落在河边。"})
    ref = library.CardRef(name="白鹭", dir=str(ed.path.parent))
    chat = Chat.create(library.new_chat_dir(ref, "一"), ref.load(), ReplayModel(actor=[], scribe=[]))
    ed.path.write_text("{broken", "utf-8")
    assert chat.refresh_card() is None and chat.card.first_mes == "白鹭落在河边。"
    chat.close()
