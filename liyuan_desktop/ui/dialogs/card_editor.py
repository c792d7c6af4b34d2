"""The character card editor in the window (issue 26 §1): SillyTavern's character panel as a dialog.

Every field of a V2/V3 card — name, avatar, description, personality, scenario, first message, the alternate
greetings (ui/dialogs/card_parts.py), example messages, system prompt, post-history instructions, creator's notes,
tags, creator, version, the Character's Note (text, depth, role), talkativeness, the embedded world book (opened in
the book editor) and the linked library books, the regex scripts — with each text field's token count and the
card's total (SillyTavern's "total" and "permanent" tokens; the open chat's counter when it plays this card, else
the estimate every chat starts from).

The dialog is a face on :class:`~liyuan_desktop.core.cards.edit.CardEditor` (the engine's one editing API): each
widget's change is one ``CardEditor.set`` (a refused value is named in the status line, in the window's language),
保存 writes a new version of the card (the old one kept in ``versions/``); every field the dialog does not show is
written back as it was. 新建角色卡… starts from an empty card (``new_card_json``) that exists only in the dialog
until 保存 creates it in the library (``create_card``). After a save the library lists follow the ``library``
notice and a chat open on the card reads it again (``Chat.refresh_card``: its next beat uses the edit and says so).
Closing with unsaved edits asks first (No — keep editing — is the default).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeySequence, QPixmap, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ...core.cards import CardError
from ...core.cards.edit import CardEditor, CardVersion, create_card, field_spec
from ...core.chat.changes import LIBRARY
from ..infra.i18n import register, show, tr
from ..infra.session import Session, session_or_own
from ..infra.theme import set_role
from . import avatar_crop
from .card_parts import BooksPanel, GreetingsPanel, ScriptsPanel, ask_yes
from .card_versions import VersionsDialog, restored_text

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "cardeditor.title": {"zh": "编辑角色卡：{name}", "en": "Edit card: {name}"},
    "cardeditor.title.new": {"zh": "新建角色卡", "en": "New card"},
    "cardeditor.title.short": {"zh": "角色卡编辑器", "en": "Card editor"},
    "cardeditor.edit": {"zh": "编辑角色卡…", "en": "Edit card…"},
    "cardeditor.new": {"zh": "新建角色卡…", "en": "New card…"},
    "cardeditor.new.name": {"zh": "新角色", "en": "New character"},
    "cardeditor.tab.main": {"zh": "角色定义", "en": "Definitions"},
    "cardeditor.tab.greetings": {"zh": "备选开场白", "en": "Alternate greetings"},
    "cardeditor.tab.prompts": {"zh": "提示词与示例", "en": "Prompts and examples"},
    "cardeditor.tab.meta": {"zh": "作者的话", "en": "Creator's notes"},
    "cardeditor.tab.books": {"zh": "世界书与正则", "en": "World books and regex"},
    "cardeditor.avatar.choose": {"zh": "选择头像…", "en": "Choose picture…"},
    "cardeditor.avatar.filter": {"zh": "图片 (*.png *.jpg *.jpeg *.webp *.bmp *.gif)",
                                 "en": "Images (*.png *.jpg *.jpeg *.webp *.bmp *.gif)"},
    "cardeditor.avatar.bad": {"zh": "读不出这张图片：{file}", "en": "Cannot read this image: {file}"},
    "cardeditor.avatar.none": {"zh": "（默认头像）", "en": "(default picture)"},
    "cardeditor.tokens": {"zh": "{n} tokens", "en": "{n} tokens"},
    "cardeditor.head": {"zh": "{label} · {tokens}", "en": "{label} · {tokens}"},
    "cardeditor.total": {"zh": "总计 {total} tokens（常驻 {permanent}）", "en": "Total {total} tokens (permanent {permanent})"},
    "cardeditor.tags.hint": {"zh": "用逗号分隔", "en": "Comma-separated"},
    "cardeditor.depth": {"zh": "深度", "en": "Depth"},
    "cardeditor.role": {"zh": "身份", "en": "Role"},
    "cardeditor.role.system": {"zh": "系统", "en": "System"},
    "cardeditor.role.user": {"zh": "用户", "en": "User"},
    "cardeditor.role.assistant": {"zh": "AI 助手", "en": "Assistant"},
    "cardeditor.note.hint": {"zh": "角色备注：在聊天记录中按深度插入（SillyTavern 的 Character's Note）",
                             "en": "Character's Note: inserted into the chat history at a depth"},
    "cardeditor.save": {"zh": "保存", "en": "Save"},
    "cardeditor.close": {"zh": "关闭", "en": "Close"},
    "cardeditor.saved": {"zh": "已保存（旧版本已留存）", "en": "Saved (the previous version is kept)"},
    "cardeditor.created": {"zh": "已新建角色卡「{name}」", "en": "Created the card \"{name}\""},
    "cardeditor.refused": {"zh": "没改成：{err}", "en": "Not changed: {err}"},
    "cardeditor.unsaved": {"zh": "角色卡有没保存的修改。不保存就关闭？",
                           "en": "The card has unsaved changes. Close without saving?"},
    "cardeditor.discard": {"zh": "不保存，关闭", "en": "Close without saving"},
    "cardeditor.saving": {"zh": "正在保存角色卡…", "en": "Saving the card…"},
    "cardeditor.loading": {"zh": "正在读取角色卡…", "en": "Reading the card…"},
    "cardeditor.no.card": {"zh": "先在列表里选一张角色卡", "en": "Select a card in the list first"},
})

#: The text fields of each tab, in SillyTavern's order (keys of ``core.cards.edit.FIELDS``).
_MAIN = ("description", "personality", "scenario", "first_mes")
_PROMPTS = ("mes_example", "system_prompt", "post_history_instructions")
AVATAR_SIZE = (112, 168)  # px, SillyTavern's 2:3 portrait


class CardEditorDialog(QDialog):
    """The card editor (module doc) on ``editor``. ``new``: the card exists only here until 保存 creates it.
    ``session``: the window's (its notices are broadcast; its open chat is refreshed after a save)."""

    def __init__(self, editor: CardEditor, session: Optional[Session] = None, parent: Optional[QWidget] = None,
                 *, new: bool = False):
        super().__init__(parent)
        self.setObjectName("cardEditor")
        self.editor = editor
        self.session = session_or_own(session, self)
        self.is_new = new
        self.picture_set = False
        self._filling = False
        self.inputs: dict[str, QWidget] = {}
        self.refused: dict[str, str] = {}  # field key -> why its widget's value is not in the card (save waits)
        self.heads: dict[str, QLabel] = {}
        self.resize(980, 720)
        self._recount_timer = QTimer(self)
        self._recount_timer.setSingleShot(True)
        self._recount_timer.setInterval(200)
        self._recount_timer.timeout.connect(self.recount)
        lay = QVBoxLayout(self)
        top = QHBoxLayout()
        top.addLayout(self._build_avatar())
        top.addLayout(self._build_header(), 1)
        top.setAlignment(Qt.AlignmentFlag.AlignTop)
        lay.addLayout(top)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._text_tab(_MAIN), tr("cardeditor.tab.main"))
        self.greetings = GreetingsPanel(self.run)
        self.tabs.addTab(self.greetings, tr("cardeditor.tab.greetings"))
        self.tabs.addTab(self._prompts_tab(), tr("cardeditor.tab.prompts"))
        self.tabs.addTab(self._meta_tab(), tr("cardeditor.tab.meta"))
        self.books = BooksPanel(self.run)
        self.scripts = ScriptsPanel(self.run)
        books_tab = QWidget()
        bl = QVBoxLayout(books_tab)
        bl.addWidget(self.books)
        bl.addWidget(self.scripts, 1)
        self.tabs.addTab(books_tab, tr("cardeditor.tab.books"))
        lay.addWidget(self.tabs, 1)
        lay.addLayout(self._build_bottom())
        self.versions_btn.setEnabled(not new)
        self.load(editor)

    # -- building -------------------------------------------------------------------------------------------
    def _build_avatar(self) -> QVBoxLayout:
        col = QVBoxLayout()
        self.avatar = QLabel()
        self.avatar.setObjectName("cardAvatar")
        self.avatar.setFixedSize(*AVATAR_SIZE)
        self.avatar.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.avatar.setWordWrap(True)
        self.avatar.setFrameShape(QFrame.Shape.StyledPanel)
        set_role(self.avatar, "muted")
        self.avatar_btn = QPushButton(tr("cardeditor.avatar.choose"))
        self.avatar_btn.setObjectName("cardAvatarButton")
        self.avatar_btn.setAutoDefault(False)
        self.avatar_btn.clicked.connect(lambda: self.choose_avatar())
        col.addWidget(self.avatar)
        col.addWidget(self.avatar_btn)
        return col

    def _build_header(self) -> QFormLayout:
        form = QFormLayout()
        for key in ("name", "tags", "creator", "character_version", "talkativeness"):
            form.addRow(self._head(key), self._input(key))
        self.inputs["tags"].setProperty("placeholderText", tr("cardeditor.tags.hint"))
        self.total_label = QLabel("")
        self.total_label.setObjectName("cardTokenTotal")
        form.addRow(self.total_label)
        return form

    def _build_bottom(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.status = QLabel("")
        self.status.setObjectName("cardEditorStatus")
        self.status.setWordWrap(True)
        row.addWidget(self.status, 1)
        self.save_btn = QPushButton(tr("cardeditor.save"))
        self.save_btn.setObjectName("cardEditorSave")
        self.save_btn.clicked.connect(lambda: self.save_clicked())
        self.save_key = QShortcut(QKeySequence(QKeySequence.StandardKey.Save), self)  # Ctrl+S
        self.save_key.activated.connect(lambda: self.save_clicked())
        self.close_btn = QPushButton(tr("cardeditor.close"))
        self.close_btn.setAutoDefault(False)
        self.close_btn.clicked.connect(lambda: self.reject())
        self.versions_btn = QPushButton(tr("cardver.button"))
        self.versions_btn.setObjectName("cardVersionsButton")
        self.versions_btn.setAutoDefault(False)
        self.versions_btn.clicked.connect(lambda: self.show_versions())
        row.addWidget(self.versions_btn)
        row.addWidget(self.save_btn)
        row.addWidget(self.close_btn)
        return row

    def _head(self, key: str) -> QLabel:
        label = QLabel(show(field_spec(key).label))
        self.heads[key] = label
        return label

    def _input(self, key: str) -> QWidget:
        """The widget for field ``key`` by its kind; its change is one ``CardEditor.set``."""
        spec = field_spec(key)
        w: QWidget
        if spec.kind == "text":
            w = QPlainTextEdit()
            w.textChanged.connect(lambda: self._changed(key))
        elif spec.kind in ("line", "list"):
            w = QLineEdit()
            w.textChanged.connect(lambda _t: self._changed(key))
        elif spec.kind == "int":
            w = QSpinBox()
            w.setRange(int(spec.minimum or 0), int(spec.maximum or 0))
            w.valueChanged.connect(lambda _v: self._changed(key))
        elif spec.kind == "float":
            w = QDoubleSpinBox()
            w.setRange(spec.minimum or 0.0, spec.maximum or 1.0)
            w.setSingleStep(0.05)
            w.valueChanged.connect(lambda _v: self._changed(key))
        else:
            w = QComboBox()
            for c in spec.choices:
                w.addItem(tr(f"cardeditor.role.{c}"), c)
            w.currentIndexChanged.connect(lambda _i: self._changed(key))
        if spec.kind in ("int", "float", "choice"):
            w.setMaximumWidth(160)
        w.setObjectName("field_" + key.replace(".", "_"))
        self.inputs[key] = w
        return w

    def _text_tab(self, keys: tuple[str, ...]) -> QWidget:
        page = QWidget()
        grid = QGridLayout(page)
        for i, key in enumerate(keys):
            grid.addWidget(self._head(key), (i // 2) * 2, i % 2)
            grid.addWidget(self._input(key), (i // 2) * 2 + 1, i % 2)
        return page

    def _prompts_tab(self) -> QWidget:
        page = self._text_tab(_PROMPTS)
        grid = page.layout()
        assert isinstance(grid, QGridLayout)
        note = QWidget()
        nl = QVBoxLayout(note)
        nl.setContentsMargins(0, 0, 0, 0)
        nl.addWidget(self._head("depth_prompt.prompt"))
        nl.addWidget(self._input("depth_prompt.prompt"), 1)
        row = QHBoxLayout()
        for key, text in (("depth_prompt.depth", "cardeditor.depth"), ("depth_prompt.role", "cardeditor.role")):
            row.addWidget(QLabel(tr(text)))
            row.addWidget(self._input(key))
        row.addStretch(1)
        nl.addLayout(row)
        hint = QLabel(tr("cardeditor.note.hint"))
        set_role(hint, "muted")
        nl.addWidget(hint)
        grid.addWidget(note, 2, 1, 2, 1)
        return page

    def _meta_tab(self) -> QWidget:
        page = QWidget()
        lay = QVBoxLayout(page)
        lay.addWidget(self._head("creator_notes"))
        lay.addWidget(self._input("creator_notes"), 1)
        return page

    # -- showing the card -----------------------------------------------------------------------------------
    def load(self, editor: CardEditor) -> None:
        """Show ``editor``'s card in every widget."""
        self.editor = editor
        self._filling = True
        for key, value in editor.values().items():
            w = self.inputs.get(key)
            if isinstance(w, QPlainTextEdit):
                w.setPlainText(value)
            elif isinstance(w, QLineEdit):
                w.setText(", ".join(value) if isinstance(value, list) else value)
            elif isinstance(w, (QSpinBox, QDoubleSpinBox)):
                w.setValue(value)
            elif isinstance(w, QComboBox):
                w.setCurrentIndex(max(0, w.findData(value)))
        self._filling = False
        self.greetings.load(editor)
        self.books.load(editor)
        self.scripts.load(editor)
        self._show_avatar()
        self._title()
        self.recount()

    def _title(self) -> None:
        name = self.editor.get("name")
        self.setWindowTitle(tr("cardeditor.title.new") if self.is_new else tr("cardeditor.title", name=name))

    def _show_avatar(self) -> None:
        data = self.editor.avatar() if (self.picture_set or not self.is_new) else None
        pix = QPixmap()
        if data and pix.loadFromData(data):
            self.avatar.setPixmap(pix.scaled(*AVATAR_SIZE, Qt.AspectRatioMode.KeepAspectRatio,
                                             Qt.TransformationMode.SmoothTransformation))
        else:
            self.avatar.setPixmap(QPixmap())
            self.avatar.setText(tr("cardeditor.avatar.none"))

    def recount(self) -> None:
        """Token counts: each text field's header, each greeting's row and the total."""
        chat = self.session.chat
        counter = chat.tokens if chat is not None and self._plays_this(chat) else None
        report = self.editor.tokens(counter)
        for key, head in self.heads.items():
            label = show(field_spec(key).label)
            n = report.fields.get(key)
            head.setText(label if n is None else tr("cardeditor.head", label=label, tokens=tr("cardeditor.tokens", n=n)))
        self.greetings.show_tokens(report.fields)
        self.total_label.setText(tr("cardeditor.total", total=report.total, permanent=report.permanent))

    def _plays_this(self, chat: "Chat") -> bool:
        path = chat.card.path
        return bool(path) and not self.is_new and Path(path).resolve() == self.editor.path.resolve()

    # -- editing --------------------------------------------------------------------------------------------
    def run(self, action: Callable[[], Any]) -> bool:
        """Make one edit (``action`` calls the engine); a refused value is named in the status line. True when done."""
        try:
            action()
        except (CardError, ValueError, OSError) as e:
            self.status.setText(tr("cardeditor.refused", err=show(e)))
            set_role(self.status, "error")
            return False
        self.status.setText("")
        self._recount_timer.start()
        return True

    def value(self, key: str) -> Any:
        """What field ``key``'s widget holds now (as ``CardEditor.set`` takes it)."""
        w = self.inputs[key]
        if isinstance(w, QPlainTextEdit):
            return w.toPlainText()
        if isinstance(w, QLineEdit):
            return w.text()
        if isinstance(w, (QSpinBox, QDoubleSpinBox)):
            return w.value()
        assert isinstance(w, QComboBox)
        return w.currentData()

    def _changed(self, key: str) -> None:
        if self._filling:
            return
        value = self.value(key)
        if not self.run(lambda: self.editor.set(key, value)):
            self.refused[key] = self.status.text()
            return
        self.refused.pop(key, None)
        if key == "name":
            self._title()

    def choose_avatar(self, path: Optional[str] = None) -> bool:
        """选择头像…: a picture file (asked unless ``path``), cropped to 2:3 or whole (asked, ui/dialogs/avatar_crop.py),
        as the card's avatar (JPEG/WebP converted to PNG; a whole PNG keeps its other chunks, and the old picture's
        text chunks are carried over by the engine)."""
        path = path or avatar_crop.choose_image(self)
        if not path:
            return False
        read: list[bytes] = []
        if not self.run(lambda: read.append(avatar_crop.image_png(path))):  # a file Qt cannot read is named in the status line
            return False
        data = avatar_crop.ask_crop(self, read[0])  # SillyTavern's 2:3 crop, or the whole picture
        if data is None or not self.run(lambda: self.editor.set_avatar(data)):
            return False
        self.picture_set = True
        self._show_avatar()
        return True

    # -- saving and closing ---------------------------------------------------------------------------------
    def save(self) -> bool:
        """保存 (at once, on this thread): a new version of the card (a new card: created in the library). The lists
        follow the ``library`` notice; a chat open on the card reads it again. False (the reason in the status line)
        when refused — also while a field holds a value the card refused (an empty name …): nothing is saved that
        differs from the form. The button saves on a worker (:meth:`save_async`)."""
        if not self._may_save():
            return False
        try:
            written = self._write()
        except (CardError, OSError) as e:
            return self._failed(e)
        return self._saved(written)

    async def save_async(self) -> bool:
        """The 保存 button: :meth:`save` with the writing on a worker (a card with a big world book takes a moment;
        ``ui/infra/tasks.run_in_worker``); the dialog takes no edits meanwhile."""
        from ..infra.tasks import run_in_worker

        if not self._may_save():
            return False
        self.setEnabled(False)
        try:
            written = await run_in_worker(self, lambda _w: self._write(), label=tr("cardeditor.saving"),
                                          cancellable=False)
        except (CardError, OSError) as e:
            return self._failed(e)
        finally:
            self.setEnabled(True)
        return self._saved(written)

    def save_clicked(self) -> Any:
        """保存 clicked: :meth:`save_async` on the running loop (its task), else :meth:`save`."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self.save()
        return asyncio.ensure_future(self.save_async())

    def _may_save(self) -> bool:
        if self.refused:
            self.status.setText(next(iter(self.refused.values())))
            set_role(self.status, "error")
            return False
        return True

    def _failed(self, e: Exception) -> bool:
        self.status.setText(show(e))
        set_role(self.status, "error")
        return False

    def _write(self) -> CardEditor:
        """Write the card (no widget touched: may run on a worker); the editor holding the saved card. A new card is
        created in the library (``create_card`` from the edited document) with its picture and linked books."""
        ed = self.editor
        if not self.is_new:
            ed.save()
            return ed
        made = create_card(ed.get("name"), base=ed.document())
        links = ed.linked_books()
        if self.picture_set or links:
            picture = ed.avatar() if self.picture_set else None
            if picture:
                made.set_avatar(picture)
            if links:
                made.set_linked_books(links)
            made.save()
        return made

    def _saved(self, written: CardEditor) -> bool:
        """After a save: say so, tell the lists (``library``) and refresh a chat open on the card."""
        created = self.is_new
        self.editor, self.is_new, self.picture_set = written, False, False
        self.versions_btn.setEnabled(True)
        self._title()
        self.status.setText(tr("cardeditor.created", name=written.get("name")) if created else tr("cardeditor.saved"))
        set_role(self.status, "ok")
        self._announce()
        self.greetings.load(written, self.greetings.list.currentRow())  # the saved card's lists, the texts as typed
        self.books.load(written)
        self.scripts.load(written)
        self._show_avatar()
        return True

    def _announce(self) -> None:
        """The card file changed: the lists follow the ``library`` notice; a chat open on the card reads it again
        (``Chat.refresh_card``: its next beat uses the edit and says so)."""
        self.session.broadcast(LIBRARY)
        chat = self.session.chat
        if chat is not None and self._plays_this(chat) and chat.refresh_card() is not None:
            self.session.broadcast(chat.last_changes)

    def show_versions(self) -> Optional[VersionsDialog]:
        """版本…: the card's earlier versions (ui/dialogs/card_versions.py); a restore is shown here at once."""
        if self.is_new:
            return None
        dlg = VersionsDialog(self.editor.path.parent, self.editor.get("name"), self.editor.dirty, self)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.accepted.connect(lambda: self._restored(dlg.restored))
        self.versions_dialog = dlg
        dlg.open()
        return dlg

    def _restored(self, version: Optional[CardVersion]) -> None:
        if version is None:
            return
        try:
            editor = CardEditor.open(self.editor.path)
        except (CardError, OSError) as e:
            self._failed(e)
            return
        self.refused.clear()
        self.load(editor)
        self.status.setText(restored_text(version))
        set_role(self.status, "ok")
        self._announce()

    def reject(self) -> None:
        """关闭 / Esc / the window's close box: with unsaved edits, ask first (No — keep editing — is the default)."""
        if self.editor.dirty and not ask_yes(self, tr("cardeditor.unsaved"), tr("cardeditor.discard")):
            return
        super().reject()


__all__ = ["AVATAR_SIZE", "CardEditorDialog"]
