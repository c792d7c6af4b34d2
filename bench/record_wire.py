"""Record real wire transcripts from llama.cpp's server into ``tests/data/wire/`` (issue 18 §4).

    python bench/record_wire.py [--out tests/data/wire] [--threads N] [--only NAME ...]

Uses the same pinned server wheel and model as ``bench/real_model.py`` (its own venv under ``~/.cache/liyuan-bench``)
and starts the server twice on 127.0.0.1: once with the Jinja template (``--jinja``; SSE keep-alive every second,
reasoning format "none" so a ``<think>`` block stays in the content as servers without a reasoning parser send it),
once without it (that server rejects any request carrying ``tools``).

Each case's request body is built by the engine's own client (``OpenAIChatModel.build_body``), so it is what the app
sends. For each case NAME three files are written:

- ``NAME.request.json`` — method, path and the JSON body sent (no headers: no key is ever stored);
- ``NAME.response`` — the response body, byte for byte as it came off the socket (after HTTP chunk decoding);
- ``NAME.meta.json`` — status, response headers (``Date`` dropped), the sizes of the pieces as they arrived (the
  replay server writes the same pieces), the server and model it came from, and the case's purpose.

Engine cases (``ENGINE_CASES``, issue 30; ``--only NAME`` re-records one): the real engine plays one beat
(``Chat.send``) against the server running the 0.5B or 1.5B GGUF, and an httpx transport keeps every exchange it
made (``NAME``, ``NAME-2`` …: the beat's calls, the echo guard's retry, the scribe), with the arrival time of each
piece (``arrived``) and how the beat ended (``beat`` in the last one's meta).

Scrubbing: the loopback port in any header or body is replaced by ``PORT`` and the cache folder is cut from any
model path (the server is started with an alias, so it reports the file name); the piece sizes are measured after
scrubbing. Requests carry no key. Nothing else is touched.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
#: a30old: ``LIYUAN_ENGINE_TREE`` (set by :func:`engine_tree`'s callers) puts an older engine's source first, so a
#: beat is played by the engine as it was at that commit (the bench itself stays today's)
sys.path.insert(0, os.environ.get("LIYUAN_ENGINE_TREE") or str(Path(__file__).resolve().parent.parent))

import real_model  # noqa: E402  (bench/real_model.py: the venv, the model, the server)

if os.environ.get("LIYUAN_ENGINE_TREE"):  # real_model put today's root first: the older engine goes before it
    sys.path.insert(0, os.environ["LIYUAN_ENGINE_TREE"])

from liyuan_desktop.core.llm import OpenAIChatModel  # noqa: E402
from liyuan_desktop.core.llm.types import ChatMessage, ChatRequest  # noqa: E402

WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Look up the current weather of a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "city name"}},
                   "required": ["city"]}}}
LORE_TOOL = {"type": "function", "function": {
    "name": "lorebook_search", "description": "Search the card's lorebook; returns matching entries.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}


def msgs(system: str, user: str) -> list[ChatMessage]:
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]


#: cases whose body gets extra fields merged in (as a provider's ``extra_body`` would). Tried and left out:
#: ``{"tool_choice": "required"}`` on the tools request — this model still wrote a ```json block, up to the cap.
EXTRA_BODY: dict[str, dict] = {}

#: name → (server "jinja"/"plain", streaming, request, purpose)
CASES: dict[str, tuple[str, bool, ChatRequest, str]] = {
    "tools_stream": ("jinja", True, ChatRequest(
        messages=msgs("You are a helpful assistant. Use the tools when they help.",
                      "杭州现在天气怎么样？请调用 get_weather 工具查询。"),
        tools=[WEATHER_TOOL, LORE_TOOL], max_tokens=128, temperature=0.0),
        "tools offered with tool_choice auto; this small model answers with a ```json block in the content instead "
        "of a tool call (finish_reason stop): a model that ignores tools. SSE keep-alive comments while the prompt "
        "is processed, usage in the last chunk"),
    "tools_nonstream": ("jinja", False, ChatRequest(
        messages=msgs("You are a helpful assistant. Use the tools when they help.",
                      "上海现在天气怎么样？请调用 get_weather 工具查询。"),
        tools=[WEATHER_TOOL], max_tokens=128, temperature=0.0),
        "the same without streaming: one chat.completion JSON with message.tool_calls"),
    "prose_stream": ("jinja", True, ChatRequest(
        messages=msgs("你是一位小说作者。只写正文。", "用两句话写雨夜里的一家老客栈。"),
        max_tokens=96, temperature=0.0),
        "no tools: streamed prose, finish_reason stop, usage in the last chunk"),
    "prose_length": ("jinja", True, ChatRequest(
        messages=msgs("你是一位小说作者。只写正文。", "写一段三百字的雨夜客栈描写。"),
        max_tokens=12, temperature=0.0),
        "no tools, output cap reached: finish_reason length"),
    "think_content": ("jinja", True, ChatRequest(
        messages=[ChatMessage(role="system", content="Think inside <think> and </think> tags first, then answer in "
                                                     "one sentence after the closing tag."),
                  ChatMessage(role="user", content="What is 2 plus 2?"),
                  ChatMessage(role="assistant", content="<think>2 plus 2 is 4.</think>\nTwo plus two makes four."),
                  ChatMessage(role="user", content="What is 3 plus 5?")],
        max_tokens=96, temperature=0.0),
        "<think>…</think> in the content channel (reasoning format none): the client must keep it out of the final"),
    "tools_rejected": ("plain", True, ChatRequest(
        messages=msgs("You are a helpful assistant.", "杭州现在天气怎么样？"),
        tools=[WEATHER_TOOL], max_tokens=64, temperature=0.0),
        "a server without --jinja: HTTP 500 'tools param requires --jinja flag' (a configuration error)"),
}


async def record_case(base_url: str, port: int, name: str, stream: bool, request: ChatRequest,
                      purpose: str, out: Path, server_note: dict[str, Any]) -> None:
    client = OpenAIChatModel(base_url, real_model.MODEL_NAME, None, stream=stream, extra_body=EXTRA_BODY.get(name))
    body = client.build_body(request)
    await client.aclose()
    pieces: list[bytes] = []
    t0 = time.perf_counter()
    async with httpx.AsyncClient(timeout=httpx.Timeout(900.0, connect=10.0)) as http:
        async with http.stream("POST", base_url + "/chat/completions", json=body,
                               headers={"Accept": "text/event-stream, application/json"}) as resp:
            async for raw in resp.aiter_raw():
                pieces.append(raw)
            status, headers = resp.status_code, resp.headers
    port_s = str(port).encode()

    def scrub(b: bytes) -> bytes:
        b = b.replace(str(real_model.CACHE).encode() + b"/", b"")  # a model path would carry the user's home
        return b.replace(b"127.0.0.1:" + port_s, b"127.0.0.1:PORT").replace(b"localhost:" + port_s, b"localhost:PORT")

    pieces = [scrub(p) for p in pieces]
    kept_headers = [[k, v.replace(f":{port}", ":PORT")] for k, v in headers.multi_items() if k.lower() != "date"]
    (out / f"{name}.request.json").write_text(json.dumps(
        {"method": "POST", "path": "/v1/chat/completions", "body": body}, ensure_ascii=False, indent=1) + "\n",
        encoding="utf-8")
    (out / f"{name}.response").write_bytes(b"".join(pieces))
    (out / f"{name}.meta.json").write_text(json.dumps({
        "status": status, "headers": kept_headers, "pieces": [len(p) for p in pieces], "purpose": purpose,
        "recorded": time.strftime("%Y-%m-%d", time.gmtime()), "seconds": round(time.perf_counter() - t0, 1),
        **server_note}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"  {name}: HTTP {status}, {sum(map(len, pieces))} bytes in {len(pieces)} pieces, "
          f"{time.perf_counter() - t0:.1f} s", flush=True)


# -- engine cases (issue 30): the real engine plays a beat against the server; every exchange is recorded ---------
class TeeStream(httpx.AsyncByteStream):
    """The server's response body passed through to the client unchanged, each piece kept with the seconds since the
    request when it arrived (after HTTP chunk decoding: what ``aiter_raw`` sees)."""

    def __init__(self, inner: Any, exchange: dict[str, Any]) -> None:
        self.inner, self.exchange = inner, exchange

    async def __aiter__(self):  # type: ignore[override]
        async for piece in self.inner:
            self.exchange["pieces"].append(bytes(piece))
            self.exchange["arrived"].append(round(time.perf_counter() - self.exchange["t0"], 3))
            yield piece

    async def aclose(self) -> None:
        await self.inner.aclose()


class TeeTransport(httpx.AsyncBaseTransport):
    """An httpx transport that forwards to the real server and records every exchange: the JSON body our client
    sent, the status, headers and body pieces with their arrival times (the engine's own traffic, byte for byte)."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.exchanges: list[dict[str, Any]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        ex: dict[str, Any] = {"body": json.loads(request.content or b"{}"), "pieces": [], "arrived": [],
                              "t0": time.perf_counter()}
        resp = await self.inner.handle_async_request(request)
        ex["status"], ex["headers"] = resp.status_code, resp.headers
        self.exchanges.append(ex)
        return httpx.Response(resp.status_code, headers=resp.headers, stream=TeeStream(resp.stream, ex),
                              extensions=resp.extensions)

    async def aclose(self) -> None:
        await self.inner.aclose()


