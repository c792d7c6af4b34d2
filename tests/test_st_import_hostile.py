"""The SillyTavern import on hostile input (issue 29 §4–6): links out of the folder, JSON nested 100,000 deep, damaged
zips, zips written by ``ZipFile.writestr``, zip bombs of a small ratio, and huge (sparse) files — every bad file is
one line of the report, the rest imports, nothing is left in the temp folder, and nothing is read whole before its
size is checked. Real files, the real importer and the real CLI."""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from pathlib import Path

import pytest
from st_folder import _card, _world, build_st_folder

from liyuan_desktop.core.lore.books import library_books_dir
from liyuan_desktop.core.migrate import MigrationError, run, scan
from liyuan_desktop.core.paths import home

DEEP = "[" * 100_000 + "]" * 100_000


def _everything_under(root: Path) -> str:
    out = []
    for p in root.rglob("*"):
        if p.is_file() and not p.is_symlink():
            out.append(p.read_bytes().decode("utf-8", "replace"))
    return "\n".join(out)


@pytest.fixture
def temp_dir(tmp_path, monkeypatch):
    """The temp folder the zip is extracted into, watched: its own folder for this test."""
    d = tmp_path / "tmp"
    d.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return d


# -- §4 links out of the folder ----------------------------------------------------------------------------------


