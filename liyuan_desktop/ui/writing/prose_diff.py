"""A prose diff view for the checkpoint timeline (issue 17): what changed in each chapter, by sentence and by word,
with the changed words highlighted — no ``@@`` hunks, no ``+``/``-`` line prefixes.

* 行内 (inline): the text reads on; removed words are struck through on red, added words are on green.
* 并排 (side by side): the old text on the left, the new on the right, one row per run of sentences.
* Unchanged runs are collapsed to :data:`CONTEXT` sentences either side of a change with a 「⋯ 未改动 N 句 ⋯」 line;
  「全文」 shows the whole chapter (whole-chapter context on demand).

The diff itself is core/story/prose_diff.py (:func:`diff_prose`); this module only renders it as HTML in a
QTextBrowser, coloured from the theme (light/dark). Nothing long on the UI thread (issue 15 item 12): a big diff is
computed on a worker (:func:`.tasks.call_in_worker`; 「正在比较…」 meanwhile), every line of text is its own paragraph
and 并排 is many small tables (the browser lays out paragraph by paragraph, but a block or a table whole), and a
long document is appended in :data:`FILL_CHARS` steps after the first screen — a 20,000-character chapter side by
side was one 125-200 ms step, now steps of ~10-25 ms (tests/ui/test_prose_diff_offthread.py). ``show_files(list[FileDiff])`` / ``show_note(text)``; ``html``
is the last HTML set and ``marks`` the highlighted pieces ``[(op, text)]`` (both for tests).
"""

from __future__ import annotations

import html as _html
from typing import Any, Callable, Optional

from PySide6.QtCore import QTimer
from PySide6.QtGui import QTextBlockFormat, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...core.story.prose_diff import Block, ProseDiff, diff_prose
from ..infra.i18n import register, tr
from ..infra.tasks import call_in_worker
from ..infra.theme import mode, set_role

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
    "pdiff.wait": {"zh": "正在比较…", "en": "Comparing…"},
    "pdiff.error": {"zh": "无法比较：{error}", "en": "Could not compare: {error}"},
    "pdiff.cut": {"zh": "…… 还有约 {n} 字没有显示（太长）。", "en": "… about {n} more characters not shown (too long)."},
})

CONTEXT = 2
"""Unchanged sentences kept on each side of a change when collapsed."""

SYNC_DIFF_CHARS = 8_000
"""Text (old + new, all files) up to which the diff is computed on the UI thread (~1 ms); above: on a worker."""

FILL_CHARS = 6_000
"""HTML characters put into the browser at once (the first screen), then per timer tick (a few ms each)."""

_DOC = "<html><body style='line-height:160%'>{}</body></html>"

