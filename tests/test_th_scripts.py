"""Issue 27 (engine and CLI half): TavernHelper script libraries in cards and presets — the three storage shapes,
hostile data, MVU loaders, ERA's variable commands, the permission and switches, export, scopes and the CLI."""

from __future__ import annotations

import json

import pytest

from liyuan_desktop.core.cards import card_from_json, load_card
from liyuan_desktop.core.cards.export import export_json
from liyuan_desktop.core.cards.inspect import format_inspect, inspect_loaded
from liyuan_desktop.core.cards.meta import (
    card_th_permission,
    preset_th_permission,
    set_card_th_allowed,
    set_card_th_switch,
    set_preset_th_permission,
)
from liyuan_desktop.core.cards.th_scripts import (
    MAX_CONTENT,
    MAX_DEPTH,
    card_th_library,
    card_th_variables,
    iter_runnable,
    preset_th_library,
    preset_th_variables,
    read_th_library,
    script_imports,
    script_rows,
)
from liyuan_desktop.core.ledger.mvu import apply_ops, greeting_variables, parse_update_blocks, strip_update_blocks
from liyuan_desktop.core.ledger.scribe import ERA_NOTE, scribe_system_prompt
from liyuan_desktop.core.ledger.state import WorldState
from liyuan_desktop.core.macros.variables_scopes import with_initial_scopes

MVU_URL = "https://testingcf.jsdelivr.net/gh/MagicalAstrogy/MagVarUpdate/artifact/bundle.js"
MVU_LOADER = f"import '{MVU_URL}';\n// 加载 MVU\n"
DAY_SWITCH = ("eventOn('mag_variable_updated', (stat, path, old, now) => {\n"
              "  if (path === '世界.日期') _.set(stat, '世界.今日事件', []);\n});\n")
BUTTON = ("import { createPinia } from 'https://testingcf.jsdelivr.net/npm/pinia/+esm';\n"
          "const m = await import(\"https://cdn.example.org/extra.js\");\n"
          "$('body').append('<script src=\"https://cdn.example.org/old.js\"></script>');\n"
          "eventOnButton('测测喵', () => toastr.info('喵'));\n")


def current_ext() -> dict:
    return {"tavern_helper": {
        "scripts": [
            {"type": "script", "enabled": True, "name": "MVU", "id": "mvu", "content": MVU_LOADER, "info": "",
             "button": {"enabled": True, "buttons": []}, "data": {}},
            {"type": "folder", "enabled": True, "name": "玩法", "id": "f1", "scripts": [
                {"type": "script", "enabled": True, "name": "日切换", "id": "day", "content": DAY_SWITCH},
                {"type": "script", "enabled": False, "name": "测测喵", "id": "cat", "content": BUTTON,
                 "button": {"enabled": True, "buttons": [{"name": "测测喵", "visible": True},
                                                         {"name": "隐藏的", "visible": False}]}}]},
            {"type": "folder", "enabled": False, "name": "关着的", "id": "f2", "scripts": [
                {"type": "script", "enabled": True, "name": "里面", "id": "in", "content": "console.log(1)"}]}],
        "variables": {"好感": 3}}}


def card_with(ext: dict, tmp_path, name: str = "测") -> object:
    raw = {"spec": "chara_card_v3", "spec_version": "3.0",
           "data": {"name": name, "first_mes": "你好。", "extensions": ext}}
    p = tmp_path / "card.json"
    p.write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    return load_card(p)


# -- shapes ---------------------------------------------------------------------------------------------------------
def test_current_shape_scripts_folders_buttons_imports_and_kinds():
    lib = read_th_library(current_ext())
    assert lib.shape == "current" and not lib.warnings and lib.variables == {"好感": 3}
    by = {s.id: s for s in lib.scripts}
    assert [s.id for s in lib.scripts] == ["mvu", "day", "cat", "in"]
    assert by["mvu"].kind == "mvu_loader" and by["mvu"].imports == [MVU_URL] and by["mvu"].loads_mvu
    assert by["day"].kind == "plain" and by["day"].folder == ["玩法"] and by["day"].imports == []
    cat = by["cat"]
    assert cat.imports == ["https://testingcf.jsdelivr.net/npm/pinia/+esm", "https://cdn.example.org/extra.js",
                           "https://cdn.example.org/old.js"]
    assert cat.remote == cat.imports and cat.visible_buttons() == ["测测喵"] and not cat.enabled
    assert by["in"].enabled and not by["in"].folder_enabled
    # allowed: only the enabled ones in enabled folders, never the MVU loader
    assert [s.id for s in iter_runnable(lib, True)] == ["day"]
    assert list(iter_runnable(lib, False)) == []
    assert [s.id for s in iter_runnable(lib, True, {"cat": True, "day": False})] == ["cat"]


