"""Breaking group chats as a user would (z99break): a member whose card file is broken or gone, out-of-range
``--auto N``, hostile group names, broken SillyTavern group files. Real files, the real CLI, the replay model."""

from __future__ import annotations

import json
import shutil

from liyuan_desktop.cli import main as cli_main
from liyuan_desktop.core.cards.library import card_folder
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.group import Group, list_groups, save_group
from liyuan_desktop.core.group.model import group_dir
from liyuan_desktop.core.messages import message
from tests.test_group_chat import make_members, replay, speakers


def _party(tmp_path, **kw) -> Group:
    g = Group(name="Party", members=make_members(tmp_path), **kw)
    save_group(g)
    return g


async def test_a_member_whose_card_is_broken_is_passed_over_not_picked_then_failed(tmp_path):
    g = _party(tmp_path, strategy="list")
    (card_folder("Aster") / "card.json").write_text("{garbage", "utf-8")  # broken on disk after the group was made
    chat = Chat.create_group(group_dir(g.name) / "对话" / "b", g, replay(4), group_seed="s")
    for u in ["a", "b", "c", "d"]:
        await chat.send(u)
    assert speakers(chat) == ["Birch", "青梧", "Birch", "青梧"]


async def test_natural_and_pooled_pass_over_a_member_whose_card_is_gone(tmp_path):
    for strategy in ("natural", "pooled"):
        g = _party(tmp_path, strategy=strategy)
        shutil.rmtree(card_folder("Aster"))
        chat = Chat.create_group(group_dir(g.name) / "对话" / strategy, g, replay(6), group_seed="s")
        for u in ["Aster, hello.", "x", "y", "z", "w", "v"]:
            await chat.send(u)
        assert "Aster" not in speakers(chat) and len(speakers(chat)) >= 6


def test_cli_speaker_whose_card_is_gone_is_told_so_not_called_a_stranger(tmp_path, capsys):
    _party(tmp_path)
    shutil.rmtree(card_folder("Birch"))
    f = tmp_path / "replay.json"
    beats = [{"user": "Hi.", "actor": [{"tool_calls": []}], "scribe": ["{}"]}]
    f.write_text(json.dumps({"format": "liyuan-replay", "version": 1, "beats": beats}), "utf-8")
    assert cli_main(["--lang", "en", "chat", "--group", "Party", "--model", f"replay:{f}", "--say", "Hi.",
                     "--speaker", "Birch"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"liyuan: {message('group.member_missing', name='Birch').render('en')}"]


def _replay_file(tmp_path, n: int = 1):
    f = tmp_path / "replay.json"
    beats = [{"user": "Hi.", "actor": [{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0,
                                                                                             "content": "hey"}}]},
                                       {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}],
              "scribe": ["{}"]}] * n
    f.write_text(json.dumps({"format": "liyuan-replay", "version": 1, "beats": beats}), "utf-8")
    return f


def test_cli_auto_turns_out_of_range_are_refused_in_one_line_before_anything_is_written(tmp_path, capsys):
    _party(tmp_path, strategy="list")
    f = _replay_file(tmp_path)
    for lang in ("en", "zh"):
        for bad in ("0", "-1", "100000"):
            assert cli_main(["--lang", lang, "chat", "--group", "Party", "--model", f"replay:{f}", "--say", "Hi.",
                             "--chat", "c", "--auto", bad]) == 2, bad
            err = capsys.readouterr().err.strip().splitlines()
            assert err == [f"liyuan: {message('group.auto.bad_turns', n=bad, max=100).render(lang)}"], err
    assert not (group_dir("Party") / "对话" / "c").exists()  # nothing played, nothing written
    assert cli_main(["chat", "--group", "Party", "--model", f"replay:{f}", "--say", "Hi.", "--chat", "c",
                     "--auto", "100"]) in (0, 1)  # the ceiling itself is allowed (the replay runs out early)


def escaped(name: str) -> str:
    return "".join(c if c.isprintable() else "\\u%04x" % ord(c) for c in name)


def test_cli_group_names_that_are_blank_or_clash_with_a_saved_group_are_refused(tmp_path, capsys):
    make_members(tmp_path)
    assert cli_main(["group", "create", "Party", "--member", "Aster", "--member", "Birch"]) == 0
    before = (group_dir("Party") / "group.json").read_bytes()
    capsys.readouterr()
    for lang in ("en", "zh"):
        for name in ("", "   ", "...", " . ", "abc\u202edef", "tab\there", "\u200fx", "茶\u202e"):  # empty, controls, bidi
            assert cli_main(["--lang", lang, "group", "create", name, "--member", "Aster"]) == 2, name
            assert capsys.readouterr().err.strip().splitlines() == [
                f"liyuan: {message('group.cli.bad_name', name=escaped(name)).render(lang)}"]
        for name in ("party", "PARTY", "Party.", " Party "):  # the same folder on Windows/macOS, or after trimming
            assert cli_main(["--lang", lang, "group", "create", name, "--member", "Aster"]) == 2, name
            assert capsys.readouterr().err.strip().splitlines() == [
                f"liyuan: {message('group.cli.exists', name=name).render(lang)}"]
    assert [g.name for g in list_groups()] == ["Party"]
    assert (group_dir("Party") / "group.json").read_bytes() == before  # the saved group untouched
    for name in ("../x", "CON", "😀茶馆", "a" * 300):  # odd but usable: saved, shown, deleted by the same name
        assert cli_main(["group", "create", name, "--member", "Aster"]) == 0, name
        assert cli_main(["group", "show", name]) == 0
        assert cli_main(["group", "delete", name, "--yes"]) == 0
    assert [g.name for g in list_groups()] == ["Party"]


