"""Issue 24 §1: a source run reads Chinese (and status-bar emoji) with no system font at all — the fonts the package
ships in liyuan_desktop/resources/fonts, handed to fontconfig by runtime.prepare_fontconfig, reach both Qt's
widgets and QtWebEngine's Chromium, including a card frame (sandboxed, under the frames' Content-Security-Policy).

Each check runs in a subprocess whose FONTCONFIG_FILE names only the bundled folders (no system config, no system
font folder), so the machine's own fonts cannot answer. A glyph is real when two different characters draw different
pixels: a missing glyph is the same empty box for every character. The control run (only the emoji folder: no
Chinese font at all) must see the boxes, or the test would prove nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from liyuan_desktop import runtime

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fontconfig fonts: Linux only")

_PROBE = r'''
import json, os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6 import QtWebEngineWidgets  # noqa: F401  before the QApplication
from PySide6.QtCore import QTimer
from PySide6.QtGui import QColor, QFont, QFontMetrics, QImage, QPainter
from PySide6.QtWebEngineWidgets import QWebEngineView
from PySide6.QtWidgets import QApplication, QLabel

app = QApplication([])
out = {}

def qt_pixels(ch):
    img = QImage(48, 48, QImage.Format.Format_ARGB32)
    img.fill(QColor("white"))
    p = QPainter(img)
    f = QFont()
    f.setPixelSize(32)
    p.setFont(f)
    p.setPen(QColor("black"))
    p.drawText(4, 38, ch)
    p.end()
    return bytes(img.constBits())

label = QLabel(sys.argv[1])
label.show()
app.processEvents()
fm = QFontMetrics(label.font())
out["qt_in_font"] = {c: fm.inFontUcs4(ord(c)) for c in "中繁"}
out["qt"] = {c: qt_pixels(c).hex() for c in ("中", "文", "繁", "體", "😀", "🎭")}
label.grab().save(sys.argv[2] + "-label.png")

CSP = sys.argv[3]
FRAME = ("<!doctype html><meta http-equiv='Content-Security-Policy' content=\"" + CSP + "\"><canvas id=c></canvas>"
         "<script>var c=document.getElementById('c'),x=c.getContext('2d'),r={};c.width=c.height=48;"
         "for(const ch of ['中','文','繁','體','😀','🎭']){x.fillStyle='#fff';x.fillRect(0,0,48,48);"
         "x.fillStyle='#000';x.font='32px sans-serif';x.fillText(ch,4,38);"
         "r[ch]=Array.from(x.getImageData(0,0,48,48).data).join(',');}"
         "parent.postMessage(JSON.stringify(r),'*');</script>")
PAGE = ("<!doctype html><html><body style='font-size:28px'><p>" + sys.argv[1] + "</p>"
        "<iframe id=f sandbox='allow-scripts'></iframe><script>window.__r=null;"
        "addEventListener('message',function(e){window.__r=e.data;});"
        "document.getElementById('f').srcdoc=" + json.dumps(FRAME).replace("</", "<\\/") + ";</script></body></html>")
view = QWebEngineView()
view.resize(520, 260)
view.show()

def poll():
    view.page().runJavaScript("window.__r", 0, got)

def got(r):
    if not r:
        QTimer.singleShot(100, poll)
        return
    out["frame"] = json.loads(r)
    view.grab().save(sys.argv[2] + "-page.png")
    print(json.dumps(out))
    app.quit()

view.loadFinished.connect(lambda ok: poll())
view.setHtml(PAGE)
QTimer.singleShot(60000, app.quit)
app.exec()
'''


def _frame_csp() -> str:
    js = (ROOT / "liyuan_desktop" / "resources" / "web" / "conversation.js").read_text(encoding="utf-8")
    start = js.index('var FRAME_CSP = "') + len('var FRAME_CSP = "')
    end = js.index(";\n", start)
    return "".join(part.strip().strip('"') for part in js[start:end].split("+"))


def _only(tmp_path: Path, name: str, dirs: list[Path]) -> Path:
    conf = tmp_path / f"{name}.conf"
    conf.write_text('<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n<fontconfig>\n'
                    + "".join(f"  <dir>{d}</dir>\n" for d in dirs)
                    + f"  <cachedir>{tmp_path / 'fccache'}</cachedir>\n</fontconfig>\n", encoding="utf-8")
    return conf


def _probe(tmp_path: Path, conf: Path, name: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QT_QPA")}
    env.update(FONTCONFIG_FILE=str(conf), QTWEBENGINE_DISABLE_SANDBOX="1",
               QTWEBENGINE_CHROMIUM_FLAGS="--no-sandbox --disable-gpu --log-level=3")
    proc = subprocess.run([sys.executable, "-c", _PROBE, "梨园 中文 繁體 😀🎭 abc", str(tmp_path / name), _frame_csp()],
                          env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    return json.loads(lines[-1])


def _distinct(pixels: dict, a: str, b: str) -> bool:
    return pixels[a] != pixels[b]


def test_chinese_and_emoji_draw_real_glyphs_with_only_the_bundled_fonts(tmp_path):
    cjk, emoji = runtime.bundled_font_dir(), runtime.bundled_emoji_dir()
    assert cjk is not None and emoji is not None, "the package ships resources/fonts/cjk and resources/fonts/emoji"
    got = _probe(tmp_path, _only(tmp_path, "bundled", [cjk, emoji]), "bundled")
    assert all(got["qt_in_font"].values()), got["qt_in_font"]
    for where in ("qt", "frame"):  # Qt widgets; a sandboxed card frame in Chromium
        px = got[where]
        assert _distinct(px, "中", "文") and _distinct(px, "繁", "體") and _distinct(px, "中", "繁"), where
        assert _distinct(px, "😀", "🎭") and _distinct(px, "😀", "中"), where
    # control: no Chinese font at all → the same box for every Chinese character (the check above can fail)
    ctl = _probe(tmp_path, _only(tmp_path, "control", [emoji]), "control")
    assert not _distinct(ctl["qt"], "中", "文") and not _distinct(ctl["frame"], "中", "文"), "control saw glyphs"
