"""A prose diff view for the checkpoint timeline (issue 17): what changed in each chapter, by sentence and by word,
with the changed words highlighted — no ``@@`` hunks, no ``+``/``-`` line prefixes.

* 行内 (inline): the text reads on; removed words are struck through on red, added words are on green.
* 并排 (side by side): the old text on the left, the new on the right, one row per run of sentences.
* Unchanged runs are collapsed to :data:`CONTEXT` sentences either side of a change with a 「⋯ 未改动 N 句 ⋯」 line;
  「全文」 shows the whole chapter (whole-chapter context on demand).

The diff itself is core/story/prose_diff.py (:func:`diff_prose`); this module only renders it as HTML in a
QTextBrowser, coloured from the theme (light/dark). ``show_files(list[FileDiff])`` / ``show_note(text)``; ``html``
is the last HTML set and ``marks`` the highlighted pieces ``[(op, text)]`` (both for tests).
"""

from __future__ import annotations

import html as _html
from typing import Any, Optional

from PySide6.QtWidgets import (QButtonGroup, QCheckBox, QHBoxLayout, QLabel, QTextBrowser, QToolButton, QVBoxLayout,
                               QWidget)

from ..core.story.prose_diff import Block, ProseDiff, diff_prose
from .i18n import register, tr
from .theme import mode, set_role

register({
    "pdiff.inline": {"zh": "行内", "en": "Inline"},
    "pdiff.inline.tip": {"zh": "改动嵌在正文里：删掉的字划线标红，新加的字标绿", "en": "Changes inside the text: removed words struck out in red, added words in green"},
    "pdiff.side": {"zh": "并排", "en": "Side by side"},
    "pdiff.side.tip": {"zh": "左边是之前的正文，右边是之后的", "en": "Before on the left, after on the right"},
    "pdiff.full": {"zh": "全文", "en": "Whole chapter"},
    "pdiff.full.tip": {"zh": "显示整章，不折叠没改动的句子", "en": "Show the whole chapter, unchanged sentences included"},
    "pdiff.before": {"zh": "之前", "en": "Before"},
    "pdiff.after": {"zh": "之后", "en": "After"},
    "pdiff.folded": {"zh": "⋯ 未改动 {n} 句 ⋯", "en": "⋯ {n} unchanged sentences ⋯"},
    "pdiff.added": {"zh": "新增 {name}", "en": "Added {name}"},
    "pdiff.removed": {"zh": "删除 {name}", "en": "Removed {name}"},
    "pdiff.modified": {"zh": "修改 {name}", "en": "Changed {name}"},
    "pdiff.renamed": {"zh": "改名 {old} → {name}（内容没变）", "en": "Renamed {old} → {name} (text unchanged)"},
    "pdiff.stats": {"zh": "+{added} 字 · −{removed} 字 · {n} 句有改动", "en": "+{added} · −{removed} chars · {n} sentences changed"},
    "pdiff.same": {"zh": "内容没有变化。", "en": "No change in the text."},
    "pdiff.empty": {"zh": "（空文件）", "en": "(empty file)"},
    "pdiff.cut": {"zh": "…… 还有约 {n} 字没有显示（太长）。", "en": "… about {n} more characters not shown (too long)."},
})

CONTEXT = 2
"""Unchanged sentences kept on each side of a change when collapsed."""

MAX_HTML_CHARS = 600_000
"""Text characters rendered at most (the rest is summarised in one line)."""

_COLOURS = {
    "light": {"del_bg": "#fbe0e0", "del_fg": "#86181d", "ins_bg": "#d4f2dc", "ins_fg": "#0f5323", "head_bg": "#e3e9f2",
              "head_fg": "#1f2d3d", "muted": "#8a8277", "rule": "#d4cabb"},
    "dark": {"del_bg": "#4a2426", "del_fg": "#f2b0b0", "ins_bg": "#1f3d29", "ins_fg": "#a8e0b4", "head_bg": "#2a3442",
             "head_fg": "#d6e2f0", "muted": "#9a9288", "rule": "#4a443c"},
}


def _esc(text: str) -> str:
    """HTML of plain text: escaped, line breaks kept, runs of spaces kept."""
    t = _html.escape(text.replace("\r\n", "\n"), quote=False)
    return t.replace("  ", " &nbsp;").replace("\n", "<br/>")


def _real(sentences: tuple[str, ...]) -> int:
    return sum(1 for s in sentences if s.strip())


