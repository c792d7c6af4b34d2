"""导出 in the window (issue 17 "Export"): a submenu of 对话 and of the card list's context menu.

* 对话 → SillyTavern 聊天记录 (.jsonl): the chat's shown branch with every swipe (``core.chat.folder.export_st_file``,
  SillyTavern's own line format; core/cards/st_chat_export.py);
* 故事 → Markdown / EPUB / DOCX: an agent-mode chat's chapters (``Chat.export`` for the open chat,
  ``core.chat.folder.export_story`` for one picked in the list), titled after the card and credited to the persona
  (``core.story.export.book_meta``);
* 角色卡 → PNG / JSON: the card losslessly (``core.cards.export``): the JSON as imported plus edits; the PNG on the
  card's own picture when it has one (``card_image``), with both ``chara`` and ``ccv3`` chunks.

A file dialog picks where; the writing runs off the UI thread (``ui.tasks.run_in_worker``: a big chat's export
never freezes the window, and a progress dialog with Cancel appears only when it takes longer than 300 ms). The
status bar says where the file went.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox

from ...core.cards import CardError, library
from ...core.paths import safe_name
from ..infra.i18n import register, tr

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

log = logging.getLogger(__name__)

register({
    "export.menu": {"zh": "导出", "en": "Export"},
    "export.chat": {"zh": "对话为 SillyTavern 聊天记录（.jsonl）…", "en": "Chat as SillyTavern chat (.jsonl)…"},
    "export.story.md": {"zh": "故事为 Markdown…", "en": "Story as Markdown…"},
    "export.story.epub": {"zh": "故事为 EPUB 电子书…", "en": "Story as EPUB…"},
    "export.story.docx": {"zh": "故事为 Word 文档（DOCX）…", "en": "Story as Word (DOCX)…"},
    "export.card.png": {"zh": "角色卡为 PNG…", "en": "Card as PNG…"},
    "export.card.json": {"zh": "角色卡为 JSON…", "en": "Card as JSON…"},
    "export.no.chat": {"zh": "先打开一个对话", "en": "Open a chat first"},
    "export.no.card": {"zh": "先选一张角色卡", "en": "Pick a card first"},
    "export.story.only.agent": {"zh": "故事导出用于写作模式的对话（它的章节）", "en": "Story export is for writing-mode chats (their chapters)"},
    "export.working": {"zh": "正在导出「{name}」…", "en": "Exporting \"{name}\"…"},
    "export.done": {"zh": "已导出到 {path}", "en": "Exported to {path}"},
    "export.failed": {"zh": "导出失败：{err}", "en": "Export failed: {err}"},
    "export.filter.jsonl": {"zh": "SillyTavern 聊天记录 (*.jsonl)", "en": "SillyTavern chat (*.jsonl)"},
    "export.filter.md": {"zh": "Markdown (*.md)", "en": "Markdown (*.md)"},
    "export.filter.epub": {"zh": "EPUB 电子书 (*.epub)", "en": "EPUB (*.epub)"},
    "export.filter.docx": {"zh": "Word 文档 (*.docx)", "en": "Word document (*.docx)"},
    "export.filter.png": {"zh": "PNG 角色卡 (*.png)", "en": "PNG card (*.png)"},
    "export.filter.json": {"zh": "JSON 角色卡 (*.json)", "en": "JSON card (*.json)"},
    "export.tr.md": {"zh": "对话为可读的 Markdown…", "en": "Chat as a readable Markdown transcript…"},
    "export.tr.html": {"zh": "对话为可读的网页（HTML）…", "en": "Chat as a readable web page (HTML)…"},
    "export.filter.html": {"zh": "网页 (*.html)", "en": "Web page (*.html)"},
    "export.tr.open.first": {"zh": "先打开这个对话再导出成可读文本", "en": "Open this chat first to export its transcript"},
    "export.tr.title": {"zh": "导出对话", "en": "Export the chat"},
    "export.tr.bars": {"zh": "状态栏", "en": "Status bars"},
    "export.tr.bars.omit": {"zh": "不要", "en": "Leave out"},
    "export.tr.bars.text": {"zh": "作为文字保留", "en": "Keep as text"},
    "export.tr.display": {"zh": "按角色卡的显示规则整理正文（和窗口里看到的一样）",
                          "en": "Apply the card's display rules (as the window shows it)"},
    "export.tr.heading": {"zh": "标题（空 = 对话名）", "en": "Title (empty = the chat's)"},
})


def ask_transcript_options(parent: Any) -> Optional[Any]:
    """The transcript's options in a small dialog (status bars left out or kept as text, the display rules, a
    title); None when cancelled. A module function so a test can answer."""
    from PySide6.QtWidgets import QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLineEdit

    from ...core.chat.transcript_export import TranscriptOptions
    from ..infra.i18n import language

    dlg = QDialog(parent)
    dlg.setWindowTitle(tr("export.tr.title"))
    form = QFormLayout(dlg)
    bars = QComboBox()
    bars.addItem(tr("export.tr.bars.omit"), "omit")
    bars.addItem(tr("export.tr.bars.text"), "text")
    display = QCheckBox(tr("export.tr.display"))
    display.setChecked(True)
    title = QLineEdit()
    form.addRow(tr("export.tr.bars"), bars)
    form.addRow("", display)
    form.addRow(tr("export.tr.heading"), title)
    box = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
    box.accepted.connect(dlg.accept)
    box.rejected.connect(dlg.reject)
    form.addRow(box)
    if dlg.exec() != QDialog.DialogCode.Accepted:
        return None
    return TranscriptOptions(status_bars=bars.currentData(), display=display.isChecked(), title=title.text().strip(),
                             language="zh" if language() == "zh" else "en")


def ask_path(parent: Any, title: str, suggested: str, filt: str) -> Optional[str]:
    """Where to save (a file dialog); None when cancelled. A module function so a test can answer."""
    path, _ = QFileDialog.getSaveFileName(parent, title, suggested, filt)
    return path or None


def _with_suffix(path: str, ext: str) -> Path:
    p = Path(path)
    return p if p.suffix.lower() == f".{ext}" else p.with_name(p.name + f".{ext}")


# -- the writers (run on a worker thread; no Qt) ----------------------------------------------------------------------
def write_chat_jsonl(chat_dir: Path, out: Path) -> Path:
    """A chat folder as a SillyTavern chat file."""
    from ...core.chat.folder import export_st_file

    return export_st_file(Path(chat_dir), out)


def write_story(chat_dir: Path, fmt: str, out: Path, chat: Optional[Chat] = None) -> Path:
    """An agent chat's chapters as ``fmt`` (md | epub | docx); through the open ``chat`` when given."""
    if chat is not None:
        return chat.export(fmt, out)
    from ...core.chat.folder import export_story

    return export_story(Path(chat_dir), fmt, out)


