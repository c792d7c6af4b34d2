"""Issue 26 §4: SillyTavern Quick Reply sets — import (the QR v2 file SillyTavern exports, version 1 converted),
STscript kept as text and reported per reply, the library in 快速回复/, edits, global and per-chat active sets,
hostile files refused with a clear message, and ``liyuan qr …``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

from liyuan_desktop.core.cards.quick_replies import (
    MAX_ENTRIES,
    MAX_MESSAGE_CHARS,
    QuickReplyError,
    active_sets,
    delete_set,
    import_set,
    list_sets,
    load_choices,
    load_set,
    read_set,
    save_set,
    script_kind,
    set_active,
    sets_dir,
)
from liyuan_desktop.core.macros import MacroContext
from liyuan_desktop.core.messages import Msg, render
from liyuan_desktop.core.paths import home


def qr(i: int, label: str, message: str, **extra) -> dict:
    """A reply as SillyTavern's ``QuickReply.toJSON`` writes it."""
    return {"id": i, "label": label, "title": "", "message": message, "contextList": [], "preventAutoExecute": True,
            "isHidden": False, "executeOnStartup": False, "executeOnUser": False, "executeOnAi": False,
            "executeOnChatChange": False, "executeOnGroupMemberDraft": False, "automationId": "", **extra}


def st_set(name: str = "常用", **extra) -> dict:
    """A set as SillyTavern's ``QuickReplySet.toJSON`` writes it (the file its Export button saves)."""
    return {"version": 2, "name": name, "disableSend": False, "placeBeforeInput": False, "injectInput": False,
            "color": "rgba(0, 0, 0, 0)", "onlyBorderColor": False,
            "qrList": [qr(1, "继续", "继续写下去。"),
                       qr(2, "看看四周", "我环顾四周，{{char}}在做什么？", title="描写环境"),
                       qr(3, "生成", "/gen lock=on 写一段旁白 | /sendas name={{char}}", executeOnStartup=True),
                       qr(4, "回声", "先说一句 | /echo 完成", contextList=[{"set": "别的", "isExpanded": True}]),
                       qr(5, "藏起来", "隐藏的", isHidden=True)],
            "idIndex": 6, **extra}


def write(path: Path, obj) -> Path:
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False), "utf-8")
    return path


def test_script_kind():
    assert script_kind("/gen 写") == "command"
    assert script_kind("你好 | /echo x") == "pipe"
    assert script_kind("你好 |/setvar key=a 1") == "pipe"
    assert script_kind("一半/一半") is None and script_kind(" /gen") is None  # SillyTavern tests input[0] only


def test_import_keeps_everything_and_reports_scripts_per_reply(tmp_path):
    src = st_set()
    result = import_set(write(tmp_path / "常用.json", src))
    s = result.set
    assert s.name == "常用" and list_sets() == ["常用"] and (sets_dir() / "常用.json").is_file()
    assert [q.label for q in s.qrList] == ["继续", "看看四周", "生成", "回声", "藏起来"]
    assert [q.label for q in s.visible()] == ["继续", "看看四周", "生成", "回声"]
    notes = {e.label: [n.key for n in e.notes] for e in result.entries}
    assert notes["继续"] == [] and notes["看看四周"] == []
    assert notes["生成"] == ["qr.script_command", "qr.auto_exec"]
    assert notes["回声"] == ["qr.script_pipe", "qr.context_menu"]
    assert [e.script for e in result.entries] == [None, None, "command", "pipe", None]
    assert all(isinstance(n, Msg) for n in result.lines())  # catalog messages, rendered in either language
    assert "STscript" in render(result.lines()[0], "en")
    # the script replies are inserted, never sent; the others follow the set (disableSend false: sent)
    assert [s.mode_of(q) for q in s.qrList] == ["send", "send", "insert", "insert", "send"]
    # every key SillyTavern wrote is kept (Liyuan's mode only where it set one)
    out = load_set("常用").to_json()
    assert {k: v for k, v in out.items() if k != "qrList"} == {k: v for k, v in src.items() if k != "qrList"}
    for mine, theirs in zip(out["qrList"], src["qrList"]):
        assert {k: v for k, v in mine.items() if k != "mode"} == theirs
    assert "mode" not in out["qrList"][0] and out["qrList"][2]["mode"] == "insert"


def test_compose_follows_sillytavern_and_never_sends_a_script():
    s = read_set_from(st_set(injectInput=True))
    ctx = MacroContext(char="阿青", user="旅人")
    c = s.compose(2, "", ctx)
    assert c.text == "我环顾四周，阿青在做什么？" and c.send
    assert s.compose(1, "我点头。").text == "我点头。 继续写下去。"  # injectInput: after the input, with a space
    s.placeBeforeInput = True
    assert s.compose(1, "我点头。").text == "继续写下去。 我点头。"
    assert s.compose(3).send is False  # STscript: put into the input box, not run, not sent
    s.disableSend = True
    assert s.compose(1).send is False
    with pytest.raises(QuickReplyError):
        s.compose(99)