def test_pairs_array_shape_reads_like_the_object():
    ext = current_ext()
    pairs = {"tavern_helper": [[k, v] for k, v in ext["tavern_helper"].items()]}
    a, b = read_th_library(ext), read_th_library(pairs)
    assert a.model_dump() == b.model_dump()


def test_legacy_shape_items_folders_bare_scripts_and_variables():
    ext = {"TavernHelper_scripts": [
        {"type": "script", "value": {"enabled": True, "name": "旧MVU", "id": "o1", "content": MVU_LOADER,
                                     "buttons": [{"name": "重新处理变量", "visible": True}]}},
        {"type": "folder", "id": "of", "name": "旧夹", "value": [
            {"enabled": True, "name": "夹里", "id": "o2", "content": "eventOn('chat_id_changed', () => {})"}]},
        {"enabled": False, "name": "裸脚本", "id": "o3", "content": "x()", "buttons": []}],
        "TavernHelper_characterScriptVariables": {"旧变量": 1}}
    lib = read_th_library(ext)
    assert lib.shape == "legacy" and not lib.warnings and lib.variables == {"旧变量": 1}
    assert [(s.id, s.folder, s.enabled, s.folder_enabled) for s in lib.scripts] == [
        ("o1", [], True, True), ("o2", ["旧夹"], True, True), ("o3", [], False, True)]
    assert lib.scripts[0].kind == "mvu_loader" and lib.scripts[0].visible_buttons() == ["重新处理变量"]
    # TavernHelper reads the legacy keys only when tavern_helper is absent
    both = {**ext, **current_ext()}
    assert read_th_library(both).shape == "current"


def test_script_with_top_level_buttons_is_read():
    lib = read_th_library({"tavern_helper": {"scripts": [
        {"type": "script", "enabled": True, "name": "b", "id": "b", "content": "", "buttons_enabled": False,
         "buttons": [{"name": "x", "visible": True}]}]}})
    assert lib.scripts[0].buttons[0].name == "x" and lib.scripts[0].visible_buttons() == []


def test_preset_shape(tmp_path):
    preset_json = {"prompts": [], "extensions": current_ext()}
    lib = preset_th_library(preset_json)
    assert lib.source == "preset" and len(lib.scripts) == 4 and lib.variables == {"好感": 3}
    assert preset_th_variables(preset_json) == {"好感": 3} and preset_th_variables(None) == {}
    # a preset has no legacy keys
    assert preset_th_library({"extensions": {"TavernHelper_scripts": [{"name": "x"}]}}).shape == "none"


def test_no_library():
    assert read_th_library({}).shape == "none" and read_th_library(None).scripts == []


# -- hostile --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("ext", [
    {"tavern_helper": "nope"}, {"tavern_helper": 5}, {"tavern_helper": {"scripts": {"a": 1}}},
    {"tavern_helper": {"scripts": [1, "x", None, [], {"type": "widget"}], "variables": [1, 2]}},
    {"tavern_helper": {"scripts": [{"type": "script", "enabled": "yes", "name": 7, "id": 8, "content": {"x": 1},
                                    "button": {"enabled": True, "buttons": "x"}, "data": 5}]}},
    {"TavernHelper_scripts": {"type": "script"}},
])
def test_wrong_types_warn_and_never_raise(ext):
    lib = read_th_library(ext)
    assert lib.warnings  # each says what was wrong
    assert all(isinstance(w, str) and w for w in lib.warnings)
    for s in lib.scripts:
        assert isinstance(s.content, str) and isinstance(s.enabled, bool)


def test_bad_field_types_are_coerced():
    lib = read_th_library({"tavern_helper": {"scripts": [
        {"type": "script", "enabled": "yes", "name": 7, "id": 8, "content": {"x": 1}}]}})
    s = lib.scripts[0]
    assert (s.name, s.id, s.enabled, s.content) == ("7", "8", False, "")
    assert any("content" in w for w in lib.warnings) and any("enabled" in w for w in lib.warnings)


