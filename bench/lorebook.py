"""World-info activation time for a big book over a long chat.

    python bench/lorebook.py [--entries 2000] [--messages 2000] [--runs 50] [--seed 7]
    python bench/lorebook.py --big 50000      # the very-big-book line: open (parse), compile, activation, index

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

from liyuan_desktop.core.lore import Lorebook, ScanMessage, TimedEffects  # noqa: E402

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
    res = book.activate_detailed(chat, timed=TimedEffects(), rng=rng)  # warm-up
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        res = book.activate_detailed(chat, timed=TimedEffects(), rng=rng)
        times.append((time.perf_counter() - t) * 1000)
    return times, len(res.entries), res.steps


def big_line(n: int, rng: random.Random) -> None:
    """The "very big book" line (issue 15 item 10): parse the card book four times as opening a chat does (the
    first parse pays, the rest are copies), compile once, activate once over a short chat (recursion off, depth 2),
    and the size of the 【设定集索引】 block sent every beat."""
    from liyuan_desktop.core.ledger.state import WorldState
    from liyuan_desktop.core.prompt.assemble import build_injection

    captured: dict = {}
    orig = Lorebook.from_card_book
    Lorebook.from_card_book = staticmethod(lambda d, name="", source="card": captured.setdefault("d", d) and orig(d, name, source))  # type: ignore[method-assign]
    try:
        book, keys = build_book(n, rng)
    finally:
        Lorebook.from_card_book = orig  # type: ignore[method-assign]
    raw = captured["d"]
    t = time.perf_counter()
    books = [Lorebook.from_card_book(raw, "big") for _ in range(4)]
    t_parse = (time.perf_counter() - t) * 1000
    big = books[-1]
    t = time.perf_counter()
    big._compile()
    t_comp = (time.perf_counter() - t) * 1000
    big.recursive, big.scan_depth = False, 2
    chat = build_chat(20, keys, rng)
    times = []
    for _ in range(5):
        t = time.perf_counter()
        res = big.activate_detailed(chat, timed=TimedEffects(), rng=random.Random(1))
        times.append((time.perf_counter() - t) * 1000)
    titles = big.index_titles()
    block = next(b for b in build_injection(WorldState(), [e.display_title for e in res.entries], titles).split("\n\n")
                 if b.startswith("【设定集索引】"))
    print(f"big book {n} entries: parse x4 (as a chat open) {t_parse:.0f} ms, compile {t_comp:.0f} ms, "
          f"activation (recursion off, depth 2) median {statistics.median(times):.1f} ms; "
          f"index block {len(block)} characters for {len(titles)} titles (all titles: {len('、'.join(titles))})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=2000)
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--big", type=int, default=0, metavar="N",
                    help="print only the very-big-book line for an N-entry book (e.g. 50000) and exit")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    if a.big:
        big_line(a.big, rng)
        return
    book, keys = build_book(a.entries, rng)
    chat = build_chat(a.messages, keys, rng)
    t = time.perf_counter()
    book._compile()
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