def read_set_from(obj: dict):
    from liyuan_desktop.core.cards.quick_replies import parse_set

    return parse_set(obj, "测试.json").set


def test_edit_order_delete_and_save(tmp_path):
    import_set(write(tmp_path / "常用.json", st_set()))
    s = load_set("常用")
    q = s.add("新的", "新消息", mode="insert", index=0)
    assert q.id == 7 and s.idIndex == 8 and s.qrList[0] is q  # SillyTavern: max(idIndex, ids) + 1
    s.update(1, label="接着写", text="接着写。", mode="insert")
    s.update(1, clear_mode=True)
    assert s.move(5, 0) == 0 and [x.id for x in s.qrList][:3] == [5, 7, 1]
    s.remove(2)
    with pytest.raises(QuickReplyError):
        s.update(1, mode="shout")  # type: ignore[arg-type]
    with pytest.raises(QuickReplyError):
        s.update(1, text="x" * (MAX_MESSAGE_CHARS + 1))
    with pytest.raises(QuickReplyError):
        s.remove(2)
    save_set(s)
    again = load_set("常用")
    assert [x.id for x in again.qrList] == [5, 7, 1, 3, 4]
    assert again.entry(1).label == "接着写" and again.entry(1).mode is None and again.entry(7).mode == "insert"


def test_active_sets_global_and_per_chat(tmp_path):
    import_set(write(tmp_path / "a.json", st_set("甲")))
    import_set(write(tmp_path / "b.json", st_set("乙")))
    chat = home() / "cards" / "阿青" / "对话" / "局A"
    assert active_sets(chat) == []
    set_active(["甲"])
    set_active(["乙", "甲"], chat)
    assert active_sets() == ["甲"] and active_sets(chat) == ["甲", "乙"]  # global first, each once
    assert active_sets(home() / "cards" / "阿青" / "对话" / "局B") == ["甲"]
    with pytest.raises(QuickReplyError, match="没有「丙」"):
        set_active(["丙"])
    assert delete_set("乙") and not delete_set("乙")
    assert active_sets(chat) == ["甲"] and load_choices().chats[next(iter(load_choices().chats))] == ["甲"]
    set_active([], chat)
    assert load_choices().chats == {}
    (home() / "quick_replies.json").write_text("{broken", "utf-8")
    c = load_choices()
    assert c.global_sets == [] and c.load_warning and (home() / "quick_replies.json.bad").exists()


def test_name_clash_needs_replace(tmp_path):
    f = write(tmp_path / "常用.json", st_set())
    import_set(f)
    with pytest.raises(QuickReplyError, match="已经有「常用」"):
        import_set(f)
    r = import_set(write(tmp_path / "新.json", st_set(qrList=[qr(1, "只有一个", "一")])), name="常用", replace=True)
    assert [q.label for q in load_set("常用").qrList] == ["只有一个"] and r.set.name == "常用"
    import_set(f, name="a/b:c")  # a name that is no file name is made one
    assert "a_b_c" in list_sets() and load_set("a_b_c").name == "a_b_c"


def test_version_one_files_are_converted(tmp_path):
    v1 = {"name": "旧的", "quickReplyEnabled": True, "numberOfSlots": 2, "AutoInputInject": True,
          "quickReplySlots": [{"mes": "你好", "label": "问好", "enabled": True}, {"mes": "/echo 1", "label": "脚本"}]}
    r = read_set(write(tmp_path / "v1.json", v1))
    assert [n.key for n in r.notes] == ["qr.v1"]
    assert [(q.id, q.label, q.message) for q in r.set.qrList] == [(1, "问好", "你好"), (2, "脚本", "/echo 1")]
    assert r.set.injectInput and r.entries[1].script == "command"


# -- hostile files -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("content, words", [
    ("{\"version\": 2, \"name\": \"x\", \"qrList\": [", "不是有效的 JSON"),
    ("[1, 2]", "不是 JSON 对象"),
    ("\"text\"", "不是 JSON 对象"),
    ("{\"name\": \"x\", \"qrList\": []}", "不像 SillyTavern 的快速回复集"),
    ("{\"version\": \"2\", \"name\": \"x\", \"qrList\": []}", "不像 SillyTavern 的快速回复集"),
    ("{\"version\": true, \"name\": \"x\", \"qrList\": []}", "不像 SillyTavern 的快速回复集"),
    ("{\"version\": 2, \"name\": 7, \"qrList\": []}", "不像 SillyTavern 的快速回复集"),
    ("{\"version\": 2, \"name\": \"x\", \"qrList\": {\"a\": 1}}", "回复列表不是数组"),
    ("{\"version\": 2, \"name\": \"x\"}", "回复列表不是数组"),
    ("[" * 5000 + "]" * 5000, "嵌套超过"),
])
def test_broken_files_are_refused_with_a_clear_message(tmp_path, content, words):
    f = write(tmp_path / "坏.json", content)
    with pytest.raises(QuickReplyError) as e:
        import_set(f)
    assert words in str(e.value) and "坏.json" in str(e.value)
    assert list_sets() == []