def test_deep_folders_too_many_scripts_and_huge_script_are_bounded():
    inner: dict = {"type": "script", "enabled": True, "name": "深", "id": "deep", "content": ""}
    for i in range(MAX_DEPTH + 3):
        inner = {"type": "folder", "enabled": True, "name": f"f{i}", "id": f"f{i}", "scripts": [inner]}
    lib = read_th_library({"tavern_helper": {"scripts": [inner]}})
    assert lib.scripts == [] and any(str(MAX_DEPTH) in w for w in lib.warnings)
    many = [{"type": "script", "enabled": True, "name": f"s{i}", "id": f"s{i}", "content": ""} for i in range(600)]
    lib = read_th_library({"tavern_helper": {"scripts": many}})
    assert len(lib.scripts) == 500 and any("100" in w for w in lib.warnings)
    big = {"type": "script", "enabled": True, "name": "大", "id": "big", "content": "x" * (MAX_CONTENT + 1)}
    lib = read_th_library({"tavern_helper": {"scripts": [big]}})
    assert lib.scripts[0].too_big and lib.scripts[0].content == "" and list(iter_runnable(lib, True)) == []


def test_duplicate_ids_get_numbers():
    lib = read_th_library({"tavern_helper": {"scripts": [
        {"type": "script", "id": "a", "name": "1"}, {"type": "script", "id": "a", "name": "2"}]}})
    assert [s.id for s in lib.scripts] == ["a", "a#2"] and lib.warnings


def test_import_scan_is_bounded_on_hostile_text():
    # many import tokens and long runs of spaces: every token looks a bounded distance ahead (linear)
    text = ("import " + " " * 5000 + "x ") * 2000 + "import('a.js')" + "<script src=" * 20000
    found = script_imports(text)
    assert "a.js" in found
    assert script_imports("import.meta.url; const x = import;") == []
    assert script_imports("import x from 'https://a/b.js'\nimport 'c.js'") == ["https://a/b.js", "c.js"]


def test_mvu_loader_only_when_that_is_all_it_does():
    assert read_th_library({"tavern_helper": {"scripts": [
        {"type": "script", "id": "m", "content": f"/* MVU */\nimport \"{MVU_URL}\"\n"}]}}).scripts[0].kind == "mvu_loader"
    more = read_th_library({"tavern_helper": {"scripts": [
        {"type": "script", "id": "m", "content": MVU_LOADER + DAY_SWITCH}]}}).scripts[0]
    assert more.kind == "plain" and more.loads_mvu


def test_era_framework_is_recognised():
    era = "import 'https://cdn.example.org/era/index.js';\n// ERA 变量框架\neventOn('era:insertByObject', x => x);\n" \
          "const tags = ['<VariableInsert>', '<VariableEdit>'];"
    lib = read_th_library({"tavern_helper": {"scripts": [{"type": "script", "name": "ERA变量框架", "id": "e",
                                                          "content": era}]}})
    assert lib.scripts[0].kind == "era_framework" and lib.uses_era


# -- permission and switches ------------------------------------------------------------------------------------------
def test_card_permission_and_switches_persist_without_touching_the_card(tmp_path):
    card = card_with(current_ext(), tmp_path)
    before = (tmp_path / "card.json").read_bytes()
    assert not card_th_permission(card).asked
    set_card_th_allowed(tmp_path, True)
    set_card_th_switch(tmp_path, "cat", True)
    set_card_th_switch(tmp_path, "day", False)
    perm = card_th_permission(card)
    assert perm.allowed is True and perm.switches == {"cat": True, "day": False}
    set_card_th_switch(tmp_path, "day", None)
    perm = card_th_permission(card)
    assert perm.switches == {"cat": True}
    assert (tmp_path / "card.json").read_bytes() == before
    rows = {r["id"]: r for r in script_rows(card_th_library(card), perm.allowed, perm.switches)}
    assert rows["cat"]["enabled"] and rows["cat"]["switched"] and rows["cat"]["runs"]
    assert rows["mvu"]["kind"] == "mvu_loader" and not rows["mvu"]["runs"]
    assert not rows["in"]["runs"]  # its folder is off
    # other keys of liyuan.json kept
    from liyuan_desktop.core.cards.meta import card_scripts_allowed, set_card_scripts_allowed
    set_card_scripts_allowed(tmp_path, True)
    assert card_scripts_allowed(card) and card_th_permission(card).allowed is True


