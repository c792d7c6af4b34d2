"""Sweep the real llama.cpp server for a failure issue 30 names, keep the first combination that shows it (a30rec).

    python bench/sweep_wire.py lore  --model 0.5b [--seeds 1-40] [--temps none,1.1] [--max-tokens 200]
    python bench/sweep_wire.py agent --model 0.5b ...

Per *setting* (mode, compact prompt, the user's line) the real engine builds the beat's first request once
(``Chat.send`` through a transport that keeps the body and fails the call); that body is then sent to the server
again and again with llama.cpp's ``seed`` and ``temperature`` varied (``none`` = the engine's default: no
temperature sent, the server's own; 1.1 = the echo guard's retry), streamed, one server thread, stopped early once
the outcome is known. What counts as a hit:

- ``lore`` (issue 30 §2): a lore fact of the card's book (``real_model.LORE_FACTS``) in the reply that the
  pre-issue-30 data-block echo filter (``strip_echo`` of commit 1752d0e, read with ``git show``) deletes and
  today's keeps;
- ``agent`` (issue 30 §5): a text tool call keyed ``"function": "…"`` instead of ``"name"``, or a path with a
  leading space (``正文/ 001…``).

``--engine-at COMMIT`` (a30old) builds the request with the engine as it was at that commit (e.g. ``1752d0e``,
the engine issue 30 was filed against: the opening behind its 【开场 · 名字】 label, its own tool instructions), in a
subprocess over that commit's source (``record_wire.engine_tree``); ``beats`` mode plays whole beats with it.

A hit prints the setting, seed and temperature (re-record it with ``record_wire.py --only NAME --seed S
--temperature T``); every try is one line of ``--log`` (JSON lines). Nothing is written under tests/.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any, Callable, Optional

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

import real_model  # noqa: E402
import record_wire  # noqa: E402  (puts the engine's source on the path: today's, or LIYUAN_ENGINE_TREE's)

OLD_MAIN = "1752d0e"  # main just before issue 30's first commit (33bbe38)

LORE_SAYS = [real_model.ROLEPLAY_TURNS[1], real_model.ROLEPLAY_TURNS[2], real_model.ROLEPLAY_TURNS[0],
             real_model.ROLEPLAY_TURNS[3]]
#: (mode, compact) settings per failure kind
SETTINGS = {
    "lore": [("prose", False, s) for s in LORE_SAYS] + [("roleplay", True, s) for s in LORE_SAYS[:2]],
    "agent": [("agent", False, real_model.AGENT_TURN), ("agent", False, record_wire.ENGINE_CASES["agent_turn_b"].say),
              ("agent", True, real_model.AGENT_TURN)],
}


def old_strip_echo() -> Callable[..., str]:
    """``strip_echo`` as the pre-issue-30 engine had it (source from git, its one package import pointed at today's
    ``OPENING_HEADER``, which did not change)."""
    src = subprocess.run(["git", "show", f"{OLD_MAIN}:liyuan_desktop/core/beat/echo.py"], cwd=real_model.ROOT,
                         capture_output=True, text=True, check=True).stdout
    src = src.replace("from ..cards.st_chat import", "from liyuan_desktop.core.cards.st_chat import")
    mod = types.ModuleType("old_echo")
    exec(compile(src, "old_echo.py", "exec"), mod.__dict__)
    return mod.strip_echo


class Capture(httpx.AsyncBaseTransport):
    """Keeps the first request body and fails every call (the engine gives up the beat)."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(request.content or b"{}"))
        return httpx.Response(400, json={"error": {"message": "captured", "code": 400}})


