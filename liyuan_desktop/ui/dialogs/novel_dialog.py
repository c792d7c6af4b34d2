"""文件 → 新建长篇… (issue 28): a new novel without a character card — title, author, prose language and an optional
cast (one name a line: a library card's name, whose description the person's codex entry takes, or just a name).

The book is made by the engine's one function for it, ``core.chat.build.create_novel`` (the same as ``liyuan novel
new``), on a worker thread (ui/infra/tasks.py), then opened like any chat (``chat_work.open_chat_async``); an agent
chat opens in the manuscript layout (ui/writing/novel_room.py). The window's part is one call,
:func:`install_novel_dialog`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Optional

from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from ...core.cards import library
from ..infra.i18n import language, register, show, tr
from ..infra.tasks import WorkCancelled, run_in_worker
from ..infra.theme import set_role

register({
    "novel.menu": {"zh": "新建长篇…", "en": "New novel…"},
    "novel.dlg.title": {"zh": "新建长篇", "en": "New novel"},
    "novel.dlg.intro": {"zh": "不用角色卡：一本书有书名、作者和正文语言。打开后左边是大纲和章节，中间写正文，右边和写作助手对话。",
                        "en": "No character card needed: a book has a title, an author and a prose language. It opens "
                              "with the outline and chapters on the left, the manuscript in the middle and the writing "
                              "agent on the right."},
    "novel.dlg.book": {"zh": "书名", "en": "Title"},
    "novel.dlg.author": {"zh": "作者", "en": "Author"},
    "novel.dlg.language": {"zh": "正文语言", "en": "Prose language"},
    "novel.dlg.cast": {"zh": "登场人物（可选，一行一个：角色卡名或人名）", "en": "Cast (optional, one a line: a card's name or a person's name)"},
    "novel.dlg.lang.zh": {"zh": "中文", "en": "Chinese"},
    "novel.dlg.lang.en": {"zh": "英文", "en": "English"},
    "novel.dlg.need.title": {"zh": "先写书名（一行）。", "en": "Give the book a title (one line)."},
    "novel.working": {"zh": "正在新建《{title}》…", "en": "Creating “{title}”…"},
    "novel.made": {"zh": "《{title}》已建好。先在左边的大纲里加卷和章，再让写作助手写第一章。",
                   "en": "“{title}” is ready. Add volumes and chapters in the outline on the left, then ask the agent "
                         "for chapter one."},
})


class NovelDialog(QDialog):
    """The form: ``title_edit``, ``author_edit``, ``language`` (``zh`` / ``en``), ``cast_edit``. :meth:`spec` is
    the ``NovelSpec`` it describes (None while the title is empty)."""

    def __init__(self, parent: Optional[QWidget] = None, author: str = ""):
        super().__init__(parent)
        self.setObjectName("novelDialog")
        self.setWindowTitle(tr("novel.dlg.title"))
        self.setMinimumWidth(460)
        lay = QVBoxLayout(self)
        intro = QLabel(tr("novel.dlg.intro"))
        intro.setWordWrap(True)
        set_role(intro, "muted")
        lay.addWidget(intro)
        form = QFormLayout()
        self.title_edit = QLineEdit()
        self.title_edit.setMaxLength(80)
        self.author_edit = QLineEdit(author)
        self.language = QComboBox()
        for code in ("zh", "en"):
            self.language.addItem(tr(f"novel.dlg.lang.{code}"), code)
        self.language.setCurrentIndex(self.language.findData(language()))  # the window's language first
        self.cast_edit = QPlainTextEdit()
        self.cast_edit.setFixedHeight(90)
        form.addRow(tr("novel.dlg.book"), self.title_edit)
        form.addRow(tr("novel.dlg.author"), self.author_edit)
        form.addRow(tr("novel.dlg.language"), self.language)
        lay.addLayout(form)
        lay.addWidget(QLabel(tr("novel.dlg.cast")))
        lay.addWidget(self.cast_edit)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)

    def spec(self) -> Any:
        """The ``core.chat.build.NovelSpec`` of the form, or None when the title is empty or not one line."""
        from pydantic import ValidationError

        from ...core.chat.build import NovelSpec

        cast = [line.strip() for line in self.cast_edit.toPlainText().splitlines() if line.strip()]
        try:
            return NovelSpec(title=self.title_edit.text(), author=self.author_edit.text(),
                             language=self.language.currentData(), cast=cast)
        except ValidationError:
            return None

    def _accept(self) -> None:
        if self.spec() is None:
            QMessageBox.information(self, tr("novel.dlg.title"), tr("novel.dlg.need.title"))
            return
        self.accept()


def _make(spec: Any) -> Path:
    """Create the novel (worker thread): returns its manuscript chat's folder."""
    from ...core.chat.build import create_novel
    from ...core.llm.replay import ReplayModel
    from ...core.settings import load_settings

    chat = create_novel(spec, load_settings(), ReplayModel(actor=[], scribe=[], label="只读"))
    try:
        return Path(chat.dir)
    finally:
        chat.close()


async def create_and_open(win: Any, spec: Any) -> bool:
    """Create the novel ``spec`` off the UI thread and open its manuscript in ``win``; False (with a message) when
    the disk refused or the open failed."""
    from ..window import chat_work

    try:
        chat_dir = await run_in_worker(win, lambda _w: _make(spec), label=tr("novel.working", title=spec.title),
                                       cancellable=False)
    except WorkCancelled:
        return False
    except (OSError, ValueError) as e:
        QMessageBox.warning(win, tr("novel.dlg.title"), show(e))
        return False
    card_dir = chat_dir.parent.parent
    card = library.CardRef(name=card_dir.name, dir=str(card_dir))
    win.refresh_tree()
    ok = await chat_work.open_chat_async(win, card, library.ChatRef(name=chat_dir.name, dir=str(chat_dir)))
    if ok:
        win.statusBar().showMessage(tr("novel.made", title=spec.title), 12000)
    return bool(ok)


def open_novel_dialog(win: Any) -> Optional[NovelDialog]:
    """Show the dialog (window-modal); on OK the novel is made and opened. Returns the dialog."""
    dlg = NovelDialog(win)

    def done(result: int) -> None:
        spec = dlg.spec() if result == QDialog.DialogCode.Accepted else None
        if spec is not None:
            win.novel_task = asyncio.ensure_future(create_and_open(win, spec))

    dlg.finished.connect(done)
    dlg.open()
    win.novel_dialog = dlg
    return dlg


def install_novel_dialog(win: Any, menu: QMenu) -> QAction:
    """Put 新建长篇… at the top of the window's file menu ``menu``; returns the action (``win.novel_action``)."""
    act = QAction(tr("novel.menu"), win)
    act.setObjectName("newNovelAction")
    act.triggered.connect(lambda _=False: open_novel_dialog(win))
    first = menu.actions()[0] if menu.actions() else None
    menu.insertAction(first, act) if first is not None else menu.addAction(act)
    win.novel_action = act
    return act


__all__ = ["NovelDialog", "create_and_open", "install_novel_dialog", "open_novel_dialog"]