#: The card every engine case plays (its lorebook holds invented names: 沈怀瑾, 老周, 更夫姓钱 …).
DEMO_CARD = real_model.ROOT / "cards" / "青梧" / "default_Qingwu.json"


@dataclass
class EngineCase:
    """One beat of the real engine against the server. ``model``: a key of ``real_model.MODELS``; ``mode``:
    "roleplay" / "prose" (prose-only switch on) / "agent"; ``local``: the client's ``is_local`` (False sends the
    opening with its 【开场 · 名字】 label and does not count keep-alives, as main did before issue 30); ``seed``:
    llama.cpp's sampling seed (re-recordable); ``say``: the user's words; ``ping``: seconds between the server's
    keep-alive comments; ``chapter``: ``Chat.send(chapter=)``; ``compact``: the compact prompt (精简提示词)."""

    model: str
    mode: str
    say: str
    purpose: str
    local: bool = True
    seed: int = 7
    ping: int = 1
    chapter: Optional[str] = None
    compact: bool = False
    #: the chat's own temperature (``Chat.set_sampling``; None: none sent, the server's default) — a30rec
    temperature: Optional[float] = None
    #: the client's provider kind ("llamacpp": told it is a llama.cpp server, as a discovered or preset llama.cpp
    #: provider is — a fresh beat then carries the DRY sampler, ``sampling.local_dry``; "": from the URL, "other")
    provider: str = ""
    #: a30old: the commit whose engine plays the beat (None: today's). The beat runs in a subprocess over that
    #: commit's source (:func:`engine_tree`); ``local`` and ``compact`` are ignored by an engine that lacks them
    engine_at: Optional[str] = None


