"""The conversation view: a QWebEngineView around our own host page (``resources/web/conversation.*``).

Python → page: ``window.liyuan.<method>(<json>)`` through ``runJavaScript``; calls made before the page has loaded
wait in a queue that is flushed on ``loadFinished``. Page → Python: a ``QWebChannel`` object ``bridge``
(:class:`Bridge`). The page never navigates: :class:`HostPage` refuses every navigation away from the host page,
and links in the text are opened in the user's browser by Python (``QDesktopServices``), only http(s) to a public host
and only once the user said yes to the address (:func:`link_refusal`).

The model's text is never interpreted as HTML: ``conversation.js`` escapes it first and only then applies the
Markdown / role-play formatting, and the page's Content-Security-Policy allows no inline script and no remote
resources as a second line of defence.

Status bars (TavernHelper-style, ``../shared/design/card-runtime.md``): a fenced code block whose text contains
``html>``, ``<head>`` or ``<body`` is shown in an ``<iframe sandbox="allow-scripts">`` (opaque origin, never
``allow-same-origin``) named ``TH-message--{id}--{n}``, whose ``srcdoc`` starts with our ``th_shim.js`` and the
message's variables inline. Frames talk only to the host page (``postMessage``); the host relays writes to Python
(:attr:`ConversationView.frameVariablesChanged`) and Python pushes new variables with
:meth:`ConversationView.push_variables`. The frame's own CSP blocks all network; bundled libraries are inlined.

Per card (:meth:`ConversationView.set_card`, called when a chat opens): the frames' ``localStorage`` /
``sessionStorage`` are the card's own (``core/card_storage.py``: a JSON file in the card's folder, inlined into each
frame before the card's script runs, changes relayed back and written atomically, 1 MiB cap); the card's "trusted"
switch (``core/cards/meta.py``) lets its frames load https scripts/styles/fonts, nothing more.

Defences besides the sandbox and the CSPs: a :class:`FrameRequestInterceptor` on the page refuses every request
that is not our own files, ``qrc:``/``data:``/``blob:`` — for a trusted card also https scripts, styles and fonts,
but never loopback/private addresses — and lists what it refused (:meth:`ConversationView.blocked_requests`).
What neither CSP nor this filter sees (preconnect hints, WebRTC, DNS), a frame renderer's memory, message floods and
per-card variable scopes are ``frame_guard.py``'s (Chromium switches, the egress gate, the memory guard).
Endless loops: Chromium's site isolation is switched on (:func:`ensure_frame_isolation`), which puts the sandboxed
frames in a renderer of their own; the host page's watchdog (``conversation.js``) removes a frame that stops
answering its pings and shows 「状态栏脚本无响应，已停止」 (:attr:`ConversationView.frameFailed`). Should a frame
share the host's renderer anyway (isolation off), a Python-side watchdog notices the silent page, ends the
renderer and reloads the view with the silent frames stopped.

A ``srcdoc`` frame inherits the host page's Content-Security-Policy, so the host policy must allow what the frames
need (inline script and style, ``data:`` images and fonts). When ``conversation.html``'s policy does not, the view
loads a copy of the page whose policy is widened to :data:`HOST_CSP` (everything else is unchanged: no remote
anything, no connections, no navigation).
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import re
import shutil
import signal
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from PySide6.QtCore import QObject, Qt, QTimer, QUrl, Signal, Slot
from PySide6.QtGui import QColor, QDesktopServices
from PySide6.QtWebChannel import QWebChannel
from PySide6.QtWebEngineCore import (
    QWebEngineLoadingInfo,
    QWebEnginePage,
    QWebEngineSettings,
    QWebEngineUrlRequestInfo,
    QWebEngineUrlRequestInterceptor,
)
from PySide6.QtWebEngineWidgets import QWebEngineView
from PySide6.QtWidgets import QMainWindow, QMenu, QWidget

from ...core.cards.meta import card_allowed_sites, card_frames_trusted
from ...core.cards.st_chat import opening_title
from ...core.cards.storage import MAX_BYTES, StorageQuotaError, load_card_storage, save_card_storage
from ...runtime import split_flags
from ..infra.i18n import register, show, tr
from . import frame_guard

register({
    # the answered ask kept in the conversation, above the reply of its beat (issue 24 §3)
    "conv.ask.title": {"zh": "岔口", "en": "Your call"},
    "conv.ask.wrote": {"zh": "你答：{answer}", "en": "You answered: {answer}"},
    "conv.ask.stopped": {"zh": "你没有作答，停下了这一拍", "en": "You stopped the beat instead of answering"},
    "conv.ask.auto": {"zh": "自动选了第一项", "en": "The first option was taken automatically"},
})

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

log = logging.getLogger(__name__)

ISOLATION_FLAG = "--site-per-process"
SPARE_RENDERER_FEATURE = "SpareRendererForSitePerProcess"
"""Chromium's spare renderer: with site isolation it keeps one idle renderer process started ahead of the next
navigation — the fifth process of a window with no status bar (15-25 MB PSS, and its start-up competes with the
app's own; issue 15). Switched off (``--disable-features``): a frame's renderer starts when the frame is built."""


def _disable_feature(flags: str, feature: str) -> str:
    """``flags`` (a QTWEBENGINE_CHROMIUM_FLAGS value) with ``feature`` added to its ``--disable-features`` list
    (one switch: Chromium keeps only the last of several), quoting as ``runtime.add_chromium_flags`` does."""
    parts = split_flags(flags)
    for i, f in enumerate(parts):
        if f.startswith("--disable-features="):
            names = [n for n in f.split("=", 1)[1].split(",") if n]
            if feature not in names:
                parts[i] = "--disable-features=" + ",".join(names + [feature])
            break
    else:
        parts.append(f"--disable-features={feature}")
    return " ".join(f'"{f}"' if " " in f else f for f in parts)


def ensure_frame_isolation() -> bool:
    """Switch on Chromium's site isolation for this process (``--site-per-process`` in
    ``QTWEBENGINE_CHROMIUM_FLAGS``), so that sandboxed status-bar frames run in a renderer process of their own and
    a card's ``while(true){}`` cannot freeze the host page (QtWebEngine 6.12 keeps them in the host's renderer
    without it — measured on this machine); Chromium's idle spare renderer is switched off
    (:data:`SPARE_RENDERER_FEATURE`). Effective only before QtWebEngine starts (the first web view); called
    when this module is imported. ``LIYUAN_FRAME_ISOLATION=0`` leaves the flags alone (then the Python watchdog is
    the only defence). Returns whether the flag is (now) set."""
    if os.environ.get("LIYUAN_FRAME_ISOLATION", "1") == "0":
        return False
    flags = os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS", "")
    if "--disable-site-isolation-trials" in flags:
        return False
    if ISOLATION_FLAG not in flags.split():
        flags = (flags + " " + ISOLATION_FLAG).strip()
    os.environ["QTWEBENGINE_CHROMIUM_FLAGS"] = _disable_feature(flags, SPARE_RENDERER_FEATURE)
    return True


ensure_frame_isolation()
frame_guard.install()  # no channel out of a frame besides ordinary requests (frame_guard's module doc)

WEB_FILES = ("conversation.html", "conversation.css", "conversation.js", "th_shim.js")
HOST_CSP = ("default-src 'none'; script-src 'self' qrc: 'unsafe-inline' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; "
            "img-src data:; font-src 'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'; "
            "base-uri 'none'; form-action 'none'")
"""The host page policy status-bar frames can live with (they inherit it; their own policy narrows it further)."""
_CSP_META = re.compile(r'(<meta\s+http-equiv="Content-Security-Policy"\s+content=")([^"]*)(")', re.I)
FRAME_LIBS = Path("vendor") / "lib" / "frame_libs.js"
PURIFY_LIB = Path("vendor") / "lib" / "purify.min.js"  # the host page's message sanitiser (issue 13 §3)
PING_MS, HANG_MS, LOAD_MS, REUSE_MS = 1000, 5000, 15000, 3000
"""Host-page watchdog: ping every frame each second; a ping unanswered for 5 s, or no hello 15 s after the frame
was built, stops the frame."""
PY_WATCHDOG_MS, PY_HANG_S, PY_HANG_TICKS = 2000, 15.0, 5
"""Python watchdog: probe the host page every 2 s; a probe unanswered for 15 s and 5 probes' time means the
renderer itself is stuck (only possible when frames share its process)."""
THEME_BACKGROUND = {"light": "#faf7f1", "dark": "#1c1a18"}
#: the longest a chat switch keeps the page covered (ms) when the page does not say it painted (hidden, reloading)
COVER_MAX_MS = 1500
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
_SESSION_STORAGE: dict[str, dict[str, str]] = {}
"""Frames' sessionStorage per card key, for the run of the app (never written to disk)."""


