"""The chapter editor of an agent chat (写长篇): one chapter file of ``正文/``, written the way a novelist writes.

* A writing font: a serif CJK face when the system has one (Noto Serif CJK / Source Han Serif / Songti / SimSun),
  else the window's CJK font, larger than the UI text.
* A line-width limit: the text stays in a centred column of :data:`COLUMN_CHARS` full-width characters however wide
  the pane is (viewport margins, recomputed on resize); soft wrap at the column's edge.
* A distraction-free mode (F11 or the 专注 button): ``focusModeChanged(bool)`` asks the window to hide every other
  pane (ui/window/agent_desk.py does that for the main window); F11 or Esc leaves it.
* Autosave: after :attr:`ChapterEditor.autosave_ms` (2 s) without typing, unsaved changes are written through
  :meth:`StoryFolder.write` and recorded as a ``user`` checkpoint 「自动保存 <name>」 — the same path as 保存
  (Ctrl+S), which records 「编辑 <name>」. Autosave never overwrites a file that changed on disk since it was opened
  (the agent, a restore): it shows the conflict banner and waits for the user.
* The 字数 of the text in the editor (core/text.py ``count_words``: CJK characters one each, a Latin word one).

When the file changes on disk (the agent, a restore) :meth:`ChapterEditor.check_disk` reloads an unmodified editor
and says so, or warns when there are unsaved edits (saving then asks before overwriting). Dialogs go through the
callables ``confirm`` and ``inform`` (instance attributes) so tests replace them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QContextMenuEvent, QFont, QFontDatabase, QKeySequence, QResizeEvent, QShortcut, QTextOption
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QToolButton, QVBoxLayout, QWidget

from ...core.errors import ToolError
from ...core.text import count_words
from ..dialogs.dialogs import confirm, inform
from ..infra.i18n import register, show, tr
from ..infra.theme import set_role

register({
    "desk.col.title": {"zh": "章节", "en": "Chapter"},
    "desk.chapter.tip": {"zh": "文件：{name}（{size} 个 UTF-16 字符）", "en": "File: {name} ({size} UTF-16 units)"},
    "desk.focus": {"zh": "专注", "en": "Focus"},
    "desk.focus.tip": {"zh": "专注写作：只留编辑器，隐藏其他窗格（F11；再按 F11 或 Esc 退出）",
                       "en": "Distraction-free: only the editor, every other pane hidden (F11; F11 or Esc to leave)"},
    "desk.focus.leave": {"zh": "退出专注", "en": "Leave focus"},
    "desk.words": {"zh": "{n} 字", "en": "{n} words"},
    "desk.autosaved": {"zh": "已自动保存 {name}（记了检查点）", "en": "Autosaved {name} (checkpoint made)"},
    "desk.autosave.held": {"zh": "没有自动保存：文件在磁盘上被改过，请先决定保留哪一份。",
                           "en": "Not autosaved: the file changed on disk; decide which version to keep first."},
    "desk.autosave.tip": {"zh": "停笔约 2 秒后自动保存，并记一个检查点（可在「检查点」里找回任何一版）",
                          "en": "Saved automatically about 2 s after you stop typing, with a checkpoint"},
})

COLUMN_CHARS = 36
"""Width of the writing column in full-width characters (a printed novel's line is ~30–40)."""

SERIF_FAMILIES = ("Noto Serif CJK SC", "Noto Serif SC", "Source Han Serif SC", "Source Han Serif CN", "Songti SC",
                  "STSong", "SimSun", "宋体", "AR PL UMing CN")
"""Writing faces tried in order; the first the font database has is used."""


def writing_font(base: QFont) -> QFont:
    """The editor's font: the first of :data:`SERIF_FAMILIES` the system has (else ``base``'s family), 14 pt."""
    f = QFont(base)
    have = set(QFontDatabase.families())
    for fam in SERIF_FAMILIES:
        if fam in have:
            f.setFamily(fam)
            break
    f.setPointSizeF(max(base.pointSizeF(), 14.0))
    return f


class WritingEdit(QPlainTextEdit):
    """A QPlainTextEdit whose text stays in a centred column ``column_chars`` full-width characters wide (``None``:
    the whole width), soft-wrapped at the column edge."""

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.column_chars: Optional[int] = COLUMN_CHARS
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)  # a long Latin run wraps too
        self.setFont(writing_font(self.font()))

    def column_px(self) -> int:
        """The column's text width in pixels (full-width character advance × column_chars)."""
        return self.fontMetrics().horizontalAdvance("中") * (self.column_chars or 0) + 8

    def _fit(self) -> None:
        width = self.width() - 2 * self.frameWidth() - (self.verticalScrollBar().width()
                                                        if self.verticalScrollBar().isVisible() else 0)
        side = 12
        if self.column_chars:
            side = max(12, (width - self.column_px()) // 2)
        self.setViewportMargins(side, 12, side, 12)

    def resizeEvent(self, e: QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(e)
        self._fit()

    def contextMenuEvent(self, e: QContextMenuEvent) -> None:  # noqa: N802 - Qt API
        """Qt's own text menu, then :attr:`extra_actions` (改写 / 扩写 / 缩写 the selection: rewrite_dialog.py)."""
        menu = self.createStandardContextMenu(e.pos())
        extra = getattr(self, "extra_actions", [])
        if extra:
            menu.addSeparator()
            for act in extra:
                act.setEnabled(self.textCursor().hasSelection() and not self.isReadOnly())
                menu.addAction(act)
        menu.exec(e.globalPos())
        menu.deleteLater()

    def set_column(self, chars: Optional[int]) -> None:
        """Limit the line width to ``chars`` full-width characters (None: no limit)."""
        self.column_chars = chars
        self._fit()


class ChapterEditor(QWidget):
    """One chapter in a :class:`WritingEdit`. ``open(story, history, name)``; ``save()``; ``autosave()``; ``dirty``;
    ``check_disk()``; ``set_focus_mode(bool)``. Signals: ``saved(name)`` after a save (the file is written and a
    user checkpoint made: 「编辑 <name>」, or 「自动保存 <name>」 by autosave); ``autosaved(name)`` after an autosave
    too; ``focusModeChanged(bool)``."""

    saved = Signal(str)
    autosaved = Signal(str)
    focusModeChanged = Signal(bool)

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.story: Any = None
        self.history: Any = None
        self.name: Optional[str] = None
        self._disk_text: Optional[str] = None  # the file's text when opened / last saved / reloaded
        self._crlf = False
        self.focus_mode = False
        self.autosave_ms = 2000
        self.confirm: Callable[[str, str], bool] = self._confirm_dialog
        self.inform: Callable[[str, str], None] = self._inform_dialog

        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        head = QHBoxLayout()
        self.title = QLabel(tr("story.editor.none"))
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        f = self.title.font()
        f.setBold(True)
        self.title.setFont(f)
        head.addWidget(self.title, 1)
        self.words = QLabel("")
        set_role(self.words, "muted")
        self.words.setToolTip(tr("desk.autosave.tip"))
        head.addWidget(self.words)
        self.reload_btn = QPushButton(tr("story.editor.reload"))
        self.reload_btn.clicked.connect(self.reload)
        self.reload_btn.hide()
        head.addWidget(self.reload_btn)
        self.focus_btn = QToolButton()
        self.focus_btn.setText(tr("desk.focus"))
        self.focus_btn.setToolTip(tr("desk.focus.tip"))
        self.focus_btn.setCheckable(True)
        self.focus_btn.toggled.connect(self.set_focus_mode)
        head.addWidget(self.focus_btn)
        self.save_btn = QPushButton(tr("save"))
        self.save_btn.setToolTip("Ctrl+S · " + tr("desk.autosave.tip"))
        self.save_btn.clicked.connect(self.save)
        head.addWidget(self.save_btn)
        lay.addLayout(head)
        self.banner = QLabel("")
        self.banner.setWordWrap(True)
        set_role(self.banner, "banner")
        self.banner.hide()
        lay.addWidget(self.banner)
        self.text = WritingEdit()
        self.text.setReadOnly(True)
        self.text.document().modificationChanged.connect(self._update_title)
        self.text.document().contentsChanged.connect(self._edited)
        lay.addWidget(self.text, 1)
        self._autosave_timer = QTimer(self)
        self._autosave_timer.setSingleShot(True)
        self._autosave_timer.timeout.connect(self.autosave)
        self._count_timer = QTimer(self)  # the 字数 follows typing without counting on every key
        self._count_timer.setSingleShot(True)
        self._count_timer.setInterval(300)
        self._count_timer.timeout.connect(self.update_words)
        QShortcut(QKeySequence.StandardKey.Save, self, activated=self.save,
                  context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        QShortcut(QKeySequence(Qt.Key.Key_F11), self, activated=lambda: self.set_focus_mode(not self.focus_mode),
                  context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, activated=lambda: self.set_focus_mode(False),
                  context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self._update_title()

    # -- dialogs (replaced in tests) ------------------------------------------------------------------------
    def _confirm_dialog(self, title: str, text: str) -> bool:
        return confirm(self, title, text)

    def _inform_dialog(self, title: str, text: str) -> None:
        inform(self, title, text)

    # -- state ----------------------------------------------------------------------------------------------
    @property
    def dirty(self) -> bool:
        """Unsaved changes in the editor."""
        return self.name is not None and self.text.document().isModified()

    @property
    def autosave_pending(self) -> bool:
        """An autosave is waiting for the pause to end."""
        return self._autosave_timer.isActive()

    def editor_text(self) -> str:
        """The editor's text exactly (no-break spaces kept; line ends as the file had them)."""
        t = self.text.document().toRawText().replace("\u2029", "\n")
        return t.replace("\n", "\r\n") if self._crlf else t

    def word_count(self) -> int:
        """字数 of the editor's text (core/text.py count_words)."""
        return count_words(self.text.document().toRawText())

    def _path(self) -> Path:
        return self.story.resolve(self.name)

    def _read_disk(self) -> Optional[str]:
        """The file's text now, or None when it is gone. Raises UnicodeDecodeError / OSError."""
        try:
            with open(self._path(), "r", encoding="utf-8", newline="") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def _update_title(self, *_a: Any) -> None:
        if self.name is None:
            self.title.setText(tr("story.editor.none"))
            self.save_btn.setEnabled(False)
            self.words.setText("")
            return
        mark = "● " if self.dirty else ""
        self.title.setText(mark + self.name + ("  " + tr("story.editor.unsaved") if self.dirty else ""))
        self.save_btn.setEnabled(True)

    def update_words(self) -> None:
        """字数 under the editor again (the text changed, or the language switched)."""
        self.words.setText(tr("desk.words", n=self.word_count()) if self.name is not None else "")

    def _edited(self) -> None:
        if self.name is None or self.text.isReadOnly():
            return
        self._count_timer.start()
        if self.dirty and self.autosave_ms > 0:
            self._autosave_timer.start(self.autosave_ms)  # restarted by every change: fires after a pause

    def _show(self, text: str) -> None:
        self._autosave_timer.stop()
        self._crlf = "\r\n" in text
        self.text.setPlainText(text.replace("\r\n", "\n") if self._crlf else text)
        self.text.document().setModified(False)
        self._disk_text = text
        self._autosave_timer.stop()
        self.update_words()

    def _set_banner(self, text: str = "", reload: bool = False) -> None:
        self.banner.setText(text)
        self.banner.setVisible(bool(text))
        self.reload_btn.setVisible(reload)

    # -- commands -------------------------------------------------------------------------------------------
    def open(self, story: Any, history: Any, name: str) -> bool:
        """Show chapter ``name`` of ``story`` (a StoryFolder); checkpoints go to ``history`` (a StoryHistory)."""
        try:
            path = story.resolve(name)
            with open(path, "r", encoding="utf-8", newline="") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError, ToolError) as e:
            self.inform(tr("story.title"), tr("story.err.open", name=name, error=show(getattr(e, "message", None) or e)))
            return False
        self.story, self.history, self.name = story, history, name
        self._show(text)
        self.text.setReadOnly(False)
        self._set_banner()
        self._update_title()
        return True

    def adopt(self, old: "ChapterEditor") -> None:
        """Show the chapter ``old`` shows, with its unsaved edits, cursor and focus mode (nothing when it shows
        none). The language switch builds a new window and its editor takes over the old one's
        (ui/window/language_switch.py): nothing typed is lost and nothing is saved on the way."""
        if old.name is None:
            return
        self.story, self.history, self.name = old.story, old.history, old.name
        self._disk_text, self._crlf = old._disk_text, old._crlf
        self._autosave_timer.stop()
        self.text.setPlainText(old.text.toPlainText())
        self.text.document().setModified(old.text.document().isModified())
        self.text.setReadOnly(old.text.isReadOnly())
        cursor = self.text.textCursor()
        cursor.setPosition(min(old.text.textCursor().position(), len(self.text.toPlainText())))
        self.text.setTextCursor(cursor)
        if old.autosave_pending and self.autosave_ms > 0:
            self._autosave_timer.start(self.autosave_ms)
        self._update_title()
        self.update_words()
        if not old.banner.isHidden():
            self.check_disk()  # the conflict or the file gone is said again, in this language
        if old.focus_mode:
            self.set_focus_mode(True)

    def close_chapter(self) -> None:
        """Show nothing (the chapter was deleted, or the chat closed)."""
        self._autosave_timer.stop()
        self.name = None
        self._disk_text = None
        self.text.setPlainText("")
        self.text.document().setModified(False)
        self.text.setReadOnly(True)
        self._set_banner()
        self._update_title()
        self.set_focus_mode(False)

    def renamed(self, new_name: str) -> None:
        """The open file was renamed by the pane: follow it."""
        self.name = new_name
        self._update_title()

    def reload(self) -> None:
        """Read the file again, dropping unsaved changes."""
        if self.name is None:
            return
        try:
            text = self._read_disk()
        except (OSError, UnicodeDecodeError) as e:
            self.inform(tr("story.title"), tr("story.err.open", name=self.name, error=show(e)))
            return
        if text is None:
            self._set_banner(tr("story.editor.gone", name=self.name))
            return
        self._show(text)
        self._set_banner()
        self._update_title()

    def check_disk(self) -> None:
        """Compare with the file on disk: unchanged → nothing; changed and no unsaved edits → reload and say so;
        changed with unsaved edits (or gone) → a warning banner (saving will ask before overwriting)."""
        if self.name is None:
            return
        try:
            now = self._read_disk()
        except (OSError, UnicodeDecodeError):
            now = None
        if now == self._disk_text:
            return
        if now is None:
            self._set_banner(tr("story.editor.gone", name=self.name))
        elif not self.dirty:
            self._show(now)
            self._set_banner(tr("story.editor.reloaded"))
        else:
            self._set_banner(tr("story.editor.conflict"), reload=True)
        self._update_title()

    def save(self, *, auto: bool = False) -> bool:
        """Write the editor's text through StoryFolder.write and commit a user checkpoint — 「编辑 <name>」, or
        「自动保存 <name>」 when ``auto``. A file changed (or removed) on disk since it was opened is not overwritten
        without ``confirm`` (an autosave does not ask: it leaves the banner and saves nothing). Returns True when
        saved."""
        self._autosave_timer.stop()
        if self.name is None:
            return False
        try:
            now = self._read_disk()
        except (OSError, UnicodeDecodeError):
            now = None
        if now != self._disk_text:
            what = tr("story.editor.gone", name=self.name) if now is None else tr("story.editor.conflict")
            if auto:
                self._set_banner(what + " " + tr("desk.autosave.held"), reload=now is not None)
                return False
            if not self.confirm(tr("story.title"), what + "\n\n" + tr("story.editor.overwrite", name=self.name)):
                self._set_banner(what, reload=now is not None)
                return False
        text = self.editor_text()
        try:
            self.story.write(self.name, text)
            self.history.commit(author="user", message=f"{'自动保存' if auto else '编辑'} {self.name}")
        except (OSError, ToolError) as e:
            self.inform(tr("story.title"), tr("story.err.save", name=self.name, error=show(getattr(e, "message", None) or e)))
            return False
        self._disk_text = text
        self.text.document().setModified(False)
        self._set_banner()
        self._update_title()
        self.saved.emit(self.name)
        if auto:
            self.autosaved.emit(self.name)
        return True

    def autosave(self) -> bool:
        """Save now as an autosave when there are unsaved edits and the editor is writable (the pause timer's
        slot; also called before the chat is left). Returns True when something was saved."""
        if not self.dirty or self.text.isReadOnly() or not self.isEnabled():
            return False
        return self.save(auto=True)

    def set_focus_mode(self, on: bool) -> None:
        """Enter / leave the distraction-free mode (``focusModeChanged`` tells the window)."""
        on = bool(on) and self.name is not None
        if on == self.focus_mode:
            self.focus_btn.setChecked(on)
            return
        self.focus_mode = on
        self.focus_btn.blockSignals(True)
        self.focus_btn.setChecked(on)
        self.focus_btn.blockSignals(False)
        self.focus_btn.setText(tr("desk.focus.leave") if on else tr("desk.focus"))
        self.focusModeChanged.emit(on)
        if on:
            self.text.setFocus()
