"""Status-bar frames (TavernHelper-style) in the conversation view: a fenced code block with html/head/body becomes
a sandboxed iframe running our th_shim.js; variables flow Python -> frame (inline at build, push_variables) and
frame -> Python (frameVariablesChanged); the frame has no same-origin access and no network.

Sync tests with qtbot.wait* (the QtWebEngine pattern of ../shared/design/desktop-stack.md). Frames are read back
through the host page's test hooks: ``liyuan.frameReports()`` (what a bar sent with ``__liyuanReport``) and
``liyuan.probeFrame(name, selector)`` / ``liyuan.probeResult(id)`` (a postMessage round trip that returns the
textContent of a selector inside the frame)."""

from __future__ import annotations

import json
import re

import pytest
from helpers import shared_path
from uihelpers import probe_frame as probe
from uihelpers import view_js as js
from uihelpers import view_json as js_json
from uihelpers import wait_frame_report as wait_report
from uihelpers import wait_view as wait_js

FIXTURES = shared_path("fixtures")
LILI = FIXTURES / "statusbars" / "mvu-example-lili-classic.html"


def item(i, text, role="assistant", **kw):
    return {"id": str(i), "role": role, "text": text, "beat": 1, **kw}


BAR = """她笑了笑。

```html
<body>
<div class="bar">好感：<b id="v">?</b></div>
<script>
  var seen = [];
  function show() { document.getElementById('v').textContent = String(getVariables({type: 'message'}).stat_data.好感); }
  show();
  eventOn('mag_variable_update_started', function () { seen.push('started'); });
  eventOn(Mvu.events.VARIABLE_UPDATE_ENDED, function (n, o) {
    seen.push('ended:' + o.stat_data.好感 + '->' + n.stat_data.好感); show();
  });
  eventOn(tavern_events.MESSAGE_UPDATED, function (id) {
    seen.push('updated:' + id);
    __liyuanReport({seen: seen, text: document.getElementById('v').textContent});
  });
  __liyuanReport({ready: getIframeName(), id: getCurrentMessageId(), last: getLastMessageId(),
                  text: document.getElementById('v').textContent});
</script>
</body>
```"""


def test_bar_renders_in_named_frame_with_message_variables(qtbot, view):
    view.set_transcript([item(1, "开场。", role="opening"),
                         item(3, BAR, variables={"stat_data": {"好感": 42}})], False)
    names = wait_js(qtbot, view, "liyuan.frameNames()", lambda v: len(v) == 1)
    assert names == ["TH-message--3--0"]
    ready = wait_report(qtbot, view, names[0], lambda r: "ready" in r)
    assert ready == {"ready": "TH-message--3--0", "id": 3, "last": 3, "text": "42"}
    assert probe(qtbot, view, names[0], "#v") == "42"
    # the text outside the block is still our escaped rendering; the block itself is hidden, not shown as code
    attrs = js_json(qtbot, view, "(function(){var f=document.querySelector('iframe.th-frame');"
                                 "return {sandbox: f.getAttribute('sandbox'), name: f.name,"
                                 " preHidden: f.parentNode.querySelector('pre').hidden,"
                                 " text: document.querySelector('[data-id=\"3\"] .body p').textContent};})()")
    assert attrs == {"sandbox": "allow-scripts", "name": "TH-message--3--0", "preHidden": True, "text": "她笑了笑。"}
    # the frame posts its height; the host sizes the iframe to the content
    h = wait_js(qtbot, view, "liyuan.frameHeight('TH-message--3--0')", lambda v: v > 5)
    assert 5 < h < 200


def test_push_variables_updates_bar_and_fires_events_in_order(qtbot, view):
    view.set_transcript([item(3, BAR, variables={"stat_data": {"好感": 42}}),
                         item(4, BAR.replace("她笑了笑。", "又一条。"), variables={"stat_data": {"好感": 1}})], False)
    wait_report(qtbot, view, "TH-message--3--0", lambda r: "ready" in r)
    wait_report(qtbot, view, "TH-message--4--0", lambda r: "ready" in r)
    view.push_variables("3", {"stat_data": {"好感": 57}})
    rep = wait_report(qtbot, view, "TH-message--3--0", lambda r: "seen" in r)
    # the bar reads getVariables({type: 'message'}) with no message_id: TavernHelper's 'latest', the last message of
    # the chat (card-runtime.md §2.2) — message 4 here, as every bar is built with the whole transcript in place
    # (frames are built once their block is laid out, conversation.js "frame memory"); its own message's update
    # shows in the event it got (42->57)
    assert rep == {"seen": ["started", "ended:42->57", "updated:3"], "text": "1"}
    assert probe(qtbot, view, "TH-message--3--0", "#v") == "1"
    assert js(qtbot, view, "liyuan.frameReports().filter(r => r.name === 'TH-message--3--0')[0].data.last") == 4
    assert probe(qtbot, view, "TH-message--4--0", "#v") == "1"      # other messages untouched
    view.push_variables("*", {"stat_data": {"好感": 8}})
    rep4 = wait_report(qtbot, view, "TH-message--4--0", lambda r: "seen" in r)
    assert rep4["seen"] == ["started", "ended:1->8", "updated:4"]
    assert probe(qtbot, view, "TH-message--3--0", "#v", pred=lambda v: v == "8") == "8"


