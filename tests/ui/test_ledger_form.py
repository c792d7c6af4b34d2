"""The ledger as a form (issue 17): the ledger pane's 编辑 opens a form with time/place, a characters table,
inventory, flags and plot threads; saving emits a WorldState (roster kept, new names registered); bad rows are
refused with a message; 高级（JSON） carries the edits across both ways; a real chat gets the user's snapshot."""

from __future__ import annotations

import json

from PySide6.QtWidgets import QSpinBox, QTableWidgetItem

from liyuan_desktop.core.ledger.state import CharacterState, Roster, WorldState
from liyuan_desktop.ui.roleplay.state_pane import StatePane


def _state() -> WorldState:
    return WorldState(time="雨夜", location="渡口",
                      characters={"青梧": CharacterState(affinity=5, status="警惕", notes="撑伞", at="渡口")},
                      inventory=["油纸伞"], flags={"已问名": "是"}, plot_threads=["渡口的旧账"],
                      roster=Roster(characters={"青梧": "雨夜"}))


def _pane(qtbot) -> tuple[StatePane, list]:
    pane = StatePane()
    qtbot.addWidget(pane)
    pane.show()
    got: list = []
    pane.stateEdited.connect(got.append)
    pane.show_state(_state())
    return pane, got


def test_edit_opens_the_form_filled_from_the_ledger(qtbot):
    pane, _ = _pane(qtbot)
    pane.start_edit()
    f = pane.form
    assert pane.editing() == "form" and pane.stack.currentWidget() is f
    assert f.time_edit.text() == "雨夜" and f.location_edit.text() == "渡口"
    assert f.chars.rowCount() == 1 and f.chars.item(0, 0).text() == "青梧"
    assert f.chars.cellWidget(0, 1).value() == 5 and f.chars.item(0, 2).text() == "警惕"
    assert f.chars.item(0, 3).text() == "渡口" and f.chars.item(0, 4).text() == "撑伞"
    assert f.inventory.values() == ["油纸伞"] and f.threads.values() == ["渡口的旧账"]
    assert f.flags.item(0, 0).text() == "已问名" and f.flags.item(0, 1).text() == "是"


def test_form_save_emits_the_edited_state_with_roster(qtbot):
    pane, got = _pane(qtbot)
    pane.start_edit()
    f = pane.form
    f.time_edit.setText("深夜（雨停）")
    f.chars.cellWidget(0, 1).setValue(12)
    f.add_character()
    r = f.chars.rowCount() - 1
    f.chars.item(r, 0).setText("渡夫")
    f.chars.item(r, 2).setText("打盹")
    f.inventory.add()
    f.inventory.list.item(1).setText("铜钱三枚")
    f.threads.list.item(0).setText("")  # emptied lines are dropped
    f.add_flag()
    f.flags.item(1, 0).setText("雨停")
    f.flags.setItem(1, 1, QTableWidgetItem("是"))
    pane.save_edit()
    assert len(got) == 1 and pane.editing() == ""
    st: WorldState = got[0]
    assert st.time == "深夜（雨停）" and st.location == "渡口"
    assert st.characters["青梧"].affinity == 12 and st.characters["青梧"].at == "渡口"
    assert st.characters["渡夫"].status == "打盹" and st.characters["渡夫"].at is None
    assert st.inventory == ["油纸伞", "铜钱三枚"] and st.plot_threads == []
    assert st.flags == {"已问名": "是", "雨停": "是"}
    assert st.roster is not None and "青梧" in st.roster.characters and "渡夫" in st.roster.characters


def test_form_refuses_nameless_and_repeated_rows(qtbot):
    pane, got = _pane(qtbot)
    pane.start_edit()
    f = pane.form
    f.add_character()
    f.chars.item(1, 0).setText("青梧")
    pane.save_edit()
    assert not got and "青梧" in pane.error.text() and pane.editing() == "form"
    f.chars.item(1, 0).setText("  ")
    pane.save_edit()
    assert not got and "2" in pane.error.text()
    # affinity cannot leave -100..100 (the spin box bounds it)
    spin = f.chars.cellWidget(0, 1)
    assert isinstance(spin, QSpinBox) and (spin.minimum(), spin.maximum()) == (-100, 100)


def test_json_toggle_carries_edits_both_ways(qtbot):
    pane, got = _pane(qtbot)
    pane.start_edit()
    pane.form.location_edit.setText("茶寮")
    pane.toggle_json()
    assert pane.editing() == "json"
    data = json.loads(pane.editor.toPlainText())
    assert data["location"] == "茶寮"
    data["inventory"].append("信")
    pane.editor.setPlainText(json.dumps(data, ensure_ascii=False))
    pane.toggle_json()
    assert pane.editing() == "form" and pane.form.inventory.values() == ["油纸伞", "信"]
    pane.editor.setPlainText("{坏")
    pane.toggle_json()  # back to JSON (valid form), then break it and try the form again
    pane.editor.setPlainText("{坏")
    pane.toggle_json()
    assert pane.editing() == "json" and "JSON" in pane.error.text()
    pane.cancel_edit()
    assert pane.editing() == "" and not got


def test_the_form_in_english(qtbot):
    """The live switch builds the window's panes again in the new language (ui/window/language_switch.py)."""
    from liyuan_desktop.ui.infra.i18n import set_language

    try:
        set_language("en")
        pane, _ = _pane(qtbot)
        pane.start_edit()
        heads = [pane.form.chars.horizontalHeaderItem(i).text() for i in range(5)]
        assert heads == ["Name", "Affinity", "Status", "Where", "Notes"]
        assert pane.json_btn.text() == "Advanced (JSON)" and pane.save_btn.text() == "Save"
    finally:
        set_language("zh")
    pane, _ = _pane(qtbot)
    assert pane.form.chars.horizontalHeaderItem(0).text() == "名字"
