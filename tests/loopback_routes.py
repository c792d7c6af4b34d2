"""A real HTTP server on 127.0.0.1 (ephemeral port) that answers by method and path, for probes of local servers
(issue 18: capabilities and discovery). Each route is a fixed JSON answer or a function of the request body;
requests are recorded. ``/v1/chat/completions`` may be given a queue of answers (JSON or SSE text)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional, Union

Answer = Union[tuple[int, Any], Callable[[Any], tuple[int, Any]]]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        owner: RouteServer = self.server.owner  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = self.path.split("?", 1)[0]
        owner.requests.append((self.command, path, body))
        status, payload = owner.answer(self.command, path, body)
        if isinstance(payload, str) and payload.startswith("data:"):
            data, ctype = payload.encode(), "text/event-stream"
        else:
            data, ctype = json.dumps(payload, ensure_ascii=False).encode(), "application/json"
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    do_GET = _answer
    do_POST = _answer


class RouteServer:
    """``with RouteServer({("GET", "/v1/models"): (200, {...})}) as srv:`` — ``srv.port``, ``srv.base_url``
    (``http://127.0.0.1:<port>/v1``), ``srv.requests`` ([(method, path, json body)]). Unknown routes answer 404.
    ``chat`` is a list of answers for POST ``/v1/chat/completions``, taken in order (the last one repeats)."""

    def __init__(self, routes: Optional[dict[tuple[str, str], Answer]] = None, chat: Optional[list[Answer]] = None):
        self.routes = dict(routes or {})
        self.chat = list(chat or [])
        self.requests: list[tuple[str, str, Any]] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.owner = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if method == "POST" and path == "/v1/chat/completions" and self.chat:
            item = self.chat.pop(0) if len(self.chat) > 1 else self.chat[0]
            return item(body) if callable(item) else item
        item = self.routes.get((method, path))
        if item is None:
            return 404, {"error": "not found"}
        return item(body) if callable(item) else item

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def chat_bodies(self) -> list[Any]:
        return [b for m, p, b in self.requests if m == "POST" and p == "/v1/chat/completions"]

    def __enter__(self) -> "RouteServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
