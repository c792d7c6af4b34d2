"""Long sessions (issue 7): opening a chat of 1,000 / 10,000 beats, its memory, and the cost of the next beat.

    python bench/long_session.py [--beats 1000 10000] [--runs 20] [--replay 100 10000] [--ui]

For each size it writes a chat like a real game (per beat: the user's words; a beat log with two model calls —
reasoning, a draft_write of a ~600-character draft with its tool result, a draft_seal —, the draft, the injection,
the encoded ``sent`` prompt; a ~600-character final; a ledger snapshot), then, each in a fresh Python process:

* open: ``Chat.open`` (session file, card, lorebook, system prompt, meta.json) + the newest transcript page the
  conversation view shows first (ui/chat_flow.PAGE items) — the time until the last screen can be drawn; each
  time figure is the best of three fresh processes (the machine may be busy);
* memory: tracemalloc peak during that open and the process RSS growth it caused (the opened chat kept alive);
* assembly per beat at the largest size: ``Chat.prepare`` for the next beat (history, ledger, lore activation,
  messages) — the first call (which builds the history cache from scratch) and the median of the next ``--runs``;
* a full beat on the replay model (draft_write + draft_seal + scribe, fsync) with 100 vs 10,000 prior beats
  (``--replay``): median of ``--runs`` beats after the first;
* ``--ui``: MainWindow (offscreen) opening the largest chat until the view has its last page (optional; needs Qt);
* an imported SillyTavern chat of ``--st`` messages (default 100,000; ``--st`` with no number skips it): the import
  (``core.chat.st_import.import_st_folder``: parse, write, index) and then opening it (``Chat.open`` + the first page,
  as a freshly started app does), medians of ``--st-runs`` fresh processes each (issue 15 item 11).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CARD = ROOT / "cards" / "青梧" / "default_Qingwu.json"
PAGE = 60  # liyuan_desktop.ui.window.chat_flow.PAGE (not imported: that pulls in Qt)
FINAL = ("她正往账本上记什么，闻言笔尖一顿，墨在纸上洇开一点。檐下的雨声密了，灯芯噼啪一响，她抬眼看你：「客官要住几日？」\n\n" * 12)[:600]
USER = "我把湿透的外衣搭在椅背上，接过茶喝了一口：「住三天。顺便打听个人。」"
INJECTION = ("【世界状态】\n时间：傍晚（雨中）\n地点：青梧的客栈\n青梧：好感 5，客栈掌柜，在青梧的客栈\n线索：旅人查访怀瑾公子\n\n"
             "【登场名录】青梧（在场）\n\n【设定集索引】共 12 条：客栈、渡口、怀瑾公子、雨季、旧账本、后院、码头、茶、灯、镇口、北山、信\n\n"
             "【语言】以中文写叙事与对白（专有名词可保留原文）。")
PATCH = {"time": "傍晚（雨中）", "location": "青梧的客栈",
         "characters": {"青梧": {"affinity": 5, "status": "客栈掌柜", "at": "青梧的客栈"}},
         "plot_threads": ["旅人查访怀瑾公子"]}


def write_chat(directory: Path, n: int) -> int:
    """Create a chat folder with ``n`` past beats (see the module doc). Returns the session file's size in bytes.
    Lines are written the way the engine writes them (session._dump of the typed entries)."""
    from liyuan_desktop.core.cards import load_card
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.ledger.state import WorldState, apply_patch
    from liyuan_desktop.core.llm.replay import ReplayModel
    from liyuan_desktop.core.session import (
        AssistantEntry,
        BeatEntry,
        CallLog,
        StateEntry,
        ToolCallLog,
        UserEntry,
        new_id,
    )
    from liyuan_desktop.core.session.tree import _dump

    chat = Chat.create(directory, load_card(CARD), ReplayModel(actor=[]))
    tree = chat.tree
    parent = tree.leaf_id
    state = apply_patch(WorldState(), PATCH).state.to_dict()
    path = tree.path
    taken: set[str] = set(tree.entries)
    ts = tree.header.ts
    with open(path, "a", encoding="utf-8") as f:
        for i in range(n):
            ids = []
            for _ in range(4):
                ids.append(new_id(taken))
                taken.add(ids[-1])
            ts += 60_000
            draft = f"{FINAL[:-8]}（第 {i} 拍）"
            calls = [
                CallLog(round=1, reasoning="先想一想她会怎么答。" * 30, model="deepseek-chat", ms=2140.5,
                        usage={"prompt_tokens": 7519 + i, "completion_tokens": 812, "prompt_cache_hit_tokens": 6784},
                        finish_reason="tool_calls",
                        tool_calls=[ToolCallLog(id=f"call_{i}_1", name="draft_write", mode="write", ms=0.4,
                                                arguments=json.dumps({"version": 0, "content": draft}, ensure_ascii=False),
                                                result={"ok": True, "version": 1, "chars": len(draft)})]),
                CallLog(round=2, model="deepseek-chat", ms=610.0, finish_reason="tool_calls",
                        usage={"prompt_tokens": 8400 + i, "completion_tokens": 20, "prompt_cache_hit_tokens": 8300},
                        tool_calls=[ToolCallLog(id=f"call_{i}_2", name="draft_seal", mode="write", arguments='{"version": 1}',
                                                result={"ok": True, "sealed": True, "version": 1})]),
            ]
            sent = {"messages": [{"history": [0, 2 * i + 1]}, {"role": "user", "content": f"{INJECTION}\n\n{USER}（第 {i} 拍）"}],
                    "tools": ["draft_write", "draft_append", "draft_read", "draft_search", "draft_edit", "draft_seal",
                              "previous_draft_edit", "ask", "world_state_get", "lorebook_search", "lorebook_list"],
                    "system_sha256": "9f2c" * 16}
            entries = [
                UserEntry(id=ids[0], parent_id=parent, ts=ts, text=f"{USER}（第 {i} 拍）"),
                BeatEntry(id=ids[1], parent_id=ids[0], ts=ts + 3000, calls=calls, outcome="sealed", draft=draft,
                          draft_version=1, injection=INJECTION, activated=["客栈"], sent=sent,
                          activity=["写稿 · 版本 1 · 600 字", "收笔 · 版本 1"],
                          lore_timed={"sticky": {}, "cooldown": {}, "delay": {}}),
                AssistantEntry(id=ids[2], parent_id=ids[1], ts=ts + 3001, text=draft, beat=ids[1]),
                StateEntry(id=ids[3], parent_id=ids[2], ts=ts + 4000, state=state, source="scribe",
                           applied=["time → 傍晚（雨中）"], raw=json.dumps({"patch": PATCH}, ensure_ascii=False)),
            ]
            f.write("".join(_dump(e) + "\n" for e in entries))
            parent = ids[3]
        leaf = {"id": new_id(taken), "parent_id": None, "ts": ts + 5000, "type": "leaf", "target": parent}
        f.write(json.dumps(leaf, ensure_ascii=False, separators=(",", ":")) + "\n")
    return path.stat().st_size


def write_st_file(path: Path, n: int) -> int:
    """A SillyTavern chat file of ``n`` messages (character / user alternating, ~200 characters each, the
    character's with a swipe list as ST writes them). Returns its size in bytes."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"user_name": "旅人", "character_name": "青梧", "create_date": "2024-10-18@20h52m17s",
                            "chat_metadata": {}}, ensure_ascii=False) + "\n")
        for i in range(n):
            user = i % 2 == 1
            mes = f"第 {i} 条。" + "檐下的雨声密了，灯芯噼啪一响，她抬眼看你。" * 8
            m = {"name": "旅人" if user else "青梧", "is_user": user, "is_system": False,
                 "send_date": "October 18, 2024 8:52pm", "mes": mes}
            if not user:
                m.update(swipes=[mes], swipe_id=0, swipe_info=[{}], extra={"api": "openai", "model": "x"})
            f.write(json.dumps(m, ensure_ascii=False) + "\n")
    return path.stat().st_size


