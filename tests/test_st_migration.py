"""One-step migration from SillyTavern (issue 16 §3): core.migrate scan/run and ``liyuan import-sillytavern``.

The SillyTavern folder is built from literal JSON (tests/st_folder.py), so these run without ../shared; one test
also builds one from the real fixtures (skipped without them)."""

from __future__ import annotations

import builtins
import io
import json
import os
import shutil
import sys
import threading
import zipfile
from pathlib import Path

import pytest
from helpers import need_shared
from st_folder import build_st_folder

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.cards.meta import card_scripts_allowed
from liyuan_desktop.core.cards.personas import load_personas
from liyuan_desktop.core.chat import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.lore.books import global_books_dir, library_books_dir
from liyuan_desktop.core.migrate import MigrationError, run, scan
from liyuan_desktop.core.paths import home
from liyuan_desktop.core.prompt.presets.store import list_presets, presets_dir
from liyuan_desktop.core.settings import load_settings


@pytest.fixture
def no_secrets(monkeypatch):
    """Call it to arm: from then on any attempt to open a file called secrets.json fails the test (builtins/io/os
    open are watched)."""
    opened: list[str] = []

    def guard(real):
        def wrapper(file, *a, **k):
            if isinstance(file, (str, os.PathLike)) and os.path.basename(os.fspath(file)) == "secrets.json":
                opened.append(os.fspath(file))
                raise AssertionError("secrets.json was opened")
            return real(file, *a, **k)
        return wrapper

    def arm() -> None:
        monkeypatch.setattr(builtins, "open", guard(builtins.open))
        monkeypatch.setattr(io, "open", guard(io.open))
        monkeypatch.setattr(os, "open", guard(os.open))

    yield arm
    assert not opened


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _card(name: str):
    return load_card(home() / "cards" / name / "card.json")


def _open(card: str, chat: str) -> Chat:
    return Chat.open(home() / "cards" / card / "对话" / chat, _card(card), ReplayModel(actor=[]))