WRITER = """```html
<body><div id="out"></div><script>
  insertOrAssignVariables({stat_data: {好感: 99, 新: [1, 2]}}, {type: 'message'});
  var after = getVariables({type: 'message'}).stat_data;   // the local cache sees the write at once
  document.getElementById('out').textContent = after.好感 + '/' + after.旧;
  replaceVariables({flag: true}, {type: 'chat'});
</script></body>
```"""


def test_frame_writes_reach_python(qtbot, view):
    got: list = []
    view.frameVariablesChanged.connect(lambda name, data: got.append((name, data)))
    view.set_transcript([item(7, WRITER, variables={"stat_data": {"好感": 10, "旧": "x"}})], False)
    qtbot.waitUntil(lambda: len(got) >= 2, timeout=15000)
    assert got[0] == ("TH-message--7--0", {"type": "message", "message_id": "7",
                                          "variables": {"stat_data": {"好感": 99, "旧": "x", "新": [1, 2]}}})
    assert got[1] == ("TH-message--7--0", {"type": "chat", "message_id": None, "variables": {"flag": True}})
    assert probe(qtbot, view, "TH-message--7--0", "#out") == "99/x"


PROBE = """```html
<body><script>
  var r = {};
  try { r.parentDoc = String(parent.document.title); } catch (e) { r.parentDoc = 'blocked:' + e.name; }
  try { r.cookie = document.cookie; } catch (e) { r.cookie = 'blocked:' + e.name; }
  localStorage.setItem('k', 'v'); r.storage = localStorage.getItem('k');
  r.origin = String(location.origin);
  fetch('http://127.0.0.1:9/').then(function () { r.fetch = 'ok'; __liyuanReport(r); },
                                   function (e) { r.fetch = 'blocked:' + e.name; __liyuanReport(r); });
</script></body>
```"""


def test_frame_is_sandboxed_and_offline(qtbot, view):
    view.set_transcript([item(5, PROBE)], False)
    rep = wait_report(qtbot, view, "TH-message--5--0", lambda r: "fetch" in r)
    assert rep["parentDoc"].startswith("blocked:")
    assert rep["cookie"].startswith("blocked:")
    assert rep["storage"] == "v"                      # in-memory polyfill
    assert rep["origin"] == "null"                    # opaque origin
    assert rep["fetch"] == "blocked:TypeError"        # CSP connect-src 'none'


def test_script_outside_code_block_never_runs(qtbot, view):
    """Outside code blocks card HTML is sanitised (issue 13 §3): the script is dropped, the image keeps no remote
    source and no handler; inside the code block everything stays literal text."""
    text = ("<script>document.title='pwned'</script>\n\n<img src=x onerror=\"document.title='pwned2'\">\n\n"
            "```js\n<div><script>document.title='pwned3'</script></div>\n```")
    view.set_transcript([item(9, text)], False)
    shown = wait_js(qtbot, view, "document.querySelector('[data-id=\"9\"] .body').textContent",
                    lambda v: "script" in v)
    assert "<div><script>document.title='pwned3'</script></div>" in shown
    assert "document.title='pwned'" not in shown
    qtbot.wait(300)
    assert js(qtbot, view, "document.title") == "梨园"
    assert js_json(qtbot, view, "liyuan.frameNames()") == []   # no html/head/body: stays a code block
    assert js(qtbot, view, "document.querySelectorAll('[data-id=\"9\"] img[src], [data-id=\"9\"] [onerror], "
                           "[data-id=\"9\"] script').length") == 0


def _lili_data() -> dict:
    s = LILI.read_text(encoding="utf-8")
    m = re.search(r"var defaultData = (\{.*?\n    \});", s, re.S)
    assert m, "defaultData not found in the fixture"
    return json.loads(m.group(1))


