"""The list parts of the card editor (ui/dialogs/card_editor.py, issue 26 §1): the alternate greetings (add, remove,
reorder with up/down), the embedded world book (opened in the book editor, ui/dialogs/book_editor.py) and the linked
library books, the card's regex scripts (a list with on/off boxes; 编辑… opens :class:`ScriptDialog`).

Every part edits the dialog's :class:`~liyuan_desktop.core.cards.edit.CardEditor` through ``run`` — the dialog's
one path for an edit: it calls the engine, shows a refused value (``cardedit.*``) in the dialog's status line and
recounts the tokens. The asking (:func:`ask_yes`, :func:`choose_book`) are module functions, so a test can answer in
place of the user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional, cast

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ...core.cards.edit import CardEditor
from ..infra.i18n import register, tr
from ..infra.theme import set_role
from .dialogs import confirm

if TYPE_CHECKING:  # pragma: no cover
    from ...core.lore import Lorebook

#: ``run(action)``: the dialog calls ``action()`` (an engine edit), shows a refusal, recounts; True when it was made.
Run = Callable[[Callable[[], Any]], bool]

register({
    "cardparts.greet.add": {"zh": "新增", "en": "Add"},
    "cardparts.greet.remove": {"zh": "删除", "en": "Remove"},
    "cardparts.greet.up": {"zh": "上移", "en": "Move up"},
    "cardparts.greet.down": {"zh": "下移", "en": "Move down"},
    "cardparts.greet.item": {"zh": "{n}. {text}", "en": "{n}. {text}"},
    "cardparts.greet.editing": {"zh": "第 {n} 条备选开场白：", "en": "Alternate greeting {n}:"},
    "cardparts.greet.empty": {"zh": "（空）", "en": "(empty)"},
    "cardparts.greet.none": {"zh": "还没有备选开场白。点「新增」写一条：聊天时可以像换回复一样切换开场白。",
                             "en": "No alternate greetings yet. Add one: in a chat the opening can be swiped like a reply."},
    "cardparts.greet.remove.ask": {"zh": "删除第 {n} 条备选开场白？（保存角色卡之前都可以关掉编辑器不保存）",
                                   "en": "Remove alternate greeting {n}? (Until the card is saved, closing without saving undoes it.)"},
    "cardparts.book.group": {"zh": "世界书", "en": "World books"},
    "cardparts.book.embedded": {"zh": "内嵌世界书：{n} 条", "en": "Embedded world book: {n} entries"},
    "cardparts.book.open": {"zh": "编辑内嵌世界书…", "en": "Edit embedded world book…"},
    "cardparts.book.pending": {"zh": "世界书已放进角色卡编辑器，保存角色卡时写入。",
                               "en": "The book is in the card editor now; it is written when you save the card."},
    "cardparts.links.label": {"zh": "关联的世界书（第一本是主世界书，SillyTavern 的 world）：",
                              "en": "Linked world books (the first is the primary one, SillyTavern's world):"},
    "cardparts.links.add": {"zh": "关联…", "en": "Link…"},
    "cardparts.links.primary": {"zh": "设为主世界书", "en": "Make primary"},
    "cardparts.links.remove": {"zh": "取消关联", "en": "Unlink"},
    "cardparts.links.pick": {"zh": "选择要关联的世界书：", "en": "Choose a world book to link:"},
    "cardparts.links.none": {"zh": "资料库里没有可关联的世界书（在「世界书」里导入）。",
                             "en": "The library has no world book to link (import one under World books)."},
    "cardparts.scripts.group": {"zh": "正则脚本（勾选 = 启用）", "en": "Regex scripts (checked = enabled)"},
    "cardparts.scripts.none": {"zh": "这张卡没有正则脚本。", "en": "This card has no regex scripts."},
    "cardparts.scripts.edit": {"zh": "编辑…", "en": "Edit…"},
    "cardparts.scripts.unnamed": {"zh": "（未命名脚本 {n}）", "en": "(unnamed script {n})"},
    "cardparts.script.title": {"zh": "正则脚本", "en": "Regex script"},
    "cardparts.script.name": {"zh": "名字", "en": "Name"},
    "cardparts.script.find": {"zh": "查找（正则）", "en": "Find (regex)"},
    "cardparts.script.replace": {"zh": "替换为", "en": "Replace with"},
    "cardparts.script.enabled": {"zh": "启用", "en": "Enabled"},
    "cardparts.script.note": {"zh": "其余设置（作用范围、深度、修剪）保持原样。",
                              "en": "Its other settings (scope, depth, trim) are kept as they are."},
})


def ask_yes(parent: QWidget, text: str, yes: str = "") -> bool:
    """A yes/no question before a destructive step (``dialogs.confirm``: No is the default; Enter and Esc answer No)."""
    return confirm(parent, tr("cardeditor.title.short"), text, yes)


def choose_book(parent: QWidget, names: list[str]) -> Optional[str]:
    """One of the library's world book ``names``, or None when cancelled."""
    value, ok = QInputDialog.getItem(parent, tr("cardparts.links.add"), tr("cardparts.links.pick"), names, 0, False)
    return value if ok and value else None


