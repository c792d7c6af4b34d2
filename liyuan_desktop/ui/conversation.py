"""The conversation view: a QWebEngineView around our own host page (``resources/web/conversation.*``).

Python → page: ``window.liyuan.<method>(<json>)`` through ``runJavaScript``; calls made before the page has loaded
wait in a queue that is flushed on ``loadFinished``. Page → Python: a ``QWebChannel`` object ``bridge``
(:class:`Bridge`). The page never navigates: :class:`HostPage` refuses every navigation away from the host page,
and links in the text are opened in the user's browser by Python (``QDesktopServices``), only for http(s)/mailto.

The model's text is never interpreted as HTML: ``conversation.js`` escapes it first and only then applies the
Markdown / role-play formatting, and the page's Content-Security-Policy allows no inline script and no remote
resources as a second line of defence.

Status bars (TavernHelper-style, ``../shared/design/card-runtime.md``): a fenced code block whose text contains
``html>``, ``<head>`` or ``<body`` is shown in an ``<iframe sandbox="allow-scripts">`` (opaque origin, never
``allow-same-origin``) named ``TH-message--{id}--{n}``, whose ``srcdoc`` starts with our ``th_shim.js`` and the
message's variables inline. Frames talk only to the host page (``postMessage``); the host relays writes to Python
(:attr:`ConversationView.frameVariablesChanged`) and Python pushes new variables with
:meth:`ConversationView.push_variables`. The frame's own CSP blocks all network; local libraries and a request
interceptor / local library scheme come later.

A ``srcdoc`` frame inherits the host page's Content-Security-Policy, so the host policy must allow what the frames
need (inline script and style, ``data:`` images and fonts). When ``conversation.html``'s policy does not, the view
loads a copy of the page whose policy is widened to :data:`HOST_CSP` (everything else is unchanged: no remote
anything, no connections, no navigation).
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QObject, Qt, QTimer, QUrl, Signal, Slot
from PySide6.QtGui import QColor, QDesktopServices
from PySide6.QtWebChannel import QWebChannel
from PySide6.QtWebEngineCore import QWebEnginePage, QWebEngineSettings
from PySide6.QtWebEngineWidgets import QWebEngineView
from PySide6.QtWidgets import QMenu, QWidget

from .i18n import tr

log = logging.getLogger(__name__)

WEB_FILES = ("conversation.html", "conversation.css", "conversation.js", "th_shim.js")
HOST_CSP = ("default-src 'none'; script-src 'self' qrc: 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
            "img-src data:; font-src 'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'; "
            "base-uri 'none'; form-action 'none'")
"""The host page policy status-bar frames can live with (they inherit it; their own policy narrows it further)."""
_CSP_META = re.compile(r'(<meta\s+http-equiv="Content-Security-Policy"\s+content=")([^"]*)(")', re.I)
EXTERNAL_SCHEMES = ("http", "https", "mailto")
THEME_BACKGROUND = {"light": "#faf7f1", "dark": "#1c1a18"}
PENDING_INTERVAL_MS = 16  # Python-side coalescing of set_pending: at most one page call per frame


def web_dir() -> Path:
    """The folder holding the host page files. Normally the package folder itself; when the package is not on the
    file system (zip import) the files are copied to a temporary folder once."""
    base = resources.files("liyuan_desktop") / "resources" / "web"
    try:
        path = Path(os.fspath(base))  # type: ignore[arg-type]
        if (path / WEB_FILES[0]).is_file():
            return path
    except TypeError:
        pass
    tmp = Path(tempfile.mkdtemp(prefix="liyuan-web-"))
    for name in WEB_FILES:
        (tmp / name).write_bytes((base / name).read_bytes())
    return tmp


_host_dir_cache: Path | None = None


def _frames_allowed(csp: str) -> bool:
    script = re.search(r"script-src([^;]*)", csp)
    style = re.search(r"style-src([^;]*)", csp)
    return bool(script and "'unsafe-inline'" in script.group(1) and style and "'unsafe-inline'" in style.group(1))


def host_dir() -> Path:
    """The folder the view loads the host page from: :func:`web_dir` when its page policy already lets status-bar
    frames run, else (once per process) a temporary copy whose ``conversation.html`` carries :data:`HOST_CSP`."""
    global _host_dir_cache
    base = web_dir()
    html = (base / WEB_FILES[0]).read_text(encoding="utf-8")
    m = _CSP_META.search(html)
    if m is None or _frames_allowed(m.group(2)):
        return base
    if _host_dir_cache is not None and (_host_dir_cache / WEB_FILES[0]).is_file():
        return _host_dir_cache
    tmp = Path(tempfile.mkdtemp(prefix="liyuan-host-"))
    for name in WEB_FILES[1:]:
        (tmp / name).write_bytes((base / name).read_bytes())
    (tmp / WEB_FILES[0]).write_text(_CSP_META.sub(lambda mm: mm.group(1) + HOST_CSP + mm.group(3), html, count=1),
                                     encoding="utf-8")
    _host_dir_cache = tmp
    return tmp


def shim_source() -> str:
    """The text of ``th_shim.js`` (our TavernHelper/MVU runtime shim, injected first into every status-bar frame)."""
    return (web_dir() / "th_shim.js").read_text(encoding="utf-8")


def _js_arg(value: Any) -> str:
    """``value`` as a JavaScript literal (JSON; U+2028/2029 escaped for older parsers)."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def page_strings() -> dict[str, str]:
    """The translated strings the page shows (keys as the page's own defaults in ``conversation.js``)."""
    keys = {
        "you": "conv.you", "beat": "conv.beat", "pending": "conv.pending", "revised": "conv.revised",
        "outcome.unsealed": "conv.outcome.unsealed", "outcome.stopped": "conv.outcome.stopped",
        "outcome.error": "conv.outcome.error", "outcome.out_of_rounds": "conv.outcome.out_of_rounds",
        "older": "conv.older", "older.loading": "conv.older.loading",
        "welcome.title": "welcome.title", "welcome.intro": "welcome.intro", "welcome.sub": "welcome.sub",
        "welcome.demo": "welcome.demo", "welcome.settings": "welcome.settings",
    }
    return {k: tr(v) for k, v in keys.items()}