def test_every_kind_is_imported_and_plays_as_in_sillytavern(tmp_path, no_secrets):
    st = build_st_folder(tmp_path / "st")
    no_secrets()
    plan = scan(tmp_path / "st")  # a SillyTavern root: data/default-user is found
    assert Path(plan.root) == st and plan.layout == "data/default-user"
    counts = plan.counts()
    assert counts["card"] == {"new": 2, "error": 1}
    assert counts["chat"] == {"new": 4, "error": 3, "skip": 1}  # 不是聊天, 空的 and 乱码 known damaged before importing
    assert counts["book"] == {"new": 4, "error": 1} and counts["preset"] == {"new": 2}
    assert counts["persona"] == {"new": 2} and counts["avatar"] == {"new": 2}
    missing = {n.what.split("（")[0]: n.count for n in plan.not_imported}
    assert missing["群聊记录"] == 1 and missing["快速回复"] == 2 and missing["扩展"] == 1 and missing["secrets.json"] == 1

    seen: list[tuple[int, int]] = []
    report = run(plan, lambda done, total, label: seen.append((done, total)))
    assert not report.cancelled and seen[-1][0] == seen[-1][1]
    assert report.imported == {"settings": 1, "book": 4, "preset": 2, "card": 2, "chat": 4, "persona": 2, "avatar": 2}
    assert report.failed == {"book": 1, "card": 1, "chat": 3, "group": 1}  # groups/g1.json is "{}": not a group
    # damaged inputs are named per item
    by_name = {(i.kind, i.name): i for i in report.plan.items}
    assert "截断" in by_name[("card", "broken")].reason or "PNG" in by_name[("card", "broken")].reason
    assert "不完整" in by_name[("chat", "断了")].reason and by_name[("chat", "断了")].action == "new"
    assert by_name[("chat", "x")].action == "skip" and by_name[("book", "坏书")].action == "error"
    # the report is saved beside the data, Markdown and JSON
    rd = Path(report.report_dir)
    assert rd.parent == home() / "导入记录"
    assert "secrets.json" in (rd / "报告.md").read_text("utf-8")
    assert json.loads((rd / "report.json").read_text("utf-8"))["imported"]["chat"] == 4

    # chats open with their swipes and their bar variables
    chat = _open("阿梨", "第一局")
    items = chat.transcript()
    assert [i["role"] for i in items] == ["opening", "user", "assistant", "user", "assistant"]
    assert items[2]["swipe"] == [3, 3] and items[0]["swipe"] == [1, 2]
    assert items[2]["variables"]["stat_data"]["好感"] == 30
    assert chat.current_mvu().stat_data["好感"] == 31
    chat.swipe(items[2]["id"], -1)
    assert chat.transcript()[2]["variables"]["stat_data"]["好感"] == 20
    bob = _open("阿柏", "柏的一局").transcript()
    assert bob[0]["swipe"] == [2, 2] and bob[0]["variables"]["stat_data"]["好感"] == 6

    # world books: the global one is global, the others in the library; links kept
    assert (global_books_dir() / "全局之书.json").is_file()
    assert {p.stem for p in library_books_dir().glob("*.json")} == {"阿梨的世界", "额外之书", "聊天之书"}
    assert _card("阿梨").extensions["world"] == "阿梨的世界"
    contents = {e.content for e in chat.context.book.entries}
    assert {"梨园是阿梨长大的地方。", "渡口在镇子东边。", "第一局里灯笼是红的。", "天下分九州。"} <= contents
    second = {e.content for e in _open("阿梨", "第二局").context.book.entries}
    assert "渡口在镇子东边。" in second and "第一局里灯笼是红的。" not in second  # only 第一局 had that chat book
    assert "阿柏的剑叫长风。" in {e.content for e in _open("阿柏", "柏的一局").context.book.entries}  # charLore

    # presets, personas, settings
    assert set(list_presets()) >= {"梨园预设", "备用预设"}
    assert "proxy_password" not in (presets_dir() / "梨园预设.json").read_text("utf-8")
    store = load_personas()
    assert {p.name for p in store.personas} == {"旅人", "侠客"} and store.default_persona.name == "侠客"
    assert store.for_chat(home() / "cards" / "阿梨" / "对话" / "第一局").name == "侠客"  # the chat's locked persona
    assert (home() / "人设头像" / "user2.png").read_bytes().endswith(b"avatar-two")
    s = load_settings()
    assert s.default_preset == "梨园预设" and s.persona_name == "旅人"
    assert s.world_info.world_info_depth == 4 and s.world_info.world_info_budget == 40
    # SillyTavern's connection is added as a provider but never made the current one (issue 24 §4)
    prov = next(p for p in s.providers if p.name == "sillytavern")
    assert (prov.base_url, prov.model) == ("http://127.0.0.1:5001/v1", "my-local-model")
    assert s.active_provider is None and report.provider == "sillytavern"
    # regex scripts allowed in SillyTavern for bob.png only: the same switch here
    assert card_scripts_allowed(home() / "cards" / "阿柏") and not card_scripts_allowed(home() / "cards" / "阿梨")
    assert missing["全局正则脚本"] == 1
    assert "sk-never-read" not in json.dumps(_snapshot(home()), default=lambda b: b.decode("utf-8", "replace"))


def test_second_run_imports_nothing_new(tmp_path):
    build_st_folder(tmp_path / "st")
    run(scan(tmp_path / "st"))
    before = _snapshot(home() / "cards")
    plan = scan(tmp_path / "st")
    assert plan.to_import() == 0  # settings.json too: it would change nothing
    report = run(plan)
    assert report.imported == {} and report.skipped["chat"] == 4 and report.skipped["card"] == 2
    assert report.skipped["settings"] == 1
    assert report.skipped["book"] == 4 and report.skipped["preset"] == 2 and report.skipped["persona"] == 2
    assert _snapshot(home() / "cards") == before
    assert len(load_personas().personas) == 2 and len(load_settings().providers) == 1


