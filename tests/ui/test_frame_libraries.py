"""Libraries in status-bar frames: the browser builds TavernHelper injects (jQuery, lodash, Vue 3, toastr, showdown;
``liyuan_desktop/resources/web/vendor/lib``, rebuilt by ``scripts/vendor_libs.py``) are inlined into a frame only when
the card's HTML references them; CDN ``<script src>`` tags for them work offline (rewritten to the inlined copy);
any other remote script leaves a visible "需要联网：URL" notice in the frame.

Sync tests with qtbot (the pattern of test_statusbar_frames.py; its small helpers are repeated here)."""

from __future__ import annotations

import json
import time

import pytest
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication

from liyuan_desktop.ui.conversation import ConversationView, web_dir


def js(qtbot, view, script, timeout=10000):
    box: list = []
    view.eval_js(script, box.append)
    qtbot.waitUntil(lambda: bool(box), timeout=timeout)
    return box[0]


def js_json(qtbot, view, expr):
    return json.loads(js(qtbot, view, f"JSON.stringify({expr})"))


def wait_js(qtbot, view, expr, pred, timeout=10.0):
    end = time.monotonic() + timeout
    while True:
        value = js_json(qtbot, view, expr)
        if pred(value):
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out; last value of {expr!r}: {value!r}")
        qtbot.wait(30)


def probe(qtbot, view, name, selector, pred=lambda v: v is not None, timeout=10.0):
    end = time.monotonic() + timeout
    while True:
        pid = js(qtbot, view, f"liyuan.probeFrame({json.dumps(name)}, {json.dumps(selector)})")
        try:
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
            logs = js_json(qtbot, view, "liyuan.frameLogs()")
            raise AssertionError(f"no matching report from {name}; got {reports(qtbot, view, name)!r}; logs {logs!r}")
        qtbot.wait(30)


def frame_info(qtbot, view, name):
    return js_json(qtbot, view, f"(function(){{var f=document.getElementById({json.dumps(name)});"
                                f"return {{libs: f.dataset.libs, size: f.srcdoc.length}};}})()")


@pytest.fixture
def view(qtbot):
    v = ConversationView()
    v.resize(800, 600)
    v.show()
    try:
        qtbot.waitUntil(lambda: v.is_ready(), timeout=20000)
        yield v
    finally:
        v.close()
        v.deleteLater()
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def item(i, text, role="assistant", **kw):
    return {"id": str(i), "role": role, "text": text, "beat": 1, **kw}


def bar(html):
    return "状态栏：\n\n```html\n<body>\n" + html + "\n</body>\n```"


NAME = "TH-message--3--0"


def test_vendored_bundles_exist():
    lib = web_dir() / "vendor" / "lib"
    for f in ("jquery.min.js", "lodash.min.js", "vue.global.prod.js", "toastr.min.js", "toastr.min.css",
              "showdown.min.js", "frame_libs.js"):
        assert (lib / f).stat().st_size > 1000, f
    assert "window.__liyuanFrameLibs" in (lib / "frame_libs.js").read_text(encoding="utf-8")[:200]