def engine_tree(commit: str) -> Path:
    """The source of the engine at ``commit`` (``git archive`` of this repository, unpacked once into the temp
    folder and reused; read-only by convention). Raises ``subprocess.CalledProcessError`` for an unknown commit."""
    import tempfile
    full = subprocess.run(["git", "rev-parse", "--verify", f"{commit}^{{commit}}"], cwd=real_model.ROOT,
                          capture_output=True, text=True, check=True).stdout.strip()
    tree = Path(tempfile.gettempdir()) / f"liyuan-engine-{full[:12]}"
    if not (tree / "liyuan_desktop").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        arc = subprocess.run(["git", "archive", full, "liyuan_desktop"], cwd=real_model.ROOT, capture_output=True,
                             check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=arc, check=True)
    return tree


def engine_env(commit: str) -> dict[str, str]:
    """The environment a subprocess needs to import the engine at ``commit`` instead of today's."""
    return {**os.environ, "LIYUAN_ENGINE_TREE": str(engine_tree(commit))}


def engine_client(base_url: str, model_name: str, **kw: Any) -> Any:
    """``OpenAIChatModel`` of whichever engine is imported, with the keyword arguments it knows (an older engine
    has no ``local``); ``compact`` sets ``compact_prompt`` where the engine has one."""
    compact = kw.pop("compact", False)
    known = inspect.signature(OpenAIChatModel.__init__).parameters
    client = OpenAIChatModel(base_url, model_name, None, **{k: v for k, v in kw.items() if k in known})
    if hasattr(client, "compact_prompt"):
        client.compact_prompt = compact
    return client


