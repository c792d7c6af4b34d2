"""Card HTML in messages (issue 13 §3), in the real conversation view (offscreen QtWebEngine, the DOM read back):
<details>, styled spans, classes, <br> and data: images render as SillyTavern shows them, MVU's placeholder
vanishes, and a message with <script>, onerror=, javascript: URLs, <style> aimed at the app or fixed positioning
changes nothing outside itself. Text without tags keeps the escaping and Markdown it always had."""

from __future__ import annotations

import json

from uihelpers import view_js, view_json

PNG = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")

RICH = ("她推门进来。\n\n"
        "<details><summary>状态</summary>\n<span style=\"color: rgb(255, 0, 0)\">好感 50</span><br>"
        "<div class=\"bar\">体力</div>\n</details>\n"
        f"<img src=\"{PNG}\" alt=\"头像\">\n\n"
        "**她笑了。**\n\n<StatusPlaceHolderImpl/>")

ATTACK = ("<script>window.__pwn = 1</script>\n"
          "<img src=\"x\" onerror=\"window.__pwn = 2\">\n"
          "<a href=\"javascript:window.__pwn = 3\" id=\"lnk\">点我</a>\n"
          "<a href=\"https://example.com/\" target=\"_blank\">外链</a>\n"
          "<style>body { background: rgb(255, 0, 0) !important; } #log, .msg, .body { display: none !important; }"
          " @import url(http://127.0.0.1:9/x.css); .bar { color: rgb(0, 0, 255); }</style>\n"
          "<div style=\"position: fixed; top: 0; left: 0; width: 100vw; height: 100vh; z-index: 99999;"
          " background: url(http://127.0.0.1:9/bg.png) blue\" class=\"cover\"></div>\n"
          "<button data-action=\"demo\">演示</button><form action=\"http://127.0.0.1:9/\"><input name=\"q\"></form>\n"
          "<iframe src=\"http://127.0.0.1:9/\"></iframe><object data=\"http://127.0.0.1:9/\"></object>\n"
          "<div class=\"bar\">蓝字</div>")


def _show(qtbot, view, items):
    view.show_chat()
    view.set_transcript(items, False)
    qtbot.waitUntil(lambda: view_json(qtbot, view, "document.querySelectorAll('#log .msg').length") == len(items),
                    timeout=10000)


def q(qtbot, view, expr):
    return view_json(qtbot, view, f"(function(){{ {expr} }})()")


def test_details_styled_spans_images_and_placeholder_render_like_sillytavern(qtbot, view):
    _show(qtbot, view, [{"id": "1", "role": "assistant", "text": RICH, "beat": 1}])
    got = q(qtbot, view, """
      var b = document.querySelector('.msg[data-id="1"] .body');
      var span = b.querySelector('details span');
      return {html: b.classList.contains('html'), details: !!b.querySelector('details'),
              summary: (b.querySelector('details > summary') || {}).textContent,
              color: span && getComputedStyle(span).color, br: !!b.querySelector('details br'),
              cls: (b.querySelector('details div') || {}).className,
              img: (b.querySelector('img') || {}).getAttribute ? b.querySelector('img').getAttribute('src').slice(0, 22) : null,
              strong: (b.querySelector('strong') || {}).textContent,
              placeholder: b.getElementsByTagName('StatusPlaceHolderImpl').length, text: b.textContent};""")
    assert got["html"] and got["details"] and got["summary"] == "状态"
    assert got["color"] == "rgb(255, 0, 0)" and got["br"] and got["cls"] == "custom-bar"
    assert got["img"] == "data:image/png;base64,"
    assert got["strong"] == "她笑了。"  # Markdown around the HTML still applies
    assert got["placeholder"] == 0 and "StatusPlaceHolderImpl" not in got["text"] and "<" not in got["text"]


