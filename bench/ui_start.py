"""Start-up of the desktop app: time to the first window paint and to an interactive demo chat, and memory.

    python bench/ui_start.py [--runs 3] [--platform offscreen|xcb] [--cmd "path/to/liyuan"]
    python bench/ui_start.py --binary /tmp/liyuan-build/dist/liyuan/liyuan [--cold]     # the built app

Each run starts the app in a fresh data folder (``liyuan --bench-start FILE``), which opens the demo chat and
writes wall-clock stamps; this script measures from just before it spawns the process. Memory is the PSS of the
whole process tree (the Python process and every QtWebEngineProcess), read from /proc/<pid>/smaps_rollup once the
demo chat is interactive, and (as root) the tree's distinct resident pages (:func:`footprint_kb`: PSS as if the app
ran alone, which a busy machine's PSS is not). ``--cmd`` runs any command instead of the source tree; ``--binary`` runs a built app
(packaging/build.sh) the way a user's desktop does: a clean environment (``env -i`` with PATH, HOME, LANG and the
display variables only; ``--clean-env`` does the same for ``--cmd``). ``--cold`` drops the page cache before every
run (root only: ``/proc/sys/vm/drop_caches``), so each start reads the app from disk; the report says if it could not.
``--warmup`` runs (default 1) come first and are not counted, so every counted run is warm in the same way.
The app runs with its bytecode cached, as an installed app does (``PYTHONDONTWRITEBYTECODE`` is dropped from the
app's environment: with it, each start compiled some 130 modules from source again, ~0.2 s of CPU).
Targets (issue 15): under 1 s to an interactive demo chat (warm), under 300 MB PSS with the demo open.

    python bench/ui_start.py --card mvu [--messages 20]     # a status-bar card instead of the demo

``--card PATH`` (a PNG/JSON/CHARX card; ``mvu`` = :data:`MVU_CARD`, a real modern MVU status-bar card from
../shared/fixtures) makes the app import that card with its regex scripts allowed and open a new chat of it
(``liyuan_desktop/ui/window/bench_hooks.py``); ``--messages N`` first fills the chat with N replies carrying the card's
bar (an imported SillyTavern chat). Interactive then means: the send button is enabled and every status-bar frame of
the transcript has said hello (its script ran). The report adds the card, the frames built, the renderer processes
and the PSS per process type (browser = the Python process, zygote, renderer, other). Target: under 400 MB with a
status-bar card open.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from liyuan_desktop.ui.frames.frame_guard import process_tree, renderer_pids

ROOT = Path(__file__).resolve().parent.parent
MVU_CARD = ROOT.parent / "shared" / "fixtures" / "cards" / "角色卡_修女与女忍的双面日常.json"
"""``--card mvu``: a modern MVU card (its fenced-HTML status bar reads ``Mvu.getMvuData``, shown on every reply —
no ``maxDepth`` on its display regex — so ``--messages 20`` gives 21 bars with the opening's). SOURCES.md there."""


KINDS = ["browser", "renderer", "page renderer", "frame renderer", "zygote", "other"]


def process_kinds(root: int, pids: list[int], page_renderer: int = 0) -> dict[int, str]:
    """Each of ``pids`` (the app's process tree) named by its part: "browser" (``root``, the Python process that
    hosts Chromium's browser side), "renderer" (``renderer_pids``: page and frame renderers, incl. the ones a zygote
    forked; with ``page_renderer``, the host page's pid as the app stamped it: "page renderer" and "frame renderer"),
    "zygote", "other" (utility, GPU …)."""
    renderers = set(renderer_pids(root))
    out = {}
    for p in pids:
        try:
            cmd = Path(f"/proc/{p}/cmdline").read_bytes()
        except OSError:
            cmd = b""
        kind = ("browser" if p == root else "renderer" if p in renderers
                else "zygote" if b"--type=zygote" in cmd else "other")
        if kind == "renderer" and page_renderer:
            kind = "page renderer" if p == page_renderer else "frame renderer"
        out[p] = kind
    return out


def pss_kb(pid: int, field: str = "Pss") -> int:
    """One field of /proc/<pid>/smaps_rollup in kB (Pss, Pss_Anon, Rss …); 0 when the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def footprint_kb(pids: list[int]) -> int:
    """The memory of the process tree as if it ran alone, in kB: its distinct resident physical pages (each counted
    once however many of ``pids`` map it), read from /proc/<pid>/pagemap (root only: -1 otherwise). PSS divides a
    page shared with processes outside the tree — the same Qt libraries mapped by another app or test running on
    the machine — among all of them, so on a busy machine PSS reads low and varies from run to run; this does not.
    On a quiet machine the two agree to within the few pages shared with the rest of the system (libc…)."""
    import struct

    page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
    frames: set[int] = set()
    for pid in pids:
        try:
            smaps = Path(f"/proc/{pid}/smaps").read_text().splitlines()
            with open(f"/proc/{pid}/pagemap", "rb") as pm:
                start = end = 0
                for line in smaps:
                    head = line.split(None, 1)[0]
                    if "-" in head and not head.endswith(":"):
                        a, b = head.split("-")
                        start, end = int(a, 16), int(b, 16)
                    elif head == "Rss:" and int(line.split()[1]) > 0:  # only mappings with resident pages
                        n = (end - start) // (page_kb * 1024)
                        pm.seek(start // (page_kb * 1024) * 8)
                        data = pm.read(n * 8)
                        for (v,) in struct.iter_unpack("<Q", data):
                            if v >> 63 and v & ((1 << 55) - 1):  # present, with a frame number (root sees it)
                                frames.add(v & ((1 << 55) - 1))
        except (OSError, ValueError):
            continue
    return len(frames) * page_kb if frames else -1


def drop_caches() -> bool:
    """Empty the page cache so the next start reads everything from disk (root only). True when it worked."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def clean_env(home: str, platform: str) -> dict:
    """What a desktop session gives a launched app, and nothing from this shell (no venv, no PYTHONPATH)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8", "QT_QPA_PLATFORM": platform}
    for k in ("DISPLAY", "XAUTHORITY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR"):
        if os.environ.get(k):
            env[k] = os.environ[k]
    return env


def one_run(cmd: list[str], platform: str, clean: bool = False, card: str = "", messages: int = 0,
            near: str = "") -> dict:
    """Start the app once in a fresh data folder; return seconds to first paint and to an interactive demo chat
    (``card``: the chat of that card, filled with ``messages`` replies — module doc), the PSS of its process tree
    (and per process type), the number of processes and, with a card, its name and the frames built."""
    with tempfile.TemporaryDirectory() as d:
        stamp = Path(d) / "stamps.json"
        base = clean_env(d, platform) if clean else {**os.environ, "QT_QPA_PLATFORM": platform}
        base.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed app has its bytecode cached (module doc)
        env = {**base, "LIYUAN_HOME": str(Path(d) / "home")}
        if card:
            env.update(LIYUAN_BENCH_CARD=card, LIYUAN_BENCH_MESSAGES=str(messages))
            if near:
                env["LIYUAN_BENCH_NEAR_MARGIN"] = near
        t0 = time.time()
        proc = subprocess.Popen(cmd + ["--bench-start", str(stamp)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not stamp.exists():
            if proc.poll() is not None:
                raise SystemExit(f"the app exited early (code {proc.returncode})")
            if time.time() - t0 > 60:
                proc.kill()
                raise SystemExit("the app did not become interactive within 60 s")
            time.sleep(0.01)
        time.sleep(0.05)
        s = json.loads(stamp.read_text())
        if s.get("error"):  # --card: the bars did not all start (bench_hooks.open_card)
            Path(str(stamp) + ".quit").write_text("")
            proc.wait(timeout=30)
            raise SystemExit(f"the card chat did not become interactive: {s['error']}")
        pids = process_tree(proc.pid)
        pss = sum(pss_kb(p) for p in pids)
        # file-backed pages are shared with every other process mapping the same files (another app run from the
        # same venv counts them at half), so the anonymous part compares a built app with the source tree fairly
        anon = sum(pss_kb(p, "Pss_Anon") for p in pids)
        own = footprint_kb(pids)
        kinds = process_kinds(proc.pid, pids, int(s.get("page_renderer") or 0))
        by_kind: dict[str, list[float]] = {}
        for p in pids:
            by_kind.setdefault(kinds[p], []).append(pss_kb(p) / 1024)
        Path(str(stamp) + ".quit").write_text("")
        proc.wait(timeout=30)
        return {"paint_s": s["paint"] - t0, "interactive_s": s["interactive"] - t0, "pss_mb": pss / 1024,
                "anon_mb": anon / 1024, "own_mb": own / 1024, "processes": len(pids), "by_kind": by_kind,
                "card": s.get("card", ""), "frames": s.get("frames", 0), "failed": s.get("failed", 0),
                "bars": s.get("bars", 0), "deferred": s.get("deferred", 0)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--platform", default=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    ap.add_argument("--cmd", default=f"{shlex.quote(sys.executable)} -m liyuan_desktop")
    ap.add_argument("--binary", metavar="PATH", help="a built app (e.g. /tmp/liyuan-build/dist/liyuan/liyuan); "
                    "runs in a clean environment")
    ap.add_argument("--clean-env", action="store_true", help="run --cmd in a clean environment too")
    ap.add_argument("--cold", action="store_true", help="drop the page cache before every run (root)")
    ap.add_argument("--warmup", type=int, default=1, help="runs before the counted ones, not counted (default 1)")
    ap.add_argument("--card", metavar="PATH", default="", help="open a chat of this card instead of the demo "
                    "(PNG/JSON/CHARX; 'mvu' = a real MVU status-bar card from ../shared/fixtures)")
    ap.add_argument("--messages", type=int, default=0, help="with --card: fill the chat with N replies carrying "
                    "the card's status bar first")
    ap.add_argument("--near-margin", default="", help="with --card: how far from the screen status bars are built "
                    "(a CSS margin such as '100%% 0px', the app's default; 'all' builds every bar at once)")
    args = ap.parse_args()
    if args.near_margin == "all":
        args.near_margin = "100000px 0px"
    if args.card == "mvu":
        args.card = str(MVU_CARD)
    if args.card:
        if not Path(args.card).is_file():
            raise SystemExit(f"no card file: {args.card}")
        args.card = str(Path(args.card).resolve())
    if args.binary:
        binary = Path(args.binary).resolve()
        if not os.access(binary, os.X_OK):
            raise SystemExit(f"not an executable: {binary}")
        args.cmd, args.clean_env = shlex.quote(str(binary)), True
    cmd = shlex.split(args.cmd)
    runs, cold = [], []
    for _ in range(max(0, args.warmup)):
        one_run(cmd, args.platform, args.clean_env, args.card, args.messages, args.near_margin)
    for _ in range(args.runs):
        cold.append(drop_caches() if args.cold else False)
        runs.append(one_run(cmd, args.platform, args.clean_env, args.card, args.messages, args.near_margin))
    med = {k: statistics.median(r[k] for r in runs) for k in ("paint_s", "interactive_s", "pss_mb", "anon_mb", "own_mb")}
    what = "cold (page cache dropped before each run)" if all(cold) and args.cold else "warm"
    if args.cold and not all(cold):
        what = "warm: could not drop the page cache (needs root)"
    env = "clean env" if args.clean_env else "this shell's env"
    print(f"ui_start ({args.platform}, {args.runs} runs, {what}, {env}, cmd: {args.cmd})")
    opened = "interactive demo chat"
    if args.card:
        opened = "interactive card chat"
        r0 = runs[0]
        print(f"  card: {r0['card']} ({Path(args.card).name}), {args.messages} replies filled in, "
              f"{r0['bars']} status bars, {r0['frames']} frames live"
              + (f" ({r0['deferred']} far from the screen, built when scrolled to)" if r0["deferred"] else "")
              + (f", {r0['failed']} stopped" if r0["failed"] else ""))
    for i, r in enumerate(runs, 1):
        print(f"  run {i}: first paint {r['paint_s']:.2f} s, {opened} {r['interactive_s']:.2f} s, "
              f"PSS {r['pss_mb']:.0f} MB (anonymous {r['anon_mb']:.0f} MB, distinct pages {r['own_mb']:.0f} MB) "
              f"over {r['processes']} processes")
    print(f"  median: first paint {med['paint_s']:.2f} s, interactive {med['interactive_s']:.2f} s, "
          f"PSS {med['pss_mb']:.0f} MB (anonymous {med['anon_mb']:.0f} MB, distinct pages {med['own_mb']:.0f} MB)")
    kinds = sorted({k for r in runs for k in r["by_kind"]}, key=KINDS.index)
    parts = []
    for k in kinds:
        n = statistics.median(len(r["by_kind"].get(k, [])) for r in runs)
        mb = statistics.median(sum(r["by_kind"].get(k, [])) for r in runs)
        each = ", ".join(f"{v:.0f}" for v in sorted(runs[len(runs) // 2]["by_kind"].get(k, []), reverse=True))
        parts.append(f"{k} x{n:g} {mb:.0f} MB ({each})")
    print("  median PSS per process type: " + "; ".join(parts))


if __name__ == "__main__":
    main()
