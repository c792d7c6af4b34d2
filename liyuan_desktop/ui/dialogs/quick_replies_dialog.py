"""The 快速回复 editor (issue 26 §4): the quick-reply library (``core.cards.quick_replies``) — import SillyTavern
Quick Reply sets, make new ones, delete them (asked, default No), switch each on for every chat or for the open chat
only — and the replies of the selected set: add, edit (label, tooltip, message, send / insert, hidden), remove
(asked), move up and down.

Every change is saved at once (as SillyTavern's Quick Reply settings do) and ``changed`` tells the bar under the
input (``ui/roleplay/quick_replies_bar.py``) to re-read the sets. The import report lists, per reply, what was
repaired and which replies hold STscript: Liyuan never runs STscript, it keeps such a message as text and puts it
into the input box when clicked; the report says so in its first line."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.cards.personas import chat_key
from ...core.cards.quick_replies import (
    QuickReplyError,
    QuickReplySet,
    delete_set,
    import_set,
    list_sets,
    load_choices,
    load_set,
    read_set,
    save_set,
    set_active,
    set_path,
)
from ..infra.i18n import register, show, tr

register({
    "qred.title": {"zh": "快速回复", "en": "Quick replies"},
    "qred.sets": {"zh": "快速回复集", "en": "Quick Reply sets"},
    "qred.col.set": {"zh": "集", "en": "Set"},
    "qred.col.all": {"zh": "所有对话", "en": "All chats"},
    "qred.col.chat": {"zh": "本对话", "en": "This chat"},
    "qred.import": {"zh": "导入…", "en": "Import…"},
    "qred.import.filter": {"zh": "SillyTavern 快速回复集 (*.json);;所有文件 (*)",
                         "en": "SillyTavern Quick Reply sets (*.json);;All files (*)"},
    "qred.new_set": {"zh": "新建集…", "en": "New set…"},
    "qred.new_set.label": {"zh": "新快速回复集的名字：", "en": "Name of the new set:"},
    "qred.delete_set": {"zh": "删除集", "en": "Delete set"},
    "qred.confirm.delete_set": {"zh": "删除快速回复集「{name}」？", "en": "Delete the quick reply set “{name}”?"},
    "qred.confirm.replace": {"zh": "快速回复库里已经有「{name}」，用导入的替换它？",
                           "en": "The library already has “{name}”. Replace it with the imported one?"},
    "qred.replace": {"zh": "替换", "en": "Replace"},
    "qred.replies": {"zh": "回复", "en": "Replies"},
    "qred.add": {"zh": "新建回复", "en": "New reply"},
    "qred.remove": {"zh": "删除回复", "en": "Delete reply"},
    "qred.confirm.remove": {"zh": "删除回复「{label}」？", "en": "Delete the reply “{label}”?"},
    "qred.up": {"zh": "上移", "en": "Up"},
    "qred.down": {"zh": "下移", "en": "Down"},
    "qred.label": {"zh": "按钮文字：", "en": "Label:"},
    "qred.tooltip": {"zh": "提示：", "en": "Tooltip:"},
    "qred.message": {"zh": "消息：", "en": "Message:"},
    "qred.mode": {"zh": "点击时：", "en": "On click:"},
    "qred.mode.set": {"zh": "按集的设置（{mode}）", "en": "As the set says ({mode})"},
    "qred.mode.send": {"zh": "以你的身份发送", "en": "Send as you"},
    "qred.mode.insert": {"zh": "放进输入框", "en": "Put into the input box"},
    "qred.hidden": {"zh": "不在按钮栏显示", "en": "Hidden from the bar"},
    "qred.hidden.mark": {"zh": "（隐藏）", "en": " (hidden)"},
    "qred.apply": {"zh": "保存这条回复", "en": "Save this reply"},
    "qred.disable_send": {"zh": "这个集的回复默认只放进输入框，不直接发送", "en": "This set's replies are inserted, not sent, by default"},
    "qred.inject": {"zh": "和输入框里已有的文字拼在一起", "en": "Join what is already in the input box"},
    "qred.before": {"zh": "拼在已有文字前面（不勾：后面）", "en": "Put it before that text (unticked: after)"},
    "qred.new.label": {"zh": "新回复", "en": "New reply"},
    "qred.script.mark": {"zh": "（STscript，不运行）", "en": " (STscript, not run)"},
    "qred.no_script": {"zh": "梨园不运行 STscript：以 / 开头或含 | /命令 的回复按文字保留，点击时只放进输入框。",
                     "en": "Liyuan does not run STscript: replies that start with / or hold | /command are kept as "
                           "text and only put into the input box when clicked."},
    "qred.imported": {"zh": "已导入「{name}」：{n} 条回复", "en": "Imported “{name}”: {n} replies"},
    "qred.saved": {"zh": "已保存「{name}」", "en": "Saved “{name}”"},
    "qred.nochat": {"zh": "（没有打开的对话）", "en": "(no chat open)"},
    "qred.close": {"zh": "关闭", "en": "Close"},
})


class QuickRepliesDialog(QDialog):
    """The editor (module doc). ``chat_dir``: the open chat's folder (None: only "every chat" can be chosen).
    Commands without their file or name dialogs, for tests and callers: :meth:`import_files`, :meth:`new_set`,
    :meth:`delete`, :meth:`set_enabled`, :meth:`add_reply`, :meth:`apply_reply`, :meth:`remove_reply`,
    :meth:`move_reply`. ``changed`` after every save."""

    changed = Signal()

    def __init__(self, chat_dir: Optional[str] = None, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("quickRepliesDialog")
        self.setWindowTitle(tr("qred.title"))
        self.resize(960, 620)
        self.chat_dir = chat_dir
        self.qrs: Optional[QuickReplySet] = None
        root = QVBoxLayout(self)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self._sets_pane())
        split.addWidget(self._replies_pane())
        split.setSizes([330, 630])
        root.addWidget(split, 1)
        self.report = QPlainTextEdit()
        self.report.setObjectName("qrReport")
        self.report.setReadOnly(True)
        self.report.setFixedHeight(96)
        self.report.setPlainText(tr("qred.no_script"))
        root.addWidget(self.report)
        box = QDialogButtonBox()
        box.addButton(tr("qred.close"), QDialogButtonBox.ButtonRole.RejectRole)
        box.rejected.connect(self.reject)
        root.addWidget(box)
        self.refresh()

    # -- layout ---------------------------------------------------------------------------------------------
    def _sets_pane(self) -> QWidget:
        w = QWidget()
        lay = QVBoxLayout(w)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(QLabel(tr("qred.sets")))
        self.set_list = QTreeWidget()
        self.set_list.setObjectName("qrSets")
        self.set_list.setHeaderLabels([tr("qred.col.set"), tr("qred.col.all"), tr("qred.col.chat")])
        self.set_list.setRootIsDecorated(False)
        for col, width in ((0, 150), (1, 80), (2, 80)):
            self.set_list.setColumnWidth(col, width)
        self.set_list.currentItemChanged.connect(lambda *_: self._set_selected())
        self.set_list.itemChanged.connect(self._set_checked)
        lay.addWidget(self.set_list, 1)
        row = QHBoxLayout()
        for key, slot in (("qred.import", self._import_clicked), ("qred.new_set", self._new_set_clicked),
                          ("qred.delete_set", self._delete_clicked)):
            b = QPushButton(tr(key))
            b.setObjectName(key.replace(".", "_"))
            b.clicked.connect(slot)
            row.addWidget(b)
        lay.addLayout(row)
        self.disable_send = QCheckBox(tr("qred.disable_send"))
        self.disable_send.toggled.connect(lambda on: self._set_option("disableSend", on))
        self.inject = QCheckBox(tr("qred.inject"))
        self.inject.toggled.connect(lambda on: self._set_option("injectInput", on))
        self.before = QCheckBox(tr("qred.before"))
        self.before.toggled.connect(lambda on: self._set_option("placeBeforeInput", on))
        for box in (self.disable_send, self.inject, self.before):
            lay.addWidget(box)
        return w

    def _replies_pane(self) -> QWidget:
        w = QWidget()
        lay = QVBoxLayout(w)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(QLabel(tr("qred.replies")))
        self.replies = QListWidget()
        self.replies.setObjectName("qrReplies")
        self.replies.currentItemChanged.connect(lambda *_: self._reply_selected())
        lay.addWidget(self.replies, 1)
        row = QHBoxLayout()
        self.reply_buttons: dict[str, QPushButton] = {}
        for key, slot in (("qred.add", lambda: self.add_reply()), ("qred.remove", self._remove_clicked),
                          ("qred.up", lambda: self._step(-1)), ("qred.down", lambda: self._step(1))):
            b = QPushButton(tr(key))
            b.clicked.connect(slot)
            row.addWidget(b)
            self.reply_buttons[key] = b
        lay.addLayout(row)
        form = QFormLayout()
        self.label = QLineEdit()
        self.title = QLineEdit()
        self.message = QPlainTextEdit()
        self.message.setObjectName("qrMessage")
        self.message.setMaximumHeight(150)
        self.mode = QComboBox()
        self.hidden = QCheckBox(tr("qred.hidden"))
        self.apply_btn = QPushButton(tr("qred.apply"))
        self.apply_btn.setObjectName("qrApply")
        self.apply_btn.clicked.connect(lambda: self.apply_reply())
        for key, wid in (("qred.label", self.label), ("qred.tooltip", self.title), ("qred.message", self.message),
                         ("qred.mode", self.mode)):
            form.addRow(tr(key), wid)
        form.addRow(self.hidden)
        form.addRow(self.apply_btn)
        lay.addLayout(form)
        return w

    # -- the sets -------------------------------------------------------------------------------------------
    def set_chat(self, chat_dir: Optional[str]) -> None:
        """The chat shown changed: its own sets in the third column."""
        self.chat_dir = chat_dir
        self.refresh()

    def refresh(self, select: Optional[str] = None) -> None:
        """Re-read the library and the active choices; select ``select`` (default: the one selected)."""
        cur = self.set_list.currentItem()
        select = select or (cur.text(0) if cur is not None else None)
        choices = load_choices()
        mine = choices.chats.get(chat_key(self.chat_dir), []) if self.chat_dir else []
        self.set_list.blockSignals(True)
        self.set_list.clear()
        for name in list_sets():
            it = QTreeWidgetItem([name, "", "" if self.chat_dir else tr("qred.nochat")])
            flags = Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable
            it.setFlags(flags)
            it.setCheckState(1, Qt.CheckState.Checked if name in choices.global_sets else Qt.CheckState.Unchecked)
            if self.chat_dir:
                it.setCheckState(2, Qt.CheckState.Checked if name in mine else Qt.CheckState.Unchecked)
            self.set_list.addTopLevelItem(it)
            if name == select:
                self.set_list.setCurrentItem(it)
        first = self.set_list.topLevelItem(0)
        if self.set_list.currentItem() is None and first is not None:
            self.set_list.setCurrentItem(first)
        self.set_list.blockSignals(False)
        self._set_selected()

    def _set_selected(self) -> None:
        it = self.set_list.currentItem()
        self.qrs = None
        if it is not None:
            try:
                self.qrs = load_set(it.text(0))
            except QuickReplyError as e:
                self.report.setPlainText(show(e))
        for box, key in ((self.disable_send, "disableSend"), (self.inject, "injectInput"),
                         (self.before, "placeBeforeInput")):
            box.blockSignals(True)
            box.setChecked(bool(self.qrs and getattr(self.qrs, key)))
            box.setEnabled(self.qrs is not None)
            box.blockSignals(False)
        self._fill_replies()

    def _set_checked(self, item: QTreeWidgetItem, column: int) -> None:
        if column in (1, 2):
            self.set_enabled(item.text(0), item.checkState(column) == Qt.CheckState.Checked, this_chat=column == 2)

    def set_enabled(self, name: str, on: bool, this_chat: bool = False) -> None:
        """Show the set ``name`` on the bar of every chat (or, with ``this_chat``, of the open chat only)."""
        choices = load_choices()
        if this_chat:
            if not self.chat_dir:
                return
            names = list(choices.chats.get(chat_key(self.chat_dir), []))
        else:
            names = list(choices.global_sets)
        names = [n for n in names if n != name] + ([name] if on else [])
        try:
            set_active(names, self.chat_dir if this_chat else None)
        except (QuickReplyError, OSError) as e:
            self.report.setPlainText(show(e) if isinstance(e, QuickReplyError) else str(e))
            return
        self.changed.emit()

    def import_files(self, paths: list[str], replace: bool = False) -> list[str]:
        """Import SillyTavern Quick Reply set files; the report lists what each import says. A name the library
        already has is replaced only with ``replace`` (the Import button asks first, default No)."""
        done: list[str] = []
        lines: list[str] = [tr("qred.no_script")]
        for p in paths:
            try:
                r = import_set(p, replace=replace)
            except (QuickReplyError, OSError) as e:
                lines.append(show(e) if isinstance(e, QuickReplyError) else str(e))
                continue
            done.append(r.set.name)
            lines.append(tr("qred.imported", name=r.set.name, n=len(r.set.qrList)))
            lines += [f"  · {show(m)}" for m in r.lines()]
        self.report.setPlainText("\n".join(lines))
        self.refresh(select=done[-1] if done else None)
        if done:
            self.changed.emit()
        return done

    def _import_clicked(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, tr("qred.import"), str(Path.home()), tr("qred.import.filter"))
        from .dialogs import confirm

        fresh: list[str] = []
        taken: list[str] = []
        for p in paths:
            try:
                name = read_set(p).set.name or Path(p).stem
            except QuickReplyError:
                fresh.append(p)  # the import reports why
                continue
            (taken if set_path(name).exists() else fresh).append(p)
        if fresh:
            self.import_files(fresh)
        for p in taken:
            if confirm(self, tr("qred.title"), tr("qred.confirm.replace", name=Path(p).stem), tr("qred.replace")):
                self.import_files([p], replace=True)

    def new_set(self, name: str) -> Optional[str]:
        """A new empty set ``name`` in the library (an existing one is not replaced); returns its library name."""
        name = name.strip()
        if not name or set_path(name).exists():
            return None
        qrs = QuickReplySet(name=name)
        save_set(qrs)
        self.refresh(select=qrs.name)
        self.changed.emit()
        return qrs.name

    def _new_set_clicked(self) -> None:
        name, ok = QInputDialog.getText(self, tr("qred.new_set"), tr("qred.new_set.label"))
        if ok:
            self.new_set(name)

    def _delete_clicked(self) -> None:
        it = self.set_list.currentItem()
        if it is None:
            return
        from .dialogs import confirm  # No is the default

        if confirm(self, tr("qred.title"), tr("qred.confirm.delete_set", name=it.text(0)), tr("qred.delete_set")):
            self.delete(it.text(0))

    def delete(self, name: str) -> None:
        """Remove the set ``name`` from the library (and from every active list)."""
        try:
            delete_set(name)
        except OSError as e:
            self.report.setPlainText(str(e))
            return
        self.refresh()
        self.changed.emit()

    def _set_option(self, key: str, on: bool) -> None:
        if self.qrs is not None:
            setattr(self.qrs, key, bool(on))
            self._save()

    def _save(self, select: Optional[int] = None) -> None:
        if self.qrs is None:
            return
        try:
            save_set(self.qrs)
        except OSError as e:
            self.report.setPlainText(str(e))
            return
        self._fill_replies(select)
        self.changed.emit()

    # -- the replies ----------------------------------------------------------------------------------------
    def _fill_replies(self, select: Optional[int] = None) -> None:
        cur = self.current_reply()
        select = select if select is not None else cur
        self.replies.blockSignals(True)
        self.replies.clear()
        for q in (self.qrs.qrList if self.qrs else []):
            mode = tr(f"qred.mode.{self.qrs.mode_of(q)}") if self.qrs else ""
            text = f"{q.label or q.id} — {mode}" + (tr("qred.script.mark") if q.script else "")
            it = QListWidgetItem(text + (tr("qred.hidden.mark") if q.isHidden else ""))
            it.setData(Qt.ItemDataRole.UserRole, q.id)
            self.replies.addItem(it)
            if q.id == select:
                self.replies.setCurrentItem(it)
        self.replies.blockSignals(False)
        for b in self.reply_buttons.values():
            b.setEnabled(self.qrs is not None)
        self._reply_selected()

    def current_reply(self) -> Optional[int]:
        """The selected reply's id, or None."""
        it = self.replies.currentItem()
        return int(it.data(Qt.ItemDataRole.UserRole)) if it is not None else None

    def _reply_selected(self) -> None:
        q = None
        if self.qrs is not None and self.current_reply() is not None:
            q = self.qrs.entry(self.current_reply())  # type: ignore[arg-type]
        self.mode.clear()
        set_mode = "insert" if self.qrs and self.qrs.disableSend else "send"
        self.mode.addItem(tr("qred.mode.set", mode=tr(f"qred.mode.{set_mode}")), None)
        self.mode.addItem(tr("qred.mode.send"), "send")
        self.mode.addItem(tr("qred.mode.insert"), "insert")
        self.label.setText(q.label if q else "")
        self.title.setText(q.title if q else "")
        self.message.setPlainText(q.message if q else "")
        self.mode.setCurrentIndex(max(0, self.mode.findData(q.mode)) if q and q.mode else 0)
        self.hidden.setChecked(bool(q and q.isHidden))
        for w in (self.label, self.title, self.message, self.mode, self.hidden, self.apply_btn):
            w.setEnabled(q is not None)

    def add_reply(self, label: str = "", message: str = "") -> Optional[int]:
        """Add a reply at the end of the selected set and select it; returns its id."""
        if self.qrs is None:
            return None
        q = self.qrs.add(label or tr("qred.new.label"), message)
        self._save(q.id)
        return q.id

    def apply_reply(self) -> bool:
        """Save the form into the selected reply."""
        rid = self.current_reply()
        if self.qrs is None or rid is None:
            return False
        mode = self.mode.currentData()
        try:
            self.qrs.update(rid, label=self.label.text(), title=self.title.text(), text=self.message.toPlainText(),
                            mode=mode, clear_mode=mode is None, hidden=self.hidden.isChecked())
        except QuickReplyError as e:
            self.report.setPlainText(show(e))
            return False
        self._save(rid)
        self.report.setPlainText(tr("qred.saved", name=self.qrs.name))
        return True

    def _remove_clicked(self) -> None:
        rid = self.current_reply()
        if self.qrs is None or rid is None:
            return
        from .dialogs import confirm  # No is the default

        label = self.qrs.entry(rid).label or str(rid)
        if confirm(self, tr("qred.title"), tr("qred.confirm.remove", label=label), tr("qred.remove")):
            self.remove_reply(rid)

    def remove_reply(self, rid: int) -> None:
        """Delete reply ``rid`` of the selected set."""
        if self.qrs is not None:
            self.qrs.remove(rid)
            self._save()

    def move_reply(self, rid: int, index: int) -> None:
        """Move reply ``rid`` to ``index`` (0-based) in the selected set."""
        if self.qrs is not None:
            self.qrs.move(rid, index)
            self._save(rid)

    def _step(self, delta: int) -> None:
        rid = self.current_reply()
        if rid is not None:
            self.move_reply(rid, self.replies.currentRow() + delta)


__all__ = ["QuickRepliesDialog"]
