"""The 设定 (codex) pane of an agent chat (issue 19 §3): the roster's names grouped by kind (人物 / 地点 / 物品 /
剧情线) with how often the chapters mention them; for the selected name its ledger facts (each valid from a chapter),
first appearance, the lore entry when one exists, its aliases (editable: ``Chat.set_aliases``; they count as mentions)
and the list of its mentions — a click opens the chapter at that place (``openChapter(file, utf16 offset, length)``).

The mentions list comes from ``Chat.mentions`` (the index :mod:`.writing_panes` built off the UI thread); the few
words around each mention are read from the chapter files, cached by (file, size, mtime).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.text import utf16_slice
from ..infra.i18n import register, show, tr
from ..infra.theme import set_role
from .room_pane import KEY, RoomPane, entry_tree, role_label

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "wr.codex.tab": {"zh": "设定", "en": "Codex"},
    "wr.codex.none": {"zh": "名录还是空的：场记记下人物、地点、物品和剧情线后，这里就能按名字查。",
                      "en": "The roster is empty: once the scribe records characters, places, items and plot lines they show here."},
    "wr.codex.kind.character": {"zh": "人物", "en": "Characters"},
    "wr.codex.kind.place": {"zh": "地点", "en": "Places"},
    "wr.codex.kind.item": {"zh": "物品", "en": "Items"},
    "wr.codex.kind.event": {"zh": "剧情线", "en": "Plot lines"},
    "wr.codex.col.name": {"zh": "名字", "en": "Name"},
    "wr.codex.col.mentions": {"zh": "提及", "en": "Mentions"},
    "wr.codex.aliases": {"zh": "别名：", "en": "Aliases:"},
    "wr.codex.aliases.tip": {"zh": "用顿号或逗号分开；别名也算作这个名字的出现", "en": "Separate with commas; aliases count as mentions"},
    "wr.codex.aliases.save": {"zh": "保存别名", "en": "Save aliases"},
    "wr.codex.first": {"zh": "首见：{when}", "en": "First seen: {when}"},
    "wr.codex.first.file": {"zh": "首次出现：{file}", "en": "First mention: {file}"},
    "wr.codex.fact.from": {"zh": "（自第 {n} 章）", "en": " (from ch. {n})"},
    "wr.codex.lore": {"zh": "设定条目：{title}", "en": "Lore entry: {title}"},
    "wr.codex.mentions": {"zh": "提到 {n} 次，{c} 章（点一条打开正文）", "en": "{n} mentions in {c} chapters (click to open)"},
    "wr.codex.nomention": {"zh": "正文里还没有提到", "en": "Not mentioned in the chapters yet"},
})

KINDS = ("character", "place", "item", "event")
#: At most this many mentions are listed for one name.
MENTION_LIMIT = 300
#: Characters of context either side of a mention.
CONTEXT = 12


class CodexPane(RoomPane):
    """The codex (a :class:`.room_pane.RoomPane`), plus ``select_name(name)``; ``changed()`` means aliases were
    saved: gather again. Name rows hold a ``story.codex`` entry under ``KEY``."""

    TITLE_KEY = "wr.codex.tab"
    HEADERS = ("wr.codex.col.name", "wr.codex.col.mentions")

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self._texts: dict[str, tuple[tuple[int, int], str]] = {}

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.empty = role_label(lay, "muted", tr("wr.codex.none"))
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.names = self.tree = entry_tree(self.headers())
        self.names.itemSelectionChanged.connect(self._show_selected)
        self.split.addWidget(self.names)

        box = QWidget()
        bl = QVBoxLayout(box)
        bl.setContentsMargins(0, 0, 0, 0)
        self.title = QLabel("")
        set_role(self.title, "title")
        bl.addWidget(self.title)
        self.facts = QLabel("")
        self.facts.setWordWrap(True)
        self.facts.setTextFormat(Qt.TextFormat.PlainText)
        self.facts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        bl.addWidget(self.facts)
        row = QHBoxLayout()
        row.addWidget(QLabel(tr("wr.codex.aliases")))
        self.aliases = QLineEdit()
        self.aliases.setToolTip(tr("wr.codex.aliases.tip"))
        self.aliases.returnPressed.connect(self.save_aliases)
        row.addWidget(self.aliases, 1)
        self.alias_btn = QPushButton(tr("wr.codex.aliases.save"))
        self.alias_btn.clicked.connect(lambda _=False: self.save_aliases())
        row.addWidget(self.alias_btn)
        bl.addLayout(row)
        self.count = role_label(bl, "muted", wrap=False)
        self.mentions = QListWidget()
        self.mentions.itemClicked.connect(self._open)
        self.mentions.itemActivated.connect(self._open)
        bl.addWidget(self.mentions, 1)
        self.split.addWidget(box)
        self.split.setSizes([220, 380])
        self.split.setChildrenCollapsible(False)
        lay.addWidget(self.split, 1)
        self.set_chat(None)

    # -- data -----------------------------------------------------------------------------------------------
    def set_chat(self, chat: Optional[Chat]) -> None:
        """Show ``chat`` (None empties the pane)."""
        self.chat = chat
        self.data = None
        self._texts.clear()
        self.names.clear()
        self._show_entry(None)
        self.empty.setVisible(False)

    def set_busy(self, busy: bool) -> None:
        """Aliases are a file of their own: editing stays allowed while a turn runs (the next gather uses them)."""

    def show_data(self, data: Any) -> None:
        """Render the codex of ``data`` grouped by kind (keeps the selected name)."""
        self.data = data
        keep = self.selected_name()
        self.names.clear()
        entries = list(data.codex) if data is not None else []
        for kind in KINDS:
            group = [e for e in entries if e.kind == kind]
            if not group:
                continue
            top = QTreeWidgetItem([f"{tr('wr.codex.kind.' + kind)}（{len(group)}）", ""])
            f = top.font(0)
            f.setBold(True)
            top.setFont(0, f)
            self.names.addTopLevelItem(top)
            for e in group:
                it = QTreeWidgetItem([e.name + (f"（{'、'.join(e.aliases)}）" if e.aliases else ""), str(e.mentions)])
                it.setData(0, KEY, e)
                it.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                top.addChild(it)
            top.setExpanded(True)
        self.empty.setVisible(self.chat is not None and not entries)
        if keep:
            self.select_name(keep)
        elif self.selected_name() is None:
            self._show_entry(None)

    def entry_items(self) -> list[QTreeWidgetItem]:
        out = []
        for i in range(self.names.topLevelItemCount()):
            top = self.names.topLevelItem(i)
            out += [top.child(j) for j in range(top.childCount())]
        return out

    def selected_name(self) -> Optional[str]:
        items = self.names.selectedItems()
        e = items[0].data(0, KEY) if items else None
        return e.name if e is not None else None

    def select_name(self, name: str) -> bool:
        """Select ``name`` (shows its facts and mentions); False when it is not listed."""
        for it in self.entry_items():
            if it.data(0, KEY).name == name:
                self.names.setCurrentItem(it)
                self._show_selected()
                return True
        return False

    def _show_selected(self) -> None:
        items = self.names.selectedItems()
        self._show_entry(items[0].data(0, KEY) if items else None)

    def _text_of(self, file: str) -> str:
        """The text of chapter ``file`` (cached by size and mtime; "" when unreadable)."""
        try:
            path = self.shown_chat.story.resolve(file)
            st = os.stat(path)
        except Exception:  # noqa: BLE001 - a chapter that is gone or refused simply shows no context
            return ""
        key = (st.st_size, st.st_mtime_ns)
        hit = self._texts.get(file)
        if hit is not None and hit[0] == key:
            return hit[1]
        try:
            with open(path, "r", encoding="utf-8", errors="replace", newline="") as f:
                text = f.read()
        except OSError:
            text = ""
        self._texts[file] = (key, text)
        return text

    def _show_entry(self, e: Any) -> None:
        self.mentions.clear()
        if e is None:
            self.title.setText("")
            self.facts.setText("")
            self.aliases.setText("")
            self.count.setText("")
            for w in (self.aliases, self.alias_btn):
                w.setEnabled(False)
            return
        for w in (self.aliases, self.alias_btn):
            w.setEnabled(self.chat is not None)
        self.title.setText(f"{e.name} · {tr('wr.codex.kind.' + e.kind)}")
        lines = []
        if e.first_seen:
            lines.append(tr("wr.codex.first", when=e.first_seen))
        if e.first_mention is not None:
            lines.append(tr("wr.codex.first.file", file=e.first_mention.file))
        for f in e.facts[-6:]:
            lines.append("· " + f.text + (tr("wr.codex.fact.from", n=f.from_chapter) if f.from_chapter else ""))
        if e.lore is not None:
            lines.append(tr("wr.codex.lore", title=e.lore.title or e.lore.uid))
            if e.lore.content:
                lines.append("  " + e.lore.content[:120])
        self.facts.setText("\n".join(lines))
        self.aliases.setText("、".join(e.aliases))
        self.count.setText(tr("wr.codex.mentions", n=e.mentions, c=len(e.chapters)) if e.mentions
                           else tr("wr.codex.nomention"))
        if self.chat is None or not e.mentions:
            return
        try:
            ms = self.chat.mentions(e.name, MENTION_LIMIT)
        except Exception:  # noqa: BLE001 - the list is a convenience; the counts above stand
            ms = []
        for m in ms:
            text = self._text_of(m.file)
            ctx = ""
            if text:
                before = utf16_slice(text, max(0, m.offset - CONTEXT * 2), m.offset)[-CONTEXT:]
                after = utf16_slice(text, m.offset + m.length, m.offset + m.length + CONTEXT * 2)[:CONTEXT]
                ctx = f"…{before}【{m.matched}】{after}…".replace("\n", " ")
            it = QListWidgetItem(f"{m.file}  {ctx}")
            it.setData(KEY, (m.file, m.offset, m.length))
            it.setToolTip(f"{m.file} @{m.offset}")
            self.mentions.addItem(it)

    # -- commands -------------------------------------------------------------------------------------------
    def _open(self, it: QListWidgetItem) -> None:
        k = it.data(KEY)
        if k:
            self.openChapter.emit(k[0], int(k[1]), int(k[2]))

    def save_aliases(self) -> bool:
        """Save the alias field for the selected name (、，, separated)."""
        name = self.selected_name()
        if name is None or self.chat is None:
            return False
        raw = self.aliases.text()
        for sep in ("，", ",", "；", ";"):
            raw = raw.replace(sep, "、")
        try:
            self.chat.set_aliases(name, [a.strip() for a in raw.split("、") if a.strip()])
        except OSError as e:
            self.inform(show(e))
            return False
        self.changed.emit()
        return True
