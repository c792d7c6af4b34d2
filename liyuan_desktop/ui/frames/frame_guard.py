"""What keeps a status-bar frame from reaching anything but the host page: no channel out, a memory cap, a limit on
what it may post, its own card's variables only (issue 13 §1).

The frame's Content-Security-Policy (``conversation.js``) and the page's request filter
(``conversation.FrameRequestInterceptor``) see ordinary web requests only. Chromium has channels neither sees:
``<link rel=preconnect>`` (a TCP connection and, with a name, a DNS lookup, made by the browser on a hint — no CSP
directive covers it), WebRTC (ICE host candidates, STUN and TURN over UDP and TCP, connectivity checks to any
address a card names — CSP has no ``webrtc`` directive in Chromium 140; measured: "Unrecognized
Content-Security-Policy directive"), DNS prefetch. They are closed here with what Chromium itself offers, set before
QtWebEngine starts (:func:`install`), not with script stubs a card could get around:

- ``--force-webrtc-ip-handling-policy=disable_non_proxied_udp`` (QtWebEngine reads this switch in its
  WebContentsAdapter, like Chrome's policy of the same name): WebRTC may use no UDP at all — no STUN, no TURN over
  UDP, no UDP host candidates or connectivity checks — and sends TCP only through the proxy.
- ``--proxy-server=http://127.0.0.1:<gate>`` with ``--proxy-bypass-list=<-loopback>`` (Chromium bypasses the proxy
  for loopback unless told not to): every connection the browser would open — requests, preconnects, WebRTC over
  TCP (TURN/TCP, ICE-TCP) — goes to :class:`EgressGate`, our own CONNECT proxy in this process, which refuses all of
  them except https to a public host that the request filter has just let through for a trusted card's script,
  style or font (:meth:`EgressGate.allow`). WebTransport (QUIC) cannot go through an HTTP proxy at all.
- ``--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1``: the browser resolves no name itself (DNS prefetch,
  TURN/ICE host names); with a proxy it never needs to — the gate resolves the names it allows, and refuses one
  that resolves to a loopback/private address (DNS rebinding).
- Page settings (:func:`harden_settings`): DNS prefetch and hyperlink auditing (``<a ping>``) off, WebRTC limited to
  public interfaces, local content may not reach remote URLs.

The app's own traffic (the model's HTTP API) goes through httpx in Python, not through Chromium, so the gate affects
only web content. ``LIYUAN_FRAME_EGRESS=0`` leaves the network flags alone (for debugging; never for users).

Memory (:class:`RendererMemoryGuard`): a thread samples the resident size (``/proc/<pid>/statm``) of every
renderer process of this app except the host page's own (``QWebEnginePage.renderProcessPid``); one past the cap
(default :data:`MEMORY_CAP_MB` MB, ``LIYUAN_FRAME_MEMORY_MB``) is ended at once (SIGKILL) and the view is told, which
stops its frames with a notice (``conversation.js`` ``framesKilled``). Site isolation puts the frames in renderers
of their own (``conversation.ensure_frame_isolation``), so the host page is never the one ended.

Floods (:data:`FLOOD`): first in the frame itself — the frame runtime (``th_shim.js``) passes everything the bar
posts through a token bucket (``rate`` a second, bursts of ``frameBurst``) and drops the excess before it crosses,
so the host page never has to take delivery of a runaway loop's messages; a frame that keeps dropping tells the
host, which stops it. Then in the host page, for what bypasses the runtime (``top.postMessage``): a token bucket
per frame (``conversation.js``, message listener): ``rate`` messages a second with bursts of ``burst``; the excess
is dropped before any work is done, with one logged line per burst; a frame that keeps dropping while the page
falls behind is stopped, and what it had already posted is thrown away with the page's renderer
(:func:`after_flood`; the view reloads from its mirror).

Variables (:func:`variable_scope_key`): the chat and character scopes are those of the card whose chat is shown;
TavernHelper's "global" scope is kept per card (the key of the card's folder) unless the card is trusted, when it
is shared among trusted cards only (:data:`TRUSTED_GLOBAL_KEY`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import signal
import socket
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable, Optional

from ...runtime import add_chromium_flags

log = logging.getLogger(__name__)

MEMORY_CAP_MB = 512
"""Default cap on a card renderer's resident memory, in MiB (``LIYUAN_FRAME_MEMORY_MB`` overrides)."""
MEMORY_SAMPLE_S = 0.5
"""How often the memory guard samples the renderers, in seconds."""
FLOOD = {"rate": 200, "burst": 400, "frameBurst": 100, "stopPerSecond": 2000, "lagMs": 250, "lagCount": 150}
"""Per-frame token bucket for messages a frame posts to the host page: ``rate`` tokens a second, at most ``burst``
saved up; the excess is dropped (one log line per burst). A frame that had more than ``lagCount`` messages
delivered while the host page falls behind (its heartbeat more than ``lagMs`` late), or that drops
``stopPerSecond`` messages within a second, is stopped ("flood"): Chromium delivers each message it posts, dropped
or not, so such a frame is swamping the page. The frame runtime (``th_shim.js``) keeps a bucket of its own in the
frame — ``rate`` a second, ``frameBurst`` saved up (below ``lagCount``: what it lets through never swamps the page)
— and drops the excess before it crosses, so a bar in a runaway loop is stopped without the page taking delivery
of thousands of messages first (issue 29 §9: the view was frozen for seconds; bench/frame_flood.py)."""
TRUSTED_GLOBAL_KEY = "trusted:*"
"""The global-variable scope shared by trusted cards (untrusted cards each have their own)."""
ALLOW_TTL_S = 120.0
"""How long an https host:port the request filter let through stays open at the gate, in seconds."""
HEAD_TIMEOUT_S = 10.0
"""How long the egress gate waits for a connection's request head before closing it, in seconds."""
HEAD_LIMIT = 16384
"""The longest request head the gate reads, in bytes (a longer one is refused)."""
TUNNEL_IDLE_S = 300.0
"""A tunnel with no byte in either direction for this many seconds is closed."""
_BLACKHOLE_DNS = "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"