def test_hostile_html_changes_nothing_outside_its_message(qtbot, view):
    _show(qtbot, view, [{"id": "1", "role": "assistant", "text": "前一条。", "beat": 1},
                        {"id": "2", "role": "assistant", "text": ATTACK, "beat": 2},
                        {"id": "3", "role": "assistant", "text": "后一条。", "beat": 3}])
    qtbot.wait(300)  # an onerror would have fired by now
    got = q(qtbot, view, """
      var b = document.querySelector('.msg[data-id="2"] .body');
      var cover = b.querySelector('div[class~="custom-cover"]');
      var links = Array.prototype.map.call(b.querySelectorAll('a'), function (a) { return a.getAttribute('href'); });
      return {pwn: window.__pwn === undefined ? null : window.__pwn,
              scripts: document.querySelectorAll('#log script').length,
              handlers: b.querySelectorAll('[onerror],[onclick],[onload]').length,
              links: links, target: b.querySelectorAll('[target]').length,
              bodyBg: getComputedStyle(document.body).backgroundColor,
              logShown: getComputedStyle(document.getElementById('log')).display,
              others: [1, 3].map(function (i) { return getComputedStyle(document.querySelector('.msg[data-id="' + i + '"]')).display; }),
              otherBody: getComputedStyle(document.querySelector('.msg[data-id="1"] .body')).display,
              styleText: (b.querySelector('style') || {}).textContent || '',
              barColor: getComputedStyle(b.querySelector('div[class~="custom-bar"]')).color,
              cover: cover && {bg: cover.getAttribute('style'), hits: [1, 3].map(function (i) {
                var m = document.querySelector('.msg[data-id="' + i + '"] .body');
                m.scrollIntoView({block: 'center'});
                var r = m.getBoundingClientRect();
                var hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
                return !!hit && m.contains(hit) || hit === m; })},
              dataAction: b.querySelectorAll('[data-action]').length,
              embedded: b.querySelectorAll('form, input, iframe, object, embed').length,
              ids: Array.prototype.map.call(b.querySelectorAll('[id]'), function (e) { return e.id; })};""")
    assert got["pwn"] is None and got["scripts"] == 0 and got["handlers"] == 0
    assert got["links"] == [None, "https://example.com/"] and got["target"] == 0
    assert got["bodyBg"] != "rgb(255, 0, 0)" and got["logShown"] != "none"
    assert got["others"] == ["block", "block"] or all(d != "none" for d in got["others"])
    assert got["otherBody"] != "none"
    # the card's own CSS still applies inside its message, scoped to it; @import is gone
    assert got["barColor"] == "rgb(0, 0, 255)"
    assert "@import" not in got["styleText"] and "127.0.0.1" not in got["styleText"]
    assert all(line.strip().startswith('.msg[data-id="2"] .body') for line in got["styleText"].splitlines() if line.strip()), got["styleText"]
    # fixed positioning cannot cover the app: what is under the other messages is still those messages (the cover
    # is clipped to its own message); its remote background is gone
    assert got["cover"] and got["cover"]["hits"] == [True, True], got["cover"]
    assert "127.0.0.1" not in got["cover"]["bg"]
    assert got["dataAction"] == 0 and got["embedded"] == 0
    assert got["ids"] == ["custom-lnk"]
    # the page's own state is untouched: the app's elements are still found by their ids
    assert view_json(qtbot, view, "!!document.getElementById('pending') && !!document.getElementById('end')")


def test_plain_text_keeps_escaping_and_markdown(qtbot, view):
    text = "a < b 且 c > d，*轻声*说。\n\n**重**"
    _show(qtbot, view, [{"id": "1", "role": "assistant", "text": text, "beat": 1}])
    got = q(qtbot, view, """
      var b = document.querySelector('.msg[data-id="1"] .body');
      return {html: b.classList.contains('html'), em: (b.querySelector('em') || {}).textContent,
              strong: (b.querySelector('strong') || {}).textContent, text: b.textContent};""")
    assert not got["html"] and got["em"] == "轻声" and got["strong"] == "重"
    assert "a < b 且 c > d" in got["text"]
    assert json.loads(view_js(qtbot, view, "JSON.stringify(typeof DOMPurify)")) == "function"