class ProseDiffView(QWidget):
    """Mode switch (行内 / 并排), 全文, and the rendered diff of the files shown."""

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.files: list[Any] = []
        self._diffs: list[Optional[ProseDiff]] = []
        self.note: Optional[str] = None
        self.html = ""
        self.marks: list[tuple[str, str]] = []
        self.side_by_side = False
        self.full = False

        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        bar = QHBoxLayout()
        bar.setSpacing(4)
        self.inline_btn = QToolButton()
        self.inline_btn.setText(tr("pdiff.inline"))
        self.inline_btn.setToolTip(tr("pdiff.inline.tip"))
        self.side_btn = QToolButton()
        self.side_btn.setText(tr("pdiff.side"))
        self.side_btn.setToolTip(tr("pdiff.side.tip"))
        group = QButtonGroup(self)
        for b in (self.inline_btn, self.side_btn):
            b.setCheckable(True)
            b.setAutoRaise(True)
            group.addButton(b)
            bar.addWidget(b)
        self.inline_btn.setChecked(True)
        self.side_btn.toggled.connect(self.set_side_by_side)
        self.full_box = QCheckBox(tr("pdiff.full"))
        self.full_box.setToolTip(tr("pdiff.full.tip"))
        self.full_box.toggled.connect(self.set_full)
        bar.addWidget(self.full_box)
        bar.addStretch(1)
        self.stats = QLabel("")
        set_role(self.stats, "muted")
        bar.addWidget(self.stats)
        lay.addLayout(bar)
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)
        self.browser.setReadOnly(True)
        lay.addWidget(self.browser, 1)

    # -- input ----------------------------------------------------------------------------------------------
    def show_files(self, files: list[Any]) -> None:
        """Show the changed files of a checkpoint (``FileDiff`` list: name, status, old_name, old_text, new_text)."""
        self.files = list(files)
        self._diffs = [None] * len(self.files)
        self.note = None
        self.render()

    def show_note(self, text: str) -> None:
        """Show one line instead of a diff (nothing selected, an error)."""
        self.files, self._diffs, self.note = [], [], text
        self.render()

    def set_side_by_side(self, on: bool) -> None:
        """并排 (True) or 行内 (False)."""
        self.side_by_side = bool(on)
        if self.side_btn.isChecked() != self.side_by_side:
            (self.side_btn if on else self.inline_btn).setChecked(True)
        self.render()

    def set_full(self, on: bool) -> None:
        """Whole chapters (True) or changes with a little context (False)."""
        self.full = bool(on)
        if self.full_box.isChecked() != self.full:
            self.full_box.setChecked(self.full)
        self.render()

    def diff_of(self, i: int) -> ProseDiff:
        """The prose diff of file ``i`` (computed once per ``show_files``)."""
        d = self._diffs[i]
        if d is None:
            f = self.files[i]
            d = self._diffs[i] = diff_prose(f.old_text if f.status != "added" else None,
                                            f.new_text if f.status != "removed" else None)
        return d

    # -- rendering ------------------------------------------------------------------------------------------
    def render(self) -> None:
        """Rebuild the HTML for the files, the mode and 全文."""
        c = _COLOURS["dark" if mode() == "dark" else "light"]
        self.marks = []
        parts: list[str] = []
        added = removed = sentences = 0
        budget = [MAX_HTML_CHARS, 0]  # characters left to render, characters skipped
        if self.note is not None:
            parts.append(f'<p style="color:{c["muted"]}">{_esc(self.note)}</p>')
        for i, f in enumerate(self.files):
            head = tr({"added": "pdiff.added", "removed": "pdiff.removed", "modified": "pdiff.modified",
                       "renamed": "pdiff.renamed"}[f.status], name=f.name, old=f.old_name or "")
            if f.status == "renamed":
                parts.append(self._head(c, head, ""))
                continue
            d = self.diff_of(i)
            added, removed, sentences = added + d.added, removed + d.removed, sentences + d.changed_sentences
            parts.append(self._head(c, head, tr("pdiff.stats", added=d.added, removed=d.removed, n=d.changed_sentences)))
            if not d.blocks:
                parts.append(f'<p style="color:{c["muted"]}">{tr("pdiff.empty")}</p>')
            elif not d.changed:
                parts.append(f'<p style="color:{c["muted"]}">{tr("pdiff.same")}</p>')
            elif self.side_by_side:
                parts.append(self._side(c, d.blocks, budget))
            else:
                parts.append(self._inline(c, d.blocks, budget))
        if budget[1]:
            parts.append(f'<p style="color:{c["muted"]}">{_esc(tr("pdiff.cut", n=budget[1]))}</p>')
        self.stats.setText(tr("pdiff.stats", added=added, removed=removed, n=sentences) if len(self.files) > 1 else "")
        self.html = "<html><body style='line-height:160%'>" + "".join(parts) + "</body></html>"
        self.browser.setHtml(self.html)

    @staticmethod
    def _head(c: dict[str, str], title: str, stats: str) -> str:
        extra = f' &nbsp;<span style="font-weight:normal;color:{c["muted"]}">{_esc(stats)}</span>' if stats else ""
        return (f'<p style="background:{c["head_bg"]};color:{c["head_fg"]};font-weight:bold;margin-top:8px;'
                f'padding:2px">{_esc(title)}{extra}</p>')

    def _piece(self, c: dict[str, str], op: str, text: str, budget: list[int]) -> str:
        if budget[0] <= 0:
            budget[1] += len(text)
            return ""
        budget[0] -= len(text)
        if op == "equal":
            return _esc(text)
        self.marks.append((op, text))
        if op == "delete":
            return (f'<span style="background:{c["del_bg"]};color:{c["del_fg"]};text-decoration:line-through">'
                    f'{_esc(text)}</span>')
        return f'<span style="background:{c["ins_bg"]};color:{c["ins_fg"]}">{_esc(text)}</span>'

    def _context(self, blocks: list[Block], k: int) -> tuple[str, Optional[int], str]:
        """(shown head, folded sentence count or None, shown tail) of equal block ``k``."""
        b = blocks[k]
        if self.full:
            return b.old, None, ""
        first, last = k == 0, k == len(blocks) - 1
        sents = b.sentences
        keep_head = 0 if first else CONTEXT
        keep_tail = 0 if last else CONTEXT
        # count whole sentences, skipping bare line breaks, so 「2 sentences」 means two sentences of text
        idx = [i for i, s in enumerate(sents) if s.strip()]
        if len(idx) <= keep_head + keep_tail + 1:
            return b.old, None, ""
        h = idx[keep_head - 1] + 1 if keep_head else 0
        t = idx[len(idx) - keep_tail] if keep_tail else len(sents)
        while t > h and not sents[t - 1].strip():  # a paragraph break before the tail stays with the tail
            t -= 1
        return "".join(sents[:h]), _real(sents[h:t]), "".join(sents[t:])

    def _fold(self, c: dict[str, str], n: int) -> str:
        return f'<p style="color:{c["muted"]};margin:4px 0">{_esc(tr("pdiff.folded", n=n))}</p>'

    def _inline(self, c: dict[str, str], blocks: list[Block], budget: list[int]) -> str:
        out: list[str] = []
        for k, b in enumerate(blocks):
            if b.kind == "equal":
                head, n, tail = self._context(blocks, k)
                out.append(self._piece(c, "equal", head, budget))
                if n is not None:
                    out.append(self._fold(c, n))
                    out.append(self._piece(c, "equal", tail, budget))
            else:
                out.extend(self._piece(c, p.op, p.text, budget) for p in b.pieces)
        return f"<div>{''.join(out)}</div>"

    def _side(self, c: dict[str, str], blocks: list[Block], budget: list[int]) -> str:
        rows = [f'<tr><th width="50%" style="color:{c["muted"]}">{tr("pdiff.before")}</th>'
                f'<th width="50%" style="color:{c["muted"]}">{tr("pdiff.after")}</th></tr>']
        cell = f'<td width="50%" valign="top" style="border-top:1px solid {c["rule"]};padding:4px">'
        for k, b in enumerate(blocks):
            if b.kind == "equal":
                head, n, tail = self._context(blocks, k)
                if head:
                    h = self._piece(c, "equal", head, budget)
                    rows.append(f"<tr>{cell}{h}</td>{cell}{h}</td></tr>")
                if n is not None:
                    rows.append(f'<tr><td colspan="2">{self._fold(c, n)}</td></tr>')
                    if tail:
                        t = self._piece(c, "equal", tail, budget)
                        rows.append(f"<tr>{cell}{t}</td>{cell}{t}</td></tr>")
            else:
                left = "".join(self._piece(c, p.op, p.text, budget) for p in b.pieces if p.op != "insert")
                right = "".join(self._piece(c, p.op, p.text, budget) for p in b.pieces if p.op != "delete")
                rows.append(f"<tr>{cell}{left}</td>{cell}{right}</td></tr>")
        return f'<table width="100%" cellspacing="0" cellpadding="0">{"".join(rows)}</table>'

    def retranslate(self) -> None:
        """The language switched: headers, fold lines and stats again (the live switch, ui/retranslate.py)."""
        self.render()

    def plain_text(self) -> str:
        """What the view shows, as plain text."""
        return self.browser.toPlainText()