def child_st(src: Path, directory: Path) -> dict:
    """Import ``src`` into ``directory`` (which must not exist); with ``src`` None, open ``directory`` (Chat.open +
    the first page) as a freshly started app would."""
    from liyuan_desktop.core.cards import load_card
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.chat.st_import import import_st_folder
    from liyuan_desktop.core.llm.replay import ReplayModel

    card = load_card(CARD)
    model = ReplayModel(actor=[])
    with tempfile.TemporaryDirectory() as d:  # warm imports and caches on a tiny chat
        write_st_file(Path(d) / "w.jsonl", 4)
        import_st_folder(Path(d) / "w.jsonl", card, Path(d) / "warm")
        _first_page(Chat.open(Path(d) / "warm", card, model))
    t0, c0 = time.perf_counter(), time.process_time()
    if src is not None:
        import_st_folder(src, card, directory)
        return {"import_ms": (time.perf_counter() - t0) * 1000, "import_cpu_ms": (time.process_time() - c0) * 1000}
    page = _first_page(Chat.open(directory, card, model))
    return {"open_ms": (time.perf_counter() - t0) * 1000, "open_cpu_ms": (time.process_time() - c0) * 1000,
            "items": len(page)}


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _first_page(chat) -> list:
    """The items the conversation view gets first: the newest PAGE items of the transcript."""
    if hasattr(chat, "transcript_page"):
        return chat.transcript_page(None, PAGE)[2]
    return chat.transcript()[-PAGE:]  # before issue 7