async def first_body(model_name: str, mode: str, compact: bool, say: str,
                     engine_at: Optional[str] = None, provider: str = "") -> dict[str, Any]:
    """The JSON body the real engine sends first for this beat (demo card, fresh chat); with ``engine_at`` the engine
    at that commit builds it (a subprocess: ``sweep_wire.py first-body …`` over ``record_wire.engine_tree``);
    ``provider`` the client's provider kind ("llamacpp": what a llama.cpp server gets, e.g. the DRY sampler; "" =
    from the URL; an engine that does not know it ignores it)."""
    import os
    import tempfile
    if engine_at and not os.environ.get("LIYUAN_ENGINE_TREE"):
        out = subprocess.run([sys.executable, __file__, "first-body", model_name, mode, str(int(compact)), say],
                             env=record_wire.engine_env(engine_at), capture_output=True, text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])
    work = Path(tempfile.mkdtemp(prefix="liyuan-sweep-"))
    os.environ["LIYUAN_HOME"] = str(work / "home")
    from liyuan_desktop.core.cards import load_card
    from liyuan_desktop.core.chat.facade import Chat
    cap = Capture()
    client = record_wire.engine_client("http://127.0.0.1:9/v1", model_name, transport=cap, local=True,
                                       compact=compact, retry_base_wait=0.0, max_tokens=384, scribe_max_tokens=384,
                                       provider=provider or None)
    chat = Chat.create(work / "chat", load_card(record_wire.DEMO_CARD), client,
                       mode="agent" if mode == "agent" else "roleplay")
    if mode == "prose":
        chat.set_prose_only(True)
    try:
        await chat.send(say)
    except Exception:  # noqa: BLE001 - the capture fails the call on purpose
        pass
    finally:
        await client.aclose()
    return cap.bodies[0]


def lore_hit(text: str, body: dict[str, Any], say: str, strip: Callable[..., str]) -> Optional[str]:
    """The lore facts the old filter deleted from ``text`` ("" when none)."""
    last = body["messages"][-1]["content"]
    injection = last.replace(say, "").strip() if say in last else last
    facts = [f for fs in real_model.LORE_FACTS.values() for f in fs if f in text and f not in say]
    if not facts:
        return None
    kept = strip(text, injection, say)
    from liyuan_desktop.core.beat.echo import strip_echo  # today's filter must keep what the old one deleted
    now = strip_echo(text, injection, say)
    lost = [f for f in facts if f not in kept and f in now]
    return ",".join(lost) if lost else None


_FUNC_KEY = re.compile(r'"function"\s*:\s*"')
_SPACE_PATH = re.compile(r'"(?:path|name|file)"\s*:\s*"\s|正文/\s+[^\s"里]')


def agent_hit(text: str) -> Optional[str]:
    if _FUNC_KEY.search(text):
        return "function-key"
    if _SPACE_PATH.search(text):
        return "space-path"
    return None


def beat_hit(beat: Optional[dict[str, Any]]) -> Optional[str]:
    """A whole agent beat's ending that shows §5 (a30old): an exception out of ``Chat.send`` (``ToolError``) or a
    file whose name starts with a space."""
    if not beat:
        return None
    if "ToolError" in (beat.get("error") or ""):
        return "tool-error-escaped"
    if any(part != part.lstrip() for f in beat.get("files") or [] for part in f.split("/")):
        return "space-file"
    return None


def agent_done(text: str) -> bool:
    """The call's shape is known: a ``"name"`` key and a path written (no hit can follow in this call)."""
    return '"name"' in text and ('.md"' in text or '"content"' in text)


async def try_once(base_url: str, body: dict[str, Any], seed: int, temp: Optional[float], max_tokens: int,
                   done: Callable[[str], bool]) -> tuple[str, str]:
    """Stream ``body`` with this seed/temperature; (content so far, finish reason or "early")."""
    b = dict(body, seed=seed, max_tokens=max_tokens, stream=True)
    b.pop("temperature", None)
    if temp is not None:
        b["temperature"] = temp
    text, finish = "", ""
    async with httpx.AsyncClient(timeout=httpx.Timeout(900.0, connect=10.0)) as http:
        async with http.stream("POST", base_url + "/chat/completions", json=b) as resp:
            async for line in resp.aiter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                ch = json.loads(line[6:]).get("choices") or []
                if ch:
                    text += (ch[0].get("delta") or {}).get("content") or ""
                    finish = ch[0].get("finish_reason") or finish
                if done(text):
                    return text, "early"
    return text, finish


def parse_seeds(spec: str) -> list[int]:
    a, _, b = spec.partition("-")
    return list(range(int(a), int(b or a) + 1))


