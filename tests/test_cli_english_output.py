"""Every ``liyuan`` command's output in English (issue 32 §1): each subcommand the parser has is run with ``--lang en``
on a real data folder holding real data built here from small JSON — a card with a lorebook, a preset, a quick-reply
set, a chat imported from a SillyTavern file, a novel with a chapter, a SillyTavern-shaped data folder — and nothing
it prints (stdout and stderr, the ``import-sillytavern`` report file too) may hold a CJK character. All the data
here is English, so any CJK text is the program's own. Paths under the test's folder are left out of the check (they
hold the test's names), but not the folder names the app chose: a data folder first written in English has English
ones (``chats/``, ``import-reports/``, ``trash/``…: core/paths.py), as has an English novel (``chapters/``,
``outline.md``, ``history/``: core/story/layout.py), so relative paths the commands print are checked too.

The commands come from the parser, so a subcommand added later fails :func:`test_every_command_has_an_english_run`
until it is given a run here. The same commands in Chinese still run (a smoke pass), and say Chinese things."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from liyuan_desktop import cli
from liyuan_desktop.cli import common

try:
    from helpers import need_shared
except ImportError:  # tests/ collected as a package
    from tests.helpers import need_shared

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")


def _leaf_commands() -> list[tuple[str, ...]]:
    def walk(p: argparse.ArgumentParser, prefix: tuple[str, ...]) -> list[tuple[str, ...]]:
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            return [prefix]
        out: list[tuple[str, ...]] = []
        for name, child in subs[0].choices.items():
            out += walk(child, (*prefix, name))
        return out

    return walk(cli.build_parser(), ())


# -- the data (all English: any CJK in the output is the program's) -------------------------------------------------
def _card(name: str, greeting: str, **data: Any) -> dict[str, Any]:
    return {"spec": "chara_card_v2", "spec_version": "2.0",
            "data": {"name": name, "description": f"{name} keeps the ferry inn.", "personality": "calm",
                     "scenario": "A rainy night at the inn.", "first_mes": greeting, "mes_example": "",
                     "creator_notes": "A test card.", "system_prompt": "", "post_history_instructions": "",
                     "alternate_greetings": ["Back again?"], "tags": ["inn"], "creator": "test",
                     "character_version": "1", **data}}


def _book() -> dict[str, Any]:
    return {"name": "Ferry lore", "entries": [
        {"id": 0, "keys": ["ferry"], "content": "The ferry crosses the river at dawn.", "enabled": True,
         "insertion_order": 100, "comment": "ferry"},
        {"id": 1, "keys": ["lantern"], "content": "Red lanterns hang at the inn.", "enabled": True,
         "insertion_order": 90, "comment": "lantern", "constant": True}]}


def _preset(main: str, temperature: float) -> dict[str, Any]:
    return {"temperature": temperature, "top_p": 0.9, "openai_max_context": 8000, "openai_max_tokens": 500,
            "prompts": [{"identifier": "main", "name": "Main Prompt", "system_prompt": True, "role": "system",
                         "content": main},
                        {"identifier": "style", "name": "Style", "role": "system", "content": "Write briefly."},
                        {"identifier": "chatHistory", "name": "Chat History", "system_prompt": True, "marker": True}],
            "prompt_order": [{"character_id": 100001, "order": [{"identifier": "main", "enabled": True},
                                                                {"identifier": "style", "enabled": False},
                                                                {"identifier": "chatHistory", "enabled": True}]}]}


def _msg(name: str, text: str, user: bool = False, **extra: Any) -> dict[str, Any]:
    return {"name": name, "is_user": user, "is_system": False, "send_date": "October 18, 2024 8:52pm", "mes": text,
            "extra": {}, **extra}


def _st_chat(char: str) -> str:
    lines = [{"user_name": "Traveller", "character_name": char, "create_date": "2024-10-18@20h52m17s",
              "chat_metadata": {"chat_id_hash": 1}},
             _msg(char, "You came back.", swipes=["You came back.", "Oh, it's you."], swipe_id=0,
                  swipe_info=[{}, {}]),
             _msg("Traveller", "I need a room and news of the ferry.", user=True),
             _msg(char, "The ferry leaves at dawn. The lantern is lit.")]
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def _quick_replies() -> dict[str, Any]:
    return {"version": 2, "name": "Moves", "qrList": [{"id": 1, "label": "Look", "message": "I look around."},
                                                      {"id": 2, "label": "Leave", "message": "/echo bye"}]}


def _st_folder(base: Path) -> Path:
    """A SillyTavern ``data/default-user`` folder with English names: two cards (one broken), chats (one torn, one
    of a card that is missing), worlds (one broken), presets, settings, quick replies, a group."""
    d = base / "data" / "default-user"
    for sub in ("characters", "chats/alice", "chats/ghost", "worlds", "OpenAI Settings", "User Avatars",
                "group chats", "groups", "QuickReplies", "themes"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    alice = _card("Alice", "You came.", character_book=_book(), extensions={"world": "Alice world"})
    (d / "characters" / "alice.json").write_text(json.dumps(alice), "utf-8")
    (d / "characters" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\nnot a card")
    (d / "chats/alice/first.jsonl").write_text(_st_chat("Alice"), "utf-8")
    (d / "chats/alice/torn.jsonl").write_text(_st_chat("Alice")[:-40], "utf-8")
    (d / "chats/alice/empty.jsonl").write_bytes(b"")
    (d / "chats/ghost/x.jsonl").write_text(_st_chat("Ghost"), "utf-8")
    world = {"entries": {"0": {"uid": 0, "key": ["ferry"], "keysecondary": [], "comment": "ferry",
                               "content": "The ferry is old.", "constant": False, "selective": True, "order": 100,
                               "position": 0, "disable": False, "probability": 100, "depth": 4}}}
    (d / "worlds" / "Alice world.json").write_text(json.dumps(world), "utf-8")
    (d / "worlds" / "Global.json").write_text(json.dumps(world), "utf-8")
    (d / "worlds" / "Bad.json").write_text("{ not json", "utf-8")
    (d / "OpenAI Settings" / "House.json").write_text(json.dumps(_preset("Write well.", 0.8)), "utf-8")
    (d / "User Avatars" / "user1.png").write_bytes(b"\x89PNG\r\n\x1a\navatar")
    settings = {"username": "Traveller", "main_api": "openai",
                "world_info_settings": {"world_info": {"globalSelect": ["Global"]}, "world_info_depth": 4,
                                        "world_info_budget": 40, "world_info_recursive": True},
                "oai_settings": {"chat_completion_source": "custom", "custom_url": "http://127.0.0.1:9/v1",
                                 "custom_model": "local-model", "preset_settings_openai": "House"},
                "power_user": {"personas": {"user1.png": "Traveller"},
                               "persona_descriptions": {"user1.png": {"description": "A walker.", "position": 0}},
                               "default_persona": "user1.png"}}
    (d / "settings.json").write_text(json.dumps(settings, indent=2), "utf-8")
    (d / "secrets.json").write_text('{"api_key_custom": "sk-never-read"}', "utf-8")
    (d / "QuickReplies" / "Moves.json").write_text(json.dumps(_quick_replies()), "utf-8")
    (d / "group chats" / "g1.jsonl").write_text(_st_chat("Alice"), "utf-8")
    (d / "groups" / "g1.json").write_text(json.dumps({"id": "g1", "name": "Party", "members": ["alice.png"],
                                                      "chats": ["g1"], "chat_id": "g1"}), "utf-8")
    (d / "themes" / "Dark.json").write_text("{}", "utf-8")
    return d


def _replay(text: str) -> dict[str, Any]:
    call = {"content": "", "tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]}
    seal = {"content": "", "tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
    return {"format": "liyuan-replay", "version": 1, "label": "test",
            "beats": [{"user": "Hello.", "actor": [call, seal], "scribe": ['{"patch": {"time": "night"}}']}]}


class World:
    """The files the runs use (paths as str) in ``tmp``."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        files = tmp / "files"
        files.mkdir()
        self.card = files / "alice.json"
        self.card.write_text(json.dumps(_card("Alice", "You came.", character_book=_book())), "utf-8")
        self.card2 = files / "bob.json"
        self.card2.write_text(json.dumps(_card("Bob", "Hello there.")), "utf-8")
        self.preset = files / "House.json"
        self.preset.write_text(json.dumps(_preset("Write well.", 0.8)), "utf-8")
        self.qr = files / "Moves.json"
        self.qr.write_text(json.dumps(_quick_replies()), "utf-8")
        self.st_chat = files / "first.jsonl"
        self.st_chat.write_text(_st_chat("Alice"), "utf-8")
        self.replay = files / "replay.json"
        self.replay.write_text(json.dumps(_replay("Alice nods. The ferry leaves at dawn.")), "utf-8")
        self.text = files / "value.txt"
        self.text.write_text("A longer description of Alice.", "utf-8")
        self.st = _st_folder(tmp / "st")
        self.out = tmp / "out"
        self.out.mkdir()


