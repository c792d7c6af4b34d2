"""World-info activation time for a big book over a long chat.

    python bench/lorebook.py [--entries 2000] [--messages 2000] [--runs 50] [--seed 7]
    python bench/lorebook.py --big 50000      # the very-big-book lines: open cold/warm, activation, index size
    python bench/lorebook.py --wi-file 50000  # the same book as a SillyTavern World Info file on disk

Builds a synthetic book of ``--entries`` entries (three keys each: ASCII words, Chinese words, some multi-word keys,
one ``/regex/i`` key per 50 entries, secondary keys with every logic on one entry in ten, a few constants, groups and
probabilities; ~120-character contents of which some name other entries' keys, so recursion has work to do) and a
chat of ``--messages`` messages (~150 characters, a key in one message of five). Then it times
``Lorebook.activate_detailed`` at scan depth 2 and 10 (recursion on, as SillyTavern's default; and off), printing
the median / p90 / max over ``--runs`` runs after one warm-up run, the number of activated entries and scan passes,
and the one-off compile time (keys are compiled once per book and cached). Targets: < 5 ms at depth 2, < 20 ms at
depth 10 (lessons.md: SillyTavern stalls for seconds here at ~2,000 messages).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from liyuan_desktop.core.lore import ActivationOptions, Lorebook, ScanMessage, TimedEffects  # noqa: E402

HAN = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严龙飞"
WORDS = [f"{a}{b}" for a in ("ka", "lo", "mi", "sa", "te", "vo", "ri", "du") for b in ("ran", "bel", "dor", "mek", "tis", "vun", "zal", "gor")]


def ascii_word(rng: random.Random, i: int) -> str:
    return f"{rng.choice(WORDS)}{i}"


def han_word(rng: random.Random) -> str:
    return "".join(rng.choice(HAN) for _ in range(rng.randint(2, 4)))


def build_book(n: int, rng: random.Random) -> tuple[Lorebook, list[str]]:
    entries, all_keys = [], []
    for i in range(n):
        keys = [ascii_word(rng, i), han_word(rng), f"{rng.choice(WORDS)} {rng.choice(WORDS)}{i}"]
        if i % 50 == 0:
            keys[2] = f"/{rng.choice(WORDS)}{i}(?:s|es)?/i"
        all_keys += keys[:2]
        entries.append((i, keys))
    raw = []
    for i, keys in entries:
        filler = "".join(rng.choice(HAN) for _ in range(100))
        if i % 7 == 0:  # name another entry's key: recursion chains
            filler += " " + rng.choice(all_keys)
        e = {
            "id": i, "keys": keys, "content": filler, "enabled": True, "insertion_order": rng.randint(0, 300),
            "comment": f"条目{i}", "selective": True, "constant": i % 400 == 0,
            "secondary_keys": [han_word(rng), ascii_word(rng, i + n)] if i % 10 == 0 else [],
            "extensions": {"selectiveLogic": (i // 10) % 4, "group": f"g{i % 40}" if i % 13 == 0 else "",
                           "probability": 50 if i % 17 == 0 else 100, "useProbability": True,
                           "position": i % 5},
        }
        raw.append(e)
    book = Lorebook.from_card_book({"name": "bench", "entries": raw}, "bench")
    return book, all_keys


def build_chat(m: int, keys: list[str], rng: random.Random) -> list[ScanMessage]:
    out = []
    for j in range(m):
        text = "".join(rng.choice(HAN) for _ in range(120)) + " " + " ".join(rng.choice(WORDS) for _ in range(5))
        if j % 5 == 0:
            text += f" {rng.choice(keys)} "
        out.append(ScanMessage(name="用户" if j % 2 == 0 else "角色", text=text))
    return out


def timeit(book: Lorebook, chat: list[ScanMessage], runs: int) -> tuple[list[float], int, int]:
    rng = random.Random(1)
    res = book.activate_detailed(chat, ActivationOptions(timed=TimedEffects(), rng=rng))  # warm-up
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        res = book.activate_detailed(chat, ActivationOptions(timed=TimedEffects(), rng=rng))
        times.append((time.perf_counter() - t) * 1000)
    return times, len(res.entries), res.steps


def _forget_memory() -> None:
    """What a new process starts without: the parsed-book memo, the automata in memory, the compiled key matchers
    (the disk cache stays)."""
    from liyuan_desktop.core.lore import bookcache, keys, lorebook

    lorebook._PARSED_MEMO.clear()
    bookcache._AC_MEMO.clear()
    bookcache._TAG.clear()  # the parser fingerprint is computed again, as a new process does
    keys.compile_key.cache_clear()


def _open_as_a_chat(raw: dict) -> Lorebook:
    """The lore part of opening a chat (core/chat/context.py): the card's book built once (the MVU [InitVar] reader
    reads that same book), merged, the byte-stable constants placed (without compiling the whole book: the compile
    waits for the first activation, timed on its own line)."""
    from liyuan_desktop.core.lore import merge_books

    card = Lorebook.from_card_book(raw, "big")
    book = merge_books([card])
    book.fixed_constants("big")
    return book


def big_line(n: int, rng: random.Random, runs: int = 5) -> None:
    """The "very big book" lines (issue 15 item 10), medians of ``runs``: opening a chat's lore cold (empty cache:
    parse, compile, write the cache) and warm (a new process: memory memos cleared, the disk cache kept), activation
    per beat over a 20-message chat at depth 2 with recursion off and on, and the size of the 【设定集索引】 block
    sent every beat. Targets: open < 1 s, activation < 20 ms."""
    import shutil

    from liyuan_desktop.core.ledger.state import WorldState
    from liyuan_desktop.core.lore import bookcache
    from liyuan_desktop.core.prompt.assemble import build_injection

    captured: dict = {}
    orig = Lorebook.from_card_book
    Lorebook.from_card_book = staticmethod(lambda d, name="", source="card": captured.setdefault("d", d) and orig(d, name, source))  # type: ignore[method-assign]
    try:
        _, keys = build_book(n, rng)
    finally:
        Lorebook.from_card_book = orig  # type: ignore[method-assign]
    raw = captured["d"]
    cold, warm, cold_cpu, warm_cpu = [], [], [], []
    for _ in range(runs):
        shutil.rmtree(bookcache.folder(), ignore_errors=True)
        _forget_memory()
        t, c = time.perf_counter(), time.process_time()
        _open_as_a_chat(raw)
        cold.append((time.perf_counter() - t) * 1000)
        cold_cpu.append((time.process_time() - c) * 1000)
        _forget_memory()
        t, c = time.perf_counter(), time.process_time()
        big = _open_as_a_chat(raw)
        warm.append((time.perf_counter() - t) * 1000)
        warm_cpu.append((time.process_time() - c) * 1000)
    size = sum(f.stat().st_size for f in bookcache.folder().iterdir()) / 1e6
    chat = build_chat(20, keys, rng)
    t, c = time.perf_counter(), time.process_time()
    big.activate_detailed(chat, ActivationOptions(timed=TimedEffects(), rng=random.Random(1)))  # compiles the book, builds the key index
    first = ((time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000)
    act = {}
    # recursion on as SillyTavern runs it: with its default budget (25 % of the context; a 32,768-token window),
    # and with no budget at all (the run is then stopped by the safety bound, activation.SAFETY_MAX_*)
    cases = (("off", False, None), ("on, budget 25 % of 32k", True, 8192), ("on, no budget", True, None))
    for label, recursive, budget in cases:
        big.recursive, big.scan_depth = recursive, 2
        big.activate_detailed(chat, ActivationOptions(timed=TimedEffects(), rng=random.Random(1), budget_tokens=budget))  # warm-up
        times, cpu = [], []
        for _ in range(runs if recursive else max(runs, 7)):
            t, c = time.perf_counter(), time.process_time()
            res = big.activate_detailed(chat, ActivationOptions(timed=TimedEffects(), rng=random.Random(1), budget_tokens=budget))
            times.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
        act[label] = (statistics.median(times), statistics.median(cpu), len(res.entries), res.steps,
                      res.budget_overflowed, res.safety_stopped)
    titles = big.index_titles()
    block = next(b for b in build_injection(WorldState(), [e.display_title for e in res.entries], titles).split("\n\n")
                 if b.startswith("【设定集索引】"))
    print(f"big book {n} entries (medians of {runs}): open cold {statistics.median(cold):.0f} ms "
          f"(CPU {statistics.median(cold_cpu):.0f}), open warm from the cache {statistics.median(warm):.0f} ms "
          f"(CPU {statistics.median(warm_cpu):.0f}; target < 1000; cache files {size:.1f} MB)")
    print(f"  first activation (compiles the book, loads the key index): {first[0]:.0f} ms (CPU {first[1]:.0f})")
    for label, (med, med_cpu, hits, steps, over, safety) in act.items():
        why = " budget overflowed" if over else (" stopped by the safety bound" if safety else "")
        print(f"  activation per beat, recursion {label}, depth 2: median {med:.2f} ms (CPU {med_cpu:.2f}; "
              f"{hits} entries, {steps} passes{why}; target < 20 ms)")
    print(f"  index block {len(block)} characters for {len(titles)} titles (all titles: {len('、'.join(titles))})")


def wi_file_line(n: int, rng: random.Random, runs: int = 3) -> None:
    """The very big book as a SillyTavern World Info *file* (``{"entries": {"0": {…}, …}}``, issue 29 §8: its key
    order was O(n²)), read as a chat reads the books of its folder (``lore.books.load_books``): medians of ``runs``
    of the open cold (empty book cache) and of twice as many warm (a new process: memos cleared, disk cache kept;
    the file's JSON is not decoded), wall and CPU, the file's size, the engine time of the beat's activation over a
    20-message chat (recursion off and on, depth 2), and the first export (which decodes the file for the entries'
    raw JSON). Targets: open < 1 s, beat < 50 ms."""
    import json
    import shutil
    import tempfile

    from liyuan_desktop.core.lore import bookcache
    from liyuan_desktop.core.lore.books import load_books

    captured: dict = {}
    orig = Lorebook.from_card_book
    Lorebook.from_card_book = staticmethod(lambda d, name="", source="card": captured.setdefault("d", d) and orig(d, name, source))  # type: ignore[method-assign]
    try:
        _, keys = build_book(n, rng)
    finally:
        Lorebook.from_card_book = orig  # type: ignore[method-assign]
    folder = Path(tempfile.mkdtemp(prefix="liyuan-bench-wi-"))
    try:
        path = folder / "big.json"
        path.write_text(json.dumps(Lorebook.from_card_book(captured["d"], "big").to_world_info(), ensure_ascii=False),
                        "utf-8")
        cold, warm, cold_cpu, warm_cpu = [], [], [], []
        for _ in range(runs):
            shutil.rmtree(bookcache.folder(), ignore_errors=True)
            _forget_memory()
            t, c = time.perf_counter(), time.process_time()
            load_books(folder, "global")
            cold.append(time.perf_counter() - t)
            cold_cpu.append(time.process_time() - c)
            for _ in range(2):  # two warm opens per cold one (cheap): a steadier median
                _forget_memory()
                book = None
                t, c = time.perf_counter(), time.process_time()
                book = load_books(folder, "global")[0]
                warm.append(time.perf_counter() - t)
                warm_cpu.append(time.process_time() - c)
        t, c = time.perf_counter(), time.process_time()
        book.to_world_info()  # the first export decodes the file's JSON (the entries' raw JSON is lazy)
        export = (time.perf_counter() - t, time.process_time() - c)
        chat = build_chat(20, keys, rng)
        book.activate_detailed(chat, ActivationOptions(timed=TimedEffects(), rng=random.Random(1)))  # compiles, loads the key index
        beats = {}
        for recursive in (False, True):
            book.recursive, book.scan_depth = recursive, 2
            times = []
            for _ in range(max(runs, 5)):
                c = time.process_time()
                book.activate_detailed(chat, ActivationOptions(timed=TimedEffects(), rng=random.Random(1), budget_tokens=8192))
                times.append((time.process_time() - c) * 1000)
            beats[recursive] = statistics.median(times)
        print(f"World Info file {n} entries ({path.stat().st_size / 1e6:.0f} MB; medians of {runs} cold, "
              f"{len(warm)} warm): open cold {statistics.median(cold):.2f} s (CPU {statistics.median(cold_cpu):.2f}), "
              f"open warm {statistics.median(warm):.2f} s (CPU {statistics.median(warm_cpu):.2f}; target < 1 s); "
              f"beat activation CPU {beats[False]:.1f} ms recursion off, {beats[True]:.1f} ms on (target < 50 ms); "
              f"first export {export[0]:.2f} s (CPU {export[1]:.2f}: decodes the file)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=2000)
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--big", type=int, default=0, metavar="N",
                    help="print only the very-big-book line for an N-entry book (e.g. 50000) and exit")
    ap.add_argument("--wi-file", type=int, default=0, metavar="N",
                    help="print only the World Info file line for an N-entry book (e.g. 50000) and exit")
    ap.add_argument("--home", default="", help="data folder for the book cache (default: a new temporary folder)")
    a = ap.parse_args()
    import os
    import tempfile

    os.environ["LIYUAN_HOME"] = a.home or tempfile.mkdtemp(prefix="liyuan-bench-")
    rng = random.Random(a.seed)
    if a.big:
        big_line(a.big, rng, runs=min(a.runs, 5))
        return
    if a.wi_file:
        wi_file_line(a.wi_file, rng, runs=min(a.runs, 3))
        return
    book, keys = build_book(a.entries, rng)
    chat = build_chat(a.messages, keys, rng)
    t = time.perf_counter()
    book._compile().index  # noqa: B018 - the key index is built on first use
    print(f"book: {a.entries} entries, chat: {a.messages} messages; compile once: {(time.perf_counter() - t) * 1000:.1f} ms")
    ok = True
    for recursive in (True, False):
        book.recursive = recursive
        for depth, target in ((2, 5.0), (10, 20.0)):
            book.scan_depth = depth
            times, hits, steps = timeit(book, chat, a.runs)
            times.sort()
            med, p90 = statistics.median(times), times[int(len(times) * 0.9) - 1]
            ok &= med < target
            print(f"recursion {'on ' if recursive else 'off'}  depth {depth:>2}: median {med:6.2f} ms  p90 {p90:6.2f} ms  "
                  f"max {times[-1]:6.2f} ms  ({hits} entries, {steps} passes; target < {target:g} ms)")
    print("all medians within target" if ok else "SOME MEDIANS OVER TARGET")


if __name__ == "__main__":
    main()