def _row(*buttons: QPushButton) -> QHBoxLayout:
    row = QHBoxLayout()
    for b in buttons:
        b.setAutoDefault(False)
        row.addWidget(b)
    row.addStretch(1)
    return row


def _refuse(text: str) -> None:
    raise ValueError(text)  # shown by the dialog's run() in its status line


def _first_line(text: str, width: int = 60) -> str:
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    return (line[:width] + "…") if len(line) > width else line


class GreetingsPanel(QWidget):
    """The alternate greetings: a list (first line of each, its tokens), the text of the selected one below, and
    新增 / 删除 / 上移 / 下移. Removing a non-empty greeting asks first (No is the default)."""

    def __init__(self, run: Run, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.run = run
        self.editor: Optional[CardEditor] = None
        self._filling = False
        self.counts: dict[str, int] = {}
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.list = QListWidget()
        self.list.setObjectName("greetingList")
        self.list.currentRowChanged.connect(lambda r: self._show(r))
        lay.addWidget(self.list, 1)
        self.add_btn, self.remove_btn = QPushButton(tr("cardparts.greet.add")), QPushButton(tr("cardparts.greet.remove"))
        self.up_btn, self.down_btn = QPushButton(tr("cardparts.greet.up")), QPushButton(tr("cardparts.greet.down"))
        for name, b in (("greetAdd", self.add_btn), ("greetRemove", self.remove_btn), ("greetUp", self.up_btn),
                        ("greetDown", self.down_btn)):
            b.setObjectName(name)
        self.add_btn.clicked.connect(lambda: self.add())
        self.remove_btn.clicked.connect(lambda: self.remove())
        self.up_btn.clicked.connect(lambda: self.move_by(-1))
        self.down_btn.clicked.connect(lambda: self.move_by(1))
        lay.addLayout(_row(self.add_btn, self.remove_btn, self.up_btn, self.down_btn))
        self.hint = QLabel(tr("cardparts.greet.none"))
        self.hint.setWordWrap(True)
        set_role(self.hint, "muted")
        lay.addWidget(self.hint)
        self.text_label = QLabel("")
        lay.addWidget(self.text_label)
        self.text = QPlainTextEdit()
        self.text.setObjectName("greetingText")
        self.text.textChanged.connect(lambda: self._typed())
        lay.addWidget(self.text, 2)

    def load(self, editor: CardEditor, row: int = 0) -> None:
        """Show ``editor``'s greetings, ``row`` selected."""
        self.editor = editor
        self._refill(row)

    def items(self) -> list[str]:
        """The greetings as the editor holds them."""
        return list(self.editor.get("alternate_greetings")) if self.editor is not None else []

    def _refill(self, row: int) -> None:
        items = self.items()
        self._filling = True
        self.list.clear()
        for i, g in enumerate(items):
            self.list.addItem(QListWidgetItem(self._label(i, g)))
        self._filling = False
        self.hint.setVisible(not items)
        self.text.setEnabled(bool(items))
        if items:
            self.list.setCurrentRow(max(0, min(row, len(items) - 1)))
        else:
            self._show(-1)
        self._sync_buttons()

    def _label(self, i: int, text: str) -> str:
        label = tr("cardparts.greet.item", n=i + 1, text=_first_line(text) or tr("cardparts.greet.empty"))
        n = self.counts.get(f"alternate_greetings.{i}")
        return label if n is None else f"{label}  · {tr('cardeditor.tokens', n=n)}"

    def show_tokens(self, fields: dict[str, int]) -> None:
        """Put each greeting's token count (``TokenReport.fields``) on its row."""
        self.counts = fields
        for i, g in enumerate(self.items()):
            it = self.list.item(i)
            if it is not None:
                it.setText(self._label(i, g))

    def _show(self, row: int) -> None:
        items = self.items()
        self._filling = True
        self.text.setPlainText(items[row] if 0 <= row < len(items) else "")
        self._filling = False
        self.text_label.setText(tr("cardparts.greet.editing", n=row + 1) if 0 <= row < len(items) else "")
        self._sync_buttons()

    def _sync_buttons(self) -> None:
        row, n = self.list.currentRow(), self.list.count()
        self.remove_btn.setEnabled(0 <= row < n)
        self.up_btn.setEnabled(0 < row < n)
        self.down_btn.setEnabled(0 <= row < n - 1)

    def _typed(self) -> None:
        row = self.list.currentRow()
        if self._filling or self.editor is None or row < 0:
            return
        text = self.text.toPlainText()
        ed = self.editor
        if self.run(lambda: ed.set(f"alternate_greetings.{row}", text)):
            it = self.list.item(row)
            if it is not None:
                it.setText(self._label(row, text))

    def add(self, text: str = "") -> int:
        """新增: an empty greeting (or ``text``) at the end, selected; returns its index (-1 when refused)."""
        ed = self.editor
        if ed is None:
            return -1
        at = len(self.items())
        if not self.run(lambda: ed.add_item("alternate_greetings", text)):
            return -1
        self._refill(at)
        self.text.setFocus()
        return at

    def remove(self, ask: bool = True) -> bool:
        """删除 the selected greeting (a non-empty one after a question, No the default)."""
        ed, row = self.editor, self.list.currentRow()
        if ed is None or row < 0:
            return False
        if ask and self.items()[row].strip() and not ask_yes(self, tr("cardparts.greet.remove.ask", n=row + 1),
                                                             tr("cardparts.greet.remove")):
            return False
        if not self.run(lambda: ed.remove_item("alternate_greetings", row)):
            return False
        self._refill(row)
        return True

    def move_by(self, step: int) -> bool:
        """上移 (-1) / 下移 (+1) the selected greeting; it stays selected."""
        ed, row = self.editor, self.list.currentRow()
        to = row + step
        if ed is None or row < 0 or not 0 <= to < self.list.count():
            return False
        if not self.run(lambda: ed.move_item("alternate_greetings", row, to)):
            return False
        self._refill(to)
        return True


class CardBookSource:
    """What the book editor (ui/dialogs/book_editor.py) asks of a chat, answered by a :class:`CardEditor`: the card's
    name, its embedded book (``card_book``), writable, and ``save_card_book`` — which puts the book into the edited
    card (``CardEditor.set_book``, lossless: the card form keeps unknown keys); the card editor's 保存 writes it."""

    def __init__(self, editor: CardEditor, on_saved: Callable[[], None]):
        self.editor = editor
        self.on_saved = on_saved

    @property
    def card(self) -> Any:
        """The edited card (the book editor shows its name)."""
        return self.editor.card

    def card_book_writable(self) -> bool:
        """Always: the book goes into the edited card, written when the card is saved."""
        return True

    def card_book(self) -> "Lorebook":
        """The embedded book as the editor holds it (read on the book editor's worker thread)."""
        return self.editor.book()

    def save_card_book(self, book: "Lorebook") -> None:
        """Put ``book`` into the edited card (not written yet: the card editor's 保存 does)."""
        self.editor.set_book(book)
        self.on_saved()


class BooksPanel(QGroupBox):
    """The embedded world book (its entry count, 编辑内嵌世界书… opening the book editor) and the linked library
    books (primary first; 关联… / 取消关联)."""

    def __init__(self, run: Run, parent: Optional[QWidget] = None):
        super().__init__(tr("cardparts.book.group"), parent)
        self.run = run
        self.editor: Optional[CardEditor] = None
        self.book_dialog: Optional[QDialog] = None
        lay = QVBoxLayout(self)
        top = QHBoxLayout()
        self.book_label = QLabel("")
        self.book_btn = QPushButton(tr("cardparts.book.open"))
        self.book_btn.setObjectName("cardBookButton")
        self.book_btn.setAutoDefault(False)
        self.book_btn.clicked.connect(lambda: self.open_book())
        top.addWidget(self.book_label, 1)
        top.addWidget(self.book_btn)
        lay.addLayout(top)
        lay.addWidget(QLabel(tr("cardparts.links.label")))
        self.links = QListWidget()
        self.links.setObjectName("linkedBooks")
        self.links.setMaximumHeight(90)
        lay.addWidget(self.links)
        self.link_btn, self.unlink_btn = QPushButton(tr("cardparts.links.add")), QPushButton(tr("cardparts.links.remove"))
        self.primary_btn = QPushButton(tr("cardparts.links.primary"))
        self.link_btn.clicked.connect(lambda: self.link())
        self.unlink_btn.clicked.connect(lambda: self.unlink())
        self.primary_btn.clicked.connect(lambda: self.make_primary())
        lay.addLayout(_row(self.link_btn, self.unlink_btn, self.primary_btn))

    def load(self, editor: CardEditor) -> None:
        """Show ``editor``'s book and links."""
        self.editor = editor
        self.book_label.setText(tr("cardparts.book.embedded", n=len(editor.book().entries)))
        self.links.clear()
        self.links.addItems(editor.linked_books())

    def open_book(self) -> Optional[QDialog]:
        """编辑内嵌世界书…: the book editor on the edited card's book (saving there puts it into the card)."""
        if self.editor is None:
            return None
        from ...core.chat import Chat
        from .book_editor import BookEditorDialog

        ed = self.editor

        def saved() -> None:
            self.run(lambda: None)  # the card is dirty now: recount, say so
            self.book_label.setText(tr("cardparts.book.embedded", n=len(ed.book().entries)))
            self.book_label.setToolTip(tr("cardparts.book.pending"))

        dlg = BookEditorDialog(cast(Chat, CardBookSource(ed, saved)), self.window())
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.saved.connect(lambda: dlg.note.setText(tr("cardparts.book.pending")))  # not on disk until the card is
        self.book_dialog = dlg
        dlg.show()
        return dlg

    def link(self, name: Optional[str] = None) -> bool:
        """关联…: a library book (asked unless ``name``) added to the links."""
        from ...core.cards.book_links import library_book_names

        ed = self.editor
        if ed is None:
            return False
        have = ed.linked_books()
        if name is None:
            free = [n for n in library_book_names() if n not in have]
            if not free:
                self.run(lambda: _refuse(tr("cardparts.links.none")))
                return False
            name = choose_book(self, free)
            if name is None:
                return False
        if not self.run(lambda: ed.set_linked_books(have + [name])):
            return False
        self.load(ed)
        return True

    def make_primary(self) -> bool:
        """设为主世界书: the selected book first (SillyTavern's ``world``, the card's primary book)."""
        ed, row = self.editor, self.links.currentRow()
        if ed is None or row <= 0:
            return False
        names = ed.linked_books()
        names.insert(0, names.pop(row))
        if not self.run(lambda: ed.set_linked_books(names)):
            return False
        self.load(ed)
        return True

    def unlink(self) -> bool:
        """取消关联 the selected book."""
        ed, row = self.editor, self.links.currentRow()
        if ed is None or row < 0:
            return False
        names = ed.linked_books()
        del names[row]
        if not self.run(lambda: ed.set_linked_books(names)):
            return False
        self.load(ed)
        return True


class ScriptDialog(QDialog):
    """One regex script: its name, find regex, replacement and on/off; the other keys are kept (:meth:`script`)."""

    def __init__(self, script: dict[str, Any], parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("regexScriptDialog")
        self.setWindowTitle(tr("cardparts.script.title"))
        self.resize(560, 360)
        self.original = script
        form = QFormLayout(self)
        self.name_edit = QLineEdit(str(script.get("scriptName") or ""))
        self.find_edit = QLineEdit(str(script.get("findRegex") or ""))
        self.replace_edit = QPlainTextEdit(str(script.get("replaceString") or ""))
        self.enabled = QCheckBox(tr("cardparts.script.enabled"))
        self.enabled.setChecked(not script.get("disabled"))
        form.addRow(tr("cardparts.script.name"), self.name_edit)
        form.addRow(tr("cardparts.script.find"), self.find_edit)
        form.addRow(tr("cardparts.script.replace"), self.replace_edit)
        form.addRow("", self.enabled)
        note = QLabel(tr("cardparts.script.note"))
        set_role(note, "muted")
        form.addRow(note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def script(self) -> dict[str, Any]:
        """The script with the form's values (every other key as it was)."""
        return {**self.original, "scriptName": self.name_edit.text(), "findRegex": self.find_edit.text(),
                "replaceString": self.replace_edit.toPlainText(), "disabled": not self.enabled.isChecked()}


def edit_script_dialog(parent: QWidget, script: dict[str, Any]) -> Optional[dict[str, Any]]:
    """Show :class:`ScriptDialog` (modal); the edited script, or None when cancelled."""
    dlg = ScriptDialog(script, parent)
    return dlg.script() if dlg.exec() == QDialog.DialogCode.Accepted else None


class ScriptsPanel(QGroupBox):
    """The card's regex scripts: one checkable row each (checked = enabled) and 编辑… for the selected one."""

    def __init__(self, run: Run, parent: Optional[QWidget] = None):
        super().__init__(tr("cardparts.scripts.group"), parent)
        self.run = run
        self.editor: Optional[CardEditor] = None
        self._filling = False
        lay = QVBoxLayout(self)
        self.list = QListWidget()
        self.list.setObjectName("scriptList")
        self.list.itemChanged.connect(lambda it: self._toggled(it))
        self.list.itemDoubleClicked.connect(lambda _it: self.edit())
        lay.addWidget(self.list, 1)
        self.none = QLabel(tr("cardparts.scripts.none"))
        set_role(self.none, "muted")
        lay.addWidget(self.none)
        self.edit_btn = QPushButton(tr("cardparts.scripts.edit"))
        self.edit_btn.setObjectName("scriptEdit")
        self.edit_btn.clicked.connect(lambda: self.edit())
        lay.addLayout(_row(self.edit_btn))

    def load(self, editor: CardEditor) -> None:
        """Show ``editor``'s scripts."""
        self.editor = editor
        self._filling = True
        row = self.list.currentRow()
        self.list.clear()
        for i, s in enumerate(editor.scripts()):
            it = QListWidgetItem(str(s.get("scriptName") or "") or tr("cardparts.scripts.unnamed", n=i + 1))
            it.setFlags(it.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            it.setCheckState(Qt.CheckState.Unchecked if s.get("disabled") else Qt.CheckState.Checked)
            self.list.addItem(it)
        self._filling = False
        n = self.list.count()
        self.none.setVisible(n == 0)
        self.list.setVisible(n > 0)
        self.edit_btn.setEnabled(n > 0)
        if n:
            self.list.setCurrentRow(max(0, min(row, n - 1)))

    def _toggled(self, it: QListWidgetItem) -> None:
        ed = self.editor
        if self._filling or ed is None:
            return
        i, on = self.list.row(it), it.checkState() == Qt.CheckState.Checked
        self.run(lambda: ed.set_script_enabled(i, on))

    def edit(self, script: Optional[dict[str, Any]] = None) -> bool:
        """编辑… the selected script (asked in :class:`ScriptDialog` unless ``script`` is given)."""
        ed, row = self.editor, self.list.currentRow()
        if ed is None or row < 0:
            return False
        new = script if script is not None else edit_script_dialog(self, ed.scripts()[row])
        if new is None or not self.run(lambda: ed.set_script(row, new)):
            return False
        self.load(ed)
        return True


__all__ = ["BooksPanel", "CardBookSource", "GreetingsPanel", "ScriptDialog", "ScriptsPanel", "ask_yes",
           "choose_book", "edit_script_dialog"]