def write_card(card_dir: Path, fmt: str, out: Path) -> Path:
    """A library card as ``fmt`` (png | json)."""
    from ...core.cards import load_card
    from ...core.cards.export import card_image, card_json_bytes, export_json, export_png
    from ...core.fsutil import atomic_write_bytes

    card = load_card(Path(card_dir) / "card.json")
    data = export_png(card, card_image(card)) if fmt == "png" else card_json_bytes(export_json(card), indent=2)
    atomic_write_bytes(out, data)
    return out


class Exporter:
    """The export commands of one window (module doc)."""

    def __init__(self, win: Any):
        self.win = win
        self.tasks: list[asyncio.Task[Any]] = []
        self.last: Optional[Path] = None

    def _run(self, name: str, job: Callable[[], Path]) -> Optional[asyncio.Task[Any]]:
        from ..infra.tasks import WorkCancelled, run_in_worker

        win = self.win

        async def go() -> Optional[Path]:
            try:
                out = await run_in_worker(win, lambda _w: job(), label=tr("export.working", name=name),
                                          cancellable=False)
            except WorkCancelled:
                return None
            except (CardError, OSError, ValueError, KeyError, RuntimeError) as e:
                QMessageBox.warning(win, tr("app.title"), tr("export.failed", err=e))
                return None
            self.last = Path(out)
            win.statusBar().showMessage(tr("export.done", path=out), 10000)
            return Path(out)

        try:
            task = asyncio.ensure_future(go())
        except RuntimeError:  # no running loop (a synchronous caller): do it here
            try:
                self.last = job()
            except (CardError, OSError, ValueError, KeyError) as e:
                QMessageBox.warning(win, tr("app.title"), tr("export.failed", err=e))
            return None
        self.tasks = [t for t in self.tasks if not t.done()] + [task]
        return task

    # -- commands ------------------------------------------------------------------------------------------------
    def export_chat(self, chat_ref: Optional[library.ChatRef] = None) -> Optional[asyncio.Task[Any]]:
        """对话 → .jsonl (the open chat unless ``chat_ref``)."""
        ref = chat_ref or self.win.chat_ref
        if ref is None:
            self.win.statusBar().showMessage(tr("export.no.chat"), 5000)
            return None
        path = ask_path(self.win, tr("export.chat"), str(Path.home() / f"{safe_name(ref.name)}.jsonl"),
                        tr("export.filter.jsonl"))
        if path is None:
            return None
        out = _with_suffix(path, "jsonl")
        return self._run(ref.name, lambda: write_chat_jsonl(Path(ref.dir), out))

    def export_story(self, fmt: str, chat_ref: Optional[library.ChatRef] = None) -> Optional[asyncio.Task[Any]]:
        """故事 → md | epub | docx (the open chat unless ``chat_ref``; agent-mode chats only)."""
        from ...core.chat.folder import chat_info

        win = self.win
        ref = chat_ref or win.chat_ref
        if ref is None:
            win.statusBar().showMessage(tr("export.no.chat"), 5000)
            return None
        is_open = win.chat is not None and win.chat_ref is not None and Path(win.chat_ref.dir) == Path(ref.dir)
        try:
            mode = win.chat.mode if is_open else chat_info(Path(ref.dir)).mode
        except Exception:
            mode = ref.mode
        if mode != "agent":
            win.statusBar().showMessage(tr("export.story.only.agent"), 6000)
            return None
        card = win.chat.card.name if is_open else Path(ref.dir).parent.parent.name
        path = ask_path(win, tr(f"export.story.{fmt}"), str(Path.home() / f"{safe_name(card)}.{fmt}"),
                        tr(f"export.filter.{fmt}"))
        if path is None:
            return None
        out = _with_suffix(path, fmt)
        chat = win.chat if is_open else None
        return self._run(ref.name, lambda: write_story(Path(ref.dir), fmt, out, chat))

    def export_transcript(self, fmt: str, chat_ref: Optional[library.ChatRef] = None) -> Optional[asyncio.Task[Any]]:
        """对话 → a readable transcript, ``md`` | ``html`` (issue 28: names and the swipes shown, status bars left
        out or as text; ``core/chat/transcript_export.py``), of the open chat (another one is opened first)."""
        from ...core.chat.transcript_export import export_transcript

        win = self.win
        ref = chat_ref or win.chat_ref
        is_open = win.chat is not None and win.chat_ref is not None and ref is not None and \
            Path(win.chat_ref.dir) == Path(ref.dir)
        if ref is None or not is_open or win.chat is None:
            win.statusBar().showMessage(tr("export.tr.open.first" if ref is not None else "export.no.chat"), 6000)
            return None
        options = ask_transcript_options(win)
        if options is None:
            return None
        path = ask_path(win, tr(f"export.tr.{fmt}"), str(Path.home() / f"{safe_name(ref.name)}.{fmt}"),
                        tr(f"export.filter.{fmt}"))
        if path is None:
            return None
        out = _with_suffix(path, fmt)
        chat = win.chat
        return self._run(ref.name, lambda: export_transcript(chat, fmt, out, options))

    def export_card(self, fmt: str, card_ref: Optional[library.CardRef] = None) -> Optional[asyncio.Task[Any]]:
        """角色卡 → png | json (the open chat's card, else the selected card, unless ``card_ref``)."""
        ref = card_ref or self.win.card_ref
        if ref is None:
            self.win.statusBar().showMessage(tr("export.no.card"), 5000)
            return None
        path = ask_path(self.win, tr(f"export.card.{fmt}"), str(Path.home() / f"{safe_name(ref.name)}.{fmt}"),
                        tr(f"export.filter.{fmt}"))
        if path is None:
            return None
        out = _with_suffix(path, fmt)
        return self._run(ref.name, lambda: write_card(Path(ref.dir), fmt, out))

    # -- menus ---------------------------------------------------------------------------------------------------
    def fill(self, menu: QMenu, card: Optional[library.CardRef] = None,
             chat: Optional[library.ChatRef] = None, *, story: Optional[bool] = None) -> None:
        """Add the export entries to ``menu``: for ``chat`` (the open one when both are None), then for ``card``."""
        both = card is None and chat is None
        if both or chat is not None:
            menu.addAction(tr("export.chat")).triggered.connect(lambda: self.export_chat(chat))
            for fmt in ("md", "html"):  # issue 28: a readable transcript
                menu.addAction(tr(f"export.tr.{fmt}")).triggered.connect(
                    lambda _=False, f=fmt: self.export_transcript(f, chat))
            for fmt in ("md", "epub", "docx"):
                act = menu.addAction(tr(f"export.story.{fmt}"))
                act.triggered.connect(lambda _=False, f=fmt: self.export_story(f, chat))
                if story is not None:
                    act.setEnabled(story)
        if both or card is not None:
            if both:
                menu.addSeparator()
            for fmt in ("png", "json"):
                menu.addAction(tr(f"export.card.{fmt}")).triggered.connect(
                    lambda _=False, f=fmt: self.export_card(f, card))