# Each command's runs, in order (a run may need what an earlier one made); "{x}" are World attributes. The setup runs
# make the data the later runs read.
SETUP: list[list[str]] = [
    ["card", "import", "{card}"],
    ["card", "import", "{card2}"],
    ["preset", "import", "{preset}"],
    ["qr", "import", "{qr}"],
    ["import-chat", "{st_chat}", "--card", "Alice", "--chat", "first"],
    ["novel", "new", "Ferry Book", "--language", "en", "--author", "Test"],
]
RUNS: dict[tuple[str, ...], list[list[str]]] = {
    ("chat",): [["chat", "Alice", "--chat", "second", "--model", "replay:{replay}", "--say", "Hello.", "--auto",
                 "--delay-ms", "0"],
                ["chat", "Alice", "--chat", "third", "--say", "Hello."],
                ["chat", "Alice", "--chat", "fifth", "--provider", "ollama", "--say", "Hello."],
                ["chat", "Alice", "--chat", "fourth", "--provider", "openai", "--base-url", "http://127.0.0.1:9/v1",
                 "--model", "m", "--say", "Hello."]],
    ("card", "inspect"): [["card", "inspect", "{card}"], ["card", "inspect", "{preset}"]],
    ("card", "import"): [["card", "import", "{card}"], ["card", "import", "{st}/characters/broken.png"]],
    ("card", "rename"): [["card", "rename", "Bob", "Robert"], ["card", "rename", "Nobody", "X"]],
    ("card", "preview"): [["card", "preview", "{card}"]],
    ("card", "export"): [["card", "export", "Alice", "--format", "json", "-o", "{out}/alice-out.json"]],
    ("card", "new"): [["card", "new", "Carol"]],
    ("card", "set"): [["card", "set", "Carol", "description", "--value-file", "{text}"],
                      ["card", "set", "Carol", "nonsense", "x"]],
    ("card", "fields"): [["card", "fields", "Alice"]],
    ("card", "scripts"): [["card", "scripts", "Alice"], ["card", "scripts", "Alice", "--allow"]],
    ("story", "checkpoints"): [["story", "checkpoints", "Alice/first"]],
    ("story", "restore"): [["story", "restore", "Alice/first", "nothing"]],
    ("story", "export"): [["story", "export", "{novel}", "--list"],
                          ["story", "export", "{novel}", "--format", "md", "-o", "{out}/book.md"]],
    ("story", "outline"): [["story", "outline", "{novel}"]],
    ("story", "threads"): [["story", "threads", "{novel}"]],
    ("story", "codex"): [["story", "codex", "{novel}", "add", "Ferryman", "--kind", "character", "--description",
                          "Old man."], ["story", "codex", "{novel}"], ["story", "codex", "{novel}", "show", "Ferryman"]],
    ("story", "progress"): [["story", "progress", "{novel}"]],
    ("story", "link"): [["story", "link", "{novel}", "nope"]],
    ("story", "review"): [["story", "review", "{novel}", "--chapter", "001-dawn.md", "--local"]],
    ("story", "webnovel"): [["story", "webnovel", "{novel}"]],
    ("story", "summaries"): [["story", "summaries", "{novel}"]],
    ("import-chat",): [["import-chat", "{st_chat}", "--card", "Alice", "--chat", "again"]],
    ("export-chat",): [["export-chat", "--card", "Alice", "--chat", "first", "--format", "md", "{out}/first.md"]],
    ("chats", "list"): [["chats", "list"]],
    ("chats", "rename"): [["chats", "rename", "Alice/again", "again2"]],
    ("chats", "duplicate"): [["chats", "duplicate", "Alice/first", "--name", "copy"]],
    ("chats", "delete"): [["chats", "delete", "Alice/again2"]],
    ("chats", "delete-card"): [["chats", "delete-card", "Carol"]],
    ("chats", "trash"): [["chats", "trash"]],
    ("chats", "restore"): [["chats", "restore", "nothing-here"]],
    ("chats", "empty-trash"): [["chats", "empty-trash", "--yes"]],
    ("branches",): [["branches", "Alice/first"], ["branches", "Alice/first", "--undo"]],
    ("ledger", "history"): [["ledger", "history", "Alice/second"]],
    ("ledger", "revert"): [["ledger", "revert", "Alice/second", "1"]],
    ("ledger", "set"): [["ledger", "set", "Alice/second", "time", "\"dawn\""]],
    ("inspect",): [["inspect", "Alice/second"]],
    ("memory",): [["memory", "Alice/first", "ferry"], ["memory", "Alice/first", "zzzq"]],
    ("preset", "import"): [["preset", "import", "{preset}"]],
    ("preset", "list"): [["preset", "list"]],
    ("preset", "show"): [["preset", "show", "House"]],
    ("preset", "delete"): [["preset", "delete", "House-2"], ["preset", "delete", "nothing"]],
    ("preset", "default"): [["preset", "default", "House"], ["preset", "default", "--none"]],
    ("preset", "prompts"): [["preset", "prompts", "House"], ["preset", "prompts", "House", "--enable", "style"]],
    ("preset", "export"): [["preset", "export", "House", "-o", "{out}/house.json"]],
    ("qr", "import"): [["qr", "import", "{qr}", "--replace"]],
    ("qr", "list"): [["qr", "list"]],
    ("qr", "show"): [["qr", "show", "Moves"]],
    ("qr", "delete"): [["qr", "delete", "Moves"]],
    ("settings", "show"): [["settings", "show"]],
    ("settings", "import-st"): [["settings", "import-st", "{st}"]],
    ("import-sillytavern",): [["import-sillytavern", "{st}", "--dry-run"], ["import-sillytavern", "{st}"],
                              ["import-sillytavern", "{st}", "--dry-run", "--json"]],
    ("search",): [["search", "ferry"], ["search", "zzzq"]],
    ("models", "probe"): [["models", "probe", "ollama"]],  # nothing listens there: "cannot connect"
    ("models", "local"): [["models", "local"]],  # the servers found on this machine's ports (usually none)
    ("models", "list"): [["models", "list"]],
    ("novel", "new"): [["novel", "new", "Second Book"]],
    ("group", "create"): [["group", "create", "Party", "--member", "Alice", "--member", "Robert"]],
    ("group", "list"): [["group", "list"]],
    ("group", "show"): [["group", "show", "Party"]],
    ("group", "delete"): [["group", "delete", "Party"]],
    ("group", "import-st"): [["group", "import-st", "{st}/groups/g1.json"]],
    # after import-sillytavern put SillyTavern's world books in the library (Global is a global book here)
    ("book", "update"): [["book", "update", "Global", "{st}/worlds/Alice world.json"],
                         ["book", "update", "Global", "{st}/worlds/Alice world.json", "--yes"],
                         ["book", "update", "Nope", "{st}/worlds/Global.json"],
                         ["book", "update", "Global", "{st}/worlds/Bad.json", "--yes"]],
    ("book", "updates"): [["book", "updates", "Alice/first"], ["book", "updates", "Alice/first", "--use-new", "Nope"],
                          ["book", "updates", "Alice/first", "--use-new", "Global"]],
    ("group", "export-st"): [["group", "export-st", "Party", "{out}/st-export"]],
}


