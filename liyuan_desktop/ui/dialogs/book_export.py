"""书稿 → 导出成书… (issue 28): a book from an agent chat's chapters, with its metadata — title, subtitle, author,
language, cover image — the chapters to include (with the titles they will have: the outline's, the file's own
heading, the file name), a table of contents, numbered titles, and the format: EPUB, DOCX, Markdown or plain text.

Everything is the engine's (``core.story.export``: :func:`preview_chapters` lists the chapters, :func:`export_book`
writes with a :class:`BookOptions`); both run on a worker through the task runner (ui/infra/tasks.py), the export
with its progress dialog. The defaults come from the novel (``core.chat.build.novel_info``: the title and author
given at 新建长篇) or, for an agent chat on a character card, from the chat (``book_meta``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..infra.i18n import register, show, tr
from ..infra.tasks import WorkCancelled, run_in_worker

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "bookx.menu": {"zh": "导出成书…", "en": "Export book…"},
    "bookx.title": {"zh": "导出成书", "en": "Export book"},
    "bookx.book": {"zh": "书名", "en": "Title"},
    "bookx.subtitle": {"zh": "副标题", "en": "Subtitle"},
    "bookx.author": {"zh": "作者", "en": "Author"},
    "bookx.language": {"zh": "语言（zh、en…；空 = 按正文猜）", "en": "Language (zh, en…; empty = guess)"},
    "bookx.cover": {"zh": "封面图片", "en": "Cover image"},
    "bookx.cover.pick": {"zh": "选择…", "en": "Choose…"},
    "bookx.cover.filter": {"zh": "图片 (*.png *.jpg *.jpeg)", "en": "Images (*.png *.jpg *.jpeg)"},
    "bookx.format": {"zh": "格式", "en": "Format"},
    "bookx.fmt.epub": {"zh": "EPUB 电子书", "en": "EPUB e-book"},
    "bookx.fmt.docx": {"zh": "Word 文档（DOCX）", "en": "Word (DOCX)"},
    "bookx.fmt.md": {"zh": "Markdown", "en": "Markdown"},
    "bookx.fmt.txt": {"zh": "纯文本", "en": "Plain text"},
    "bookx.fmt.chapters": {"zh": "每章一个纯文本文件（贴到网文平台）", "en": "One plain-text file per chapter (for a web-novel site)"},
    "bookx.toc": {"zh": "目录", "en": "Table of contents"},
    "bookx.numbers": {"zh": "标题前加「第N章」", "en": "Number the chapter titles"},
    "bookx.chapters": {"zh": "收入的章节（标题来自大纲、章节自己的标题或文件名）",
                       "en": "Chapters to include (titles from the outline, the chapter's heading or the file name)"},
    "bookx.out": {"zh": "保存到", "en": "Save to"},
    "bookx.out.pick": {"zh": "另存为…", "en": "Save as…"},
    "bookx.reading": {"zh": "正在读取章节…", "en": "Reading the chapters…"},
    "bookx.writing": {"zh": "正在导出《{title}》…", "en": "Exporting “{title}”…"},
    "bookx.done": {"zh": "已导出 {n} 章：{path}", "en": "Exported {n} chapters: {path}"},
    "bookx.hits": {"zh": "（{n} 处屏蔽词，见作者词表）", "en": " ({n} flagged words from your word list)"},
    "bookx.none": {"zh": "还没有章节可以导出。", "en": "There are no chapters to export yet."},
    "bookx.pick.one": {"zh": "至少选一章，并写上保存位置。", "en": "Choose at least one chapter and where to save."},
})

FORMATS = ("epub", "docx", "md", "txt", "chapters")
"""``chapters``: one ``.txt`` per chapter in a folder (``core.story.export.export_chapter_files``), for pasting into a
web-novel platform's editor; the others one file each (``export_book``)."""


def book_defaults(chat: Chat) -> tuple[str, str, str]:
    """(title, author, language) a new export starts with: the novel's, else the chat's (``book_meta``)."""
    from ...core.chat.build import novel_info
    from ...core.story.export import book_meta

    info = novel_info(chat.card) or {}
    title, author = book_meta(chat.story.story_dir, str(info.get("title") or ""), str(info.get("author") or ""))
    return title, author, str(info.get("language") or "")


