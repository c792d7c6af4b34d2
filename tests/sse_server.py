"""A real, scripted HTTP server on 127.0.0.1 for client tests.

Each test queues :class:`Reply` objects; every incoming request takes the next one. Replies stream their body
pieces with chunked transfer encoding (one HTTP chunk per piece, flushed), and can drop the connection
mid-body (``cut``) or stall until the server is closed (``stall``). Requests are recorded.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional, Union

Piece = Union[str, bytes]

DONE = "data: [DONE]\n\n"


def sse(obj: Any) -> str:
    """One SSE event: ``data: <json>`` and the blank line."""
    payload = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)
    return f"data: {payload}\n\n"


def chunk(
    content: Optional[str] = None,
    *,
    reasoning: Optional[str] = None,
    reasoning_key: str = "reasoning_content",
    tool_calls: Optional[list[dict[str, Any]]] = None,
    finish: Optional[str] = None,
    role: Optional[str] = None,
    model: str = "test-model",
) -> dict[str, Any]:
    """A ``chat.completion.chunk`` with one choice."""
    delta: dict[str, Any] = {}
    if role:
        delta["role"] = role
    if content is not None:
        delta["content"] = content
    if reasoning is not None:
        delta[reasoning_key] = reasoning
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def usage_chunk(usage: dict[str, Any], model: str = "test-model") -> dict[str, Any]:
    """The trailing usage chunk (empty choices), as sent with ``stream_options.include_usage``."""
    return {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": model,
            "choices": [], "usage": usage}


@dataclass
class Reply:
    """One scripted response.

    ``body`` pieces are written in order (each flushed as its own HTTP chunk when ``chunked``);
    ``gap`` seconds between pieces; ``cut`` drops the connection after the pieces without ending the body;
    ``stall`` blocks after the pieces until the server closes (or ``release`` is set), then drops it.
    """

    status: int = 200
    body: list[Piece] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    chunked: bool = True
    cut: bool = False
    stall: bool = False
    gap: float = 0.0


def sse_reply(*events: Any, done: bool = True, **kwargs: Any) -> Reply:
    """A 200 SSE reply of the given chunk objects (or raw strings), ending with ``[DONE]`` when ``done``."""
    body: list[Piece] = [e if isinstance(e, str) and e.startswith((":", "data:", "event:", "\n")) else sse(e)
                         for e in events]
    if done:
        body.append(DONE)
    return Reply(body=body, **kwargs)


def json_reply(obj: Any, status: int = 200, headers: Optional[dict[str, str]] = None) -> Reply:
    """A plain JSON reply with Content-Length."""
    return Reply(status=status, body=[json.dumps(obj, ensure_ascii=False)], headers=headers or {},
                 content_type="application/json", chunked=False)


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    raw: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.raw.decode("utf-8"))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_HTTPServer"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def _write(self, data: bytes, chunked: bool) -> None:
        if chunked:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        else:
            self.wfile.write(data)
        self.wfile.flush()

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        owner._record(RecordedRequest(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, raw))
        reply = owner._next_reply()
        pieces = [p.encode("utf-8") if isinstance(p, str) else p for p in reply.body]
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            for key, value in reply.headers.items():
                self.send_header(key, value)
            if reply.chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(sum(map(len, pieces))))
            self.end_headers()
            self.wfile.flush()
            for i, data in enumerate(pieces):
                if i and reply.gap:
                    time.sleep(reply.gap)
                self._write(data, reply.chunked)
            if reply.stall:
                owner.release.wait(10)
            if reply.cut or reply.stall:
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            if reply.chunked:
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    do_GET = do_POST


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    owner: "ScriptedServer"

    def handle_error(self, request: Any, client_address: Any) -> None:  # client went away: fine in tests
        pass


class ScriptedServer:
    """Start with ``with ScriptedServer() as srv:``; ``srv.base_url`` ends with ``/v1``."""

    def __init__(self) -> None:
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._lock = threading.Lock()
        self._replies: list[Reply] = []
        self.requests: list[RecordedRequest] = []
        self.release = threading.Event()
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_reply(self) -> Reply:
        with self._lock:
            if self._replies:
                return self._replies.pop(0)
        return json_reply({"error": {"message": "test server: no scripted reply left"}}, status=599)

    def start(self) -> "ScriptedServer":
        self._thread.start()
        return self

    def close(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> "ScriptedServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()
