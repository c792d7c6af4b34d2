"""The card list's tools (issue 26 §3): a search box filtering cards by name and tag, a sort (recent, name, created;
favourites always first), a star per card (``core.cards.meta`` ``favorite``) with a 「只看收藏」 switch, and a second
line under every row — a card's tags, a chat's date, length and last message (``core.chat.summary``).

What the rows show beyond their names is gathered on a worker (:func:`gather`: card files and chat session files
are read there, never on the UI thread; a card with 200 chats costs one worker pass, and later passes only re-read
what changed, the summaries being cached per file). The window keeps the answers in :class:`ListInfo` and
repaints the rows from it; the rows' first column stays the bare name (tests and the context menu read it), the star
and the second line are painted by :class:`RowDelegate`.

SillyTavern's character list does the same: search by name and tags, favourites (its ``fav``), sort by name /
recent / date added, tags under the name; its chat list shows each chat's last message, date and message count.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Optional

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLineEdit,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.cards.library import ChatRef
from ..infra.i18n import tr

DETAIL_ROLE = int(Qt.ItemDataRole.UserRole) + 1
"""The muted second line of a row (a card's tags, a chat's date · length · last message)."""
STAR_ROLE = int(Qt.ItemDataRole.UserRole) + 2
"""True on a starred card's row (painted as ★ before the name)."""
SORTS = ("recent", "name", "created")


class CardInfo:
    """What a card row shows beyond its name: ``tags`` (the card's ``tags``), ``created`` (ms: when its file came
    into the library — the kept original's modification time), ``favorite``; ``stamp`` says which files it was read
    from (sizes and times), so a pass reads a card again only when they changed."""

    __slots__ = ("tags", "created", "favorite", "stamp")

    def __init__(self, tags: list[str], created: int, favorite: bool, stamp: tuple[Any, ...]) -> None:
        self.tags, self.created, self.favorite, self.stamp = tags, created, favorite, stamp

    def key(self) -> tuple[Any, ...]:
        """What the rows show (two passes with equal keys need no repaint)."""
        return (tuple(self.tags), self.created, self.favorite)


def _stamp(*paths: Path) -> tuple[Any, ...]:
    out: list[Any] = []
    for p in paths:
        try:
            st = p.stat()
            out.append((st.st_size, st.st_mtime_ns))
        except OSError:
            out.append(None)
    return tuple(out)


