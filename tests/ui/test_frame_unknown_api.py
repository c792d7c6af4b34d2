"""A status bar that reads an MVU / TavernHelper API that does not exist (``Mvu.variables``) no longer just shows
its defaults with no word (issue 29 §10): the frame runtime (th_shim.js) reports each such read once per name,
and the bar's notice says which API it was, in the user's language. Reads of what exists, library probing
(``then`` when a promise resolves to Mvu) and ``in`` checks are not reported."""

from __future__ import annotations

import json

from uihelpers import view_json
from uihelpers import wait_frame_report as wait_report
from uihelpers import wait_view as wait_js

BAR = """```html
<body><b id="v">?</b><script>
  var vars = Mvu.variables || {stat_data: {hp: '默认'}};       // not an MVU API: undefined
  var again = window.Mvu.variables;                               // the same name again: reported once
  var th = TavernHelper.getVariablez;                             // a misspelt TavernHelper function
  var ok = typeof Mvu.getMvuData === 'function' && 'nope' in Mvu && typeof TavernHelper.getVariables;
  var data = Mvu.getMvuData({type: 'message'});
  document.getElementById('v').textContent = String(vars.stat_data.hp);
  waitGlobalInitialized('Mvu').then(function (m) {                // resolving a promise reads m.then: not reported
    __liyuanReport({shown: document.getElementById('v').textContent, same: m.events === Mvu.events,
                    hp: data.stat_data.hp});
  });
</script></body>
```"""


def _notice_lines(qtbot, view, name):
    return view_json(qtbot, view, f"""(function () {{
        var f = document.getElementById({json.dumps(name)}), box = f && f.parentNode.querySelector('.th-notice');
        return box ? Array.from(box.querySelectorAll('li')).map(function (li) {{ return li.textContent; }}) : []; }})()""")


def test_reads_of_missing_mvu_apis_are_reported_once_per_name(qtbot, view):
    view.set_transcript([{"id": "1", "role": "assistant", "text": BAR, "beat": 1,
                          "variables": {"stat_data": {"hp": 7}}}], False)
    rep = wait_report(qtbot, view, "TH-message--1--0", lambda r: "shown" in r, timeout=20.0)
    assert rep == {"shown": "默认", "same": True, "hp": 7}
    notices = wait_js(qtbot, view, "liyuan.frameNotices()", lambda n: "TH-message--1--0" in n, timeout=15)
    assert notices["TH-message--1--0"]["text"] == "状态栏出错了（2 条）", notices
    lines = _notice_lines(qtbot, view, "TH-message--1--0")
    assert lines == ["状态栏读取了不存在的接口 Mvu.variables（得到 undefined，显示的可能只是默认值）",
                     "状态栏读取了不存在的接口 TavernHelper.getVariablez（得到 undefined，显示的可能只是默认值）"], lines
