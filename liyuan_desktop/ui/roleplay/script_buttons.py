"""The card scripts in the window (issue 27): the row of script buttons above the input, the question 「运行这张卡的
酒馆助手脚本？」 asked once when a chat of a card with runnable scripts is first opened (default No), and the card's
script list (reachable from the card's context menu in the card list).

:func:`install` wires them into the main window: a :class:`~..frames.script_frames.ScriptFrames` for the
conversation view, fed by the session (another chat shown, a beat started) and the window's ``beatFinished``; the
reply actions' swipe / edit / delete reach the scripts as SillyTavern's message events.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.cards.meta import card_th_permission, set_card_th_allowed, set_card_th_switch, set_preset_th_permission
from ...core.cards.th_scripts import card_th_library, script_rows
from ..frames.script_frames import ScriptFrames
from ..infra.i18n import register, tr

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

log = logging.getLogger(__name__)

register({
    "scripts.th.ask.preset": {"zh": "预设「{name}」带有 {n} 个酒馆助手脚本（{names}）。脚本会在隐藏的沙盒里运行，可以读写这个对话的变量、显示按钮。是否允许它们运行？",
                              "en": "The preset “{name}” carries {n} TavernHelper scripts ({names}). They run in hidden "
                                    "sandboxes and can read and write this chat's variables and show buttons. Let "
                                    "them run?"},
    "scripts.th.ask": {"zh": "角色卡「{name}」带有 {n} 个酒馆助手脚本（{names}）。\n脚本会在隐藏的沙箱里运行，不能联网。"
                             "\n是否允许它们运行？（之后可在卡片右键菜单的「酒馆助手脚本…」里修改）",
                       "en": "The card “{name}” carries {n} TavernHelper scripts ({names}).\nThey run in a hidden "
                             "sandbox without network access.\nAllow them to run? (You can change this later under "
                             "“TavernHelper scripts…” in the card's context menu.)"},
    "scripts.th.menu": {"zh": "酒馆助手脚本…", "en": "TavernHelper scripts…"},
    "scripts.th.title": {"zh": "「{name}」的酒馆助手脚本", "en": "TavernHelper scripts of “{name}”"},
    "scripts.th.allow": {"zh": "允许这张卡的脚本运行", "en": "Allow this card's scripts to run"},
    "scripts.th.col.name": {"zh": "名称", "en": "Name"},
    "scripts.th.col.enabled": {"zh": "启用", "en": "Enabled"},
    "scripts.th.col.folder": {"zh": "文件夹", "en": "Folder"},
    "scripts.th.col.buttons": {"zh": "按钮", "en": "Buttons"},
    "scripts.th.col.imports": {"zh": "加载", "en": "Imports"},
    "scripts.th.col.note": {"zh": "说明", "en": "Note"},
    "scripts.th.mvu": {"zh": "MVU 加载器——由梨园的书记员扮演", "en": "MVU loader — played by our scribe"},
    "scripts.th.era": {"zh": "ERA 变量框架（变量命令由账本执行）", "en": "ERA variable framework (its commands go to the ledger)"},
    "scripts.th.big": {"zh": "太大，不运行", "en": "too big, not run"},
    "scripts.th.runs": {"zh": "运行中", "en": "runs"},
    "scripts.th.none": {"zh": "这张卡没有酒馆助手脚本。", "en": "This card has no TavernHelper scripts."},
    "scripts.row.tip": {"zh": "脚本「{script}」的按钮", "en": "A button of the script “{script}”"},
})


class ScriptButtonRow(QWidget):
    """The buttons of the running scripts above the input (SillyTavern's layout: one row, script by script).
    Hidden while there are none. ``clicked(script id, button name)``."""

    clicked = Signal(str, str)

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("scriptButtonRow")
        self._lay = QHBoxLayout(self)
        self._lay.setContentsMargins(8, 2, 8, 0)
        self._lay.setSpacing(4)
        self._lay.addStretch(1)
        self.buttons: list[QPushButton] = []
        self.setVisible(False)

    def set_buttons(self, buttons: list[tuple[str, str]], names: Optional[dict[str, str]] = None) -> None:
        """Show ``[(script id, button name)]``; ``names`` maps script ids to names (tooltips)."""
        for b in self.buttons:
            self._lay.removeWidget(b)
            b.deleteLater()
        self.buttons = []
        for sid, name in buttons:
            b = QPushButton(name)
            b.setObjectName("scriptButton")
            b.setAutoDefault(False)
            b.setToolTip(tr("scripts.row.tip", script=(names or {}).get(sid, sid)))
            b.clicked.connect(lambda _checked=False, s=sid, n=name: self.clicked.emit(s, n))
            self._lay.insertWidget(self._lay.count() - 1, b)
            self.buttons.append(b)
        self.setVisible(bool(self.buttons))


class ScriptListDialog(QDialog):
    """The card's TavernHelper scripts: name, the user's on/off (a checkbox; the card file is never rewritten),
    folder, buttons, what it imports, and a note (MVU loader — played by our scribe; ERA; too big; runs). A
    checkbox on top is the card's permission. ``changed`` fires after each switch (the window reruns the scripts)."""

    changed = Signal()

    def __init__(self, card_dir: Path, card: Any, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("scriptListDialog")
        self.card_dir = Path(card_dir)
        self.card = card
        self.setWindowTitle(tr("scripts.th.title", name=getattr(card, "name", "")))
        self.resize(900, 360)
        lay = QVBoxLayout(self)
        self.allow = QCheckBox(tr("scripts.th.allow"))
        self.allow.setObjectName("scriptsAllowed")
        lay.addWidget(self.allow)
        self.list = QTreeWidget()
        self.list.setRootIsDecorated(False)
        self.list.setHeaderLabels([tr(f"scripts.th.col.{k}") for k in ("name", "enabled", "folder", "buttons",
                                                                          "imports", "note")])
        for col, w in ((0, 150), (1, 60), (2, 90), (3, 150), (4, 200)):
            self.list.setColumnWidth(col, w)
        lay.addWidget(self.list, 1)
        self.empty = QLabel(tr("scripts.th.none"))
        lay.addWidget(self.empty)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        box.rejected.connect(self.reject)
        lay.addWidget(box)
        self.refresh()
        self.allow.toggled.connect(lambda on: self._allow(bool(on)))
        self.list.itemChanged.connect(lambda item, col: self._switched(item, col))

    def refresh(self) -> None:
        """Read the card's scripts and the user's record again."""
        perm = card_th_permission(self.card_dir)
        rows = script_rows(card_th_library(self.card), perm.allowed, perm.switches)
        self.allow.blockSignals(True)
        self.allow.setChecked(perm.allowed is True)
        self.allow.blockSignals(False)
        self.list.blockSignals(True)
        self.list.clear()
        for r in rows:
            note = (tr("scripts.th.mvu") if r["kind"] == "mvu_loader" else tr("scripts.th.big") if r["too_big"]
                    else tr("scripts.th.era") if r["kind"] == "era_framework" else tr("scripts.th.runs") if r["runs"]
                    else "")
            it = QTreeWidgetItem([r["name"], "", " / ".join(r["folder"]),
                                  tr("sep.list").join(b["name"] for b in r["buttons"] if b["visible"]),
                                  tr("sep.list").join(r["imports"]), note])
            it.setData(0, Qt.ItemDataRole.UserRole, r["id"])
            it.setFlags(it.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            it.setCheckState(1, Qt.CheckState.Checked if r["enabled"] else Qt.CheckState.Unchecked)
            it.setToolTip(4, "\n".join(r["imports"]))
            self.list.addTopLevelItem(it)
        self.list.blockSignals(False)
        self.empty.setVisible(not rows)

    def _allow(self, on: bool) -> None:
        try:
            set_card_th_allowed(self.card_dir, on)
        except OSError as e:
            QMessageBox.warning(self, tr("app.title"), str(e))
        self.refresh()
        self.changed.emit()

    def _switched(self, item: QTreeWidgetItem, col: int) -> None:
        if col != 1:
            return
        try:
            set_card_th_switch(self.card_dir, str(item.data(0, Qt.ItemDataRole.UserRole)),
                               item.checkState(1) == Qt.CheckState.Checked)
        except OSError as e:
            QMessageBox.warning(self, tr("app.title"), str(e))
        self.refresh()
        self.changed.emit()


def ask_once(parent: QWidget, chat: Chat, answered: Callable[[bool], None]) -> Optional[QMessageBox]:
    """When the chat's preset or card has scripts that would run and the user never answered for it: ask
    「是否允许它们运行？」 (default No; a window-modal box that does not block the event loop), the preset's first
    (TavernHelper's order), record the answer (cards.meta: beside the card, or in the preset library's record) and
    call ``answered(allowed)``; then the next scope that needs asking. Returns the box shown, or None when nothing
    was asked. Closing the box without an answer records nothing (asked again next time)."""
    try:
        scope = next((s for s in chat.script_scopes() if s.needs_asking), None)
    except Exception:  # noqa: BLE001 - a damaged card or preset never breaks opening
        log.exception("scripts: could not read the card or the preset")
        return None
    if scope is None or (scope.source == "card" and not chat.card.path):
        return None
    names = [s.name for s in scope.library.scripts if s.kind != "mvu_loader"]
    shown = tr("sep.list").join(names[:6]) + ("…" if len(names) > 6 else "")
    key = "scripts.th.ask" if scope.source == "card" else "scripts.th.ask.preset"
    box = QMessageBox(QMessageBox.Icon.Question, tr("app.title"), tr(key, name=scope.name, n=len(names), names=shown),
                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, parent)
    box.setObjectName("cardScriptsQuestion" if scope.source == "card" else "presetScriptsQuestion")
    box.setDefaultButton(QMessageBox.StandardButton.No)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

    def done(_result: int) -> None:
        clicked = box.clickedButton()
        if clicked is None:
            return
        allowed = clicked is box.button(QMessageBox.StandardButton.Yes)
        try:
            if scope.source == "card":
                set_card_th_allowed(Path(chat.card.path).parent, allowed)
            else:
                from ...core.prompt.presets.store import presets_dir  # (the preset library, when first needed)

                set_preset_th_permission(presets_dir(), scope.name, allowed)
        except OSError as e:
            log.warning("scripts: the answer was not saved: %s", e)
        answered(allowed)
        ask_once(parent, chat, answered)  # the card's after the preset's
    box.finished.connect(done)
    box.open()
    return box


def open_script_list(win: Any, card_ref: Any) -> Optional[ScriptListDialog]:
    """The script list of the card ``card_ref`` (a library ``CardRef``), shown; the open chat's scripts rerun after
    each change when it is that card's."""
    try:
        card = card_ref.load()
    except Exception as e:  # noqa: BLE001 - CardError, OSError: say so
        QMessageBox.warning(win, tr("app.title"), str(e))
        return None
    dlg = ScriptListDialog(Path(card_ref.dir), card, win)
    frames = getattr(win, "script_frames", None)

    def rerun() -> None:
        chat = win.session.chat
        if frames is not None and chat is not None and chat.card.path and \
                Path(chat.card.path).parent.resolve() == Path(card_ref.dir).resolve():
            frames.set_chat(chat)
    dlg.changed.connect(rerun)
    dlg.show()
    return dlg


def install(win: Any, row: ScriptButtonRow) -> ScriptFrames:
    """Wire the card scripts into the main window ``win`` (module doc); ``row`` is the button row the window put
    above its input. Returns the :class:`ScriptFrames` (also ``win.script_frames``)."""
    sf = ScriptFrames(win.view, lambda text: win.statusBar().showMessage(text, 10000),
                      send=lambda text: _send(win, text), trigger=lambda: _trigger(win), parent=win)
    win.script_frames = sf
    sf.buttonsChanged.connect(lambda: row.set_buttons(sf.buttons(), {s.id: s.name for s in sf.scripts}))
    row.clicked.connect(lambda script_id, name: sf.click(script_id, name))  # (never a checked bool)

    def shown(chat: Optional[Chat]) -> None:
        sf.set_chat(chat)
        if chat is not None:
            QTimer.singleShot(0, lambda: _ask_then_run(win, sf, chat))
    win.session.chatShown.connect(shown)
    win.session.busyChanged.connect(lambda busy: sf.beat_started(win.session.chat) if busy else None)
    win.beatFinished.connect(lambda _res: sf.beat_finished(win.session.chat))
    win.view.swipeRequested.connect(lambda eid, _d: QTimer.singleShot(0, lambda: sf.fire("message_swiped", eid)))
    win.view.editSaved.connect(lambda eid, _t: QTimer.singleShot(0, lambda: sf.fire("message_edited", eid)))
    win.view.messageActionRequested.connect(
        lambda action, eid: QTimer.singleShot(0, lambda: sf.fire("message_deleted", eid)) if action == "delete" else None)
    return sf


def _ask_then_run(win: Any, sf: ScriptFrames, chat: Chat) -> None:
    def answered(allowed: bool) -> None:
        if allowed and win.session.chat is chat:
            sf.set_chat(chat)
    if win.session.chat is chat:
        ask_once(win, chat, answered)


def _send(win: Any, text: str) -> None:
    """``/send``: the text goes out as the user's message (when no beat runs)."""
    if win.busy:
        return
    win.input.setPlainText(text)
    win.send_clicked()


def _trigger(win: Any) -> bool:
    """``/trigger``: press 发送 for what the input holds; False when it is empty."""
    if not win.input.toPlainText().strip() or win.busy:
        return False
    win.send_clicked()
    return True