def test_conflicts_are_renamed_never_overwritten(tmp_path):
    """Every kind that meets a different item of its name gets the library's one rule, 「名字-2」 — books and
    presets as the card importer names a card (cards.library.numbered_name)."""
    build_st_folder(tmp_path / "st")
    library_books_dir().mkdir(parents=True)
    (library_books_dir() / "阿梨的世界.json").write_text('{"entries": {}}', "utf-8")
    presets_dir().joinpath("梨园预设.json").write_text('{"temperature": 0.1, "prompts": []}', "utf-8")
    report = run(scan(tmp_path / "st"))
    assert (library_books_dir() / "阿梨的世界.json").read_text("utf-8") == '{"entries": {}}'
    assert (library_books_dir() / "阿梨的世界-2.json").is_file()
    assert presets_dir().joinpath("梨园预设.json").read_text("utf-8") == '{"temperature": 0.1, "prompts": []}'
    assert presets_dir().joinpath("梨园预设-2.json").is_file()
    assert load_settings().default_preset == "梨园预设-2"  # the default follows the renamed preset
    renamed = {i.name: i.target for i in report.plan.items if i.action == "rename"}
    assert renamed == {"阿梨的世界": "阿梨的世界-2", "梨园预设": "梨园预设-2"}
    # the link follows the rename: the chat reads the imported book, not the one that was here
    assert "渡口在镇子东边。" in {e.content for e in _open("阿梨", "第一局").context.book.entries}