def _frames_allowed(csp: str) -> bool:
    script = re.search(r"script-src([^;]*)", csp)
    style = re.search(r"style-src([^;]*)", csp)
    return bool(script and "'unsafe-inline'" in script.group(1) and style and "'unsafe-inline'" in style.group(1))


_trusted_dir_cache: Path | None = None
_site_dirs: dict[tuple[bool, tuple[str, ...]], Path] = {}
SITE_DIRECTIVES = ("script-src", "style-src", "font-src", "img-src", "media-src", "connect-src", "frame-src")
"""The policy directives an allowed site is added to (its page in a frame, and what that page loads)."""


def with_sites(csp: str, sites: tuple[str, ...] | list[str]) -> str:
    """``csp`` with ``https://HOST`` for each of ``sites`` added to :data:`SITE_DIRECTIVES` (``'none'`` dropped
    where a source is added; a missing directive is added). Hosts must be :func:`cards.meta.normalize_site` output
    (letters, digits, dots and dashes only), so nothing else can enter the policy."""
    sources = " ".join(f"https://{h}" for h in sites if re.fullmatch(r"[a-z0-9.-]+", h))
    if not sources:
        return csp
    parts = [p.strip() for p in csp.split(";") if p.strip()]
    seen = set()
    for i, part in enumerate(parts):
        name, _, rest = part.partition(" ")
        if name in SITE_DIRECTIVES:
            seen.add(name)
            kept = [t for t in rest.split() if t != "'none'"]
            parts[i] = " ".join([name, *kept, sources])
    parts += [f"{d} {sources}" for d in SITE_DIRECTIVES if d not in seen]
    return "; ".join(parts)


def _with_https(csp: str) -> str:
    """``csp`` with ``https:`` added to script-src, style-src and font-src (and nothing else)."""
    def add(m: re.Match) -> str:
        return m.group(0) if "https:" in m.group(2).split() else f"{m.group(1)}{m.group(2)} https:"
    return re.sub(r"\b((?:script|style|font)-src)([^;]*)", add, csp)


def host_dir(trusted: bool = False, sites: tuple[str, ...] = ()) -> Path:
    """The folder the view loads the host page from: :func:`web_dir` when its page policy already lets status-bar
    frames run, else (once per process) a temporary copy whose ``conversation.html`` carries :data:`HOST_CSP`.
    ``trusted``: a temporary copy (once per process) whose policy also allows https scripts, styles and fonts —
    frames inherit the host page's policy, so a trusted card's frames could not load them otherwise.
    ``sites``: https hosts the user allowed for the card shown (``cards.meta.card_allowed_sites``, issue 26 §3): a
    copy (once per set per process) whose policy also lets frames load pages, scripts, styles, images and requests
    from exactly those hosts."""
    global _host_dir_cache, _trusted_dir_cache
    if sites:
        key = (trusted, tuple(sorted(sites)))
        if key in _site_dirs and (_site_dirs[key] / WEB_FILES[0]).is_file():
            return _site_dirs[key]
        base = host_dir(trusted)
        tmp = Path(tempfile.mkdtemp(prefix="liyuan-host-sites-"))
        shutil.copytree(base, tmp, dirs_exist_ok=True)
        html = (base / WEB_FILES[0]).read_text(encoding="utf-8")
        (tmp / WEB_FILES[0]).write_text(_CSP_META.sub(lambda mm: mm.group(1) + with_sites(mm.group(2), key[1])
                                                      + mm.group(3), html, count=1), encoding="utf-8")
        _site_dirs[key] = tmp
        return tmp
    if trusted:
        if _trusted_dir_cache is not None and (_trusted_dir_cache / WEB_FILES[0]).is_file():
            return _trusted_dir_cache
        base = host_dir(False)
        html = (base / WEB_FILES[0]).read_text(encoding="utf-8")
        tmp = Path(tempfile.mkdtemp(prefix="liyuan-host-trusted-"))
        for name in WEB_FILES[1:]:
            (tmp / name).write_bytes((base / name).read_bytes())
        libs = web_dir() / FRAME_LIBS
        if libs.is_file():
            (tmp / FRAME_LIBS).parent.mkdir(parents=True, exist_ok=True)
            (tmp / FRAME_LIBS).write_bytes(libs.read_bytes())
        if (web_dir() / PURIFY_LIB).is_file():
            (tmp / PURIFY_LIB).parent.mkdir(parents=True, exist_ok=True)
            (tmp / PURIFY_LIB).write_bytes((web_dir() / PURIFY_LIB).read_bytes())
        (tmp / WEB_FILES[0]).write_text(_CSP_META.sub(lambda mm: mm.group(1) + _with_https(mm.group(2)) + mm.group(3),
                                                      html, count=1), encoding="utf-8")
        _trusted_dir_cache = tmp
        return tmp
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
    if (base / FRAME_LIBS).is_file():
        (tmp / FRAME_LIBS).parent.mkdir(parents=True, exist_ok=True)
        (tmp / FRAME_LIBS).write_bytes((base / FRAME_LIBS).read_bytes())
    if (base / PURIFY_LIB).is_file():
        (tmp / PURIFY_LIB).parent.mkdir(parents=True, exist_ok=True)
        (tmp / PURIFY_LIB).write_bytes((base / PURIFY_LIB).read_bytes())
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


