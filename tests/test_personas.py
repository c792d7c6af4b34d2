"""Personas: the store in the data folder (atomic, damage-tolerant), per-chat choice with default fallback,
{{persona}} text, SillyTavern persona import."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from liyuan_desktop.core.cards.personas import (
    Persona,
    PersonaError,
    PersonaStore,
    chat_key,
    import_st_personas,
    load_personas,
    persona_text,
    personas_path,
    save_personas,
)
from liyuan_desktop.core.macros import MacroContext
from liyuan_desktop.core.paths import chat_dir, home


def test_store_round_trip_in_the_data_folder():
    store = load_personas()
    assert store.personas == [] and store.load_warning is None
    a = store.add("旅人", "一个寻人的外乡人，认得{{char}}。")
    b = store.add("沈怀瑾", position="at_depth", depth=0, role="user", mood="沉默")  # unknown key kept
    store.set_default(a.id)
    path = save_personas(store)
    assert path == personas_path() == home() / "personas.json"
    assert not list(path.parent.glob("*.tmp"))
    data = json.loads(path.read_text("utf-8"))
    assert data["version"] == 1 and data["default"] == a.id and "load_warning" not in data
    again = load_personas()
    assert [p.name for p in again.personas] == ["旅人", "沈怀瑾"]
    assert again.get(b.id).mood == "沉默" and again.get(b.id).position == "at_depth"
    assert again.default_persona.name == "旅人" and again.find("沈怀瑾").id == b.id


def test_per_chat_choice_falls_back_to_default():
    store = PersonaStore()
    a, b = store.add("甲"), store.add("乙")
    c1, c2 = chat_dir("青梧", "局A"), chat_dir("青梧", "局B")
    assert store.for_chat(c1) is None
    store.set_default(a.id)
    store.select_for_chat(c1, b.id)
    assert store.for_chat(c1).name == "乙" and store.for_chat(c2).name == "甲"
    assert chat_key(c1) == "cards/青梧/对话/局A" and store.chats == {"cards/青梧/对话/局A": b.id}
    save_personas(store)
    assert load_personas().for_chat(c1).name == "乙"
    store.remove(b.id)
    assert store.chats == {} and store.for_chat(c1).name == "甲"
    store.select_for_chat(c2, a.id)
    store.select_for_chat(c2, None)
    assert store.chats == {}
    with pytest.raises(KeyError):
        store.select_for_chat(c1, "nope")
    with pytest.raises(KeyError):
        store.set_default("nope")
    store.remove(a.id)
    assert store.default is None


def test_update_validates_and_add_needs_a_name():
    store = PersonaStore()
    p = store.add("甲")
    q = store.update(p.id, description="新的描述", position="none")
    assert q.id == p.id and store.get(p.id).description == "新的描述" and not q.in_prompt
    with pytest.raises(ValidationError):
        store.update(p.id, position="somewhere")
    with pytest.raises(KeyError):
        store.update("nope", name="x")
    with pytest.raises(ValueError):
        store.add("   ")


def test_damaged_file_is_moved_aside_not_lost():
    path = personas_path()
    path.write_text('{"personas": [ {"name": "半截', "utf-8")
    store = load_personas()
    assert store.personas == [] and "损坏" in store.load_warning and "personas.json.bad" in store.load_warning
    assert not path.exists() and (path.parent / "personas.json.bad").read_text("utf-8").startswith('{"personas"')
    path.write_text(json.dumps({"personas": [{"name": "x", "position": "sideways"}]}), "utf-8")
    assert "字段不对" in load_personas().load_warning


def test_persona_text_applies_macros():
    p = Persona(name="旅人", description="  {{user}}在找{{char}}。  ")
    assert persona_text(p, MacroContext(char="青梧", user="旅人")) == "旅人在找青梧。"
    assert persona_text(None, MacroContext()) == ""


def test_import_sillytavern_settings_and_backup(tmp_path):
    settings = {"power_user": {
        "personas": {"user-default.png": "User", "1700.png": "旅人", "1800.png": "影子", "1900.png": "怪"},
        "persona_descriptions": {
            "1700.png": {"description": "外乡人", "position": 0, "depth": 2, "role": 0, "lorebook": "旅人书", "title": "寻人者"},
            "1800.png": {"description": "藏在暗处", "position": 4, "depth": 1, "role": 1},
            "1900.png": {"description": "?", "position": 42},
        },
        "default_persona": "1700.png"}, "main_api": "openai"}
    f = tmp_path / "settings.json"
    f.write_text(json.dumps(settings, ensure_ascii=False), "utf-8")
    personas, default, warnings = import_st_personas(f)
    by = {p.id: p for p in personas}
    assert [p.name for p in personas] == ["User", "旅人", "影子", "怪"] and default == "1700.png"
    assert by["1700.png"].description == "外乡人" and by["1700.png"].lorebook == "旅人书" and by["1700.png"].title == "寻人者"
    assert (by["1800.png"].position, by["1800.png"].depth, by["1800.png"].role) == ("at_depth", 1, "user")
    assert by["user-default.png"].description == "" and by["user-default.png"].position == "in_prompt"
    assert by["1900.png"].position == "in_prompt" and any("42" in w for w in warnings)
    store = PersonaStore()
    store.merge(personas)
    store.set_default(default)
    # a backup file (maps at the top level) re-imports the same ids: updated, not duplicated
    backup = {"personas": {"1700.png": "旅人（改）"}, "persona_descriptions": {"1700.png": {"description": "新"}}}
    again, d2, _ = import_st_personas(backup)
    store.merge(again)
    assert len(store.personas) == 4 and store.get("1700.png").name == "旅人（改）" and d2 is None


@pytest.mark.parametrize("content,needle", [
    ("not json", "不是有效的 JSON"),
    ("[1]", "不是 JSON 对象"),
    ('{"power_user": {"theme": "x"}}', "没有 personas"),
])
def test_import_errors(tmp_path, content, needle):
    f = tmp_path / "x.json"
    f.write_text(content, "utf-8")
    with pytest.raises(PersonaError, match=needle):
        import_st_personas(f)
    with pytest.raises(PersonaError, match="无法读取"):
        import_st_personas(tmp_path / "missing.json")


def test_damaged_file_and_import_errors_in_english(tmp_path):
    """Issue 32: the warning for a damaged personas.json and the import errors carry their key, so an English
    reader sees English (no CJK; the Chinese text is unchanged), and bad JSON is called bad JSON."""
    import re

    from liyuan_desktop.core.messages import Msg, render

    cjk = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
    path = personas_path()
    path.write_text('{"personas": [ {"name": "x', "utf-8")
    warning = load_personas().load_warning
    assert isinstance(warning, Msg) and warning.key == "persona.file_damaged"
    assert warning == "人设文件 personas.json 损坏（不是有效的 JSON），已按空的人设列表打开，原文件已改名为 personas.json.bad"
    english = render(warning, "en")
    assert english == ("The persona file personas.json is damaged (not valid JSON); it opened as an empty persona "
                       "list; the file was renamed to personas.json.bad")
    path.write_text(json.dumps({"personas": [{"name": "x", "position": "sideways"}]}), "utf-8")
    assert "wrong fields" in render(load_personas().load_warning, "en")
    for content in ("not json", "[1]", '{"power_user": {}}'):
        f = tmp_path / "x.json"
        f.write_text(content, "utf-8")
        with pytest.raises(PersonaError) as got:
            import_st_personas(f)
        assert isinstance(got.value.args[0], Msg) and not cjk.search(render(got.value, "en")), render(got.value, "en")
    with pytest.raises(PersonaError) as got:
        import_st_personas(tmp_path / "missing.json")
    assert render(got.value, "en").startswith("Cannot read ") and not cjk.search(render(got.value, "en"))
