"""Search every chat of every card (issue 17 "Search"): 搜索所有对话… (Ctrl+Shift+F) opens a results dialog.

The session files are streamed on a worker thread (``core.chat.search.search_library``), hits arrive in batches
and are listed as they come (card, chat, snippet, date); 停止 drops the run. One row per *message*: the versions of
one message (swipes, edited branches, a revised text; ``core.chat.search.group_hits``) are one row tagged
「N 个版本」 with each version as a child row (「第 k 版」), and the count says messages (and versions) — the same
grouping and count as ``liyuan search``. Opening a row (double-click / Enter / 打开) opens that chat in the window
and jumps to that version (the message row: the version on the chat's shown branch, else the newest), its branch
selected when it is not the shown one, with the words marked, through the find bar's
:func:`~.find_bar.jump_to_entry`.

The batches and the progress are handed to the UI thread in order, *before* the run's end (``LatestWins.relay``, ui/infra/tasks.py),
and are applied there at once: the count shown at the end is the rows listed (a queued hand-over once let the end
say 「找到 0 条」 beside four rows).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any, Callable, Optional

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
)

from ...core.cards import library
from ...core.linear_regex import LinearRegexRefused
from ..frames.find_bar import jump_to_entry
from ..infra.i18n import register, show, tr
from ..infra.tasks import LatestWins

ROLE_HIT = Qt.ItemDataRole.UserRole  # a row's hit: its index in ``SearchDialog.hits``

register({
    "gsearch.menu": {"zh": "搜索所有对话…", "en": "Search all chats…"},
    "gsearch.title": {"zh": "搜索所有对话", "en": "Search all chats"},
    "gsearch.placeholder": {"zh": "要找的字词（不分大小写）", "en": "Words to find (any case)"},
    "gsearch.all.cards": {"zh": "所有角色卡", "en": "All cards"},
    "gsearch.go": {"zh": "搜索", "en": "Search"},
    "gsearch.stop": {"zh": "停止", "en": "Stop"},
    "gsearch.open": {"zh": "打开", "en": "Open"},
    "gsearch.col.card": {"zh": "角色卡", "en": "Card"},
    "gsearch.col.chat": {"zh": "对话", "en": "Chat"},
    "gsearch.col.text": {"zh": "内容", "en": "Text"},
    "gsearch.col.date": {"zh": "时间", "en": "Date"},
    "gsearch.col.version": {"zh": "版本", "en": "Version"},
    "gsearch.progress": {"zh": "搜索中… {done}/{total} 个对话，找到 {n} 条", "en": "Searching… {done}/{total} chats, {n} found"},
    "gsearch.versions": {"zh": "{n} 个版本", "en": "{n} versions"},
    "gsearch.stopped": {"zh": "已停止，找到 {n} 条", "en": "Stopped, {n} found"},
    "gsearch.bad": {"zh": "搜索不了：{err}", "en": "Cannot search: {err}"},
    "gsearch.gone": {"zh": "这个对话打不开了（被删掉或移走了？）", "en": "This chat cannot be opened (deleted or moved?)"},
})

LIMIT = 500


class SearchDialog(QDialog):
    """The results dialog (module doc); ``win`` is the main window. ``hits``: every hit listed (flat, in arrival
    order); ``messages``: the rows, one ``MessageHits`` per message."""

    def __init__(self, win: Any):
        super().__init__(win)
        self.win = win
        self.setObjectName("searchDialog")
        self.setWindowTitle(tr("gsearch.title"))
        self.resize(860, 520)
        self.hits: list[Any] = []
        self.messages: list[Any] = []
        self._rows: dict[tuple[str, str], tuple[QTreeWidgetItem, Any]] = {}
        self._index: dict[int, int] = {}  # id(hit) -> its place in ``hits``
        self.worker = LatestWins(self)
        self.worker.done.connect(self._finished)
        self.worker.failed.connect(self._failed)
        lay = QVBoxLayout(self)
        row = QHBoxLayout()
        self.edit = QLineEdit()
        self.edit.setPlaceholderText(tr("gsearch.placeholder"))
        self.edit.returnPressed.connect(self.search)
        row.addWidget(self.edit, 1)
        self.card = QComboBox()
        row.addWidget(self.card)
        self.regex = QCheckBox(tr("find.regex"))
        row.addWidget(self.regex)
        self.go = QPushButton(tr("gsearch.go"))
        self.go.clicked.connect(self.search)
        row.addWidget(self.go)
        self.stop = QPushButton(tr("gsearch.stop"))
        self.stop.clicked.connect(self.stop_search)
        self.stop.setEnabled(False)
        row.addWidget(self.stop)
        lay.addLayout(row)
        self.results = QTreeWidget()
        self.results.setObjectName("searchResults")
        self.results.setRootIsDecorated(True)
        self.results.setHeaderLabels([tr("gsearch.col.card"), tr("gsearch.col.chat"), tr("gsearch.col.text"),
                                      tr("gsearch.col.date"), tr("gsearch.col.version")])
        self.results.setColumnWidth(0, 110)
        self.results.setColumnWidth(1, 150)
        self.results.setColumnWidth(2, 360)
        self.results.setColumnWidth(3, 120)
        self.results.itemActivated.connect(lambda it, _c: self.open_row(it))
        lay.addWidget(self.results, 1)
        bottom = QHBoxLayout()
        self.status = QLabel("")
        bottom.addWidget(self.status, 1)
        self.open_btn = QPushButton(tr("gsearch.open"))
        self.open_btn.clicked.connect(lambda: self.open_row(self.results.currentItem()))
        bottom.addWidget(self.open_btn)
        lay.addLayout(bottom)
        self.refresh_cards()

    def refresh_cards(self) -> None:
        """The card filter: all cards, then each card of the library."""
        keep = self.card.currentData()
        self.card.clear()
        self.card.addItem(tr("gsearch.all.cards"), None)
        for c in library.list_cards():
            self.card.addItem(c.name, c.name)
        k = self.card.findData(keep)
        self.card.setCurrentIndex(max(0, k))

    # -- searching -----------------------------------------------------------------------------------------------
    def search(self) -> None:
        """Start a search (a running one is dropped)."""
        from ...core.chat.search import search_library

        query, regex, card = self.edit.text(), self.regex.isChecked(), self.card.currentData()
        self.hits, self.messages, self._rows, self._index = [], [], {}, {}
        self.results.clear()
        if not query.strip():
            self.worker.cancel()
            self.status.setText("")
            return
        batch, progress = self.worker.relay(self._batch), self.worker.relay(self._progress)
        gen = self.worker.gen + 1  # the generation start() gives this run

        def run(cancelled: Callable[[], bool]) -> int:
            pending: list[Any] = []
            last = [time.monotonic()]

            def flush() -> None:
                if pending:
                    batch(gen, list(pending))
                    pending.clear()
                last[0] = time.monotonic()

            n = 0
            for h in search_library(query, regex=regex, card=card, limit=LIMIT, cancelled=cancelled,
                                    progress=lambda d, t: (flush(), progress(gen, d, t))):
                pending.append(h)
                n += 1
                if time.monotonic() - last[0] > 0.1:
                    flush()
            flush()
            return n

        self.go.setEnabled(False)
        self.stop.setEnabled(True)
        self.status.setText(tr("gsearch.progress", done=0, total="…", n=0))
        self.worker.start(run)

    def stop_search(self) -> None:
        """停止: drop the running search; what was found stays listed."""
        self.worker.cancel()
        self._idle()
        self.status.setText(tr("gsearch.stopped", n=len(self.messages)))

    def _idle(self) -> None:
        self.go.setEnabled(True)
        self.stop.setEnabled(False)

    def _batch(self, gen: int, hits: Any) -> None:
        """Add a batch of hits: a new message gets a row, another version of a listed one a child row (and the
        row shows the version to open, module doc)."""
        from ...core.chat.search import MessageHits

        if gen != self.worker.gen:
            return
        new_rows = []
        for h in hits:
            k = len(self.hits)
            self.hits.append(h)
            self._index[id(h)] = k
            key = (h.chat_dir, h.group or f"{h.entry_id}/{h.role}")
            row = self._rows.get(key)
            if row is None:
                group = MessageHits(versions=[h])
                it = QTreeWidgetItem()
                self._rows[key] = (it, group)
                self.messages.append(group)
                new_rows.append(it)
            else:
                it, group = row
                group.versions.append(h)
                if len(group.versions) == 2:  # the first version becomes a child too
                    it.addChild(self._version_item(group.versions[0], self._index[id(group.versions[0])]))
                it.addChild(self._version_item(h, k))
            self._fill(it, group)
        self.results.addTopLevelItems(new_rows)

    @staticmethod
    def _date(h: Any) -> str:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(h.ts / 1000)) if h.ts else ""

    def _version_item(self, h: Any, k: int) -> QTreeWidgetItem:
        from ...core.chat.search import version_label

        it = QTreeWidgetItem(["", "", h.snippet, self._date(h), show(version_label(h))])
        it.setToolTip(2, h.snippet)
        it.setData(0, ROLE_HIT, k)
        return it

    def _fill(self, it: QTreeWidgetItem, group: Any) -> None:
        """A message row: the version to open (``MessageHits.first``), tagged with the count of versions."""
        from ...core.chat.search import version_label

        h = group.first
        n = len(group.versions)
        tag = tr("gsearch.versions", n=n) if n > 1 else (show(version_label(h)) if h.version > 1 or h.revised else "")
        for col, text in enumerate((h.card, h.chat, h.snippet, self._date(h), tag)):
            it.setText(col, text)
        it.setToolTip(2, h.snippet)
        it.setData(0, ROLE_HIT, self._index[id(h)])

    def _progress(self, gen: int, done: int, total: int) -> None:
        if gen == self.worker.gen and self.worker.running:
            self.status.setText(tr("gsearch.progress", done=done, total=total, n=len(self.messages)))

    def _finished(self, gen: int, _n: Any) -> None:
        if gen != self.worker.gen:
            return
        self.worker.running = False
        self._idle()
        self.status.setText(self.count_text())

    def count_text(self) -> str:
        """What the status line says when a run ends: the messages listed (and their versions), as
        ``liyuan search`` counts them."""
        from ...core.chat.search import found_label

        return show(found_label(self.messages))

    def _failed(self, gen: int, e: Any) -> None:
        if gen != self.worker.gen:
            return
        self.worker.running = False
        self._idle()
        self.status.setText(tr("gsearch.bad", err=e) if isinstance(e, (ValueError, re.error, LinearRegexRefused))
                            else show(e))

    # -- opening -------------------------------------------------------------------------------------------------
    def open_row(self, it: Optional[QTreeWidgetItem]) -> bool:
        """Open the version a row stands for (a message row: ``MessageHits.first``; a child row: that version)."""
        if it is None:
            return False
        k = it.data(0, ROLE_HIT)
        return self.open_hit(k if isinstance(k, int) else -1)

    def open_hit(self, k: int) -> bool:
        """Open hit ``k``'s chat in the window and jump to its message. False when it cannot be opened."""
        if not 0 <= k < len(self.hits):
            return False
        h = self.hits[k]
        d = Path(h.chat_dir)
        card = library.CardRef(name=h.card, dir=str(d.parent.parent))
        chat = library.ChatRef(name=h.chat, dir=str(d))
        win = self.win
        same = win.chat_ref is not None and Path(win.chat_ref.dir) == d
        if not same and not win.open_chat(card, chat):
            self.status.setText(tr("gsearch.gone"))
            return False
        return jump_to_entry(win, h.entry_id, h.snippet[h.start:h.start + h.length])


def install_search_dialog(win: Any, menu: Any = None) -> QAction:
    """搜索所有对话… (Ctrl+Shift+F) in ``menu`` and on ``win``; the dialog is made once and kept."""
    act = QAction(tr("gsearch.menu"), win)
    act.setObjectName("searchAllAction")
    act.setShortcut(QKeySequence("Ctrl+Shift+F"))
    holder: list[Optional[SearchDialog]] = [None]

    def show() -> None:
        if holder[0] is None:
            holder[0] = SearchDialog(win)
            win.search_dialog = holder[0]
        d = holder[0]
        d.refresh_cards()
        d.show()
        d.raise_()
        d.edit.setFocus()
        d.edit.selectAll()

    act.triggered.connect(show)
    win.addAction(act)
    if menu is not None:
        menu.addAction(act)
    return act


__all__ = ["SearchDialog", "install_search_dialog"]
