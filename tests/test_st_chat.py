"""SillyTavern chat files: import into a session tree (swipes → siblings, system/narrator → notes, greeting →
opening), lossless export, damaged input, a native Liyuan chat exported, and the 5,000-message timing."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from helpers import DEMO_CARD, shared_path

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.cards.st_chat import (
    StChatError,
    format_create_date,
    format_send_date,
    parse_st_chat,
    parse_st_time,
    read_st_chat,
    write_session,
)
from liyuan_desktop.core.cards.st_chat_export import export_st_chat, st_messages
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.chat.st_import import import_st_chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.session.tree import SessionError, SessionTree

FIXTURES = shared_path("fixtures", "cards")

HEADER = {"user_name": "旅人", "character_name": "青梧", "create_date": "2024-10-18@20h52m17s",
          "chat_metadata": {"variables": {"好感": "5"}, "note_prompt": "", "chat_id_hash": 123, "tainted": False}}


def msg(name: str, text: str, *, user: bool = False, system: bool = False, **extra) -> dict:
    d = {"name": name, "is_user": user, "is_system": system, "send_date": "October 18, 2024 8:52pm", "mes": text,
         "extra": {}}
    d.update(extra)
    return d


def swiped(name: str, texts: list[str], sid: int, **extra) -> dict:
    info = [{"send_date": f"October 18, 2024 9:0{i}pm", "gen_started": f"2024-10-18T13:0{i}:00.000Z",
             "gen_finished": f"2024-10-18T13:0{i}:05.000Z", "extra": {"model": f"m{i}"}} for i in range(len(texts))]
    return msg(name, texts[sid], swipes=list(texts), swipe_id=sid, swipe_info=info,
               gen_started=info[sid]["gen_started"], **{"extra": {"model": f"m{sid}", "reasoning": "先想想 🤔"}}, **extra)


def sample_lines() -> list[dict]:
    return [
        HEADER,
        swiped("青梧", ["雨下得正紧。「客官，进来避避雨吧。」", "另一个开场：檐下的灯笼 🏮"], 0),
        msg("旅人", "多谢掌柜。这镇子叫什么？", user=True),
        swiped("青梧", ["「栖水镇。」", "「这里是栖水镇，客官。」", "她没抬头：「栖水。」"], 1,
               variables=[{"stat_data": {"好感": 1}}, {"stat_data": {"好感": 2}}, {"stat_data": {"好感": 3}}]),
        msg("System", "（夜深了。）", system=True, extra={"type": "narrator"}),
        msg("旅人", "被隐藏的一句", user=True, system=True),
        msg("旅人", "我想打听一个人——沈怀瑾。\n第二行 ✨ \"quoted\"", user=True),
        msg("青梧", "她手里的茶杯停了一下。", gen_started="2024-10-18T13:10:00.000Z", force_avatar="x.png"),
    ]


def write_chat(path: Path, lines: list[dict], tail: str = "") -> Path:
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + tail, "utf-8")
    return path


def test_import_builds_tree_with_opening_swipes_and_notes(tmp_path):
    f = write_chat(tmp_path / "青梧 - 2024-10-18@20h52m17s.jsonl", sample_lines(), '\n{"name":"旅人","is_user":tr')
    st = read_st_chat(f)
    assert st.header == HEADER and len(st.messages) == 7
    assert any("最后一行不完整" in w for w in st.warnings)
    tree = write_session(st, tmp_path / "out" / "session.jsonl", card_name="青梧")
    full = tree.path_to()
    # the reply's per-swipe variables became a snapshot right below it (issue 13 §2); the messages are as before
    assert [e.type for e in full] == ["header", "opening", "user", "assistant", "rp-state", "note", "note", "user",
                                      "assistant"]
    assert full[4].mvu == {"stat_data": {"好感": 2}} and full[4].source == "init"
    path = [e for e in full if e.type != "rp-state"]
    h = path[0]
    assert h.persona == "旅人" and h.card_name == "青梧" and h.st == HEADER and h.title.startswith("青梧 - ")
    opening = path[1]
    assert opening.text == "【开场 · 青梧】\n雨下得正紧。「客官，进来避避雨吧。」"
    greetings = tree.children(h.id)
    assert [g.type for g in greetings] == ["opening", "opening"] and greetings[1].st == {"swipe": 1}
    reply = path[3]
    assert reply.text == "「这里是栖水镇，客官。」" and reply.sealed
    siblings = tree.children(path[2].id)
    assert [s.text for s in siblings] == ["「栖水镇。」", "「这里是栖水镇，客官。」", "她没抬头：「栖水。」"]
    assert reply.st["extra"]["reasoning"] == "先想想 🤔" and reply.st["swipe_id"] == 1 and "mes" not in reply.st
    assert reply.st["variables"][1] == {"stat_data": {"好感": 2}}
    assert [(n.kind, n.text) for n in path[4:6]] == [("narrator", "（夜深了。）"), ("hidden", "被隐藏的一句")]
    assert path[5].st["is_user"] is True
    assert path[-1].st["force_avatar"] == "x.png"
    assert tree.leaf_id == path[-1].id
    # entries got real time stamps from send_date
    assert abs(path[2].ts - parse_st_time("October 18, 2024 8:52pm")) == 0
    # the file on disk loads back to the same branch
    again = SessionTree.open(tmp_path / "out" / "session.jsonl")
    assert [e.id for e in again.path_to()] == [e.id for e in full] and not again.load_warnings


def test_round_trip_is_lossless_on_messages_and_swipes(tmp_path):
    lines = sample_lines()
    f = write_chat(tmp_path / "a.jsonl", lines)
    tree = write_session(read_st_chat(f), tmp_path / "t" / "session.jsonl", card_name="青梧")
    out = export_st_chat(tree, tmp_path / "b.jsonl")
    exported = [json.loads(x) for x in out.read_text("utf-8").split("\n")]
    assert exported[0] == lines[0]
    assert exported[1:] == lines[1:]  # every key and value, swipes and swipe_info included
    # and import → export → import again gives the same again
    tree2 = write_session(read_st_chat(out), tmp_path / "t2" / "session.jsonl", card_name="青梧")
    header2, messages2 = st_messages(tree2)
    assert header2 == lines[0] and messages2 == lines[1:]
    # ST's line format: compact JSON, unicode unescaped, no spaces
    first_msg_line = out.read_text("utf-8").split("\n")[1]
    assert "🏮" in first_msg_line and '","' in first_msg_line and "\\u" not in first_msg_line


def test_switching_swipe_in_liyuan_exports_the_new_selection(tmp_path):
    f = write_chat(tmp_path / "a.jsonl", sample_lines())
    tree = write_session(read_st_chat(f), tmp_path / "t" / "session.jsonl", card_name="青梧")
    user = tree.path_to()[2]
    third = tree.children(user.id)[2]
    tree.set_leaf(third.id)
    _, messages = st_messages(tree)
    assert len(messages) == 3  # greeting, user, the chosen swipe (the rest of the chat hangs under the old one)
    m = messages[2]
    assert m["mes"] == "她没抬头：「栖水。」" and m["swipe_id"] == 2 and m["swipes"][2] == m["mes"]
    assert m["send_date"] == "October 18, 2024 9:02pm" and m["extra"] == {"model": "m2"}  # taken from swipe_info[2]
    assert m["gen_started"] == "2024-10-18T13:02:00.000Z"


def test_mes_differing_from_its_swipe_and_bad_swipe_id(tmp_path):
    odd = msg("青梧", "改过的正文", swipes=["原稿", "另一稿"], swipe_id=0)
    bad = msg("青梧", "乙", swipes=["甲", "乙"], swipe_id=7)
    lines = [HEADER, msg("青梧", "开场"), msg("旅人", "嗯", user=True), odd, msg("旅人", "再来", user=True), bad]
    f = write_chat(tmp_path / "a.jsonl", lines)
    st = read_st_chat(f)
    tree = write_session(st, tmp_path / "t" / "session.jsonl", card_name="青梧")
    assert any("swipe_id 7" in w for w in tree.load_warnings)
    _, messages = st_messages(tree)
    assert messages[2] == odd  # swipes[0] "原稿" kept although mes differs
    assert messages[4]["mes"] == "乙" and messages[4]["swipe_id"] == 1  # repaired to the index of mes


def test_damaged_lines_are_skipped_with_warnings(tmp_path):
    body = "\n".join([
        json.dumps(HEADER, ensure_ascii=False),
        json.dumps(msg("青梧", "开场"), ensure_ascii=False),
        "{not json",
        "[1, 2, 3]",
        json.dumps({"name": "x", "is_user": True}),
        json.dumps(msg("旅人", "还在", user=True), ensure_ascii=False),
        "",
    ]).encode("utf-8") + b"\n" + json.dumps(msg("青梧", "末")).encode()[:-1] + b"\xff\n"
    st = parse_st_chat(b"\xef\xbb\xbf" + body, "d.jsonl")
    assert [m["mes"] for m in st.messages] == ["开场", "还在"]
    text = "\n".join(st.warnings)
    assert "第 3 行不是有效的 JSON" in text and "第 4 行不是 JSON 对象" in text and "第 5 行没有 mes" in text
    assert "第 8 行不是有效的 JSON" in text  # not the torn last line: the file ends with a newline


@pytest.mark.parametrize("content,needle", [
    (b"", "空的"),
    (b"\x89PNG\r\n\x1a\nxxxx", "PNG"),
    (json.dumps({"spec": "chara_card_v2", "data": {"name": "A", "first_mes": "hi"}}).encode(), "角色卡"),
    (json.dumps({"name": "A", "description": "d", "first_mes": "hi"}, indent=2).encode(), "角色卡"),
    (json.dumps({"prompts": [], "prompt_order": []}).encode(), "预设"),
    (json.dumps({"entries": {"0": {"key": ["a"]}}}).encode(), "世界书"),
    (b"hello world\n", "第一行不是 JSON"),
    (b"[1,2]\n", "第一行既不是"),
])
def test_files_that_are_not_chats_are_refused_by_name(content, needle):
    with pytest.raises(StChatError) as ei:
        parse_st_chat(content, "x.jsonl")
    assert needle in str(ei.value) and "x.jsonl" in str(ei.value)


def test_real_card_fixture_is_refused():
    p = FIXTURES / "default_Seraphina.png"
    if not p.exists():
        pytest.skip("shared fixtures not beside this checkout")
    with pytest.raises(StChatError, match="PNG"):
        read_st_chat(p)


def test_headerless_file_imports_with_warning(tmp_path):
    f = write_chat(tmp_path / "h.jsonl", [msg("旅人", "先说话", user=True), msg("青梧", "回答")])
    st = read_st_chat(f)
    assert st.headerless and "没有头一行" in st.warnings[0]
    tree = write_session(st, tmp_path / "t" / "session.jsonl", card_name="青梧")
    assert [e.type for e in tree.path_to()] == ["header", "user", "assistant"]
    header, messages = st_messages(tree)
    assert header["user_name"] == "你" and header["character_name"] == "青梧" and len(messages) == 2


async def test_import_as_chat_then_regenerate_and_export(tmp_path):
    card = load_card(DEMO_CARD)
    f = write_chat(tmp_path / "a.jsonl", sample_lines()[:4])  # header, greeting, user, swiped reply
    model = ReplayModel(actor=[{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "梨园里重写的一版。"}}]},
                               {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}],
                        scribe=['{"patch": {}}'])
    chat = import_st_chat(f, card, tmp_path / "chat", model)
    assert chat.persona == "旅人"
    roles = [(i["role"], i["text"]) for i in chat.transcript()]
    assert roles[0][0] == "opening" and roles[1] == ("user", "多谢掌柜。这镇子叫什么？")
    assert roles[2] == ("assistant", "「这里是栖水镇，客官。」")
    h = chat.history()
    assert [m.role for m in h.messages] == ["assistant", "user", "assistant"]
    res = await chat.regenerate()
    assert res.sealed and res.final == "梨园里重写的一版。"
    _, messages = st_messages(chat.tree)
    m = messages[2]
    assert m["swipes"] == ["「栖水镇。」", "「这里是栖水镇，客官。」", "她没抬头：「栖水。」", "梨园里重写的一版。"]
    assert m["swipe_id"] == 3 and m["mes"] == "梨园里重写的一版。"
    assert len(m["swipe_info"]) == 4 and m["extra"] == {} and len(m["variables"]) == 4
    assert m["swipe_info"][:3] == sample_lines()[3]["swipe_info"]


async def test_regenerating_a_reply_without_swipes_adds_them(tmp_path):
    card = load_card(DEMO_CARD)
    lines = [HEADER, msg("青梧", "开场"), msg("旅人", "问", user=True),
             msg("青梧", "旧回答", extra={"reasoning": "旧的思考", "model": "old"}, gen_started="2024-10-18T13:10:00.000Z")]
    f = write_chat(tmp_path / "a.jsonl", lines)
    model = ReplayModel(actor=[{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "新回答"}}]},
                               {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}],
                        scribe=['{"patch": {}}'])
    chat = import_st_chat(f, card, tmp_path / "chat", model)
    await chat.regenerate()
    _, messages = st_messages(chat.tree)
    m = messages[2]
    assert m["swipes"] == ["旧回答", "新回答"] and m["swipe_id"] == 1 and m["mes"] == "新回答"
    assert m["extra"] == {} and "gen_started" not in m  # the old reply's reasoning does not stick to the new one
    old = [e for e in chat.tree.entries.values() if getattr(e, "text", None) == "旧回答"][0]
    chat.tree.set_leaf(old.id)
    _, messages = st_messages(chat.tree)
    assert messages[2] == {**lines[3], "swipes": ["旧回答", "新回答"], "swipe_id": 0}


async def test_native_chat_exports_as_sillytavern(tmp_path):
    card = load_card(DEMO_CARD)
    model = ReplayModel(actor=[{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "第一拍。"}}]},
                               {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}],
                        scribe=['{"patch": {}}'])
    chat = Chat.create(tmp_path / "c", card, model, persona="旅人")
    await chat.send("你好 🌙")
    chat.tree.append("revision", target=chat.tree.latest("assistant").id, text="第一拍（改）。", version=2)
    chat.tree.commit()
    out = export_st_chat(chat.tree, tmp_path / "native.jsonl")
    st = read_st_chat(out)
    assert st.header["user_name"] == "旅人" and st.header["character_name"] == "青梧"
    assert st.header["create_date"] == format_create_date(chat.tree.header.ts) and st.header["chat_metadata"] == {}
    greeting, user, reply = st.messages
    assert greeting["mes"] == card.first_mes and not greeting["is_user"] and greeting["swipes"] == [card.first_mes]
    assert user == {"name": "旅人", "is_user": True, "is_system": False,
                    "send_date": format_send_date(chat.tree.latest("user").ts), "mes": "你好 🌙", "extra": {}}
    assert reply["mes"] == "第一拍（改）。" and reply["swipes"] == ["第一拍（改）。"] and reply["swipe_id"] == 0
    assert len(reply["swipe_info"]) == 1 and reply["name"] == "青梧"
    # and it comes back in as the same conversation
    tree = write_session(st, tmp_path / "back" / "session.jsonl", card_name="青梧")
    assert [getattr(e, "text", None) for e in tree.path_to()][1:] == [f"【开场 · 青梧】\n{card.first_mes}", "你好 🌙", "第一拍（改）。"]


def test_existing_session_is_not_overwritten(tmp_path):
    f = write_chat(tmp_path / "a.jsonl", sample_lines())
    dest = tmp_path / "t" / "session.jsonl"
    write_session(read_st_chat(f), dest, card_name="青梧")
    before = dest.read_bytes()
    with pytest.raises(SessionError):
        write_session(read_st_chat(f), dest, card_name="青梧")
    assert dest.read_bytes() == before


def test_other_cards_chat_is_warned(tmp_path):
    f = write_chat(tmp_path / "a.jsonl", [{**HEADER, "character_name": "Seraphina"}, msg("Seraphina", "hi")])
    tree = write_session(read_st_chat(f), tmp_path / "t" / "session.jsonl", card_name="青梧")
    assert any("属于「Seraphina」" in w for w in tree.load_warnings)


def test_time_stamps():
    assert parse_st_time(1697633537000) == 1697633537000
    assert parse_st_time(1697633537) == 1697633537000
    assert parse_st_time("2024-10-18T12:54:00.000Z") == 1729256040000
    a = parse_st_time("October 18, 2024 8:52pm")
    assert a == parse_st_time("October 18, 2024 8:52 PM") == parse_st_time("2024-10-18@20h52m00s")
    assert parse_st_time("June 19, 2023 @14h 20m") == parse_st_time("2023-6-19 @14h 20m 0s 123ms")
    assert parse_st_time("October 18, 2024 12:05am") == parse_st_time("2024-10-18@00h05m00s")
    assert parse_st_time("not a date") is None and parse_st_time(None) is None and parse_st_time(True) is None
    assert format_send_date(a) == "October 18, 2024 8:52pm"
    assert format_create_date(a) == "2024-10-18@20h52m00s"


def test_five_thousand_messages_import_fast(tmp_path):
    lines: list[dict] = [HEADER, msg("青梧", "开场")]
    for i in range(2500):
        lines.append(msg("旅人", f"第 {i} 句话，带点中文与 emoji 🍵", user=True))
        if i % 10 == 0:
            lines.append(swiped("青梧", [f"回答 {i} 甲", f"回答 {i} 乙"], 1))
        else:
            lines.append(msg("青梧", f"回答 {i}：" + "长" * 200))
    f = write_chat(tmp_path / "big.jsonl", lines[:5001])
    t0 = time.perf_counter()
    tree = write_session(read_st_chat(f), tmp_path / "t" / "session.jsonl", card_name="青梧")
    took = time.perf_counter() - t0
    assert len([e for e in tree.path_to() if e.type in ("user", "assistant", "opening")]) == 5000
    assert took < 3.0, f"import took {took:.2f}s"
    t0 = time.perf_counter()
    out = export_st_chat(tree, tmp_path / "big-out.jsonl")
    assert time.perf_counter() - t0 < 3.0
    assert [json.loads(x) for x in out.read_text("utf-8").split("\n")] == lines[:5001]


# ------------------------------------------------------------------------ the game continues (issue 13 §2)
def _mvu(n: int, extra: bool = False) -> dict:
    d = {"initialized_lorebooks": {"青梧": []}, "stat_data": {"好感": n, "地点": "栖水"}, "schema": "…"}
    if extra:
        d["display_data"] = {"好感": f"{n - 1}->{n}"}
    return d


def _game_lines() -> list[dict]:
    return [
        HEADER,
        swiped("青梧", ["开场甲", "开场乙"], 1, variables=[_mvu(1), _mvu(50)]),
        msg("旅人", "你好", user=True, variables=[_mvu(50)]),
        swiped("青梧", ["回答一", "回答二"], 0, variables=[_mvu(55, True), _mvu(60)]),
        msg("旅人", "再见", user=True),
        msg("青梧", "旧式的一条", variables={"stat_data": {"好感": 70, "地点": "渡口"}}),
    ]


async def test_imported_variables_become_the_snapshots_and_the_game_continues(tmp_path):
    card = load_card(DEMO_CARD)
    f = write_chat(tmp_path / "g.jsonl", _game_lines())
    model = ReplayModel(actor=[{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "嗯。"}}]},
                               {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}],
                        scribe=['{"patch": {}, "mvu_patch": {"好感": 71}}'])
    chat = import_st_chat(f, card, tmp_path / "chat", model)
    items = chat.transcript()
    vals = [(i["role"], i.get("variables", {}).get("stat_data", {}).get("好感")) for i in items]
    assert vals == [("opening", 50), ("user", None), ("assistant", 55), ("user", None), ("assistant", 70)]
    assert chat.current_mvu().stat_data == {"好感": 70, "地点": "渡口"}  # not the card's initial values
    chat.swipe(items[2]["id"], +1)
    assert chat.current_mvu().stat_data["好感"] == 60  # each swipe has its own values
    chat.swipe(chat.transcript()[2]["id"], -1)
    r = await chat.send("走吧")
    assert '"好感": 70' in r.scribe.user and "mvu_patch" in r.scribe.system
    assert chat.current_mvu().stat_data["好感"] == 71
    # a bar's write to an older message goes into the file too
    chat.write_frame_variables("2", {**chat.transcript()[2]["variables"], "stat_data": {"好感": 56, "地点": "栖水"}})
    _, messages = st_messages(chat.tree)
    assert messages[0]["variables"] == [_mvu(1), _mvu(50)]
    assert [v["stat_data"]["好感"] for v in messages[2]["variables"]] == [56, 60]
    assert messages[4]["variables"] == {"stat_data": {"好感": 70, "地点": "渡口"}}  # the legacy object stays one
    assert messages[6]["variables"][0]["stat_data"]["好感"] == 71  # the reply written here
    assert messages[1]["variables"] == [_mvu(50)]  # a user message's variables as they were


def test_variables_round_trip_through_import_and_export(tmp_path):
    lines = _game_lines()
    tree = write_session(read_st_chat(write_chat(tmp_path / "g.jsonl", lines)), tmp_path / "a" / "session.jsonl")
    out = export_st_chat(tree, tmp_path / "out.jsonl")
    exported = [json.loads(x) for x in out.read_text("utf-8").splitlines()]
    assert exported[1:] == lines[1:]
    again = write_session(read_st_chat(out), tmp_path / "b" / "session.jsonl")
    snaps = lambda t: [e.mvu for e in t.entries.values() if e.type == "rp-state"]
    assert snaps(again) == snaps(tree) and len(snaps(tree)) == 5


# -- long imports: progress, Cancel, all or nothing (issue 15 item 11) -------------------------------------------------
def _many(n: int) -> list[dict]:
    lines: list[dict] = [HEADER, msg("青梧", "开场")]
    for i in range(n):
        lines.append(msg("旅人", f"第 {i} 句", user=True) if i % 2 else swiped("青梧", [f"答 {i}", f"答 {i} 乙"], 0))
    return lines


def test_import_reports_progress_and_cancel_leaves_nothing(tmp_path):
    from liyuan_desktop.core.cards.st_chat import StChatCancelled
    from liyuan_desktop.core.chat.st_import import PROGRESS_TOTAL, import_st_folder

    card = load_card(DEMO_CARD)
    f = write_chat(tmp_path / "long.jsonl", _many(3000))
    seen: list[tuple[int, int]] = []
    warnings = import_st_folder(f, card, tmp_path / "chats" / "ok", progress=lambda d, t: seen.append((d, t)))
    assert warnings == [] and (tmp_path / "chats" / "ok" / "session.jsonl").is_file()
    assert (tmp_path / "chats" / "ok" / "meta.json").is_file()  # a chat list never has to read the session
    assert seen[-1] == (PROGRESS_TOTAL, PROGRESS_TOTAL) and len(seen) > 5
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    tree = SessionTree.open(tmp_path / "chats" / "ok" / "session.jsonl")
    assert sum(1 for e in tree.path_to() if e.type in ("user", "assistant", "opening")) == 3001

    for stop_at in (100, 700):  # while reading the file, and while writing the session
        calls = []

        def cancelled() -> bool:
            return bool(calls) and calls[-1][0] >= stop_at

        with pytest.raises(StChatCancelled):
            import_st_folder(f, card, tmp_path / "chats" / "gone", progress=lambda d, t: calls.append((d, t)),
                             cancelled=cancelled)
        assert sorted(p.name for p in (tmp_path / "chats").iterdir()) == ["ok"]  # no folder, no temporary one


def test_import_into_a_folder_with_a_session_is_refused_and_keeps_it(tmp_path):
    from liyuan_desktop.core.chat.st_import import import_st_folder

    card = load_card(DEMO_CARD)
    f = write_chat(tmp_path / "a.jsonl", sample_lines())
    d = tmp_path / "chats" / "a"
    import_st_folder(f, card, d)
    before = (d / "session.jsonl").read_bytes()
    with pytest.raises(SessionError):
        import_st_folder(f, card, d)
    assert (d / "session.jsonl").read_bytes() == before


def test_cli_import_prints_progress_and_ctrl_c_cancels_cleanly(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    f = write_chat(tmp_path / "big chat.jsonl", _many(60_000))
    env = {**os.environ, "LIYUAN_HOME": str(tmp_path / "home")}
    cmd = [sys.executable, "-m", "liyuan_desktop.cli", "import-chat", str(f), "--card", str(DEMO_CARD), "--chat", "x"]
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    first = p.stderr.readline()  # the first progress line: the import is under way
    assert "导入 big chat.jsonl" in first and "%" in first
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130, (first, err)
    assert "已取消导入" in err and "Traceback" not in err
    chats = list((tmp_path / "home").rglob("session.jsonl"))
    assert chats == [] and not list((tmp_path / "home").rglob(".liyuan-import-*"))
    # without Ctrl-C: progress lines every 5 % on a pipe, the chat folder on stdout
    small = write_chat(tmp_path / "small.jsonl", _many(2000))
    r = subprocess.run(cmd[:4] + [str(small)] + cmd[5:], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    pct = [int(line.rsplit(" ", 1)[1].rstrip("%")) for line in r.stderr.splitlines() if line.endswith("%")]
    assert pct[-1] == 100 and pct == sorted(pct) and len(pct) >= 10
    assert Path(r.stdout.strip(), "session.jsonl").is_file()


async def test_imported_replies_are_no_ledger_gaps_but_a_reply_played_here_is(tmp_path):
    """SillyTavern never ran our scribe: an imported chat opens with no 「拍回复没记上账」 notice (it said 49,999
    for a 100,000-message chat); a reply played here whose snapshot a crash cut off is still a gap."""
    card = load_card(DEMO_CARD)
    f = write_chat(tmp_path / "a.jsonl", sample_lines())
    model = ReplayModel(actor=[{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "新的一拍。"}}]},
                               {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}],
                        scribe=['{"patch": {}}'])
    chat = import_st_chat(f, card, tmp_path / "chat", model)
    assert chat.ledger_gaps() == []
    assert Chat.open(tmp_path / "chat", card, ReplayModel(actor=[])).ledger_gaps() == []
    await chat.send("再来一句。")
    path = tmp_path / "chat" / "session.jsonl"
    lines = path.read_text("utf-8").splitlines()
    last_state = max(i for i, ln in enumerate(lines) if '"type":"rp-state"' in ln)
    del lines[last_state]  # killed before the new reply's snapshot
    path.write_text("\n".join(lines) + "\n", "utf-8")
    again = Chat.open(tmp_path / "chat", card, ReplayModel(actor=[]))
    assert [again.entry_text(g) for g in again.ledger_gaps()] == ["新的一拍。"]
