"""The 大纲 pane of an agent chat (issue 19 §1, §5): the outline ``大纲.md`` as a tree beside 章节 — volumes, then
chapters with their status, 字数 against the target, and the linked file (or 未写) — with the book's progress on
top (字数, target, today's count).

Double-click (or Enter on) a chapter opens its file in 章节 (``openChapter(file, -1, 0)``). 状态 and 目标 change the
selected chapter through ``Chat.set_outline_chapter``; 编辑大纲 edits the whole file (``Chat.save_outline``); a chat
without an outline offers 新建大纲 (a small template). The pane only renders what :mod:`.writing_panes` gathered off
the UI thread (:meth:`OutlinePane.show_data`) and says what to refresh (``changed``). Dialogs go through the
callables ``ask_text``, ``ask_item``, ``ask_int``, ``edit_text`` and ``inform`` (tests replace them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QInputDialog,
    QPlainTextEdit,
    QToolButton,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.story.layout import layout_for_language
from ..dialogs.dialogs import tool_button
from ..infra.i18n import language, register, tr
from .room_pane import KEY, RoomPane, entry_tree, role_label

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "wr.outline.tab": {"zh": "大纲", "en": "Outline"},
    "wr.outline.none": {"zh": "这一局还没有大纲。大纲写在对话文件夹的 {file} 里：# 卷、## 章（状态、目标字数、文件）、- 情节点。",
                        "en": "No outline yet. It lives in {file} in the chat folder: # volumes, ## chapters (status, target, file), - beats."},
    "wr.outline.new": {"zh": "新建大纲", "en": "New outline"},
    "wr.outline.edit": {"zh": "编辑大纲…", "en": "Edit outline…"},
    "wr.outline.edit.tip": {"zh": "直接编辑 {file} 全文（保存后下一个检查点会记下它）",
                            "en": "Edit the whole {file} (the next checkpoint records it)"},
    "wr.outline.status": {"zh": "状态…", "en": "Status…"},
    "wr.outline.target": {"zh": "目标…", "en": "Target…"},
    "wr.outline.open": {"zh": "打开", "en": "Open"},
    "wr.outline.col.title": {"zh": "卷 / 章", "en": "Volume / chapter"},
    "wr.outline.col.status": {"zh": "状态", "en": "Status"},
    "wr.outline.col.words": {"zh": "字数/目标", "en": "Words/target"},
    "wr.outline.col.file": {"zh": "文件", "en": "File"},
    "wr.outline.unwritten": {"zh": "未写", "en": "not written"},
    "wr.outline.unlisted": {"zh": "（大纲外的章节）", "en": "(chapters not in the outline)"},
    "wr.outline.novol": {"zh": "（未分卷）", "en": "(no volume)"},
    "wr.outline.pick.status": {"zh": "这一章的状态：", "en": "Status of this chapter:"},
    "wr.outline.pick.target": {"zh": "目标字数（0 = 不设）：", "en": "Target length in words (0 = none):"},
    "wr.outline.template": {"zh": "# 第一卷\n\n## 第一章 {status=planned target=3000}\n- 情节点\n",
                            "en": "# Volume one\n\n## Chapter one {status=planned target=3000}\n- beat\n"},
    "wr.outline.saved": {"zh": "大纲已保存。", "en": "Outline saved."},
    "wr.progress.book": {"zh": "全书 {words} 字", "en": "Book: {words} words"},
    "wr.progress.target": {"zh": " / 目标 {target}", "en": " / target {target}"},
    "wr.progress.today": {"zh": " · 今天 {today:+d} 字", "en": " · today {today:+d}"},
    "wr.progress.chapters": {"zh": " · {n} 章", "en": " · {n} chapters"},
    "wr.status.planned": {"zh": "计划", "en": "planned"},
    "wr.status.drafted": {"zh": "初稿", "en": "drafted"},
    "wr.status.revised": {"zh": "修订", "en": "revised"},
    "wr.status.done": {"zh": "定稿", "en": "done"},
    "wr.busy": {"zh": "正在生成：等这一轮写完再改。", "en": "A turn is running: wait for it to finish."},
})

STATUSES = ("planned", "drafted", "revised", "done")
#: Outline rows hold ("chapter", index, file) / ("volume", index, "") / ("file", -1, name) under ``KEY``.


def progress_text(p: Any) -> str:
    """One line of a ``story.progress.Progress``: 全书 N 字 / 目标 M · 今天 +K 字 · C 章."""
    if p is None:
        return ""
    s = tr("wr.progress.book", words=p.words)
    if p.target:
        s += tr("wr.progress.target", target=p.target)
    s += tr("wr.progress.today", today=p.today)
    from .webnovel_panel import webnovel_text  # (imported when a progress line is first made)

    n = sum(1 for c in p.chapters if c.file)
    return s + tr("wr.progress.chapters", n=n) + webnovel_text(p)


def words_text(words: int, target: Optional[int]) -> str:
    """「1200/3000」 or 「1200」."""
    return f"{words}/{target}" if target else str(words)


class TextDialog(QDialog):
    """A plain text to edit in a box, Save / Cancel (``exec()``; the text is ``self.edit.toPlainText()``): the
    writing room's whole-outline editor and its stock-phrase list."""

    def __init__(self, title: str, text: str, parent: Optional[QWidget] = None, size: tuple = (620, 560)):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.resize(*size)
        lay = QVBoxLayout(self)
        self.edit = QPlainTextEdit()
        self.edit.setPlainText(text)
        lay.addWidget(self.edit, 1)
        bb = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        bb.accepted.connect(self.accept)
        bb.rejected.connect(self.reject)
        lay.addWidget(bb)


