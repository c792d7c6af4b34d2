"""Frame memory (issue 15; conversation.js "frame memory"): only status bars near the screen are live frames. A bar
far from the screen is not built until it is scrolled to, a live bar scrolled far away is put to sleep (its frame
removed, its block keeping its height) and rebuilt when it comes back — showing its bar and its variables: those
Python pushed while it slept and those it wrote itself before. Real QtWebEngine, offscreen; the view's margins are
shortened so a 800x600 view shows the effect with 24 bars."""

from __future__ import annotations

import json

from uihelpers import frame_reports as reports
from uihelpers import probe_frame as probe
from uihelpers import view_js as js
from uihelpers import view_json as js_json
from uihelpers import wait_frame_report as wait_report
from uihelpers import wait_view as wait_js

N = 24
# a tall bar showing its own message's hp; the first time it runs it adds 100 to it (a write the host keeps)
BAR = """第 {i} 段。

```html
<body>
<div style="height:220px;border:1px solid #ccc">HP <b id="hp">?</b></div>
<script>
  var id = getCurrentMessageId();
  var d = getVariables({type: 'message', message_id: id}).stat_data || {};
  if (!d.touched) { d = {hp: d.hp + 100, touched: true}; replaceVariables({stat_data: d}, {type: 'message', message_id: id}); }
  document.getElementById('hp').textContent = String(d.hp);
  __liyuanReport({ready: id, hp: d.hp});
</script>
</body>
```"""


def items() -> list[dict]:
    return [{"id": str(i), "role": "assistant", "text": BAR.replace("{i}", str(i)), "beat": i,
             "variables": {"stat_data": {"hp": i}}} for i in range(N)]


def memory(qtbot, view) -> dict:
    return json.loads(js(qtbot, view, "liyuan.frameMemory()"))


def scroll(qtbot, view, where: str) -> None:
    js(qtbot, view, "window.scrollTo(0, %s); 1" % ("0" if where == "top" else "document.scrollingElement.scrollHeight"))


def test_far_bars_wait_sleep_and_come_back_with_their_variables(qtbot, view):
    js(qtbot, view, "liyuan.setFrameMemory({nearMargin: '50% 0px', farMargin: '100% 0px', keepLive: 2}); 1")
    view.set_transcript(items(), False)
    last = f"TH-message--{N - 1}--0"
    assert wait_report(qtbot, view, last, lambda r: "ready" in r) == {"ready": N - 1, "hp": N - 1 + 100}
    m = wait_js(qtbot, view, "JSON.parse(liyuan.frameMemory())", lambda v: not v["unseen"] and not v["near"])
    assert 1 <= m["live"] < N // 2 and m["deferred"] >= N // 2, m   # the top of the chat is not built
    assert not reports(qtbot, view, "TH-message--0--0")
    # a deferred block keeps a guessed height (the last bar's), so the scroll range is about the chat's real one
    assert js_json(qtbot, view, "document.scrollingElement.scrollHeight") > N * 200

    view.push_variables("0", {"stat_data": {"hp": 7, "touched": True}})   # while message 0's bar is not built
    scroll(qtbot, view, "top")
    assert wait_report(qtbot, view, "TH-message--0--0", lambda r: "ready" in r) == {"ready": 0, "hp": 7}
    assert probe(qtbot, view, "TH-message--0--0", "#hp") == "7"
    m = wait_js(qtbot, view, "JSON.parse(liyuan.frameMemory())", lambda v: v["asleep"] >= 1)
    assert m["live"] < N // 2, m                                             # the bottom bars went to sleep
    assert last not in js_json(qtbot, view, "liyuan.frameNames()")
    asleep_h = js_json(qtbot, view, f"document.getElementById('{last}') ? -1 : "
                                    f"document.querySelector('[data-id=\"{N - 1}\"] .TH-render').getBoundingClientRect().height")
    assert asleep_h >= 200                                                   # its block kept the bar's height

    scroll(qtbot, view, "bottom")
    back = wait_report(qtbot, view, last, lambda r: "ready" in r and len([x for x in reports(qtbot, view, last)
                                                                          if "ready" in x]) >= 2)
    assert back == {"ready": N - 1, "hp": N - 1 + 100}   # what it wrote before it slept, not added twice
    assert probe(qtbot, view, last, "#hp") == str(N - 1 + 100)
    assert memory(qtbot, view)["woken"] >= 1
    assert js_json(qtbot, view, f"liyuan.frameHeight('{last}')") >= 200


def test_a_short_chat_builds_every_bar(qtbot, view):
    view.set_transcript(items()[:3], False)
    for i in range(3):
        wait_report(qtbot, view, f"TH-message--{i}--0", lambda r: "ready" in r)
    m = memory(qtbot, view)
    assert m["live"] == 3 and m["deferred"] == 0 and m["asleep"] == 0, m


def test_the_last_bar_growing_keeps_the_reader_at_the_end(qtbot, view):
    view.set_transcript(items()[:6], False)
    wait_report(qtbot, view, "TH-message--5--0", lambda r: "ready" in r)
    wait_js(qtbot, view, "liyuan.frameHeight('TH-message--5--0')", lambda h: h >= 200)
    qtbot.wait(100)
    gap = js_json(qtbot, view, "(function(){var s=document.scrollingElement;"
                               "return s.scrollHeight - s.scrollTop - s.clientHeight;})()")
    assert gap <= 8, gap   # the bar grew after the chat was scrolled to its end: the end is still shown


def test_a_frame_carries_a_repeated_bar_once_and_reads_every_message_whole(qtbot, view):
    # the same bar in every reply (as a display regex writes it): each frame's srcdoc holds it once, and
    # getChatMessages still returns each message's text exactly as shown, bar and all
    core = "状态栏样式 " * 100
    filler = "<!-- " + core + "-->"
    bar = ("```html\n<body>" + filler + "<div id=\"n\"></div><script>\n"
           "var all = getChatMessages('0-{last}');\n"
           "__liyuanReport({texts: all.map(function (m) { return m.message; })});\n"
           "</script></body>\n```")
    texts = [f"第 {i} 段。\n\n" + bar.replace("{last}", str(N_SMALL - 1)) for i in range(N_SMALL)]
    texts.append("手写的 \ue010 字符不变：\ue0100\ue011")
    view.set_transcript([{"id": str(i), "role": "assistant", "text": t, "beat": i} for i, t in enumerate(texts)], False)
    name = f"TH-message--{N_SMALL - 1}--0"
    rep = wait_report(qtbot, view, name, lambda r: "texts" in r)
    assert rep["texts"][:N_SMALL] == texts[:N_SMALL]
    copies = js(qtbot, view, f"document.getElementById('{name}').srcdoc.split({json.dumps(core)}).length - 1")
    assert 1 <= copies <= 2, copies   # the chat carries the bar once (not once per message)


N_SMALL = 6