def _without_fragment(url: QUrl) -> str:
    return url.toString().split("#", 1)[0]


class Bridge(QObject):
    """The object the page sees as ``bridge`` over QWebChannel. Its slots only forward to the view's signals."""

    def __init__(self, view: "ConversationView") -> None:
        super().__init__(view)
        self._view = view

    @Slot()
    def pageReady(self) -> None:  # noqa: N802 (called from JS)
        """The page's channel is connected."""
        self._view._on_page_ready()

    @Slot(str)
    def requestOlder(self, before_id: str) -> None:  # noqa: N802
        """The reader scrolled near the top and older items exist: ``before_id`` is the oldest item shown."""
        self._view.olderRequested.emit(str(before_id))

    @Slot(str)
    def welcomeAction(self, name: str) -> None:  # noqa: N802
        """A welcome page button: ``demo`` or ``settings``."""
        if name == "demo":
            self._view.demoRequested.emit()
        elif name == "settings":
            self._view.settingsRequested.emit()
        else:
            log.debug("unknown welcome action %r", name)

    @Slot(str, str)
    def frameVariables(self, frame_name: str, payload: str) -> None:  # noqa: N802
        """A status-bar frame wrote variables: ``payload`` is JSON ``{"type", "message_id", "variables"}``."""
        try:
            data = json.loads(payload)
        except (TypeError, ValueError):
            log.warning("conversation view: bad frame variables from %s", frame_name)
            return
        if isinstance(data, dict):
            self._view._on_frame_variables(str(frame_name), data)

    @Slot(str)
    def linkClicked(self, url: str) -> None:  # noqa: N802
        """A link in the text was clicked: open it outside the app when it is http(s) or mailto."""
        self._view._open_external(QUrl(url))