def test_hand_edited_permission_reads_as_never_asked(tmp_path):
    (tmp_path / "liyuan.json").write_text('{"th_scripts": {"allowed": "yes", "switches": [1]}}', "utf-8")
    p = card_th_permission(tmp_path)
    assert p.allowed is None and p.switches == {}


def test_preset_permission(tmp_path):
    assert not preset_th_permission(tmp_path, "P").asked
    set_preset_th_permission(tmp_path, "P", allowed=True)
    set_preset_th_permission(tmp_path, "Q", switch=("x", False))
    assert preset_th_permission(tmp_path, "P").allowed is True
    q = preset_th_permission(tmp_path, "Q")
    assert q.allowed is None and q.switches == {"x": False}
    assert not list(tmp_path.glob("*.json"))  # the library's listing never takes it for a preset


# -- export and inspect ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", ["current", "pairs", "legacy"])
def test_export_keeps_the_library_byte_identical(tmp_path, shape):
    ext = current_ext()
    if shape == "pairs":
        ext = {"tavern_helper": [[k, v] for k, v in ext["tavern_helper"].items()]}
    elif shape == "legacy":
        ext = {"TavernHelper_scripts": [{"type": "script", "value": {"name": "a", "content": MVU_LOADER}}],
               "TavernHelper_characterScriptVariables": {"v": 1}}
    card = card_with(ext, tmp_path)
    card.description = "改过"  # a deliberate edit elsewhere
    out = export_json(card)
    assert json.dumps(out["data"]["extensions"], ensure_ascii=False) == json.dumps(ext, ensure_ascii=False)
    again = card_from_json(out)
    assert card_th_library(again).model_dump() == card_th_library(card).model_dump()


def test_inspect_counts_scripts(tmp_path):
    info = inspect_loaded(card_with(current_ext(), tmp_path))
    th = info["th_scripts"]
    assert th == {"count": 4, "enabled": 2, "buttons": 1, "mvu_loaders": 1, "era": False, "remote_imports": 4,
                  "shape": "current", "variables": 1}
    assert "酒馆助手脚本：4 个" in format_inspect(info)
    plain = inspect_loaded(card_with({}, tmp_path))
    assert plain["th_scripts"]["count"] == 0 and "酒馆助手脚本" not in format_inspect(plain)


# -- ERA commands -----------------------------------------------------------------------------------------------------
ERA_REPLY = """她把钱袋推了过来。
<VariableThink>金币减少，好感增加</VariableThink>
<VariableEdit>{"player": {"gold": 90}, "npc.小梅.好感": 12}</VariableEdit>
<VariableInsert>{"guild": {"$template": {"rank": "Rookie", "contribution": 0}}}
{"guild": {"Alex": {"class": "Warrior"}}}</VariableInsert>
<VariableDelete>["player.curse"]</VariableDelete>
<VariableDelete>{"capital": {"walls": {}}}</VariableDelete>
<VariableEdit>{"capital": {"pop": 1}, "missing": 3}</VariableEdit>"""


def test_era_commands_move_variables_in_eras_order():
    tree = {"player": {"gold": 100, "curse": "x"}, "npc": {"小梅": {"好感": 10}},
            "capital": {"pop": 0, "walls": 3, "$meta": {"updatable": False, "necessary": "all"}}}
    ops = parse_update_blocks(ERA_REPLY)
    assert [o.op for o in ops] == ["era_insert", "era_insert", "era_edit", "era_edit", "era_delete", "era_delete"]
    r = apply_ops(tree, ops)
    d = r.state.stat_data
    assert d["player"] == {"gold": 90} and d["npc"]["小梅"]["好感"] == 12
    assert d["guild"]["Alex"] == {"rank": "Rookie", "contribution": 0, "class": "Warrior"}
    assert d["capital"] == tree["capital"]  # updatable false, necessary all
    assert r.state.delta_data["player"]["gold"] == "100->90"
    assert len(r.warnings) == 3 and any("missing" in w for w in r.warnings)
    assert strip_update_blocks(ERA_REPLY) == "她把钱袋推了过来。"
    assert tree["player"]["gold"] == 100  # the input is not changed


