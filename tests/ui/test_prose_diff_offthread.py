"""The checkpoint timeline's prose diff of a whole chapter without stalling the window (issue 15 item 12): above
``SYNC_DIFF_CHARS`` the diff is computed on a worker thread, and a long document goes into the text browser a part
at a time (one paragraph per line of text, small tables in 并排) — it was one 125-200 ms step on the UI thread for a
20,000-character chapter side by side. Small diffs stay immediate (the other diff tests read them at once)."""

from __future__ import annotations

import threading

import pytest
from uihelpers import LoopStallMeter

from liyuan_desktop.core.story.checkpoint_model import FileDiff
from liyuan_desktop.ui.writing import prose_diff
from liyuan_desktop.ui.writing.prose_diff import ProseDiffView

STALL_BOUND_MS = 1000


def _chapter(n: int) -> str:
    return "".join(f"第{i}句，雨还在下，檐下灯火摇晃。" + ("\n" if i % 4 == 3 else "") for i in range(n))


def _big_change() -> FileDiff:
    old = _chapter(1200)  # ~22,000 characters
    lines = old.split("\n")
    new = "\n".join(line.replace("雨", "雪", 1) if k % 3 == 0 else line for k, line in enumerate(lines))
    return FileDiff(name="001-雨.md", status="modified", old_text=old, new_text=new)


def _view(qtbot) -> ProseDiffView:
    v = ProseDiffView()
    qtbot.addWidget(v)
    v.resize(900, 700)
    v.show()
    return v


@pytest.mark.parametrize("side", [False, True])
def test_a_whole_chapter_diff_is_computed_off_the_ui_thread_and_shown_in_parts(qtbot, monkeypatch, side,
                                                                                record_property):
    threads = []
    real = prose_diff.diff_prose

    def spy(old, new):
        threads.append(threading.current_thread())
        return real(old, new)

    monkeypatch.setattr(prose_diff, "diff_prose", spy)
    f = _big_change()
    v = _view(qtbot)
    v.set_side_by_side(side)
    v.set_full(True)
    with LoopStallMeter() as meter:
        v.show_files([f])
        assert v.pending and "正在比较" in v.plain_text()  # shown at once, computed elsewhere
        qtbot.waitUntil(v.filled, timeout=30000)
    record_property(f"diff_{'side' if side else 'inline'}_worst_stall_ms", round(meter.worst_ms))
    assert threads and all(t is not threading.main_thread() for t in threads)
    shown = v.plain_text()
    # the same document a one-step render gives
    monkeypatch.setattr(prose_diff, "SYNC_DIFF_CHARS", 10**9)
    monkeypatch.setattr(prose_diff, "FILL_CHARS", 10**9)
    ref = _view(qtbot)
    ref.set_side_by_side(side)
    ref.set_full(True)
    ref.show_files([f])
    assert ref.filled() and not ref.pending
    assert shown == ref.plain_text()
    assert v.marks == ref.marks and len(v.marks) > 100
    assert "第0句" in shown and "第1199句" in shown
    assert meter.worst_ms < STALL_BOUND_MS, meter.worst_ms


def test_a_new_selection_drops_a_diff_still_being_computed(qtbot):
    v = _view(qtbot)
    v.show_files([_big_change()])
    assert v.pending
    v.show_note("没有改动")  # e.g. another checkpoint chosen meanwhile
    assert not v.pending
    qtbot.wait(300)  # the worker finishes; its result is not shown
    assert v.plain_text().strip() == "没有改动" and v.files == []


def test_small_diffs_stay_immediate(qtbot):
    old = _chapter(40)
    v = _view(qtbot)
    v.show_files([FileDiff(name="a.md", status="modified", old_text=old, new_text=old.replace("第20句，雨", "第20句，雪"))])
    assert not v.pending and v.filled() and v.marks == [("delete", "雨"), ("insert", "雪")]