def variable_scope_key(card_key: str, trusted: bool) -> str:
    """The key under which a card's frames keep TavernHelper's "global" variables: the card's own key (its folder),
    or :data:`TRUSTED_GLOBAL_KEY` for a trusted card (TavernHelper's global scope, shared by the trusted cards only).
    ``card_key`` "" (no card) is a scope of its own."""
    return TRUSTED_GLOBAL_KEY if trusted and card_key else f"card:{card_key}"


# ---- the egress gate ------------------------------------------------------------------------------------------------
def _public_host(host: str) -> bool:
    """False for names and addresses that lead back to this machine or the local network."""
    h = host.strip("[]").lower().rstrip(".")
    if h in ("", "localhost") or h.endswith(".localhost") or h.endswith(".local") or "." not in h and ":" not in h:
        return False
    try:
        ip = ipaddress.ip_address(h)
    except ValueError:
        return True
    return _public_ip(ip)


def is_public_host(host: str) -> bool:
    """True for a host name or address literal that may be a public internet host: False for localhost names,
    ``*.local``, names without a dot, and loopback/private/link-local/unspecified/reserved/multicast addresses
    (the egress gate's rule; also the conversation view's rule for links it opens)."""
    return _public_host(host)


def _public_ip(ip: Any) -> bool:
    return not (ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_unspecified or ip.is_reserved
                or ip.is_multicast)


