"""A bar posting as fast as it can is held back in its own frame (issue 29 §9): the frame runtime's bucket
(th_shim.js, frame_guard.FLOOD "frameBurst") drops the excess before it crosses, so the host page takes delivery of
at most a burst of the bar's messages — not the tens of thousands it posted, which froze the view for seconds and
made the guard end and reload the page's renderer — and the bar is stopped with the flood notice. Structural
checks (messages the page received, the renderer still the same process), no wall-clock limits; the freeze itself
is measured by bench/frame_flood.py."""

from __future__ import annotations

import logging

from uihelpers import view_js, view_json
from uihelpers import wait_view as wait_js

FLOOD = """```html
<body><b id="v">洪水</b><script>
  var t0 = Date.now(), n = 0;
  function burst() {
    for (var i = 0; i < 20000; i++) parent.postMessage({__th: 'log', level: 'info', text: 'f' + (n++)}, '*');
    if (Date.now() - t0 < 4000) setTimeout(burst, 0);
  }
  setTimeout(burst, 100);
</script></body>
```"""


def test_a_flooding_bar_is_held_back_in_its_frame_and_stopped(qtbot, view, caplog):
    from liyuan_desktop.ui.frames import frame_guard

    caplog.set_level(logging.DEBUG, logger="liyuan_desktop.ui.frames.conversation")
    pid = view.page().renderProcessPid()
    view_js(qtbot, view, "window.__got = 0; window.addEventListener('message', function (e) {"
                         " if (e.data && e.data.__th === 'log' && /^f\\d/.test(e.data.text || '')) window.__got++; });"
                         " true")
    failed: list = []
    view.frameFailed.connect(lambda name, why: failed.append((name, why)))
    view.set_transcript([{"id": "3", "role": "assistant", "text": FLOOD, "beat": 1}], False)
    qtbot.waitUntil(lambda: bool(failed), timeout=20000)
    assert failed == [("TH-message--3--0", "flood")]
    qtbot.wait(1000)  # anything still queued would have arrived by now
    got = view_json(qtbot, view, "window.__got === undefined ? null : window.__got")
    assert view.page().renderProcessPid() == pid            # the page was never swamped: nothing had to be ended
    assert got is not None and 0 < got <= frame_guard.FLOOD["frameBurst"] + 20, got
    wait_js(qtbot, view, "(document.querySelector('[data-id=\"3\"] .th-failed') || {}).textContent || ''",
            lambda v: v == "状态栏发送消息过多，已停止", timeout=10)
    drops = [r for r in caplog.records if "TH-message--3--0" in r.getMessage() and "dropping the excess" in r.getMessage()]
    assert len(drops) == 1
