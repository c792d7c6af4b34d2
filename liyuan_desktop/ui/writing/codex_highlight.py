"""Codex mentions in the chapter editor (issue 28): every name and alias of the codex is underlined and tinted where
it occurs in the text, and hovering one shows its entry — name, kind, aliases and description.

:class:`CodexHighlighter` is a ``QSyntaxHighlighter`` on the editor's document, fed the codex that the writing room
gathered off the UI thread (``writing_panes.RoomData.codex``, a list of ``core.chat.writing_room.CodexEntry``). It
finds the names per paragraph (block) with one compiled alternation, longest name first, so 「林青青」 is one mention
and not 「林青」 plus a character; a block is at most a paragraph, so the work follows the screen being edited, not
the book. :class:`MentionTips` answers ``QEvent.ToolTip`` on the editor's viewport with the entry under the mouse.
"""

from __future__ import annotations

import html
import re
from typing import Any, Optional

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QColor, QHelpEvent, QSyntaxHighlighter, QTextCharFormat, QTextDocument
from PySide6.QtWidgets import QPlainTextEdit, QToolTip

from ..infra.i18n import register, tr

register({
    "codexhl.aliases": {"zh": "又名：{names}", "en": "Also: {names}"},
    "codexhl.nodesc": {"zh": "（还没有描述：在「设定」里写）", "en": "(no description yet: write one in Codex)"},
})

#: The longest name the highlighter looks for (longer ones are left out of the alternation).
NAME_MAX = 100


class CodexHighlighter(QSyntaxHighlighter):
    """Underlines and tints codex names in ``document``. :meth:`set_entries` takes the codex (objects with
    ``name``, ``aliases``, ``kind``, ``description``); :meth:`entry_at` and :meth:`spans` answer what is where."""

    def __init__(self, document: QTextDocument):
        super().__init__(document)
        self.entries: dict[str, Any] = {}  # every name and alias → its entry
        self._pattern: Optional[re.Pattern[str]] = None
        self.mention_format = QTextCharFormat()
        self.mention_format.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DotLine)
        self.mention_format.setUnderlineColor(QColor("#3b82c4"))
        self.mention_format.setForeground(QColor("#2f6fb0"))

    def set_dark(self, dark: bool) -> None:
        """Colours that read on a dark or a light page."""
        colour = QColor("#7fb8ee" if dark else "#2f6fb0")
        self.mention_format.setForeground(colour)
        self.mention_format.setUnderlineColor(colour)
        self.rehighlight()

    def set_entries(self, entries: list[Any]) -> None:
        """Highlight these codex entries' names and aliases (an empty list: nothing)."""
        names: dict[str, Any] = {}
        for e in entries:
            for n in [e.name, *getattr(e, "aliases", [])]:
                n = (n or "").strip()
                if n and len(n) <= NAME_MAX and n not in names:
                    names[n] = e
        if names.keys() == self.entries.keys() and all(names[k] is self.entries[k] for k in names):
            return
        self.entries = names
        ordered = sorted(names, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(n) for n in ordered)) if ordered else None
        self.rehighlight()

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt API
        if self._pattern is None:
            return
        for m in self._pattern.finditer(text):
            self.setFormat(m.start(), m.end() - m.start(), self.mention_format)

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """``(start, end, name)`` of every mention in ``text`` (the highlighter's rule, for tests and tooltips)."""
        if self._pattern is None:
            return []
        return [(m.start(), m.end(), m.group(0)) for m in self._pattern.finditer(text)]

    def entry_at(self, block_text: str, column: int) -> Optional[Any]:
        """The entry whose name covers ``column`` of a paragraph's text, or None."""
        for start, end, name in self.spans(block_text):
            if start <= column < end:
                return self.entries.get(name)
        return None


def entry_tip(entry: Any) -> str:
    """The hover card of one codex entry (rich text, every user string escaped)."""
    head = f"<b>{html.escape(entry.name)}</b>"
    kind = getattr(entry, "kind", "")
    if kind:
        head += f" · {html.escape(tr('wr.codex.kind.' + str(kind)))}"
    parts = [head]
    if getattr(entry, "aliases", None):
        parts.append(html.escape(tr("codexhl.aliases", names="、".join(entry.aliases))))
    desc = (getattr(entry, "description", "") or "").strip()
    parts.append(html.escape(desc[:600]).replace("\n", "<br>") if desc else f"<i>{html.escape(tr('codexhl.nodesc'))}</i>")
    return "<p style='max-width:360px'>" + "<br>".join(parts) + "</p>"


class MentionTips(QObject):
    """Hovering a highlighted name in ``edit`` shows :func:`entry_tip` of its entry."""

    def __init__(self, edit: QPlainTextEdit, highlighter: CodexHighlighter):
        super().__init__(edit)
        self.edit = edit
        self.highlighter = highlighter
        edit.viewport().installEventFilter(self)

    def tip_at(self, x: int, y: int) -> str:
        """The hover card for the viewport point (x, y), or "" when no name is there."""
        from PySide6.QtCore import QPoint

        cur = self.edit.cursorForPosition(QPoint(x, y))
        block = cur.block()
        entry = self.highlighter.entry_at(block.text(), cur.positionInBlock())
        if entry is None and cur.positionInBlock() > 0:  # the cursor lands between characters: try the one before
            entry = self.highlighter.entry_at(block.text(), cur.positionInBlock() - 1)
        return entry_tip(entry) if entry is not None else ""

    def eventFilter(self, obj: QObject, ev: QEvent) -> bool:  # noqa: N802 - Qt API
        if ev.type() == QEvent.Type.ToolTip and isinstance(ev, QHelpEvent):
            tip = self.tip_at(ev.pos().x(), ev.pos().y())
            if tip:
                QToolTip.showText(ev.globalPos(), tip, self.edit.viewport())
            else:
                QToolTip.hideText()
            return True
        return False


__all__ = ["CodexHighlighter", "MentionTips", "entry_tip"]
