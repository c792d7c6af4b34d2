"""The display-HTML sanitiser holds on its own (issue 29 §7): a message's card HTML is rendered in the real
conversation page with the page's Content-Security-Policy taken out, and no style, <style> block or SVG attribute
may make the page even try to load from a real loopback listener — CSS escapes that spell ``url(``, image-set in
every spelling, border-image, SVG <image>/<feImage>/<use> href, @import, url() with entities. The listener must
receive nothing and the request filter must have had nothing to refuse (the CSP and the filter are the second and
third lines, not the first). Safe styles stay. Links in the text are opened only after a question showing the whole
address (default No); non-http(s) and private/loopback addresses are refused with a notice."""

from __future__ import annotations

import re
import shutil
import socket
import threading

import pytest
from uihelpers import close_view, view_js, view_json

PNG = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")


class Listener:
    """A TCP listener on 127.0.0.1 that records every connection (and what was sent on it)."""

    def __init__(self) -> None:
        self.got: list[bytes] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            c.settimeout(1)
            try:
                self.got.append(c.recv(1000) or b"CONNECT")
            except OSError:
                self.got.append(b"CONNECT")
            c.close()

    def close(self) -> None:
        self.sock.close()


def attacks(h: str) -> str:
    """Card HTML with one remote load per line, each to its own path on ``h`` (host:port)."""
    box = "width: 40px; height: 40px; display: block; "
    return "\n".join([
        "攻击开始。",
        f'<div style="{box}background: \\75 rl(http://{h}/a1-css-escape)">1</div>',
        f"<div style=\"{box}background-image: image-set('http://{h}/a2-image-set' 1x)\">2</div>",
        f'<div style=\'{box}background-image: -webkit-image-set("http://{h}/a3-webkit" 1x)\'>3</div>',
        f'<div style=\'{box}border: 10px solid; border-image: image-set("http://{h}/a4-border" 1x) 30\'>4</div>',
        f'<svg width="20" height="20"><image href="http://{h}/a5-svg-image" width="20" height="20"/></svg>',
        f'<svg width="20" height="20"><filter id="f"><feImage href="http://{h}/a6-feimage"/></filter>'
        f'<rect filter="url(#f)" width="20" height="20"/></svg>',
        f'<div style="{box}background: u\\rl(http://{h}/a7-u-escape-rl)">7</div>',
        f'<div style="{box}background: \\000075rl(http://{h}/a8-long-escape)">8</div>',
        f'<div style="{box}background: url/*x*/(http://{h}/a9-comment)">9</div>',
        f'<div style="{box}background: url(&#104;ttp://{h}/a10-entity)">10</div>',
        f'<svg width="20" height="20"><use href="http://{h}/a11-use#x"/></svg>',
        f'<svg width="20" height="20"><a xlink:href="http://{h}/a12-svg-link"><text y="10">x</text></a></svg>',
        f'<svg width="20" height="20"><rect fill="url(http://{h}/a13-fill#g)" width="20" height="20"/></svg>',
        f'<svg width="20" height="20"><image width="20" height="20"><animate attributeName="href" '
        f'values="http://{h}/a14-animate" dur="1s"/></image></svg>',
        f'<div style="{box}--x: url(http://{h}/a15-var); background: var(--x)">15</div>',
        f'<ul style="list-style-image: image-set(\'http://{h}/a16-list\' 1x)"><li>16</li></ul>',
        f'<div style="{box}background: cross-fade(url(http://{h}/a17-cross), red 50%)">17</div>',
        f'<div style="{box}mask-image: -webkit-image-set(\'http://{h}/a18-mask\' 1x)">18</div>',
        f'<style>@import "http://{h}/a19-import"; @import url(http://{h}/a20-import);'
        f' .e1 {{ {box}background: \\75 rl(http://{h}/a21-block-escape) }}'
        f' .e2 {{ {box}background-image: image-set("http://{h}/a22-block-set" 1x) }}'
        f' .e3::before {{ content: image-set("http://{h}/a23-content" 1x) }}'
        f' @keyframes k {{ from {{ background-image: image-set("http://{h}/a24-keyframes" 1x) }} }}'
        f' .e4 {{ {box}animation: k 1s infinite }}'
        f' .ok {{ color: rgb(0, 0, 255) }}</style>',
        '<div class="e1">e1</div><div class="e2">e2</div><div class="e3">e3</div><div class="e4">e4</div>',
        # what must stay
        '<span class="ok" style="background: linear-gradient(rgb(255, 0, 0), rgb(0, 0, 255)); '
        'border-top: 1px solid rgb(1, 2, 3); border-bottom: 3px solid var(--nope, rgb(4, 5, 6)); '
        'content: \'a;b\'">安全</span>',
        f'<div id="pic" style="{box}background-image: url({PNG})">p</div>',
        '<svg width="20" height="20"><defs><linearGradient id="g"><stop offset="0" stop-color="red"/>'
        '</linearGradient></defs><rect id="r" fill="url(#g)" transform="rotate(45)" width="20" height="20"/></svg>',
    ])


