"""The offline demo per language (issue 32 "English as a first language"): ``core.paths.demo_set`` picks the Chinese
demo (cards/青梧) for Chinese and the English one (cards/Qingwu) for every other language; the English demo plays
the same engine paths as the Chinese recording (the same tool calls beat by beat, an ask, a scribe patch, a revision
of the previous reply) and holds no CJK; the library copies in the language's card; the opening's stored header is
shown as a title in the reader's language while the stored text (what the model is sent) keeps it."""

from __future__ import annotations

import json
import re

import pytest

from liyuan_desktop.core.cards import library, load_card
from liyuan_desktop.core.cards.st_chat import OPENING_HEADER, opening_header, opening_title
from liyuan_desktop.core.llm import ReplayModel
from liyuan_desktop.core.messages import render
from liyuan_desktop.core.paths import demo_card_path, demo_language, demo_replay_path, demo_set

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")


@pytest.mark.parametrize("lang, want", [("zh", "zh"), ("zh_CN", "zh"), ("zh-Hant", "zh"), ("en", "en"),
                                        ("en_GB", "en"), ("ja", "en"), ("", "en")])
def test_the_demo_language_of_a_language(lang, want):
    assert demo_language(lang) == want
    assert demo_set(lang).language == want


def test_the_default_is_the_chinese_demo_byte_for_byte():
    """Callers that name no language (the golden runs, the benches) still get the seed's Chinese demo."""
    zh = demo_set()
    assert zh.library_name == "青梧" and zh.folder.name == "青梧"
    assert demo_card_path() == zh.card and demo_replay_path() == zh.replay
    assert load_card(zh.card).name == "青梧" and load_card(zh.card).language == "zh"


def _calls(script: dict) -> list[list[list[str]]]:
    return [[[c["name"] for c in step.get("tool_calls") or []] for step in b["actor"]] for b in script["beats"]]


def _script(path) -> dict:
    ReplayModel.from_file(path)  # a script the replay model reads
    return json.loads(path.read_text("utf-8"))


def test_the_english_demo_plays_the_same_paths_as_the_chinese():
    zh, en = demo_set("zh"), demo_set("en")
    card = load_card(en.card)
    assert card.name == "Qingwu" and card.language == "en" and card.persona_name == "Traveller"
    zh_script, en_script = _script(zh.replay), _script(en.replay)
    assert _calls(en_script) == _calls(zh_script)
    for zb, eb in zip(zh_script["beats"], en_script["beats"]):
        assert len(eb["scribe"]) == len(zb["scribe"]) and len(eb["ask_answers"]) == len(zb["ask_answers"])
        for zs, es in zip(zb["scribe"], eb["scribe"]):
            assert set(json.loads(es)["patch"]) == set(json.loads(zs)["patch"])
    beats = en_script["beats"]
    asks = [c["arguments"] for b in beats for s in b["actor"] for c in s.get("tool_calls") or [] if c["name"] == "ask"]
    assert len(asks) == 1 and beats[1]["ask_answers"][0] in asks[0]["options"]
    # the revision replaces a line that beat 2's draft really holds
    edit = beats[2]["actor"][-1]["tool_calls"][0]["arguments"]["edits"][0]
    draft = beats[1]["actor"][2]["tool_calls"][0]["arguments"]["content"]
    assert draft.count(edit["old"]) == 1
    # the lore the beats look up is in the card's book (every query finds an entry by its keys)
    keys = [k.lower() for e in card.character_book["entries"] for k in e["keys"]]
    for b in beats:
        for s in b["actor"]:
            for c in s.get("tool_calls") or []:
                if c["name"] == "lorebook_search":
                    assert any(k in c["arguments"]["query"].lower() for k in keys), c


def test_the_english_demo_holds_no_cjk():
    en = demo_set("en")
    for f in (en.card, en.replay, en.agent_plan, en.agent_replay):
        text = f.read_text("utf-8")
        assert not CJK.search(text), (f.name, CJK.findall(text)[:10])


def test_the_english_agent_demo_reads_its_own_chapters():
    en = demo_set("en")
    plan = json.loads(en.agent_plan.read_text("utf-8"))
    agent = _script(en.agent_replay)
    paths = [c["arguments"]["path"] for s in agent["beats"][0]["actor"] for c in s.get("tool_calls") or []]
    want = [f"chapters/{name}" for name in plan["chapters"]]  # an English novel's chapter folder (core/story/layout)
    assert paths[:3] == want and set(paths[3:]) <= set(want)


@pytest.mark.parametrize("lang, name", [("zh", "青梧"), ("en", "Qingwu"), ("fr", "Qingwu")])
def test_the_library_copies_in_the_languages_demo(lang, name):
    ref = library.ensure_demo_card(lang)
    assert ref.name == name
    assert (library.cards_root() / name / "replay.json").read_bytes() == demo_set(lang).replay.read_bytes()
    assert [c.name for c in library.list_cards()] == [name]


@pytest.mark.parametrize("language", ["zh", "en"])
def test_the_opening_title_is_the_readers(language):
    stored = f"{opening_header('Qingwu', language)}\n*Rain.*"
    title, body = opening_title(stored)
    assert body == "*Rain.*" and title is not None
    assert render(title, "en") == "Opening · Qingwu" and render(title, "zh") == "开场 · Qingwu"
    assert OPENING_HEADER.match(stored)  # the stored text keeps its header (what the model is sent)
    assert opening_title("*Rain.*") == (None, "*Rain.*")


IDEOGRAPH = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def test_the_english_agent_demo_prints_no_cjk(capsys):
    """``liyuan --lang en chat --demo-agent``: the English demo's agent turn, every line English, the paths too (a
    data folder first written in English has English folder names: core/paths.py)."""
    from liyuan_desktop import cli

    assert cli.main(["--lang", "en", "chat", "--demo-agent"]) == 0
    got = capsys.readouterr()
    text = got.out + got.err
    assert "Import three chapters" in text and "001-A-Name-in-the-Rain.md" in text
    assert "/cards/Qingwu/chats/Chat-C/chapters" in text
    assert not [ln for ln in text.splitlines() if IDEOGRAPH.search(ln)], text


def test_the_chinese_cli_demo_is_unchanged(capsys):
    """In Chinese the demo is the seed's (青梧) and its opening keeps its title line as it always was."""
    from liyuan_desktop import cli

    assert cli.main(["--lang", "zh", "chat", "--demo", "--delay-ms", "0"]) == 0
    out = capsys.readouterr().out
    assert "\n【开场 · 青梧】\n*雨下到第三天" in out and "  ？ 你望着茶烟后" in out