def child_open(directory: Path, trace: bool) -> dict:
    """Open the chat (card loaded first, not timed) and fetch the first page; figures as a dict."""
    import gc
    import tracemalloc

    from liyuan_desktop.core.cards import load_card
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm.replay import ReplayModel
    from liyuan_desktop.core.session.tree import SessionTree

    card = load_card(CARD)
    model = ReplayModel(actor=[])
    # warm imports and caches on a tiny chat so the figure is the chat's own cost
    with tempfile.TemporaryDirectory() as d:
        write_chat(Path(d) / "warm", 2)
        _first_page(Chat.open(Path(d) / "warm", card, model))
    gc.collect()
    out: dict = {}
    if trace:
        tracemalloc.start()
        base = rss_kb()
        chat = Chat.open(directory, card, model)
        page = _first_page(chat)
        _cur, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        gc.collect()
        out.update(peak_mb=peak / 2**20, rss_mb=(rss_kb() - base) / 1024, items=len(page))
        return out
    base = rss_kb()
    t0 = time.perf_counter()
    tree = SessionTree.open(directory / "session.jsonl")
    t1 = time.perf_counter()
    del tree
    gc.collect()
    t2 = time.perf_counter()
    chat = Chat.open(directory, card, model)
    t3 = time.perf_counter()
    page = _first_page(chat)
    t4 = time.perf_counter()
    out.update(tree_ms=(t1 - t0) * 1000, chat_open_ms=(t3 - t2) * 1000, page_ms=(t4 - t3) * 1000,
               open_ms=(t4 - t2) * 1000, rss_open_mb=(rss_kb() - base) / 1024, items=len(page),
               entries=len(chat.tree.order))
    # assembly for the next beat: the first prepare builds the history cache, later ones reuse it (a model whose
    # window holds the whole chat: a 10,000-beat chat is trimmed or compacted on a 64k window, measured elsewhere)
    chat.context_window = 10**9
    t0 = time.perf_counter()
    chat.prepare(f"{USER}（下一拍）")
    out["prepare_first_ms"] = (time.perf_counter() - t0) * 1000
    times = []
    for i in range(20):
        t0 = time.perf_counter()
        chat.prepare(f"{USER}（下一拍 {i}）")
        times.append((time.perf_counter() - t0) * 1000)
    out["prepare_median_ms"] = statistics.median(times)
    return out


def script(runs: int):
    """The replay script of bench/beat_overhead.py (draft_write + seal + scribe per beat)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from beat_overhead import script as overhead_script

    return overhead_script(runs)


def child_replay(directory: Path, runs: int) -> dict:
    """Play runs+1 beats on the replay model; the first (history cache built from scratch) reported apart."""
    import asyncio

    from liyuan_desktop.core.cards import load_card
    from liyuan_desktop.core.chat.facade import Chat

    chat = Chat.open(directory, load_card(CARD), script(runs + 1))
    # a model whose window holds the whole chat: this measures the beat's own overhead; compaction of a chat
    # bigger than the window is measured by bench/prefix_cache.py
    chat.context_window = 10**9

    async def go() -> list[float]:
        times = []
        for i in range(runs + 1):
            t0 = time.perf_counter()
            res = await chat.send(f"{USER}（测 {i}）")
            times.append((time.perf_counter() - t0) * 1000)
            assert res.sealed, res.outcome
        return times

    times = asyncio.run(go())
    return {"first_ms": times[0], "median_ms": statistics.median(times[1:]), "max_ms": max(times[1:])}


def child_ui(directory: Path) -> dict:
    """MainWindow (offscreen) opening the chat the way open_chat does (Chat.open, then _after_open) until the
    conversation page has drawn the items it was handed (checked in the page itself)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("LIYUAN_HOME", str(directory.parent / "home"))
    from liyuan_desktop.runtime import prepare_env

    prepare_env()  # web engine flags as the app sets them (sandbox, log level)
    from PySide6 import QtWebEngineWidgets  # noqa: F401  before the QApplication exists
    from PySide6.QtCore import QEventLoop
    from PySide6.QtWidgets import QApplication

    from liyuan_desktop.core import settings as S
    from liyuan_desktop.core.cards import load_card
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm.replay import ReplayModel
    from liyuan_desktop.ui.window.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    win = MainWindow(S.AppSettings())
    win.show()

    def spin(pred, timeout: float = 60.0) -> None:
        end = time.perf_counter() + timeout
        while not pred():
            if time.perf_counter() > end:
                raise SystemExit("UI bench timed out")
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)

    spin(win.view.is_ready)
    card = load_card(CARD)
    t0 = time.perf_counter()
    win.chat = Chat.open(directory, card, ReplayModel(actor=[]))
    win.is_demo = False
    win._after_open()
    box: list = []
    win.view.eval_js("document.querySelectorAll('#log [data-role]').length", box.append)
    spin(lambda: bool(box))
    t1 = time.perf_counter()
    return {"ui_open_ms": (t1 - t0) * 1000, "shown": box[0]}


