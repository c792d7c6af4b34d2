"""The draft pane (稿纸): the running beat as it happens, rendered from engine events.

Shows the draft as it grows (version, characters in UTF-16 units), the model's streamed text and collapsible
reasoning, each tool call as a line of activity, model calls used out of 20, tokens and cache hits per call.
After the beat: sealed, or 「本拍尚未收笔」 with one-click 「按现稿收笔」 / 「继续」 (seed 000, 收笔就结束这一轮).
A thin context meter shows 「上下文 used / window」 (``Chat.context_usage()``, set with :meth:`DraftPane.set_context`)
and 「缓存命中 x%」 of the last beat (cached / prompt tokens summed over its model calls, from ``call_finished``
events); 「查看提示词」 asks the main window for the inspector of the latest beat.
Streaming updates are coalesced (at most one repaint of each text box per 30 ms) so 200 chunks/s never stall the loop.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Optional

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QTextCursor
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...core.ledger.wording import applied_in_words as core_applied_in_words
from ...core.messages import Msg
from ..infra.i18n import register, show, tr
from ..infra.theme import colors, set_role

register({
    "dp.revised.beat": {"zh": "这一拍改了上一拍的回复（没有新回复）", "en": "This beat revised the previous reply (no new reply)"},
    "dp.raw": {"zh": "原始 JSON", "en": "Raw JSON"},
    "dp.cut.turn": {"zh": "上次{name}在群聊里的发言被中断了：可以让TA接着说，或撤下这一轮",
                    "en": "{name}'s group-chat reply was cut off last time: let them reply, or drop the turn"},
    "dp.cut.someone": {"zh": "某位成员", "en": "A member"},
    "dp.cut.resume": {"zh": "让TA接着说", "en": "Let them reply"},
    "dp.raw.tip": {"zh": "显示工具参数的原始 JSON（否则只显示写进稿纸的文字）",
                   "en": "Show the tool arguments as raw JSON (otherwise only the text written to the draft)"},
})


def say(value: object) -> str:
    """An engine line in the window's language: a message (``core.messages.Msg``, or an exception carrying one)
    rendered from its key; anything else — story text, names, a line made without a key — as it is, never
    matched back to a catalog key (issue 32)."""
    if isinstance(value, Msg) or (isinstance(value, BaseException) and value.args and isinstance(value.args[0], Msg)):
        return show(value)
    return "" if value is None else str(value)


def _bullet(value: object) -> Callable[[], str]:
    """The maker of a ``  · <engine line>`` activity line (why a world-info entry fired), in the current language."""
    return lambda: f"  · {say(value)}"


def _scribe_warning(value: object) -> Callable[[], str]:
    """The maker of a scribe warning's activity line, in the current language."""
    return lambda: tr("draft.scribe.warning", warning=say(value))


def applied_in_words(line: str) -> str:
    """One applied line of the scribe in words in the window's language (「characters.青梧 已更新」 → 「青梧：状态已更新」,
    ``core.ledger.wording``); lines of other shapes as they are."""
    return say(core_applied_in_words(line))


#: Argument fields whose string value is the prose a draft tool writes (shown as text in 模型输出).
_PROSE_FIELDS = ("content", "text", "new", "final")
_FIELD_START = re.compile(r'"(%s)"\s*:\s*"' % "|".join(_PROSE_FIELDS))
_ESC = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _partial_string(raw: str, i: int) -> str:
    """Decode the JSON string body starting at ``raw[i]`` up to its closing quote or the end of what has arrived
    (an escape cut in the middle is left out until the rest arrives)."""
    out: list[str] = []
    n = len(raw)
    while i < n:
        c = raw[i]
        if c == '"':
            break
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= n:
            break
        e = raw[i + 1]
        if e == "u":
            hexs = raw[i + 2:i + 6]
            if len(hexs) < 4:
                break
            try:
                out.append(chr(int(hexs, 16)))
            except ValueError:
                pass
            i += 6
            continue
        out.append(_ESC.get(e, e))
        i += 2
    text = "".join(out)
    try:  # surrogate pairs from \u escapes
        return text.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeError:
        return text


