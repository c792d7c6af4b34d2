"""The conversation view (liyuan_desktop/ui/frames/conversation.py + resources/web/conversation.*): rendering, escaping,
lazy loading, revised replies, the pending bubble, the welcome page and refused navigation.

These are plain (sync) tests driven with qtbot.wait*, the QtWebEngine pattern verified in
../shared/design/desktop-stack.md: nothing here needs asyncio, and running no qasync loop keeps these tests clear
of QCoreApplication.aboutToQuit (see the note in the report about tests/ui/conftest.py)."""

from __future__ import annotations

import json
import time

import pytest
from PySide6.QtWidgets import QApplication
from uihelpers import close_view
from uihelpers import view_js as js
from uihelpers import view_json as js_json

from liyuan_desktop.ui.frames.conversation import ConversationView


def js_until(qtbot, view: ConversationView, script: str, pred, timeout: float = 5.0):
    """Evaluate ``script`` every 20 ms until ``pred(result)``; return that result."""
    end = time.monotonic() + timeout
    while True:
        value = js(qtbot, view, script)
        if pred(value):
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out; last value of {script!r}: {value!r}")
        qtbot.wait(20)


@pytest.fixture(autouse=True, scope="module")
def _detach_webengine_about_to_quit():
    """After this module, drop QtWebEngine's QCoreApplication.aboutToQuit handler. The qasync loop of async UI tests
    calls app.exit() at the end of every run_until_complete, which emits aboutToQuit each time; once a web view has
    existed in the process, the second emission segfaults inside libQt6WebEngineCore. The proper fix belongs in
    tests/ui/conftest.py (run qasync on a nested QEventLoop); this keeps later async tests alive until then."""
    yield
    app = QApplication.instance()
    if app is not None:
        app.aboutToQuit.disconnect()


def item(i, role, text, beat=1, **kw):
    return {"id": str(i), "role": role, "text": text, "beat": beat, **kw}


OPENING = ("【开场 · 青梧】\n*雨下到第三天，青石板路上的水洼连成了片。*\n\n"
           "「这样的天气还赶路，多半是有不得不赶的缘由。」*她的声音不高。*「茶是热的。」")


def test_set_transcript_renders_items(qtbot, view):
    view.set_user_label("旅人")
    view.set_transcript([
        item("o", "opening", OPENING, beat=0),
        item("u1", "user", "住三天。", beat=1),
        item("a1", "assistant", "她正往账本上记什么。", beat=1),
        item("u2", "user", "再问一句。", beat=2),
        item("d2", "draft", "半句话", beat=2, outcome="unsealed", error=None),
    ], has_older=False)
    got = js_json(qtbot, view, """Array.from(document.querySelectorAll('#log > article')).map(function (e) {
        return [e.dataset.id, e.dataset.role, e.querySelector('.body').textContent]; })""")
    assert [g[:2] for g in got] == [["o", "opening"], ["u1", "user"], ["a1", "assistant"], ["u2", "user"],
                                    ["d2", "draft"]]
    assert got[2][2] == "她正往账本上记什么。"
    title = js(qtbot, view, "document.querySelector('.role-opening .opening-title').textContent")
    assert title == "开场 · 青梧"
    opening_text = js(qtbot, view, "document.querySelector('.role-opening .body').textContent")
    assert "【" not in opening_text and "「这样的天气还赶路，多半是有不得不赶的缘由。」" in opening_text
    labels = js_json(qtbot, view, "Array.from(document.querySelectorAll('.role-user .who')).map(e => e.textContent)")
    assert labels == ["旅人第 1 拍", "旅人第 2 拍"]
    assert js(qtbot, view, "document.querySelector('[data-id=d2] .badge').textContent") == "未收笔"

    # every outcome of an unfinished beat has its own badge
    outcomes = [("stopped", None, "已停止"), ("error", "HTTP 429 <b>busy</b>", "调用出错: HTTP 429 <b>busy</b>"),
                ("out_of_rounds", None, "用满 20 次调用"), ("unsealed", None, "未收笔")]
    view.set_transcript([item(f"d{k}", "draft", "稿", outcome=o, error=e) for k, (o, e, _) in enumerate(outcomes)],
                        has_older=False)
    badges = js_json(qtbot, view, "Array.from(document.querySelectorAll('.role-draft .badge')).map(e => e.textContent)")
    assert badges == [b for _, _, b in outcomes]
    assert js(qtbot, view, "document.querySelectorAll('.role-draft .badge b').length") == 0


