"""The binder of the manuscript layout (issue 28): the outline as a tree — volumes → chapters with their status and
字数 against the target — and, below, the chapter files no outline chapter is linked to yet.

Every change goes through the engine's outline API (``Chat.edit_outline_tree``, ``Chat.link_chapter``,
``Chat.unlink_chapter_file``; ``大纲.md`` stays the storage and hand edits are simply read again) on a worker thread
(:meth:`RoomPane._apply`); the binder then gathers anew with the other writing-room panes (``changed``):

* context menu (and the buttons): 新卷, 新章 (into the selected volume, after the selected chapter), 新情节点, 改名,
  状态 ▸, 目标字数…, 链接到文件 ▸ (the unlinked files), 取消链接, 删除 (asks first, default No, saying what goes);
* drag a chapter onto a volume (its end) or before / after another chapter to move it; a volume before / after
  another volume; an unlinked file onto a chapter to link it (:meth:`Binder.drop`, what a drop means);
* double-click a chapter with a file (or an unlinked file) to open it in the editor (``openChapter``).

Rows keep ``(kind, id, file)`` under ``KEY``: ``("volume", id, "")``, ``("chapter", id, file or "")``,
``("beat", chapter id, "")`` for a beat (its index is its row under the chapter), ``("files", "", "")`` for the
group row and ``("file", "", name)`` for an unlinked file. Dialogs go through the
callables ``ask_text``, ``ask_int`` and ``confirm`` (tests replace them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLineEdit,
    QMenu,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.story.outline import STATUSES
from ..dialogs.dialogs import confirm, tool_button
from ..infra.i18n import register, tr
from .outline_pane import progress_text, words_text
from .room_pane import KEY, RoomPane, role_label

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "binder.title": {"zh": "书稿", "en": "Binder"},
    "binder.col.title": {"zh": "卷 / 章", "en": "Volume / chapter"},
    "binder.col.status": {"zh": "状态", "en": "Status"},
    "binder.col.words": {"zh": "字数", "en": "Words"},
    "binder.empty": {"zh": "还没有大纲：点「新卷」，再在卷里加章。", "en": "No outline yet: add a volume, then chapters in it."},
    "binder.files": {"zh": "未链接的章节文件（拖到大纲的章上即可链接）", "en": "Chapter files not linked (drag one onto a chapter)"},
    "binder.novol": {"zh": "（未分卷）", "en": "(no volume)"},
    "binder.add.volume": {"zh": "新卷", "en": "Volume"},
    "binder.add.volume.tip": {"zh": "在大纲末尾加一卷", "en": "Add a volume at the end of the outline"},
    "binder.add.chapter": {"zh": "新章", "en": "Chapter"},
    "binder.add.chapter.tip": {"zh": "在选中的卷里（选中章之后）加一章", "en": "Add a chapter to the selected volume (after the selected chapter)"},
    "binder.rename": {"zh": "改名…", "en": "Rename…"},
    "binder.status": {"zh": "状态", "en": "Status"},
    "binder.target": {"zh": "目标字数…", "en": "Target…"},
    "binder.link": {"zh": "链接到文件", "en": "Link to file"},
    "binder.unlink": {"zh": "取消链接", "en": "Unlink file"},
    "binder.delete": {"zh": "删除…", "en": "Delete…"},
    "binder.open": {"zh": "打开", "en": "Open"},
    "binder.ask.volume": {"zh": "卷名：", "en": "Volume title:"},
    "binder.ask.chapter": {"zh": "章名：", "en": "Chapter title:"},
    "binder.ask.rename": {"zh": "新的名字：", "en": "New title:"},
    "binder.add.beat": {"zh": "新情节点…", "en": "Add beat…"},
    "binder.ask.beat": {"zh": "情节点：", "en": "Beat:"},
    "binder.ask.target": {"zh": "目标字数（0 = 不设）：", "en": "Target length in words (0 = none):"},
    "binder.new.volume": {"zh": "新的一卷", "en": "New volume"},
    "binder.new.chapter": {"zh": "新的一章", "en": "New chapter"},
    "binder.confirm.delete": {"zh": "从大纲删除「{title}」？{what}章节文件本身不会删除，只是不再链接。",
                              "en": "Delete “{title}” from the outline? {what}Chapter files are kept, only unlinked."},
    "binder.confirm.what": {"zh": "其中有 {chapters} 章、{beats} 个情节点、{notes} 行笔记。",
                            "en": "It holds {chapters} chapters, {beats} beats and {notes} note lines. "},
    "binder.unwritten": {"zh": "未写", "en": "not written"},
})

def _call(fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    """A slot that calls ``fn(*args)`` and takes nothing from the signal (a menu action's ``checked`` never lands
    in one of ``fn``'s parameters)."""
    return lambda: fn(*args)


def status_label(status: str) -> str:
    """The status in the current language (the outline pane's words: 计划 / 初稿 / 修订 / 定稿)."""
    return tr(f"wr.status.{status}") if status in STATUSES else status


class BinderTree(QTreeWidget):
    """The binder's tree: drags inside it are read by :meth:`Binder.drop`, never moved by Qt itself (the outline
    file is the truth: the binder repaints from it)."""

    def __init__(self, on_drop: Callable[[QTreeWidgetItem, Optional[QTreeWidgetItem], str], bool]):
        super().__init__()
        self._on_drop = on_drop
        self.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.setDragEnabled(True)
        self.setAcceptDrops(True)
        self.setDropIndicatorShown(True)

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt API
        dragged = self.currentItem()
        target = self.itemAt(event.position().toPoint())
        where = {QAbstractItemView.DropIndicatorPosition.AboveItem: "above",
                 QAbstractItemView.DropIndicatorPosition.BelowItem: "below"}.get(self.dropIndicatorPosition(), "on")
        event.setDropAction(Qt.DropAction.IgnoreAction)
        event.accept()
        if dragged is not None:
            self._on_drop(dragged, target, where)


class Binder(RoomPane):
    """The binder (module doc). ``show_data(RoomData)`` renders; the commands are methods tests call too."""

    TITLE_KEY = "binder.title"
    HEADERS = ("binder.col.title", "binder.col.status", "binder.col.words")

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("binder")
        self.ask_text: Callable[[str, str], Optional[str]] = self._ask_text_dialog
        self.ask_int: Callable[[str, int], Optional[int]] = self._ask_int_dialog
        self.confirm: Callable[[str], bool] = lambda text: confirm(self, tr("binder.title"), text)
        self.unlinked: list[str] = []
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        bar = QHBoxLayout()
        bar.setSpacing(4)
        self.vol_btn = tool_button(bar, "+ " + tr("binder.add.volume"), lambda: self.add_volume(),
                                   tr("binder.add.volume.tip"))
        self.chap_btn = tool_button(bar, "+ " + tr("binder.add.chapter"), lambda: self.add_chapter(),
                                    tr("binder.add.chapter.tip"))
        bar.addStretch(1)
        lay.addLayout(bar)
        self.progress = role_label(lay, "muted", "")
        self.tree = BinderTree(self.drop)
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(self.headers())
        hdr = self.tree.header()
        hdr.setStretchLastSection(False)
        hdr.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for c in (1, 2):
            hdr.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.setUniformRowHeights(True)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.tree.itemDoubleClicked.connect(lambda it, _c: self.open_item(it))
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._menu)
        lay.addWidget(self.tree, 1)
        self.set_chat(None)

    # -- dialogs (replaced in tests) ------------------------------------------------------------------------
    def _ask_text_dialog(self, label: str, text: str) -> Optional[str]:
        value, ok = QInputDialog.getText(self, tr("binder.title"), label, QLineEdit.EchoMode.Normal, text)
        return value if ok else None

    def _ask_int_dialog(self, label: str, value: int) -> Optional[int]:
        v, ok = QInputDialog.getInt(self, tr("binder.title"), label, value, 0, 10_000_000, 500)
        return v if ok else None

    # -- showing --------------------------------------------------------------------------------------------
    def set_chat(self, chat: Optional[Chat]) -> None:
        """Show ``chat`` (an agent chat; None empties and disables)."""
        self.chat = chat
        self.data = None
        self.tree.clear()
        self.progress.setText("")
        self.setEnabled(chat is not None)

    def show_data(self, data: Any) -> None:
        """Render a ``writing_panes.RoomData``: volumes and chapters, then the unlinked chapter files."""
        self.data = data
        keep = self.selected()
        self.tree.clear()
        outline, progress = data.outline, data.progress
        words = {c.id: c.words for c in progress.chapters if c.id} if progress is not None else {}
        linked = {c.file for c in outline.chapters() if c.file} if outline is not None else set()
        for v in (outline.volumes if outline is not None else []):
            vi = QTreeWidgetItem([v.title or tr("binder.novol"), "", ""])
            vi.setData(0, KEY, ("volume", v.id, ""))
            f = vi.font(0)
            f.setBold(True)
            vi.setFont(0, f)
            self.tree.addTopLevelItem(vi)
            for c in v.chapters:
                ci = QTreeWidgetItem([c.title, status_label(c.status),
                                      words_text(words.get(c.id, 0), c.target) if c.file else tr("binder.unwritten")])
                ci.setData(0, KEY, ("chapter", c.id, c.file or ""))
                ci.setToolTip(0, c.file or tr("binder.unwritten"))
                vi.addChild(ci)
                for beat in c.beats:  # the chapter's beats (情节点), collapsed under it
                    bi = QTreeWidgetItem([beat, "", ""])
                    bi.setData(0, KEY, ("beat", c.id, ""))
                    bi.setFlags(bi.flags() & ~Qt.ItemFlag.ItemIsDragEnabled)
                    ci.addChild(bi)
            vi.setExpanded(True)
        files = [c.file for c in progress.chapters if c.file and c.file not in linked] if progress is not None else []
        self.unlinked = files
        if files:
            gi = QTreeWidgetItem([tr("binder.files"), "", ""])
            gi.setData(0, KEY, ("files", "", ""))
            gi.setFlags(gi.flags() & ~Qt.ItemFlag.ItemIsDragEnabled)
            self.tree.addTopLevelItem(gi)
            for name in files:
                fi = QTreeWidgetItem([name, "", ""])
                fi.setData(0, KEY, ("file", "", name))
                gi.addChild(fi)
            gi.setExpanded(True)
        self.progress.setText(progress_text(progress) if outline is not None else tr("binder.empty"))
        if keep is not None:
            self.select(keep[0], keep[1] or keep[2])
        self._update_buttons()

    def items(self) -> list[QTreeWidgetItem]:
        """Every row, in tree order."""
        out: list[QTreeWidgetItem] = []

        def walk(it: Optional[QTreeWidgetItem]) -> None:
            if it is None:
                return
            out.append(it)
            for i in range(it.childCount()):
                walk(it.child(i))

        for i in range(self.tree.topLevelItemCount()):
            walk(self.tree.topLevelItem(i))
        return out

    def row(self, kind: str, ref: str) -> Optional[QTreeWidgetItem]:
        """The row of ``kind`` whose id — or file, or title — is ``ref``."""
        for it in self.items():
            k, id_, file = it.data(0, KEY)
            if k == kind and ref in (id_, file, it.text(0)):
                return it
        return None

    def select(self, kind: str, ref: str) -> bool:
        """Select the row :meth:`row` finds; False when there is none."""
        it = self.row(kind, ref)
        if it is not None:
            self.tree.setCurrentItem(it)
        return it is not None

    def _update_buttons(self) -> None:
        ok = self.chat is not None and not self._busy
        self.vol_btn.setEnabled(ok)
        self.chap_btn.setEnabled(ok)
        self.tree.setDragEnabled(ok)

    # -- commands (through the engine's outline API, on a worker) -------------------------------------------
    def _edit(self, op: str, **kw: Any) -> bool:
        chat = self.chat
        return chat is not None and self._apply(lambda: chat.edit_outline_tree(op, **kw))

    def _volume_of(self, it: Optional[QTreeWidgetItem]) -> Optional[QTreeWidgetItem]:
        while it is not None and it.data(0, KEY)[0] != "volume":
            it = it.parent()
        return it

    def add_volume(self, title: Optional[str] = None) -> bool:
        """Add a volume at the end (asks its title when ``title`` is None)."""
        title = title if title is not None else self.ask_text(tr("binder.ask.volume"), tr("binder.new.volume"))
        if not title or not title.strip():
            return False
        return self._edit("add_volume", title=title.strip())

    def add_chapter(self, title: Optional[str] = None) -> bool:
        """Add a chapter to the selected volume, after the selected chapter (else at the volume's end; no volume
        selected: the last one)."""
        title = title if title is not None else self.ask_text(tr("binder.ask.chapter"), tr("binder.new.chapter"))
        if not title or not title.strip():
            return False
        cur = self.tree.currentItem()
        if cur is not None and cur.data(0, KEY)[0] == "beat":
            cur = cur.parent()
        vol = self._volume_of(cur)
        kw: dict[str, Any] = {"title": title.strip()}
        if vol is not None and vol.data(0, KEY)[1]:
            kw["volume"] = vol.data(0, KEY)[1]
            if cur is not None and cur is not vol:
                kw["position"] = vol.indexOfChild(cur) + 1
        return self._edit("add_chapter", **kw)

    def add_beat(self, text: Optional[str] = None) -> bool:
        """Add a beat (情节点) at the end of the selected chapter (or of the selected beat's chapter)."""
        cur = self.tree.currentItem()
        if cur is not None and cur.data(0, KEY)[0] == "beat":
            cur = cur.parent()
        if cur is None or cur.data(0, KEY)[0] != "chapter":
            return False
        text = text if text is not None else self.ask_text(tr("binder.ask.beat"), "")
        if not text or not text.strip():
            return False
        return self._edit("add_beat", chapter=cur.data(0, KEY)[1], beat=text.strip())

    def rename(self, it: Optional[QTreeWidgetItem] = None, title: Optional[str] = None) -> bool:
        """Rename the volume, chapter or beat ``it`` (the selected row)."""
        it = it or self.tree.currentItem()
        if it is None or it.data(0, KEY)[0] not in ("volume", "chapter", "beat"):
            return False
        kind, id_, _f = it.data(0, KEY)
        title = title if title is not None else self.ask_text(tr("binder.ask.rename"), it.text(0))
        if not title or not title.strip() or not id_:
            return False
        if kind == "beat":
            parent = it.parent()
            index = parent.indexOfChild(it) if parent is not None else 0
            return self._edit("rename_beat", chapter=id_, index=index, beat=title.strip())
        return self._edit(f"rename_{kind}", **{kind: id_, "title": title.strip()})

    def set_status(self, chapter_id: str, status: str) -> bool:
        """Set a chapter's status (planned | drafted | revised | done)."""
        return self._edit("set_attrs", chapter=chapter_id, status=status)

    def set_target(self, chapter_id: str, target: Optional[int] = None) -> bool:
        """Set a chapter's target 字数 (asks when ``target`` is None; 0 removes it)."""
        target = target if target is not None else self.ask_int(tr("binder.ask.target"), 3000)
        return target is not None and self._edit("set_attrs", chapter=chapter_id, target=target)

    def link(self, chapter_id: str, file: str) -> bool:
        """Link outline chapter ``chapter_id`` to chapter file ``file`` ("" unlinks)."""
        chat = self.chat
        return chat is not None and self._apply(lambda: chat.link_chapter(chapter_id, file))

    def delete(self, it: Optional[QTreeWidgetItem] = None) -> bool:
        """Delete the volume or chapter ``it`` from the outline after asking (default No); files are kept."""
        it = it or self.tree.currentItem()
        chat = self.chat
        if chat is None or it is None or it.data(0, KEY)[0] not in ("volume", "chapter", "beat"):
            return False
        kind, id_, _f = it.data(0, KEY)
        parent = it.parent()
        index = parent.indexOfChild(it) if kind == "beat" and parent is not None else 0
        p = chat.outline_deletion_preview(kind, id_, index)
        what = tr("binder.confirm.what", chapters=len(p.chapters), beats=p.beats, notes=p.notes) \
            if kind == "volume" or p.beats or p.notes else ""
        if not self.confirm(tr("binder.confirm.delete", title=it.text(0), what=what)):
            return False
        return self._edit("delete", kind=kind, ref=id_, index=index)

    def move_chapter(self, chapter_id: str, volume_id: str, position: Optional[int]) -> bool:
        """Move a chapter into volume ``volume_id`` before its chapter at 0-based ``position`` (None: the end)."""
        return self._edit("move_chapter", chapter=chapter_id, volume=volume_id, position=position)

    def drop(self, dragged: QTreeWidgetItem, target: Optional[QTreeWidgetItem], where: str) -> bool:
        """What a drag of ``dragged`` onto ``target`` (``where``: above | below | on) means: a file on a chapter
        links it; a chapter on a volume goes to its end, before / after a chapter goes there; a volume before /
        after a volume moves there. Anything else does nothing (False)."""
        if target is None or target is dragged:
            return False
        kind, id_, file = dragged.data(0, KEY)
        tkind, tid, _tf = target.data(0, KEY)
        if kind == "file" and tkind == "chapter":
            return self.link(tid, file)
        if kind == "chapter" and tkind == "volume" and tid:
            return self.move_chapter(id_, tid, None if where == "on" or where == "below" else 0)
        if kind == "chapter" and tkind == "chapter":
            vol = target.parent()
            if vol is None or not vol.data(0, KEY)[1]:
                return False
            pos = vol.indexOfChild(target) + (1 if where == "below" else 0)
            if dragged.parent() is vol and vol.indexOfChild(dragged) < pos:
                pos -= 1  # counted without the moved chapter
            return self.move_chapter(id_, vol.data(0, KEY)[1], pos)
        if kind == "volume" and tkind == "volume" and id_:
            tops = [self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount())]
            vols = [t for t in tops if t is not None and t.data(0, KEY)[0] == "volume" and t.data(0, KEY)[1]]
            pos = vols.index(target) + (1 if where == "below" else 0) if target in vols else len(vols)
            if vols.index(dragged) < pos:
                pos -= 1
            return self._edit("move_volume", volume=id_, position=pos)
        return False

    def open_item(self, it: Optional[QTreeWidgetItem]) -> bool:
        """Open the chapter file of ``it`` (a linked chapter or an unlinked file) in the editor."""
        if it is None:
            return False
        file = it.data(0, KEY)[2]
        if file:
            self.openChapter.emit(file, -1, 0)
        return bool(file)

    def _menu(self, pos: QPoint) -> None:
        menu = self.context_menu(self.tree.itemAt(pos))
        if menu is not None:
            menu.exec(self.tree.viewport().mapToGlobal(pos))

    def context_menu(self, it: Optional[QTreeWidgetItem]) -> Optional[QMenu]:
        """The context menu of row ``it`` (None: the empty area), built fresh (tests read its actions)."""
        if self.chat is None or self._busy:
            return None
        m = QMenu(self)
        kind, id_, file = it.data(0, KEY) if it is not None else ("", "", "")
        if file:
            m.addAction(tr("binder.open"), lambda: self.open_item(it))
        m.addAction(tr("binder.add.volume.tip"), lambda: self.add_volume())
        if kind in ("volume", "chapter", "beat"):
            m.addAction(tr("binder.add.chapter.tip"), lambda: self.add_chapter())
            m.addAction(tr("binder.rename"), lambda: self.rename(it))
        if kind in ("chapter", "beat"):
            m.addAction(tr("binder.add.beat"), lambda: self.add_beat())
        if kind == "chapter":
            st = m.addMenu(tr("binder.status"))
            for s in STATUSES:
                st.addAction(status_label(s), _call(self.set_status, id_, s))
            m.addAction(tr("binder.target"), lambda: self.set_target(id_))
            ln = m.addMenu(tr("binder.link"))
            ln.setEnabled(bool(self.unlinked))
            for name in self.unlinked:
                ln.addAction(name, _call(self.link, id_, name))
            if file:
                m.addAction(tr("binder.unlink"), lambda: self.link(id_, ""))
        if kind in ("volume", "chapter", "beat"):
            m.addSeparator()
            m.addAction(tr("binder.delete"), lambda: self.delete(it))
        return m


__all__ = ["Binder", "BinderTree", "status_label"]