class ArgsReader:
    """Reads one tool call's arguments as they stream and hands out, piece by piece, the prose they carry
    (:data:`_PROSE_FIELDS`, unescaped): O(new characters) per piece. ``raw`` keeps everything that arrived."""

    def __init__(self) -> None:
        self.raw = ""
        self.pos = 0
        self.inside = False
        self.fields = 0

    def feed(self, text: str) -> str:
        """Add streamed argument text; returns the readable text it completes ("" when none yet)."""
        self.raw += text
        raw, out = self.raw, []
        while True:
            if not self.inside:
                m = _FIELD_START.search(raw, self.pos)
                if m is None:
                    self.pos = max(self.pos, len(raw) - 24)  # a field name may be cut at the end
                    break
                self.inside, self.pos = True, m.end()
                if self.fields:
                    out.append("\n")
                self.fields += 1
                continue
            i, n, piece = self.pos, len(raw), []
            while i < n:
                c = raw[i]
                if c == '"':
                    break
                if c != "\\":
                    piece.append(c)
                    i += 1
                    continue
                if i + 1 >= n or (raw[i + 1] == "u" and i + 6 > n):
                    break  # an escape cut short: wait for the rest
                piece.append(_partial_string(raw[i:i + 6] + '"', 0) if raw[i + 1] == "u" else _ESC.get(raw[i + 1], raw[i + 1]))
                i += 6 if raw[i + 1] == "u" else 2
            out.append("".join(piece))
            self.pos = i
            if i < n and raw[i] == '"':
                self.inside, self.pos = False, i + 1
                continue
            break
        return "".join(out)


def readable_args(raw: str) -> str:
    """A tool call's streamed arguments (JSON, maybe cut short) as a person reads them: the prose fields'
    text unescaped (「content」 of draft_write / draft_append …, each edit's new text), "" when there is none yet."""
    parts = [_partial_string(raw, m.end()) for m in _FIELD_START.finditer(raw)]
    return "\n".join(p for p in parts if p)


class MarkdownDraft(QTextBrowser):
    """The 稿纸 box: the draft rendered as Markdown as the conversation renders it (``*斜体*``, ``**粗体**``, quotes,
    lists, code; a single line break stays a line break, raw HTML is shown as text, links are not followed).
    :meth:`toPlainText` gives the draft as written (its Markdown source), as the plain box did."""

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self._source = ""

    def setPlainText(self, text: str) -> None:  # noqa: N802
        """Show ``text`` (Markdown)."""
        self._source = text or ""
        body = self._source.replace("&", "&amp;").replace("<", "&lt;")
        body = re.sub(r"(?<!\n)\n(?!\n)", "  \n", body)  # one line break = a line break, as in the conversation
        self.setMarkdown(body)

    def toPlainText(self) -> str:  # noqa: N802
        """The draft as written (Markdown source)."""
        return self._source

    def clear(self) -> None:
        """Empty the box."""
        self._source = ""
        super().clear()