@pytest.mark.skipif(not LILI.is_file(), reason="fixture ../shared/fixtures/statusbars absent")
def test_real_classic_bar_lili(qtbot, view):
    data = _lili_data()
    data["stat_data"]["理"]["好感度"][0] = 73
    data["display_data"]["理"]["好感度"] = "19->73 (测试)"
    view.set_frame_context(user="user", char="理")
    text = "理看着你。\n\n```html\n" + LILI.read_text(encoding="utf-8") + "\n```"
    view.set_transcript([item(0, "开场", role="opening"), item(2, text, variables=data)], False)
    name = "TH-message--2--0"
    assert probe(qtbot, view, name, "#li-affection", pred=lambda v: v == "19->73 (测试)") == "19->73 (测试)"
    assert probe(qtbot, view, name, "#date", pred=lambda v: bool(v)) == "03月15日"
    h = wait_js(qtbot, view, f"liyuan.frameHeight({json.dumps(name)})", lambda v: v > 100)
    assert h > 100
    errors = [entry for entry in js_json(qtbot, view, "liyuan.frameLogs()") if entry["level"] == "error"]
    assert errors == []


class Loopback:
    """A real HTTP server on 127.0.0.1 that counts every TCP connection it accepts (any request, a WebSocket
    upgrade or a TLS hello alike): the frames' attacks must leave it at zero."""

    def __init__(self):
        import http.server
        import threading

        outer = self
        self.connections = 0
        self.paths: list[str] = []

        class H(http.server.BaseHTTPRequestHandler):
            def setup(self):
                outer.connections += 1
                super().setup()

            def do_GET(self):  # noqa: N802
                outer.paths.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"secret")

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def loopback():
    srv = Loopback()
    yield srv
    srv.close()


ATTACKS = """```html
<body><img id="beacon" src="http://127.0.0.1:PORT/beacon.gif"><iframe id="pw" src="file:///etc/passwd"></iframe>
<link rel="stylesheet" href="http://127.0.0.1:PORT/x.css"><script>
  var r = {};
  var N = 12;
  function done() { if (Object.keys(r).length >= N) __liyuanReport(r); }
  var x = new XMLHttpRequest();
  try { x.open('GET', 'http://127.0.0.1:PORT/xhr'); x.onerror = function () { r.xhr = 'blocked'; done(); };
        x.onload = function () { r.xhr = 'ok'; done(); }; x.send(); } catch (e) { r.xhr = 'blocked:' + e.name; }
  try { var ws = new WebSocket('ws://127.0.0.1:PORT/ws'); ws.onerror = function () { r.ws = 'blocked'; done(); };
        ws.onopen = function () { r.ws = 'ok'; done(); }; } catch (e) { r.ws = 'blocked:' + e.name; }
  fetch('http://127.0.0.1:PORT/fetch').then(function () { r.fetchLoop = 'ok'; done(); },
                                           function (e) { r.fetchLoop = 'blocked:' + e.name; done(); });
  fetch('https://example.com/').then(function () { r.fetchOut = 'ok'; done(); },
                                     function (e) { r.fetchOut = 'blocked:' + e.name; done(); });
  fetch('file:///etc/passwd').then(function () { r.file = 'ok'; done(); }, function (e) { r.file = 'blocked:' + e.name; done(); });
  try { top.location = 'http://127.0.0.1:PORT/top'; r.top = 'no error'; } catch (e) { r.top = 'blocked:' + e.name; }
  try { r.popup = window.open('http://127.0.0.1:PORT/popup') === null ? 'blocked:null' : 'opened'; } catch (e) { r.popup = 'blocked:' + e.name; }
  r.bridge = (typeof qt === 'undefined' && typeof QWebChannel === 'undefined') ? 'absent' : 'present';
  try { r.parentBridge = typeof parent.qt + '/' + typeof parent.liyuan; } catch (e) { r.parentBridge = 'blocked:' + e.name; }
  try { r.parentDoc = String(parent.document.body.innerHTML.length); } catch (e) { r.parentDoc = 'blocked:' + e.name; }
  try { r.otherStorage = String(parent.localStorage.length); } catch (e) { r.otherStorage = 'blocked:' + e.name; }
  // the only way out is postMessage: ask the host for things it has no answer to
  parent.postMessage({__th: 'storage-get', card: 'any'}, '*');
  parent.postMessage({__th: 'write', type: 'global', variables: {pwned: 1}, card: 'other'}, '*');
  setTimeout(function () {
    var img = document.getElementById('beacon');
    r.beacon = (img.complete && img.naturalWidth > 0) ? 'loaded' : 'not loaded';
    var f = document.getElementById('pw'), t = 'blocked';
    try { t = f.contentDocument ? ('read:' + f.contentDocument.body.textContent.length) : 'blocked'; } catch (e) { t = 'blocked:' + e.name; }
    r.fileFrame = t;
    done();
  }, 800);
  setTimeout(function () { N = 0; done(); }, 4000);
</script></body>
```"""


