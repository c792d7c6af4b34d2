"""The main window's slow chat commands, off the UI thread (issue 15 items 11 and 12): opening a chat from the list,
creating one, importing a SillyTavern chat, importing a card. Each runs its engine part through
:func:`.tasks.run_in_worker` (progress dialog after 300 ms, Cancel) and installs the result on the UI thread with the
window's own methods (``MainWindow.load_chat`` is the worker-safe half of ``open_chat``, ``install_chat`` the UI
half). Errors show the engine's message in the window's usual dialogs; Cancel leaves nothing behind (an import's
folder is renamed into place only when complete — core.chat.st_import).

Only one of these runs at a time (a second request while one runs is ignored); each returns as soon as it is
scheduled — :func:`spawn` keeps the task and logs what escapes it."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Optional

from PySide6.QtWidgets import QFileDialog, QMessageBox

from ...core.cards import CardError, library
from ...core.cards.st_chat import StChatCancelled, StChatError, default_chat_name
from ...core.chat.changes import LIBRARY
from ...core.session.tree import SessionError
from ..infra.i18n import language, register, tr
from ..infra.tasks import WorkCancelled, run_in_worker
from ..infra.work import dismantle, release

if TYPE_CHECKING:
    from ...core.chat import Chat
    from .main_window import MainWindow

log = logging.getLogger(__name__)

register({
    "work.menu.import.chat": {"zh": "导入 SillyTavern 聊天记录…", "en": "Import SillyTavern chat…"},
    "work.pick.chat": {"zh": "选择 SillyTavern 聊天记录（.jsonl）", "en": "Choose a SillyTavern chat (.jsonl)"},
    "work.chat.filter": {"zh": "SillyTavern 聊天记录 (*.jsonl);;所有文件 (*)", "en": "SillyTavern chats (*.jsonl);;All files (*)"},
    "work.err.import.chat": {"zh": "无法导入聊天记录：{error}", "en": "Could not import the chat: {error}"},
    "work.import.chat.done": {"zh": "已导入聊天记录「{name}」", "en": "Imported chat \"{name}\""},
    "work.busy.already": {"zh": "另一项操作还在进行，请稍候", "en": "Another operation is still running; please wait"},
})

_tasks: set[asyncio.Task[Any]] = set()


def busy(win: "MainWindow") -> bool:
    """Whether one of these commands is running for ``win``."""
    return win.session.work_busy


def spawn(win: "MainWindow", coro: Awaitable[Any]) -> Optional[asyncio.Task[Any]]:
    """Schedule ``coro`` (one of this module's commands) on the running loop; None (and a status note) when one is
    already running for ``win``."""
    if busy(win):
        asyncio.ensure_future(_close(coro))
        win.statusBar().showMessage(tr("work.busy.already"), 4000)
        return None

    async def guarded() -> Any:
        win.session.work_busy = True
        try:
            return await coro
        except Exception:  # never lose an error silently in a fire-and-forget task
            log.exception("chat command failed")
        finally:
            win.session.work_busy = False

    task = asyncio.ensure_future(guarded())
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return task


async def _close(coro: Any) -> None:
    if hasattr(coro, "close"):
        coro.close()


async def open_chat_async(win: "MainWindow", card: library.CardRef, chat: library.ChatRef,
                          quiet: bool = False) -> bool:
    """Open ``chat`` as ``MainWindow.open_chat`` does, with the session file, the card and its books read on a worker
    thread. False when it was refused, cancelled or failed (a message unless ``quiet``)."""
    if not win.may_open(quiet):
        return False
    models = win.provider_models()
    try:
        chat_obj, is_demo = await run_in_worker(win, lambda w: _checked(w, win.load_chat(card, chat, models)),
                                                label=tr("work.open.chat", name=chat.name), big=True)
    except WorkCancelled:
        return False
    except (CardError, SessionError, OSError, ValueError) as e:
        if not quiet:
            QMessageBox.warning(win, tr("app.title"), tr("err.open.chat", error=e))
        return False
    return win.install_chat(card, chat, chat_obj, is_demo)


def release_chat(chat: Optional[Chat]) -> Any:
    """Let go of a chat the window replaced or closed: ``chat.close()`` (breaks its reference cycles: the
    interpreter's collector never has to find a 100,000-message chat — ui/infra/work.py's module doc) on the UI thread,
    then its parts freed on a worker a slice at a time (:func:`.work.release`). Returns that work's future, or None
    when there was nothing to release. Call it after the window has switched to the new chat (nothing may use the
    old one afterwards)."""
    parts = chat.close() if chat is not None else []  # idempotent: [] when closed already
    return release(parts) if parts else None


def _checked(work: Any, value: Any) -> Any:
    if work.cancelled():  # Cancel pressed while a step that cannot stop midway ran: drop what it built (nothing
        dismantle(value[0].close())  # was written) — closed, or its cycles would stay frozen (ui/infra/work.py)
        work.check()
    return value


async def new_chat_async(win: "MainWindow", card: library.CardRef, create: Any) -> bool:
    """Create a chat with ``create(chat_dir)`` (the window's Chat.create call, run on the worker) in a new folder of
    ``card`` and open it, both off the UI thread."""
    models = win.provider_models()
    d = library.new_chat_dir(card, language=language())
    ref = library.ChatRef(name=d.name, dir=str(d))

    def job(w: Any) -> Any:
        create(d, models)
        return win.load_chat(card, ref, models)  # a new chat is not cancelled half-way: it opens

    try:
        chat_obj, is_demo = await run_in_worker(win, job, label=tr("work.new.chat"), cancellable=False,
                                                big=True)
    except (CardError, SessionError, OSError) as e:
        QMessageBox.warning(win, tr("app.title"), tr("err.new.chat", error=e))
        return False
    win.session.broadcast(LIBRARY)  # the card and chat lists follow the notice
    return win.install_chat(card, ref, chat_obj, is_demo)


def import_st_chat_dialog(win: "MainWindow") -> None:
    """Menu 导入 SillyTavern 聊天记录…: pick a ``.jsonl`` and import it under the selected card, then open it."""
    if win.refuse_read_only():
        return
    card = win.selected_card()
    if card is None:
        QMessageBox.information(win, tr("app.title"), tr("pick.card.first"))
        return
    path, _ = QFileDialog.getOpenFileName(win, tr("work.pick.chat"), str(Path.home()), tr("work.chat.filter"))
    if path:
        spawn(win, import_st_chat_async(win, card, Path(path)))


async def import_st_chat_async(win: "MainWindow", card: library.CardRef, path: Path) -> bool:
    """Import the SillyTavern chat ``path`` as a new chat of ``card`` (progress and Cancel; a cancel leaves no folder)
    and open it. False when cancelled or refused (the engine's message shown)."""
    from ...core.chat.st_import import import_st_folder

    models = win.provider_models()
    d = library.new_chat_dir(card, default_chat_name(path))
    ref = library.ChatRef(name=d.name, dir=str(d))

    def job(w: Any) -> Any:
        c = card.load()
        warnings = import_st_folder(path, c, d, progress=w.progress, cancelled=w.cancelled)
        w.label(tr("work.open.chat", name=d.name))
        w.progress(0, 0)
        return warnings, win.load_chat(card, ref, models)  # the import is done: it opens, Cancel or not

    try:
        warnings, (chat_obj, is_demo) = await run_in_worker(win, job, label=tr("work.import.chat", name=path.name),
                                                                 big=True)
    except (WorkCancelled, StChatCancelled):
        return False
    except (CardError, StChatError, SessionError, OSError, ValueError) as e:
        QMessageBox.warning(win, tr("app.title"), tr("work.err.import.chat", error=e))
        return False
    win.session.broadcast(LIBRARY)  # the card and chat lists follow the notice
    ok = win.install_chat(card, ref, chat_obj, is_demo)
    for w in warnings:
        win.draft_pane.notice(w)  # what the import skipped: the pane renders it in the window's language
    win.statusBar().showMessage(tr("work.import.chat.done", name=d.name), 6000)
    return ok


async def import_card_async(win: "MainWindow", path: str) -> Optional[library.CardRef]:
    """Import a card file into the library (the card read and copied, its regex scripts listed, on the worker) and
    ask about its scripts; None when it is not a card (message shown)."""
    from ...core.cards.regex_scripts import scripts_from_card

    def job(w: Any) -> Any:
        ref = library.import_card(path)
        try:
            scripts = scripts_from_card(ref.load().raw)
        except CardError:
            scripts = []
        return ref, scripts

    try:
        ref, scripts = await run_in_worker(win, job, label=tr("work.import.card", name=Path(path).name),
                                           cancellable=False)
    except (CardError, OSError) as e:
        QMessageBox.warning(win, tr("app.title"), tr("err.import", error=e))
        return None
    win.session.broadcast(LIBRARY)  # the card and chat lists follow the notice
    win.card_ref = ref
    win.ask_scripts(ref, scripts)
    from .manage import import_done_message

    win.statusBar().showMessage(import_done_message(ref), 10000 if ref.notes else 6000)
    win.offer_chat_after_import(ref)  # issue 26 §3: from card to chat in one step
    return ref
