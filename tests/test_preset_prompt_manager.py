"""Issue 26 §2: a preset's prompt manager — the 100001 list as SillyTavern's Prompt Manager shows it, the edits it
allows (with SillyTavern's rules), per-prompt token counts, save / save as / export, and a lossless round trip. The
edits reach a chat's prompt: checked with the prompt inspector before and after."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT, shared_path
from test_prompt_fidelity import beats, make_card

from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.prompt.presets.manager import PromptEditError, PromptManager
from liyuan_desktop.core.prompt.presets.model import PresetError
from liyuan_desktop.core.prompt.presets.store import install_preset, list_presets, load_installed_preset, presets_dir
from liyuan_desktop.core.prompt.tokens import TokenCounter

DEFAULT = shared_path("fixtures", "cards", "formats", "openai-preset-Default.json")


def write(path: Path, obj: dict) -> Path:
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=2), "utf-8")
    return path


def st_default_shape() -> dict:
    """A preset shaped like SillyTavern's own ``Default.json`` (12 built-ins, the old 100000 list and the 100001 one,
    model/source keys, empty secret keys) plus what a 2025 preset carries that Liyuan does not model: a custom
    prompt with unknown keys, preset-scoped regex scripts, extension data, an unknown top-level key."""
    builtins = [
        {"name": "Main Prompt", "system_prompt": True, "role": "system",
         "content": "Write {{char}}'s next reply in a fictional chat between {{char}} and {{user}}.", "identifier": "main"},
        {"name": "Auxiliary Prompt", "system_prompt": True, "role": "system", "content": "", "identifier": "nsfw"},
        {"identifier": "dialogueExamples", "name": "Chat Examples", "system_prompt": True, "marker": True},
        {"name": "Post-History Instructions", "system_prompt": True, "role": "system", "content": "",
         "identifier": "jailbreak"},
        {"identifier": "chatHistory", "name": "Chat History", "system_prompt": True, "marker": True},
        {"identifier": "worldInfoAfter", "name": "World Info (after)", "system_prompt": True, "marker": True},
        {"identifier": "worldInfoBefore", "name": "World Info (before)", "system_prompt": True, "marker": True},
        {"identifier": "enhanceDefinitions", "role": "system", "name": "Enhance Definitions",
         "content": "If you have more knowledge of {{char}}, add to the character's lore and personality to enhance "
                    "them but keep the Character Sheet's definitions absolute.", "system_prompt": True, "marker": False},
        {"identifier": "charDescription", "name": "Char Description", "system_prompt": True, "marker": True},
        {"identifier": "charPersonality", "name": "Char Personality", "system_prompt": True, "marker": True},
        {"identifier": "scenario", "name": "Scenario", "system_prompt": True, "marker": True},
        {"identifier": "personaDescription", "name": "Persona Description", "system_prompt": True, "marker": True},
    ]
    custom = {"identifier": "5f1d3c2a-aaaa-4bbb-8ccc-123456789abc", "system_prompt": False, "enabled": False,
              "marker": False, "name": "文风", "role": "user", "content": "用短句。{{random::甲,乙}}",
              "injection_position": 1, "injection_depth": 2, "injection_order": 90, "injection_trigger": [],
              "forbid_overrides": False, "st_archichat": {"keywordActivation": {"keywords": ["雨"]}}}
    order = ["main", "worldInfoBefore", "personaDescription", "charDescription", "charPersonality", "scenario",
             "enhanceDefinitions", "nsfw", "worldInfoAfter", "dialogueExamples", "chatHistory", "jailbreak"]
    return {
        "chat_completion_source": "openai", "openai_model": "gpt-4-turbo", "claude_model": "claude-3-5-sonnet",
        "temperature": 1, "frequency_penalty": 0, "presence_penalty": 0, "top_p": 1, "top_k": 0,
        "openai_max_context": 4095, "openai_max_tokens": 300, "names_behavior": 0, "send_if_empty": "",
        "impersonation_prompt": "[Write your next reply from the point of view of {{user}}]",
        "new_chat_prompt": "[Start a new Chat]", "wi_format": "{0}", "scenario_format": "{{scenario}}",
        "personality_format": "{{personality}}", "stream_openai": True, "reverse_proxy": "", "proxy_password": "",
        "custom_url": "", "custom_include_body": "", "bias_preset_selected": "Default (none)",
        "prompts": builtins + [custom],
        "prompt_order": [
            {"character_id": 100000, "order": [{"identifier": i, "enabled": i != "enhanceDefinitions"}
                                               for i in order if i != "personaDescription"]},
            {"character_id": 100001, "order": [{"identifier": i, "enabled": i != "enhanceDefinitions"} for i in order]
             + [{"identifier": custom["identifier"], "enabled": True, "note": "kept"}]},
        ],
        "extensions": {"regex_scripts": [{"scriptName": "去掉思考", "findRegex": "/<think>[\\s\\S]*?<\\/think>/g",
                                          "replaceString": ""}], "SPreset": {"ChatSquash": {"enabled": False}}},
        "seed": -1, "n": 1, "some_future_key": {"nested": [1, 2, {"x": None}]},
    }


# -- the list ----------------------------------------------------------------------------------------------------

def test_rows_follow_the_global_list_with_markers_flagged_and_sillytavern_permissions():
    m = PromptManager(st_default_shape(), "默认形状")
    rows = m.rows()
    assert m.order_source == "100001"
    assert [r.identifier for r in rows][:4] == ["main", "worldInfoBefore", "personaDescription", "charDescription"]
    assert [r.index for r in rows] == list(range(13))
    by = {r.identifier: r for r in rows}
    assert by["charDescription"].marker and by["charDescription"].content == "" and by["charDescription"].tokens == 0
    assert not by["main"].marker and by["main"].tokens == TokenCounter().text(by["main"].content) > 0
    assert by["enhanceDefinitions"].enabled is False and by["enhanceDefinitions"].placement is None
    assert by["enhanceDefinitions"].note == "预设里是关闭的"
    custom = rows[-1]
    assert (custom.name, custom.role, custom.position, custom.depth, custom.order) == ("文风", "user", "in_chat", 2, 90)
    assert custom.placement == "depth" and custom.where == "in-chat @2" and custom.can_delete
    assert by["chatHistory"].placement == "history" and by["jailbreak"].placement == "after"
    # SillyTavern's rules: built-ins and markers are never deletable; markers have no text to edit
    assert not any(r.can_delete for r in rows if r.system_prompt or r.marker)
    assert not by["chatHistory"].can_edit and by["charDescription"].can_edit and not by["charDescription"].can_edit_text
    assert all(r.can_toggle for r in rows)
    assert m.unlisted() == []


def test_a_preset_without_its_own_list_shows_the_default_order_and_writes_it_on_the_first_edit():
    doc = {"prompts": [{"identifier": "main", "name": "Main Prompt", "content": "主"}],
           "prompt_order": [{"character_id": 100000, "order": [{"identifier": "main", "enabled": True}]}]}
    m = PromptManager(doc, "无表")
    assert m.order_source == "default"
    assert [r.identifier for r in m.rows()][:3] == ["main", "worldInfoBefore", "personaDescription"]
    nsfw = next(r for r in m.rows() if r.identifier == "nsfw")  # not in prompts[]: SillyTavern's default definition
    assert nsfw.name == "Auxiliary Prompt" and nsfw.system_prompt
    assert m.to_json() == doc  # nothing written by looking
    m.disable("scenario")
    out = m.to_json()
    assert out["prompt_order"][0] == doc["prompt_order"][0]  # the old list as it was
    assert out["prompt_order"][1]["character_id"] == 100001 and m.order_source == "100001"
    assert [(i["identifier"], i["enabled"]) for i in out["prompt_order"][1]["order"]][5] == ("scenario", False)


def test_unknown_and_extension_items():
    doc = {"prompts": [{"identifier": "main", "content": "主"},
                       {"identifier": "vectorsMemory", "name": "向量记忆", "marker": True, "system_prompt": True},
                       {"identifier": "aside", "name": "备用", "content": "不在表里"}],
           "prompt_order": [{"character_id": 100001, "order": [
               {"identifier": "main", "enabled": True}, {"identifier": "ghost", "enabled": True},
               {"identifier": "vectorsMemory", "enabled": True}, {"identifier": "main", "enabled": False}]}]}
    m = PromptManager(doc, "怪")
    rows = m.rows()
    assert rows[1].missing and rows[1].name == "ghost" and rows[1].can_delete
    assert rows[3].duplicate and rows[3].placement is None
    assert not rows[2].can_toggle
    with pytest.raises(PromptEditError) as e:
        m.disable("vectorsMemory")  # an extension's marker: SillyTavern does not let you toggle it
    assert "不能开关" in str(e.value)
    assert [r.identifier for r in m.unlisted()] == ["aside"]
    m.delete("ghost")  # a dangling reference goes away
    m.attach("aside", index=1, enabled=True)
    assert [r.identifier for r in m.rows()] == ["main", "aside", "vectorsMemory", "main"]
    m.detach("aside")
    assert [r.identifier for r in m.unlisted()] == ["aside"]


# -- edits -------------------------------------------------------------------------------------------------------

def test_toggle_move_edit_add_delete_touch_only_what_they_change():
    src = st_default_shape()
    m = PromptManager(src, "默认形状")
    m.disable("main")
    m.enable("enhanceDefinitions")
    assert m.move("jailbreak", 0) == 0 and m.move("chatHistory", 99) == 12
    m.edit("nsfw", text="辅助：{{user}}", role="assistant")
    custom = src["prompts"][-1]["identifier"]
    m.edit(custom, position="relative", depth=7, order=3, name="文风二")
    new = m.add("新段", "新内容", role="user", index=2)
    out = m.to_json()
    # untouched: every key but the two lists' edited parts
    assert {k: v for k, v in out.items() if k not in ("prompts", "prompt_order")} == \
           {k: v for k, v in src.items() if k not in ("prompts", "prompt_order")}
    assert out["prompt_order"][0] == src["prompt_order"][0]  # the 100000 list is not touched
    order = out["prompt_order"][1]["order"]
    assert [i["identifier"] for i in order][:3] == ["jailbreak", "main", new]
    assert order[-1]["identifier"] == "chatHistory"
    assert {"identifier": custom, "enabled": True, "note": "kept"} in order  # unknown item keys kept
    enabled = {i["identifier"]: i["enabled"] for i in order}
    assert enabled["main"] is False and enabled["enhanceDefinitions"] is True and enabled[new] is True
    prompts = {p["identifier"]: p for p in out["prompts"]}
    assert prompts["nsfw"] == {"name": "Auxiliary Prompt", "system_prompt": True, "role": "assistant",
                               "content": "辅助：{{user}}", "identifier": "nsfw"}  # only the two keys changed
    assert prompts["main"] == src["prompts"][0]
    c = prompts[custom]
    assert (c["injection_position"], c["injection_depth"], c["injection_order"], c["name"]) == (0, 7, 3, "文风二")
    assert c["st_archichat"] == {"keywordActivation": {"keywords": ["雨"]}}  # a key Liyuan does not model
    assert prompts[new]["system_prompt"] is False and prompts[new]["role"] == "user"
    m.delete(new)
    assert new not in {p["identifier"] for p in m.to_json()["prompts"]}
    assert new not in {i["identifier"] for i in m.to_json()["prompt_order"][1]["order"]}


def test_refused_edits_say_why_and_change_nothing():
    src = st_default_shape()
    m = PromptManager(src, "默认形状")
    cases = [
        (lambda: m.delete("charDescription"), "不能删除"),
        (lambda: m.delete("main"), "不能删除"),
        (lambda: m.detach("jailbreak"), "不能删除"),
        (lambda: m.edit("chatHistory", text="x"), "没有可编辑的文字"),
        (lambda: m.edit("dialogueExamples", role="user"), "不能改"),
        (lambda: m.edit("main", role="narrator"), "system、user 或 assistant"),
        (lambda: m.edit("main", depth=-1), "depth"),
        (lambda: m.edit("main", position="sideways"), "relative"),
        (lambda: m.edit("main", text=123), "要是文字"),  # type: ignore[arg-type]
        (lambda: m.edit("main", text="x" * 1_000_001), "太长"),
        (lambda: m.enable("nope"), "没有提示词「nope」"),
        (lambda: m.move("nope", 1), "没有提示词"),
        (lambda: m.add("x", role="god"), "system、user 或 assistant"),
        (lambda: m.attach("main"), "已经在顺序表里"),
    ]
    for call, words in cases:
        with pytest.raises(PromptEditError) as e:
            call()
        assert words in str(e.value), (words, str(e.value))
        assert isinstance(e.value, PresetError)
    assert m.to_json() == src and not m.changed
    # a marker SillyTavern lets you edit takes role and position, not text
    m.edit("charDescription", role="user", position="in_chat", depth=1)
    row = next(r for r in m.rows() if r.identifier == "charDescription")
    assert (row.role, row.position, row.depth) == ("user", "in_chat", 1)


def test_an_old_preset_without_prompts_gets_them_written_when_edited():
    doc = {"main_prompt": "旧主提示", "jailbreak_prompt": "旧越狱", "temperature": 0.7}
    m = PromptManager(doc, "旧")
    assert next(r for r in m.rows() if r.identifier == "main").content == "旧主提示"
    m.edit("main", text="新主提示")
    out = m.to_json()
    assert out["main_prompt"] == "旧主提示" and out["temperature"] == 0.7  # the rest as it was
    assert {p["identifier"]: p["content"] for p in out["prompts"] if "content" in p}["main"] == "新主提示"
    assert PromptManager(out, "旧").rows()[0].content == "新主提示"


def test_not_a_preset_is_refused():
    with pytest.raises(PresetError):
        PromptManager({"spec": "chara_card_v2", "data": {"name": "x", "first_mes": "hi"}}, "卡")
    with pytest.raises(PresetError):
        PromptManager.load("没有这个")


# -- round trip, save, export ------------------------------------------------------------------------------------

def test_round_trip_of_the_default_preset_fixture(tmp_path):
    if not DEFAULT.exists():
        pytest.skip(f"fixture {DEFAULT} not found (the shared/ folder is not beside this checkout)")
    raw = json.loads(DEFAULT.read_text("utf-8"))
    install_preset(DEFAULT)
    m = PromptManager.load("openai-preset-Default")
    assert m.to_json() == raw  # the library copy keeps the (empty) secret keys: nothing lost
    assert json.loads(m.export(tmp_path / "out.json").read_text("utf-8")) == raw
    assert PromptManager.from_file(DEFAULT).to_json() == raw
    m.disable("nsfw")
    m.save()
    again = PromptManager.load("openai-preset-Default").to_json()
    changed = again["prompt_order"][1]["order"]
    assert [i for i in changed if i["identifier"] == "nsfw"] == [{"identifier": "nsfw", "enabled": False}]
    again["prompt_order"][1]["order"] = raw["prompt_order"][1]["order"]
    assert again == raw


def test_round_trip_of_sillytavern_default_shape_and_secrets(tmp_path):
    src = st_default_shape()
    f = write(tmp_path / "默认形状.json", src)
    install_preset(f)
    stored = json.loads((presets_dir() / "默认形状.json").read_text("utf-8"))
    assert stored == src  # empty secret keys are kept
    m = PromptManager.load("默认形状")
    assert m.to_json() == src and json.loads(m.export(tmp_path / "x.json").read_text("utf-8")) == src
    secret = dict(src, proxy_password="hunter2")
    install_preset(write(tmp_path / "有密码.json", secret))
    assert "proxy_password" not in json.loads((presets_dir() / "有密码.json").read_text("utf-8"))


def test_save_as_keeps_the_original_and_refuses_a_taken_name(tmp_path):
    install_preset(write(tmp_path / "甲.json", st_default_shape()))
    m = PromptManager.load("甲")
    m.disable("main")
    with pytest.raises(PromptEditError, match="已经有「甲」"):
        m.save_as("甲")
    with pytest.raises(PromptEditError):
        m.save_as("  ")
    m.save_as("甲改")
    assert m.name == "甲改" and not m.changed and sorted(list_presets()) == ["甲", "甲改"]
    assert PromptManager.load("甲").to_json() == st_default_shape()
    assert next(r for r in PromptManager.load("甲改").rows() if r.identifier == "main").enabled is False


# -- token counts for a chat -------------------------------------------------------------------------------------

def test_markers_count_what_they_expand_to_for_a_chat(tmp_path):
    card = make_card(tmp_path, [], description="阿青是渡口的船夫，{{user}}常坐他的船。" * 5)
    chat = Chat.create(tmp_path / "c", card, beats(1), persona="旅人")
    m = PromptManager(st_default_shape(), "默认形状")
    counter = TokenCounter()
    plain = {r.identifier: r.tokens for r in m.rows(counter)}
    assert plain["charDescription"] == 0 and plain["chatHistory"] == 0
    rows = {r.identifier: r for r in m.rows(counter, chat.context, chat.history().prompt_messages())}
    expected = counter.text(("阿青是渡口的船夫，旅人常坐他的船。" * 5))
    assert rows["charDescription"].tokens == expected  # macros expanded, as sent
    assert rows["scenario"].tokens == counter.text("雨夜渡口") and rows["charPersonality"].tokens > 0
    assert rows["chatHistory"].tokens == counter.messages(chat.history().prompt_messages()) > 0  # the opening
    assert rows["main"].tokens == counter.text(
        "Write 阿青's next reply in a fictional chat between 阿青 and 旅人.")
    assert rows["worldInfoBefore"].tokens == 0  # the card's book is empty
    assert chat.context.prompter is None  # counting touched nothing of the chat


# -- the edits reach the prompt ----------------------------------------------------------------------------------

def _texts(messages):
    return [(m["role"], m["content"]) for m in messages]


def small_library_preset(tmp_path) -> str:
    prompts = [{"identifier": "main", "name": "Main Prompt", "system_prompt": True, "role": "system", "content": "主提示甲"},
               {"identifier": "style", "name": "文风", "role": "system", "content": "文风乙：短句。"},
               {"identifier": "rule", "name": "规矩", "role": "system", "content": "规矩丙：不替用户说话。"},
               {"identifier": "charDescription", "name": "Char Description", "system_prompt": True, "marker": True},
               {"identifier": "chatHistory", "name": "Chat History", "system_prompt": True, "marker": True},
               {"identifier": "jailbreak", "name": "Post-History Instructions", "system_prompt": True,
                "role": "system", "content": "收尾丁。"}]
    order = [{"identifier": p["identifier"], "enabled": True} for p in prompts]
    doc = {"prompts": prompts, "prompt_order": [{"character_id": 100001, "order": order}], "temperature": 0.8}
    install_preset(write(tmp_path / "小预设.json", doc))
    return "小预设"


async def test_disable_move_and_edit_reach_the_chat_prompt_and_the_chat_is_kept(tmp_path):
    name = small_library_preset(tmp_path)
    card = make_card(tmp_path, [])
    chat = Chat.create(tmp_path / "c", card, beats(3), persona="旅人", preset=load_installed_preset(name))
    await chat.send("第一拍")
    first = _texts(chat.inspect_beat(chat.transcript()[-1]["id"])[0]["request"]["messages"])
    system = first[0][1]
    assert system.index("文风乙") < system.index("规矩丙") and "主提示甲" in system
    assert first[-1] == ("system", "收尾丁。")  # the after segment

    m = PromptManager.load(name)
    m.disable("style")
    m.move("rule", 0)
    m.edit("main", text="主提示甲（改）")
    m.edit("jailbreak", text="收尾戊。", role="user")
    m.save()
    before = [i["text"] for i in chat.transcript()]
    assert chat.set_preset(name)  # same name, new content: read again (a notice says the system prompt changed)
    assert [i["text"] for i in chat.transcript()] == before  # the chat is kept
    await chat.send("第二拍")
    second = _texts(chat.inspect_beat(chat.transcript()[-1]["id"])[0]["request"]["messages"])
    system2 = second[0][1]
    assert "文风乙" not in system2 and "主提示甲（改）" in system2
    assert system2.index("规矩丙") < system2.index("主提示甲（改）")  # moved to the top of the preset part
    assert second[-1] == ("user", "收尾戊。")
    assert ("assistant", "回0") in second  # the first beat's reply is still in the history

    # switching to another preset (saved as a new name) keeps the chat too, and reopening keeps the choice
    m.enable("style")
    m.save_as("小预设二")
    assert chat.set_preset("小预设二")
    assert [i["text"] for i in chat.transcript()][:len(before)] == before
    reopened = Chat.open(tmp_path / "c", card, beats(1))
    assert reopened.preset_name() == "小预设二" and "文风乙" in reopened.system
    assert chat.set_preset("小预设二") == ""  # nothing changed since: no notice


# -- the CLI -----------------------------------------------------------------------------------------------------

def _cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "liyuan_desktop.cli", "preset", *args], capture_output=True,
                          text=True, env=env, timeout=120, cwd=ROOT)


def test_cli_prompts_and_export(tmp_path):
    src = st_default_shape()
    install_preset(write(tmp_path / "默认形状.json", src))
    r = _cli("prompts", "默认形状", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert [p["identifier"] for p in data["prompts"]][:2] == ["main", "worldInfoBefore"]
    assert {"identifier", "name", "enabled", "role", "position", "tokens"} <= set(data["prompts"][0])
    r = _cli("prompts", "默认形状")
    assert r.returncode == 0 and "Main Prompt（main）" in r.stdout and "◆Chat History" in r.stdout
    text = tmp_path / "main.txt"
    text.write_text("命令行改的主提示", "utf-8")
    r = _cli("prompts", "默认形状", "--disable", "nsfw", "--move", "jailbreak", "1", "--edit", "main",
             "--text-file", str(text))
    assert r.returncode == 0, r.stderr
    assert "已保存预设「默认形状」" in r.stdout and r.stdout.index("Post-History") < r.stdout.index("Main Prompt")
    rows = {x.identifier: x for x in PromptManager.load("默认形状").rows()}
    assert rows["main"].content == "命令行改的主提示" and not rows["nsfw"].enabled and rows["jailbreak"].index == 0
    out = tmp_path / "导出.json"
    r = _cli("export", "默认形状", "-o", str(out))
    assert r.returncode == 0 and out.is_file()
    exported = json.loads(out.read_text("utf-8"))
    assert exported["some_future_key"] == src["some_future_key"] and exported["extensions"] == src["extensions"]
    r = _cli("prompts", "默认形状", "--delete", "charDescription")
    assert r.returncode == 2 and r.stderr.startswith("liyuan: ") and "不能删除" in r.stderr
    r = _cli("prompts", "默认形状", "--edit", "main")
    assert r.returncode == 2 and "--text-file" in r.stderr
    r = _cli("prompts", "没有这个")
    assert r.returncode == 2 and "没有「没有这个」" in r.stderr
    before = copy.deepcopy(PromptManager.load("默认形状").to_json())
    r = _cli("prompts", "默认形状", "--disable", "main", "--edit", "main", "--role", "god")
    assert r.returncode == 2  # argparse refuses the role; nothing saved
    assert PromptManager.load("默认形状").to_json() == before


def test_cli_counts_markers_for_a_chat(tmp_path):
    install_preset(write(tmp_path / "默认形状.json", st_default_shape()))
    card = make_card(tmp_path, [])
    Chat.create(tmp_path / "c", card, beats(1), persona="旅人")
    r = _cli("prompts", "默认形状", "--json", "--chat", str(tmp_path / "c"))
    assert r.returncode == 0, r.stderr
    tokens = {p["identifier"]: p["tokens"] for p in json.loads(r.stdout)["prompts"]}
    assert tokens["charDescription"] == TokenCounter().text("阿青是渡口的船夫。") and tokens["chatHistory"] > 0
    r = _cli("prompts", "默认形状", "--chat", str(tmp_path / "nope"))
    assert r.returncode == 2 and r.stderr.startswith("liyuan: ")