def test_frame_attacks_fail_safely(qtbot, view, loopback):
    """Each attempt from inside a status-bar frame fails, the frame learns it failed, the host lists what was
    refused, and a real HTTP server on 127.0.0.1 receives nothing at all."""
    bar = ATTACKS.replace("PORT", str(loopback.port))
    view.set_transcript([item(11, bar)], False)
    rep = wait_report(qtbot, view, "TH-message--11--0", lambda r: len(r) >= 12, timeout=15.0)
    print("attack report:", rep)
    assert rep["xhr"].startswith("blocked")
    assert rep["ws"].startswith("blocked")
    assert rep["fetchLoop"].startswith("blocked") and rep["fetchOut"].startswith("blocked")
    assert rep["file"].startswith("blocked")
    assert rep["fileFrame"].startswith("blocked")      # frame-src 'none'; and no same-origin to read it anyway
    assert rep["popup"].startswith("blocked")          # no allow-popups
    assert rep["top"].startswith("blocked")            # no allow-top-navigation
    assert rep["bridge"] == "absent"                   # the host's QWebChannel is out of reach
    assert rep["parentBridge"].startswith("blocked")   # … also through parent
    assert rep["parentDoc"].startswith("blocked")
    assert rep["beacon"] == "not loaded"               # CSP img-src data:
    assert rep["otherStorage"].startswith("blocked")   # no reaching the host's (or another card's) storage
    # top navigation (no allow-top-navigation) never moved the host page
    assert js(qtbot, view, "location.href").startswith(view.host_url.toString().split("#")[0][:20])
    # the refusals are reported: the frame's CSP violations reach the host page's list and Python's
    blocked = wait_js(qtbot, view, "liyuan.frameBlocked()", lambda v: len(v) >= 4)
    directives = {b["directive"] for b in blocked}
    assert {"connect-src", "img-src"} <= directives, blocked   # (the file: iframe is refused before CSP: local resource)
    assert any("127.0.0.1" in b["url"] for b in blocked)
    qtbot.waitUntil(lambda: any("connect-src" in b for b in view.blocked_requests()), timeout=5000)
    qtbot.wait(300)
    assert loopback.connections == 0 and loopback.paths == []
    # the forged host messages changed nothing
    assert js_json(qtbot, view, "liyuan.frameStorage().local") == {}


def test_interceptor_rules():
    """The page's request interceptor (the second line behind the CSPs): only our files and inline schemes; https
    scripts/styles/fonts only for a trusted card and never to loopback or private addresses."""
    from PySide6.QtCore import QUrl
    from PySide6.QtWebEngineCore import QWebEngineUrlRequestInfo as Info

    from liyuan_desktop.ui.frames.conversation import FrameRequestInterceptor, web_dir

    got = []
    ic = FrameRequestInterceptor([web_dir()], lambda url, why: got.append(url))
    script, xhr, img = Info.ResourceType.ResourceTypeScript, Info.ResourceType.ResourceTypeXhr, Info.ResourceType.ResourceTypeImage
    ok = lambda u, t=script: ic.allowed(QUrl(u), t)[0]
    assert ok(QUrl.fromLocalFile(str(web_dir() / "conversation.js")).toString())
    assert not ok("file:///etc/passwd")
    assert ok("data:text/plain,x") and ok("qrc:///qtwebchannel/qwebchannel.js")
    for u in ("https://cdn.example.com/x.js", "http://cdn.example.com/x.js", "ws://127.0.0.1:1/", "ftp://x/"):
        assert not ok(u), u
    ic.trusted = True
    assert ok("https://cdn.example.com/x.js")
    assert not ok("https://cdn.example.com/api", xhr) and not ok("https://cdn.example.com/a.png", img)
    for u in ("https://127.0.0.1:8443/x.js", "https://localhost/x.js", "https://192.168.1.2/x.js", "https://[::1]/x.js",
              "https://10.0.0.1/x.js", "https://169.254.1.1/x.js", "https://printer.local/x.js", "http://cdn.example.com/x.js"):
        assert not ok(u), u


STORE_WRITER = """```html
<body><script>
  var before = localStorage.getItem('k');
  localStorage.setItem('k', 'MARK');
  localStorage.n = '2';                       // property style, as browsers allow
  sessionStorage.setItem('s', 'sess');
  __liyuanReport({before: before, keys: Object.keys(localStorage).sort(), n: localStorage.getItem('n'), len: localStorage.length});
</script></body>
```"""