def test_roleplay_and_markdown_formatting(qtbot, view):
    text = ("*她抬起头来*，「客官。」**记住**这句。\n第二行\n\n第二段 “引号” 照旧\n\n"
            "# 标题\n> 引用一句\n\n- 甲\n- 乙\n\n1. 一\n2. 二\n\n用 `a*b*c` 试试\n\n```python\nx = '*不是强调*'\n```")
    view.set_transcript([item("a", "assistant", text)], has_older=False)
    body = "document.querySelector('[data-id=a] .body')"
    assert js(qtbot, view, f"{body}.querySelector('em').textContent") == "她抬起头来"
    assert js(qtbot, view, f"{body}.querySelector('strong').textContent") == "记住"
    paras = js_json(qtbot, view, f"Array.from({body}.querySelectorAll(':scope > p')).map(p => p.innerHTML)")
    assert paras[0].endswith("「客官。」<strong>记住</strong>这句。<br>第二行")
    assert paras[1] == "第二段 “引号” 照旧"
    assert js(qtbot, view, f"{body}.querySelector('h1').textContent") == "标题"
    assert js(qtbot, view, f"{body}.querySelector('blockquote').textContent") == "引用一句"
    assert js_json(qtbot, view, f"Array.from({body}.querySelectorAll('ul li')).map(e => e.textContent)") == ["甲", "乙"]
    assert js_json(qtbot, view, f"Array.from({body}.querySelectorAll('ol li')).map(e => e.textContent)") == ["一", "二"]
    assert js(qtbot, view, f"{body}.querySelector('p code').textContent") == "a*b*c"
    assert js(qtbot, view, f"{body}.querySelector('pre code').textContent") == "x = '*不是强调*'"
    assert js(qtbot, view, f"{body}.querySelectorAll('em').length") == 1

    # the live bubble shows an emphasis still being written as italics already
    html = js(qtbot, view, "window.liyuan.renderText('「好。」*她转过', {streaming: true})")
    assert html == "<p>「好。」<em>她转过</em></p>"


HOSTILE = [
    "<script>window.__pwned = 1</script>",
    '<img src=x onerror="window.__pwned = 2">',
    "[点我](javascript:window.__pwned=3)",
    '[x](http://example.com/"onmouseover="window.__pwned=4)',
    "<a href=\"javascript:alert(1)\">a</a> <iframe src=\"https://example.com\"></iframe>",
    "*<svg onload=window.__pwned=5>*",
    "`<b>code</b>`",
]


def test_model_html_is_sanitised_and_never_runs(qtbot, view):
    """Model text may carry HTML since issue 13 §3 (SillyTavern shows it, through DOMPurify): it never runs — no
    script, no event handler, no javascript: link, no frame, no remote image — while code spans, Markdown links with
    unsafe URLs and every label set by the page stay literal text."""
    text = "\n\n".join(HOSTILE)
    view.set_transcript([
        item("o", "opening", "【开场 · <b onclick=x>青梧</b>】\n" + text, beat=0),
        item("u", "user", text, name="<i>旅人</i>"),
        item("a", "assistant", text, revised=True),
        item("d", "draft", text, outcome="error", error='<img src=x onerror="window.__pwned=6">'),
    ], has_older=False)
    view.set_pending(text, "<b>青梧</b>正在写…")
    view.set_banner("<img src=x onerror=\"window.__pwned=7\">")
    js_until(qtbot, view, "!document.getElementById('pending').hidden", bool)
    qtbot.wait(200)  # an onerror would have fired by now

    counts = js_json(qtbot, view, """({
        scripts: document.scripts.length,
        logScripts: document.querySelectorAll('#log script, #pending script').length,
        remote: document.querySelectorAll('iframe, object, embed, img[src]:not([src^="data:"])').length,
        jsHrefs: Array.from(document.querySelectorAll('a')).filter(a => /^\\s*javascript:/i.test(a.getAttribute('href') || '')).length,
        handlers: Array.from(document.querySelectorAll('*')).filter(e => Array.from(e.attributes).some(a => /^on/i.test(a.name))).length,
        pwned: window.__pwned === undefined ? null : window.__pwned
    })""")
    # the page's own three scripts: qwebchannel.js, the sanitiser, conversation.js
    assert counts == {"scripts": 3, "logScripts": 0, "remote": 0, "jsHrefs": 0, "handlers": 0, "pwned": None}

    shown = js(qtbot, view, "document.querySelector('[data-id=a] .body').textContent")
    assert "window.__pwned = 1" not in shown  # the script element is gone with its text
    assert "[点我](javascript:window.__pwned=3)" in shown  # a Markdown link with an unsafe URL stays text
    assert "<b>code</b>" in shown  # code spans stay literal
    assert js(qtbot, view, "document.querySelector('[data-id=o] .opening-title').textContent") == "开场 · 青梧"
    assert js(qtbot, view, "document.querySelector('[data-id=u] .name').textContent") == "<i>旅人</i>"
    assert js(qtbot, view, "document.getElementById('banner').textContent") == '<img src=x onerror="window.__pwned=7">'
    # the one http link keeps its href; the javascript: one lost it
    hrefs = js_json(qtbot, view, "Array.from(document.querySelectorAll('[data-id=a] a')).map(a => a.getAttribute('href'))")
    assert hrefs == ['http://example.com/"onmouseover="window.__pwned=4', None]


