"""The egress gate under idle connections (issue 29 §9): 300 sockets on loopback that never send a request head
hold no thread each — the thread count stays bounded — a real request is still answered meanwhile, and the idle
ones are closed once their head is overdue (frame_guard.HEAD_TIMEOUT_S)."""

from __future__ import annotations

import socket
import threading
import time


def _ask(port: int, line: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(line.encode() + b"\r\nHost: x\r\n\r\n")
        return s.recv(100)


def test_idle_connections_hold_no_thread_each_and_requests_still_pass(monkeypatch):
    from liyuan_desktop.ui.frames import frame_guard

    monkeypatch.setattr(frame_guard, "HEAD_TIMEOUT_S", 3.0, raising=False)
    g = frame_guard.EgressGate()
    assert _ask(g.port, "CONNECT 127.0.0.1:443 HTTP/1.1").startswith(b"HTTP/1.1 403")  # the gate is up
    before = threading.active_count()
    idle: list[socket.socket] = []
    try:
        for i in range(300):
            s = socket.create_connection(("127.0.0.1", g.port), timeout=10)
            if i % 2:
                s.sendall(b"CONNECT example.com:443 HTTP/1.1\r\n")  # half a head, then nothing
            idle.append(s)
        time.sleep(0.5)
        during = threading.active_count()
        # a real request while the 300 wait: answered at once
        got: list = []
        t0 = time.monotonic()
        got.append(_ask(g.port, "CONNECT cdn.example.com:443 HTTP/1.1"))
        assert got[0].startswith(b"HTTP/1.1 403"), got
        assert time.monotonic() - t0 < 5
        assert "cdn.example.com:443" in g.refused
        assert during - before <= 8, (before, during)
        # the idle ones are closed once their head is overdue
        deadline = time.monotonic() + 30
        closed = 0
        for s in idle:
            s.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                if s.recv(100) == b"":
                    closed += 1
            except (socket.timeout, OSError):
                pass
        assert closed == 300
    finally:
        for s in idle:
            s.close()
