"""Start-up of the desktop app: time to the first window paint and to an interactive demo chat, and memory.

    python bench/ui_start.py [--runs 3] [--platform offscreen|xcb] [--cmd "path/to/liyuan"]

Each run starts the app in a fresh data folder (``liyuan --bench-start FILE``), which opens the demo chat and
writes wall-clock stamps; this script measures from just before it spawns the process. Memory is the PSS of the
whole process tree (the Python process and every QtWebEngineProcess), read from /proc/<pid>/smaps_rollup once the
demo chat is interactive. ``--cmd`` runs a built app instead of the source tree (packaging issue).
Targets (issue 3): under 2 s to an interactive chat, under 350 MB PSS.
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


def tree_pids(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def pss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def one_run(cmd: list[str], platform: str) -> dict:
    with tempfile.TemporaryDirectory() as d:
        stamp = Path(d) / "stamps.json"
        env = {**os.environ, "LIYUAN_HOME": str(Path(d) / "home"), "QT_QPA_PLATFORM": platform}
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
        pids = tree_pids(proc.pid)
        pss = sum(pss_kb(p) for p in pids)
        Path(str(stamp) + ".quit").write_text("")
        proc.wait(timeout=30)
        return {"paint_s": s["paint"] - t0, "interactive_s": s["interactive"] - t0, "pss_mb": pss / 1024, "processes": len(pids)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--platform", default=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    ap.add_argument("--cmd", default=f"{shlex.quote(sys.executable)} -m liyuan_desktop")
    args = ap.parse_args()
    cmd = shlex.split(args.cmd)
    runs = [one_run(cmd, args.platform) for _ in range(args.runs)]
    med = {k: statistics.median(r[k] for r in runs) for k in ("paint_s", "interactive_s", "pss_mb")}
    print(f"ui_start ({args.platform}, {args.runs} runs, cmd: {args.cmd})")
    for i, r in enumerate(runs, 1):
        print(f"  run {i}: first paint {r['paint_s']:.2f} s, interactive demo chat {r['interactive_s']:.2f} s, "
              f"PSS {r['pss_mb']:.0f} MB over {r['processes']} processes")
    print(f"  median: first paint {med['paint_s']:.2f} s, interactive {med['interactive_s']:.2f} s, PSS {med['pss_mb']:.0f} MB")


if __name__ == "__main__":
    main()