def page_item(item: dict[str, Any]) -> dict[str, Any]:
    """A copy of a transcript ``item`` as the page gets it: an opening's stored header line (「【开场 · 青梧】」 or
    "[Opening · Qingwu]", in the chat's language) becomes the title in the window's language (core messages
    ``opening.title``), written 「【…】」 — the line ``conversation.js`` shows as the opening's small title, never as
    text. ``raw`` (what Copy and Edit use) keeps the stored text."""
    item = dict(item)
    if item.get("role") == "opening" and isinstance(item.get("text"), str):
        title, body = opening_title(item["text"])
        if title is not None:
            item.setdefault("raw", item["text"])
            item["text"] = f"【{show(title)}】\n{body}"
    return item


def page_strings() -> dict[str, str]:
    """The translated strings the page shows (keys as the page's own defaults in ``conversation.js``)."""
    keys = {
        "you": "conv.you", "beat": "conv.beat", "pending": "conv.pending", "revised": "conv.revised",
        "outcome.unsealed": "conv.outcome.unsealed", "outcome.stopped": "conv.outcome.stopped",
        "outcome.error": "conv.outcome.error", "outcome.out_of_rounds": "conv.outcome.out_of_rounds",
        "older": "conv.older", "older.loading": "conv.older.loading",
        "welcome.title": "welcome.title", "welcome.intro": "welcome.intro", "welcome.sub": "welcome.sub",
        "welcome.demo": "welcome.demo", "welcome.settings": "welcome.settings", "frame.hung": "conv.frame.hung",
        "frame.memory": "conv.frame.memory", "frame.flood": "conv.frame.flood",
        "frame.notice.error": "conv.frame.notice.error", "frame.notice.blocked": "conv.frame.notice.blocked",
        "frame.notice.empty": "conv.frame.notice.empty", "frame.notice.details": "conv.frame.notice.details",
        "frame.unknown_api": "conv.frame.unknown_api",
        "branch.prev": "branch.prev", "branch.next": "branch.next", "branch.edit": "branch.edit",
        "branch.edit.tip": "branch.edit.tip", "reply.edit": "reply.edit", "reply.edit.tip": "reply.edit.tip",
        "ask.title": "conv.ask.title", "ask.wrote": "conv.ask.wrote", "ask.stopped": "conv.ask.stopped",
        "ask.auto": "conv.ask.auto",
    }
    keys.update({k: k for k in ("msg.copy", "msg.copy.tip", "msg.edit", "msg.edit.tip", "msg.edit.save", "msg.edit.cancel",
                                "msg.edit.user.note", "msg.edit.reply.note", "msg.delete", "msg.delete.tip",
                                "msg.branch", "msg.branch.tip", "msg.hide", "msg.unhide", "msg.hide.tip",
                                "msg.hidden.badge", "msg.hidden.tip")})  # the message actions (issue 26 §3)
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

    @Slot(int)
    def painted(self, token: int) -> None:  # noqa: N802 (called from JS)
        """The page has painted everything handed to it before ``afterPaint(token)`` (two animation frames)."""
        self._view._on_painted(int(token))

    @Slot(str)
    def requestOlder(self, before_id: str) -> None:  # noqa: N802
        """The reader scrolled near the top and older items exist: ``before_id`` is the oldest item shown."""
        self._view.olderRequested.emit(str(before_id))

    @Slot(str, int)
    def scrolled(self, item_id: str, offset: int) -> None:  # noqa: N802
        """Where the reader is: the first item reaching into the view and its top's offset (CSS px); "" = at the
        end (:meth:`ConversationView.reading_position`)."""
        self._view._reading = (str(item_id), int(offset)) if item_id else None

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

    @Slot(str, str)
    def scriptMessage(self, frame_name: str, payload: str) -> None:  # noqa: N802
        """A card script's frame asks the window for something (issue 27; ``ui/frames/script_frames.py``):
        ``payload`` is JSON ``{"kind": "buttons"|"toast"|"slash"|"import", …}``."""
        try:
            data = json.loads(payload)
        except (TypeError, ValueError):
            return
        if isinstance(data, dict):
            self._view.scriptMessage.emit(str(frame_name), data)

    @Slot(str, str, str)
    def frameStorage(self, card_key: str, area: str, items: str) -> None:  # noqa: N802
        """A card's frames changed their storage: ``area`` "local"|"session", ``items`` the whole area as JSON
        ``{key: value}``; ``card_key`` is the key the host page built those frames for."""
        try:
            data = json.loads(items)
        except (TypeError, ValueError):
            log.warning("conversation view: bad frame storage payload")
            return
        self._view._on_frame_storage(str(card_key), str(area), data)

    @Slot(str, str)
    def frameFailed(self, frame_name: str, reason: str) -> None:  # noqa: N802
        """The host page's watchdog stopped a frame (``reason`` "hung")."""
        self._view._on_frame_failed(str(frame_name), str(reason))

    @Slot(str, str, str)
    def frameBlocked(self, frame_name: str, url: str, directive: str) -> None:  # noqa: N802
        """A frame's Content-Security-Policy refused to load ``url`` (``directive``, e.g. connect-src)."""
        self._view.note_blocked(f"{directive} {url}".strip(), frame_name)

    @Slot(str)
    def frameStarted(self, frame_name: str) -> None:  # noqa: N802
        """A frame was built (for the Python watchdog: it has not said hello yet)."""
        self._view._frames_seen[str(frame_name)] = False

    @Slot(str)
    def frameAlive(self, frame_name: str) -> None:  # noqa: N802
        """A frame's shim said hello (its runtime started)."""
        self._view._frames_seen[str(frame_name)] = True

    @Slot(str)
    def linkClicked(self, url: str) -> None:  # noqa: N802
        """A link in the text was clicked: asked, then opened outside the app (:meth:`ConversationView._open_external`)."""
        self._view._open_external(QUrl(url))

    @Slot(str, int)
    def swipe(self, entry_id: str, delta: int) -> None:  # noqa: N802
        """「◀ / ▶」 on a reply or user message with alternatives: its session entry id and -1 / +1."""
        self._view.swipeRequested.emit(str(entry_id), -1 if int(delta) < 0 else 1)

    @Slot(str)
    def editUser(self, entry_id: str) -> None:  # noqa: N802
        """「编辑」 on a user message (its session entry id)."""
        self._view.editRequested.emit(str(entry_id))

    @Slot(str)
    def editReply(self, entry_id: str) -> None:  # noqa: N802
        """「编辑」 on a reply (its session entry id)."""
        self._view.editReplyRequested.emit(str(entry_id))

    @Slot(str, str)
    def messageAction(self, action: str, entry_id: str) -> None:  # noqa: N802
        """A message's hover button (issue 26 §3): ``action`` copy | delete | branch | hide | unhide and its session
        entry id.
        Emitted after this call has returned (the window may ask a question first; a modal box inside a channel
        slot would nest the channel's dispatch)."""
        if action in ("copy", "delete", "branch", "hide", "unhide"):
            QTimer.singleShot(0, self._view, lambda: self._view.messageActionRequested.emit(str(action), str(entry_id)))

    @Slot(str, str)
    def saveEdit(self, entry_id: str, text: str) -> None:  # noqa: N802
        """The in-place editor's 保存 on a user message or reply: its session entry id and the new text."""
        QTimer.singleShot(0, self._view, lambda: self._view.editSaved.emit(str(entry_id), str(text)))