ENGINE_CASES: dict[str, EngineCase] = {
    "echo_opening_labelled": EngineCase(
        "0.5b", "prose", "我收起湿透的伞，推门走进听雨轩，走到柜台前：「掌柜的，这客栈开了多少年了？」",
        "issue 30 §1: the opening sent as main sent it before issue 30 (an assistant message starting with "
        "【开场 · 青梧】): does the 0.5B copy the opening?", local=False),
    "echo_opening_bare": EngineCase(
        "0.5b", "prose", "我收起湿透的伞，推门走进听雨轩，走到柜台前：「掌柜的，这客栈开了多少年了？」",
        "issue 30 §1: the same beat with the opening sent without the label (a local server today)"),
    "lore_in_prose": EngineCase(
        "1.5b", "prose", "「我明早要出镇，镇北渡口几时有船？摆渡的是谁？」",
        "issue 30 §2: the lore entry of 镇北渡口 in 【相关设定】; a reply that uses its sentence in prose"),
    "keepalive_prompt": EngineCase(
        "1.5b", "prose", "夜深了，外面传来梆子声。「这打更的是什么人？」",
        "issue 30 §3: a first beat on a CPU server: ':' keep-alives every second while the prompt is evaluated "
        "(a minute and more on one thread), then the reply; the arrival time of every piece in 'arrived'"),
    "lore_copy": EngineCase(
        "0.5b", "prose", "我指了指柜台后墙上那把旧油纸伞：「这把伞怎么不撑开？伞上是什么痕迹？」",
        "issue 30 §2: the lore entry of the umbrella in 【相关设定】; does the 0.5B copy its sentences into prose?"),
    "lore_sentence_tools": EngineCase(
        "1.5b", "roleplay", "我指了指柜台后墙上那把旧油纸伞：「这把伞怎么不撑开？伞上是什么痕迹？」",
        "issue 30 §2: tool play with the compact prompt, the umbrella's entry inlined (a model that has not called "
        "tools natively): does the 1.5B carry a sentence of the entry into its prose?", compact=True),
    "lore_near": EngineCase(
        "1.5b", "prose", "我指了指柜台后墙上那把旧油纸伞：「这把伞怎么不撑开？伞上是什么痕迹？」",
        "issue 30 §2: prose-only play with the lore block last, right before the user's words (a30loop): does the "
        "1.5B carry the umbrella entry's facts into its prose, and does the sealed reply keep them?"),
    "opening_no_dry": EngineCase(
        "1.5b", "prose", real_model.ROLEPLAY_TURNS[0],
        "issue 30 §1: the inn question, prose-only, compact prompt, the client not told it is llama.cpp (no DRY "
        "sampler, as every local server got before): does the 1.5B copy the opening's paragraphs?",
        seed=2, compact=True),
    "opening_dry": EngineCase(
        "1.5b", "prose", real_model.ROLEPLAY_TURNS[0],
        "issue 30 §1: the same beat to a client that knows it is llama.cpp: the fresh beat carries the DRY sampler "
        "(sampling.LOCAL_DRY); new prose, and a fact of the lorebook?", seed=2, compact=True, provider="llamacpp"),
    "agent_turn_b": EngineCase(
        "0.5b", "agent", "在正文/ 里新建第一章《雨夜客栈》，写青梧擦伞，两百字。写完后再用 edit 把标题改成《雨夜》。",
        "issue 30 §5: a second agent turn of the 0.5B (a write then an edit asked for): paths and call shapes",
        seed=3),
    "agent_turn": EngineCase(
        "0.5b", "agent", real_model.AGENT_TURN,
        "issue 30 §5: an agent turn of a small model asked to write a chapter file (text tool calls, paths)"),
    "agent_old": EngineCase(
        "0.5b", "agent", real_model.AGENT_TURN,
        "issue 30 §5 played by the engine issue 30 was filed against (1752d0e; found by bench/sweep_wire.py beats "
        "agent_old 0.5b 1-40 none … 1752d0e, seed 14): the 0.5B answered with one bare-JSON write whose arguments were "
        "a list holding the object; that engine left the JSON as the reply and wrote nothing", seed=14,
        engine_at="1752d0e"),
    "lore_old_entry": EngineCase(
        "0.5b", "prose", real_model.ROLEPLAY_TURNS[3],
        "issue 30 §2 played by the engine issue 30 was filed against (1752d0e; bench/sweep_wire.py lore --engine-at, "
        "seed 10 at 1.1): the 0.5B answered the watchman question with lore entries copied under their 【title】 — "
        "the 更夫 entry is the answer — and that engine's echo filter cut them out of the sealed reply",
        seed=10, temperature=1.1, engine_at="1752d0e"),
}