def _page_without_csp(tmp_path):
    """A copy of the host page folder whose conversation.html carries no Content-Security-Policy."""
    from liyuan_desktop.ui.frames import conversation

    dst = tmp_path / "web"
    shutil.copytree(conversation.web_dir(), dst)
    html = (dst / "conversation.html").read_text(encoding="utf-8")
    html, n = re.subn(r'<meta\s+http-equiv="Content-Security-Policy"\s+content="[^"]*">', "", html, flags=re.I)
    assert n == 1
    (dst / "conversation.html").write_text(html, encoding="utf-8")
    return dst


@pytest.fixture
def bare_view(qtbot, tmp_path, monkeypatch):
    """A conversation view on a copy of the page with no CSP (the sanitiser is the only defence in the page)."""
    from liyuan_desktop.ui.frames import conversation

    folder = _page_without_csp(tmp_path)
    monkeypatch.setattr(conversation, "host_dir", lambda trusted=False: folder)
    v = conversation.ConversationView()
    v.resize(800, 2000)
    v.show()
    try:
        qtbot.waitUntil(lambda: v.is_ready(), timeout=20000)
        yield v
    finally:
        close_view(v)


def test_remote_loads_in_card_html_are_removed_by_the_sanitiser_alone(qtbot, bare_view):
    view = bare_view
    net = Listener()
    try:
        h = f"127.0.0.1:{net.port}"
        assert "Content-Security-Policy" not in view_js(qtbot, view, "document.head.innerHTML")
        view.show_chat()
        view.set_transcript([{"id": "1", "role": "assistant", "text": attacks(h), "beat": 1}], False)
        qtbot.waitUntil(lambda: view_json(qtbot, view, "document.querySelectorAll('#log .msg').length") == 1,
                        timeout=10000)
        view_js(qtbot, view, "document.querySelector('.msg[data-id=\"1\"]').scrollIntoView(); true")
        qtbot.wait(1500)  # time for any load the page would start (rendering, the animation, the filter)
        got = view_json(qtbot, view, """(function () {
          var b = document.querySelector('.msg[data-id="1"] .body');
          var ok = b.querySelector('span[class~="custom-ok"]'), pic = b.querySelector('div[id="custom-pic"]');
          var rect = b.querySelector('rect[id="custom-r"]');
          return {html: b.innerHTML, okColor: ok && getComputedStyle(ok).color,
                  okBg: ok && getComputedStyle(ok).backgroundImage, okBorder: ok && getComputedStyle(ok).borderTopColor,
                  okVar: ok && getComputedStyle(ok).borderBottomColor, okStyle: ok && ok.getAttribute('style'),
                  pic: pic && getComputedStyle(pic).backgroundImage.slice(0, 27),
                  fill: rect && rect.getAttribute('fill'), transform: rect && rect.getAttribute('transform'),
                  grad: !!b.querySelector('linearGradient[id="custom-g"]')};
        })()""")
        blocked = [b for b in view.blocked_requests() if str(net.port) in b]
        # nothing of the listener's address is left anywhere in the message (attributes, styles, <style>)
        assert str(net.port) not in got["html"], re.findall(r"a\d+-[\w-]+", got["html"])
        assert blocked == [], blocked
        assert net.got == []
        # safe styles, data: images and in-message SVG references stay
        assert got["okColor"] == "rgb(0, 0, 255)"           # the <style> block's safe rule (scoped) applies
        assert got["okBg"].startswith("linear-gradient(") and got["okBorder"] == "rgb(1, 2, 3)"
        assert got["okVar"] == "rgb(4, 5, 6)", got["okStyle"]   # a shorthand waiting for var() stays whole
        assert got["pic"] == 'url("data:image/png;base64,'
        assert got["fill"] == 'url("#custom-g")' and got["transform"] == "rotate(45)" and got["grad"]
    finally:
        net.close()