def _private_host(host: str) -> bool:
    """True for names and addresses that lead back to this machine or the local network (localhost, loopback,
    private, link-local, unspecified, ``*.local``)."""
    h = host.strip("[]").lower().rstrip(".")
    if h in ("", "localhost") or h.endswith(".localhost") or h.endswith(".local"):
        return True
    try:
        ip = ipaddress.ip_address(h)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_unspecified or ip.is_reserved or ip.is_multicast


def link_refusal(url: QUrl) -> str:
    """Why a link clicked in the text must not be opened in the user's browser, or "" when it may (after asking):
    "scheme" for anything but http(s) (javascript:, file:, data:, mailto: …; issue 29 §7) and "private" for a
    host that leads back to this machine or the local network — localhost names, loopback, private, link-local and
    reserved addresses in any spelling QUrl normalises (``http://2130706433/``, ``http://0x7f.1/``, ``[::1]``),
    names without a dot (``frame_guard.is_public_host``)."""
    if not url.isValid() or url.scheme().lower() not in ("http", "https"):
        return "scheme"
    host = url.host()
    if not host or _private_host(host) or not frame_guard.is_public_host(host):
        return "private"
    return ""


class FrameRequestInterceptor(QWebEngineUrlRequestInterceptor):
    """Every request of the conversation page and its frames passes here (Qt 6: on the UI thread). Allowed:
    ``data:``, ``blob:``, ``qrc:``, ``about:`` and files inside the page's own folders; for a trusted card also
    https scripts, stylesheets and fonts on public hosts. Everything else — other files (``file:///etc/passwd``),
    plain http, WebSockets, XHR/fetch, images from outside, loopback and private addresses — is refused and
    reported through ``on_block(url, why)``."""

    TRUSTED_TYPES = (QWebEngineUrlRequestInfo.ResourceType.ResourceTypeScript,
                     QWebEngineUrlRequestInfo.ResourceType.ResourceTypeStylesheet,
                     QWebEngineUrlRequestInfo.ResourceType.ResourceTypeFontResource)

    def __init__(self, dirs: list[Path], on_block: Callable[[str, str], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.dirs = [d.resolve() for d in dirs]
        self.trusted = False
        self.sites: frozenset[str] = frozenset()
        """https hosts the user allowed for the card shown (issue 26 §3): any request to them passes (not to a
        loopback or private address, and only through the egress gate)."""
        self._on_block = on_block

    def allowed(self, url: QUrl, resource_type: Any) -> tuple[bool, str]:
        """(allowed?, reason when not) for a request of ``resource_type`` to ``url``."""
        scheme = url.scheme().lower()
        if scheme in ("data", "blob", "qrc", "about"):
            return True, ""
        if scheme == "file":
            try:
                p = Path(url.toLocalFile()).resolve()
            except (OSError, ValueError):
                return False, "file"
            return (any(p == d or d in p.parents for d in self.dirs), "file outside the page")
        if scheme == "https" and url.host().lower().rstrip(".") in self.sites:
            return (False, "loopback/private address") if _private_host(url.host()) else (True, "")
        if scheme == "https" and self.trusted:
            if _private_host(url.host()):
                return False, "loopback/private address"
            if resource_type in self.TRUSTED_TYPES:
                return True, ""
            return False, "not a script, style or font"
        return False, f"{scheme or 'no'} scheme"

    def interceptRequest(self, info: QWebEngineUrlRequestInfo) -> None:  # noqa: N802
        """Block what :meth:`allowed` refuses."""
        url = info.requestUrl()
        ok, why = self.allowed(url, info.resourceType())
        if not ok:
            info.block(True)
            self._on_block(url.toString(), why)
        elif url.scheme().lower() == "https" and frame_guard.gate() is not None:
            frame_guard.gate().allow(url.host(), url.port(443))  # the egress gate opens a tunnel for this one


class HostPage(QWebEnginePage):
    """A page that stays on the host page: every navigation elsewhere is refused and reported with
    ``navigationRefused`` (links are opened only through the bridge's ``linkClicked``, which the page calls on a
    click), no new windows are opened, console messages go to logging."""

    navigationRefused = Signal(QUrl)

    def __init__(self, host_url: QUrl, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._host = _without_fragment(host_url)

    def set_host(self, host_url: QUrl) -> None:
        """The host page moved (the trusted copy of the page, or back)."""
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
    "outcome"?, "error"?, "name"?, "asks"?}`` as produced by ``Chat.transcript()`` (``name`` optionally overrides
    the persona label on a user turn; ``asks``: what the model asked in that beat and what the user chose, shown
    above the reply — the question, the options with the chosen one marked, a free answer or a stop).

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
    swipeRequested = Signal(str, int)
    """「◀ i/n ▶」 clicked: the session entry id of the reply / user message and -1 or +1."""
    editRequested = Signal(str)
    """「编辑」 clicked on a user message: its session entry id."""
    editReplyRequested = Signal(str)
    """「编辑」 on a reply (its button or the context menu): its session entry id (issue 17, ui.reply_actions)."""
    inspectRequested = Signal(str)
    """「查看提示词」 chosen in the context menu of a reply or draft: its session entry id."""
    branchFromRequested = Signal(str)
    """「从这里新建对话」 on a message: a new chat holding the branch up to that session entry id (issue 17)."""
    messageActionRequested = Signal(str, str)
    """A message's hover button or context-menu entry (issue 26 §3): ``copy`` | ``delete`` | ``branch`` | ``hide`` |
    ``unhide`` and the
    message's session entry id (ui/roleplay/reply_actions.py acts on it)."""
    editSaved = Signal(str, str)
    """The in-place editor saved a user message or reply: its session entry id and the new text."""
    frameFailed = Signal(str, str)
    """A status-bar frame was stopped: its name and the reason (``"hung"``: it stopped answering the watchdog);
    its block now shows 「状态栏脚本无响应，已停止」."""
    requestBlocked = Signal(str)
    """Something a frame (or the page) tried was refused; the entry as listed by :meth:`blocked_requests`."""
    frameStorageSaved = Signal(str)
    """The current card's frame localStorage was written to its folder (the card key)."""
    frameVariablesChanged = Signal(str, object)
    """A status-bar frame wrote variables (``replaceVariables``, ``insertOrAssignVariables``, ``Mvu.replaceMvuData``
    …): the frame's name (``TH-message--{id}--{n}``) and ``{"type": "message"|"chat"|"character"|"global",
    "message_id": str|None, "variables": dict}`` (the whole new table of that scope). Carried as ``object``, not
    ``dict``: a ``dict`` argument becomes a QVariantMap, which sorts every object's keys, and bars list things in
    the author's key order (issue 29 §10)."""
    scriptMessage = Signal(str, object)
    """A card script's frame (``TH-script--…``) asked for buttons, a notice, a slash command, or had a remote import
    refused: ``(frame name, {"kind", …})`` (ui/frames/script_frames.py)."""

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
        frame_guard.harden_settings(settings)
        self.setPage(self._page)
        # the trusted copy of the page (host_dir(True): a folder written on first use) is added when a trusted
        # card is shown (set_card), not made at every start (issue 15: ~80 ms of copying on the way to the window)
        self._interceptor = FrameRequestInterceptor([web_dir(), self._dir], self.note_blocked, self)
        self._page.setUrlRequestInterceptor(self._interceptor)

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
        self._reading: Optional[tuple[str, int]] = None  # where the reader is, scrolled up (reading_position)
        self._has_older = False
        self._banner: str | None = None
        self._theme = "light"
        self._mode = "chat"
        self._user_label = ""
        self._frame_context: dict = {}

        # the card whose chat is shown (set_card): storage, trust; what the frames were refused / stopped
        self._card_dir: Path | None = None
        self._card_key = ""
        self._trusted = False
        self._sites: tuple[str, ...] = ()  # https hosts allowed for the card shown (set_card)
        self._blocked: list[str] = []
        self._failed_frames: dict[str, str] = {}
        self._frames_seen: dict[str, bool] = {}
        #: Watchdog settings (tests shorten them): host page ping interval / hang / load limits in ms.
        self.frame_watchdog = {"pingMs": PING_MS, "hangMs": HANG_MS, "loadMs": LOAD_MS, "reuseMs": REUSE_MS}
        #: What a frame may post to the host page (frame_guard.FLOOD: token bucket per frame; tests change it).
        self.frame_flood = dict(frame_guard.FLOOD)
        self._py_probe: tuple[int, float, int] | None = None  # (token, sent at, ticks since)
        self._py_token = 0
        self._py_timer = QTimer(self)
        self._py_timer.setInterval(PY_WATCHDOG_MS)
        self._py_timer.timeout.connect(self._python_watchdog)
        self._py_timer.start()
        #: Python watchdog limits: seconds and ticks a probe may stay unanswered before the renderer is ended.
        self.python_watchdog = {"hang_s": PY_HANG_S, "ticks": PY_HANG_TICKS}

        self._make_cover()
        self._pending: tuple[str | None, str] = (None, "")
        self._pending_dirty = False
        self._pending_timer = QTimer(self)
        self._pending_timer.setSingleShot(True)
        self._pending_timer.setInterval(PENDING_INTERVAL_MS)
        self._pending_timer.timeout.connect(self._flush_pending)

        # (loadingChanged, not loadFinished: it says which page finished — see _on_loading_changed)
        self._page.loadingChanged.connect(self._on_loading_changed)
        self._page.renderProcessTerminated.connect(self._on_render_process_terminated)
        # the egress gate's refusals and the memory guard's kills (frame_guard): listed and shown like the others
        frame_guard.watch_view(self)
        self._call("setStrings", page_strings())
        self._call("setFrameRuntime", {"shim": shim_source(), "flood": self.frame_flood, **self.frame_watchdog})
        self.setUrl(self._url)

    # ---- state ------------------------------------------------------------------------------------------------

    def _make_cover(self) -> None:
        """A plain cover over the page while a chat switch is handed to it (hold_until_painted /
        release_after_paint), hidden at the latest after ``COVER_MAX_MS``."""
        self._cover = QWidget(self)
        self._cover.setObjectName("conversationCover")
        self._cover.setAutoFillBackground(True)
        self._cover.hide()
        self._cover_token = 0
        self._cover_timer = QTimer(self)
        self._cover_timer.setSingleShot(True)
        self._cover_timer.setInterval(COVER_MAX_MS)
        self._cover_timer.timeout.connect(self._cover.hide)
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
        items = [page_item(i) for i in items]
        self._items = {str(i["id"]): i for i in items}
        self._has_older = bool(has_older)
        self._reading = None  # at the end
        self._call("setTranscript", items, self._has_older)

    def prepend(self, items: list[dict], has_older: bool) -> None:
        """Add older ``items`` (oldest first) above the first one shown, keeping what the reader looks at in
        place. Answer to :attr:`olderRequested`; pass ``[]`` and ``False`` when nothing older exists."""
        items = [page_item(i) for i in items]
        new = {str(i["id"]): i for i in items}
        self._items = {**new, **{k: v for k, v in self._items.items() if k not in new}}
        self._has_older = bool(has_older)
        self._call("prepend", items, self._has_older)

    def append_item(self, item: dict) -> None:
        """Add ``item`` at the end (an item with an id already shown is moved to the end)."""
        item = page_item(item)
        self._items.pop(str(item["id"]), None)
        self._items[str(item["id"])] = item
        self._call("appendItem", item)

    def update_item(self, item: dict) -> None:
        """Re-render the item with the same id in place (e.g. a revised reply). Ids not shown are ignored."""
        item = page_item(item)
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

    def mode(self) -> str:
        """What the page shows: ``"chat"`` (the transcript) or ``"welcome"`` (the welcome page)."""
        return self._mode

    def hold_until_painted(self) -> None:
        """Cover what the page shows now with the theme's plain background, at once (issue 24 §3: a chat switch
        showed the old chat's messages beside the new chat's panes for a frame — the panes are Qt widgets painted
        at the next paint, the page paints what it is handed later). :meth:`release_after_paint` takes the cover
        away once the page has painted what was handed to it meanwhile; it never stays longer than
        :data:`COVER_MAX_MS`."""
        pal = self._cover.palette()
        pal.setColor(self._cover.backgroundRole(), QColor(THEME_BACKGROUND[self._theme]))
        self._cover.setPalette(pal)
        self._cover.setGeometry(self.rect())
        self._cover.show()
        self._cover.raise_()
        self._cover_token += 1
        self._cover_timer.start()

    def release_after_paint(self) -> None:
        """Take the cover of :meth:`hold_until_painted` away once the page has painted everything handed to it
        before this call (the page answers ``bridge.painted`` two animation frames later)."""
        if self._cover.isVisible():
            self._call("afterPaint", self._cover_token)

    def covered(self) -> bool:
        """Whether the page is covered now (a switch not painted yet)."""
        return self._cover.isVisible()

    def _on_painted(self, token: int) -> None:
        if token == self._cover_token:
            self._cover_timer.stop()
            self._cover.hide()

    def resizeEvent(self, ev: Any) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(ev)
        self._cover.setGeometry(self.rect())

    def set_theme(self, theme: str) -> None:
        """``"light"`` (default) or ``"dark"``."""
        self._theme = "dark" if theme == "dark" else "light"
        self._page.setBackgroundColor(QColor(THEME_BACKGROUND[self._theme]))
        self._call("setTheme", self._theme)

    def reading_position(self) -> Optional[tuple[str, int]]:
        """Where the reader is when scrolled up from the end: (the first item reaching into the view, its top's
        offset from the view's top in CSS px), as the page last said (a scroll reports after 150 ms); None at the
        end or before any scroll. The live language switch carries it to the new window's view."""
        return self._reading

    def restore_reading(self, position: tuple[str, int]) -> None:
        """Scroll to ``position`` (:meth:`reading_position`) once the page has what it was handed before; an item
        not shown leaves the view at the end."""
        self._reading = position
        self._call("restoreScroll", position[0], position[1])

    def scroll_to_bottom(self) -> None:
        """Scroll to the newest item."""
        self._call("scrollToBottom")

    def set_avatars(self, char: str = "", user: str = "") -> None:
        """The character's and the user's avatars as ``data:image/…`` URLs ("" = none; the page's CSP allows only
        data: images), shown beside every message (issue 17, ui/frames/avatars.py)."""
        self._avatars = {"char": char or "", "user": user or ""}
        self._call("setAvatars", self._avatars)

    def set_speaker_avatars(self, avatars: dict[str, str]) -> None:
        """A group chat's members' avatars (speaker name → ``data:image/…`` URL), shown beside each member's replies
        instead of the chat card's (issue 31, ui/roleplay/group_members.py)."""
        self._call("setSpeakerAvatars", dict(avatars))

    def focus_item(self, item_id: str, needle: str = "", callback: Callable[[Any], None] | None = None) -> None:
        """Find (issue 17): scroll the shown item ``item_id`` to the middle, outline it and mark every
        case-insensitive occurrence of ``needle`` in its text; ``callback`` gets how many were marked (-1: the
        item is not shown)."""
        self._run(f"window.liyuan.focusItem({_js_arg(str(item_id))}, {_js_arg(needle or '')});", callback)

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
                          global_vars: dict | None = None, preset_vars: dict | None = None) -> None:
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
        for key, value in (("chatVars", chat_vars), ("characterVars", character_vars), ("globalVars", global_vars),
                           ("presetVars", preset_vars)):
            if value is not None:
                ctx[key] = dict(value)
        self._call("setFrameContext", ctx)

    def frame_context(self) -> dict:
        """A copy of what :meth:`set_frame_context` gave frames so far: ``{"names": {"user", "char"}, "chatVars",
        "characterVars", "globalVars"}`` (keys never set are absent)."""
        return json.loads(json.dumps(self._frame_context))

    def _on_frame_variables(self, frame_name: str, data: dict) -> None:
        if data.get("card") is not None and str(data.get("card")) != self._card_key:
            # a frame of another card (the page built it before the card changed): its variables are not this card's
            self.note_blocked("variables of another card", frame_name)
            return
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

    def _on_loading_changed(self, info: Any) -> None:
        """A load of the main frame started or ended. The end of a load of a page other than ``self._url`` is
        ignored: the page shown before a switch (set_card: the trusted copy of the page, or back) can finish loading
        after the switch was queued, and the queue is for the page about to load, not for that one."""
        status = info.status()
        if status == QWebEngineLoadingInfo.LoadStatus.LoadStartedStatus:
            return
        ok = status == QWebEngineLoadingInfo.LoadStatus.LoadSucceededStatus
        if ok and _without_fragment(info.url()) != _without_fragment(self._url):
            log.debug("conversation view: the previous host page finished loading; waiting for %s", self._url.toString())
            return
        self._on_load_finished(ok)

    def _on_page_ready(self) -> None:
        if not self._ready:
            self._ready = True
            self.ready.emit()

    def _on_render_process_terminated(self, status, exit_code: int) -> None:
        if status == QWebEnginePage.RenderProcessTerminationStatus.NormalTerminationStatus:
            return  # the app is closing
        log.warning("conversation view: render process ended (%s, %s); reloading", status, exit_code)
        self._reload_page()

    def _reload_page(self) -> None:
        """Load the host page (``self._url``) afresh and replay the mirror: after a render-process crash, after the
        Python watchdog ended a stuck renderer, or when the page variant changes (a trusted card)."""
        self._loaded = False
        self._queue = []
        self._py_probe = None
        self._call("setStrings", page_strings())
        self._call("setFrameRuntime", {"shim": shim_source(), "flood": self.frame_flood, **self.frame_watchdog})
        self._call("setFrameCard", self._card_payload())
        self._call("setFramesFailed", dict(sorted(self._failed_frames.items())))  # {name: reason}
        self._call("setFrameContext", self._frame_context)
        self._call("setTheme", self._theme)
        self._call("setUserLabel", self._user_label)
        self._call("setBanner", self._banner)
        self._call("setTranscript", list(self._items.values()), self._has_older)
        self._call("showWelcome" if self._mode == "welcome" else "showChat")
        self._pending_dirty = True
        QTimer.singleShot(0, self, lambda: self.setUrl(self._url))  # (dropped if the view is deleted first)

    # ---- per-card storage, trust, watchdog, refusals -----------------------------------------------------------
    def set_card(self, card_dir: str | Path | None) -> None:
        """The card whose chat the view shows (its folder; None = none). Frames built from now on get this card's
        ``localStorage`` (``core/card_storage.py``, loaded from its folder) and ``sessionStorage`` (kept for the run
        of the app), and its trust switch (``core/cards/meta.py``); changes their frames make are written back to
        this card only. Call it before :meth:`set_transcript`. A change of trust reloads the page (trusted cards use
        a copy of the host page whose policy allows https scripts, styles and fonts)."""
        new_dir = Path(card_dir).resolve() if card_dir else None
        key = str(new_dir) if new_dir else ""
        if key != self._card_key:
            self._failed_frames = {}
            self._frames_seen = {}
        self._card_dir, self._card_key = new_dir, key
        trusted = bool(new_dir) and card_frames_trusted(new_dir)
        sites = tuple(card_allowed_sites(new_dir)) if new_dir else ()
        self._interceptor.trusted = trusted
        self._interceptor.sites = frozenset(sites)
        if (not trusted or sites != self._sites) and frame_guard.gate() is not None:
            frame_guard.gate().revoke_all()
        if trusted != self._trusted or sites != self._sites:
            self._trusted, self._sites = trusted, sites
            self._dir = host_dir(trusted, sites)
            if self._dir.resolve() not in self._interceptor.dirs:
                self._interceptor.dirs.append(self._dir.resolve())
            self._url = QUrl.fromLocalFile(str(self._dir / WEB_FILES[0]))
            self._page.set_host(self._url)
            self._ready = False
            self._reload_page()  # replays setFrameCard with the new card
            return
        self._call("setFrameCard", self._card_payload())

    def set_frame_watchdog(self, **limits: int) -> None:
        """Change the host page's watchdog limits, in ms: ``pingMs``, ``hangMs``, ``loadMs``, ``reuseMs`` (see
        ``conversation.js`` "frame watchdog"); applies to the running page and after reloads."""
        self.frame_watchdog.update({k: int(v) for k, v in limits.items() if k in self.frame_watchdog})
        self._call("setFrameRuntime", {"shim": shim_source(), "flood": self.frame_flood, **self.frame_watchdog})

    @property
    def card_key(self) -> str:
        """The key of the card set with :meth:`set_card` (its resolved folder), "" when none."""
        return self._card_key

    @property
    def trusted(self) -> bool:
        """Whether the current card's frames are trusted (may load https scripts, styles, fonts)."""
        return self._trusted

    def _card_payload(self) -> dict:
        local = load_card_storage(self._card_dir) if self._card_dir else {}
        return {"key": self._card_key, "trusted": self._trusted, "sites": list(self._sites), "local": local,
                "session": dict(_SESSION_STORAGE.get(self._card_key, {})), "maxBytes": MAX_BYTES,
                "globalKey": frame_guard.variable_scope_key(self._card_key, self._trusted)}

    def _on_frame_storage(self, card_key: str, area: str, items: Any) -> None:
        if not card_key and not self._card_key:  # no card shown (a preview, a test): nowhere to keep it, nothing wrong
            log.debug("conversation view: frame storage with no card set: kept in the page only")
            return
        if not card_key or card_key != self._card_key:
            log.warning("conversation view: storage write for another card refused")
            self.note_blocked("storage of another card", "")
            return
        if area == "session":
            if isinstance(items, dict):
                _SESSION_STORAGE[card_key] = {str(k): str(v) for k, v in items.items()}
            return
        if area != "local" or self._card_dir is None:
            return
        try:
            save_card_storage(self._card_dir, items)
        except StorageQuotaError as e:
            log.warning("conversation view: card storage not saved: %s", e)
        except (ValueError, OSError) as e:
            log.warning("conversation view: card storage not saved: %s", e)
        else:
            self.frameStorageSaved.emit(card_key)

    def _on_frame_failed(self, frame_name: str, reason: str) -> None:
        swamped = reason == "flood:swamped"  # the page stopped it while behind on its messages (conversation.js)
        if swamped:
            reason = "flood"
        self._failed_frames[frame_name] = reason
        log.warning("conversation view: status bar %s stopped (%s)", frame_name, reason)
        self.frameFailed.emit(frame_name, reason)
        if reason == "flood":
            frame_guard.after_flood(self, swamped)  # drop what it already posted, if the page is still swamped by it

    def failed_frames(self) -> dict[str, str]:
        """Frames stopped since the card was set: ``{frame name: reason}`` (``"hung"``)."""
        return dict(self._failed_frames)

    def note_blocked(self, what: str, where: str) -> None:
        """Record a request the page's guards refused (``what``: the request, ``where``: the frame or gate that
        refused it) in the blocked list (the last 500) and emit ``requestBlocked``."""
        entry = f"{what} ({where})" if where else what
        self._blocked.append(entry)
        del self._blocked[:-500]
        log.info("conversation view: blocked %s", entry)
        self.requestBlocked.emit(entry)

    def blocked_requests(self) -> list[str]:
        """What was refused so far, newest last: requests the interceptor blocked (``"<url> (<why>)"``), what
        frames' policies refused (``"<directive> <url> (<frame>)"``), storage writes for another card."""
        return list(self._blocked)

    def _python_watchdog(self) -> None:
        """Every PY_WATCHDOG_MS: ask the page a trivial question. Unanswered for ``hang_s`` seconds and ``ticks``
        ticks (ticks count only while Python's own loop runs, so a busy Python is never mistaken for a stuck page)
        → the renderer is stuck: the frames not yet heard from (or, when every frame was, all of them) are marked
        stopped and the renderer is ended, which reloads the page (:meth:`_reload_page`)."""
        if not self._loaded or not self.isVisible():
            self._py_probe = None
            return
        if self._py_probe is None:
            self._py_token += 1
            token = self._py_token
            self._py_probe = (token, time.monotonic(), 0)

            def answered(_value: Any, token: int = token) -> None:
                if self._py_probe is not None and self._py_probe[0] == token:
                    self._py_probe = None
            self._exec("1", answered)
            return
        token, sent, ticks = self._py_probe
        self._py_probe = (token, sent, ticks + 1)
        if ticks + 1 < self.python_watchdog["ticks"] or time.monotonic() - sent < self.python_watchdog["hang_s"]:
            return
        quiet = [n for n, alive in self._frames_seen.items() if not alive] or list(self._frames_seen)
        log.warning("conversation view: the page stopped answering; ending its renderer (frames %s)", quiet)
        for name in quiet:
            self._on_frame_failed(name, "hung")
        self._py_probe = None
        pid = self._page.renderProcessPid()
        if pid > 0:
            try:
                os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))
            except OSError as e:
                log.warning("conversation view: could not end the renderer: %s", e)

    def _open_external(self, url: QUrl) -> None:
        """A link in the text was clicked: refused with a notice (:func:`link_refusal`), else opened with
        :attr:`link_opener` once the user said yes to the full address (No is the default). Asked after the
        bridge call has returned (a modal question inside a QWebChannel slot would nest the channel's dispatch)."""
        QTimer.singleShot(0, self, lambda: self._ask_open(QUrl(url)))

    def _ask_open(self, url: QUrl) -> None:
        address = url.toString(QUrl.ComponentFormattingOption.FullyEncoded) if url.isValid() else url.toString()
        why = link_refusal(url)
        if why:
            log.info("conversation view: not opening %s (%s)", address, why)
            self._inform_dialog(tr("conv.link.title"), tr(f"conv.link.refused.{why}", url=address))
            return
        if self._confirm_dialog(tr("conv.link.title"), tr("conv.link.ask", url=address)):
            self.link_opener(url)

    def _confirm_dialog(self, title: str, text: str) -> bool:
        """Yes/No question, No the default (tests replace it)."""
        from ..dialogs.dialogs import confirm
        return confirm(self, title, text)

    def _inform_dialog(self, title: str, text: str) -> None:
        """A notice with OK (tests replace it)."""
        from ..dialogs.dialogs import inform
        inform(self, title, text)

    def contextMenuEvent(self, event) -> None:  # noqa: N802
        """Only Copy and Select all (no Back/Reload/View source: the page never navigates), plus 「查看提示词」 on a
        reply or draft (the page tells which message was right-clicked)."""
        menu = QMenu(self)
        # our own labels (QtWebEngine ships no Chinese translation for its actions)
        copy = menu.addAction(tr("conv.copy"))
        copy.setEnabled(self.hasSelection())
        copy.triggered.connect(lambda _=False: self._page.triggerAction(QWebEnginePage.WebAction.Copy))
        menu.addAction(tr("conv.select_all")).triggered.connect(
            lambda _=False: self._page.triggerAction(QWebEnginePage.WebAction.SelectAll))
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        pos = event.globalPos()

        def with_item(raw: Any) -> None:
            try:  # objects come back as JSON text (QtWebEngine's own conversion of objects is unreliable)
                item = json.loads(raw) if isinstance(raw, str) else None
            except ValueError:
                item = None
            if isinstance(item, dict) and item.get("role") in ("assistant", "draft", "user") and item.get("id"):
                menu.addSeparator()
                act = menu.addAction(tr("inspect.action"))
                act.triggered.connect(lambda _=False, i=str(item["id"]): self.inspectRequested.emit(i))
                if item.get("role") == "assistant" and not str(item["id"]).startswith("pending-"):
                    edit = menu.addAction(tr("reply.edit.title"))
                    edit.triggered.connect(lambda _=False, i=str(item["id"]): self.editReplyRequested.emit(i))
            if isinstance(item, dict) and item.get("role") in ("assistant", "user", "opening") and item.get("id") \
                    and not str(item["id"]).startswith("pending-"):
                here = menu.addAction(tr("manage.branch.here"))
                here.triggered.connect(lambda _=False, i=str(item["id"]): self.branchFromRequested.emit(i))
            self._message_menu(menu, item)
            menu.popup(pos)

        self.eval_js("JSON.stringify(window.liyuan.contextItem ? window.liyuan.contextItem() : null)", with_item)


    def _message_menu(self, menu: QMenu, item: Any) -> None:
        """The message actions of the hover bar in the context menu (issue 26 §3): 复制这条消息, 编辑 (in place),
        删除 — for the message right-clicked (``item``: ``{"id", "role"}`` from the page, or None)."""
        if not isinstance(item, dict) or not item.get("id") or str(item["id"]).startswith("pending-"):
            return
        i, role = str(item["id"]), item.get("role")
        menu.addSeparator()
        menu.addAction(tr("msg.copy")).triggered.connect(lambda _=False: self.messageActionRequested.emit("copy", i))
        if role in ("user", "assistant"):
            menu.addAction(tr("msg.edit")).triggered.connect(lambda _=False: self.edit_message(i))
        hide = "unhide" if self.item_hidden(i) else "hide"
        menu.addAction(tr(f"msg.{hide}")).triggered.connect(lambda _=False: self.messageActionRequested.emit(hide, i))
        if role in ("user", "assistant"):
            menu.addAction(tr("msg.delete")).triggered.connect(lambda _=False: self.messageActionRequested.emit("delete", i))

    def edit_message(self, entry_id: str) -> None:
        """Open the in-place editor on the message with session entry id ``entry_id`` (a user message or a reply
        shown; nothing happens for another)."""
        self._call("editMessage", str(entry_id))

    def _item(self, entry_id: str) -> Optional[dict[str, Any]]:
        for it in reversed(list(self._items.values())):
            if str(it.get("entry_id", it.get("id"))) == str(entry_id):
                found: dict[str, Any] = it
                return found
        return None

    def item_text(self, entry_id: str) -> Optional[str]:
        """The stored text of the shown message with session entry id ``entry_id`` (its ``raw`` text as handed to
        the page, else its text), or None when it is not shown."""
        it = self._item(entry_id)
        return None if it is None else str(it.get("raw", it.get("text")) or "")

    def item_hidden(self, entry_id: str) -> bool:
        """Whether the shown message ``entry_id`` is marked hidden from the prompt."""
        it = self._item(entry_id)
        return bool(it and it.get("hidden"))