def test_jquery_and_lodash(qtbot, view):
    view.set_transcript([item(3, bar('<b id="x">?</b>\n<script>\n$(\'#x\').text(_.sum([1, 2]));\n'
                                     '__liyuanReport({x: $(\'#x\').text(), jq: $.fn.jquery, vue: typeof window["V" + "ue"]});\n'
                                     '</script>'))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "x" in r)
    assert rep["x"] == "3"
    assert rep["jq"].startswith("3.")
    assert rep["vue"] == "undefined"          # not referenced, not injected
    assert frame_info(qtbot, view, NAME)["libs"].split() == ["jquery", "lodash"]
    assert probe(qtbot, view, NAME, "#x") == "3"


def test_vue3_app_mounts(qtbot, view):
    # a render function: Vue's runtime template compiler needs 'unsafe-eval', which the host page policy (inherited
    # by srcdoc frames) does not allow
    html = ('<div id="app"></div>\n<script>\n'
            'const { createApp, h, nextTick } = Vue;\n'
            'createApp({ data() { return { label: "好感", count: 21 }; },\n'
            '  render() { return h("span", {class: "n"}, this.label + ": " + this.count * 2); },\n'
            '  mounted() { nextTick(() => __liyuanReport({text: document.querySelector("#app .n").textContent,'
            ' version: Vue.version})); } }).mount("#app");\n</script>')
    view.set_transcript([item(3, bar(html))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "text" in r)
    assert rep["text"] == "好感: 42"
    assert rep["version"].startswith("3.")
    assert frame_info(qtbot, view, NAME)["libs"] == "vue"
    assert probe(qtbot, view, NAME, "#app") == "好感: 42"


def test_cdn_script_tag_is_rewritten_offline(qtbot, view):
    html = ('<script src="https://cdn.jsdelivr.net/npm/jquery/dist/jquery.min.js"></script>\n'
            '<script src="https://testingcf.jsdelivr.net/npm/showdown@2/dist/showdown.min.js"></script>\n'
            '<p id="p">?</p>\n<script>\nwindow.jQuery("#p").html(new window["show" + "down"].Converter()'
            '.makeHtml("**ok**"));\n__liyuanReport({html: jQuery("#p").html()});\n</script>')
    view.set_transcript([item(3, bar(html))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "html" in r)
    assert rep["html"] == "<p><strong>ok</strong></p>"
    info = frame_info(qtbot, view, NAME)
    assert set(info["libs"].split()) == {"jquery", "showdown"}
    doc = js(qtbot, view, f"document.getElementById({json.dumps(NAME)}).srcdoc").split("</head><body>")[1]
    assert "cdn.jsdelivr.net" not in doc and "testingcf.jsdelivr.net" not in doc
    # no notice: nothing needs the network
    assert probe(qtbot, view, NAME, "body", pred=lambda v: "ok" in v).count("需要联网") == 0


def test_other_remote_script_shows_notice(qtbot, view):
    html = ('<div id="ui"></div>\n<script src="https://example.com/ui.js"></script>\n'
            '<script type="module">import x from "https://cdn.jsdelivr.net/npm/pinia/+esm";</script>\n'
            '<script>__liyuanReport({ready: 1});</script>')
    view.set_transcript([item(3, bar(html))], False)
    wait_report(qtbot, view, NAME, lambda r: "ready" in r)
    text = probe(qtbot, view, NAME, ".liyuan-net-notice")
    assert "需要联网：https://example.com/ui.js" in text
    assert "需要联网：https://cdn.jsdelivr.net/npm/pinia/+esm" in text
    assert frame_info(qtbot, view, NAME)["libs"] == ""


def test_plain_bar_gets_no_library(qtbot, view):
    view.set_transcript([item(3, bar('<b id="v">7</b>\n<script>var w = window; __liyuanReport({t: '
                                     'typeof w["jQ" + "uery"] + typeof w["_"] + typeof w["V" + "ue"], v: document.getElementById("v").textContent});</script>'))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "t" in r)
    assert rep == {"t": "undefinedundefinedundefined", "v": "7"}
    info = frame_info(qtbot, view, NAME)
    assert info["libs"] == ""
    assert info["size"] < 80_000       # the shim and the bar, no 80 KB jQuery


def test_toastr_replaces_stub(qtbot, view):
    view.set_transcript([item(3, bar('<script>toastr.success("存档完成");\n'
                                     '__liyuanReport({n: document.querySelectorAll("#toast-container .toast").length,'
                                     ' jq: typeof jQuery});</script>'))], False)
    rep = wait_report(qtbot, view, NAME, lambda r: "n" in r)
    assert rep == {"n": 1, "jq": "function"}
    assert set(frame_info(qtbot, view, NAME)["libs"].split()) == {"toastr", "jquery"}


def test_cdn_url_forms(qtbot, view):
    html = ('<script src="https://unpkg.com/vue@3.4.0/dist/vue.global.js"></script>\n'
            '<script src="//cdnjs.cloudflare.com/ajax/libs/lodash.js/4.17.21/lodash.min.js"></script>\n'
            "<script src='https://code.jquery.com/jquery-3.7.1.min.js'></script>\n"
            '<script src="https://cdn.jsdelivr.net/npm/vue@2.7.16/dist/vue.min.js"></script>\n'
            '<link rel="stylesheet" href="https://testingcf.jsdelivr.net/npm/toastr@2/build/toastr.min.css">\n'
            '<script>__liyuanReport({ready: 1});</script>')
    view.set_transcript([item(3, bar(html))], False)
    wait_report(qtbot, view, NAME, lambda r: "ready" in r)
    assert set(frame_info(qtbot, view, NAME)["libs"].split()) == {"vue", "lodash", "jquery", "toastr"}
    text = probe(qtbot, view, NAME, ".liyuan-net-notice")
    assert text == "需要联网：https://cdn.jsdelivr.net/npm/vue@2.7.16/dist/vue.min.js"   # Vue 2 is not ours
