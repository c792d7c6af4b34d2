"""Smoke test of the ``liyuan`` command as a user runs it (issue 15, start-up work): every subcommand's ``--help``,
then the cheap subcommands end to end on a scratch data folder, each in a fresh interpreter — the lazy imports of
the entry point and the engine (``cli/__init__``, ``core/lazy_exports``, ``core/deferred``) break exactly the paths
that a test running everything in one process never walks (a name imported in one function and used in another, a
module another one used to import first). Every run must exit with its documented code and print no traceback.

Also: a card whose library folder is not its name (``liyuan card rename``, or a second card of the same name that
became ``NAME-2``) keeps its chats in its own folder when ``import-chat`` / ``export-chat`` / ``chat`` name it."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

try:
    from helpers import DEMO_CARD, need_shared
    from loopback_routes import RouteServer
except ImportError:  # tests/ collected as a package
    from tests.helpers import DEMO_CARD, need_shared
    from tests.loopback_routes import RouteServer

ROOT = Path(__file__).resolve().parents[1]
BAD = ("Traceback (most recent call last)", "NameError", "ImportError", "AttributeError", "ModuleNotFoundError",
       "UnboundLocalError")


def run_cli(home: Path, *args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess:
    """``python -m liyuan_desktop ARGS`` in a fresh interpreter on the data folder ``home``; asserts the exit code is
    one of ``ok`` and that nothing on stdout/stderr looks like a Python error."""
    env = {**os.environ, "LIYUAN_HOME": str(home), "NO_PROXY": "*", "QT_QPA_PLATFORM": "offscreen"}
    env.pop("LIYUAN_LANG", None)
    r = subprocess.run([sys.executable, "-m", "liyuan_desktop", *args], cwd=str(ROOT), env=env, capture_output=True,
                       text=True, timeout=300)
    text = r.stdout + r.stderr
    assert r.returncode in ok, f"liyuan {' '.join(args)} -> {r.returncode}\n{text[-3000:]}"
    bad = [b for b in BAD if b in text]
    assert not bad, f"liyuan {' '.join(args)} printed {bad}:\n{text[-3000:]}"
    return r


def _leaf_commands() -> list[list[str]]:
    """Every subcommand path of the parser: ["chat"], ["card", "inspect"], … (read from the parser itself, so a
    group added later is covered without editing this test)."""
    from liyuan_desktop.cli import build_parser

    def walk(p: argparse.ArgumentParser, prefix: list[str]) -> list[list[str]]:
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            return [prefix]
        out = [prefix] if prefix else []
        for name, child in subs[0].choices.items():
            out += walk(child, prefix + [name])
        return out

    return walk(build_parser(), [])


def test_every_subcommand_help_runs(tmp_path):
    cmds = _leaf_commands()
    assert len(cmds) > 30 and ["story", "export"] in cmds and ["models", "probe"] in cmds
    for cmd in [[]] + cmds:
        r = run_cli(tmp_path / "home", *cmd, "--help")
        assert "usage: liyuan" in r.stdout, cmd


def _st_user_folder(root: Path) -> Path:
    """A small SillyTavern ``data/default-user/`` folder: a card, its chat, a world, a preset and settings."""
    user = root / "data" / "default-user"
    for sub in ("characters", "chats/青梧", "worlds", "OpenAI Settings"):
        (user / sub).mkdir(parents=True)
    (user / "characters" / "青梧.json").write_bytes(DEMO_CARD.read_bytes())
    (user / "chats" / "青梧" / "青梧 - 2024-5-1@12h00m00s.jsonl").write_text(_st_chat(), "utf-8")
    (user / "worlds" / "小镇.json").write_text(json.dumps({"entries": {"0": {
        "uid": 0, "key": ["渡口"], "content": "镇北有个渡口。", "comment": "渡口"}}}, ensure_ascii=False), "utf-8")
    (user / "OpenAI Settings" / "Mine.json").write_text(json.dumps({"temperature": 0.7, "prompts": [],
                                                                    "prompt_order": []}), "utf-8")
    (user / "settings.json").write_text(json.dumps({"username": "旅人", "world_info_settings": {
        "world_info_depth": 3}}, ensure_ascii=False), "utf-8")
    return user


def _st_chat() -> str:
    lines = [{"user_name": "旅人", "character_name": "青梧", "create_date": "2024-5-1@12h00m00s",
              "chat_metadata": {}},
             {"name": "青梧", "is_user": False, "send_date": "May 1, 2024 12:00pm", "mes": "客官打算住几天？"},
             {"name": "旅人", "is_user": True, "send_date": "May 1, 2024 12:01pm", "mes": "住三天，打听个人。"},
             {"name": "青梧", "is_user": False, "send_date": "May 1, 2024 12:02pm", "mes": "打听谁？",
              "swipes": ["打听谁？", "这镇子小，人好找。"], "swipe_id": 0}]
    return "\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n"


def test_cheap_subcommands_end_to_end(tmp_path):
    home = tmp_path / "home"
    # the terminal demos, in both languages
    run_cli(home, "chat", "--demo", "--delay-ms", "0", "--chat", "演示")
    r = run_cli(home, "--lang", "en", "chat", "--demo", "--delay-ms", "0", "--chat", "demo-en")
    assert "The demo is over" in r.stdout
    run_cli(home, "chat", "--demo-agent", "--delay-ms", "0")
    # the library and the chats
    assert "演示" in run_cli(home, "chats", "list").stdout
    assert "怀瑾" in run_cli(home, "search", "怀瑾", "--limit", "3").stdout
    json.loads(run_cli(home, "search", "怀.公子", "--regex", "--json").stdout)
    run_cli(home, "branches", "青梧/演示")
    json.loads(run_cli(home, "branches", "青梧/演示", "--json").stdout)
    run_cli(home, "branches", "青梧/演示", "--undo")
    run_cli(home, "inspect", "青梧/演示")
    run_cli(home, "memory", "青梧/演示", "油纸伞")
    run_cli(home, "chats", "duplicate", "青梧/演示", "--name", "副本")
    run_cli(home, "chats", "rename", "青梧/副本", "副本2")
    run_cli(home, "chats", "delete", "青梧/副本2")
    assert "副本2" in run_cli(home, "chats", "trash").stdout
    run_cli(home, "chats", "restore", "副本2")
    # agent mode: the chapters, checkpoints and the book in three formats
    run_cli(home, "story", "outline", "青梧/局C")
    run_cli(home, "story", "threads", "青梧/局C")
    run_cli(home, "story", "codex", "青梧/局C")
    run_cli(home, "story", "progress", "青梧/局C")
    first_checkpoint = run_cli(home, "story", "checkpoints", "青梧/局C").stdout.strip().splitlines()[-1].split()[0]
    run_cli(home, "story", "restore", "青梧/局C", first_checkpoint)
    for fmt in ("md", "epub", "docx"):
        out = tmp_path / f"book.{fmt}"
        run_cli(home, "story", "export", "青梧/局C", "--format", fmt, "-o", str(out))
        assert out.stat().st_size > 200
        if fmt != "md":
            assert zipfile.ZipFile(out).testzip() is None
    # SillyTavern chats in and out, a whole SillyTavern folder, presets and settings
    st = tmp_path / "st.jsonl"
    st.write_text(_st_chat(), "utf-8")
    run_cli(home, "import-chat", str(st), "--card", "青梧", "--chat", "导入")
    run_cli(home, "export-chat", "--card", "青梧", "--chat", "导入", str(tmp_path / "out.jsonl"))
    assert (tmp_path / "out.jsonl").read_text("utf-8").count("\n") >= 3
    user = _st_user_folder(tmp_path / "SillyTavern")
    run_cli(home, "import-sillytavern", str(tmp_path / "SillyTavern"), "--dry-run")
    json.loads(run_cli(home, "import-sillytavern", str(user), "--json").stdout)
    run_cli(home, "preset", "list")
    run_cli(home, "preset", "default")
    run_cli(home, "settings", "show")
    run_cli(home, "settings", "import-st", str(user / "settings.json"))
    # cards: inspect, export, rename, and a wrong kind of file (exit 2, no traceback)
    run_cli(home, "card", "inspect", str(DEMO_CARD))
    run_cli(home, "card", "export", "青梧", "--format", "json", "-o", str(tmp_path / "qw.json"))
    run_cli(home, "card", "export", "青梧", "-o", str(tmp_path / "qw.png"))
    run_cli(home, "card", "inspect", str(tmp_path / "out.jsonl"), ok=(2,))
    # a model server on loopback: its model list
    with RouteServer({("GET", "/v1/models"): (200, {"data": [{"id": "tiny-1"}, {"id": "tiny-2"}]})}) as srv:
        from liyuan_desktop.core.llm import ProviderSettings
        from liyuan_desktop.core.settings import load_settings, save_settings

        os.environ["LIYUAN_HOME"], old = str(home), os.environ.get("LIYUAN_HOME")
        try:
            s = load_settings()
            s.providers.append(ProviderSettings(name="loop", base_url=srv.base_url, model="tiny-1"))
            save_settings(s)
        finally:
            if old is None:
                os.environ.pop("LIYUAN_HOME")
            else:
                os.environ["LIYUAN_HOME"] = old
        assert "tiny-2" in run_cli(home, "models", "list", "loop").stdout


def test_fixture_cards_import_and_inspect(tmp_path):
    cards = need_shared("fixtures", "cards")
    home = tmp_path / "home"
    files = sorted(p for p in cards.iterdir() if p.suffix in (".png", ".json"))
    assert files
    for f in files:
        run_cli(home, "card", "inspect", str(f))
        run_cli(home, "card", "import", str(f))
    book = cards / "formats" / "Eldoria.json"
    if book.exists():  # a world book given as a card: said so, exit 2
        run_cli(home, "card", "inspect", str(book), ok=(2,))


def test_chats_of_a_card_whose_folder_is_not_its_name_stay_in_its_folder(tmp_path):
    """`card rename` and a second card of the same name (NAME-2) give a library folder whose name is not the card's;
    import-chat / export-chat / chat named by that folder used to write into cards/<card name>/ — another card's
    folder, or a folder with no card that no list shows."""
    home = tmp_path / "home"
    st = tmp_path / "st.jsonl"
    st.write_text(_st_chat(), "utf-8")
    first = Path(run_cli(home, "card", "import", str(DEMO_CARD)).stdout.strip())
    other = json.loads(DEMO_CARD.read_text("utf-8"))
    other["data"]["description"] = "另一张同名的卡。"
    (tmp_path / "other.json").write_text(json.dumps(other, ensure_ascii=False), "utf-8")
    second = Path(run_cli(home, "card", "import", str(tmp_path / "other.json")).stdout.strip())
    assert second != first and second.name.startswith(first.name)
    d = Path(run_cli(home, "import-chat", str(st), "--card", second.name, "--chat", "二号").stdout.strip())
    assert d.parent.parent == second, d
    run_cli(home, "export-chat", "--card", second.name, "--chat", "二号", str(tmp_path / "two.jsonl"))
    run_cli(home, "card", "rename", second.name, "改名卡")
    d = Path(run_cli(home, "import-chat", str(st), "--card", "改名卡", "--chat", "三号").stdout.strip())
    assert d.parent.parent.name == "改名卡", d
    replay = ROOT / "cards" / "青梧" / "replay.json"  # the demo's recorded game, played on the renamed card
    run_cli(home, "chat", "改名卡", "--chat", "四号", "--model", f"replay:{replay}", "--say", "住三天。", "--auto",
            ok=(0, 1))
    assert (home / "cards" / "改名卡" / "对话" / "四号" / "session.jsonl").exists()
    for name in ("二号", "三号", "四号"):
        assert not (home / "cards" / first.name / "对话" / name).exists()
    listing = run_cli(home, "chats", "list").stdout
    assert "二号" in listing and "三号" in listing