def test_era_unlock_insert_guards_and_delete_exemption():
    tree = {"p": {"hp": 1, "$meta": {"updatable": False}}, "box": {"$meta": {"unInsertAble": "self"}, "a": {}},
            "u": {"name": "A", "stats": {"str": 1}, "$meta": {"necessary": "all"}}}
    text = ('<VariableEdit>{"p": {"hp": 5, "$meta": {"updatable": true}}}</VariableEdit>'
            '<VariableInsert>{"box": {"new": 1, "a": {"x": 2}}}</VariableInsert>'
            '<VariableDelete>{"u": {"stats": {}, "$meta": {"necessary": {}}}}</VariableDelete>')
    d = apply_ops(tree, parse_update_blocks(text)).state.stat_data
    assert d["p"]["hp"] == 5 and d["p"]["$meta"]["updatable"] is True
    assert "new" not in d["box"] and d["box"]["a"] == {"x": 2}
    assert "stats" not in d["u"] and d["u"]["$meta"] == {}


@pytest.mark.parametrize("body", ["{nope", "[1, 2", "\"\"", "{" * 5000, "1 2 3", "null"])
def test_hostile_era_bodies_never_raise(body):
    r = apply_ops({"a": 1}, parse_update_blocks(f"<VariableEdit>{body}</VariableEdit><VariableDelete>{body}"))
    assert r.state.stat_data["a"] == 1


def test_era_block_scan_is_linear_on_unclosed_tags():
    text = "<VariableEdit>" * 20000 + "<VariableInsert>{" * 20000
    assert strip_update_blocks(text) == ""
    parse_update_blocks(text)  # returns; nothing to apply


def test_era_greeting_starts_a_tree_without_initvar():
    g = greeting_variables('开场。<VariableInsert>{"世界": {"日期": 1}}</VariableInsert>', None, [])
    assert g.text == "开场。" and g.state is not None and g.state.stat_data == {"世界": {"日期": 1}}


def test_scribe_learns_era_only_for_an_era_tree():
    st = WorldState()
    era_tree = {"guild": {"$template": {"rank": "Rookie"}}}
    assert ERA_NOTE in scribe_system_prompt(st, "你", "测", mvu=era_tree)
    assert ERA_NOTE not in scribe_system_prompt(st, "你", "测", mvu={"a": 1})
    assert ERA_NOTE in scribe_system_prompt(st, "你", "测", mvu={"a": 1}, era=True)
    assert ERA_NOTE not in scribe_system_prompt(st, "你", "测")


async def test_era_reply_in_a_beat_moves_the_ledger_is_hidden_and_the_next_prompt_carries_it(tmp_path):
    """An ERA card without [InitVar]: the greeting's <VariableInsert> starts the tree, the reply's <VariableEdit>
    moves it (hidden from the reply and the scribe), and the card's {{ERA:path}} macro in a constant entry shows the
    new value in the next beat's prompt."""
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm.replay import ReplayModel

    book = {"entries": [{"id": 0, "comment": "状态", "keys": [], "constant": True, "enabled": True,
                         "content": "当前金币：{{ERA:player.gold}}", "insertion_order": 100, "extensions": {}}]}
    card = card_from_json({"spec": "chara_card_v3", "spec_version": "3.0", "data": {
        "name": "测", "first_mes": '你好。<VariableInsert>{"player": {"gold": 100}}</VariableInsert>',
        "character_book": book}}, str(tmp_path / "card.json"))

    def w(text: str) -> dict:
        return {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]}

    seal = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
    model = ReplayModel(actor=[w('她笑了。\n<VariableEdit>{"player": {"gold": 90}}</VariableEdit>'), seal, w("二。"), seal],
                        scribe=['{"patch": {}}', '{"patch": {}}'])
    chat = Chat.create(tmp_path / "c", card, model)
    assert chat.current_mvu().stat_data == {"player": {"gold": 100}}
    r = await chat.send("买东西")
    assert r.final == "她笑了。"
    assert any("当前金币：100" in (m.content or "") for m in r.sent)
    assert chat.current_mvu().stat_data == {"player": {"gold": 90}}
    assert "VariableEdit" not in r.scribe.user
    r2 = await chat.send("再来")
    assert any("当前金币：90" in (m.content or "") for m in r2.sent)


