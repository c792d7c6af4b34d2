"""SillyTavern's world-info settings, per app and per chat (issue 14 §1): a SillyTavern ``settings.json`` round-trips
into the app's settings and changes the prompt as SillyTavern does (recursion off, whole words off, include names
off, scan depth 4, min activations 3, a budget with a cap), a chat's own override survives reopening and branch
moves, and ``liyuan chat --wi`` / ``liyuan settings import-st`` work as real processes. Books are our own, small,
each made so that exactly one setting decides."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import ROOT

from liyuan_desktop.core.beat.events import Activity
from liyuan_desktop.core.cards import card_from_json
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.lore.settings import WorldInfoSettings, field_name, from_st_settings, parse_assignments
from liyuan_desktop.core.paths import chat_dir
from liyuan_desktop.core.session.tree import SessionTree
from liyuan_desktop.core.settings import load_settings, save_settings


def _entry(i, title, keys, content, order=100, **ext):
    return {"id": i, "comment": title, "keys": keys, "content": content, "enabled": True, "constant": False,
            "insertion_order": order, "extensions": {"position": 0, **ext}}


def _card(tmp_path, entries, name="阿青", first_mes="你好。"):
    # the book itself says recursion off and depth 2: SillyTavern ignores a book's own scan settings
    data = {"name": name, "first_mes": first_mes, "description": "d",
            "character_book": {"entries": entries, "recursive_scanning": False, "scan_depth": 2}}
    raw = {"spec": "chara_card_v3", "spec_version": "3.0", "data": data}
    d = tmp_path / "card"
    d.mkdir(exist_ok=True)
    (d / "card.json").write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    return card_from_json(raw, str(d / "card.json"))


def _replies(*texts):
    actor, scribe = [], []
    for t in texts:
        actor += [{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": t}}]},
                  {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}]
        scribe.append('{"patch": {}}')
    return ReplayModel(actor=actor, scribe=scribe)


def _st_file(**changes):
    """A SillyTavern settings.json as a new install writes it, with ``changes`` in its world_info_settings."""
    block = {"world_info": {"globalSelect": []}, "world_info_depth": 2, "world_info_budget": 25,
             "world_info_include_names": True, "world_info_recursive": True, "world_info_overflow_alert": False,
             "world_info_case_sensitive": False, "world_info_match_whole_words": True,
             "world_info_character_strategy": 1, "world_info_budget_cap": 0}
    block.update(changes)
    return {"firstRun": False, "world_info_settings": block, "power_user": {"theme": "x"}}


def _through_app_settings(st: dict) -> WorldInfoSettings:
    """settings.json → our settings → <home>/settings.json → read back (the app's global settings)."""
    wi, _notes = from_st_settings(st)
    app = load_settings()
    app.world_info = wi
    save_settings(app)
    return load_settings().world_info


async def _titles(tmp_path, entries, history, user_text, st=None, persona="", sub="c", window=None, first_mes="你好。"):
    """Activated titles (what 【相关设定】 lists) for ``user_text`` after the beats ``history`` [(user, reply)], with
    the app's settings from SillyTavern file ``st`` (default: a new install's)."""
    card = _card(tmp_path, entries, first_mes=first_mes)
    wi = _through_app_settings(st or _st_file())
    chat = Chat.create(tmp_path / sub, card, _replies(*[r for _, r in history]), persona=persona, world_info=wi)
    if window:
        chat.context_window = window
    for u, _ in history:
        await chat.send(u)
    injection, activated, _msgs, _st, _prev = chat.prepare(user_text)
    for t in activated:
        assert t in injection  # the titles are what the prompt carries
    return activated


def test_defaults_names_and_st_round_trip():
    s = WorldInfoSettings()
    assert s.model_dump() == {
        "world_info_depth": 2, "world_info_budget": 25, "world_info_budget_cap": 0, "world_info_include_names": True,
        "world_info_recursive": True, "world_info_case_sensitive": False, "world_info_match_whole_words": True,
        "world_info_character_strategy": 1, "world_info_min_activations": 0,
        "world_info_min_activations_depth_max": 0, "world_info_max_recursion_steps": 0,
        "world_info_use_group_scoring": False, "world_info_overflow_alert": False}
    # a new install's settings.json reads back as the defaults; ours writes back as the same block
    got, notes = from_st_settings(_st_file())
    assert got == s and from_st_settings({"world_info_settings": s.to_st()})[0] == s
    # older files keep the keys at the top level; a budget above 100 is SillyTavern's old absolute form → 25
    old, notes = from_st_settings({"world_info_depth": "5", "world_info_budget": 2048, "world_info_recursive": 1})
    assert (old.world_info_depth, old.world_info_budget, old.world_info_recursive) == (5, 25, True)
    assert any("25" in n for n in notes)
    # what is not taken over is said: global book selection, unknown keys, out-of-range values
    _, notes = from_st_settings({"world_info_settings": {"world_info": {"globalSelect": ["Eldoria"]},
                                                         "world_info_depth": -3, "world_info_zzz": 1}})
    text = "\n".join(notes)
    assert "Eldoria" in text and "world_info_zzz" in text and "world_info_depth" in text
    with pytest.raises(ValueError):
        from_st_settings({"power_user": {}})
    # ST's budget formula: round(percent × context / 100) || 1, then the cap
    assert WorldInfoSettings(world_info_budget=25).budget_tokens(8192) == 2048
    assert WorldInfoSettings(world_info_budget=1).budget_tokens(10) == 1
    assert WorldInfoSettings(world_info_budget_cap=500).budget_tokens(8192) == 500
    assert WorldInfoSettings().budget_tokens(0) is None


def test_assignments_and_names():
    assert parse_assignments(["world_info_depth=4", "recursive=false", "world-info-character-strategy=global_first",
                              "WORLD_INFO_INCLUDE_NAMES=off"]) == {
        "world_info_depth": 4, "world_info_recursive": False, "world_info_character_strategy": 2,
        "world_info_include_names": False}
    assert field_name("depth") == "world_info_depth"
    for bad in (["depth"], ["nope=1"], ["depth=x"], ["recursive=maybe"], ["world_info_budget=0"], ["depth=-1"]):
        with pytest.raises(ValueError):
            parse_assignments(bad)


RECURSION = [_entry(0, "钥匙", ["钥匙"], "钥匙能打开北屋的宝箱。"), _entry(1, "宝箱", ["宝箱"], "宝箱里是一封信。")]


async def test_recursion_off_changes_the_prompt(tmp_path):
    on = await _titles(tmp_path, RECURSION, [], "我拿起钥匙。", sub="on")
    off = await _titles(tmp_path, RECURSION, [], "我拿起钥匙。", st=_st_file(world_info_recursive=False), sub="off")
    assert on == ["钥匙", "宝箱"]  # the book says recursive_scanning false; SillyTavern's global setting wins
    assert off == ["钥匙"]


async def test_whole_words_off_changes_the_prompt(tmp_path):
    book = [_entry(0, "国王", ["king"], "老国王。")]
    assert await _titles(tmp_path, book, [], "I am liking it.", sub="a") == []
    off = await _titles(tmp_path, book, [], "I am liking it.", st=_st_file(world_info_match_whole_words=False), sub="b")
    assert off == ["国王"]


async def test_include_names_off_changes_the_prompt(tmp_path):
    book = [_entry(0, "旅人", ["旅人"], "远方来的人。")]
    on = await _titles(tmp_path, book, [], "我坐下了。", persona="旅人", sub="a")
    off = await _titles(tmp_path, book, [], "我坐下了。", persona="旅人", st=_st_file(world_info_include_names=False), sub="b")
    assert on == ["旅人"]  # "旅人: 我坐下了。" carries the name
    assert off == []


async def test_scan_depth_4_changes_the_prompt(tmp_path):
    # newest first: 继续(0) 好。(1) 走吧(2) 灯塔在北边。(3) 说说路(4) 你好。(5)
    book = [_entry(0, "灯塔", ["灯塔"], "北边的灯塔。")]
    history = [("说说路", "灯塔在北边。"), ("走吧", "好。")]
    assert await _titles(tmp_path, book, history, "继续", sub="a") == []
    assert await _titles(tmp_path, book, history, "继续", st=_st_file(world_info_depth=4), sub="b") == ["灯塔"]


async def test_min_activations_widens_past_the_scan_window(tmp_path):
    # newest first: 看看甲(0) 好。(1) 走吧(2) 乙在这里。(3) 丙在那里。(4) 丁在远方。(5, the greeting)
    book = [_entry(0, "甲", ["甲"], "甲。"), _entry(1, "乙", ["乙"], "乙。"), _entry(2, "丙", ["丙"], "丙。"),
            _entry(3, "丁", ["丁"], "丁。")]
    history = [("丙在那里。", "乙在这里。"), ("走吧", "好。")]
    assert await _titles(tmp_path, book, history, "看看甲", first_mes="丁在远方。", st=_st_file(world_info_recursive=False), sub="a") == ["甲"]
    # SillyTavern widens one message at a time until 3 entries are in: depth 5 brings 丙 and stops before 丁
    st = _st_file(world_info_recursive=False, world_info_min_activations=3)
    assert await _titles(tmp_path, book, history, "看看甲", first_mes="丁在远方。", st=st, sub="b") == ["甲", "乙", "丙"]
    # "max depth" as SillyTavern checks it: the scan stops widening once the depth it reached is above the max
    # (depth 3 scanned, 3 > 3 is false, so depth 4 runs too and brings 乙; then 4 > 3 stops)
    st = _st_file(world_info_recursive=False, world_info_min_activations=3, world_info_min_activations_depth_max=3)
    assert await _titles(tmp_path, book, history, "看看甲", first_mes="丁在远方。", st=st, sub="c") == ["甲", "乙"]


async def test_budget_with_cap_changes_the_prompt(tmp_path):
    long = "长" * 30  # 30 tokens each (one per CJK character)
    book = [_entry(0, "甲", ["甲"], long, order=200), _entry(1, "乙", ["乙"], long, order=100)]
    assert await _titles(tmp_path, book, [], "甲和乙", sub="a") == ["甲", "乙"]
    # cap 50: 甲 (30) fits, 甲+乙 (60) reaches the budget → 乙 is dropped (SillyTavern checks >=)
    capped = await _titles(tmp_path, book, [], "甲和乙", st=_st_file(world_info_budget_cap=50), sub="b")
    assert capped == ["甲"]
    # the same by percent: 25 % of a 200-token context is 50
    small = await _titles(tmp_path, book, [], "甲和乙", st=_st_file(world_info_budget=25), sub="c", window=200)
    assert small == ["甲"]


async def test_overflow_alert(tmp_path):
    long = "长" * 30
    card = _card(tmp_path, [_entry(0, "甲", ["甲"], long, order=200), _entry(1, "乙", ["乙"], long)])
    wi = WorldInfoSettings(world_info_budget_cap=50, world_info_overflow_alert=True)
    chat = Chat.create(tmp_path / "c", card, _replies("嗯。"), world_info=wi)
    seen = []
    await chat.send("甲和乙", on_event=seen.append)
    assert any(isinstance(e, Activity) and "世界书预算" in e.text for e in seen)


async def test_chat_override_survives_reopening_and_branches(tmp_path):
    book = [_entry(0, "灯塔", ["灯塔"], "北边的灯塔。")]
    card = _card(tmp_path, book)
    app = WorldInfoSettings()
    chat = Chat.create(tmp_path / "c", card, _replies("灯塔在北边。", "好。", "嗯。"), world_info=app)
    await chat.send("说说路")
    await chat.send("走吧")
    assert chat.prepare("继续")[1] == []
    assert chat.set_world_info({"world_info_depth": 4}) is True
    assert chat.set_world_info({"depth": 4}) is False  # nothing changed, nothing written
    assert chat.world_info_overrides() == {"world_info_depth": 4}
    assert chat.prepare("继续")[1] == ["灯塔"]
    with pytest.raises(ValueError):
        chat.set_world_info({"world_info_depth": -1})
    # the override is outside every branch: undo and regenerate keep it; reopening reads it from the tree
    chat.undo()
    assert chat.world_info_settings().world_info_depth == 4
    again = Chat.open(tmp_path / "c", card, _replies("嗯。"), world_info=app)
    assert again.world_info_overrides() == {"world_info_depth": 4}
    assert again.world_info_settings().world_info_depth == 4
    assert not any(e.type == "chat-settings" for e in again.tree.path_to())
    await again.send("走吧")
    assert again.prepare("继续")[1] == ["灯塔"]
    # the app's settings change: the chat keeps its override and follows the rest
    again.world_info_defaults = WorldInfoSettings(world_info_recursive=False, world_info_depth=3)
    s = again.world_info_settings()
    assert (s.world_info_depth, s.world_info_recursive) == (4, False)
    # back to the app's settings
    assert again.set_world_info({}) is True
    assert Chat.open(tmp_path / "c", card, _replies(), world_info=app).world_info_overrides() == {}


def _run_cli(*args: str, home) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONIOENCODING"] = "utf-8"
    env["LIYUAN_HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "liyuan_desktop", *args], cwd=str(ROOT), env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)


def test_cli_wi_and_import_st(tmp_path, monkeypatch):
    home = tmp_path / "h"
    monkeypatch.setenv("LIYUAN_HOME", str(home))
    card = _card(tmp_path, RECURSION)
    w = lambda t: {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": t}}]}
    seal = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
    replay = tmp_path / "r.json"
    replay.write_text(json.dumps({"format": "liyuan-replay", "version": 1, "beats": [
        {"user": "我拿起钥匙。", "actor": [w("嗯。"), seal], "scribe": ['{"patch": {}}']}]}, ensure_ascii=False), "utf-8")
    base = ["chat", card.path, "--model", f"replay:{replay}", "--json"]
    r = _run_cli(*base, "--chat", "默认", home=home)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["beats"][0]["activated"] == ["钥匙", "宝箱"]  # the app's defaults: recursion on
    r = _run_cli(*base, "--chat", "关递归", "--wi", "world_info_recursive=false", "--wi", "world_info_depth=4", home=home)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["beats"][0]["activated"] == ["钥匙"]
    tree = SessionTree.open(chat_dir(card.name, "关递归") / "session.jsonl")
    stored = [e.world_info for e in tree.entries.values() if e.type == "chat-settings"]
    assert stored == [{"world_info_recursive": False, "world_info_depth": 4}]
    r = _run_cli(*base, "--chat", "坏", "--wi", "world_info_depth", home=home)
    assert r.returncode == 2 and "world_info_depth=4" in r.stderr
    r = _run_cli(*base, "--chat", "坏", "--wi", "nonsense=1", home=home)
    assert r.returncode == 2 and "world_info_recursive" in r.stderr
    # the app's settings from a SillyTavern settings.json
    st = tmp_path / "settings.json"
    st.write_text(json.dumps(_st_file(world_info_recursive=False, world_info_depth=6)), "utf-8")
    r = _run_cli("settings", "import-st", str(st), "--json", home=home)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["world_info"]["world_info_depth"] == 6
    assert load_settings().world_info.world_info_recursive is False
    r = _run_cli(*base, "--chat", "导入后", home=home)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["beats"][0]["activated"] == ["钥匙"]
    r = _run_cli("settings", "import-st", str(tmp_path / "missing.json"), home=home)
    assert r.returncode == 2