def sse_text(raw: bytes) -> str:
    """The content a recorded SSE body streamed (``data:`` lines' ``delta.content`` joined)."""
    text = ""
    for line in raw.decode("utf-8", "replace").splitlines():
        if line.startswith("data: {"):
            for ch in json.loads(line[6:]).get("choices") or []:
                text += (ch.get("delta") or {}).get("content") or ""
    return text


_OLD_STRIP: list[Callable[..., str]] = []


def response_hit(case: Any, response: Path) -> Optional[str]:
    """:func:`agent_hit` for an agent case, else :func:`lore_hit` of one recorded exchange (its request beside it)."""
    text = sse_text(response.read_bytes())
    if case.mode == "agent":
        return agent_hit(text)
    if not _OLD_STRIP:
        _OLD_STRIP.append(old_strip_echo())
    body = json.loads(response.with_suffix(".request.json").read_text("utf-8"))["body"]
    if "tools" in body and case.say not in str(body["messages"][-1].get("content")):
        return None
    return lore_hit(text, body, case.say, _OLD_STRIP[0])


def sweep_beats(case_name: str, which: str, seeds: list[int], temps: list[Optional[float]], out: Path,
                deadline: float, engine_at: Optional[str] = None, log: Optional[Path] = None) -> int:
    """Whole beats of ``record_wire.ENGINE_CASES[case_name]`` (every tool round, the scribe) through the real engine,
    one per seed/temperature (played by the engine at ``engine_at`` when given), each recorded into
    ``out/SEED-T/`` and, with ``log``, one JSON line per beat (every exchange's text and hit); stops at the first whose responses show an
    :func:`agent_hit` (a later tool round can differ from the first call). Returns the number of beats played."""
    import dataclasses
    model_file = real_model.ensure_model(which)
    note = {"server": f"llama.cpp server (xllamacpp {real_model.SERVER_WHEEL[1]})",
            "flags": "--jinja, reasoning format deepseek, SSE ping every 1 s, 1 thread(s)"}
    t_start, played = time.monotonic(), 0
    with real_model.llama_server(model_file, threads=1, ctx=8192, parallel=1, jinja=True, ping=1,
                                 reasoning=3) as base_url:
        port = int(base_url.rsplit(":", 1)[1].split("/")[0])
        for temp in temps:
            for seed in seeds:
                if deadline and time.monotonic() - t_start > deadline:
                    return played
                case = dataclasses.replace(record_wire.ENGINE_CASES[case_name], model=which, seed=seed,
                                           temperature=temp, engine_at=engine_at)
                where = out / f"{seed}-{temp}"
                where.mkdir(parents=True, exist_ok=True)
                asyncio.run(record_wire.record_engine_case(base_url, port, case_name, case, where, note))
                played += 1
                found = [(f, response_hit(case, f)) for f in sorted(where.glob("*.response"))]
                if log is not None:
                    last = sorted(where.glob("*.meta.json"),
                                  key=lambda m: json.loads(m.read_text("utf-8"))["exchange"])
                    beat = json.loads(last[-1].read_text("utf-8")).get("beat") if last else None
                    with open(log, "a", encoding="utf-8") as fh:
                        fh.write(json.dumps({"kind": "beat", "case": case_name, "model": which, "engine_at": engine_at,
                                             "seed": seed, "temperature": temp, "dir": str(where), "beat": beat,
                                             "exchanges": [{"file": f.name, "hit": h,
                                                            "text": sse_text(f.read_bytes())} for f, h in found]},
                                            ensure_ascii=False) + "\n")
                if log is None or case.mode != "agent":
                    beat = None
                found.append((where, beat_hit(beat)))
                for f, hit in found:
                    if hit:
                        print(f"HIT {f} seed={seed} temperature={temp}: {hit}", flush=True)
                        return played
    return played