def test_every_command_has_an_english_run():
    missing = [" ".join(c) for c in _leaf_commands() if c not in RUNS]
    assert not missing, f"give these commands a run in RUNS: {missing}"


def _fill(arg: str, world: World) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: str(getattr(world, m.group(1))), arg)


def _run(capsys, lang: str, argv: list[str]) -> tuple[int, str]:
    """``liyuan --lang LANG ARGV`` in this process (``card preview``, which starts an offscreen web view, in a fresh
    interpreter: one QtWebEngine per process): (exit code, stdout + stderr)."""
    if argv[:2] == ["card", "preview"]:
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
        r = subprocess.run([sys.executable, "-m", "liyuan_desktop", "--lang", lang, *argv], env=env,
                           capture_output=True, text=True, encoding="utf-8", timeout=300)
        return r.returncode, r.stdout + r.stderr
    try:
        code = cli.main(["--lang", lang, *argv])
    except SystemExit as e:  # argparse refusing an argument
        code = e.code if isinstance(e.code, int) else 2
    got = capsys.readouterr()
    return code, got.out + got.err


def _prose(text: str, world: World, argv: list[str]) -> str:
    """What of ``text`` must be English: paths under the test's folder taken out (module doc); for ``inspect``, only
    its frame (the ══/── lines: what was sent to the model is in the chat's language, not the command's)."""
    text = re.sub(re.escape(str(world.tmp)) + r"[^\s'\"]*", "<path>", text)
    if argv[0] == "inspect":
        text = "\n".join(ln for ln in text.splitlines() if ln.startswith(("══", "── ", "liyuan:")))
    return text