STORE_READER = """```html
<body><script>
  var seen = [];
  window.addEventListener('storage', function (e) { seen.push(e.key + '=' + e.newValue); __liyuanReport({seen: seen}); });
  __liyuanReport({k: localStorage.getItem('k'), s: sessionStorage.getItem('s'), len: localStorage.length});
</script></body>
```"""


def test_storage_is_kept_per_card(qtbot, view, tmp_path):
    """localStorage persists in the card's folder, is inlined before the card's script runs, reaches the card's
    other frames, and never crosses to another card; sessionStorage lives for the run of the app."""
    from liyuan_desktop.core.cards.storage import load_card_storage, storage_path

    x, y = tmp_path / "卡X", tmp_path / "卡Y"
    x.mkdir()
    y.mkdir()
    view.set_card(x)
    view.set_transcript([item(1, STORE_READER), item(2, STORE_WRITER)], False)
    w = wait_report(qtbot, view, "TH-message--2--0", lambda r: "keys" in r)
    assert w == {"before": None, "keys": ["k", "n"], "n": "2", "len": 2}
    seen = wait_report(qtbot, view, "TH-message--1--0", lambda r: "seen" in r and len(r["seen"]) >= 2)
    assert seen["seen"][:2] == ["k=MARK", "n=2"]         # the other frame of the card heard of it
    qtbot.waitUntil(lambda: load_card_storage(x) == {"k": "MARK", "n": "2"}, timeout=5000)
    assert json.loads(storage_path(x).read_text("utf-8"))["items"] == {"k": "MARK", "n": "2"}
    # card Y: nothing of X's
    view.set_card(y)
    view.set_transcript([item(3, STORE_READER)], False)
    r = wait_report(qtbot, view, "TH-message--3--0", lambda r: "k" in r)
    assert r == {"k": None, "s": None, "len": 0}
    view.set_transcript([item(4, STORE_WRITER)], False)
    wait_report(qtbot, view, "TH-message--4--0", lambda r: "keys" in r)
    qtbot.waitUntil(lambda: load_card_storage(y) == {"k": "MARK", "n": "2"}, timeout=5000)
    assert load_card_storage(x) == {"k": "MARK", "n": "2"}
    # a storage write carrying another card's key (what a confused or forged relay would send) is refused
    view._bridge.frameStorage(str(x.resolve()), "local", json.dumps({"k": "EVIL"}))
    assert load_card_storage(x) == {"k": "MARK", "n": "2"}
    assert any("another card" in b for b in view.blocked_requests())
    # back to X in a fresh view (after a restart): the stored items are there before the script runs
    view.set_card(x)
    view.set_transcript([item(5, STORE_READER)], False)
    r = wait_report(qtbot, view, "TH-message--5--0", lambda r: "k" in r)
    assert r == {"k": "MARK", "s": "sess", "len": 2}


QUOTA = """```html
<body><script>
  var r = {};
  try { localStorage.setItem('big', 'x'.repeat(1100000)); r.big = 'stored'; } catch (e) { r.big = e.name; }
  localStorage.setItem('small', 'ok');
  r.small = localStorage.getItem('small'); r.hasBig = localStorage.getItem('big');
  __liyuanReport(r);
</script></body>
```"""


def test_storage_quota(qtbot, view, tmp_path):
    from liyuan_desktop.core.cards.storage import load_card_storage

    view.set_card(tmp_path)
    view.set_transcript([item(6, QUOTA)], False)
    r = wait_report(qtbot, view, "TH-message--6--0", lambda r: "big" in r)
    assert r == {"big": "QuotaExceededError", "small": "ok", "hasBig": None}
    logs = wait_js(qtbot, view, "liyuan.frameLogs()", lambda v: any("1 MB" in e["text"] for e in v))
    assert any(e["level"] == "error" and "full" in e["text"] for e in logs)
    qtbot.waitUntil(lambda: load_card_storage(tmp_path) == {"small": "ok"}, timeout=5000)


LOOP = """她停了一下。

```html
<body><b id="v">循环</b><script>__liyuanReport({started: 1}); setTimeout(function () { while (true) {} }, 200);</script></body>
```"""