class DraftPane(QWidget):
    """Consumes engine events through :meth:`on_event`. ``sealAsIsRequested`` / ``continueRequested`` are the two
    buttons shown when a beat ended unsealed."""

    sealAsIsRequested = Signal()
    continueRequested = Signal()
    #: what a crash left (chat.recovery): run the scribe for the gaps / resend, edit or drop unanswered words
    repairLedgerRequested = Signal()
    resendRequested = Signal()
    editUnansweredRequested = Signal()
    dropUnansweredRequested = Signal()
    inspectRequested = Signal()
    """「查看提示词」: show the model calls of the latest beat."""

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        self._build_head(lay)
        lay.addLayout(self._build_meter())

        split = QSplitter(Qt.Orientation.Vertical)
        self.draft = MarkdownDraft()
        self.draft.setObjectName("draftText")
        self.draft.setPlaceholderText(tr("draft.empty"))
        split.addWidget(self.draft)
        split.addWidget(self._build_stream())
        self.activity = QListWidget()
        self.activity.setObjectName("draftActivity")
        self.activity.setWordWrap(True)
        #: how each activity line is made and its colour, one per item: made again by :meth:`adopt` in a new window
        self._lines: list[tuple[Callable[[], str], str]] = []
        #: how the status, call count, token lines and unsealed banner were made (attribute name → maker; :meth:`adopt`)
        self._says: dict[str, Callable[[], str]] = {}
        split.addWidget(self.activity)
        split.setSizes([320, 160, 160])
        lay.addWidget(split, 1)

        self._build_banner()
        lay.addWidget(self.banner)

        self._build_recovery_banners(lay)

        self._pending: dict[str, str] = {"stream": "", "reasoning": ""}
        #: 模型输出 as it came: ("text", str) pieces and ("tool", name, ArgsReader) calls, for the raw-JSON toggle
        self._segs: list[Any] = []
        self._args: dict[int, ArgsReader] = {}
        self._flush = QTimer(self)
        self._flush.setInterval(30)
        self._flush.timeout.connect(self._flush_text)
        #: the session id of the beat shown (set by the window; None: a live beat or nothing) — the window keeps the
        #: pane as it is when the branch's newest beat is still this one (main_window._show_branch_beat)
        self.beat_id: Optional[str] = None
        #: the session id of the user message whose turn the pane shows (set with ``beat_id``)
        self.turn: Optional[str] = None
        self._max_rounds = 20
        self._round = 0
        self._tokens: list[Callable[[], str]] = []  # each model call's token line, made in the current language
        self.reasoning_chars = 0
        self._beat_prompt = 0
        self._beat_cached = 0

    def _build_head(self, lay: QVBoxLayout) -> None:
        """The status line (第 N 拍 · 进行中), the model-call count and the token line under them."""
        head = QHBoxLayout()
        self.status = QLabel("—")
        self.status.setObjectName("draftStatus")
        set_role(self.status, "title")
        self.calls_label = QLabel("")
        self.calls_label.setObjectName("draftCalls")
        head.addWidget(self.status, 1)
        head.addWidget(self.calls_label)
        lay.addLayout(head)
        self.meta = QLabel("")
        self.meta.setObjectName("draftMeta")
        set_role(self.meta, "muted")
        self.meta.setWordWrap(True)
        # long token lines must never widen the pane (the conversation would be squeezed)
        for lab in (self.status, self.meta):
            lab.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        lay.addWidget(self.meta)

    def _build_stream(self) -> QWidget:
        """模型输出: the reasoning toggle, the raw-JSON toggle, the reasoning box and the streamed output."""
        stream_box = QWidget()
        sl = QVBoxLayout(stream_box)
        sl.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.reasoning_toggle = QToolButton()
        self.reasoning_toggle.setText(tr("draft.reasoning", arrow="▸"))
        self.reasoning_toggle.setCheckable(True)
        self.reasoning_toggle.toggled.connect(self._toggle_reasoning)
        row.addWidget(self.reasoning_toggle)
        row.addWidget(QLabel(tr("draft.output")), 1)
        self.raw_toggle = QToolButton()
        self.raw_toggle.setObjectName("rawArgsToggle")
        self.raw_toggle.setText(tr("dp.raw"))
        self.raw_toggle.setToolTip(tr("dp.raw.tip"))
        self.raw_toggle.setCheckable(True)
        self.raw_toggle.setAutoRaise(True)
        self.raw_toggle.toggled.connect(lambda _on: self._rerender_stream())
        row.addWidget(self.raw_toggle)
        sl.addLayout(row)
        self.reasoning = QPlainTextEdit()
        self.reasoning.setReadOnly(True)
        self.reasoning.setVisible(False)
        self.reasoning.setObjectName("draftReasoning")
        set_role(self.reasoning, "muted")
        sl.addWidget(self.reasoning)
        self.stream = QPlainTextEdit()
        self.stream.setReadOnly(True)
        self.stream.setObjectName("draftStream")
        self.stream.setMaximumBlockCount(2000)
        sl.addWidget(self.stream)
        return stream_box

    def _build_banner(self) -> None:
        """The banner shown when a beat ended unsealed: 按现稿收笔 and 继续."""
        self.banner = QFrame()
        bl = QHBoxLayout(self.banner)
        self.banner_label = QLabel(tr("unsealed"))
        self.banner_label.setWordWrap(True)
        self.banner_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        set_role(self.banner_label, "warn")
        self.seal_btn = QPushButton(tr("seal.as.is"))
        self.seal_btn.clicked.connect(self.sealAsIsRequested.emit)
        self.continue_btn = QPushButton(tr("continue"))
        self.continue_btn.clicked.connect(self.continueRequested.emit)
        bl.addWidget(self.banner_label, 1)
        bl.addWidget(self.seal_btn)
        bl.addWidget(self.continue_btn)
        self.banner.setVisible(False)

    # -- the context meter ----------------------------------------------------------------------------------

    def _build_meter(self) -> QHBoxLayout:
        """The context meter: how full the model's window is, and the last beat's cache hits, with 查看提示词."""
        meter = QHBoxLayout()
        meter.setSpacing(8)
        self.context_label = QLabel(tr("ctx.unknown"))
        self.context_label.setObjectName("contextLabel")
        set_role(self.context_label, "small")
        self.context_bar = QProgressBar()
        self.context_bar.setObjectName("contextMeter")
        self.context_bar.setRange(0, 1000)
        self.context_bar.setValue(0)
        self.context_bar.setTextVisible(False)
        self.context_bar.setFixedHeight(6)
        self.cache_label = QLabel("")
        self.cache_label.setObjectName("cacheLabel")
        set_role(self.cache_label, "small")
        self.inspect_btn = QToolButton()
        self.inspect_btn.setText(tr("inspect.action"))
        self.inspect_btn.setObjectName("inspectButton")
        self.inspect_btn.setAutoRaise(True)
        self.inspect_btn.clicked.connect(self.inspectRequested.emit)
        # the labels keep their full text when there is room (the bar gives way first) but may shrink, so the
        # meter never widens the pane
        for lab in (self.context_label, self.cache_label):
            lab.setMinimumWidth(1)
        self.context_bar.setMinimumWidth(24)
        meter.addWidget(self.context_label)
        meter.addWidget(self.context_bar, 1)
        meter.addWidget(self.cache_label)
        meter.addWidget(self.inspect_btn)
        return meter

    def _build_recovery_banners(self, lay: QVBoxLayout) -> None:
        """What a crash left behind, added to ``lay``: ledger gaps (a button runs the scribe) and words left
        unanswered (resend, edit, drop)."""
        self.gaps_banner = QFrame()
        gl = QHBoxLayout(self.gaps_banner)
        self.gaps_label = QLabel("")
        self.gaps_label.setWordWrap(True)
        set_role(self.gaps_label, "warn")
        self.repair_btn = QPushButton(tr("recover.repair"))
        self.repair_btn.clicked.connect(self.repairLedgerRequested.emit)
        gl.addWidget(self.gaps_label, 1)
        gl.addWidget(self.repair_btn)
        self.gaps_banner.setVisible(False)
        lay.addWidget(self.gaps_banner)
        self.unanswered_banner = QFrame()
        ul = QHBoxLayout(self.unanswered_banner)
        self.unanswered_label = QLabel("")
        self.unanswered_label.setWordWrap(True)
        self.unanswered_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        set_role(self.unanswered_label, "warn")
        self.resend_btn = QPushButton(tr("recover.resend"))
        self.resend_btn.clicked.connect(self.resendRequested.emit)
        self.edit_unanswered_btn = QPushButton(tr("recover.edit"))
        self.edit_unanswered_btn.clicked.connect(self.editUnansweredRequested.emit)
        self.drop_btn = QPushButton(tr("recover.drop"))
        self.drop_btn.clicked.connect(self.dropUnansweredRequested.emit)
        ul.addWidget(self.unanswered_label, 1)
        for b in (self.resend_btn, self.edit_unanswered_btn, self.drop_btn):
            ul.addWidget(b)
        self.unanswered_banner.setVisible(False)
        lay.addWidget(self.unanswered_banner)

    def set_context(self, usage: Optional[dict[str, Any]]) -> None:
        """Show ``Chat.context_usage()`` (``{"used", "window", "share"}``); None when it is not known."""
        if not usage or not usage.get("window"):
            self.context_label.setText(tr("ctx.unknown"))
            self.context_bar.setValue(0)
            self.context_bar.setToolTip("")
            return
        used, window = int(usage.get("used") or 0), int(usage.get("window") or 0)
        share = usage.get("share")
        share = float(share) if share is not None else (used / window if window else 0.0)
        self.context_label.setText(tr("ctx.label", used=f"{used:,}", window=f"{window:,}"))
        self.context_bar.setValue(max(0, min(1000, round(share * 1000))))
        self.context_bar.setToolTip(tr("ctx.tip", pct=f"{share * 100:.1f}"))
        color = "#b5543c" if share >= 0.85 else "#c99a3c" if share >= 0.6 else "#7a9a6a"
        self.context_bar.setStyleSheet(
            "QProgressBar { border: 0; background: rgba(128,128,128,0.18); border-radius: 3px; }"
            f"QProgressBar::chunk {{ background: {color}; border-radius: 3px; }}")

    def cache_share(self) -> Optional[float]:
        """Cached / prompt tokens over the model calls of the last beat (None before any call reported usage)."""
        return self._beat_cached / self._beat_prompt if self._beat_prompt else None

    def _show_cache(self) -> None:
        share = self.cache_share()
        self.cache_label.setText("" if share is None else tr("ctx.cache", pct=f"{share * 100:.0f}"))
        self.cache_label.setToolTip("" if share is None else tr("ctx.cache.tip", c=self._beat_cached, p=self._beat_prompt))

    # -- helpers --------------------------------------------------------------------------------------------
    def _toggle_reasoning(self, on: bool) -> None:
        self.reasoning.setVisible(on)
        self.reasoning_toggle.setText(tr("draft.reasoning.chars", arrow="▾" if on else "▸", n=self.reasoning_chars))

    def notice(self, text: str) -> None:
        """A warning line in the activity list that stays until the next beat (e.g. what opening the chat found:
        damaged session lines skipped, a broken [InitVar]). An engine message (``core.messages.Msg``) is kept
        and shown again in the new language on a language switch; plain text is shown as given."""
        self._line(lambda: f"⚠ {say(text)}", "yellow")

    def _line(self, make: Callable[[], str], color: str = "") -> None:
        """Add an activity line: ``make()`` gives its text in the current language (engine messages kept as
        messages in the closure, never as text), called again by :meth:`adopt`."""
        self._lines.append((make, color))
        it = QListWidgetItem(make())
        if color:
            it.setForeground(QColor(colors()["error" if color == "red" else "warn" if color == "yellow" else "ok"]))
        self.activity.addItem(it)
        self.activity.scrollToBottom()

    def _say(self, name: str, make: Callable[[], str]) -> None:
        """Set label ``name`` (an attribute: ``status``, ``calls_label``, ``meta``, ``banner_label``) to ``make()``,
        kept so :meth:`adopt` makes it again in another language."""
        self._says[name] = make
        getattr(self, name).setText(make())

    def adopt(self, old: "DraftPane") -> None:
        """Show what ``old`` shows — the beat's draft, activity lines, streamed output and reasoning, status, call
        count, token lines, banner, cache share and the beat it belongs to — made again in the current language from
        what each text was made of (engine messages by their keys, window texts by theirs; story text as it was).
        The language switch builds a new window and its pane takes over the old one's (ui/window/language_switch.py).
        The context meter and the crash-recovery banners are not taken: the window sets them from the chat."""
        old._flush_text()
        self.reset()
        for make, color in old._lines:
            self._line(make, color)
        self._tokens = list(old._tokens)
        for name, make in old._says.items():
            self._say(name, make)
        self.draft.setPlainText(old.draft.toPlainText())
        self._segs = [list(seg) for seg in old._segs]
        self._args = dict(old._args)
        self.raw_toggle.setChecked(old.raw_toggle.isChecked())
        self._rerender_stream()
        self.reasoning.setPlainText(old.reasoning.toPlainText())
        self.reasoning_chars = old.reasoning_chars
        self.reasoning_toggle.setChecked(old.reasoning_toggle.isChecked())
        self._toggle_reasoning(self.reasoning_toggle.isChecked())
        self.banner.setVisible(not old.banner.isHidden())
        self._round, self._max_rounds = old._round, old._max_rounds
        self._beat_prompt, self._beat_cached = old._beat_prompt, old._beat_cached
        self._show_cache()
        self.beat_id, self.turn = old.beat_id, old.turn

    def _flush_text(self) -> None:
        for key, box in (("stream", self.stream), ("reasoning", self.reasoning)):
            text = self._pending[key]
            if text:
                self._pending[key] = ""
                box.moveCursor(QTextCursor.MoveOperation.End)
                box.insertPlainText(text)
        if not self._pending["stream"] and not self._pending["reasoning"]:
            self._flush.stop()
        self.reasoning_toggle.setText(tr("draft.reasoning.chars", arrow="▾" if self.reasoning_toggle.isChecked() else "▸",
                                         n=self.reasoning_chars))

    def _stream_text(self, text: str) -> None:
        if self._segs and self._segs[-1][0] == "text":
            self._segs[-1][1] += text
        else:
            self._segs.append(["text", text])
        self._pending["stream"] += text

    def _rerender_stream(self, _on: bool = False) -> None:
        """Show 模型输出 again from what came (readable, or the raw JSON of the tool arguments)."""
        self._flush_text()
        raw = self.raw_toggle.isChecked()
        out = []
        for seg in self._segs:
            if seg[0] == "text":
                out.append(seg[1])
            elif seg[0] == "head":
                out.append(tr("draft.call.head", n=seg[1]))
            else:
                out.append(f"\n→ {seg[1]} " + (seg[2].raw if raw else readable_args(seg[2].raw)))
        self.stream.setPlainText("".join(out))
        self.stream.moveCursor(QTextCursor.MoveOperation.End)

    def reset(self) -> None:
        """Clear everything for a new beat."""
        self.draft.clear()
        self.stream.clear()
        self._segs, self._args = [], {}
        self.reasoning.clear()
        self.activity.clear()
        self._lines = []
        self._pending = {"stream": "", "reasoning": ""}
        self.reasoning_chars = 0
        self.reasoning_toggle.setText(tr("draft.reasoning.chars", arrow="▾" if self.reasoning_toggle.isChecked() else "▸", n=0))
        self._round = 0
        self._tokens = []
        self.banner.setVisible(False)
        self._says = {}
        self.status.setText("—")
        self.meta.setText("")
        self.calls_label.setText("")
        self._beat_prompt = self._beat_cached = 0
        self._show_cache()

    def show_beat(self, draft: str, version: int, outcome: str, tokens: Optional[dict[str, Any]] = None) -> None:
        """Show the newest beat of the branch on screen (after a swipe, a navigator jump, reopening): its draft as
        stored, sealed or not, and its cache share from the stored usage (``Chat.last_beat_tokens()``)."""
        self.reset()
        self.draft.setPlainText(draft)
        sealed = outcome in ("sealed", "discussed")
        if outcome == "revised_previous":  # a revision is not an unsealed beat: it ended by editing the reply before
            self._say("status", lambda: tr("dp.revised.beat"))
        else:
            self._say("status", lambda: tr("draft.status.version", state=tr("sealed") if sealed else tr("unsealed"),
                                           version=version))
        if tokens:
            self._beat_prompt = int(tokens.get("prompt") or 0)
            self._beat_cached = int(tokens.get("cached") or 0)
            self._show_cache()

    def show_unfinished(self, draft: str, version: int, outcome: str) -> None:
        """Show an unfinished beat found on the branch (e.g. after reopening a chat)."""
        self.reset()
        self.draft.setPlainText(draft)
        self._say("status", lambda: tr("draft.status.version", state=tr("unsealed"), version=version))
        self.banner.setVisible(True)

    def show_recovery(self, gaps: int, unanswered: Optional[str], cut_turn: Optional[str] = None) -> None:
        """Show what a crash left on the shown branch (``Chat.ledger_gaps``/``Chat.unanswered``/``Chat.cut_turn``):
        ``gaps`` replies without their ledger (a button runs the scribe), ``unanswered`` the user's words no reply
        followed (resend, edit, drop), ``cut_turn`` the member of a group chat whose follow-up was cut (let them
        reply, drop; "" unknown); 0 / None hide them."""
        self.gaps_label.setText(tr("recover.gaps", n=gaps))
        self.gaps_banner.setVisible(gaps > 0)
        text = (unanswered or "").strip().replace("\n", " ")
        self.unanswered_label.setText(tr("recover.unanswered", text=text[:80] + ("…" if len(text) > 80 else "")))
        if cut_turn is not None:
            self.unanswered_label.setText(tr("dp.cut.turn", name=cut_turn or tr("dp.cut.someone")))
        self.resend_btn.setText(tr("dp.cut.resume") if cut_turn is not None else tr("recover.resend"))
        self.edit_unanswered_btn.setVisible(cut_turn is None)
        self.unanswered_banner.setVisible(unanswered is not None or cut_turn is not None)

    # -- events ---------------------------------------------------------------------------------------------
    def on_event(self, ev: Any) -> None:
        """Render one engine event (see :mod:`liyuan_desktop.core.beat.events`)."""
        handler = self._HANDLERS.get(getattr(ev, "kind", ""))
        if handler is not None:
            handler(self, ev)

    def _ev_beat_started(self, ev: Any) -> None:
        """A beat began: reset, say which world info it activated and why."""
        self.reset()
        beat = ev.beat
        self._say("status", lambda: tr("draft.running", n=beat))
        if ev.activated:
            names = list(ev.activated)
            self._line(lambda: tr("draft.lore", names=tr("sep.list").join(names)))
        for why in ev.lore:
            self._line(_bullet(why))
        if ev.is_replay:
            self._line(lambda: tr("draft.replay"))


    def _ev_call_started(self, ev: Any) -> None:
        """A model call began: the call count, a heading in the stream after the first."""
        self._round = ev.round
        self._max_rounds = ev.max_rounds
        n, most = ev.round, ev.max_rounds
        self._say("calls_label", lambda: tr("draft.calls", n=n, max=most))
        self._args = {}
        if self.stream.toPlainText() or self._pending["stream"]:
            self._segs.append(["head", ev.round])  # a window text: made again in the current language (adopt)
            self._pending["stream"] += tr("draft.call.head", n=ev.round)


    def _ev_delta(self, ev: Any) -> None:
        """A streamed piece: reasoning, content, a tool's arguments (readable; raw JSON on demand), a notice or a tool name."""
        if ev.channel == "reasoning":
            self.reasoning_chars += len(ev.text)
            self._pending["reasoning"] += ev.text
        elif ev.channel == "content":
            self._stream_text(ev.text)
        elif ev.channel == "tool_args":  # the prose the tool writes, readable; raw JSON on demand
            reader = self._args.get(ev.index)
            if reader is None:
                reader = self._args[ev.index] = ArgsReader()
                self._segs.append(["tool", "", reader])
            readable = reader.feed(ev.text)
            self._pending["stream"] += ev.text if self.raw_toggle.isChecked() else readable
        elif ev.channel == "notice":
            text = ev.text
            self._line(lambda: f"※ {say(text)}", "yellow")
            return
        elif ev.channel == "tool_name":
            reader = self._args[ev.index] = ArgsReader()
            self._segs.append(["tool", ev.text, reader])
            self._pending["stream"] += f"\n→ {ev.text} "
        if not self._flush.isActive():
            self._flush.start()


    def _ev_call_finished(self, ev: Any) -> None:
        """A model call ended: its tokens and cache hits."""
        self._flush_text()
        self._beat_prompt += int(getattr(ev, "prompt_tokens", 0) or 0)
        self._beat_cached += int(getattr(ev, "cached_tokens", 0) or 0)
        self._show_cache()
        if ev.prompt_tokens:
            share = f"{100 * ev.cached_tokens / ev.prompt_tokens:.0f}"
            estimated = bool((ev.usage or {}).get("estimated"))  # the server sent none
            n, p, c, o = ev.round, ev.prompt_tokens, ev.cached_tokens, ev.completion_tokens
            self._tokens.append(lambda: (tr("draft.tokens.approx") if estimated else "")
                                + tr("draft.tokens", n=n, p=p, c=c, share=share, o=o))
            last = self._tokens[-2:]
            self._say("meta", lambda: "\n".join(make() for make in last))


    def _ev_tool_finished(self, ev: Any) -> None:
        """A tool call ended: ✓/✗ with its summary."""
        mark = "✓" if ev.ok else "✗"
        name, summary = ev.name, ev.summary
        self._line(lambda: f"{mark} {name}" + (f"  {say(summary)}" if summary else ""), "" if ev.ok else "red")


    def _ev_draft_changed(self, ev: Any) -> None:
        """The draft changed: show it and its version."""
        if ev.sealed:
            self.banner.setVisible(False)
        self.draft.setPlainText(ev.text)
        self.draft.moveCursor(QTextCursor.MoveOperation.End)
        sealed, version, chars = ev.sealed, ev.version, ev.chars
        self._say("status", lambda: tr("draft.status.chars", state=tr("sealed") if sealed else tr("draft"),
                                       version=version, chars=chars))


    def _ev_activity(self, ev: Any) -> None:
        """An activity line (warning/error coloured)."""
        text = ev.text
        self._line(lambda: f"※ {say(text)}", {"warning": "yellow", "error": "red"}.get(ev.level, ""))


    def _ev_ask(self, ev: Any) -> None:
        """The model asked the user (岔口)."""
        question = ev.question
        self._line(lambda: f"？ {question}")


    def _ev_revised(self, ev: Any) -> None:
        """The previous beat was revised in place."""
        version = ev.version
        self._line(lambda: tr("draft.revised", version=version))
        self.draft.setPlainText(ev.text)
        self._say("status", lambda: tr("draft.revising", version=version))


    def _ev_scribe_finished(self, ev: Any) -> None:
        """The scribe applied its patch (or failed): what changed and its warnings."""
        error, applied = ev.error, list(ev.applied)
        if error:
            self._line(lambda: tr("draft.scribe.failed", error=say(error)), "red")
        else:
            self._line(lambda: tr("draft.scribe.applied", items=tr("sep.semi").join(applied_in_words(a) for a in applied)
                          or tr("draft.scribe.nochange")))
            for w in ev.warnings:
                self._line(_scribe_warning(w), "yellow")


    def _ev_compacted(self, ev: Any) -> None:
        """The history was compacted (or failed to be)."""
        error = ev.error
        if error:
            self._line(lambda: tr("ctx.compact.failed", err=say(error)), "yellow")
        else:
            b = list(ev.beats or [])
            self._line(lambda: tr("ctx.compacted", a=b[0] if b else "?", b=b[-1] if b else "?", layer=ev.layer,
                          before=f"{ev.before:,}", after=f"{ev.after:,}"))


    def _ev_beat_finished(self, ev: Any) -> None:
        """The beat ended: sealed, revised the previous beat, or unsealed (the banner)."""
        self._flush_text()
        if ev.sealed:
            before = self._says.get("status", lambda: self.status.text())  # the status so far, made in any language
            self._say("status", lambda: f"{tr('sealed')} · " + before().split(" · ", 1)[-1])
            self.banner.setVisible(False)
        elif ev.outcome == "revised_previous":
            self.banner.setVisible(False)
        else:
            message = ev.message

            def said() -> str:
                return say(message) if message else ""

            self._say("banner_label", lambda: tr("unsealed") + (f"{tr('sep.colon')}{said()}"
                                                                if said() and said() != tr("unsealed") else ""))
            self.banner.setVisible(bool(self.draft.toPlainText().strip()))
            if not self.banner.isVisible():
                self._say("status", lambda: said() or tr("unsealed"))

    #: event kind -> handler (:meth:`on_event`)
    _HANDLERS: dict[str, Callable[["DraftPane", Any], None]] = {
        "beat_started": _ev_beat_started,
        "call_started": _ev_call_started,
        "delta": _ev_delta,
        "call_finished": _ev_call_finished,
        "tool_finished": _ev_tool_finished,
        "draft_changed": _ev_draft_changed,
        "activity": _ev_activity,
        "ask": _ev_ask,
        "revised": _ev_revised,
        "scribe_finished": _ev_scribe_finished,
        "compacted": _ev_compacted,
        "beat_finished": _ev_beat_finished,
    }