def chat_frame_context(chat: "Chat") -> dict[str, Any]:
    """The keyword arguments of :meth:`ConversationView.set_frame_context` for ``chat`` (the window and ``card
    preview`` alike): the persona and the card's names, and the chat / character / global tables status bars wrote on
    its active branch (``Chat.frame_variables``; empty when none, so another chat's never stay)."""
    tables = chat.frame_variables()
    return {"user": chat.persona, "char": chat.card.name, "chat_vars": tables.get("chat") or {},
            "character_vars": tables.get("character") or {}, "global_vars": tables.get("global") or {},
            "preset_vars": tables.get("preset") or {}}


def frames_trust_action(window: QMainWindow, current_chat: Callable[[], Optional["Chat"]], view: "ConversationView") -> Any:
    """The checkable menu action 「信任这张卡的状态栏（允许联网加载脚本）」 for the card of ``current_chat()`` (a Chat or
    None). Switching it on asks first with a warning (``frames.trust.warn``); the answer is stored with
    ``Chat.set_trusted`` (core.cards.meta) and the view reloads its frames with the new policy
    (:meth:`ConversationView.set_card`). The check mark follows the open chat's card each time the menu opens."""
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QMessageBox

    act = QAction(tr("frames.trust.action"), window)
    act.setObjectName("framesTrustAction")
    act.setCheckable(True)

    def card_dir() -> Path | None:
        chat = current_chat()
        return Path(chat.card.path).parent if chat is not None and chat.card.path else None

    def sync() -> None:
        d = card_dir()
        act.setEnabled(d is not None)
        act.setChecked(bool(d) and card_frames_trusted(d))

    def toggled(on: bool) -> None:
        d = card_dir()
        chat = current_chat()
        if d is None or chat is None:
            act.setChecked(False)
            return
        name = chat.card.name
        if on and QMessageBox.warning(window, tr("app.title"), tr("frames.trust.warn", name=name),
                                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                      QMessageBox.StandardButton.No) != QMessageBox.StandardButton.Yes:
            act.setChecked(False)
            return
        try:
            chat.set_trusted(on)
        except (OSError, ValueError) as e:
            QMessageBox.warning(window, tr("app.title"), show(e))
            sync()
            return
        view.set_card(d)
        window.statusBar().showMessage(tr("frames.trust.on" if on else "frames.trust.off", name=name), 6000)

    act.triggered.connect(toggled)
    act.sync = sync  # type: ignore[attr-defined]
    sync()
    return act