async def record_engine_case(base_url: str, port: int, name: str, case: EngineCase, out: Path,
                             server_note: dict[str, Any]) -> None:
    """Play ``case`` through ``Chat.send`` in a throwaway data folder and write one transcript per exchange:
    ``NAME`` for the first, ``NAME-2``, ``NAME-3`` … for the next ones (a retry, the scribe), each meta saying its
    ``exchange`` number, the ``case`` and, for the last, how the beat ended. With ``case.engine_at`` the beat is
    played in a subprocess by the engine at that commit (same files; ``engine.at`` in each meta says so)."""
    import dataclasses
    import tempfile

    if case.engine_at and not os.environ.get("LIYUAN_ENGINE_TREE"):
        job = {"base_url": base_url, "port": port, "name": name, "case": dataclasses.asdict(case), "out": str(out),
               "note": server_note}
        subprocess.run([sys.executable, __file__, "--play-engine-case", json.dumps(job, ensure_ascii=False)],
                       env=engine_env(case.engine_at), check=True)
        return

    work = Path(tempfile.mkdtemp(prefix="liyuan-wire-"))
    os.environ["LIYUAN_HOME"] = str(work / "home")
    from liyuan_desktop.core.cards import load_card
    from liyuan_desktop.core.chat.facade import Chat

    tee = TeeTransport()
    model_name = real_model.MODELS[case.model].name
    client = engine_client(base_url, model_name, transport=tee, local=case.local, compact=case.compact,
                           extra_body={"seed": case.seed}, read_timeout=900.0, idle_timeout=900.0,
                           total_timeout=3600.0, max_tokens=384, scribe_max_tokens=384,
                           provider=case.provider or None)
    chat = Chat.create(work / "chat", load_card(DEMO_CARD), client, mode="agent" if case.mode == "agent" else "roleplay")
    if case.mode == "prose":
        chat.set_prose_only(True)
    if case.temperature is not None:  # the chat's own setting, so the echo guard's retry steps above it
        from liyuan_desktop.core.llm.sampling import Sampling
        chat.set_sampling(Sampling(temperature=case.temperature))
    notices: list[str] = []
    t0 = time.perf_counter()

    def sink(ev: Any) -> None:
        text = getattr(ev, "text", None)
        if type(ev).__name__ == "Activity" and text:
            notices.append(text)

    outcome: dict[str, Any] = {}
    try:
        res = await chat.send(case.say, on_event=sink, **({"chapter": case.chapter} if case.chapter else {}))
        outcome = {"sealed": bool(getattr(res, "sealed", False)), "final": getattr(res, "final", "") or ""}
    except Exception as exc:  # a failed beat is recorded too
        outcome = {"error": f"{type(exc).__name__}: {exc}"}
    finally:
        await client.aclose()
    files = sorted(str(q.relative_to(chat.workspace)) for q in Path(chat.workspace).rglob("*") if q.is_file()) \
        if case.mode == "agent" else []
    port_s = str(port).encode()

    def scrub(b: bytes) -> bytes:
        b = b.replace(str(real_model.CACHE).encode() + b"/", b"").replace(str(work).encode(), b"WORK")
        return b.replace(b"127.0.0.1:" + port_s, b"127.0.0.1:PORT").replace(b"localhost:" + port_s, b"localhost:PORT")

    for i, ex in enumerate(tee.exchanges, 1):
        stem = name if i == 1 else f"{name}-{i}"
        pieces = [scrub(p) for p in ex["pieces"]]
        kept = [[k, v.replace(f":{port}", ":PORT")] for k, v in ex["headers"].multi_items() if k.lower() != "date"]
        body = json.loads(scrub(json.dumps(ex["body"], ensure_ascii=False).encode()).decode())
        (out / f"{stem}.request.json").write_text(json.dumps(
            {"method": "POST", "path": "/v1/chat/completions", "body": body}, ensure_ascii=False, indent=1) + "\n",
            encoding="utf-8")
        (out / f"{stem}.response").write_bytes(b"".join(pieces))
        meta: dict[str, Any] = {
            "status": ex["status"], "headers": kept, "pieces": [len(p) for p in pieces], "arrived": ex["arrived"],
            "purpose": case.purpose, "case": name, "exchange": i, "of": len(tee.exchanges),
            "engine": {"mode": case.mode, "local": case.local, "say": case.say, "chapter": case.chapter,
                       "compact": case.compact, "seed": case.seed, "temperature": case.temperature,
                       "provider": case.provider,
                       **({"at": engine_commit(case.engine_at)} if case.engine_at else {})},
            "recorded": time.strftime("%Y-%m-%d", time.gmtime()), **server_note,
            "model": model_name}
        if i == len(tee.exchanges):
            meta["beat"] = {**outcome, "notices": notices, "files": files,
                            "seconds": round(time.perf_counter() - t0, 1)}
        (out / f"{stem}.meta.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1) + "\n",
                                               encoding="utf-8")
    print(f"  {name}: {len(tee.exchanges)} exchange(s), {outcome}, notices {notices}, files {files}, "
          f"{time.perf_counter() - t0:.1f} s", flush=True)


