"""Issue 13 §4, core side: display regex results cached on disk beside the chat (hit on reopen, rebuilt when the
file is damaged, never written for a timed-out run), the scripts' warnings handed to the caller, and a script
running on a worker thread while the calling thread keeps going."""

from __future__ import annotations

import threading
import time

from heavy_regex_card import SLOW_SCRIPT, THINK_SCRIPT, heavy_reply, make_card, make_chat

from liyuan_desktop.core.chat.display_cache import CACHE_FILENAME
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel


def _open(d, card):
    return Chat.open(d, card, ReplayModel(actor=[]))


def test_display_cache_hit_on_reopen(tmp_path):
    card, _ = make_card(tmp_path, [THINK_SCRIPT])
    d = make_chat(tmp_path, card, beats=3, chars=400)
    chat = _open(d, card)
    items = chat.transcript()
    n = len(items)
    replies = [(i, it) for i, it in enumerate(items) if it["role"] == "assistant"]
    assert len(replies) == 3
    for i, it in replies:
        assert chat.display_text_if_known(it, n - 1 - i) is None  # nothing cached yet: scripts must run
    shown = {i: chat.display_text(it, n - 1 - i) for i, it in replies}
    assert all("<think>" not in t and "雨落在青石板上" in t for t in shown.values())
    assert (d / CACHE_FILENAME).exists()
    again = _open(d, card)  # a new process would see the same: the cache is on disk
    for i, it in replies:
        assert again.display_text_if_known(it, n - 1 - i) == shown[i]
    # the stored text never changed
    assert all("<think>" in it["text"] for _, it in replies)


def test_cache_follows_the_scripts_and_survives_damage(tmp_path):
    card, card_dir = make_card(tmp_path, [THINK_SCRIPT])
    d = make_chat(tmp_path, card, beats=1, chars=200)
    chat = _open(d, card)
    it = chat.transcript()[-1]
    chat.display_text(it, 0)
    assert chat.display_text_if_known(it, 0) is not None
    chat.set_scripts_allowed(False, remember=False)  # another script set: no entry of the old one is used
    assert chat.display_text_if_known(it, 0) == it["text"]
    chat.set_scripts_allowed(True, remember=False)
    (d / CACHE_FILENAME).write_bytes(b"not a database at all" * 100)
    fresh = _open(d, card)
    assert fresh.display_text_if_known(it, 0) is None  # damaged file: started again, nothing known
    assert "<think>" not in fresh.display_text(it, 0)
    assert _open(d, card).display_text_if_known(it, 0) is not None


def test_timed_out_script_is_reported_and_not_persisted(tmp_path):
    card, _ = make_card(tmp_path, [SLOW_SCRIPT])
    d = make_chat(tmp_path, card, beats=1, reply="a" * 40 + "!")
    chat = _open(d, card)
    it = chat.transcript()[-1]
    issues: list[str] = []
    out = chat.display_text(it, 0, issues)
    assert out == it["text"]
    assert len(issues) == 1 and "卡死的正则" in issues[0] and "time limit" in issues[0]
    assert _open(d, card).display_text_if_known(it, 0) is None  # not on disk: tried again next time


def test_scripts_run_on_a_worker_thread_without_stalling_the_caller(tmp_path):
    """QuickJS releases the GIL while a regex runs: the calling thread keeps running while a worker scripts."""
    card, _ = make_card(tmp_path, [THINK_SCRIPT])
    d = make_chat(tmp_path, card, beats=4, chars=5000)
    chat = _open(d, card)
    items = chat.transcript()
    n = len(items)
    done: list[str] = []

    def work() -> None:
        for i, it in enumerate(items):
            done.append(chat.display_text(it, n - 1 - i))

    th = threading.Thread(target=work)
    th.start()
    worst, last, ticks = 0.0, time.perf_counter(), 0
    while th.is_alive():
        time.sleep(0.002)
        now = time.perf_counter()
        worst, last, ticks = max(worst, now - last), now, ticks + 1
    th.join()
    assert len(done) == n and all("<think>" not in t for t in done)
    assert ticks > 5
    assert worst < 0.25, f"the calling thread was held {worst:.3f} s"  # generous stall bound (2 shared cores)
    assert heavy_reply(1, 100).startswith("<think>")