def install_export_menu(win: Any, parent: Optional[QMenu] = None) -> Exporter:
    """The 导出 menu — a submenu of ``parent`` (the 对话 menu), else in ``win``'s menu bar; rebuilt each time it
    opens, so the story entries follow the open chat's mode — and the hooks the card list's context menu calls
    (``win.chat_export_actions`` / ``win.card_export_actions``, see ui/window/manage.py). Sets ``win.exporter``."""
    ex = Exporter(win)
    win.exporter = ex
    if parent is not None:
        parent.addSeparator()
        menu = parent.addMenu(tr("export.menu"))
    else:
        menu = win.menuBar().addMenu(tr("export.menu"))
    menu.setObjectName("exportMenu")

    def rebuild() -> None:
        menu.clear()
        agent = win.chat is not None and win.chat.mode == "agent"
        ex.fill(menu, story=agent)
        has_chat = win.chat_ref is not None
        for act in menu.actions()[:4]:
            act.setEnabled(has_chat and (act.isEnabled()))
        for act in menu.actions()[-2:]:
            act.setEnabled(win.card_ref is not None)

    menu.aboutToShow.connect(rebuild)
    rebuild()
    win.export_menu = menu

    def chat_actions(m: QMenu, card: library.CardRef, chat: library.ChatRef) -> None:
        sub = m.addMenu(tr("export.menu"))
        ex.fill(sub, chat=chat, story=chat.mode == "agent")

    def card_actions(m: QMenu, card: library.CardRef) -> None:
        sub = m.addMenu(tr("export.menu"))
        ex.fill(sub, card=card)

    win.chat_export_actions = chat_actions
    win.card_export_actions = card_actions
    return ex


__all__ = ["Exporter", "ask_path", "install_export_menu", "write_card", "write_chat_jsonl", "write_story"]