#: commands whose remaining Chinese comes from modules this test's author did not key yet (core/group): run, not
#: checked — remove an entry once its module speaks English
OTHERS: dict[tuple[str, ...], str] = {}


def _play(capsys, lang: str, world: World) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Run the setup and every command's runs; returns ({command line: [lines with CJK]}, {command line: output})."""
    bad: dict[str, list[str]] = {}
    said: dict[str, str] = {}

    def one(argv: list[str]) -> str:
        line = [_fill(a, world) for a in argv]
        code, text = _run(capsys, lang, line)
        assert "Traceback" not in text, f"{line}: {text}"
        assert code in (0, 1, 2), f"{line} -> {code}: {text}"
        said[" ".join(argv)] = text
        # no line is let through as chat content: the opening's stored label (「【开场 · 名字】」) is shown as a
        # title in the command's language (core/cards/st_chat.py opening_title)
        found = [ln for ln in _prose(text, world, line).splitlines() if CJK.search(ln)]
        if found and "--json" not in argv:  # JSON is for programs: its texts are checked where a test says so
            bad[" ".join(argv)] = found
        return text

    for argv in SETUP:
        text = one(argv)
        if argv[0] == "novel":
            world.novel = Path(text.splitlines()[0].strip())  # type: ignore[attr-defined]
            prose = world.novel / "chapters"  # type: ignore[attr-defined]  (an English novel: core/story/layout.py)
            prose.mkdir(exist_ok=True)
            (prose / "001-dawn.md").write_text("# Dawn\n\nThe ferry left at dawn. Nobody spoke.\n", "utf-8")
    for cmd in _leaf_commands():
        for argv in RUNS.get(cmd, []):
            one(argv)
    return bad, said