def test_cancel_leaves_nothing(tmp_path):
    build_st_folder(tmp_path / "st")
    run(scan(tmp_path / "st"))  # something already there that must stay as it is
    build_st_folder(tmp_path / "st2")
    (tmp_path / "st2/data/default-user/worlds/阿梨的世界.json").write_text('{"entries": {"0": {"key": ["x"], "content": "变了"}}}', "utf-8")
    shutil.copy(tmp_path / "st2/data/default-user/chats/alice/第二局.jsonl", tmp_path / "st2/data/default-user/chats/alice/第三局.jsonl")
    with open(tmp_path / "st2/data/default-user/chats/alice/第三局.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps({"name": "阿梨", "is_user": False, "mes": "多一句"}, ensure_ascii=False) + "\n")
    before = _snapshot(home())
    plan = scan(tmp_path / "st2")
    assert plan.to_import() == 2  # the changed book and the new chat
    stop = threading.Event()
    calls = []

    def progress(done, total, label):
        calls.append(label)
        if label.startswith("聊天记录"):  # the book is written by now, the chat is being written
            stop.set()

    report = run(plan, progress, stop)
    assert report.cancelled and report.report_dir == ""
    assert any(c.startswith("世界书") for c in calls)
    assert _snapshot(home()) == before
    assert plan.temp_dir is None


def _zip_of(folder: Path, out: Path, extra: dict[str, bytes] | None = None, symlink: bool = False) -> Path:
    with zipfile.ZipFile(out, "w") as z:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                z.write(p, p.relative_to(folder).as_posix())
        for name, data in (extra or {}).items():
            z.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo("default-user/worlds/link.json")
            info.external_attr = (0o120777 << 16)
            z.writestr(info, "/etc/passwd")
    return out


def test_backup_zip_imports_and_hostile_members_are_refused(tmp_path):
    build_st_folder(tmp_path / "st")
    z = _zip_of(tmp_path / "st" / "data", tmp_path / "backup.zip",
                {"../evil.txt": b"escaped", "default-user/../../evil2.txt": b"escaped", "/abs-evil.txt": b"abs"},
                symlink=True)
    plan = scan(z)
    assert plan.layout == "data/default-user" and Path(plan.temp_dir).is_dir()
    refused = [p for p in plan.problems if "没有解压" in p]
    assert len(refused) == 4
    assert not (tmp_path / "evil.txt").exists() and not Path("/abs-evil.txt").exists()
    assert not list(Path(plan.temp_dir).parent.glob("evil*.txt"))
    temp = Path(plan.temp_dir)
    report = run(plan)
    assert report.imported["card"] == 2 and report.imported["chat"] == 4
    assert not temp.exists()  # the extracted copy is removed


def test_zip_bomb_and_non_zip_are_refused(tmp_path, monkeypatch):
    from liyuan_desktop.core.migrate import source

    (tmp_path / "x.zip").write_bytes(b"not a zip")
    with pytest.raises(MigrationError, match="zip"):
        scan(tmp_path / "x.zip")
    build_st_folder(tmp_path / "st")
    z = _zip_of(tmp_path / "st", tmp_path / "b.zip")
    monkeypatch.setattr(source, "MAX_TOTAL_BYTES", 1000)
    before = set(Path(os.environ.get("TMPDIR", "/tmp")).glob("liyuan-st-*"))
    with pytest.raises(MigrationError, match="上限"):
        scan(z)
    assert set(Path(os.environ.get("TMPDIR", "/tmp")).glob("liyuan-st-*")) == before  # nothing left behind


def test_old_public_layout_and_user_folder(tmp_path):
    st = build_st_folder(tmp_path / "new")
    old = tmp_path / "old" / "public"
    shutil.copytree(st, old)
    plan = scan(tmp_path / "old")
    assert plan.layout == "public" and plan.counts()["card"]["new"] == 2
    plan.discard()
    plan = scan(st)  # the user folder itself
    assert plan.layout == "user folder" and plan.counts()["chat"]["new"] == 4


def test_unreadable_settings_is_reported_and_the_rest_imports(tmp_path):
    st = build_st_folder(tmp_path / "st")
    (st / "settings.json").write_text('{"username": "旅', "utf-8")
    report = run(scan(st))
    item = next(i for i in report.plan.items if i.kind == "settings")
    assert item.action == "error" and "settings.json" in item.reason
    assert report.imported["card"] == 2 and report.imported["chat"] == 4 and report.imported["book"] == 4
    assert load_settings().default_preset is None


def test_not_sillytavern_data(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(MigrationError, match="SillyTavern"):
        scan(tmp_path / "empty")
    with pytest.raises(MigrationError):
        scan(tmp_path / "missing")


def test_dry_run_writes_nothing(tmp_path):
    build_st_folder(tmp_path / "st")
    before = _snapshot(home())
    report = run(scan(tmp_path / "st"), dry_run=True)
    assert report.dry_run and report.imported["chat"] == 4
    assert _snapshot(home()) == before


def test_cli_json_and_second_run(tmp_path, capsys):
    from liyuan_desktop.cli import main

    build_st_folder(tmp_path / "st")
    assert main(["import-sillytavern", str(tmp_path / "st"), "--json"]) == 0
    cap = capsys.readouterr()
    first = json.loads(cap.out)
    assert first["imported"]["card"] == 2 and first["imported"]["chat"] == 4 and first["imported"]["book"] == 4
    assert "导入" in cap.err and "%" in cap.err
    assert set(first["imported"]) == {"card", "chat", "book", "preset", "persona", "avatar", "settings"}
    items = _open("阿梨", "第一局").transcript()  # the chats open with their swipes and bar variables
    assert items[2]["swipe"] == [3, 3] and items[2]["variables"]["stat_data"]["好感"] == 30
    assert main(["import-sillytavern", str(tmp_path / "st"), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["imported"] == {} and again["skipped"]["chat"] == 4
    assert main(["import-sillytavern", str(tmp_path / "st")]) == 0
    text = capsys.readouterr().out
    assert "角色卡" in text and "secrets.json" in text and "报告已保存" in text
    assert main(["import-sillytavern", str(tmp_path / "nothing")]) == 2


def test_real_fixture_cards_books_and_preset(tmp_path):
    fx = need_shared("fixtures", "cards")
    st = tmp_path / "data" / "default-user"
    for sub in ("characters", "worlds", "OpenAI Settings", "chats"):
        (st / sub).mkdir(parents=True)
    for name in ("default_Seraphina.png", "Skynet_v2.png", "青空 理.png", "角色卡_修女与女忍的双面日常.json"):
        shutil.copy(fx / name, st / "characters" / name)
    shutil.copy(fx / "formats" / "Eldoria.json", st / "worlds" / "Eldoria.json")
    shutil.copy(fx / "formats" / "openai-preset-Default.json", st / "OpenAI Settings" / "Default.json")
    (st / "chats" / "default_Seraphina").mkdir()
    lines = [{"user_name": "User", "character_name": "Seraphina", "chat_metadata": {"world_info": "Eldoria"}},
             {"name": "Seraphina", "is_user": False, "mes": "Hello", "swipes": ["Hello", "Hi"], "swipe_id": 1},
             {"name": "User", "is_user": True, "mes": "Hi there"}]
    (st / "chats" / "default_Seraphina" / "chat.jsonl").write_text(
        "\n".join(json.dumps(x) for x in lines) + "\n", "utf-8")
    report = run(scan(tmp_path))
    assert report.imported == {"book": 1, "preset": 1, "card": 4, "chat": 1}
    card_name = next(i.target for i in report.plan.items if i.kind == "card" and i.owner == "default_Seraphina")
    chat = Chat.open(home() / "cards" / card_name / "对话" / "chat", _card(card_name), ReplayModel(actor=[]))
    assert chat.transcript()[0]["swipe"] == [2, 2]
    eldoria = json.loads((fx / "formats" / "Eldoria.json").read_text("utf-8"))
    # Seraphina links Eldoria (extensions.world) and carries it embedded (SillyTavern embeds the linked book when
    # it saves a card): the chat reads its entries once, from the card, and no copy is attached
    assert _card(card_name).extensions["world"] == "Eldoria"
    assert not (home() / "cards" / card_name / "对话" / "chat" / "世界书").exists()
    contents = [e.content for e in chat.context.book.entries]
    assert all(contents.count(e["content"]) == 1 for e in eldoria["entries"].values())
    assert run(scan(tmp_path)).imported == {}


def _long_chats(st: Path, n: int, size: int = 4000) -> None:
    lines = (st / "chats/alice/第二局.jsonl").read_text("utf-8").splitlines()
    body = [lines[0]] + [json.dumps({"name": "阿梨", "is_user": j % 2 == 0, "mes": f"第{j}句" * 30,
                                     "swipes": [f"甲{j}", f"乙{j}"], "swipe_id": 0}, ensure_ascii=False)
                         for j in range(size)]
    for k in range(n):  # enough work that a signal arrives mid-import; each file different
        (st / "chats/alice" / f"长局{k}.jsonl").write_text("\n".join(body) + f"\n{json.dumps({'name': '阿梨', 'mes': k})}\n", "utf-8")


def _cli(st: Path):
    import subprocess

    env = {**os.environ, "LIYUAN_HOME": str(home())}
    return subprocess.Popen([sys.executable, "-m", "liyuan_desktop.cli", "import-sillytavern", str(st)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)


def test_a_killed_import_is_resumed_without_duplicates(tmp_path):
    """SIGKILL in the middle (no clean-up possible): what was finished stays whole, and the next run imports only
    the rest — no 「名字-2」 copies of chats the killed run had finished."""
    import signal

    st = build_st_folder(tmp_path / "st")
    _long_chats(st, 20, 1500)
    proc = _cli(st)
    done = 0
    for line in proc.stderr:
        done += "聊天记录「长局" in line
        if done >= 3:  # a few long chats are finished
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    chats = home() / "cards" / "阿梨" / "对话"
    finished = {d.name for d in chats.iterdir() if (d / "session.jsonl").is_file() and not d.name.startswith(".")}
    assert finished and len(finished) < 23  # 20 long + 第一局 第二局 断了
    report = run(scan(st))
    assert report.imported["chat"] == 24 - len(finished) and report.skipped["chat"] == len(finished)  # + bob's
    names = {d.name for d in chats.iterdir() if not d.name.startswith(".")}
    assert not any(n.endswith(")") for n in names) and len(names) == 23


def test_ctrl_c_cancels_the_cli_cleanly(tmp_path):
    """A real SIGINT to a running ``liyuan import-sillytavern``: exit 130, nothing of the import left behind."""
    import signal
    import time

    st = build_st_folder(tmp_path / "st")
    _long_chats(st, 40)
    before = _snapshot(home())
    proc = _cli(st)
    deadline = time.monotonic() + 120
    seen = ""
    while time.monotonic() < deadline:  # wait until a chat is being imported
        line = proc.stderr.readline()
        seen += line
        if "聊天记录" in line or not line:
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (seen, err[-500:])
    assert "已取消" in err
    assert _snapshot(home()) == before


def test_credentials_in_the_api_url_are_never_shown_or_saved(tmp_path, capsys):
    from liyuan_desktop.cli import main

    st = build_st_folder(tmp_path / "st")
    data = json.loads((st / "settings.json").read_text("utf-8"))
    data["oai_settings"]["custom_url"] = "https://alice:s3cretpass@proxy.example/v1"
    (st / "settings.json").write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    assert main(["import-sillytavern", str(tmp_path / "st")]) == 0
    shown = capsys.readouterr().out
    assert "s3cretpass" not in shown and "proxy.example" in shown
    saved = [p.read_text("utf-8") for p in (home() / "导入记录").rglob("*") if p.is_file()]
    assert saved and not any("s3cretpass" in t for t in saved)
    prov = next(p for p in load_settings().providers if p.name == "sillytavern")
    assert prov.base_url == "https://alice:s3cretpass@proxy.example/v1"  # the connection itself still works


# -- issue 24 §4: what the import lost silently -------------------------------------------------------------------


def test_global_books_and_char_lore_are_read_where_sillytavern_saves_them(tmp_path):
    """SillyTavern 1.12–1.13 keep the global selection and charLore in world_info_settings.world_info."""
    st = build_st_folder(tmp_path / "st")
    assert "world_info" not in json.loads((st / "settings.json").read_text("utf-8"))  # not at the top level
    plan = scan(st)
    books = {i.name: i for i in plan.of("book")}
    assert books["全局之书"].detail["global"] and not books["额外之书"].detail["global"]
    bob = next(i for i in plan.of("card") if i.owner == "bob")
    assert bob.links == ["额外之书"]
    run(plan)
    assert (global_books_dir() / "全局之书.json").is_file() and not (library_books_dir() / "全局之书.json").exists()


def test_the_authors_note_comes_with_the_chat_and_is_listed(tmp_path, capsys):
    from liyuan_desktop.cli import main
    from liyuan_desktop.core.prompt.authors_note import AuthorsNote

    st = build_st_folder(tmp_path / "st")
    assert main(["import-sillytavern", str(tmp_path / "st"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "聊天记录「第一局」带上作者注" in out  # listed in the plan
    assert main(["import-sillytavern", str(tmp_path / "st")]) == 0
    assert "作者注" in capsys.readouterr().out  # and in the report
    want = AuthorsNote(text="{{char}}说话要简短。", position="chat", depth=2, role="user", interval=3)
    assert _open("阿梨", "第一局").authors_note() == want
    assert _open("阿梨", "第二局").authors_note() == AuthorsNote()  # no note there
    # liyuan import-chat: the same note
    assert main(["import-chat", str(st / "chats" / "alice" / "第一局.jsonl"), "--card",
                 str(st / "characters" / "alice.json"), "--chat", "单独导入"]) == 0
    capsys.readouterr()
    session = next(p for p in home().rglob("session.jsonl") if p.parent.name == "单独导入")
    chat = Chat.open(session.parent, load_card(st / "characters" / "alice.json"), ReplayModel(actor=[]))
    assert chat.authors_note() == want


def test_the_current_provider_stays_and_the_report_says_so(tmp_path, capsys):
    from liyuan_desktop.cli import main
    from liyuan_desktop.core.llm.providers import ProviderSettings
    from liyuan_desktop.core.settings import save_settings

    s = load_settings()
    s.providers.append(ProviderSettings(name="mine", base_url="http://127.0.0.1:9/v1", model="my-model"))
    s.active_provider = "mine"
    save_settings(s)
    build_st_folder(tmp_path / "st")
    assert main(["import-sillytavern", str(tmp_path / "st")]) == 0
    out = capsys.readouterr().out
    s = load_settings()
    assert s.active_provider == "mine"
    assert [p.name for p in s.providers] == ["mine", "sillytavern"]
    assert "没有设为当前连接" in out


def test_dry_run_knows_empty_and_broken_chats(tmp_path, capsys):
    from liyuan_desktop.cli import main

    build_st_folder(tmp_path / "st")
    before = _snapshot(home())
    assert main(["import-sillytavern", str(tmp_path / "st"), "--dry-run", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["imported"]["chat"] == 4 and report["failed"]["chat"] == 3
    by_name = {i["name"]: i for i in report["plan"]["items"] if i["kind"] == "chat"}
    assert by_name["空的"]["action"] == "error" and "空" in by_name["空的"]["reason"]
    assert by_name["乱码"]["action"] == "error" and "JSON" in by_name["乱码"]["reason"]
    assert by_name["断了"]["action"] == "new" and "不完整" in by_name["断了"]["reason"]  # imported, minus its torn line
    assert _snapshot(home()) == before
    real = run(scan(tmp_path / "st"))  # the dry run said what the real run does
    assert real.imported["chat"] == report["imported"]["chat"] and real.failed["chat"] == report["failed"]["chat"]


def test_readme_names_the_menu_where_it_is():
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text("utf-8")
    assert "文件 → 从 SillyTavern 导入" not in readme and "梨园 → 从 SillyTavern 导入" in readme