def _card_info(card_dir: Path, known: Optional[CardInfo]) -> CardInfo:
    """A card folder's :class:`CardInfo` (on a worker): ``known`` again when its files did not change."""
    from ...core.cards.meta import FAVORITE_KEY, read_meta

    stamp = _stamp(card_dir / "card.json", card_dir / "liyuan.json")
    if known is not None and known.stamp == stamp:
        return known
    tags: list[str] = []
    st_fav = False
    try:
        raw = json.loads((card_dir / "card.json").read_text("utf-8"))
        data = raw.get("data") if isinstance(raw.get("data"), dict) else raw
        tags = [t.strip() for t in (data.get("tags") or []) if isinstance(t, str) and t.strip()][:20]
        ext = data.get("extensions")
        st_fav = isinstance(ext, dict) and ext.get("fav") is True  # SillyTavern's own star, until ours is set
    except (OSError, ValueError, AttributeError):
        pass
    meta = read_meta(card_dir)
    fav = meta[FAVORITE_KEY] is True if isinstance(meta.get(FAVORITE_KEY), bool) else st_fav
    times = [p.stat().st_mtime_ns for p in card_dir.glob("original.*") if p.is_file()]
    if not times and (card_dir / "card.json").exists():
        times = [(card_dir / "card.json").stat().st_mtime_ns]
    return CardInfo(tags, (min(times) // 1_000_000) if times else 0, fav, stamp)


def gather(cards: list[str], chats: list[str], known: dict[str, CardInfo], work: Any = None) -> tuple[dict[str, CardInfo], dict[str, Any]]:
    """On a worker: ({card folder: CardInfo}, {chat folder: ChatSummary or None}) for the folders given. ``known``:
    the card infos of the last pass (reused when a card's files did not change). Reads files only."""
    from ...core.chat.summary import chat_summary

    infos: dict[str, CardInfo] = {}
    for d in cards:
        if work is not None and work.cancelled():
            break
        try:
            infos[d] = _card_info(Path(d), known.get(d))
        except OSError:
            continue
    sums: dict[str, Any] = {}
    for d in chats:
        if work is not None and work.cancelled():
            break
        sums[d] = chat_summary(d)
    return infos, sums


class ListInfo:
    """The window's copy of what :func:`gather` found, and the list's filter and sort (set by the tools)."""

    def __init__(self) -> None:
        self.cards: dict[str, CardInfo] = {}
        self.chats: dict[str, Any] = {}
        self.query = ""
        self.sort = "recent"
        self.fav_only = False
        self.generation = 0

    def favorite(self, card_dir: str) -> bool:
        """Whether the card is starred (False until its info is read)."""
        info = self.cards.get(card_dir)
        return bool(info and info.favorite)

    def matches(self, name: str, card_dir: str) -> bool:
        """Whether a card passes the search (its name or one of its tags contains the words, any case) and the
        favourites switch."""
        if self.fav_only and not self.favorite(card_dir):
            return False
        q = self.query.strip().casefold().lstrip("#")
        if not q:
            return True
        info = self.cards.get(card_dir)
        return q in name.casefold() or any(q in t.casefold() for t in (info.tags if info else []))

    def order(self, cards: list[Any], newest: dict[str, int]) -> list[Any]:
        """``cards`` (library CardRefs) in the chosen order, favourites first; ``newest``: card folder → its newest
        chat's change time (ms), for 「最近」."""
        def created(c: Any) -> int:
            info = self.cards.get(c.dir)
            return info.created if info else 0

        def key(c: Any) -> tuple[bool, int, str]:
            if self.sort == "name":
                when = 0
            elif self.sort == "created":
                when = -created(c)
            else:
                when = -max(newest.get(c.dir, 0), created(c))
            return (not self.favorite(c.dir), when, c.name.casefold())

        return sorted(cards, key=key)

    def card_line(self, card_dir: str) -> str:
        """The second line of a card row: its tags as ``#tag``."""
        info = self.cards.get(card_dir)
        return " ".join(f"#{t}" for t in info.tags[:8]) if info and info.tags else ""

    def chat_line(self, chat: ChatRef) -> str:
        """The second line of a chat row: date, length and last message (date only until its summary is read)."""
        s = self.chats.get(chat.dir)
        when = (s.updated if s is not None else 0) or chat.updated
        t = time.localtime(when / 1000)
        this_year = t.tm_year == time.localtime().tm_year  # the year only when it is not this one: room for the text
        date = time.strftime("%m-%d %H:%M" if this_year else "%Y-%m-%d %H:%M", t) if when else ""
        if s is None:
            return date
        if not s.messages:
            return tr("cards.chat.empty", date=date)
        return tr("cards.chat.line", date=date, n=s.messages, text=s.last_text)


class RowDelegate(QStyledItemDelegate):
    """Paints a list row as its name (★ first on a starred card) over a smaller, muted second line
    (:data:`DETAIL_ROLE`); a row without a second line is painted as usual."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:  # noqa: N802
        size = super().sizeHint(option, index)
        if index.data(DETAIL_ROLE):
            size.setHeight(size.height() + option.fontMetrics.height())
        return size

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        if index.data(STAR_ROLE):
            opt.text = "★ " + opt.text
        detail = index.data(DETAIL_ROLE)
        widget = opt.widget
        style = widget.style() if widget is not None else None
        if not detail or style is None:
            if style is not None:
                style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
            return
        name = opt.text
        opt.text = ""
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        opt.text = name
        area = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, widget)
        fm = opt.fontMetrics
        line = fm.height()
        top = area.top() + max(0, (area.height() - 2 * line) // 2)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        pen = opt.palette.color(opt.palette.ColorRole.HighlightedText if selected else opt.palette.ColorRole.Text)
        painter.save()
        painter.setPen(pen)
        painter.drawText(QRect(area.left() + 2, top, area.width() - 4, line), int(Qt.AlignmentFlag.AlignVCenter),
                         fm.elidedText(name, Qt.TextElideMode.ElideRight, area.width() - 4))
        muted = QColor(pen)
        muted.setAlpha(150)
        painter.setPen(muted)
        painter.drawText(QRect(area.left() + 2, top + line, area.width() - 4, line), int(Qt.AlignmentFlag.AlignVCenter),
                         fm.elidedText(str(detail), Qt.TextElideMode.ElideRight, area.width() - 4))
        painter.restore()


class CardListBar(QWidget):
    """The row above the card list: search box, sort, 收藏 (the selected card) and 只看收藏."""

    def __init__(self, win: Any) -> None:
        super().__init__()
        self.win = win
        self.setObjectName("cardListBar")
        rows = QVBoxLayout(self)  # the search box on its own line: the left column is narrow (230 px)
        rows.setContentsMargins(0, 0, 0, 0)
        rows.setSpacing(4)
        row = QHBoxLayout()
        row.setSpacing(4)
        self.search = QLineEdit()
        self.search.setObjectName("cardSearch")
        self.search.setPlaceholderText(tr("cards.search"))
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(lambda text: win.card_search_changed(text))
        rows.addWidget(self.search)
        rows.addLayout(row)
        self.sort = QComboBox()
        self.sort.setObjectName("cardSort")
        self.sort.setToolTip(tr("cards.sort.tip"))
        for key in SORTS:
            self.sort.addItem(tr(f"cards.sort.{key}"), key)
        self.sort.currentIndexChanged.connect(lambda _i: win.card_sort_changed(self.sort.currentData()))
        row.addWidget(self.sort, 1)
        self.star = QToolButton()
        self.star.setObjectName("cardFavorite")
        self.star.setText("☆")
        self.star.setToolTip(tr("cards.fav.tip"))
        self.star.setAccessibleName(tr("cards.fav"))
        self.star.clicked.connect(lambda _=False: win.toggle_favorite())
        row.addWidget(self.star)
        self.fav_only = QToolButton()
        self.fav_only.setObjectName("cardFavoritesOnly")
        self.fav_only.setText(tr("cards.fav.only.short"))
        self.fav_only.setCheckable(True)
        self.fav_only.setToolTip(tr("cards.fav.only"))
        self.fav_only.setAccessibleName(tr("cards.fav.only"))
        self.fav_only.toggled.connect(lambda on: win.card_fav_only_changed(bool(on)))
        row.addWidget(self.fav_only)

    def sync_star(self, starred: Optional[bool]) -> None:
        """The star button for the selected card: ★ when starred, ☆ when not, off without a card."""
        self.star.setEnabled(starred is not None)
        self.star.setText("★" if starred else "☆")


def install_card_list(win: Any) -> CardListBar:
    """Put the card list's tools above ``win.tree`` (the main window's card and chat list) and its row painter on
    it; returns the bar (kept as ``win.card_bar``)."""
    tree = win.tree
    layout = tree.parentWidget().layout()
    bar = CardListBar(win)
    layout.insertWidget(layout.indexOf(tree), bar)
    tree.setItemDelegate(RowDelegate(tree))
    tree.setUniformRowHeights(False)
    tree.currentItemChanged.connect(lambda _cur, _prev: win.sync_card_star())
    win.card_bar = bar
    return bar


def row_kind(item: Optional[QTreeWidgetItem]) -> Any:
    """The list data of a row (``("card", CardRef)`` / ``("chat", CardRef, ChatRef)``), or None."""
    return item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None


__all__ = ["DETAIL_ROLE", "STAR_ROLE", "SORTS", "CardInfo", "CardListBar", "ListInfo", "RowDelegate", "gather",
           "install_card_list", "row_kind"]