class BookExportDialog(QDialog):
    """The form (module doc) over ``previews`` (``core.story.export.ChapterPreview``). :meth:`options` and
    :meth:`fmt` / :meth:`out_path` are what OK asks for."""

    def __init__(self, previews: list[Any], defaults: tuple[str, str, str], out_dir: Path,
                 parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("bookExportDialog")
        self.setWindowTitle(tr("bookx.title"))
        self.setMinimumWidth(560)
        self.out_dir = out_dir
        lay = QVBoxLayout(self)
        form = QFormLayout()
        title, author, language = defaults
        self.title_edit, self.subtitle_edit = QLineEdit(title), QLineEdit()
        self.author_edit, self.language_edit = QLineEdit(author), QLineEdit(language)
        self.cover_edit = QLineEdit()
        self.format = QComboBox()
        for f in FORMATS:
            self.format.addItem(tr(f"bookx.fmt.{f}"), f)
        self.out_edit = QLineEdit()
        for label, w in (("bookx.book", self.title_edit), ("bookx.subtitle", self.subtitle_edit),
                         ("bookx.author", self.author_edit), ("bookx.language", self.language_edit)):
            form.addRow(tr(label), w)
        form.addRow(tr("bookx.cover"), self._with_button(self.cover_edit, "bookx.cover.pick", self._pick_cover))
        form.addRow(tr("bookx.format"), self.format)
        form.addRow(tr("bookx.out"), self._with_button(self.out_edit, "bookx.out.pick", self._pick_out))
        lay.addLayout(form)
        row = QHBoxLayout()
        self.toc = QCheckBox(tr("bookx.toc"))
        self.toc.setChecked(True)
        self.numbers = QCheckBox(tr("bookx.numbers"))
        row.addWidget(self.toc)
        row.addWidget(self.numbers)
        row.addStretch(1)
        lay.addLayout(row)
        lay.addWidget(QLabel(tr("bookx.chapters")))
        self.chapters = QListWidget()
        for p in previews:
            it = QListWidgetItem(f"{p.number}. {p.title}  ·  {p.words}  ·  {p.file}")
            it.setData(Qt.ItemDataRole.UserRole, p.number)
            it.setFlags(it.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            it.setCheckState(Qt.CheckState.Checked if p.selected else Qt.CheckState.Unchecked)
            self.chapters.addItem(it)
        lay.addWidget(self.chapters, 1)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)
        self.format.currentIndexChanged.connect(lambda _i: self._suggest_out())
        self._suggest_out()

    def _with_button(self, edit: QLineEdit, key: str, slot: Callable[[], None]) -> QWidget:
        box = QWidget()
        h = QHBoxLayout(box)
        h.setContentsMargins(0, 0, 0, 0)
        h.addWidget(edit, 1)
        b = QPushButton(tr(key))
        b.clicked.connect(lambda _=False: slot())
        h.addWidget(b)
        return box

    def fmt(self) -> str:
        """The chosen format (epub | docx | md | txt)."""
        return str(self.format.currentData())

    def _suggest_out(self) -> None:
        from ...core.paths import safe_name

        cur = self.out_edit.text().strip()
        stem = Path(cur).stem if cur else safe_name(self.title_edit.text() or "book")
        folder = Path(cur).parent if cur else self.out_dir
        self.out_edit.setText(str(folder / (stem if self.fmt() == "chapters" else f"{stem}.{self.fmt()}")))

    def _pick_cover(self) -> None:
        path, _f = QFileDialog.getOpenFileName(self, tr("bookx.cover"), "", tr("bookx.cover.filter"))
        if path:
            self.cover_edit.setText(path)

    def _pick_out(self) -> None:
        if self.fmt() == "chapters":  # a folder for the chapter files
            folder = QFileDialog.getExistingDirectory(self, tr("bookx.out"), self.out_edit.text())
            if folder:
                self.out_edit.setText(folder)
            return
        path, _f = QFileDialog.getSaveFileName(self, tr("bookx.out"), self.out_edit.text(), f"*.{self.fmt()}")
        if path:
            self.out_edit.setText(path)

    def out_path(self) -> Path:
        """Where the book goes (the format's suffix added when missing; a folder for ``chapters``)."""
        p = Path(self.out_edit.text().strip())
        if self.fmt() == "chapters":
            return p.with_suffix("") if p.suffix.lower() in (".epub", ".docx", ".md", ".txt") else p
        return p if p.suffix.lower() == f".{self.fmt()}" else p.with_name(p.name + f".{self.fmt()}")

    def selected(self) -> list[int]:
        """The 1-based numbers of the chapters checked."""
        items = (self.chapters.item(i) for i in range(self.chapters.count()))
        return [int(it.data(Qt.ItemDataRole.UserRole)) for it in items
                if it is not None and it.checkState() == Qt.CheckState.Checked]

    def options(self) -> Any:
        """The ``core.story.export.BookOptions`` of the form. Raises ValueError (pydantic) for a bad field."""
        from ...core.story.export import BookOptions

        cover = self.cover_edit.text().strip()
        return BookOptions(title=self.title_edit.text().strip(), subtitle=self.subtitle_edit.text().strip(),
                           author=self.author_edit.text().strip(), language=self.language_edit.text().strip(),
                           cover=Path(cover) if cover else None, chapters=self.selected(),
                           toc=self.toc.isChecked(), number_titles=self.numbers.isChecked())

    def _accept(self) -> None:
        if not self.selected() or not self.out_edit.text().strip():
            QMessageBox.information(self, tr("bookx.title"), tr("bookx.pick.one"))
            return
        self.accept()


async def open_book_export(win: Any, out_dir: Optional[Path] = None) -> Optional[BookExportDialog]:
    """Read the open agent chat's chapters on a worker, then show the dialog (window-modal); OK exports through
    :func:`export_with`. Returns the dialog (None: no agent chat, no chapters, or reading was cancelled)."""
    from ...core.story.export import preview_chapters

    chat = win.chat
    if chat is None or chat.mode != "agent":
        return None
    story_dir = chat.story.story_dir
    try:
        previews = await run_in_worker(win, lambda _w: preview_chapters(story_dir), label=tr("bookx.reading"))
    except WorkCancelled:
        return None
    if not previews:
        QMessageBox.information(win, tr("bookx.title"), tr("bookx.none"))
        return None
    dlg = BookExportDialog(previews, book_defaults(chat), out_dir or Path.home(), win)

    def done(result: int) -> None:
        if result == QDialog.DialogCode.Accepted:
            import asyncio

            win.book_export_task = asyncio.ensure_future(export_with(win, dlg, story_dir))

    dlg.finished.connect(done)
    dlg.open()
    win.book_export_dialog = dlg
    return dlg


async def export_with(win: Any, dlg: BookExportDialog, story_dir: Path) -> Optional[Any]:
    """Export as ``dlg`` says, on a worker with the task runner's progress dialog; says where it went in the
    status bar. Returns the ``BookExport`` (None: cancelled or failed, with a message)."""
    from ...core.story.export import export_book, export_chapter_files

    try:
        options, fmt, out = dlg.options(), dlg.fmt(), dlg.out_path()

        def job(_w: Any) -> Any:
            if fmt == "chapters":  # one .txt per chapter, for a web-novel platform
                return export_chapter_files(story_dir, out, options)
            return export_book(story_dir, fmt, out, options)

        done = await run_in_worker(win, job,
                                   label=tr("bookx.writing", title=options.title), cancellable=False)
    except WorkCancelled:
        return None
    except (OSError, ValueError, KeyError) as e:
        QMessageBox.warning(win, tr("bookx.title"), show(getattr(e, "message", None) or e))
        return None
    note = tr("bookx.hits", n=len(done.hits)) if done.hits else ""
    win.statusBar().showMessage(tr("bookx.done", n=done.chapters, path=str(done.files[0])) + note, 15000)
    return done


__all__ = ["BookExportDialog", "FORMATS", "book_defaults", "export_with", "open_book_export"]
