"""Checkpoint commit and restore time for a long book.

    python bench/checkpoints.py [--chapters 300] [--chars 3000000] [--changed 2] [--runs 5] [--dir PATH]

Builds a synthetic book of ``--chapters`` chapters totalling ``--chars`` characters (mostly CJK, ~3 UTF-8 bytes
each) in a temp folder (or ``--dir``), back-dates the files by an hour (a book written earlier: cached hashes are
not "racy", see ``checkpoints.RACY_WINDOW_NS``) and commits it once (the import). Then it times:

- commit, cold cache: a fresh ``StoryHistory`` with ``历史/.hashcache.json`` deleted, ``--changed`` chapters edited
  (every chapter is read and hashed; only the edited ones get new blobs);
- commit, warm cache: the same instance again after editing ``--changed`` other chapters (only those are re-read);
  target < 100 ms;
- commit, on-disk cache: a fresh instance (cache loaded from ``.hashcache.json``);
- restore of the whole book: every chapter rewritten from the import checkpoint (atomic writes with fsync) and the
  restore checkpoint committed.

Medians over ``--runs`` runs (ms); fsync costs depend on the disk (tmpfs makes them free).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from liyuan_desktop.core.story.checkpoints import StoryHistory  # noqa: E402

HAN = "雨下到第三天青石板路上的水洼连成了片你推开听雨轩的门檐角铜铃轻响一声柜台后女子抬起头来目光在被浸透肩停瞬随即移开像是什么都没看见"


def make_book(folder: Path, chapters: int, chars: int, rng: random.Random) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    per = chars // chapters
    names = []
    for i in range(chapters):
        body = []
        n = 0
        while n < per:
            para = "".join(rng.choice(HAN) for _ in range(rng.randint(60, 200))) + "。\n\n"
            body.append(para)
            n += len(para)
        name = f"{i:03d}-第{i + 1}章.md"
        (folder / name).write_text("".join(body)[:per], "utf-8")
        names.append(name)
    return names


def age(folder: Path, seconds: int = 3600) -> None:
    for p in folder.iterdir():
        st = p.stat()
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 1_000_000_000))


def edit(folder: Path, names: list[str], rng: random.Random, k: int) -> None:
    for name in rng.sample(names, k):
        p = folder / name
        p.write_text(p.read_text("utf-8") + f"补一句{rng.random()}。\n", "utf-8")


def ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chapters", type=int, default=300)
    ap.add_argument("--chars", type=int, default=3_000_000)
    ap.add_argument("--changed", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--dir", type=Path, default=None, help="work folder (default: a temp folder, removed after)")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    base = Path(tempfile.mkdtemp(prefix="liyuan-bench-ckpt-", dir=a.dir))
    try:
        story, hist = base / "正文", base / "历史"
        t0 = time.perf_counter()
        names = make_book(story, a.chapters, a.chars, rng)
        total = sum(len((story / n).read_text("utf-8")) for n in names)
        print(f"book: {a.chapters} chapters, {total:,} chars, "
              f"{sum((story / n).stat().st_size for n in names) / 1e6:.1f} MB UTF-8 (built in {ms(t0):.0f} ms)")
        age(story)
        h = StoryHistory(story, hist)
        t0 = time.perf_counter()
        first = h.commit("user", "导入")
        print(f"import commit (all {a.chapters} read, {len(h.objects())} blobs written): {ms(t0):.1f} ms")

        cold, warm, disk, cold_reads, warm_reads, disk_reads = [], [], [], [], [], []
        for _ in range(a.runs):
            # cold: no in-memory cache, no on-disk cache
            hist.joinpath(".hashcache.json").unlink(missing_ok=True)
            edit(story, names, rng, a.changed)
            hc = StoryHistory(story, hist)
            t0 = time.perf_counter()
            c = hc.commit("agent", "cold")
            cold.append(ms(t0))
            cold_reads.append(hc.last_read_count)
            assert c is not None and len(c.changed.modified) == a.changed
            age(story)
            hc.snapshot()  # re-hash the just-edited (racy) files once, as the next turn would
            # warm: same instance
            edit(story, names, rng, a.changed)
            t0 = time.perf_counter()
            c = hc.commit("agent", "warm")
            warm.append(ms(t0))
            warm_reads.append(hc.last_read_count)
            assert c is not None and len(c.changed.modified) == a.changed
            age(story)
            hc.snapshot()
            # fresh instance, cache from .hashcache.json
            edit(story, names, rng, a.changed)
            hd = StoryHistory(story, hist)
            t0 = time.perf_counter()
            c = hd.commit("agent", "disk cache")
            disk.append(ms(t0))
            disk_reads.append(hd.last_read_count)
            assert c is not None
            age(story)
            hd.snapshot()

        med = statistics.median
        print(f"commit {a.changed} changed of {a.chapters}, cold cache:    median {med(cold):7.1f} ms  "
              f"max {max(cold):7.1f} ms  (files read: {max(cold_reads)})")
        print(f"commit {a.changed} changed of {a.chapters}, warm cache:    median {med(warm):7.1f} ms  "
              f"max {max(warm):7.1f} ms  (files read: {max(warm_reads)})  target < 100 ms")
        print(f"commit {a.changed} changed of {a.chapters}, on-disk cache: median {med(disk):7.1f} ms  "
              f"max {max(disk):7.1f} ms  (files read: {max(disk_reads)})")

        rest = []
        for i in range(a.runs):
            # make every chapter differ from the import checkpoint, then restore the whole book
            for n in names:
                p = story / n
                p.write_text(p.read_text("utf-8") + f"第{i}轮。\n", "utf-8")
            age(story)
            hr = StoryHistory(story, hist)
            hr.commit("agent", "all changed")
            age(story)
            t0 = time.perf_counter()
            r = hr.restore(first.id)
            rest.append(ms(t0))
            assert len(r.changed.modified) == a.chapters
        print(f"restore whole book ({a.chapters} files rewritten + restore checkpoint): "
              f"median {med(rest):7.1f} ms  max {max(rest):7.1f} ms")
        print(f"history: {len(h.objects())} blobs, {len(h.checkpoints())} checkpoints, "
              f"log {hist.joinpath('检查点.jsonl').stat().st_size / 1e3:.0f} kB")
    finally:
        if a.dir is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
