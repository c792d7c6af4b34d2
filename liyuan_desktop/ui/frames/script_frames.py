"""A card's TavernHelper scripts running in the window (issue 27): each allowed, enabled script runs in a hidden
sandboxed frame of its own inside the conversation view's host page.

The frames are the status bars' frames (``conversation.js`` ``setScripts`` → ``createFrame``): the same
``sandbox="allow-scripts"`` without same-origin, the same Content-Security-Policy (no connection of any kind; a
trusted card's https scripts only), the same request filter and egress gate, memory guard, flood buckets and
watchdog (``frame_guard.py``), the same runtime (``th_shim.js``) — nothing here is a second copy of any of them.
A script frame is named ``TH-script--{name}--{id}`` as in TavernHelper and its runtime knows it is a script
(``init.script``): there ``toastr`` becomes a notice in the window, ``replaceScriptButtons`` changes the buttons
above the input, ``eventOnButton`` listens to this script's buttons and ``triggerSlash`` runs a safe subset.

Which scripts run: :func:`core.cards.th_scripts.chat_script_scopes` (the user allowed the card's scripts —
``cards.meta.set_card_th_allowed`` — the script and its folder are enabled, it is not too big, and it is not an MVU
loader: our scribe plays MVU). Variable writes of scripts come out of the view's ``frameVariablesChanged`` like a
bar's, so the window records them in the ledger the same way (``Chat.write_frame_variables``: persisted, per branch).

Events a script's bus gets from the window (TavernHelper's / SillyTavern's names): ``generation_started`` when a
beat starts; when it ends ``message_sent`` (a new user message), MVU's ``mag_variable_update_started``, one
``mag_variable_updated(stat_data, path, old, new)`` per value the scribe changed and ``mag_variable_update_ended``
(what listeners change in ``stat_data`` is written back as the message's variables, as under MVU), then
``message_received`` and ``generation_ended``; ``message_swiped`` / ``message_edited`` / ``message_deleted`` after
those actions; ``chat_id_changed`` is implied by the frames being rebuilt for each chat (TavernHelper reloads its
scripts then too).

``triggerSlash``: ``/setvar`` and ``/getvar`` run in the frame (chat scope); ``/echo`` shows its text as a notice,
``/send`` sends its text as the user's message, ``/trigger`` presses 发送 for what the input holds; every other
command is refused with a notice naming it. Remote imports of an untrusted card are refused by the frame's policy
and the notice names the URL.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any, Callable, Optional

from PySide6.QtCore import QObject, Signal

from ...core.cards.th_scripts import ThScript
from ..infra.i18n import register, tr

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat
    from .conversation import ConversationView

log = logging.getLogger(__name__)

register({
    "scripts.toast": {"zh": "脚本「{name}」：{text}", "en": "Script “{name}”: {text}"},
    "scripts.slash.refused": {"zh": "脚本「{name}」的斜杠命令 /{command} 未执行：梨园只支持 /send、/trigger、/setvar、/getvar、/echo",
                              "en": "Script “{name}”: the slash command /{command} was not run (Liyuan runs /send, "
                                    "/trigger, /setvar, /getvar and /echo only)"},
    "scripts.import.refused": {"zh": "脚本「{name}」要联网加载 {url}，已拒绝（这张卡未被信任）",
                               "en": "Script “{name}” wanted to load {url} from the network: refused (the card is "
                                     "not trusted)"},
    "scripts.stopped": {"zh": "脚本「{name}」已停止（{reason}）", "en": "Script “{name}” was stopped ({reason})"},
    "scripts.trigger.empty": {"zh": "脚本「{name}」要求生成回复（/trigger），但输入框是空的",
                              "en": "Script “{name}” asked for a reply (/trigger), but the input box is empty"},
})

SAFE_SLASH = ("send", "trigger", "setvar", "getvar", "echo")
"""The slash commands ``triggerSlash`` may run (the rest are refused with a notice naming them)."""


def frame_name(script: ThScript) -> str:
    """The frame name of ``script``: ``TH-script--{name}--{id}`` (TavernHelper's)."""
    return f"TH-script--{script.name}--{script.id}"


class ScriptFrames(QObject):
    """The card scripts of the chat shown in ``view`` (module doc). ``notice(text)`` shows a line to the user (the
    window's status bar); ``send(text)`` sends the user's message (``/send``), ``trigger()`` presses 发送
    (``/trigger``; returns False when there is nothing to send). ``buttonsChanged`` fires when :meth:`buttons`
    changed. ``notices`` keeps every notice shown (newest last; tests)."""

    buttonsChanged = Signal()

    def __init__(self, view: ConversationView, notice: Callable[[str], None],
                 send: Optional[Callable[[str], None]] = None, trigger: Optional[Callable[[], bool]] = None,
                 parent: Optional[QObject] = None) -> None:
        super().__init__(parent or view)
        self.view = view
        self._notice = notice
        self._send = send
        self._trigger = trigger
        self.scripts: list[ThScript] = []
        self._by_frame: dict[str, ThScript] = {}
        self._buttons: dict[str, list[str]] = {}
        self.notices: list[str] = []
        self._refused: set[str] = set()  # "script id URL" of the imports already named in a notice
        self._before: Optional[tuple[int, dict[str, Any], int]] = None
        view.scriptMessage.connect(self._on_message)
        view.frameFailed.connect(self._on_failed)
        view.ready.connect(self._rebuild)  # the page was reloaded (a renderer ended): the scripts start again

    # ---- which scripts -----------------------------------------------------------------------------------------
    def set_chat(self, chat: Optional[Chat]) -> list[ThScript]:
        """Run the scripts of ``chat``'s preset and card (None: none); those running before stop. Returns the scripts
        run."""
        scripts: list[ThScript] = []
        if chat is not None:
            try:
                scripts = [s for sc in chat.script_scopes() for s in sc.runnable()]  # the preset's, then the card's
            except Exception:  # noqa: BLE001 - a damaged card never breaks the window
                log.exception("card scripts: could not read the card's scripts")
        self.scripts = scripts
        self._by_frame = {frame_name(s): s for s in scripts}
        self._buttons = {s.id: s.visible_buttons() for s in scripts}
        self._rebuild()
        self.buttonsChanged.emit()
        return scripts

    def _rebuild(self) -> None:
        payload = [{"id": s.id, "name": s.name, "content": s.content} for s in self.scripts]
        self.view.eval_js(f"window.liyuan && window.liyuan.setScripts({json.dumps(payload, ensure_ascii=False)})")

    def buttons(self) -> list[tuple[str, str]]:
        """``(script id, button name)`` of the buttons shown above the input, script by script (TavernHelper's
        order; a script's ``replaceScriptButtons`` replaces its own)."""
        return [(s.id, b) for s in self.scripts for b in self._buttons.get(s.id, [])]

    # ---- into the frames ---------------------------------------------------------------------------------------
    def fire(self, event: str, *args: Any) -> None:
        """Fire ``event`` with ``args`` (JSON values) on every script frame's bus."""
        if self.scripts:
            self.view.eval_js(f"window.liyuan.scriptEvent({json.dumps(event)}, {json.dumps(list(args), ensure_ascii=False)})")

    def click(self, script_id: str, button: str) -> None:
        """The user clicked ``button`` of script ``script_id``: its frame's bus gets the button's event."""
        self.view.eval_js(f"window.liyuan.scriptButton({json.dumps(script_id)}, {json.dumps(button, ensure_ascii=False)})")

    def mvu_update(self, message_id: int, before: dict[str, Any], after: dict[str, Any]) -> None:
        """The scribe changed message ``message_id``'s variables (MvuData ``{stat_data, …}``) from ``before`` to
        ``after``: the script frames play MVU's update events (module doc)."""
        if self.scripts:
            self.view.eval_js(f"window.liyuan.scriptMvuUpdate({json.dumps(message_id)}, "
                              f"{json.dumps(before, ensure_ascii=False)}, {json.dumps(after, ensure_ascii=False)})")

    # ---- a beat -------------------------------------------------------------------------------------------------
    def beat_started(self, chat: Optional[Chat]) -> None:
        """A beat starts: remember the newest message's variables, fire ``generation_started``."""
        self._before = _newest_variables(chat) if chat is not None and self.scripts else None
        self.fire("generation_started", "normal", {}, False)

    def beat_finished(self, chat: Optional[Chat]) -> None:
        """A beat ended: ``message_sent`` for a new user message, MVU's update events when the newest message's
        variables changed, ``message_received`` and ``generation_ended`` (module doc)."""
        if chat is None or not self.scripts:
            return
        after = _newest_variables(chat)
        before, self._before = self._before, None
        if after is None:
            return
        mid, variables, count = after
        if before is None or count != before[2]:
            if count >= 2:
                self.fire("message_sent", count - 2)
            old = before[1] if before is not None else {}
            if variables != old or before is None:
                self.mvu_update(mid, old, variables)
            self.fire("message_received", count - 1, "normal")
        elif variables != before[1]:
            self.mvu_update(mid, before[1], variables)
        self.fire("generation_ended", count - 1)

    # ---- out of the frames -------------------------------------------------------------------------------------
    def _say(self, text: str) -> None:
        self.notices.append(text)
        try:
            self._notice(text)
        except RuntimeError:  # the window is closing
            pass

    def _on_message(self, name: str, data: dict[str, Any]) -> None:
        script = self._by_frame.get(name)
        if script is None:
            return
        kind = data.get("kind")
        if kind == "toast":
            text = " ".join(str(x) for x in (data.get("title"), data.get("text")) if x)
            self._say(tr("scripts.toast", name=script.name, text=text[:300]))
        elif kind == "import":
            key = f"{script.id} {data.get('text')}"
            if key in self._refused:
                return
            self._refused.add(key)
            self._say(tr("scripts.import.refused", name=script.name, url=str(data.get("text") or "")[:300]))
        elif kind == "buttons":
            got = data.get("buttons")
            raw: list[Any] = got if isinstance(got, list) else []
            self._buttons[script.id] = [str(b.get("name")) for b in raw
                                        if isinstance(b, dict) and b.get("name") and b.get("visible", True)][:100]
            self.buttonsChanged.emit()
        elif kind == "slash":
            self._slash(script, str(data.get("command") or ""), str(data.get("args") or ""))

    def _slash(self, script: ThScript, command: str, args: str) -> None:
        if command == "echo":
            self._say(tr("scripts.toast", name=script.name, text=args[:300]))
        elif command == "send" and self._send is not None and args.strip():
            self._send(args.strip())
        elif command == "trigger" and self._trigger is not None:
            if not self._trigger():
                self._say(tr("scripts.trigger.empty", name=script.name))
        else:
            self._say(tr("scripts.slash.refused", name=script.name, command=command[:60]))

    def _on_failed(self, name: str, reason: str) -> None:
        script = self._by_frame.get(name)
        if script is not None:
            self._say(tr("scripts.stopped", name=script.name, reason=reason.split(":")[0]))


def _newest_variables(chat: Chat) -> Optional[tuple[int, dict[str, Any], int]]:
    """``(message id, variables, item count)`` of the newest transcript item carrying variables (the view's
    numbering: its index), or None."""
    items = chat.transcript_items()
    count = len(items)
    for i in range(count - 1, max(-1, count - 4), -1):
        v = items[i].get("variables")
        if isinstance(v, dict):
            return i, json.loads(json.dumps(v)), count
    return None