def run_child(*args: str) -> dict:
    r = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"child {args} failed:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--beats", type=int, nargs="*", default=[1000, 10000])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--replay", type=int, nargs="*", default=[100, 10000])
    ap.add_argument("--ui", action="store_true")
    ap.add_argument("--st", type=int, nargs="*", default=[100_000])
    ap.add_argument("--st-runs", type=int, default=3)
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, directory = args.child[0], Path(args.child[1])
        if kind == "open":
            res = child_open(directory, trace=False)
        elif kind == "trace":
            res = child_open(directory, trace=True)
        elif kind == "replay":
            res = child_replay(directory, int(args.child[2]))
        elif kind == "st":
            res = child_st(None if args.child[1] == "-" else directory, Path(args.child[2]))
        else:
            res = child_ui(directory)
        print(json.dumps(res), flush=True)
        if kind == "ui":
            os._exit(0)  # skip Qt's teardown at interpreter exit (the figure is out)
        return
    print(f"long_session: each figure from a fresh process; first page = newest {PAGE} transcript items")
    for n in args.st:
        with tempfile.TemporaryDirectory() as d:
            src = Path(d) / "st.jsonl"
            size = write_st_file(src, n)
            imp = [run_child("st", str(src), str(Path(d) / f"chat-{k}")) for k in range(args.st_runs)]
            opens = [run_child("st", "-", str(Path(d) / "chat-0")) for _ in range(args.st_runs)]

            def med(rs: list, key: str) -> float:
                return statistics.median(r[key] for r in rs)

            print(f"  SillyTavern chat of {n} messages ({size / 1e6:.1f} MB), medians of {args.st_runs} fresh processes "
                  f"(wall / CPU): import {med(imp, 'import_ms'):.0f} / {med(imp, 'import_cpu_ms'):.0f} ms | open "
                  f"(Chat.open + 1st page) {med(opens, 'open_ms'):.0f} / {med(opens, 'open_cpu_ms'):.0f} ms "
                  f"({opens[0]['items']} items)")
    if args.st:
        print()
    if not args.beats and not args.replay:
        return
    with tempfile.TemporaryDirectory() as d:
        dirs: dict[int, Path] = {}
        sizes = sorted(set(args.beats) | set(args.replay))
        for n in sizes:
            t0 = time.perf_counter()
            dirs[n] = Path(d) / f"chat-{n}"
            size = write_chat(dirs[n], n)
            print(f"  wrote {n:>6} beats: {size / 1e6:6.1f} MB in {time.perf_counter() - t0:.1f} s")
        print()
        print(f"{'beats':>6} | {'tree load':>9} | {'Chat.open':>9} | {'1st page':>8} | {'open+page':>9} | "
              f"{'tracemalloc peak':>16} | {'RSS +':>8} | {'prepare 1st':>11} | {'prepare med':>11}")
        for n in args.beats:
            # the source of truth is on disk; open it as the app would (first beat's prepare included)
            runs = [run_child("open", str(dirs[n])) for _ in range(3)]  # best of three fresh processes
            o = {k: min(r[k] for r in runs) for k in runs[0]}
            t = run_child("trace", str(dirs[n]))
            print(f"{n:>6} | {o['tree_ms']:7.0f}ms | {o['chat_open_ms']:7.0f}ms | {o['page_ms']:6.1f}ms | "
                  f"{o['open_ms']:7.0f}ms | {t['peak_mb']:13.1f} MB | {o['rss_open_mb']:5.1f} MB | "
                  f"{o['prepare_first_ms']:9.1f}ms | {o['prepare_median_ms']:9.2f}ms")
        if args.replay:
            print()
            print(f"full beat on the replay model (draft_write + draft_seal + scribe, fsync), {args.runs} beats after the first:")
            for n in args.replay:
                r = run_child("replay", str(dirs[n]), str(args.runs))
                print(f"  {n:>6} prior beats: first {r['first_ms']:7.1f} ms | median {r['median_ms']:6.2f} ms | max {r['max_ms']:6.2f} ms")
        if args.ui:
            n = max(args.beats)
            u = run_child("ui", str(dirs[n]))
            print()
            print(f"MainWindow (offscreen) opening {n} beats to its last page: {u['ui_open_ms']:.0f} ms ({u['shown']} items shown)")


if __name__ == "__main__":
    main()