def test_endless_loop_is_stopped_and_reported(qtbot, view):
    """A bar with while(true){}: the window stays responsive (Python -> JS round trips keep working), the frame is
    replaced by the error box, Python is told, and the card's other bar comes back and keeps working."""
    view.set_frame_watchdog(pingMs=200, hangMs=1200, loadMs=6000, reuseMs=1500)
    failed: list = []
    view.frameFailed.connect(lambda name, why: failed.append((name, why)))
    view.set_transcript([item(1, LOOP), item(2, BAR, variables={"stat_data": {"好感": 5}})], False)
    wait_report(qtbot, view, "TH-message--1--0", lambda r: "started" in r)
    qtbot.waitUntil(lambda: bool(failed), timeout=30000)
    assert failed[0] == ("TH-message--1--0", "hung")
    assert js(qtbot, view, "1 + 1") == 2                                    # the host page answers
    box = js(qtbot, view, "document.querySelector('[data-id=\"1\"] .th-failed').textContent")
    assert box == "状态栏脚本无响应，已停止"
    assert js_json(qtbot, view, "liyuan.frameFailedNames()") == ["TH-message--1--0"]
    assert view.failed_frames() == {"TH-message--1--0": "hung"}
    # the other bar (same renderer while the loop ran) is back and answers
    wait_js(qtbot, view, "liyuan.frameNames()", lambda v: v == ["TH-message--2--0"], timeout=20)
    assert probe(qtbot, view, "TH-message--2--0", "#v", pred=lambda v: v == "5", timeout=20) == "5"
    view.push_variables("2", {"stat_data": {"好感": 6}})
    assert probe(qtbot, view, "TH-message--2--0", "#v", pred=lambda v: v == "6") == "6"
    # re-rendering the message does not start the loop again
    view.update_item(item(1, LOOP))
    qtbot.wait(300)
    assert js(qtbot, view, "document.querySelectorAll('[data-id=\"1\"] .th-failed').length") == 1
    assert "TH-message--1--0" not in js_json(qtbot, view, "liyuan.frameNames()")


REMOTE = """```html
<body><script src="https://cdn.example.invalid/ui.js"></script><div id="v">ok</div><script>
  fetch('https://example.com/').then(function () { __liyuanReport({fetch: 'ok'}); }, function (e) { __liyuanReport({fetch: 'blocked'}); });
</script></body>
```"""


def test_trusted_card_may_load_remote_scripts_and_nothing_more(qtbot, view, tmp_path):
    from liyuan_desktop.core.cards.meta import card_frames_trusted, set_card_frames_trusted

    view.set_card(tmp_path)
    assert not view.trusted and not card_frames_trusted(tmp_path)
    view.set_transcript([item(1, REMOTE)], False)
    assert "需要联网" in probe(qtbot, view, "TH-message--1--0", ".liyuan-net-notice")
    set_card_frames_trusted(tmp_path, True)
    assert card_frames_trusted(tmp_path) and json.loads((tmp_path / "liyuan.json").read_text("utf-8"))["frames_trusted"] is True
    view.set_card(tmp_path)                      # reloads the page with the trusted policy
    assert view.trusted
    qtbot.waitUntil(view.is_ready, timeout=20000)
    view.set_transcript([item(2, REMOTE)], False)
    assert wait_report(qtbot, view, "TH-message--2--0", lambda r: "fetch" in r) == {"fetch": "blocked"}  # no connect
    assert probe(qtbot, view, "TH-message--2--0", "#v") == "ok"
    assert js(qtbot, view, "document.querySelector('iframe').srcdoc.indexOf('liyuan-net-notice')") == -1
    csp = js(qtbot, view, "document.querySelector('meta[http-equiv=\"Content-Security-Policy\"]').content")
    assert "script-src 'self' qrc: 'unsafe-inline' 'unsafe-eval' https:" in csp and "connect-src 'none'" in csp
    set_card_frames_trusted(tmp_path, False)
    view.set_card(tmp_path)
    assert not view.trusted


# ---- a failed frame says so (issue 13 §2) ------------------------------------------------------------------------
def notices(qtbot, view):
    return js_json(qtbot, view, "liyuan.frameNotices()")


def notice_dom(qtbot, view, name):
    return js_json(qtbot, view, f"""(function () {{
        var f = document.getElementById({json.dumps(name)}), box = f.parentNode.querySelector('.th-notice');
        return {{height: Math.round(f.getBoundingClientRect().height), text: box ? box.querySelector('summary').textContent : null,
                 lines: box ? Array.from(box.querySelectorAll('li')).map(li => li.textContent) : []}}; }})()""")


