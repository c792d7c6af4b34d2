"""Recorded wire transcripts (``tests/data/wire/``, made by ``bench/record_wire.py`` against llama.cpp's server)
replayed byte for byte by the loopback test server (:class:`sse_server.ScriptedServer`).

:func:`load` reads one transcript; :func:`replay` turns it into a :class:`sse_server.Reply` that writes the same
status, headers and body pieces (the sizes the recorder saw arriving), chunked when the real server was, with a
Content-Length when it was not. :func:`sse_payloads` parses the recorded body independently of the client, so a
test can compare what the client assembled with what the server sent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    from sse_server import Reply
except ImportError:  # tests/ collected as a package
    from tests.sse_server import Reply

WIRE = Path(__file__).resolve().parent / "data" / "wire"
#: headers the scripted server writes itself (from the reply's shape), not copied from the recording
_OWN_HEADERS = {"content-type", "content-length", "transfer-encoding", "connection", "keep-alive", "date", "server"}


@dataclass
class Transcript:
    """One recorded exchange: the request body our client sent, the server's status, headers, body bytes and the
    pieces the body arrived in; ``meta`` is the whole ``NAME.meta.json`` (purpose, server, model, flags)."""

    name: str
    request: dict[str, Any]
    status: int
    headers: dict[str, str]
    body: bytes
    pieces: list[bytes]
    meta: dict[str, Any]

    @property
    def chunked(self) -> bool:
        return self.headers.get("transfer-encoding", "").lower() == "chunked"


def names() -> list[str]:
    """Every recorded case in ``tests/data/wire/``."""
    return sorted(p.name[:-len(".meta.json")] for p in WIRE.glob("*.meta.json"))


def load(name: str) -> Transcript:
    """Read transcript ``name``; raises AssertionError if its piece sizes do not add up to the body."""
    meta = json.loads((WIRE / f"{name}.meta.json").read_text(encoding="utf-8"))
    body = (WIRE / f"{name}.response").read_bytes()
    sizes = meta["pieces"]
    assert sum(sizes) == len(body), f"{name}: pieces {sum(sizes)} bytes, body {len(body)}"
    pieces, at = [], 0
    for n in sizes:
        pieces.append(body[at:at + n])
        at += n
    request = json.loads((WIRE / f"{name}.request.json").read_text(encoding="utf-8"))
    headers = {k.lower(): v for k, v in meta["headers"]}
    return Transcript(name, request, meta["status"], headers, body, pieces, meta)


def replay(t: Transcript) -> Reply:
    """The scripted reply that writes ``t`` again: same status, content type, extra headers and body pieces."""
    extra = {k: v for k, v in t.headers.items() if k not in _OWN_HEADERS}
    return Reply(status=t.status, body=list(t.pieces), headers=extra,
                 content_type=t.headers.get("content-type", "application/json"), chunked=t.chunked)


def sse_payloads(body: bytes) -> tuple[list[Any], int, bool]:
    """Parse an SSE body on its own: (the JSON payloads of its ``data:`` events in order, the number of comment
    lines — keep-alives —, whether it ended with ``data: [DONE]``)."""
    payloads: list[Any] = []
    comments = 0
    done = False
    for event in body.decode("utf-8").split("\n\n"):
        for line in event.split("\n"):
            if line.startswith(":"):
                comments += 1
            elif line.startswith("data: "):
                data = line[len("data: "):]
                if data == "[DONE]":
                    done = True
                else:
                    payloads.append(json.loads(data))
    return payloads, comments, done


def streamed_text(body: bytes, key: str = "content") -> str:
    """The concatenated ``delta[key]`` of every choice in a recorded SSE body."""
    payloads, _, _ = sse_payloads(body)
    return "".join((c.get("delta") or {}).get(key) or "" for p in payloads for c in p.get("choices") or [])


def exchanges(case: str) -> list[Transcript]:
    """Every exchange of an engine case recorded by ``bench/record_wire.py`` (``ENGINE_CASES``: one ``Chat.send``
    against the real server), in the order the engine made them: ``case``, ``case-2``, ``case-3`` …"""
    first = load(case)
    return [first, *(load(f"{case}-{i}") for i in range(2, int(first.meta.get("of", 1)) + 1))]


def beat_of(case: str) -> dict[str, Any]:
    """How the recorded beat of engine case ``case`` ended on the engine that recorded it (``meta["beat"]`` of its
    last exchange: ``sealed``, ``final``, ``notices``, ``files``, ``seconds`` or ``error``)."""
    return exchanges(case)[-1].meta["beat"]


def replay_at(t: Transcript, gap: float) -> Reply:
    """:func:`replay` paced like the wait before the answer: ``gap`` seconds between the recorded pieces up to the
    first ``data:`` piece (a keep-alive phase of N pieces lasts about N × ``gap``, the recording's pace made
    faster), then the rest of the body — the same bytes — as one piece."""
    r = replay(t)
    first = next((i for i, p in enumerate(t.pieces) if p.lstrip().startswith(b"data:")), len(t.pieces))
    r.body = [*t.pieces[:first], b"".join(t.pieces[first:])] if first < len(t.pieces) else list(t.pieces)
    r.gap = gap
    return r
