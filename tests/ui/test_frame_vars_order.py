"""A status bar sees its variables' object keys in the author's order, in the window as in the preview (issue 29
§10): a Vue bar lists tasks in the order of the keys. The order must survive a write from the bar — through the
view's signal to the chat, into the session file and back after reopening (Qt's QVariantMap, which a ``dict``
signal argument becomes, sorts keys)."""

from __future__ import annotations

import json

from uihelpers import wait_frame_report as wait_report

from liyuan_desktop.core.cards import card_from_json
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel

TASKS = {"z最后": {"进度": 1}, "a最先": {"进度": 2}, "m中间": {"b": 1, "a": 2}}

BAR = """开场。

```html
<body><script>
  var d = getVariables({type: 'message'});
  var before = Object.keys(d.stat_data.任务);
  insertOrAssignVariables({stat_data: {任务: {c新: {进度: 0}}}}, {type: 'message'});
  __liyuanReport({before: before, inner: Object.keys(d.stat_data.任务.m中间)});
</script></body>
```"""


def _card(tmp_path):
    data = {"name": "测", "first_mes": BAR,
            "character_book": {"entries": [{"id": 0, "comment": "[InitVar]", "keys": [], "enabled": False,
                                            "content": json.dumps({"任务": TASKS, "Zeta": 1, "alpha": 2},
                                                                  ensure_ascii=False),
                                            "insertion_order": 100, "extensions": {}}]}}
    return card_from_json({"spec": "chara_card_v3", "spec_version": "3.0", "data": data}, str(tmp_path / "card.json"))


def test_a_bar_write_keeps_the_authors_key_order_through_the_session_file(qtbot, view, tmp_path):
    card = _card(tmp_path)
    chat = Chat.create(tmp_path / "c", card, ReplayModel(actor=[]))
    items = chat.transcript()
    written: list = []

    def write(name, payload):
        written.append(payload)
        chat.write_frame_variables(payload.get("message_id"), payload.get("variables") or {},
                                   str(payload.get("type") or "message"))
    view.frameVariablesChanged.connect(write)
    view.set_transcript([dict(it, id=str(i), entry_id=it["id"], text=chat.display_text(it, len(items) - 1 - i))
                         for i, it in enumerate(items)], False)
    rep = wait_report(qtbot, view, "TH-message--0--0", lambda r: "before" in r, timeout=20.0)
    assert rep == {"before": ["z最后", "a最先", "m中间"], "inner": ["b", "a"]}
    qtbot.waitUntil(lambda: bool(written), timeout=10000)
    assert list(written[0]["variables"]["stat_data"]) == ["任务", "Zeta", "alpha"]
    again = Chat.open(tmp_path / "c", card, ReplayModel(actor=[]))
    stat = again.transcript()[0]["variables"]["stat_data"]
    assert list(stat) == ["任务", "Zeta", "alpha"]
    assert list(stat["任务"]) == ["z最后", "a最先", "m中间", "c新"]
    assert list(stat["任务"]["m中间"]) == ["b", "a"]


def test_the_display_worker_hands_items_back_with_their_key_order(qtbot):
    """The window re-renders an item when its display scripts ran (regex_worker.DisplayWorker.filled): the item's
    variables come back in the author's order, not sorted (the window's path that the preview does not take)."""
    from liyuan_desktop.ui.frames.regex_worker import DisplayWorker

    w = DisplayWorker()
    got: list = []
    w.filled.connect(lambda gen, item, text: got.append(item))
    try:
        w.submit([{"id": "1", "text": "x", "variables": {"stat_data": {"任务": TASKS, "Zeta": 1, "alpha": 2}}}],
                 lambda it: (it["text"], []))
        qtbot.waitUntil(lambda: bool(got), timeout=10000)
    finally:
        w.shutdown()
    stat = got[0]["variables"]["stat_data"]
    assert list(stat) == ["任务", "Zeta", "alpha"] and list(stat["任务"]) == ["z最后", "a最先", "m中间"]