class HostPage(QWebEnginePage):
    """A page that stays on the host page: every navigation elsewhere is refused and reported with
    ``navigationRefused`` (links are opened only through the bridge's ``linkClicked``, which the page calls on a
    click), no new windows are opened, console messages go to logging."""

    navigationRefused = Signal(QUrl)

    def __init__(self, host_url: QUrl, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._host = _without_fragment(host_url)

    def acceptNavigationRequest(self, url: QUrl, nav_type: QWebEnginePage.NavigationType,  # noqa: N802
                                is_main_frame: bool) -> bool:
        """Allow only (re)loading the host page itself."""
        if is_main_frame and _without_fragment(url) == self._host:
            return True
        log.info("conversation view: refused navigation to %s", url.toString())
        self.navigationRefused.emit(url)
        return False

    def createWindow(self, _type: QWebEnginePage.WebWindowType) -> None:  # noqa: N802
        """No pop-ups or new windows."""
        return None

    def javaScriptConsoleMessage(self, level, message: str, line: int, source: str) -> None:  # noqa: N802
        """Page console output goes to logging (errors as warnings)."""
        lvl = logging.WARNING if level == QWebEnginePage.JavaScriptConsoleMessageLevel.ErrorMessageLevel else logging.DEBUG
        log.log(lvl, "conversation.js:%s: %s", line, message)


class ConversationView(QWebEngineView):
    """The transcript, rendered the way role-play text is read (``*action*`` in italics, 「dialogue」 as written,
    Markdown basics), plus a banner, a live pending bubble and a welcome page.

    Items are dicts ``{"id", "role": "opening"|"user"|"assistant"|"draft", "text", "beat", "revised"?,
    "outcome"?, "error"?, "name"?}`` as produced by ``Chat.transcript()`` (``name`` optionally overrides the
    persona label on a user turn).

    Lazy loading: only the items given are built. The main window passes the newest ~60 items of a long chat to
    :meth:`set_transcript`; when the reader scrolls near the top and ``has_older`` was true the page emits
    :attr:`olderRequested` with the oldest shown id, and the main window answers with :meth:`prepend` (an empty
    list with ``has_older=False`` when there is nothing more). A 5,000-item transcript is therefore never
    rendered at once, and prepending keeps the reader's place.

    Calls made before the page has loaded are queued and replayed in order. If the page's render process dies,
    the view reloads and restores its items, banner, theme and mode from its own mirror.
    """

    ready = Signal()
    """Emitted once, when the page and its QWebChannel are up."""
    olderRequested = Signal(str)
    """The reader wants older items; the argument is the id of the oldest item shown."""
    demoRequested = Signal()
    """The welcome page's "玩离线演示" button."""
    settingsRequested = Signal()
    """The welcome page's "设置模型" button."""
    frameVariablesChanged = Signal(str, dict)
    """A status-bar frame wrote variables (``replaceVariables``, ``insertOrAssignVariables``, ``Mvu.replaceMvuData``
    …): the frame's name (``TH-message--{id}--{n}``) and ``{"type": "message"|"chat"|"character"|"global",
    "message_id": str|None, "variables": dict}`` (the whole new table of that scope)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._dir = host_dir()
        self._url = QUrl.fromLocalFile(str(self._dir / WEB_FILES[0]))
        self._page = HostPage(self._url, self)
        self._page.setBackgroundColor(QColor(THEME_BACKGROUND["light"]))
        settings = self._page.settings()
        settings.setAttribute(QWebEngineSettings.WebAttribute.JavascriptCanOpenWindows, False)
        settings.setAttribute(QWebEngineSettings.WebAttribute.LocalContentCanAccessRemoteUrls, False)
        settings.setAttribute(QWebEngineSettings.WebAttribute.PluginsEnabled, False)
        self.setPage(self._page)

        self._bridge = Bridge(self)
        self._channel = QWebChannel(self._page)
        self._channel.registerObject("bridge", self._bridge)
        self._page.setWebChannel(self._channel)

        #: Opens an external link; replaceable (tests, or a main window that wants to confirm first).
        self.link_opener: Callable[[QUrl], Any] = QDesktopServices.openUrl

        self._loaded = False
        self._ready = False
        self._queue: list[tuple[str, Callable[[Any], None] | None]] = []

        # a mirror of what the page shows, to restore it after a render-process crash
        self._items: dict[str, dict] = {}
        self._has_older = False
        self._banner: str | None = None
        self._theme = "light"
        self._mode = "chat"
        self._user_label = ""
        self._frame_context: dict = {}

        self._pending: tuple[str | None, str] = (None, "")
        self._pending_dirty = False
        self._pending_timer = QTimer(self)
        self._pending_timer.setSingleShot(True)
        self._pending_timer.setInterval(PENDING_INTERVAL_MS)
        self._pending_timer.timeout.connect(self._flush_pending)

        self.loadFinished.connect(self._on_load_finished)
        self._page.renderProcessTerminated.connect(self._on_render_process_terminated)
        self._call("setStrings", page_strings())
        self._call("setFrameRuntime", {"shim": shim_source()})
        self.setUrl(self._url)

    # ---- state ------------------------------------------------------------------------------------------------
    def is_ready(self) -> bool:
        """True once :attr:`ready` has been emitted (the page and its channel are up)."""
        return self._ready

    @property
    def host_url(self) -> QUrl:
        """The URL of the host page (the only one the view ever shows)."""
        return QUrl(self._url)

    # ---- public API ----------------------------------------------------------------------------------------------
    def set_transcript(self, items: list[dict], has_older: bool) -> None:
        """Replace everything shown with ``items`` (oldest first) and scroll to the newest. ``has_older``: more
        items exist before the first one (the page will ask for them with :attr:`olderRequested`)."""
        items = [dict(i) for i in items]
        self._items = {str(i["id"]): i for i in items}
        self._has_older = bool(has_older)
        self._call("setTranscript", items, self._has_older)

    def prepend(self, items: list[dict], has_older: bool) -> None:
        """Add older ``items`` (oldest first) above the first one shown, keeping what the reader looks at in
        place. Answer to :attr:`olderRequested`; pass ``[]`` and ``False`` when nothing older exists."""
        items = [dict(i) for i in items]
        new = {str(i["id"]): i for i in items}
        self._items = {**new, **{k: v for k, v in self._items.items() if k not in new}}
        self._has_older = bool(has_older)
        self._call("prepend", items, self._has_older)

    def append_item(self, item: dict) -> None:
        """Add ``item`` at the end (an item with an id already shown is moved to the end)."""
        item = dict(item)
        self._items.pop(str(item["id"]), None)
        self._items[str(item["id"])] = item
        self._call("appendItem", item)

    def update_item(self, item: dict) -> None:
        """Re-render the item with the same id in place (e.g. a revised reply). Ids not shown are ignored."""
        item = dict(item)
        key = str(item["id"])
        if key in self._items:
            self._items[key] = item
        self._call("updateItem", item)

    def remove_item(self, item_id: str) -> None:
        """Remove the item with this id, if shown."""
        self._items.pop(str(item_id), None)
        self._call("removeItem", str(item_id))

    def set_pending(self, text: str | None, label: str = "") -> None:
        """Show or update the live pending bubble at the end (``label`` e.g. "青梧正在写…", ``text`` the growing
        draft); ``None`` hides it. Cheap to call many times a second: calls are coalesced here to one page call
        per ~16 ms, and the page updates only that node, at most once per animation frame."""
        self._pending = (None if text is None else str(text), label or "")
        self._pending_dirty = True
        if not self._pending_timer.isActive():
            self._pending_timer.start()

    def set_banner(self, text: str | None) -> None:
        """Show ``text`` in the banner at the top (e.g. the replay-model notice); ``None`` or "" hides it."""
        self._banner = text or None
        self._call("setBanner", self._banner)

    def set_user_label(self, label: str) -> None:
        """The persona name shown on the user's turns (default "你")."""
        self._user_label = label or ""
        self._call("setUserLabel", self._user_label)

    def show_welcome(self) -> None:
        """Show the welcome page (title, intro, "玩离线演示" / "设置模型")."""
        self._mode = "welcome"
        self._call("showWelcome")

    def show_chat(self) -> None:
        """Show the transcript (the default)."""
        self._mode = "chat"
        self._call("showChat")

    def set_theme(self, theme: str) -> None:
        """``"light"`` (default) or ``"dark"``."""
        self._theme = "dark" if theme == "dark" else "light"
        self._page.setBackgroundColor(QColor(THEME_BACKGROUND[self._theme]))
        self._call("setTheme", self._theme)

    def scroll_to_bottom(self) -> None:
        """Scroll to the newest item."""
        self._call("scrollToBottom")

    # ---- status-bar frames --------------------------------------------------------------------------------------
    def push_variables(self, message_id: str, variables: dict) -> None:
        """New variables (an MvuData snapshot ``{stat_data, …}``) for message ``message_id``: every live status-bar
        frame of that message (all frames when ``message_id`` is ``"*"``, each for its own message) gets them in
        its cache, then its event bus fires ``mag_variable_update_started(new)``,
        ``mag_variable_update_ended(new, old)`` and ``message_updated(id)``. Frames built later (re-render) start
        from these variables too. Items may also carry their variables as ``item["variables"]``."""
        variables = dict(variables or {})
        key = str(message_id)
        if key == "*":
            for it in self._items.values():
                it["variables"] = variables
        elif key in self._items:
            self._items[key]["variables"] = variables
        self._call("pushVariables", key, variables)

    def set_frame_context(self, *, user: str | None = None, char: str | None = None,
                          chat_vars: dict | None = None, character_vars: dict | None = None,
                          global_vars: dict | None = None) -> None:
        """What status-bar frames see besides message variables: the persona and character names (for
        ``substitudeMacros`` / ``SillyTavern.name1/name2``) and the chat / character / global variable scopes.
        Applies to frames built after the call."""
        ctx = self._frame_context
        if user is not None or char is not None:
            names = dict(ctx.get("names") or {})
            if user is not None:
                names["user"] = user
            if char is not None:
                names["char"] = char
            ctx["names"] = names
        for key, value in (("chatVars", chat_vars), ("characterVars", character_vars), ("globalVars", global_vars)):
            if value is not None:
                ctx[key] = dict(value)
        self._call("setFrameContext", ctx)

    def _on_frame_variables(self, frame_name: str, data: dict) -> None:
        variables = data.get("variables")
        if not isinstance(variables, dict):
            variables = {}
        mid = data.get("message_id")
        payload = {"type": str(data.get("type") or "chat"), "message_id": None if mid is None else str(mid),
                   "variables": variables}
        if payload["type"] == "message" and payload["message_id"] in self._items:
            self._items[payload["message_id"]]["variables"] = variables
        self.frameVariablesChanged.emit(frame_name, payload)

    def eval_js(self, script: str, callback: Callable[[Any], None] | None = None) -> None:
        """Run ``script`` in the page (after everything queued before it) and pass its result to ``callback``."""
        self._run(script, callback)

    # ---- plumbing ----------------------------------------------------------------------------------------------
    def _call(self, method: str, *args: Any) -> None:
        self._run(f"window.liyuan.{method}({', '.join(_js_arg(a) for a in args)});", None)

    def _run(self, script: str, callback: Callable[[Any], None] | None) -> None:
        if not self._loaded:
            self._queue.append((script, callback))
            return
        self._flush_pending()  # keep the order: a pending update made before this call lands before it
        self._exec(script, callback)

    def _exec(self, script: str, callback: Callable[[Any], None] | None) -> None:
        if callback is None:
            self._page.runJavaScript(script, 0)
        else:
            self._page.runJavaScript(script, 0, callback)

    def _flush_pending(self) -> None:
        if not self._pending_dirty or not self._loaded:
            return
        self._pending_dirty = False
        self._pending_timer.stop()
        text, label = self._pending
        self._exec(f"window.liyuan.setPending({_js_arg(text)}, {_js_arg(label)});", None)

    def _on_load_finished(self, ok: bool) -> None:
        if not ok:
            if self._loaded:  # a navigation we refused ends like this; the host page is still there
                log.debug("conversation view: a navigation was stopped")
            else:
                log.warning("conversation view: the host page failed to load (%s)", self._url.toString())
            return
        self._loaded = True
        queue, self._queue = self._queue, []
        for script, callback in queue:
            self._exec(script, callback)
        self._flush_pending()

    def _on_page_ready(self) -> None:
        if not self._ready:
            self._ready = True
            self.ready.emit()

    def _on_render_process_terminated(self, status, exit_code: int) -> None:
        if status == QWebEnginePage.RenderProcessTerminationStatus.NormalTerminationStatus:
            return  # the app is closing
        log.warning("conversation view: render process ended (%s, %s); reloading", status, exit_code)
        self._loaded = False
        self._queue = []
        self._call("setStrings", page_strings())
        self._call("setFrameRuntime", {"shim": shim_source()})
        self._call("setFrameContext", self._frame_context)
        self._call("setTheme", self._theme)
        self._call("setUserLabel", self._user_label)
        self._call("setBanner", self._banner)
        self._call("setTranscript", list(self._items.values()), self._has_older)
        self._call("showWelcome" if self._mode == "welcome" else "showChat")
        self._pending_dirty = True
        QTimer.singleShot(0, lambda: self.setUrl(self._url))

    def _open_external(self, url: QUrl) -> None:
        if url.isValid() and url.scheme().lower() in EXTERNAL_SCHEMES:
            self.link_opener(url)
        else:
            log.info("conversation view: not opening %s", url.toString())

    def contextMenuEvent(self, event) -> None:  # noqa: N802
        """Only Copy and Select all (no Back/Reload/View source: the page never navigates)."""
        menu = QMenu(self)
        menu.addAction(self._page.action(QWebEnginePage.WebAction.Copy))
        menu.addAction(self._page.action(QWebEnginePage.WebAction.SelectAll))
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(event.globalPos())