@pytest.fixture
def world(tmp_path):
    yield World(tmp_path)
    common._LANG.clear()


def _others(bad: dict[str, list[str]]) -> dict[str, list[str]]:
    return {k: bad.pop(k) for k in list(bad) if tuple(k.split()[:2]) in OTHERS}


def test_every_command_prints_english(capsys, world):
    bad, said = _play(capsys, "en", world)
    _others(bad)
    assert not bad, "\n".join(f"liyuan --lang en {k}:\n    " + "\n    ".join(v) for k, v in bad.items())
    # the import's report file is English too (report.md), as are the errors a user meets first
    home = Path(os.environ["LIYUAN_HOME"])  # first written in English: English folder names (core/paths.py)
    reports = list((home / "import-reports").glob("*/report.md"))
    assert len(reports) == 1 and "# Import from SillyTavern" in reports[0].read_text("utf-8")
    assert not CJK.search(_prose(reports[0].read_text("utf-8"), world, ["x"]))
    assert not [p for p in home.rglob("*") if CJK.search(p.relative_to(home).as_posix())], "a Chinese name in the data folder"
    assert "No model is configured" in said["chat Alice --chat third --say Hello."]
    assert "Cannot connect to the model server" in said["chat Alice --chat fifth --provider ollama --say Hello."]
    assert "Cannot connect to the model server" in said["models probe ollama"]
    assert "Lorebook entries: 2, 1 always on" in said["card inspect {card}"]
    # the import's JSON: the same field names, its human texts in English
    data = json.loads(said["import-sillytavern {st} --dry-run --json"])
    assert {"plan", "imported", "skipped", "failed"} <= set(data)
    assert {"what": "Themes", "count": 1, "why": "custom CSS and themes are not imported"} in data["plan"]["not_imported"]
    # a novel's book is exported under its own title and author (not the chat's name and the user label)
    assert (world.out / "book.md").read_text("utf-8").startswith("# Ferry Book\n\nby Test\n")