def engine_commit(commit: str) -> str:
    """``commit`` as its full hash (what a meta's ``engine.at`` records)."""
    return subprocess.run(["git", "rev-parse", "--verify", f"{commit}^{{commit}}"], cwd=real_model.ROOT,
                          capture_output=True, text=True, check=True).stdout.strip()


def main(argv: Optional[list[str]] = None) -> int:
    if argv is None and sys.argv[1:2] == ["--play-engine-case"]:  # a30old: the subprocess of an older engine
        job = json.loads(sys.argv[2])
        import liyuan_desktop
        assert Path(liyuan_desktop.__file__).resolve().is_relative_to(Path(os.environ["LIYUAN_ENGINE_TREE"])), \
            f"the engine imported is {liyuan_desktop.__file__}, not the one at {job['case']['engine_at']}"
        asyncio.run(record_engine_case(job["base_url"], job["port"], job["name"], EngineCase(**job["case"]),
                                       Path(job["out"]), job["note"]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=real_model.ROOT / "tests" / "data" / "wire")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", nargs="*", help="record only these cases")
    ap.add_argument("--seed", type=int, help="llama.cpp seed for the engine cases recorded (default: each case's)")
    ap.add_argument("--temperature", type=float, help="the chat's own temperature for the engine cases recorded "
                                                         "(default: each case's; bench/sweep_wire.py finds them)")
    args = ap.parse_args(argv)
    import dataclasses
    for n, c in ENGINE_CASES.items():  # a30rec: --seed / --temperature override the recorded cases
        if args.seed is not None:
            c = dataclasses.replace(c, seed=args.seed)
        if args.temperature is not None:
            c = dataclasses.replace(c, temperature=args.temperature)
        ENGINE_CASES[n] = c
    args.out.mkdir(parents=True, exist_ok=True)
    real_model.ensure_server_env()
    wanted = [n for n in CASES if not args.only or n in args.only]
    model = real_model.ensure_model() if wanted else Path()
    for kind in ("jinja", "plain"):
        names = [n for n in wanted if CASES[n][0] == kind]
        if not names:
            continue
        note = {"server": f"llama.cpp server (xllamacpp {real_model.SERVER_WHEEL[1]})",
                "model": real_model.MODEL_NAME,
                "flags": "--jinja, reasoning format none, SSE ping every 1 s" if kind == "jinja" else
                         "no --jinja (the default chat template path)"}
        with real_model.llama_server(model, threads=args.threads, ctx=4096, parallel=1, jinja=kind == "jinja",
                                     ping=1, reasoning=0) as base_url:
            port = int(base_url.rsplit(":", 1)[1].split("/")[0])
            print(f"· {kind} server up", flush=True)
            for name in names:
                _srv, stream, request, purpose = CASES[name]
                asyncio.run(record_case(base_url, port, name, stream, request, purpose, args.out, note))
    engine = [n for n in ENGINE_CASES if not args.only or n in args.only]
    for which in sorted({ENGINE_CASES[n].model for n in engine}):
        names = [n for n in engine if ENGINE_CASES[n].model == which]
        model_file = real_model.ensure_model(which)
        note = {"server": f"llama.cpp server (xllamacpp {real_model.SERVER_WHEEL[1]})",
                "flags": f"--jinja, reasoning format deepseek, SSE ping every 1 s, {args.threads} thread(s)"}
        with real_model.llama_server(model_file, threads=args.threads, ctx=8192, parallel=1, jinja=True, ping=1,
                                     reasoning=3) as base_url:
            port = int(base_url.rsplit(":", 1)[1].split("/")[0])
            print(f"· {which} server up", flush=True)
            for name in names:
                asyncio.run(record_engine_case(base_url, port, name, ENGINE_CASES[name], args.out, note))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