def test_erroring_empty_and_blocked_frames_show_a_notice_in_place(qtbot, view):
    """A bar whose script throws before drawing anything, a bar that draws nothing, a bar whose remote script was
    refused: each shows a one-line notice where it would be (a 0 px frame takes no room: no blank gap) with the errors
    and blocked URLs under 「详情」; a healthy bar shows none."""
    throws = "```html\n<body><script>\nconst B = noSuchGlobal.make();\n</script></body>\n```"
    empty = "```html\n<body><script>\nvar x = 1; console.error('配置缺失：主题');\n</script></body>\n```"
    blocked = ("```html\n<body><div>HP 3</div><script src=\"https://example.com/bar.js\"></script>"
               "<script>__liyuanReport({ok: 1});</script></body>\n```")
    fine = "```html\n<body><b>HP 9</b><script>__liyuanReport({ok: 1});</script></body>\n```"
    view.set_transcript([item(1, throws), item(2, empty), item(3, blocked), item(4, fine)], False)
    got = wait_js(qtbot, view, "liyuan.frameNotices()",
                  lambda n: {"TH-message--1--0", "TH-message--2--0", "TH-message--3--0"} <= set(n)
                  and n["TH-message--3--0"]["blocked"], timeout=15)
    assert set(got) == {"TH-message--1--0", "TH-message--2--0", "TH-message--3--0"}    # not the healthy bar
    one = notice_dom(qtbot, view, "TH-message--1--0")
    assert one["height"] == 0 and "没有显示任何内容" in one["text"] and "出错了（1 条）" in one["text"]
    assert any("noSuchGlobal" in line for line in one["lines"])
    two = notice_dom(qtbot, view, "TH-message--2--0")
    assert two["height"] == 0 and any("配置缺失：主题" in line for line in two["lines"])
    three = notice_dom(qtbot, view, "TH-message--3--0")
    assert three["height"] > 0                                   # it drew something: the notice sits under it
    assert "被拦下了" in three["text"] and "需要联网：https://example.com/bar.js" in three["lines"]
    assert got["TH-message--1--0"]["reason"] == "empty" and got["TH-message--3--0"]["reason"] == "blocked"
    assert notice_dom(qtbot, view, "TH-message--4--0")["text"] is None


def test_notice_goes_when_the_frame_recovers(qtbot, view):
    """A bar that is empty at first and draws once its variables arrive loses its notice."""
    late = ("```html\n<body><div id=\"v\"></div><script>\neventOn(Mvu.events.VARIABLE_UPDATE_ENDED, function (n) {\n"
            "  document.getElementById('v').textContent = 'HP ' + n.stat_data.hp; });\n</script></body>\n```")
    view.set_transcript([item(5, late)], False)
    wait_js(qtbot, view, "liyuan.frameNotices()", lambda n: "TH-message--5--0" in n, timeout=15)
    view.push_variables("5", {"stat_data": {"hp": 4}})
    wait_js(qtbot, view, "liyuan.frameNotices()", lambda n: "TH-message--5--0" not in n, timeout=15)
    after = notice_dom(qtbot, view, "TH-message--5--0")
    assert after["height"] > 0 and after["text"] is None and after["lines"] == []
    assert probe(qtbot, view, "TH-message--5--0", "#v") == "HP 4"


@pytest.mark.parametrize("wrap", ["*{}*", "**{}**", "- {}", "1. *{}*", "> {}", "她点点头。*{}* 然后呢？"])
def test_placeholder_wrapped_in_formatting_still_renders_the_bar(qtbot, view, wrap):
    """The model wrapped <StatusPlaceHolderImpl/> in emphasis or a list item, so the card's regex left the bar's
    ```html block inside that markup: the bar renders in its frame, its HTML source never shows as text, and the
    words around it stay."""
    block = "```html\n<body><b id=\"hp\">HP 7</b><script>__liyuanReport({ok: 1});</script></body>\n```"
    view.set_transcript([item(6, "开头。\n\n" + wrap.format(block) + "\n\n结尾。")], False)
    wait_report(qtbot, view, "TH-message--6--0", lambda r: r.get("ok") == 1)
    assert probe(qtbot, view, "TH-message--6--0", "#hp") == "HP 7"
    shown = js(qtbot, view, "(function(){var b=document.querySelector('[data-id=\"6\"] .body').cloneNode(true);"
                            "b.querySelectorAll('.TH-render').forEach(function(e){e.remove();});return b.textContent;})()")
    assert "<body" not in shown and "```" not in shown and "__liyuanReport" not in shown
    assert "开头。" in shown and "结尾。" in shown
    if "她点点头" in wrap:
        assert "她点点头。" in shown and "然后呢？" in shown


# ---- the StageDog-shaped Vue template bar in the real window (issue 13 §2 acceptance) ----------------------------
async def _frame_ready(win, name, selector, want, timeout=30.0):
    """Wait until ``selector`` in frame ``name`` reads ``want`` (through the page's probe round trip)."""
    import asyncio

    from uihelpers import js as wjs
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    last = None
    while loop.time() < end:
        pid = await wjs(win, f"liyuan.probeFrame({json.dumps(name)}, {json.dumps(selector)})")
        for _ in range(20):
            got = await wjs(win, f"liyuan.probeResult({json.dumps(pid)}) === undefined ? null : "
                                 f"{{v: liyuan.probeResult({json.dumps(pid)})}}")
            if got is not None:
                last = got["v"]
                break
            await asyncio.sleep(0.05)
        if last == want:
            return last
        await asyncio.sleep(0.1)
    logs = await wjs(win, "liyuan.frameLogs()")
    raise AssertionError(f"{selector} in {name}: {last!r}, not {want!r}; frame logs {logs!r}")


