"""Engine lines travel by key end to end (issue 32 §1): with the reverse matcher made unusable (every function that
would find a catalog key from a text raises), a real beat played by the replay model — a tool that writes, a tool
call the engine refuses, a notice queued for the beat, the scribe's patch with applied lines and a warning — and a
failed summary call all render in English and in Chinese, in the terminal's event view and as stored in the
session file. Story text here is English, so the English rendering has no CJK character at all."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from liyuan_desktop.cli import common as cli_common
from liyuan_desktop.cli.view import HumanView, print_ledger
from liyuan_desktop.core import messages
from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.ledger import wording
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.llm.types import ModelError
from liyuan_desktop.core.memory.search import summarize
from liyuan_desktop.core.messages import Msg, message, render
from liyuan_desktop.core.session.tree import SessionTree

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")

CARD = {"spec": "chara_card_v2", "spec_version": "2.0",
        "data": {"name": "Birch", "description": "A ferryman on a wide river.", "personality": "", "scenario": "",
                 "first_mes": "The ferry waits.", "mes_example": "",
                 "character_book": {"entries": [
                     {"id": 1, "keys": ["river"], "content": "The river is wide and slow.", "enabled": True,
                      "insertion_order": 1, "comment": "River"},
                     {"id": 2, "keys": [], "constant": True, "content": "Fog lies on the water.", "enabled": True,
                      "insertion_order": 2, "comment": "Fog"}]}}}


def call(name: str, **args) -> dict:
    return {"tool_calls": [{"name": name, "arguments": args}]}


ACTOR = [call("lorebook_search", query="river"),
         {"tool_calls": [{"name": "draft_write",  # half an emoji in the JSON: an activity notice
                          "arguments": '{"version": 0, "content": "The ferry pushes off into the fog. \\ud83d"}'}]},
         call("draft_edit", version=1, edits=[{"old": "no such words", "new": "x"}]),  # refused: not found
         call("draft_seal", version=1)]
SCRIBE = ['{"patch": {"time": "dusk", "characters": {"Birch": {"affinity": 5}}, "flags": {"ferry": "out"}, '
          '"weather": "fog"}}']  # "weather" is no ledger field: a warning


class _Down:
    """A model whose every call fails (the summary call's error)."""

    name = "down"
    is_replay = False

    async def complete(self, request, on_delta=None):
        raise ModelError("connection", "服务器没有响应")


@pytest.fixture
def no_reverse_matching(monkeypatch):
    """Every way back from a text to a key raises: what renders here came by key."""
    def refuse(*_a, **_k):
        raise AssertionError("an engine line was matched back from its text")

    monkeypatch.setattr(messages, "find_message", refuse, raising=False)  # (removed: issue 32)
    monkeypatch.setattr(messages, "translate", refuse, raising=False)
    monkeypatch.setattr(messages, "_labelled", refuse, raising=False)
    monkeypatch.setattr(wording, "_APPLIED", ())  # the scribe's lines of this run are mapped by key, not by shape


async def _play(tmp_path: Path):
    card_file = tmp_path / "birch.json"
    card_file.write_text(json.dumps(CARD), "utf-8")
    chat = Chat.create(tmp_path / "chat", load_card(card_file), ReplayModel(actor=list(ACTOR), scribe=list(SCRIBE)))
    chat.pending_notices.append(message("persona.changed", name="Ann"))  # what set_persona queues
    events: list = []
    res = await chat.send("We cross the river.", on_event=events.append)
    return chat, events, res


def _view(events, lang: str, capsys) -> str:
    cli_common.set_language(lang)
    view = HumanView(color=False)
    for ev in events:
        view(ev)
    return capsys.readouterr().out


async def test_a_beat_renders_in_both_languages_without_matching_text(tmp_path, capsys, no_reverse_matching):
    chat, events, res = await _play(tmp_path)
    assert res.sealed
    kinds = {getattr(e, "kind", "") for e in events}
    assert {"activity", "tool_finished", "scribe_finished"} <= kinds
    refused = [e for e in events if e.kind == "tool_finished" and not e.ok]
    assert refused and isinstance(refused[0].summary, Msg) and refused[0].summary.key.startswith("tool.refused")
    scribe = next(e for e in events if e.kind == "scribe_finished")
    assert all(isinstance(a, Msg) for a in scribe.applied) and scribe.warnings
    assert all(isinstance(w, Msg) for w in scribe.warnings)
    assert "未知字段 weather" in scribe.warnings[0]  # the seed's Chinese wording, byte for byte (the scribe reads it)
    started = next(e for e in events if e.kind == "beat_started")
    assert started.lore and all(isinstance(w, Msg) for w in started.lore)

    out = await summarize(_Down(), "system", "user")
    assert isinstance(out.error, Msg)

    try:
        en = _view(events, "en", capsys)
        zh = _view(events, "zh", capsys)
        cli_common.set_language("en")
        print_ledger(res, HumanView(color=False))  # the world state after the beat, made from the ledger itself
        ledger_en = capsys.readouterr().out
    finally:
        cli_common.set_language("zh")
    assert "Time: dusk" in ledger_en and "Birch: affinity 5" in ledger_en and "ferry: out" in ledger_en
    assert not CJK.search(ledger_en), ledger_en
    assert not CJK.search(en), [line for line in en.splitlines() if CJK.search(line)]
    assert "refused" in en and "Unknown field weather" in en and "Time: dusk" in en and "Birch: state updated" in en
    assert "River: the key “river” is in your words this beat" in en
    assert "Ann" in en and "looked up “river” → River" in en
    assert "未知字段 weather" in zh and "时间：dusk" in zh and "查「river」→ River" in zh
    assert render(out.error, "en").startswith("The summary of earlier beats failed")
    assert render(out.error, "zh").startswith("压缩前情失败")


async def test_stored_activity_keeps_its_key_and_old_plain_lines_read_as_they_are(tmp_path):
    chat, _events, _res = await _play(tmp_path)
    path = chat.tree.path
    beat = next(json.loads(line) for line in path.read_text("utf-8").splitlines() if '"type":"beat"' in line)
    assert beat["activity"], "the beat had no activity line to store"
    assert all(isinstance(a, dict) and set(a) == {"key", "params"} for a in beat["activity"])
    # a session written before: the activity lines were plain text
    lines = path.read_text("utf-8").splitlines()
    old = [json.dumps({**b, "activity": ["旧的一行"]}, ensure_ascii=False, separators=(",", ":"))
           if b.get("type") == "beat" else line for line, b in ((ln, json.loads(ln)) for ln in lines)]
    path.write_text("\n".join(old) + "\n", "utf-8")
    again = SessionTree.open(path)
    stored = next(e for e in again.path_to() if e.type == "beat")
    assert stored.activity == ["旧的一行"] and not isinstance(stored.activity[0], Msg)


async def test_stored_activity_renders_again_in_english(tmp_path, no_reverse_matching):
    chat, _events, _res = await _play(tmp_path)
    again = SessionTree.open(chat.tree.path)
    stored = next(e for e in again.path_to() if e.type == "beat")
    assert stored.activity and all(isinstance(a, Msg) for a in stored.activity)
    for a in stored.activity:
        assert not CJK.search(a.render("en")), a.render("en")
        assert a.render("zh") == str(a)


def test_settings_warning_is_a_message(tmp_path, monkeypatch):
    monkeypatch.setenv("LIYUAN_HOME", str(tmp_path))
    from liyuan_desktop.core.settings import load_settings, settings_path

    settings_path().parent.mkdir(parents=True, exist_ok=True)
    settings_path().write_text("{not json", "utf-8")
    s = load_settings()
    assert isinstance(s.load_warning, Msg)
    assert s.load_warning.startswith("设置文件 settings.json 已损坏")
    en = s.load_warning.render("en")
    assert en.startswith("The settings file settings.json is damaged") and "broken-" in en