class OutlineDialog(TextDialog):
    """The whole ``大纲.md`` in a plain-text editor (Save saves)."""

    def __init__(self, text: str, parent: Optional[QWidget] = None):
        super().__init__(tr("wr.outline.tab"), text, parent)


class OutlinePane(RoomPane):
    """The outline tree (a :class:`.room_pane.RoomPane`). ``changed()`` means the outline changed: gather again."""

    TITLE_KEY = "wr.outline.tab"
    HEADERS = ("wr.outline.col.title", "wr.outline.col.status", "wr.outline.col.words", "wr.outline.col.file")

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.ask_item: Callable[[str, list[str], int], Optional[int]] = self._ask_item_dialog
        self.ask_int: Callable[[str, int], Optional[int]] = self._ask_int_dialog
        self.edit_text: Callable[[str], Optional[str]] = self._edit_text_dialog

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.progress = role_label(lay, "title")
        bar = QHBoxLayout()
        bar.setSpacing(4)
        self.status_btn = tool_button(bar, tr("wr.outline.status"), self.change_status)
        self.target_btn = tool_button(bar, tr("wr.outline.target"), self.change_target)
        self.open_btn = tool_button(bar, tr("wr.outline.open"), self.open_selected)
        bar.addStretch(1)
        self.edit_btn = tool_button(bar, tr("wr.outline.edit"), self.edit_outline)
        lay.addLayout(bar)
        self.empty = role_label(lay, "muted")
        self.new_btn = QToolButton()
        self.new_btn.setText(tr("wr.outline.new"))
        self.new_btn.clicked.connect(lambda _=False: self.new_outline())
        lay.addWidget(self.new_btn, 0, Qt.AlignmentFlag.AlignLeft)
        self.tree = entry_tree(self.headers())
        self.tree.itemActivated.connect(lambda it, _c: self._activate(it))
        self.tree.itemDoubleClicked.connect(lambda it, _c: self._activate(it))
        self.tree.itemSelectionChanged.connect(self._update_buttons)
        lay.addWidget(self.tree, 1)
        self.note = role_label(lay, "muted")
        self.set_chat(None)

    # -- dialogs (replaced in tests) ------------------------------------------------------------------------
    def _ask_item_dialog(self, label: str, items: list[str], current: int) -> Optional[int]:
        value, ok = QInputDialog.getItem(self, tr("wr.outline.tab"), label, items, current, False)
        return items.index(value) if ok and value in items else None

    def _ask_int_dialog(self, label: str, value: int) -> Optional[int]:
        v, ok = QInputDialog.getInt(self, tr("wr.outline.tab"), label, value, 0, 10_000_000, 500)
        return v if ok else None

    def _edit_text_dialog(self, text: str) -> Optional[str]:
        dlg = OutlineDialog(text, self)
        return dlg.edit.toPlainText() if dlg.exec() == QDialog.DialogCode.Accepted else None

    # -- data -----------------------------------------------------------------------------------------------
    def set_chat(self, chat: Optional[Chat]) -> None:
        """Show ``chat`` (an agent chat; None empties the pane)."""
        self.chat = chat
        # the outline's file name on disk (issue 32): the chat's (大纲.md / outline.md), else a new novel's in the
        # window's language
        file = chat.novel_layout().outline if chat is not None else layout_for_language(language()).outline
        self.edit_btn.setToolTip(tr("wr.outline.edit.tip", file=file))
        self.empty.setText(tr("wr.outline.none", file=file))
        self.data = None
        self.tree.clear()
        self.progress.setText("")
        self.note.setText("")
        self._update_buttons()

    def show_data(self, data: Any) -> None:
        """Render ``data`` (``writing_panes.RoomData``): the outline's volumes and chapters, chapter files the outline
        does not list, and the book's progress. Keeps the selection."""
        self.data = data
        keep = self.selected_key()
        self.tree.clear()
        o = data.outline if data is not None else None
        p = data.progress if data is not None else None
        self.progress.setText(progress_text(p))
        words = {c.file: c.words for c in (p.chapters if p is not None else []) if c.file}
        if o is not None:
            for vi, v in enumerate(o.volumes):
                vwords = sum(words.get(c.file or "", 0) for c in v.chapters)
                vtarget = sum(c.target or 0 for c in v.chapters)
                vit = QTreeWidgetItem([v.title or tr("wr.outline.novol"), "", words_text(vwords, vtarget or None), ""])
                vit.setData(0, KEY, ("volume", vi, ""))
                f = vit.font(0)
                f.setBold(True)
                vit.setFont(0, f)
                self.tree.addTopLevelItem(vit)
                for c in v.chapters:
                    exists = bool(c.file) and c.file in words
                    it = QTreeWidgetItem([f"{c.index + 1}. {c.title}", tr(f"wr.status.{c.status}"),
                                          words_text(words.get(c.file or "", 0), c.target),
                                          c.file if exists else (c.file + " ?" if c.file else tr("wr.outline.unwritten"))])
                    it.setData(0, KEY, ("chapter", c.index, c.file or ""))
                    it.setToolTip(0, "\n".join([c.title, *[f"- {b}" for b in c.beats]]))
                    for col in (2,):
                        it.setTextAlignment(col, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    vit.addChild(it)
                vit.setExpanded(True)
        listed = {c.file for c in o.chapters()} if o is not None else set()
        extra = [c for c in (p.chapters if p is not None else []) if c.file and c.file not in listed]
        if extra:
            xit = QTreeWidgetItem([tr("wr.outline.unlisted"), "", "", ""])
            xit.setData(0, KEY, ("volume", -1, ""))
            self.tree.addTopLevelItem(xit)
            for c in extra:
                it = QTreeWidgetItem([c.title, "", words_text(c.words, None), c.file or ""])
                it.setData(0, KEY, ("file", -1, c.file or ""))
                xit.addChild(it)
            xit.setExpanded(True)
        has = o is not None
        self.empty.setVisible(self.chat is not None and not has)
        self.new_btn.setVisible(self.chat is not None and not has)
        if keep is not None:
            self._select(keep)
        self._update_buttons()

    # -- selection ------------------------------------------------------------------------------------------
    def selected_key(self) -> Optional[tuple]:
        items = self.tree.selectedItems()
        return tuple(items[0].data(0, KEY)) if items and items[0].data(0, KEY) else None

    def _select(self, key: tuple) -> None:
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            for it in [top, *[top.child(j) for j in range(top.childCount())]]:
                if tuple(it.data(0, KEY) or ()) == key:
                    self.tree.setCurrentItem(it)
                    return

    def chapter_items(self) -> list[QTreeWidgetItem]:
        """Every chapter row (outline chapters and unlisted files), top to bottom."""
        out = []
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            out += [top.child(j) for j in range(top.childCount())]
        return out

    def select_chapter(self, index: int) -> None:
        """Select outline chapter ``index`` (0-based)."""
        for it in self.chapter_items():
            k = it.data(0, KEY)
            if k and k[0] == "chapter" and k[1] == index:
                self.tree.setCurrentItem(it)
                return

    def _update_buttons(self) -> None:
        k = self.selected_key()
        has = self.data is not None and self.data.outline is not None
        edit_ok = self.chat is not None and not self._busy
        is_ch = k is not None and k[0] == "chapter"
        self.status_btn.setEnabled(edit_ok and is_ch)
        self.target_btn.setEnabled(edit_ok and is_ch)
        self.open_btn.setEnabled(k is not None and bool(k[2]))
        self.edit_btn.setEnabled(edit_ok and has)
        self.new_btn.setEnabled(edit_ok)
        self.tree.setEnabled(self.chat is not None)

    # -- commands -------------------------------------------------------------------------------------------
    def _activate(self, it: QTreeWidgetItem) -> None:
        k = it.data(0, KEY)
        if k and k[2]:
            self.openChapter.emit(k[2], -1, 0)

    def open_selected(self) -> None:
        items = self.tree.selectedItems()
        if items:
            self._activate(items[0])

    def _saved(self) -> None:
        self.note.setText(tr("wr.outline.saved"))

    def change_status(self) -> bool:
        """Ask a status for the selected chapter and save it."""
        k = self.selected_key()
        if k is None or k[0] != "chapter":
            return False
        ch = self.data.outline.chapters()[k[1]]
        names = [tr(f"wr.status.{s}") for s in STATUSES]
        i = self.ask_item(tr("wr.outline.pick.status"), names, STATUSES.index(ch.status))
        if i is None:
            return False
        return self._apply(lambda: self.shown_chat.set_outline_chapter(k[1] + 1, status=STATUSES[i]))

    def change_target(self) -> bool:
        """Ask a target length for the selected chapter and save it (0 removes it)."""
        k = self.selected_key()
        if k is None or k[0] != "chapter":
            return False
        ch = self.data.outline.chapters()[k[1]]
        v = self.ask_int(tr("wr.outline.pick.target"), ch.target or 0)
        if v is None:
            return False
        return self._apply(lambda: self.shown_chat.set_outline_chapter(k[1] + 1, target=v))

    def edit_outline(self) -> bool:
        """Edit the whole outline text and save it."""
        if self.data is None or self.data.outline is None:
            return False
        text = self.edit_text(self.data.outline.text)
        if text is None or text == self.data.outline.text:
            return False
        return self._apply(lambda: self.shown_chat.save_outline(text))

    def new_outline(self) -> bool:
        """Start an outline from a small template (edited in the dialog first)."""
        text = self.edit_text(tr("wr.outline.template"))
        if text is None or not text.strip():
            return False
        return self._apply(lambda: self.shown_chat.save_outline(text))
