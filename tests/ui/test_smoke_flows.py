"""Smoke test of the window's commands, each in a FRESH interpreter started the way ``liyuan`` starts (issue 15,
start-up work). The window now shows before the engine's chat is imported and imports it where a chat is opened or
created (``ui/warm.ensure_engine``); engine packages re-export lazily. Inside one pytest process every module is
long imported, so a command that relies on a name another command imported first passes there and fails for a user
whose first act after start is that command. Here each flow starts the real app (``app.main``), runs one user
command as its first act, and must leave no traceback in the log, no uncaught exception and no error box.

Run as a child: ``python test_smoke_flows.py FLOW RESULT.json`` (the test does this)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO_CARD = ROOT / "cards" / "青梧" / "default_Qingwu.json"
FLOWS = ("new_chat", "import_card", "open_from_list", "import_st_chat", "search_open", "demo_to_agent_export",
         "agent_import_prose")


def _st_chat_text() -> str:
    lines = [{"user_name": "旅人", "character_name": "青梧", "create_date": "2024-5-1@12h00m00s", "chat_metadata": {}},
             {"name": "青梧", "is_user": False, "send_date": "May 1, 2024 12:00pm", "mes": "客官打算住几天？"},
             {"name": "旅人", "is_user": True, "send_date": "May 1, 2024 12:01pm", "mes": "住三天，打听个人。"},
             {"name": "青梧", "is_user": False, "send_date": "May 1, 2024 12:02pm", "mes": "打听谁？",
              "swipes": ["打听谁？", "这镇子小，人好找。"], "swipe_id": 0}]
    return "\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n"


# -- the child ------------------------------------------------------------------------------------------------------
def _child(flow: str, result_path: str) -> None:  # pragma: no cover - runs in the subprocess
    import asyncio

    from liyuan_desktop import app as appmod

    work = Path(os.environ["SMOKE_WORK"])
    result: dict = {"flow": flow, "boxes": [], "uncaught": [], "steps": []}
    orig_open = appmod.open_window

    def patch_dialogs() -> None:
        from PySide6.QtWidgets import QDialog, QFileDialog, QMessageBox

        files = {"open": "", "dir": "", "save": ""}
        result["files"] = files

        def box(kind):
            def show(parent, title, text, *a, **k):
                result["boxes"].append([kind, str(text)[:300]])
                return QMessageBox.StandardButton.Yes if kind == "question" else QMessageBox.StandardButton.Ok
            return staticmethod(show)

        for kind in ("information", "warning", "critical", "question"):
            setattr(QMessageBox, kind, box(kind))
        QFileDialog.getOpenFileName = staticmethod(lambda *a, **k: (files["open"], ""))
        QFileDialog.getExistingDirectory = staticmethod(lambda *a, **k: files["dir"])
        QFileDialog.getSaveFileName = staticmethod(lambda *a, **k: (files["save"], ""))
        from liyuan_desktop.ui.dialogs import presets_dialog

        presets_dialog.NewChatDialog.exec = lambda self: QDialog.DialogCode.Accepted

    def hook(tp, value, tb):
        import traceback

        result["uncaught"].append("".join(traceback.format_exception(tp, value, tb))[-1500:])

    async def wait_for(cond, what: str, timeout: float = 60.0) -> None:
        for _ in range(int(timeout / 0.1)):
            if cond():
                return
            await asyncio.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}")

    async def run(win) -> None:
        from liyuan_desktop.ui.window import chat_work

        files = result["files"]
        await asyncio.sleep(0.5)
        result["engine_before"] = "liyuan_desktop.core.chat.facade" in sys.modules
        if flow == "new_chat":
            win.tree.setCurrentItem(win.tree.topLevelItem(0))
            win.new_chat_dialog()
            await wait_for(lambda: win.chat is not None, "the new chat")
        elif flow == "import_card":
            card = work / "imported.json"
            shutil.copy(DEMO_CARD, card)
            raw = json.loads(card.read_text("utf-8"))
            raw["data"]["name"] = "另一张卡"
            card.write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
            files["open"] = str(card)
            win.import_card_dialog()
            await wait_for(lambda: any(win.tree.topLevelItem(i).text(0) == "另一张卡"
                                       for i in range(win.tree.topLevelItemCount())), "the imported card")
        elif flow == "open_from_list":
            top = win.tree.topLevelItem(0)
            top.setExpanded(True)
            win.tree.itemDoubleClicked.emit(top.child(0), 0)
            await wait_for(lambda: win.chat is not None, "the chat opened from the list")
        elif flow == "import_st_chat":
            st = work / "st.jsonl"
            st.write_text(_st_chat_text(), "utf-8")
            files["open"] = str(st)
            win.tree.setCurrentItem(win.tree.topLevelItem(0))
            chat_work.import_st_chat_dialog(win)
            await wait_for(lambda: win.chat is not None and win.chat_ref is not None and win.chat_ref.name == "st",
                           "the imported chat")
        elif flow == "search_open":
            act = next(a for a in win.actions() if a.objectName() == "searchAllAction")
            act.trigger()
            d = win.search_dialog
            d.edit.setText("油纸伞")
            d.search()
            await wait_for(lambda: d.results.topLevelItemCount() > 0, "search hits")
            d.open_hit(0)
            await wait_for(lambda: win.chat is not None, "the chat of the hit")
        elif flow == "demo_to_agent_export":
            win.start_demo()
            await wait_for(lambda: win.chat is not None, "the demo chat")
            win.send_btn.click()  # the demo's first beat, so the chat has a reply to carry over
            await wait_for(lambda: win.chat.sealed_beat_count() >= 1 if hasattr(win.chat, "sealed_beat_count")
                           else True, "the first beat", 120)
            await asyncio.sleep(1.0)
            win.roleplay_to_agent_clicked()
            await wait_for(lambda: win.chat is not None and win.chat.mode == "agent", "the agent chat")
            for fmt in ("md", "epub", "docx"):
                files["save"] = str(work / f"book.{fmt}")
                task = win.exporter.export_story(fmt)
                assert task is not None, fmt
                await task
                result["steps"].append([fmt, (work / f"book.{fmt}").stat().st_size])
            files["save"] = str(work / "chat.jsonl")
            await win.exporter.export_chat()
            files["save"] = str(work / "card.png")
            await win.exporter.export_card("png")
            result["steps"].append(["exported", sorted(p.name for p in work.iterdir())])
        elif flow == "agent_import_prose":
            top = next(win.tree.topLevelItem(i) for i in range(win.tree.topLevelItemCount())
                       if win.tree.topLevelItem(i).text(0) == "青梧")
            top.setExpanded(True)
            agent = next(top.child(i) for i in range(top.childCount()) if top.child(i).text(0).startswith("局C"))
            win.tree.itemDoubleClicked.emit(agent, 0)
            await wait_for(lambda: win.chat is not None and win.chat.mode == "agent", "the agent chat")
            txt = work / "长篇.txt"
            txt.write_text("第一章 雨\n\n雨下了三天。\n\n第二章 晴\n\n天晴了。\n", "utf-8")
            files["open"] = str(txt)
            win.import_prose_dialog()
            result["steps"].append(["chapters", sorted(p.name for p in (Path(win.chat_ref.dir) / "正文").iterdir())])
        await asyncio.sleep(1.5)  # what the command started on workers and timers finishes

    def open_window(problem=None):
        win = orig_open(problem)
        patch_dialogs()
        sys.excepthook = hook
        from PySide6.QtCore import QTimer

        async def go() -> None:
            try:
                await run(win)
                result["ok"] = True
            except BaseException as e:  # noqa: BLE001 - reported to the parent
                import traceback

                result["ok"] = False
                result["error"] = "".join(traceback.format_exception(e))[-2000:]
            finally:
                Path(result_path).write_text(json.dumps(result, ensure_ascii=False), "utf-8")
                QTimer.singleShot(0, win.close)

        QTimer.singleShot(300, lambda: asyncio.ensure_future(go()))
        return win

    appmod.open_window = open_window
    sys.argv = [sys.argv[0]]
    appmod.main(["--offscreen"])


# -- the test -------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def seeded_home(tmp_path_factory):
    """A data folder with the demo played (a role-play chat) and the agent demo (局C), made once by the CLI."""
    home = tmp_path_factory.mktemp("smoke") / "home"
    env = {**os.environ, "LIYUAN_HOME": str(home)}
    for args in (["chat", "--demo", "--delay-ms", "0", "--chat", "演示"], ["chat", "--demo-agent", "--delay-ms", "0"]):
        r = subprocess.run([sys.executable, "-m", "liyuan_desktop", *args], cwd=str(ROOT), env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
    return home


@pytest.mark.parametrize("flow", FLOWS)
def test_window_command_as_first_act_after_start(flow, seeded_home, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(seeded_home, home)
    (home / "settings.json").unlink(missing_ok=True)  # no last chat: the command is the first thing that happens
    work = tmp_path / "work"
    work.mkdir()
    out = tmp_path / "result.json"
    env = {**os.environ, "LIYUAN_HOME": str(home), "SMOKE_WORK": str(work), "QT_QPA_PLATFORM": "offscreen",
           "QTWEBENGINE_DISABLE_SANDBOX": "1", "NO_PROXY": "*"}
    r = subprocess.run([sys.executable, str(Path(__file__).resolve()), flow, str(out)], cwd=str(ROOT), env=env,
                       capture_output=True, text=True, timeout=400)
    assert out.exists(), f"exit {r.returncode}\n{r.stderr[-3000:]}"
    res = json.loads(out.read_text("utf-8"))
    log = (home / "logs" / "liyuan.log").read_text("utf-8", errors="replace") if (home / "logs" / "liyuan.log").exists() else ""
    assert res.get("ok"), res.get("error")
    assert not res["uncaught"], res["uncaught"]
    assert "Traceback" not in log, log[-3000:]
    errors = [b for b in res["boxes"] if b[0] in ("warning", "critical")]
    assert not errors, errors
    if flow == "demo_to_agent_export":
        sizes = dict(x for x in res["steps"] if x[0] in ("md", "epub", "docx"))
        assert all(v > 200 for v in sizes.values()), sizes
    if flow == "agent_import_prose":
        assert any("雨" in name for name in res["steps"][0][1]), res["steps"]


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2])