async def _click(win, name, selector):
    """A real mouse click (QTest on the view) in the middle of ``selector`` inside frame ``name``."""
    import asyncio

    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest
    from uihelpers import js as wjs
    from uihelpers import wait_for
    await wjs(win, f"(document.getElementById({json.dumps(name)}).scrollIntoView({{block: 'center'}}), 0)")
    await asyncio.sleep(0.2)
    left, top = await wjs(win, f"(function(){{var r=document.getElementById({json.dumps(name)})"
                               f".getBoundingClientRect();return [r.left, r.top];}})()")
    frame = next(f for f in win.view.page().mainFrame().children() if f.name() == name)
    box: list = []
    frame.runJavaScript(f"JSON.stringify((function(){{var r=document.querySelector({json.dumps(selector)})"
                        f".getBoundingClientRect();return [r.left + r.width / 2, r.top + r.height / 2];}})())",
                        0, box.append)
    await wait_for(lambda: bool(box))
    x, y = json.loads(box[0])
    QTest.mouseClick(win.view.focusProxy(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     QPoint(round(left + x), round(top + y)))
    await asyncio.sleep(0.15)


async def test_vue_template_bar_renders_with_names_and_its_buttons_persist(qtbot, tmp_path):
    """The StageDog-shaped Vue 3 + zod + async-wait-until bar (tests/vue_template_card.py) in the main window: it
    renders its [InitVar] data, sees the persona's and card's names, has no console errors and no notice; two clicks
    on + write 信赖 41 → 42 through Chat.write_frame_variables, which survives reopening the chat in a new window."""
    from uihelpers import js as wjs
    from uihelpers import wait_for
    from vue_template_card import write_card

    from liyuan_desktop.core import settings as S
    from liyuan_desktop.core.cards import library
    from liyuan_desktop.core.cards.meta import set_card_scripts_allowed
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm.replay import ReplayModel
    from liyuan_desktop.ui.window.main_window import MainWindow

    card_path = write_card(tmp_path / "card")
    set_card_scripts_allowed(card_path.parent, True)
    card_ref = library.CardRef(name="梧桐", dir=str(card_path.parent))
    chat_dir = tmp_path / "chat"
    Chat.create(chat_dir, card_ref.load(), ReplayModel(actor=[]), persona="阿远")
    chat_ref = library.ChatRef(name="chat", dir=str(chat_dir))
    name = "TH-message--0--0"

    def window():
        w = MainWindow(S.AppSettings())
        qtbot.addWidget(w)
        w.resize(1100, 900)
        w.show()
        return w

    win = window()
    await wait_for(win.view.is_ready)
    assert win.open_chat(card_ref, chat_ref)
    assert win.view.frame_context()["names"] == {"user": "阿远", "char": "梧桐"}
    await _frame_ready(win, name, "#trust", "40")
    assert await _frame_ready(win, name, "#who", "阿远 与 梧桐")
    assert await _frame_ready(win, name, "#hp", "阿远 体力 80")        # the [InitVar] key {{user}} is the persona's
    assert await _frame_ready(win, name, "#where", "梧桐小院")
    await _click(win, name, "#inc")
    await _click(win, name, "#inc")
    await _frame_ready(win, name, "#trust", "42")
    await wait_for(lambda: win.chat.transcript()[0]["variables"]["stat_data"]["梧桐"]["信赖"] == 42, timeout=10)
    logs = await wjs(win, "liyuan.frameLogs()")
    assert [x for x in logs if x["level"] in ("error", "console-error")] == []
    assert await wjs(win, "liyuan.frameNotices()") == {}
    assert await wjs(win, "liyuan.frameBlocked()") == []
    win.close()

    again = window()                                   # as after a restart: the chat read from disk
    await wait_for(again.view.is_ready)
    assert again.open_chat(card_ref, chat_ref)
    await _frame_ready(again, name, "#trust", "42")
    await _click(again, name, "#dec")
    await _frame_ready(again, name, "#trust", "41")
    await wait_for(lambda: again.chat.transcript()[0]["variables"]["stat_data"]["梧桐"]["信赖"] == 41, timeout=10)
    assert Chat.open(chat_dir, card_ref.load(), ReplayModel(actor=[])).transcript()[0]["variables"]["stat_data"]["梧桐"]["信赖"] == 41
    again.close()
