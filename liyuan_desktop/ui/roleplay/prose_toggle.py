"""The window's switch between tool play and prose-only play (issue 18 §2): 对话 → 纯文字演出（不用工具）.

A checkable action in the 对话 menu, synced from ``Chat.prose_only()`` each time the menu opens (the chat may have
fallen back on its own: the server rejected tools, or the model ignored them for 3 beats). Checking it calls
``Chat.set_prose_only(True)``; unchecking calls ``set_prose_only(False)`` when the provider's capabilities would
otherwise keep prose-only on (the user wants tools after all), else ``None`` (follow the provider). Its tooltip
and the status bar say what prose-only play cannot do (previous-beat edits, ``ask``). The strings live here (prefix
``prose.mode.``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QMessageBox

from ..infra.i18n import register, show, tr

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

log = logging.getLogger(__name__)

register({
    "prose.mode.action": {"zh": "纯文字演出（不用工具）", "en": "Prose-only play (no tools)"},
    "prose.mode.tip": {"zh": "给不会调用工具的模型：每拍一次补全，命中的设定原文随拍发送。此模式下不能原位修改上一拍，模型也不能向你提问。",
                       "en": "For models that do not call tools: one completion per beat, the activated lore's text "
                             "sent with it. Previous-beat edits and the model's questions (ask) are unavailable."},
    "prose.mode.on": {"zh": "已切到纯文字演出：不能原位修改上一拍，模型也不能向你提问（ask）。",
                      "en": "Prose-only play: previous-beat edits and the model's questions (ask) are unavailable."},
    "prose.mode.off": {"zh": "已切回工具演出。", "en": "Back to tool play."},
    "prose.mode.why.rejected": {"zh": "（服务器不接受工具调用）", "en": " (the server rejects tools)"},
    "prose.mode.why.ignored": {"zh": "（模型连续几拍都不调用工具）", "en": " (the model ignored tools for several beats)"},
    "prose.mode.busy": {"zh": "本拍还在进行，等它结束再切换。", "en": "A beat is running; switch when it ends."},
})


def sync_action(action: QAction, chat: Chat) -> None:
    """Check/enable ``action`` from ``chat.prose_only()`` (disabled without a chat or in agent mode); the text says
    why prose-only is on when the chat fell back on its own."""
    action.setText(tr("prose.mode.action"))
    if chat is None or chat.mode == "agent":
        action.setEnabled(False)
        action.setChecked(False)
        return
    info = chat.prose_only()
    action.setEnabled(True)
    action.setChecked(bool(info["on"]))
    why = info.get("why") or ""
    if info["on"] and why in ("rejected", "ignored"):
        action.setText(tr("prose.mode.action") + tr(f"prose.mode.why.{why}"))


def toggle(window: Any, on: bool) -> None:
    """Apply the user's choice to the window's chat (see the module doc) and say so in the status bar."""
    chat = window.chat
    if chat is None:
        return
    try:
        chat.set_prose_only(True if on else None)
        if not on and chat.prose_only()["on"]:  # the provider's capabilities keep it on: the user wants tools
            chat.set_prose_only(False)
    except RuntimeError:
        QMessageBox.information(window, tr("app.title"), tr("prose.mode.busy"))
    except OSError as e:
        QMessageBox.warning(window, tr("app.title"), show(e))
    window.statusBar().showMessage(tr("prose.mode.on") if chat.prose_only()["on"] else tr("prose.mode.off"), 8000)


def install_prose_toggle(window: Any, chat_menu: QMenu) -> QAction:
    """Add the switch to ``chat_menu`` (kept as ``window.prose_action``); it re-syncs when the menu opens."""
    act = QAction(tr("prose.mode.action"), window)
    act.setObjectName("proseOnlyAction")
    act.setCheckable(True)
    act.setToolTip(tr("prose.mode.tip"))
    act.setStatusTip(tr("prose.mode.tip"))
    act.triggered.connect(lambda checked: toggle(window, bool(checked)))
    chat_menu.addAction(act)
    chat_menu.aboutToShow.connect(lambda: sync_action(act, window.chat))
    window.prose_action = act
    return act