class EgressGate:
    """An HTTP proxy on 127.0.0.1 that Chromium must use for every connection (:func:`chromium_flags`). It answers
    ``CONNECT host:port`` with a tunnel only when ``(host, port)`` was allowed in the last :data:`ALLOW_TTL_S`
    seconds (:meth:`allow`, called by the request filter for a trusted card's https script/style/font) and the
    name resolves to public addresses only; everything else — plain-http proxy requests, preconnects, WebRTC over
    TCP, any other host — gets ``403`` and the connection is closed before a byte leaves the machine. Refusals are
    logged once per host:port per 10 s and passed to the listeners added with :meth:`on_refuse` (called on the
    gate's thread). One thread serves every connection (an asyncio loop): a connection that sends no request head
    within :data:`HEAD_TIMEOUT_S` is closed, and idle connections cost no thread each (issue 29 §9: 300 idle sockets
    held 300 threads); names are resolved in the loop's default executor, a bounded pool."""

    def __init__(self) -> None:
        self._allowed: dict[tuple[str, int], float] = {}
        self._lock = threading.Lock()
        self._listeners: list[Callable[[str], None]] = []
        self._logged: dict[str, float] = {}
        self.refused: deque[str] = deque(maxlen=500)
        """Recent refusals, ``"host:port"`` (or the request line for non-CONNECT requests), newest last."""
        self.tunnels = 0
        """Tunnels opened so far (tests)."""
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self.port: int = self._sock.getsockname()[1]
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        threading.Thread(target=self._serve, name="liyuan-egress-gate", daemon=True).start()

    def allow(self, host: str, port: int) -> None:
        """Let Chromium open a tunnel to ``host:port`` during the next :data:`ALLOW_TTL_S` seconds (a public host
        only; loopback/private names and addresses are ignored)."""
        h = host.strip("[]").lower().rstrip(".")
        if not _public_host(h):
            return
        with self._lock:
            self._allowed[(h, int(port))] = time.monotonic() + ALLOW_TTL_S

    def revoke_all(self) -> None:
        """Forget every allowed host (the card shown is no longer trusted)."""
        with self._lock:
            self._allowed.clear()

    def on_refuse(self, fn: Callable[[str], None]) -> Callable[[], None]:
        """Call ``fn(entry)`` (on the gate's thread) for every refusal; returns a function that removes it."""
        self._listeners.append(fn)

        def remove() -> None:
            if fn in self._listeners:
                self._listeners.remove(fn)
        return remove

    def _is_allowed(self, host: str, port: int) -> bool:
        now = time.monotonic()
        with self._lock:
            exp = self._allowed.get((host, port))
            if exp is not None and exp < now:
                del self._allowed[(host, port)]
                exp = None
        return exp is not None

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        finally:
            loop.close()

    async def _main(self) -> None:
        self._sock.setblocking(False)
        server = await asyncio.start_server(self._handle, sock=self._sock, limit=HEAD_LIMIT)
        async with server:
            await server.serve_forever()

    def _refuse(self, writer: asyncio.StreamWriter, entry: str) -> None:
        self.refused.append(entry)  # (listed before the answer: whoever sees the 403 finds the refusal listed)
        now = time.monotonic()
        if now - self._logged.get(entry, -1e9) > 10:
            self._logged[entry] = now
            log.info("egress gate: refused %s", entry)
        for fn in list(self._listeners):
            try:
                fn(entry)
            except Exception:  # noqa: BLE001 - a listener never stops the gate
                log.exception("egress gate listener")
        try:
            writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        except (OSError, RuntimeError):
            pass
        writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One connection from Chromium: its request head within :data:`HEAD_TIMEOUT_S` (else closed), then a 403
        or a tunnel. Runs on the gate's event loop: an idle connection costs a coroutine, not a thread."""
        try:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_S)
            except asyncio.IncompleteReadError as e:
                head = e.partial
            except asyncio.LimitOverrunError:
                head = b""
            except (asyncio.TimeoutError, OSError):
                writer.close()
                return
            await self._answer(head, reader, writer)
        except Exception:  # noqa: BLE001 - one bad connection never stops the gate
            log.exception("egress gate connection")
            writer.close()

    async def _answer(self, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line = head.split(b"\r\n", 1)[0].decode("latin-1", "replace")
        parts = line.split()
        if len(parts) < 2 or parts[0].upper() != "CONNECT":
            self._refuse(writer, line[:200] or "empty request")
            return
        target = parts[1]
        host, _, port_s = target.rpartition(":")
        host = host.strip("[]").lower().rstrip(".")
        try:
            port = int(port_s)
        except ValueError:
            self._refuse(writer, target[:200])
            return
        if not self._is_allowed(host, port):
            self._refuse(writer, f"{host}:{port}")
            return
        loop = asyncio.get_running_loop()
        try:  # (the loop's resolver runs in its default executor: a bounded pool)
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError:
            self._refuse(writer, f"{host}:{port} (no address)")
            return
        addrs = [i for i in infos if _public_ip(ipaddress.ip_address(i[4][0].split("%")[0]))]
        if not addrs or len(addrs) != len(infos):
            self._refuse(writer, f"{host}:{port} (private address)")
            return
        try:
            up_r, up_w = await asyncio.wait_for(asyncio.open_connection(*addrs[0][4][:2]), 15)
        except (OSError, asyncio.TimeoutError):
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            writer.close()
            return
        self.tunnels += 1
        try:
            writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            rest = head.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in head else b""
            if rest:
                up_w.write(rest)
            await asyncio.gather(self._pump(reader, up_w), self._pump(up_r, writer))
        finally:
            writer.close()
            up_w.close()

    @staticmethod
    async def _pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        """Copy ``src`` to ``dst`` until either end closes or nothing moves for :data:`TUNNEL_IDLE_S` seconds."""
        try:
            while True:
                data = await asyncio.wait_for(src.read(65536), TUNNEL_IDLE_S)
                if not data:
                    break
                dst.write(data)
                await dst.drain()
        except (OSError, asyncio.TimeoutError):
            pass
        finally:
            dst.close()


_gate: Optional[EgressGate] = None


def gate() -> Optional[EgressGate]:
    """The process's egress gate (None when :func:`install` did not start one)."""
    return _gate


def chromium_flags(gate_port: int) -> list[str]:
    """The Chromium switches that close the channels CSP and the request filter do not see (module doc), for a gate
    listening on ``gate_port``."""
    return ["--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
            f"--proxy-server=http://127.0.0.1:{int(gate_port)}",
            "--proxy-bypass-list=<-loopback>",
            f"--host-resolver-rules={_BLACKHOLE_DNS}"]


def install() -> bool:
    """Start the egress gate (once per process) and add :func:`chromium_flags` to ``QTWEBENGINE_CHROMIUM_FLAGS``.
    Effective only before QtWebEngine starts (the first web view); ``conversation.py`` calls it when imported.
    ``LIYUAN_FRAME_EGRESS=0`` leaves everything alone. Returns whether the flags are set."""
    global _gate
    if os.environ.get("LIYUAN_FRAME_EGRESS", "1") == "0":
        return False
    if _gate is None:
        _gate = EgressGate()
        add_chromium_flags(chromium_flags(_gate.port))
    return True


def harden_settings(settings: Any) -> None:
    """Switch off, on a page's QWebEngineSettings, what a frame could use to reach out besides requests: DNS
    prefetch, hyperlink auditing (``<a ping>``), WebRTC on non-public interfaces, remote URLs from local content,
    plug-ins, pop-ups."""
    from PySide6.QtWebEngineCore import QWebEngineSettings

    attr = QWebEngineSettings.WebAttribute
    for name, on in (("DnsPrefetchEnabled", False), ("HyperlinkAuditingEnabled", False),
                     ("WebRTCPublicInterfacesOnly", True), ("LocalContentCanAccessRemoteUrls", False),
                     ("PluginsEnabled", False), ("JavascriptCanOpenWindows", False),
                     ("ScreenCaptureEnabled", False), ("PdfViewerEnabled", False)):
        a = getattr(attr, name, None)
        if a is not None:
            settings.setAttribute(a, on)


# ---- memory ---------------------------------------------------------------------------------------------------------
def memory_cap_mb() -> int:
    """The cap in MiB: ``LIYUAN_FRAME_MEMORY_MB`` when set to a positive number, else :data:`MEMORY_CAP_MB`."""
    try:
        v = int(os.environ.get("LIYUAN_FRAME_MEMORY_MB", "0"))
    except ValueError:
        v = 0
    return v if v > 0 else MEMORY_CAP_MB


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                out += [int(x) for x in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
            except OSError:
                pass
    except OSError:
        pass
    return out


def process_tree(root: int) -> list[int]:
    """``root`` and every process below it (Linux ``/proc``; just ``[root]`` where it is missing): the app's
    QtWebEngine processes for the memory guard, the start-up benchmark and the footprint test."""
    out, todo, seen = [], [root], set()
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.add(pid)
            out.append(pid)
            todo += _children(pid)
    return out


def renderer_pids(root: Optional[int] = None) -> list[int]:
    """Process ids of this app's Chromium renderers (Linux: descendants of ``root``, default this process, whose
    command line says ``--type=renderer``, or a zygote's forked children, which keep the zygote's command line —
    the zygote processes themselves are left out). Empty where /proc is missing."""
    root = os.getpid() if root is None else root
    out: list[int] = []
    todo = _children(root)
    seen: set[int] = set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        kids = _children(pid)
        todo += kids
        if b"--type=renderer" in cmd:
            out.append(pid)
        elif b"--type=zygote" in cmd:
            parent_is_zygote = False
            try:
                ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
                parent_is_zygote = b"--type=zygote" in Path(f"/proc/{ppid}/cmdline").read_bytes()
            except (OSError, ValueError, IndexError):
                pass
            if parent_is_zygote and not kids:
                out.append(pid)  # a renderer forked by the zygote
    return out


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MiB (0 when it is gone)."""
    try:
        pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


class RendererMemoryGuard:
    """Samples, every :data:`MEMORY_SAMPLE_S` s on a thread of its own, the resident memory of the app's renderer
    processes except those ``exempt()`` returns (the host pages' own renderers); one past ``cap_mb`` is ended with
    SIGKILL at once and ``on_kill(pid, rss_mb)`` is called (on the guard's thread: marshal to the UI thread).
    ``peak`` holds the largest size seen per pid (tests, figures)."""

    def __init__(self, exempt: Callable[[], set[int]], on_kill: Callable[[int, float], None],
                 cap_mb: Optional[int] = None, interval_s: float = MEMORY_SAMPLE_S) -> None:
        self.cap_mb = cap_mb or memory_cap_mb()
        self.interval_s = interval_s
        self.peak: dict[int, float] = {}
        self.killed: list[tuple[int, float]] = []
        self._exempt = exempt
        self._on_kill = on_kill
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def start(self) -> None:
        """Start sampling (no-op where /proc is missing)."""
        if self._thread is not None or not os.path.isdir("/proc/self"):
            return
        self._thread = threading.Thread(target=self._run, name="liyuan-frame-memory", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop sampling."""
        self._stop.set()

    def check(self) -> list[tuple[int, float]]:
        """One sample: end the renderers over the cap; returns ``[(pid, rss_mb)]`` of those ended."""
        try:
            exempt = set(self._exempt())
        except Exception:  # noqa: BLE001 - the view may be going away
            return []
        ended = []
        for pid in renderer_pids():
            if pid in exempt:
                continue
            mb = rss_mb(pid)
            self.peak[pid] = max(self.peak.get(pid, 0.0), mb)
            if mb > self.cap_mb:
                try:
                    os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))
                except OSError:
                    continue
                log.warning("status-bar renderer %s used %.0f MB (cap %d MB): ended", pid, mb, self.cap_mb)
                self.killed.append((pid, mb))
                ended.append((pid, mb))
        for pid, mb in ended:
            try:
                self._on_kill(pid, mb)
            except Exception:  # noqa: BLE001
                log.exception("memory guard callback")
        return ended

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.check()


# ---- the views' side ------------------------------------------------------------------------------------------------
_hub: Any = None
_memory_guard: Optional[RendererMemoryGuard] = None
_host_pids: dict[int, int] = {}  # id(view) -> its host page's renderer pid (kept on the UI thread)
_views: dict[int, Any] = {}


def _make_hub() -> Any:
    from PySide6.QtCore import QObject, Signal

    class Hub(QObject):
        """Carries the gate's refusals and the memory guard's kills from their threads to the UI thread."""

        refused = Signal(str)
        killed = Signal(int, float)

    hub = Hub()
    hub.refused.connect(_on_refused)
    hub.killed.connect(_on_killed)
    return hub


def _on_refused(entry: str) -> None:
    for view in list(_views.values()):
        try:
            view.note_blocked(f"connection {entry}", "egress gate")
        except RuntimeError:  # the view was deleted
            pass


def _on_killed(pid: int, mb: float) -> None:
    for view in list(_views.values()):
        try:
            view.eval_js(f"window.liyuan.framesKilled && window.liyuan.framesKilled('memory', {int(mb)})")
        except RuntimeError:
            pass


def _emit_refused(entry: str) -> None:
    try:
        _hub.refused.emit(entry)
    except RuntimeError:  # the app is closing (the hub went before the gate's thread)
        pass


def _emit_killed(pid: int, mb: float) -> None:
    try:
        _hub.killed.emit(pid, mb)
    except RuntimeError:
        pass


def memory_guard() -> Optional[RendererMemoryGuard]:
    """The process's renderer memory guard (None before the first view)."""
    return _memory_guard


def watch_view(view: Any) -> None:
    """Connect a ConversationView to the gate (its refusals are listed in the view's ``blocked_requests``) and to
    the memory guard (a frame renderer ended for its size stops the view's frames that lived in it, with the notice
    「状态栏占用内存过多，已停止」; the view's own host renderer is never ended). Starts the guard with the first
    view. Call on the UI thread."""
    global _hub, _memory_guard
    if _hub is None:
        _hub = _make_hub()
        if _gate is not None:
            _gate.on_refuse(_emit_refused)
    key = id(view)
    _views[key] = view
    page = view.page()

    def pid_changed(pid: int, key: int = key) -> None:
        _host_pids[key] = int(pid)
    page.renderProcessPidChanged.connect(pid_changed)
    pid_changed(page.renderProcessPid())

    def gone(_obj: Any = None, key: int = key) -> None:
        _views.pop(key, None)
        _host_pids.pop(key, None)
    view.destroyed.connect(gone)
    if _memory_guard is None:
        _memory_guard = RendererMemoryGuard(lambda: set(_host_pids.values()), _emit_killed)
        _memory_guard.start()


FLOOD_BACKLOG_MS = 400
"""After a frame was stopped for flooding: if the host page does not answer a trivial script within this many ms, it
is still taking delivery of what the frame posted before it was stopped (Chromium delivers every queued message,
about a millisecond each here), and its renderer is ended so that the view reloads at once instead."""


def after_flood(view: Any, swamped: bool = False) -> None:
    """A frame of ``view`` was stopped for flooding (``conversation.js`` token bucket). Messages it posted before
    are still queued in the host page's renderer, each costing a delivery even though the page drops it; when the
    page said it was swamped when it stopped the frame (``swamped``: behind by more than ``FLOOD["lagMs"]``), or
    does not answer within :data:`FLOOD_BACKLOG_MS`, its renderer is ended (SIGKILL), which throws the backlog away
    — the view reloads from its mirror with the flooding frame still stopped (``ConversationView``'s render-process
    handling replays the stopped frames by name). Call on the UI thread."""
    from PySide6.QtCore import QTimer

    answered: list = []
    if not swamped:
        view.eval_js("1", answered.append)

    def check() -> None:
        if answered:
            return
        try:
            pid = view.page().renderProcessPid()
        except RuntimeError:
            return
        if pid > 0:
            log.warning("conversation view: the page is still swamped by a stopped frame's messages; ending its renderer")
            try:
                os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))
            except OSError as e:
                log.warning("conversation view: could not end the renderer: %s", e)
    if swamped:
        check()
    else:
        QTimer.singleShot(FLOOD_BACKLOG_MS, view, check)  # (dropped if the view is deleted first)