def test_not_utf8_and_missing_files(tmp_path):
    f = tmp_path / "gbk.json"
    f.write_bytes(json.dumps({"version": 2, "name": "中文"}, ensure_ascii=False).encode("gbk"))
    with pytest.raises(QuickReplyError, match="不是 UTF-8"):
        read_set(f)
    with pytest.raises(QuickReplyError, match="无法读取"):
        read_set(tmp_path / "nope.json")
    with pytest.raises(QuickReplyError, match="没有「nope」"):
        load_set("nope")


def test_huge_sets_and_wrong_types(tmp_path):
    too_many = st_set(qrList=[qr(i, f"q{i}", "x") for i in range(MAX_ENTRIES + 1)])
    with pytest.raises(QuickReplyError, match="超过上限"):
        import_set(write(tmp_path / "大.json", too_many))
    weird = st_set(qrList=[
        qr(1, "好的", "正常"),
        {"id": "7", "label": 3.5, "message": None},  # id not a number, label a number, message null
        {"id": 2, "label": ["列表"], "message": "x"},  # a label that cannot be text: skipped
        {"id": 3, "label": "长", "message": "长" * (MAX_MESSAGE_CHARS + 1)},  # too long: skipped
        {"id": 4, "label": "标" * 500, "message": "ok", "isHidden": "yes"},  # label cut, isHidden not a bool
        None, 17,
    ], disableSend="true", idIndex="many")
    r = import_set(write(tmp_path / "怪.json", weird))
    s = r.set
    assert [q.id for q in s.qrList] == [1, 2, 4]
    assert s.qrList[1].label == "3.5" and s.qrList[1].message == ""
    assert len(s.qrList[2].label) == 200 and s.qrList[2].isHidden is False
    assert s.disableSend is False and s.idIndex == 4
    file_notes = [n.key for n in r.notes]
    assert file_notes.count("qr.entry_not_object") == 2 and "qr.entry_bad_field" in file_notes
    assert "qr.entry_too_long" in file_notes
    assert [n.key for n in r.entries[1].notes] == ["qr.entry_field_text", "qr.entry_id"]
    too_big = tmp_path / "巨.json"
    with open(too_big, "wb") as f:
        f.truncate(17 * 1024 ** 2)
    with pytest.raises(QuickReplyError, match="超过上限"):
        import_set(too_big)


# -- the CLI -----------------------------------------------------------------------------------------------------

def _cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "liyuan_desktop.cli", *args], capture_output=True, text=True,
                          env=env, timeout=120, cwd=ROOT)


def test_cli_import_list_show_delete(tmp_path):
    f = write(tmp_path / "常用.json", st_set())
    r = _cli("qr", "import", str(f))
    assert r.returncode == 0, r.stderr
    assert "已导入快速回复集「常用」（5 条）" in r.stdout and "生成：以 / 开头，是 STscript 命令" in r.stdout
    r = _cli("--lang", "en", "qr", "import", str(f), "--replace", "--json")
    data = json.loads(r.stdout)
    assert data[0]["name"] == "常用" and "STscript" in data[0]["entries"][2]["notes"][0]
    set_active(["常用"])
    r = _cli("qr", "list")
    assert r.returncode == 0 and "★ 常用" in r.stdout
    assert json.loads(_cli("qr", "list", "--json").stdout) == {"sets": ["常用"], "global_active": ["常用"]}
    r = _cli("qr", "show", "常用")
    assert r.returncode == 0 and "insert  生成（STscript，不运行）" in r.stdout and "藏起来（隐藏）" in r.stdout
    assert json.loads(_cli("qr", "show", "常用", "--json").stdout)["qrList"][0]["label"] == "继续"
    r = _cli("qr", "import", str(write(tmp_path / "坏.json", "{")))
    assert r.returncode == 2 and r.stderr.startswith("liyuan: ") and "坏.json" in r.stderr
    r = _cli("qr", "delete", "常用")
    assert r.returncode == 0 and list_sets() == [] and load_choices().global_sets == []
    r = _cli("qr", "delete", "常用")
    assert r.returncode == 2 and "没有「常用」" in r.stderr
    r = _cli("qr", "show", "常用")
    assert r.returncode == 2
