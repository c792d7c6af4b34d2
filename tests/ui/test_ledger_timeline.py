"""Issue 33 in the window: the 账本历史 tab lists each beat's ledger changes (path, old → new, who, reason) of a
10-beat replay chat, filters them by path, reverts one change through the real confirm box (No by default; conflicts
listed first), and draws a numeric variable over the beats — a click on a point selects that beat and shows its
message. A screenshot of the tab is saved for a look (LIYUAN_SHOT_DIR, default the test's tmp folder)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.roleplay.ledger_timeline import plan_text
from liyuan_desktop.ui.window.main_window import MainWindow

SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
PLACES = ["茶馆", "渡口", "后院", "屋顶", "码头", "桥头", "巷口", "河边", "庙前", "城门"]


def w(text: str) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]}


def scribe(i: int) -> str:
    aff = -100 if i == 3 else 5 * (i + 1)
    body = {"patch": {"location": PLACES[i], "characters": {"阿棠": {"affinity": aff}}},
            "mvu_patch": {"好感": 10 + 3 * i - (20 if i == 3 else 0), "金钱": 100 - 7 * i}}
    if i == 3:
        body["reason"] = "她生气了"
    return json.dumps(body, ensure_ascii=False)


async def played(tmp_path: Path) -> tuple[library.CardRef, Path]:
    src = tmp_path / "阿棠.json"
    book = {"entries": [{"id": 0, "comment": "[InitVar]", "keys": [], "content": json.dumps({"好感": 10, "金钱": 100}),
                         "enabled": False, "insertion_order": 100, "extensions": {}}]}
    src.write_text(json.dumps({"spec": "chara_card_v3", "spec_version": "3.0", "data": {
        "name": "阿棠", "first_mes": "雨夜，茶馆。", "character_book": book}}, ensure_ascii=False), "utf-8")
    card = library.import_card(src)
    d = library.new_chat_dir(card, "十拍")
    model = ReplayModel(actor=[x for i in range(10) for x in (w(f"第{i + 1}拍。"), SEAL)],
                        scribe=[scribe(i) for i in range(10)])
    chat = Chat.create(d, card.load(), model)
    for i in range(10):
        await chat.send(f"第{i + 1}句")
    chat.close()
    return card, d


def rows(pane) -> list[tuple[str, list[str]]]:
    out = []
    for i in range(pane.tree.topLevelItemCount()):
        top = pane.tree.topLevelItem(i)
        out.append((top.text(0), [" | ".join(top.child(k).text(c) for c in range(4)) for k in range(top.childCount())]))
    return out


def answer_box(button: str, seen: list[str]):
    def go():
        box = QApplication.activeModalWidget()
        if box is None:
            QTimer.singleShot(50, go)
            return
        seen.append(box.text())
        if button == "enter":
            QTest.keyClick(box, Qt.Key.Key_Return)
        else:
            box.findChild(type(box.defaultButton()), button).click()
    return go


async def test_timeline_lists_reverts_and_charts(qtbot, tmp_path):
    card, d = await played(tmp_path)
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    pane = win.ledger_timeline
    assert win.tabs.tabText(win.tabs.indexOf(pane)) == "账本历史"
    win.tabs.setCurrentWidget(pane)
    await wait_for(lambda: pane.tree.topLevelItemCount() == 10)
    listed = rows(pane)
    assert listed[3][0] == "第 4 拍 第4句"
    assert "characters.阿棠.affinity | 15 → -100 | 场记 | 她生气了" in listed[3][1]
    assert "vars.好感 | 16 → -1 | 场记 | 她生气了" in listed[3][1]

    # the path filter
    pane.filter.setText("vars.金")
    assert all(r == [] or all(x.startswith("vars.金钱") for x in r) for _, r in rows(pane))
    assert [pane.series_box.itemText(i) for i in range(pane.series_box.count())] == ["vars.金钱"]
    pane.filter.setText("")

    # revert beat 4's affinity: the box lists the conflicts first; Enter answers No, nothing written
    top = pane.tree.topLevelItem(3)
    child = next(top.child(k) for k in range(top.childCount()) if top.child(k).text(0) == "characters.阿棠.affinity")
    pane.tree.setCurrentItem(child)
    assert pane.revert_change_btn.isEnabled()
    chat = win.chat
    leaf = chat.tree.leaf_id
    seen: list[str] = []
    QTimer.singleShot(100, answer_box("enter", seen))
    assert not pane.revert_selected(whole_beat=False)
    assert chat.tree.leaf_id == leaf and "之后的拍也改过这些路径" in seen[0] and "#5 characters.阿棠.affinity" in seen[0]
    QTimer.singleShot(100, answer_box("confirmYes", seen))
    pane.revert_change_btn.click()
    assert chat.current_state().characters["阿棠"].affinity == 15
    # the change notice repaints the pane and the ledger tab
    await wait_for(lambda: pane.tree.topLevelItemCount() == 10
                   and any("50 → 15 | 你" in r for r in rows(pane)[-1][1]))
    assert win.state_pane.state.characters["阿棠"].affinity == 15
    # 撤销本轮 steps back over the revert
    win.undo_clicked()
    assert chat.current_state().characters["阿棠"].affinity == 50
    await wait_for(lambda: not any("50 → 15" in r for r in rows(pane)[-1][1]))

    # edit a value by hand in the real input box; undo takes it back
    top = pane.tree.topLevelItem(9)
    pane.tree.setCurrentItem(next(top.child(k) for k in range(top.childCount()) if top.child(k).text(0) == "vars.好感"))

    def type_value():
        box = QApplication.activeModalWidget()
        if box is None:
            QTimer.singleShot(50, type_value)
            return
        assert box.objectName() == "ledgerValueInput" and box.textValue() == "37"
        box.setTextValue("60")
        box.accept()

    QTimer.singleShot(100, type_value)
    pane.edit_btn.click()
    assert chat.current_mvu().stat_data["好感"] == 60
    await wait_for(lambda: any("vars.好感 | 37 → 60 | 你" in r for r in rows(pane)[-1][1]))
    win.undo_clicked()
    assert chat.current_mvu().stat_data["好感"] == 37

    # the chart: 好感 over the beats; a click on beat 4's point selects it and shows its message
    pane.series_box.setCurrentText("vars.好感")
    chart = pane.chart
    assert chart.points[:5] == [(0, 10.0), (1, 10.0), (2, 13.0), (3, 16.0), (4, -1.0)]
    await asyncio.sleep(0.2)
    QTest.mouseClick(chart.view.viewport(), Qt.MouseButton.LeftButton, pos=chart.position_of(4))
    await wait_for(lambda: pane.selected() == (4, None))
    assert chart.under.text() == "第 4 拍：-1"
    # English, live (the window is built again: ui/window/language_switch.py): the heads and the rows follow
    from liyuan_desktop.ui.infra.i18n import set_language

    set_language("en")
    try:
        win = win.language_changed("en")
        qtbot.addWidget(win)
        pane = win.ledger_timeline
        assert win.tabs.currentWidget() is pane  # the tab shown stays shown
        assert win.tabs.tabText(win.tabs.indexOf(pane)) == "Ledger history"
        assert pane.tree.headerItem().text(2) == "Who" and rows(pane)[3][0] == "Beat 4 第4句"
        assert "characters.阿棠.affinity | 15 → -100 | scribe | 她生气了" in rows(pane)[3][1]
        assert pane.revert_beat_btn.text() == "Revert this beat"
        assert pane.selected() == (4, None)  # the new pane keeps the selection
    finally:
        set_language("zh")
        win = win.language_changed("zh")
        qtbot.addWidget(win)
        pane = win.ledger_timeline
    assert pane.selected() == (4, None) and rows(pane)[3][0] == "第 4 拍 第4句"
    shot = Path(os.environ.get("LIYUAN_SHOT_DIR") or tmp_path) / "ledger_timeline.png"
    assert pane.grab().save(str(shot))
    assert shot.stat().st_size > 5000
    win.close()


def test_plan_text_lists_conflicts_before_targets(tmp_path):
    from liyuan_desktop.core.ledger.history import LedgerChange, RevertPlan

    c = dict(snapshot_id="x", segments=["time"], area="world", kind="changed", who="scribe")
    plan = RevertPlan(beat=2, path="time", targets=[LedgerChange(beat=2, path="time", old="夜", new="晨", **c)],
                      conflicts=[LedgerChange(beat=5, path="time", old="晨", new="午", **c)])
    text = plan_text(plan)
    assert text.index("#5 time: 晨 → 午") < text.index("time: 晨 → 夜")


def test_a_long_history_lists_the_newest_changes(qtbot, monkeypatch):
    from liyuan_desktop.core.ledger.history import BeatChanges, LedgerChange, LedgerHistory
    from liyuan_desktop.ui.infra.session import Session
    from liyuan_desktop.ui.roleplay import ledger_timeline

    monkeypatch.setattr(ledger_timeline, "MAX_ROWS", 10)
    pane = ledger_timeline.LedgerTimelinePane(Session())
    qtbot.addWidget(pane)
    beats = [BeatChanges(beat=i, user_id=f"u{i}", user_text=f"第{i}句", changes=[
        LedgerChange(beat=i, snapshot_id=f"s{i}", path=p, segments=p.split("."), area="vars", kind="changed",
                     old=i - 1, new=i, who="scribe") for p in ("vars.a", "vars.b", "vars.c")]) for i in range(1, 21)]
    pane.show_history(LedgerHistory(beats=beats, series={"vars.a": [(i, float(i)) for i in range(1, 21)]}))
    assert pane.tree.topLevelItem(0).text(0) == "（更早的 48 处改动没有列出：用路径筛选，或 liyuan ledger history）"
    assert pane.tree.topLevelItemCount() == 5 and pane.tree.topLevelItem(4).text(0) == "第 20 拍 第20句"
    pane.filter.setText("vars.a")
    assert pane.tree.topLevelItemCount() == 11 and pane.chart.points[-1] == (20, 20.0)