def main(argv: Optional[list[str]] = None) -> int:
    if argv is None and sys.argv[1:2] == ["first-body"]:  # the subprocess of an older engine (a30old)
        _f, model_name, mode, compact, say = sys.argv[1:6]
        import liyuan_desktop
        assert Path(liyuan_desktop.__file__).resolve().is_relative_to(Path(os.environ["LIYUAN_ENGINE_TREE"]))
        print(json.dumps(asyncio.run(first_body(model_name, mode, compact == "1", say)), ensure_ascii=False))
        return 0
    if argv is None and sys.argv[1:2] == ["beats"]:  # beats CASE MODEL SEEDS TEMPS OUT DEADLINE [AT [LOG]]
        _b, case, which, seeds, temps, out, dl = sys.argv[1:8]
        at, log = (sys.argv[8:9] or [""])[0] or None, (sys.argv[9:10] or [""])[0]
        n = sweep_beats(case, which, parse_seeds(seeds), [None if t == "none" else float(t) for t in temps.split(",")],
                        Path(out), float(dl), at, Path(log) if log else None)
        print(f"{n} beat(s) played", flush=True)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kind", choices=sorted(SETTINGS))
    ap.add_argument("--model", choices=sorted(real_model.MODELS), default="0.5b")
    ap.add_argument("--seeds", default="1-20")
    ap.add_argument("--temps", default="none,1.1", help="comma list; none = no temperature sent (server default)")
    ap.add_argument("--settings", default="", help="comma list of setting indexes (default all)")
    ap.add_argument("--max-tokens", type=int, default=200)
    ap.add_argument("--deadline", type=float, default=0, help="stop after this many seconds")
    ap.add_argument("--log", type=Path, default=Path("/tmp/sweep_wire.jsonl"))
    ap.add_argument("--all", action="store_true", help="go on after a hit (every hit is in the log)")
    ap.add_argument("--engine-at", default=None, help="build the requests with the engine at this commit "
                                                      f"(e.g. {OLD_MAIN}, the engine issue 30 was filed against)")
    args = ap.parse_args(argv)
    temps = [None if t == "none" else float(t) for t in args.temps.split(",")]
    settings = SETTINGS[args.kind]
    picked = [int(i) for i in args.settings.split(",")] if args.settings else list(range(len(settings)))
    strip = old_strip_echo()
    model_file = real_model.ensure_model(args.model)
    name = real_model.MODELS[args.model].name
    t_start, tries, hits = time.monotonic(), 0, []
    with real_model.llama_server(model_file, threads=1, ctx=8192, parallel=1, jinja=True, ping=1,
                                 reasoning=3) as base_url, open(args.log, "a", encoding="utf-8") as log:
        for si in picked:
            mode, compact, say = settings[si]
            body = asyncio.run(first_body(name, mode, compact, say, args.engine_at))
            for temp in temps:
                for seed in parse_seeds(args.seeds):
                    if args.deadline and time.monotonic() - t_start > args.deadline:
                        print(f"deadline: {tries} tries, hits {hits}", flush=True)
                        return 0
                    done = agent_done if args.kind == "agent" else (lambda _t: False)
                    t0 = time.monotonic()
                    text, finish = asyncio.run(try_once(base_url, body, seed, temp, args.max_tokens, done))
                    tries += 1
                    hit = agent_hit(text) if args.kind == "agent" else lore_hit(text, body, say, strip)
                    rec = {"kind": args.kind, "model": args.model, "engine_at": args.engine_at, "setting": si,
                           "mode": mode, "compact": compact,
                           "say": say, "seed": seed, "temperature": temp, "finish": finish, "hit": hit,
                           "seconds": round(time.monotonic() - t0, 1), "text": text}
                    log.write(json.dumps(rec, ensure_ascii=False) + "\n")
                    log.flush()
                    print(f"[{tries}] s{si} {mode}{'/compact' if compact else ''} seed={seed} T={temp} "
                          f"{finish} {rec['seconds']}s hit={hit} | {text[:80]!r}", flush=True)
                    if hit:
                        hits.append((si, seed, temp, hit))
                        print(f"HIT setting={si} seed={seed} temperature={temp}: {hit}", flush=True)
                        if not args.all:
                            return 0
    print(f"{len(hits)} hit(s) in {tries} tries: {hits}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