def test_links_out_of_the_folder_are_refused_and_listed(tmp_path, capsys):
    from liyuan_desktop.cli import main

    st = build_st_folder(tmp_path / "st")
    outside = tmp_path / "outside"
    (outside / "chats").mkdir(parents=True)
    (outside / "card.json").write_text(json.dumps(_card("外来客", "「从外面来」")), "utf-8")
    (outside / "book.json").write_text(json.dumps(_world(("秘密", "外面的秘密条目。"))), "utf-8")
    chat = (st / "chats" / "alice" / "第二局.jsonl").read_text("utf-8").replace("第二局开始。", "外面的聊天。")
    (outside / "chat.jsonl").write_text(chat, "utf-8")
    (outside / "chats" / "c.jsonl").write_text(chat, "utf-8")
    os.symlink(outside / "card.json", st / "characters" / "stranger.json")
    os.symlink(outside / "book.json", st / "worlds" / "秘密之书.json")
    os.symlink(outside / "chat.jsonl", st / "chats" / "alice" / "外面.jsonl")
    os.symlink(outside / "chats", st / "chats" / "bob-link")
    os.symlink(st / "worlds" / "额外之书.json", st / "worlds" / "同一本.json")  # a link that stays inside: fine

    assert main(["import-sillytavern", str(tmp_path / "st"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    problems = "\n".join(report["plan"]["problems"])
    for name in ("characters/stranger.json", "worlds/秘密之书.json", "chats/alice/外面.jsonl", "chats/bob-link"):
        assert name in problems
    assert problems.count("链接") == 4
    names = {(i["kind"], i["name"]) for i in report["plan"]["items"]}
    assert ("card", "stranger") not in names and ("book", "秘密之书") not in names and ("chat", "外面") not in names
    data = _everything_under(home())
    assert "外来客" not in data and "外面的秘密条目。" not in data and "外面的聊天。" not in data
    assert report["imported"]["card"] == 2 and report["imported"]["chat"] == 4
    assert (library_books_dir() / "同一本.json").is_file()


# -- §5 JSON nested 100,000 deep, damaged zips -------------------------------------------------------------------


def test_the_one_json_reader_bounds_depth_and_size(tmp_path):
    from liyuan_desktop.core.jsonfile import JsonTooDeep, loads, read_json_file, too_deep

    with pytest.raises(JsonTooDeep):
        loads(DEEP, "deep.json")
    assert too_deep("[" * 257 + "]" * 257) and not too_deep("[" * 256 + "]" * 256)
    assert not too_deep(json.dumps(["[" * 1000, {"a": "{" * 1000}]))  # brackets in strings do not count
    assert loads(b'\xef\xbb\xbf{"a": [1, {"b": 2}]}') == {"a": [1, {"b": 2}]}
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(2 * 1024 ** 3)  # sparse: costs no disk
    with pytest.raises(ValueError, match="2048.0 MB"):
        read_json_file(big, max_bytes=1024 ** 2)


def test_json_nested_100000_deep_is_one_line_each_and_the_rest_imports(tmp_path, capsys):
    from liyuan_desktop.cli import main

    st = build_st_folder(tmp_path / "st")
    (st / "worlds" / "深书.json").write_text('{"entries": ' + DEEP + "}", "utf-8")
    (st / "OpenAI Settings" / "深预设.json").write_text('{"prompts": ' + DEEP + "}", "utf-8")
    lines = (st / "chats" / "alice" / "第二局.jsonl").read_text("utf-8").splitlines()
    (st / "chats" / "alice" / "深头.jsonl").write_text(DEEP + "\n" + "\n".join(lines[1:]) + "\n", "utf-8")
    deep_line = json.dumps({"name": "阿梨", "is_user": False, "mes": "x", "extra": {"deep": "@"}}).replace('"@"', DEEP)
    (st / "chats" / "alice" / "深行.jsonl").write_text("\n".join(lines + [deep_line]) + "\n", "utf-8")
    assert main(["import-sillytavern", str(tmp_path / "st"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    items = {(i["kind"], i["name"]): i for i in report["plan"]["items"]}
    for key in (("book", "深书"), ("preset", "深预设"), ("chat", "深头")):
        assert items[key]["action"] == "error" and "嵌套" in items[key]["reason"], key
    assert items[("chat", "深行")]["action"] == "new" and "嵌套太深" in items[("chat", "深行")]["reason"]
    assert report["imported"]["card"] == 2 and report["imported"]["chat"] == 5 and report["imported"]["book"] == 4

    (st / "settings.json").write_text('{"username": ' + DEEP + "}", "utf-8")  # settings.json too
    plan = scan(st)
    item = plan.of("settings")[0]
    assert item.action == "error" and "嵌套" in item.reason
    plan.discard()


def _zip_of(folder: Path, out: Path, writestr: bool = False) -> Path:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                name = p.relative_to(folder).as_posix()
                if writestr:
                    z.writestr(name, p.read_bytes())  # mode 0o600 << 16: permission bits, no file type
                else:
                    z.write(p, name)
    return out


def test_a_zip_with_corrupt_deflate_data_loses_only_that_member(tmp_path, temp_dir):
    build_st_folder(tmp_path / "st")
    z = _zip_of(tmp_path / "st", tmp_path / "b.zip")
    with zipfile.ZipFile(z) as zf:
        info = zf.getinfo("data/default-user/worlds/阿梨的世界.json")
    raw = bytearray(z.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode("utf-8")) + len(info.extra)
    for k in range(start, start + info.compress_size):  # garbage instead of deflate data
        raw[k] = 0xFF
    z.write_bytes(bytes(raw))
    plan = scan(z)
    bad = [p for p in plan.problems if "阿梨的世界.json" in p]
    assert len(bad) == 1 and "损坏" in bad[0]
    report = run(plan)
    assert report.imported["card"] == 2 and report.imported["book"] == 3
    assert list(temp_dir.iterdir()) == []  # the extracted copy is removed


def test_a_failing_scan_leaves_no_temp_folder(tmp_path, temp_dir, monkeypatch):
    import importlib

    scan_module = importlib.import_module("liyuan_desktop.core.migrate.scan")
    build_st_folder(tmp_path / "st")
    z = _zip_of(tmp_path / "st", tmp_path / "b.zip")

    def boom(*a, **k):
        raise RecursionError("a bug in a reader")

    monkeypatch.setattr(scan_module, "_scan_presets", boom)
    with pytest.raises(RecursionError):
        scan(z)
    assert list(temp_dir.iterdir()) == []


def test_a_zip_written_with_writestr_is_imported(tmp_path, temp_dir):
    build_st_folder(tmp_path / "st")
    z = _zip_of(tmp_path / "st", tmp_path / "w.zip", writestr=True)
    with zipfile.ZipFile(z) as zf:
        assert all((i.external_attr >> 16) == 0o600 for i in zf.infolist())
    plan = scan(z)
    assert not plan.problems
    report = run(plan)
    assert report.imported["card"] == 2 and report.imported["chat"] == 4
    assert list(temp_dir.iterdir()) == []


# -- §6 resources ------------------------------------------------------------------------------------------------


def test_a_small_zip_bomb_is_stopped_by_its_ratio(tmp_path, temp_dir):
    z = tmp_path / "bomb.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("data/default-user/settings.json", "{}")
        with zf.open("data/default-user/chats/a/x.jsonl", "w") as out:
            block = b"\0" * (1 << 20)
            for _ in range(200):  # 200 MB of zeros: ~200 KB compressed
                out.write(block)
    assert z.stat().st_size < 1024 ** 2
    with pytest.raises(MigrationError, match="压缩炸弹"):
        scan(z)
    assert list(temp_dir.iterdir()) == []


def test_huge_files_are_refused_by_their_size_before_reading(tmp_path, capsys, monkeypatch):
    import builtins

    from liyuan_desktop.cli import main

    st = build_st_folder(tmp_path / "st")
    huge = {st / "characters" / "huge.png": "card", st / "worlds" / "huge.json": "book",
            st / "OpenAI Settings" / "huge.json": "preset", st / "chats" / "alice" / "huge.jsonl": "chat"}
    for p in huge:
        with open(p, "wb") as f:
            f.truncate(2 * 1024 ** 3)  # sparse: 2 GB on paper, nothing on disk
    real_open = builtins.open
    big_reads: list[str] = []

    def watch(file, mode="r", *a, **k):  # a 2 GB file must never be opened for reading
        if isinstance(file, (str, os.PathLike)) and Path(file).name.startswith("huge") and "r" in mode:
            big_reads.append(os.fspath(file))
        return real_open(file, mode, *a, **k)

    monkeypatch.setattr(builtins, "open", watch)
    assert main(["import-sillytavern", str(tmp_path / "st"), "--json"]) == 0
    monkeypatch.setattr(builtins, "open", real_open)
    report = json.loads(capsys.readouterr().out)
    items = {(i["kind"], i["name"]): i for i in report["plan"]["items"]}
    for kind in ("card", "book", "preset", "chat"):
        item = items[(kind, "huge")]
        assert item["action"] == "error" and "2048.0 MB" in item["reason"] and "上限" in item["reason"], kind
    assert big_reads == []
    assert report["imported"]["card"] == 2 and report["imported"]["chat"] == 4

    (st / "settings.json").unlink()
    with open(st / "settings.json", "wb") as f:
        f.truncate(2 * 1024 ** 3)
    plan = scan(st)
    assert plan.of("settings")[0].action == "error" and "2048.0 MB" in plan.of("settings")[0].reason