SIDE_ROW_LINES = 4
"""Paragraphs per row (one small table each) in 并排: a table is laid out whole, so rows stay small."""

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
        #: a diff is being computed on a worker (:meth:`show_files`)
        self.pending = False
        self._cancel: Optional[Callable[[], None]] = None
        self._rest: list[str] = []  # HTML parts still to append (:meth:`_fill`)
        self._fill_timer = QTimer(self)
        self._fill_timer.setInterval(0)
        self._fill_timer.timeout.connect(self._fill)

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
        """Show the changed files of a checkpoint (``FileDiff`` list: name, status, old_name, old_text, new_text).
        Up to :data:`SYNC_DIFF_CHARS` characters of text the diff is computed and shown at once; above, it is
        computed on a worker (「正在比较…」 meanwhile, :attr:`pending` True) and shown when it is done — a
        20,000-character chapter took 15-40 ms of diff on the UI thread (issue 15 item 12)."""
        self.files = list(files)
        self._diffs = [None] * len(self.files)
        self.note = None
        self._cancel_diff()
        jobs = [None if f.status == "renamed" else (f.old_text if f.status != "added" else None,
                                                    f.new_text if f.status != "removed" else None)
                for f in self.files]
        if sum(len(a or "") + len(b or "") for j in jobs if j for a, b in (j,)) <= SYNC_DIFF_CHARS:
            self.render()
            return
        self.pending = True
        self.render()  # the waiting line

        def compute() -> list[Optional[ProseDiff]]:  # on the worker: plain strings in, plain data out
            return [diff_prose(*j) if j else None for j in jobs]

        def done(diffs: Optional[list[Optional[ProseDiff]]], error: Optional[BaseException]) -> None:
            self._cancel = None
            self.pending = False
            if error is not None:
                self.files, self._diffs, self.note = [], [], tr("pdiff.error", error=error)
            else:
                self._diffs = list(diffs or [])
            self.render()

        self._cancel = call_in_worker(self, compute, done)

    def _cancel_diff(self) -> None:
        if self._cancel is not None:
            self._cancel()
            self._cancel = None
        self.pending = False

    def show_note(self, text: str) -> None:
        """Show one line instead of a diff (nothing selected, an error)."""
        self._cancel_diff()
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
        """Rebuild the HTML for the files, the mode and 全文 (while a diff is computed: the waiting line). A long
        document is put into the browser a part at a time (:meth:`_fill`)."""
        c = _COLOURS["dark" if mode() == "dark" else "light"]
        self.marks = []
        parts: list[str] = []
        added = removed = sentences = 0
        budget = [MAX_HTML_CHARS, 0]  # characters left to render, characters skipped
        if self.note is not None:
            parts.append(f'<p style="color:{c["muted"]}">{_esc(self.note)}</p>')
        if self.pending:
            parts.append(f'<p style="color:{c["muted"]}">{_esc(tr("pdiff.wait"))}</p>')
        for i, f in enumerate(self.files if not self.pending else []):
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
                parts.extend(self._side(c, d.blocks, budget))
            else:
                parts.extend(self._inline(c, d.blocks, budget))
        if budget[1]:
            parts.append(f'<p style="color:{c["muted"]}">{_esc(tr("pdiff.cut", n=budget[1]))}</p>')
        self.stats.setText(tr("pdiff.stats", added=added, removed=removed, n=sentences)
                           if len(self.files) > 1 and not self.pending else "")
        self.html = _DOC.format("".join(parts))
        self._fill_timer.stop()
        first, size = 0, 0
        while first < len(parts) and size < FILL_CHARS:
            size += len(parts[first])
            first += 1
        self._rest = parts[first:]
        self.browser.setHtml(_DOC.format("".join(parts[:first])))
        if self._rest:
            self._fill_timer.start()

    def _fill(self) -> None:
        """Append the next :data:`FILL_CHARS` of HTML to the document (a timer tick; the view shows the first part
        at once and the rest follows in steps of a few ms: setting a 20,000-character chapter's HTML at once parses
        and lays out for 50-200 ms on the UI thread)."""
        batch: list[str] = []
        size = 0
        while self._rest and size < FILL_CHARS:
            part = self._rest.pop(0)
            batch.append(part)
            size += len(part)
        if batch:
            cur = QTextCursor(self.browser.document())
            cur.movePosition(QTextCursor.MoveOperation.End)
            if cur.block().length() > 1:  # the last paragraph has text: the batch starts a new one
                cur.insertBlock(QTextBlockFormat(), QTextCharFormat())
            cur.insertHtml("".join(batch))
        if not self._rest:
            self._fill_timer.stop()

    def filled(self) -> bool:
        """Whether the whole document is in the browser (a long one is appended in steps: :meth:`_fill`)."""
        return not self._rest and not self.pending

    @staticmethod
    def _head(c: dict[str, str], title: str, stats: str) -> str:
        extra = f' &nbsp;<span style="font-weight:normal;color:{c["muted"]}">{_esc(stats)}</span>' if stats else ""
        return (f'<p style="background:{c["head_bg"]};color:{c["head_fg"]};font-weight:bold;margin-top:8px;'
                f'padding:2px">{_esc(title)}{extra}</p>')

    def _piece(self, c: dict[str, str], op: str, text: str, budget: list[int]) -> list[str]:
        """The HTML of one piece, one string per line of its text (``text.split("\\n")``; the caller starts a
        paragraph at each line break). Recorded in :attr:`marks` whole."""
        if budget[0] <= 0:
            budget[1] += len(text)
            return [""] * (text.count("\n") + 1)
        budget[0] -= len(text)
        lines = text.replace("\r\n", "\n").split("\n")
        if op == "equal":
            return [_esc(t) for t in lines]
        self.marks.append((op, text))
        if op == "delete":
            style = f'background:{c["del_bg"]};color:{c["del_fg"]};text-decoration:line-through'
        else:
            style = f'background:{c["ins_bg"]};color:{c["ins_fg"]}'
        return [f'<span style="{style}">{_esc(t)}</span>' if t else "" for t in lines]

    @classmethod
    def _para_list(cls, segments: list[list[str]]) -> list[str]:
        """Paragraphs from the pieces' line segments (:meth:`_piece`): one ``<p>`` per line of text, never one
        block of a whole chapter with ``<br/>`` in it — the text browser lays a document out paragraph by paragraph
        as it is shown, but a single block (or a single table) all at once (~70-170 ms for a 20,000-character
        chapter: issue 15 item 12)."""
        lines = cls._lines(segments)
        if lines == [""]:
            return []  # nothing (e.g. no context before the first change), not an empty line
        return [f'<p style="margin:0">{line}</p>' for line in lines]

    @staticmethod
    def _lines(segments: list[list[str]]) -> list[str]:
        """The HTML of each line of text the pieces' segments make (see :meth:`_para_list`)."""
        lines: list[list[str]] = [[]]
        for seg in segments:
            for k, part in enumerate(seg):
                if k:
                    lines.append([])
                if part:
                    lines[-1].append(part)
        if len(lines) > 1 and not lines[-1]:
            lines.pop()  # a text ending in a line break: no empty paragraph after it
        return ["".join(line) for line in lines]

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

    def _inline(self, c: dict[str, str], blocks: list[Block], budget: list[int]) -> list[str]:
        out: list[str] = []
        run: list[list[str]] = []  # line segments of the text since the last fold line
        for k, b in enumerate(blocks):
            if b.kind == "equal":
                head, n, tail = self._context(blocks, k)
                run.append(self._piece(c, "equal", head, budget))
                if n is not None:
                    out.extend(self._para_list(run))
                    run = []
                    out.append(self._fold(c, n))
                    run.append(self._piece(c, "equal", tail, budget))
            else:
                run.extend(self._piece(c, p.op, p.text, budget) for p in b.pieces)
        out.extend(self._para_list(run))
        return out

    def _side(self, c: dict[str, str], blocks: list[Block], budget: list[int]) -> list[str]:
        # many small tables, not one for the chapter: a table is laid out whole (see _para_list). A run is cut into
        # rows of SIDE_ROW_LINES paragraphs, the old run's paragraph i beside the new run's paragraph i
        table = '<table width="100%" cellspacing="0" cellpadding="0">'
        rows = [f'{table}<tr><th width="50%" style="color:{c["muted"]}">{tr("pdiff.before")}</th>'
                f'<th width="50%" style="color:{c["muted"]}">{tr("pdiff.after")}</th></tr></table>']
        cell = '<td width="50%" valign="top" style="padding:0 4px">'
        top = f'<td width="50%" valign="top" style="border-top:1px solid {c["rule"]};padding:4px 4px 0 4px">'

        def run(left: list[str], right: list[str]) -> None:
            n = max(len(left), len(right))
            for i in range(0, n, SIDE_ROW_LINES):
                td = top if i == 0 else cell
                cells = [td + "".join(f'<p style="margin:0">{line}</p>' for line in side[i:i + SIDE_ROW_LINES])
                         + "</td>" for side in (left, right)]
                rows.append(f"{table}<tr>{cells[0]}{cells[1]}</tr></table>")

        for k, b in enumerate(blocks):
            if b.kind == "equal":
                head, n, tail = self._context(blocks, k)
                if head:
                    h = self._lines([self._piece(c, "equal", head, budget)])
                    run(h, h)
                if n is not None:
                    rows.append(self._fold(c, n))
                    if tail:
                        t = self._lines([self._piece(c, "equal", tail, budget)])
                        run(t, t)
            else:
                run(self._lines([self._piece(c, p.op, p.text, budget) for p in b.pieces if p.op != "insert"]),
                    self._lines([self._piece(c, p.op, p.text, budget) for p in b.pieces if p.op != "delete"]))
        return rows

    def plain_text(self) -> str:
        """What the view shows, as plain text."""
        return self.browser.toPlainText()