def test_era_macros():
    from liyuan_desktop.core.macros import MacroContext, apply_macros

    tree = {"stat_data": {"p": {"hp": 5, "$meta": {"updatable": False}}, "n": None, "s": "字", "b": True}}
    ctx = MacroContext(char="c", user="u", th_variables=lambda scope: tree if scope == "message" else {})
    text = "{{ERA:p}}|{{ERA-withmeta:p}}|{{ERA:p.hp}}|{{ERA:n}}|{{ERA:s}}|{{ERA:b}}|{{ERA:zz}}|{{era:p}}"
    assert apply_macros(text, ctx) == '{"hp":5}|{"hp":5,"$meta":{"updatable":false}}|5|null|字|true||{{era:p}}'
    assert apply_macros("{{ERA:$ALLDATA}}", ctx) == '{"p":{"hp":5},"n":null,"s":"字","b":true}'
    assert apply_macros("{{ERA:p}}", MacroContext(char="c", user="u")) == "{{ERA:p}}"  # no values: kept


# -- scopes -----------------------------------------------------------------------------------------------------------
def test_character_and_preset_scopes_read_the_card_until_written(tmp_path):
    assert with_initial_scopes({}, {"a": 1}, {"p": 2}) == {"character": {"a": 1}, "preset": {"p": 2}}
    assert with_initial_scopes({"character": {"b": 1}}, {"a": 1}, {}) == {"character": {"b": 1}}
    assert with_initial_scopes({}, {}, None) == {}


def test_chat_scopes_seeded_from_the_card_and_persisted_per_chat(tmp_path):
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm.replay import ReplayModel

    card = card_with(current_ext(), tmp_path)
    assert card_th_variables(card) == {"好感": 3}
    chat = Chat.create(tmp_path / "c", card, ReplayModel(actor=[]))
    assert chat.frame_variables()["character"] == {"好感": 3}
    chat.write_frame_variables(None, {"好感": 4}, scope="character")
    chat.write_frame_variables(None, {"p": 1}, scope="preset")
    again = Chat.open(tmp_path / "c", card, ReplayModel(actor=[]))
    tables = again.frame_variables()
    assert tables["character"] == {"好感": 4} and tables["preset"] == {"p": 1}
    assert card_th_variables(card) == {"好感": 3}  # the card is not changed


