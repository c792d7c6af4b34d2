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
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication

from liyuan_desktop.ui.conversation import ConversationView

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"
LILI = FIXTURES / "statusbars" / "mvu-example-lili-classic.html"


def js(qtbot, view, script, timeout=10000):
    box: list = []
    view.eval_js(script, box.append)
    qtbot.waitUntil(lambda: bool(box), timeout=timeout)
    return box[0]


def js_json(qtbot, view, expr):
    return json.loads(js(qtbot, view, f"JSON.stringify({expr})"))


def wait_js(qtbot, view, expr, pred, timeout=10.0):
    """Evaluate ``expr`` (through JSON) until ``pred(value)``; return the value."""
    end = time.monotonic() + timeout
    while True:
        value = js_json(qtbot, view, expr)
        if pred(value):
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out; last value of {expr!r}: {value!r}")
        qtbot.wait(30)


def probe(qtbot, view, name, selector, pred=lambda v: v is not None, timeout=10.0):
    """The textContent of ``selector`` inside frame ``name`` (a host <-> frame postMessage round trip)."""
    end = time.monotonic() + timeout
    while True:
        pid = js(qtbot, view, f"liyuan.probeFrame({json.dumps(name)}, {json.dumps(selector)})")
        try:  # a probe sent before the frame's shim listens is lost: ask again
            value = wait_js(qtbot, view, f"liyuan.probeResult({json.dumps(pid)}) === undefined ? null : "
                                         f"{{v: liyuan.probeResult({json.dumps(pid)})}}", lambda v: v is not None,
                            timeout=1.0)["v"]
        except AssertionError:
            value = None
        if value is not None and pred(value):
            return value
        if time.monotonic() > end:
            logs = js_json(qtbot, view, "liyuan.frameLogs()")
            raise AssertionError(f"timed out; last {selector!r} in {name}: {value!r}; frame logs {logs!r}")
        qtbot.wait(50)


def reports(qtbot, view, name=None):
    out = js_json(qtbot, view, "liyuan.frameReports()")
    return [r["data"] for r in out if name is None or r["name"] == name]


def wait_report(qtbot, view, name, pred, timeout=10.0):
    end = time.monotonic() + timeout
    while True:
        hits = [r for r in reports(qtbot, view, name) if pred(r)]
        if hits:
            return hits[-1]
        if time.monotonic() > end:
            raise AssertionError(f"no matching report from {name}; got {reports(qtbot, view, name)!r}")
        qtbot.wait(30)


def close(view):
    view.close()
    view.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture
def view(qtbot):
    v = ConversationView()
    v.resize(800, 600)
    v.show()
    try:
        qtbot.waitUntil(lambda: v.is_ready(), timeout=20000)
        yield v
    finally:
        close(v)


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
    assert rep == {"seen": ["started", "ended:42->57", "updated:3"], "text": "57"}
    assert probe(qtbot, view, "TH-message--3--0", "#v") == "57"
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


def test_script_outside_code_block_is_text(qtbot, view):
    text = ("<script>document.title='pwned'</script>\n\n<img src=x onerror=\"document.title='pwned2'\">\n\n"
            "```js\n<div><script>document.title='pwned3'</script></div>\n```")
    view.set_transcript([item(9, text)], False)
    shown = wait_js(qtbot, view, "document.querySelector('[data-id=\"9\"] .body').textContent",
                    lambda v: "script" in v)
    assert "<script>document.title='pwned'</script>" in shown
    qtbot.wait(300)
    assert js(qtbot, view, "document.title") == "梨园"
    assert js_json(qtbot, view, "liyuan.frameNames()") == []   # no html/head/body: stays a code block
    assert js(qtbot, view, "document.querySelectorAll('[data-id=\"9\"] img, [data-id=\"9\"] script').length") == 0


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


ATTACKS = """```html
<body><img id="beacon" src="http://127.0.0.1:9/beacon.gif"><script>
  var r = {};
  function done() { if (Object.keys(r).length >= 8) __liyuanReport(r); }
  var x = new XMLHttpRequest();
  try { x.open('GET', 'http://example.invalid/'); x.onerror = function () { r.xhr = 'blocked'; done(); };
        x.onload = function () { r.xhr = 'ok'; done(); }; x.send(); } catch (e) { r.xhr = 'blocked:' + e.name; }
  try { var ws = new WebSocket('ws://127.0.0.1:9/'); ws.onerror = function () { r.ws = 'blocked'; done(); };
        ws.onopen = function () { r.ws = 'ok'; done(); }; } catch (e) { r.ws = 'blocked:' + e.name; }
  fetch('file:///etc/passwd').then(function () { r.file = 'ok'; done(); }, function (e) { r.file = 'blocked:' + e.name; done(); });
  try { top.location = 'http://example.invalid/'; r.top = 'no error'; } catch (e) { r.top = 'blocked:' + e.name; }
  try { r.popup = window.open('http://example.invalid/') === null ? 'blocked:null' : 'opened'; } catch (e) { r.popup = 'blocked:' + e.name; }
  r.bridge = (typeof qt === 'undefined' && typeof QWebChannel === 'undefined') ? 'absent' : 'present';
  var img = document.getElementById('beacon');
  r.beacon = (img.complete && img.naturalWidth > 0) ? 'loaded' : 'not loaded';
  try { r.otherStorage = String(parent.localStorage.length); } catch (e) { r.otherStorage = 'blocked:' + e.name; }
  setTimeout(done, 1500);
</script></body>
```"""


def test_frame_attacks_fail_safely(qtbot, view):
    """Each attempt from inside a status-bar frame fails and the frame learns it failed; nothing leaves the machine
    (the network here is closed anyway — the point is that the frame's policy refuses before trying)."""
    view.set_transcript([item(11, ATTACKS)], False)
    rep = wait_report(qtbot, view, "TH-message--11--0", lambda r: len(r) >= 8, timeout=15.0)
    print("attack report:", rep)
    assert rep["xhr"].startswith("blocked")
    assert rep["ws"].startswith("blocked")
    assert rep["file"].startswith("blocked")
    assert rep["popup"].startswith("blocked")          # no allow-popups
    assert rep["top"].startswith("blocked")            # no allow-top-navigation
    assert rep["bridge"] == "absent"                   # the host's QWebChannel is out of reach
    assert rep["beacon"] == "not loaded"               # CSP img-src data:
    assert rep["otherStorage"].startswith("blocked")   # no reaching the host's (or another card's) storage
    # top navigation (no allow-top-navigation) never moved the host page
    assert js(qtbot, view, "location.href").startswith(view.host_url.toString().split("#")[0][:20])