def test_prepend_keeps_scroll_position_and_older_is_requested(qtbot, view):
    requested: list[str] = []
    view.olderRequested.connect(requested.append)

    def page(lo, hi):
        return [item(f"m{i:03d}", "user" if i % 2 else "assistant", f"第 {i} 条。\n" + "雨声。" * 30, beat=i // 2)
                for i in range(lo, hi)]

    view.set_transcript(page(100, 140), has_older=True)
    top = js(qtbot, view, "document.scrollingElement.scrollTop")
    assert top > 1000  # scrolled to the newest; nothing requested yet
    qtbot.wait(100)
    assert requested == []

    js(qtbot, view, "window.scrollTo(0, 0); true")
    qtbot.waitUntil(lambda: requested == ["m100"], timeout=5000)
    before = js_json(qtbot, view, """({top: document.querySelector('[data-id=m100]').getBoundingClientRect().top,
                                      scroll: document.scrollingElement.scrollTop})""")
    view.prepend(page(70, 100), has_older=False)
    after = js_json(qtbot, view, """({top: document.querySelector('[data-id=m100]').getBoundingClientRect().top,
                                     scroll: document.scrollingElement.scrollTop,
                                     first: document.querySelector('#log > article').dataset.id,
                                     n: document.querySelectorAll('#log > article').length,
                                     older: document.getElementById('older').hidden})""")
    assert after["first"] == "m070" and after["n"] == 70
    assert abs(after["top"] - before["top"]) <= 1.5
    assert after["scroll"] > before["scroll"] + 1000
    assert after["older"] is True

    # nothing older left: scrolling to the top asks for nothing more
    js(qtbot, view, "window.scrollTo(0, 0); true")
    qtbot.wait(150)
    assert requested == ["m100"]


def test_short_transcript_with_older_asks_at_once(qtbot, view):
    requested: list[str] = []
    view.olderRequested.connect(requested.append)
    view.set_transcript([item("x1", "assistant", "短。")], has_older=True)
    qtbot.waitUntil(lambda: requested == ["x1"], timeout=5000)


def test_update_append_remove(qtbot, view):
    view.set_transcript([item("u1", "user", "问。"), item("a1", "assistant", "旧的回答。"),
                         item("u2", "user", "再问。", beat=2)], has_older=False)
    view.update_item(item("a1", "assistant", "*改过的*回答。", revised=True))
    got = js_json(qtbot, view, """Array.from(document.querySelectorAll('#log > article')).map(e =>
        [e.dataset.id, e.querySelector('.body').innerHTML, (e.querySelector('.badge') || {}).textContent || ''])""")
    assert got[1] == ["a1", "<p><em>改过的</em>回答。</p>", "已修订"]
    assert [g[0] for g in got] == ["u1", "a1", "u2"]

    view.update_item(item("nope", "assistant", "不在视图里"))
    view.append_item(item("a2", "assistant", "新回答。", beat=2))
    view.remove_item("u1")
    ids = js_json(qtbot, view, "Array.from(document.querySelectorAll('#log > article')).map(e => e.dataset.id)")
    assert ids == ["a1", "u2", "a2"]


def test_pending_updates_are_coalesced(qtbot, view):
    view.set_transcript([item("u", "user", "讲吧。")], has_older=False)
    base = js(qtbot, view, "window.liyuan.stats().pendingUpdates")
    text = ""
    for i in range(200):
        text += f"字{i}"
        view.set_pending(text, "青梧正在写…")
        if i % 25 == 0:
            qtbot.wait(1)  # let some of them through, as a stream would

    js_until(qtbot, view, "document.querySelector('#pending .body').textContent", lambda t: t == text)
    assert js(qtbot, view, "document.querySelector('#pending .pending-label').textContent") == "青梧正在写…"
    updates = js(qtbot, view, "window.liyuan.stats().pendingUpdates") - base
    assert 1 <= updates < 50

    view.set_pending(None)
    js_until(qtbot, view, "document.getElementById('pending').hidden", lambda hidden: hidden is True)


def test_welcome_buttons_notify_python(qtbot, view):
    demo, settings = [], []
    view.demoRequested.connect(lambda: demo.append(1))
    view.settingsRequested.connect(lambda: settings.append(1))
    view.show_welcome()
    shown = js_json(qtbot, view, """({welcome: !document.getElementById('welcome').hidden,
        chat: getComputedStyle(document.getElementById('chat')).display,
        demo: document.getElementById('welcome-demo').textContent,
        settings: document.getElementById('welcome-settings').textContent})""")
    assert shown == {"welcome": True, "chat": "none", "demo": "玩离线演示", "settings": "设置模型"}
    js(qtbot, view, "document.getElementById('welcome-demo').click(); true")
    qtbot.waitUntil(lambda: demo == [1], timeout=5000)
    js(qtbot, view, "document.getElementById('welcome-settings').click(); true")
    qtbot.waitUntil(lambda: settings == [1], timeout=5000)
    view.show_chat()
    assert js(qtbot, view, "document.getElementById('welcome').hidden") is True


def test_navigation_away_is_refused_and_links_open_outside(qtbot, view):
    opened, refused = [], []
    view.link_opener = lambda url: opened.append(url.toString())
    view._confirm_dialog = lambda title, text: True   # the user says yes to opening it (asked first: issue 29 §7)
    view.page().navigationRefused.connect(lambda url: refused.append(url.toString()))
    view.set_transcript([item("a", "assistant", "看 [这里](https://example.com/page) 和 [那里](javascript:alert(1))")],
                        has_older=False)

    js(qtbot, view, "document.querySelector('[data-id=a] a').click(); true")
    qtbot.waitUntil(lambda: opened == ["https://example.com/page"], timeout=5000)

    js(qtbot, view, "window.location.href = 'https://example.com/elsewhere'; true")
    qtbot.waitUntil(lambda: "https://example.com/elsewhere" in refused, timeout=5000)
    js(qtbot, view, "window.open('https://example.com/popup'); true")
    qtbot.wait(100)
    assert view.url() == view.host_url
    assert js(qtbot, view, "document.querySelectorAll('[data-id=a]').length") == 1
    assert opened == ["https://example.com/page"]


def test_calls_before_load_are_queued_banner_and_theme(qtbot):
    view = ConversationView()
    try:
        _queued_calls(qtbot, view)
    finally:
        close_view(view)


def _queued_calls(qtbot, view: ConversationView) -> None:
    view.set_banner("回放模型 · 离线演示")
    view.set_theme("dark")
    view.set_transcript([item("a", "assistant", "先到的话。")], has_older=False)
    view.show()
    qtbot.waitUntil(lambda: view.is_ready(), timeout=20000)
    state = js_json(qtbot, view, """({banner: document.getElementById('banner').textContent,
        bannerShown: !document.getElementById('banner').hidden,
        dark: document.documentElement.classList.contains('theme-dark'),
        text: document.querySelector('[data-id=a] .body').textContent})""")
    assert state == {"banner": "回放模型 · 离线演示", "bannerShown": True, "dark": True, "text": "先到的话。"}
    view.set_banner(None)
    view.set_theme("light")
    state = js_json(qtbot, view, """({bannerShown: !document.getElementById('banner').hidden,
        dark: document.documentElement.classList.contains('theme-dark')})""")
    assert state == {"bannerShown": False, "dark": False}


@pytest.mark.parametrize("n", [5000])
def test_only_the_given_window_is_built(qtbot, view, n):
    """A long chat: the main window hands over the newest 60; only those are in the DOM."""
    everything = [item(f"i{k}", "user" if k % 2 else "assistant", f"第 {k} 条", beat=k // 2) for k in range(n)]
    view.set_transcript(everything[-60:], has_older=True)
    assert js(qtbot, view, "document.querySelectorAll('#log > article').length") == 60


def test_render_process_crash_restores_the_view(qtbot, view):
    """If the page's renderer dies, the view reloads and shows the same items, banner and theme again."""
    import os
    import signal

    view.set_banner("回放模型")
    view.set_theme("dark")
    view.set_transcript([item("a", "assistant", "一"), item("b", "assistant", "二")], has_older=False)
    view.prepend([item("z", "opening", "【开场 · 青梧】\n零", beat=0)], has_older=False)
    view.update_item(item("b", "assistant", "二（改）", revised=True))
    view.remove_item("a")
    assert js(qtbot, view, "document.querySelectorAll('#log > article').length") == 2
    pid = view.page().renderProcessPid()
    assert pid > 0
    with qtbot.waitSignal(view.page().renderProcessTerminated, timeout=10000):
        os.kill(pid, signal.SIGKILL)
    qtbot.waitUntil(lambda: view.page().renderProcessPid() not in (0, pid), timeout=10000)
    state = js_until(qtbot, view, """JSON.stringify({ids: Array.from(document.querySelectorAll('#log > article'))
            .map(e => e.dataset.id + ':' + e.querySelector('.body').textContent),
        banner: document.getElementById('banner').textContent,
        dark: document.documentElement.classList.contains('theme-dark')})""",
                     lambda r: r is not None and '"ids":[]' not in r, timeout=10.0)
    assert json.loads(state) == {"ids": ["z:开场 · 青梧零", "b:二（改）"], "banner": "回放模型", "dark": True}