# -- CLI --------------------------------------------------------------------------------------------------------------
def test_cli_lists_allows_and_switches(tmp_path, capsys):
    from liyuan_desktop.cli import main

    card_with(current_ext(), tmp_path)
    path = str(tmp_path / "card.json")
    assert main(["card", "scripts", path, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["allowed"] is None and [s["name"] for s in out["scripts"]] == ["MVU", "日切换", "测测喵", "里面"]
    cat = out["scripts"][2]
    assert cat["folder"] == ["玩法"] and cat["buttons"][0] == {"name": "测测喵", "visible": True}
    assert cat["imports"][0].endswith("pinia/+esm") and out["scripts"][0]["kind"] == "mvu_loader"
    assert main(["card", "scripts", path, "--allow"]) == 0
    assert main(["card", "scripts", path, "--enable", "cat"]) == 0
    capsys.readouterr()
    assert main(["card", "scripts", path]) == 0
    text = capsys.readouterr().out
    assert "已允许运行" in text and "测测喵" in text and "MVU 加载器" in text and "会运行" in text
    assert main(["card", "scripts", path, "--disable", "nope"]) == 2
    assert "nope" in capsys.readouterr().err
    assert main(["--lang", "en", "card", "scripts", path]) == 0
    assert "allowed to run" in capsys.readouterr().out


def test_cli_preset_scripts(tmp_path, capsys):
    from liyuan_desktop.cli import main
    from liyuan_desktop.core.prompt.presets.store import install_preset, presets_dir

    src = tmp_path / "P.json"
    src.write_text(json.dumps({"prompts": [], "prompt_order": [], "extensions": current_ext()}, ensure_ascii=False), "utf-8")
    install_preset(src)
    assert main(["card", "scripts", "P", "--preset", "--allow"]) == 0
    assert preset_th_permission(presets_dir(), "P").allowed is True
    capsys.readouterr()
    assert main(["card", "scripts", "P", "--preset", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["source"] == "preset" and out["allowed"] is True and len(out["scripts"]) == 4
    assert main(["card", "scripts", "没有的", "--preset"]) == 2


def test_loader_with_a_fallback_mirror_is_an_mvu_loader():
    content = ("// 国内镜像优先\ntry {\n  await import('https://testingcf.jsdelivr.net/gh/MagicalAstrogy/MagVarUpdate/"
               "artifact/bundle.js');\n} catch (error) {\n  await import('https://cdn.jsdelivr.net/gh/MagicalAstrogy/"
               "MagVarUpdate/artifact/bundle.js');\n}\n")
    s = read_th_library({"tavern_helper": {"scripts": [{"type": "script", "id": "m", "content": content}]}}).scripts[0]
    assert s.kind == "mvu_loader" and len(s.imports) == 2
    schema = content + "const Schema = z.object({});\n$(() => registerMvuSchema(Schema));"
    s = read_th_library({"tavern_helper": {"scripts": [{"type": "script", "id": "m", "content": schema}]}}).scripts[0]
    assert s.kind == "plain" and s.loads_mvu


def test_real_cards_read_without_warnings():
    from helpers import need_shared

    folder = need_shared("fixtures", "cards")
    kinds = {}
    for p in sorted(folder.iterdir()):
        try:
            card = load_card(p)
        except Exception:  # noqa: BLE001 - not every fixture is a card (test_cards_import covers those)
            continue
        lib = card_th_library(card)
        assert not lib.warnings, (p.name, lib.warnings)
        for s in lib.scripts:
            kinds[s.name] = s.kind
    if not kinds:
        pytest.skip("no fixture card carries TavernHelper scripts")
    assert "mvu_loader" in kinds.values()


def test_initial_tables_are_not_stored_until_written(tmp_path):
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm.replay import ReplayModel

    chat = Chat.create(tmp_path / "c", card_with(current_ext(), tmp_path), ReplayModel(actor=[]))
    chat.write_frame_variables(None, {"x": 1}, scope="chat")
    assert chat.tree.latest("rp-state").frame_vars == {"chat": {"x": 1}}
    assert chat.frame_variables()["character"] == {"好感": 3}
    assert chat.write_frame_variables(None, {"好感": 3}, scope="character") is False  # already in force


def test_chat_script_scopes_order_asking_and_buttons(tmp_path):
    from liyuan_desktop.core.cards.th_scripts import chat_script_scopes, script_buttons
    from liyuan_desktop.core.prompt.presets.model import Preset

    card = card_with(current_ext(), tmp_path)
    preset = Preset.from_json({"prompts": [], "extensions": {"tavern_helper": {"scripts": [
        {"type": "script", "enabled": True, "name": "预设按钮", "id": "pb", "content": "eventOnButton('开始', f)",
         "button": {"enabled": True, "buttons": [{"name": "开始", "visible": True}]}}]}}}, "P")
    folder = tmp_path / "presets"
    folder.mkdir()
    scopes = chat_script_scopes(card, preset, folder)
    assert [(s.source, s.name) for s in scopes] == [("preset", "P"), ("card", "测")]
    assert all(s.needs_asking for s in scopes) and script_buttons(scopes) == []
    set_card_th_allowed(tmp_path, True)
    set_card_th_switch(tmp_path, "cat", True)
    set_preset_th_permission(folder, "P", allowed=True)
    scopes = chat_script_scopes(card, preset, folder)
    assert not any(s.needs_asking for s in scopes)
    assert script_buttons(scopes) == [("pb", "开始"), ("cat", "测测喵")]
    assert [s.id for s in scopes[1].runnable()] == ["day", "cat"]
    assert chat_script_scopes(card_with({}, tmp_path)) == []


def test_era_delete_with_null_and_edit_of_objects():
    tree = {"a": {"b": 1, "c": 2}, "d": 5, "arr": [1, 2]}
    text = ('<VariableEdit>{"arr": [3], "d": {"x": 1}, "a": {}}</VariableEdit>'
            '<VariableDelete>{"a": {"b": null}, "d": 0}</VariableDelete>')
    r = apply_ops(tree, parse_update_blocks(text))
    assert r.state.stat_data == {"a": {"c": 2}, "arr": [3]}
    assert len(r.warnings) == 1 and "d" in r.warnings[0]
