"""Opening the card editor (ui/dialogs/card_editor.py) from the window (issue 26 §1): 编辑角色卡… in the card list's
context menu (ui/window/manage.py) and in the 对话 menu — the selected card, else the open chat's, read on a worker —
and 新建角色卡… in the app menu: an empty card (SillyTavern's new-card form, ``core.cards.edit.new_card_json``) that
exists only in the dialog until 保存 creates it in the library."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Optional

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLineEdit, QMessageBox

from ...core.cards import CardError, card_from_json, library
from ...core.cards.edit import CardEditor, new_card_json
from ..infra.i18n import show, tr
from .card_editor import CardEditorDialog


def open_card_editor(win: Any, card: Optional[library.CardRef] = None) -> Any:
    """编辑角色卡…: the editor on ``card`` (else the selected card, else the open chat's); shown, not modal, and
    kept as ``win.card_editor``. The card is read on a worker (a card with a big world book takes a moment;
    ``ui/infra/tasks.run_in_worker``): returns that task, or — with no event loop running — the dialog itself.
    None (said in the status bar or a message box) when there is no card or it cannot be edited."""
    ref = card or win.session.card_ref
    chat = win.session.chat
    where = Path(ref.dir) if ref is not None else Path(chat.card.path) if chat is not None and chat.card.path else None
    if where is None:
        win.statusBar().showMessage(tr("cardeditor.no.card"), 6000)
        return None
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _opened(win, where, None)

    async def read() -> Optional[CardEditorDialog]:
        from ..infra.tasks import WorkCancelled, run_in_worker

        try:
            editor = await run_in_worker(win, lambda _w: CardEditor.open(where), label=tr("cardeditor.loading"))
        except WorkCancelled:
            return None
        except (CardError, OSError) as e:
            return _opened(win, where, e)
        return _opened(win, where, editor)

    return asyncio.ensure_future(read())


def _opened(win: Any, where: Path, got: "CardEditor | Exception | None") -> Optional[CardEditorDialog]:
    """The dialog on the card read (``got``: the editor, the error reading it, or None: read it now)."""
    if got is None:
        try:
            got = CardEditor.open(where)
        except (CardError, OSError) as e:
            got = e
    if isinstance(got, Exception):
        QMessageBox.warning(win, tr("app.title"), show(got))
        return None
    return _show(win, CardEditorDialog(got, win.session, win))


def open_new_card(win: Any) -> CardEditorDialog:
    """新建角色卡…: the editor on an empty card (SillyTavern's new-card form); nothing is written until 保存."""
    name = tr("cardeditor.new.name")
    editor = CardEditor(card_from_json(new_card_json(name), ""), Path(name) / "card.json")
    dlg = _show(win, CardEditorDialog(editor, win.session, win, new=True))
    name_edit = dlg.inputs["name"]
    assert isinstance(name_edit, QLineEdit)
    name_edit.selectAll()
    name_edit.setFocus()
    return dlg


def _show(win: Any, dlg: CardEditorDialog) -> CardEditorDialog:
    dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    win.card_editor = dlg
    dlg.show()
    dlg.raise_()
    return dlg


def install_card_editor(win: Any, app_menu: Any, chat_menu: Any) -> None:
    """新建角色卡… in ``app_menu`` (after 导入角色卡) and 编辑角色卡… in ``chat_menu`` (the selected or open card);
    the card list's context menu calls :func:`open_card_editor` itself (ui/window/manage.py)."""
    new = QAction(tr("cardeditor.new"), win)
    new.setObjectName("newCardAction")
    new.triggered.connect(lambda: open_new_card(win))
    acts = app_menu.actions()
    app_menu.insertAction(acts[1] if len(acts) > 1 else None, new)
    edit = chat_menu.addAction(tr("cardeditor.edit"))
    edit.setObjectName("editCardAction")
    edit.triggered.connect(lambda: open_card_editor(win))
    win.new_card_action, win.edit_card_action = new, edit


__all__ = ["install_card_editor", "open_card_editor", "open_new_card"]