def test_css_checker_verdicts(qtbot, view):
    """The checker the sanitiser uses, on values as the browser serialises them."""
    cases = {
        "rgb(1, 2, 3)": True, "linear-gradient(red, calc(10% + 2px) blue)": True,
        'url("data:image/png;base64,AAAA")': True, "var(--a, 1px)": True, "rotate(45deg) translateX(3px)": True,
        'url("http://127.0.0.1/x")': False, "URL(http://x/)": False, 'image-set("http://x/" 1x)': False,
        '-webkit-image-set("x" 1x)': False, '\\75 rl(x)': False, 'u\\rl(x)': False, "/* a */ red": False,
        'cross-fade(red, blue)': False, 'element(#a)': False, 'paint(x)': False, 'attr(data-x url)': False,
        '"unclosed': False, 'src("http://x")': False, 'content: "a(b"': True,
    }
    got = view_json(qtbot, view, "(function(){ var c = %s, out = {}; Object.keys(c).forEach(function (k) {"
                    " out[k] = liyuan.cssValueSafe(k); }); return out; })()" % __import__("json").dumps(cases))
    assert got == cases


# ---- links -----------------------------------------------------------------------------------------------------------
def _click(qtbot, view, href):
    view.set_transcript([{"id": "a", "role": "assistant", "text": f"看 [这里]({href})", "beat": 1}], has_older=False)
    qtbot.waitUntil(lambda: view_json(qtbot, view, "!!document.querySelector('[data-id=a] a')"), timeout=5000)
    view_js(qtbot, view, "document.querySelector('[data-id=a] a').click(); true")


@pytest.mark.parametrize("href", ["http://127.0.0.1:9/", "http://localhost:8080/x", "http://2130706433/",
                                  "http://[::1]/", "http://192.168.1.1/admin", "http://169.254.169.254/latest",
                                  "http://router/", "mailto:a@example.com"])
def test_links_to_private_addresses_or_other_schemes_are_refused_with_a_notice(qtbot, view, href):
    opened, asked, told = [], [], []
    view.link_opener = lambda url: opened.append(url.toString())
    view._confirm_dialog = lambda title, text: asked.append(text) or True
    view._inform_dialog = lambda title, text: told.append(text)
    _click(qtbot, view, href)
    qtbot.waitUntil(lambda: bool(told), timeout=5000)
    assert opened == [] and asked == []
    assert "没有打开" in told[0]


def test_a_public_link_is_opened_only_after_the_user_says_yes(qtbot, view):
    opened, asked = [], []
    answer = [False]
    view.link_opener = lambda url: opened.append(url.toString())
    view._inform_dialog = lambda title, text: pytest.fail(text)
    view._confirm_dialog = lambda title, text: asked.append(text) or answer[0]
    url = "https://example.com/path?q=1&r=2#frag"
    _click(qtbot, view, url)
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=5000)
    assert url in asked[0]                       # the whole address is shown
    qtbot.wait(50)
    assert opened == []                          # No: nothing opened
    answer[0] = True
    view_js(qtbot, view, "document.querySelector('[data-id=a] a').click(); true")
    qtbot.waitUntil(lambda: opened == [url], timeout=5000)


def test_the_real_question_defaults_to_no(qtbot, view):
    """The real dialog: the address in its text, No the default button (Enter opens nothing)."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox

    opened, seen = [], []
    view.link_opener = lambda url: opened.append(url.toString())

    def answer() -> None:
        box = next((w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()), None)
        if box is None:
            QTimer.singleShot(50, answer)
            return
        # the one confirmation helper (dialogs.confirm) labels its buttons itself: No is the button with the No role
        seen.append((box.text(), box.buttonRole(box.defaultButton()) == QMessageBox.ButtonRole.NoRole))
        box.defaultButton().click()
    QTimer.singleShot(50, answer)
    _click(qtbot, view, "https://example.org/a")
    qtbot.waitUntil(lambda: bool(seen), timeout=10000)
    assert "https://example.org/a" in seen[0][0] and seen[0][1] is True
    qtbot.wait(100)
    assert opened == []