def test_every_command_still_runs_in_chinese(capsys, world):
    """The same runs with ``--lang zh``: nothing breaks, and the lines are Chinese."""
    _bad, said = _play(capsys, "zh", world)
    assert "# 从 SillyTavern 导入" in said["import-sillytavern {st}"]
    assert list((Path(os.environ["LIYUAN_HOME"]) / "导入记录").glob("*/报告.md"))
    assert "世界书：2 条，其中常驻 1 条" in said["card inspect {card}"]
    assert "没有配置模型" in said["chat Alice --chat third --say Hello."]
    assert "已导入预设「House」" in said["preset import {preset}"]


def test_a_command_group_without_its_subcommand_says_so_in_english(capsys, world):
    """``liyuan --lang en story`` (and every other group of subcommands, read from the parser): the usage it prints
    is English."""
    groups = sorted({c[:-1] for c in _leaf_commands() if len(c) > 1})
    assert ("story",) in groups and ("preset",) in groups
    bad = {}
    for g in groups:
        code, text = _run(capsys, "en", list(g))
        assert code == 2 and "Traceback" not in text, (g, text)
        if CJK.search(text):
            bad[" ".join(g)] = text
    assert not bad, bad


def test_real_cards_inspect_in_english(capsys, world):
    """The real cards in ../shared/fixtures/cards (Chinese cards with books, regex scripts, EJS and TavernHelper
    scripts): ``card inspect`` in English says everything in English but the card's own names (its name, and the
    entry and script names it quotes in “…”)."""
    folder = need_shared("fixtures", "cards")
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in (".png", ".json", ".charx"))
    assert files
    for f in files:
        code, text = _run(capsys, "en", ["card", "inspect", str(f)])
        assert code in (0, 2) and "Traceback" not in text, (f.name, text)
        lines = text.splitlines()
        if code == 0:
            lines[0] = lines[0].rsplit(" (", 1)[-1]  # "<card name> (V3 · PNG)"
        left = [ln for ln in lines if CJK.search(re.sub(r"“[^”]*”", "", ln))]
        assert not left, (f.name, left)
