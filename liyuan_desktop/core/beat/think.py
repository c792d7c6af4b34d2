"""``<think>…</think>`` in the content channel (issue 18 §2): reasoning models served without a reasoning parser
(llama.cpp without ``--reasoning-format``, many Ollama/LM Studio set-ups, Qwen3/DeepSeek-R1 distils) put their
thinking at the start of the content. It belongs to reasoning, never to the draft or the final.

:class:`ThinkSplitter` routes streamed content pieces: while the content so far could still be the start of a
``<think>`` block it holds the text back (at most a few characters); inside the block it yields reasoning; after
``</think>`` — or as soon as the content clearly does not start with ``<think>`` — everything is content, passed on
unchanged (so a reply without a think block streams exactly as before). :func:`split_think` does the same on a
whole text. Only a block at the very start counts (leading whitespace allowed), as the models emit it; a
``<think>`` later in the prose is the author's text.
"""

from __future__ import annotations

from typing import Optional

__all__ = ["ThinkSplitter", "split_think", "OPEN", "CLOSE"]

OPEN = "<think>"
CLOSE = "</think>"


class ThinkSplitter:
    """Incremental splitter (module doc). :meth:`feed` returns ``(reasoning, content)`` pieces for one streamed
    piece; :meth:`flush` returns what was held back at the end of the stream."""

    def __init__(self) -> None:
        self._state = "start"  # start | think | content
        self._held = ""

    def feed(self, piece: str) -> tuple[str, str]:
        """Route one piece: (reasoning text, content text), either may be ""."""
        if self._state == "content":
            return "", piece
        buf = self._held + piece
        if self._state == "start":
            s = buf.lstrip()
            if s.startswith(OPEN):
                self._state = "think"
                buf = s[len(OPEN):]
            elif OPEN.startswith(s):  # still could be the opening tag (or only whitespace so far)
                self._held = buf
                return "", ""
            else:
                self._state, self._held = "content", ""
                return "", buf
        # inside the think block
        end = buf.find(CLOSE)
        if end >= 0:
            self._state, self._held = "content", ""
            return buf[:end], buf[end + len(CLOSE):].lstrip("\n")
        keep = 0  # a partial closing tag at the end is held back
        for k in range(min(len(CLOSE) - 1, len(buf)), 0, -1):
            if CLOSE.startswith(buf[-k:]):
                keep = k
                break
        self._held = buf[len(buf) - keep:] if keep else ""
        return buf[:len(buf) - keep], ""

    def flush(self) -> tuple[str, str]:
        """The held-back text at the end of the stream: reasoning when inside an unclosed think block, else content."""
        held, self._held = self._held, ""
        if self._state == "think":
            return held, ""
        return "", held

    @property
    def thinking(self) -> bool:
        """True while inside a think block."""
        return self._state == "think"


def split_think(text: str) -> tuple[str, str]:
    """``(reasoning, content)`` of a whole reply: a leading ``<think>…</think>`` block moved to reasoning (an
    unclosed one takes the whole text); text without it comes back unchanged as content."""
    if OPEN not in text[:64]:
        return "", text
    sp = ThinkSplitter()
    r, c = sp.feed(text)
    r2, c2 = sp.flush()
    return r + r2, c + c2


def strip_think(text: Optional[str]) -> str:
    """``text`` without a leading think block (see :func:`split_think`)."""
    return split_think(text or "")[1]