def test_cli_import_st_with_a_bad_file_says_what_is_wrong_in_the_chosen_language(tmp_path, capsys):
    bad = tmp_path / "broken.json"
    bad.write_text("{broken", "utf-8")
    arr = tmp_path / "list.json"
    arr.write_text("[1, 2]", "utf-8")
    png = tmp_path / "pic.json"
    png.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    cases = [(bad, message("group.st.bad_json", name="broken.json", line=1, col=2,
                           why="Expecting property name enclosed in double quotes")),
             (arr, message("group.st.not_group", name="list.json")),
             (png, message("group.st.not_group", name="pic.json")),
             (tmp_path / "gone.json", message("group.st.unreadable", name="gone.json",
                                              error="No such file or directory")),
             (tmp_path, message("group.st.unreadable", name=tmp_path.name, error="Is a directory"))]
    for lang in ("en", "zh"):
        for f, want in cases:
            assert cli_main(["--lang", lang, "group", "import-st", str(f)]) == 2, f
            assert capsys.readouterr().err.strip().splitlines() == [f"liyuan: {want.render(lang)}"]
    assert list_groups() == []


def test_cli_group_chat_by_group_and_chat_name_and_a_clear_line_for_none(tmp_path, capsys):
    _party(tmp_path, strategy="list")
    f = _replay_file(tmp_path, 3)
    assert cli_main(["chat", "--group", "Party", "--model", f"replay:{f}", "--say", "Hi.", "--chat", "tea"]) in (0, 1)
    capsys.readouterr()
    assert cli_main(["--lang", "en", "book", "updates", "Party/tea"]) == 0  # a group chat as group/chat
    assert capsys.readouterr().out.strip() == message("book_update.none").render("en")
    for lang in ("en", "zh"):
        assert cli_main(["--lang", lang, "book", "updates", "Party/nope"]) == 2
        assert capsys.readouterr().err.strip().splitlines() == [
            f"liyuan: {message('cli.chat_not_found', spec='Party/nope').render(lang)}"]


def test_cli_import_st_tells_the_lines_of_a_group_chat_it_skipped(tmp_path, capsys):
    make_members(tmp_path)
    root = tmp_path / "st"
    (root / "groups").mkdir(parents=True)
    (root / "group chats").mkdir()
    (root / "groups" / "1.json").write_text(json.dumps({"id": "1", "name": "Junk", "members": ["Aster.png",
                                                        "Birch.png"], "chats": ["c1"], "chat_id": "c1"}), "utf-8")
    lines = ['{"user_name":"You","character_name":"Aster"}', "garbage line", '{"name":"You","is_user":true,"mes":"hi"}',
             '{"name":"Aster","is_user":false,"mes":"Hello","original_avatar":"Aster.png"}', "[1,2"]
    (root / "group chats" / "c1.jsonl").write_text("\n".join(lines), "utf-8")
    assert cli_main(["--lang", "en", "group", "import-st", str(root / "groups" / "1.json")]) == 0
    err = capsys.readouterr().err
    assert "line 2 is not valid JSON; skipped" in err and "c1.jsonl" in err, err
    assert (group_dir("Junk") / "chats" / "c1" / "session.jsonl").is_file()  # a new data folder written in English (core/paths.py)


def test_cli_group_and_book_commands_say_a_file_error_in_one_line_in_the_chosen_language(tmp_path, capsys):
    _party(tmp_path)
    a_file = tmp_path / "plain.txt"
    a_file.write_text("x", "utf-8")
    (tmp_path / "home" / "世界书").mkdir(parents=True, exist_ok=True)
    (tmp_path / "home" / "世界书" / "lore.json").write_text('{"entries": {}}', "utf-8")
    for lang in ("en", "zh"):
        assert cli_main(["--lang", lang, "group", "export-st", "Party", str(a_file)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        want = message("cardfile.io", name=str(a_file / "groups"), error="Not a directory").render(lang)
        assert err == [f"liyuan: {want}"], err
        assert cli_main(["--lang", lang, "book", "update", "lore", str(tmp_path / "gone.json"), "--yes"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        want = message("cardfile.io", name=str(tmp_path / "gone.json"), error="No such file or directory").render(lang)
        assert err == [f"liyuan: {want}"], err
