"""Engine events carry message keys end to end (issue 32 §1): a notice put into an event's text field stays a
``core.messages.Msg`` (pydantic's ``str`` used to copy it into a plain string, and the English window then had to
match the Chinese text back to a key); the beat loop's own notices are catalog messages whose Chinese text is
unchanged, so logs, session files and golden runs see the same bytes."""

from __future__ import annotations

import json

from liyuan_desktop.core.beat import loop
from liyuan_desktop.core.beat.events import Activity, BeatFinished, Compacted, ScribeFinished, ToolFinished
from liyuan_desktop.core.messages import Msg, message, render


def test_event_fields_keep_the_message():
    m = message("beat.call_failed", error="timeout")
    for ev, value in ((Activity(text=m), lambda e: e.text), (ToolFinished(round=1, call_id="c", name="t", ok=False,
                                                                           result=None, summary=m), lambda e: e.summary),
                      (BeatFinished(outcome="error", final="", sealed=False, message=m), lambda e: e.message),
                      (Compacted(error=m), lambda e: e.error), (ScribeFinished(error=m, warnings=[m]),
                                                               lambda e: e.warnings[0])):
        got = value(ev)
        assert isinstance(got, Msg) and got.key == "beat.call_failed", type(ev)
        assert render(got, "en") == "The model call failed: timeout"
        assert json.loads(ev.model_dump_json())  # still serialises as a string
    assert Activity(text="plain").text == "plain"


def test_loop_notices_are_messages_with_the_old_chinese_text():
    assert isinstance(loop.ECHO_NOTICE, Msg) and loop.ECHO_NOTICE == "回复里复述了提示里的数据块（或仿写了开场标签），已去掉"
    assert loop.UNSEALED_NOTICE == "本拍尚未收笔" and render(loop.UNSEALED_NOTICE, "en") == "This beat is not sealed yet"
    calls = message("beat.text_calls", names=["draft_write", "seal"])
    assert calls == loop.TEXT_CALLS_NOTICE.format(names="draft_write、seal")
    assert render(calls, "en") == "The reply wrote its tool calls as text (draft_write, seal); they were run as tool calls"
