"""Catching a reply that repeats itself while it streams (issue 18 §0: small local models loop until the output cap).

:class:`RepetitionGuard` is fed the streamed text piece by piece (``feed``) and says when the text has started to
loop. Two signs, both checked incrementally (each piece costs O(its length), plus one bounded tail comparison every
:data:`TAIL_STEP` characters — never a scan of the whole text):

* **a repeated unit**: the same paragraph (a line of at least :data:`MIN_PARAGRAPH` characters) or the same
  sentence (ending in 。！？!?… or a period, at least :data:`MIN_SENTENCE` characters) seen :data:`REPEATS` times.
  Units are compared with whitespace removed. Short lines (「是。」, a dialogue tag) never count.
* **a repeated clause** (local models only, ``RepetitionGuard(clauses=True)``; issue 30: the 1.5B sealed one lore
  clause three times in three different sentences, under the sentence count): the same clause — text between
  clause or sentence marks (，、；：,;: 。！？…, line breaks), quotes and emphasis aside — of at least
  :data:`MIN_CLAUSE` characters seen :data:`REPEATS` times. :attr:`keep` is then the start of its third copy (the
  reply is cut before the second repeat; the loop code trims that to a sentence end).
* **a periodic tail**: the last :data:`TAIL_SPAN` characters (or three periods, whichever is longer) repeat with
  a period of 1..:data:`MAX_PERIOD` characters — a loop with no sentence ends (「哈哈哈…」, a list growing forever).

When it fires, :attr:`keep` is how much of the text to keep: everything up to the end of the first copy of the
repeated unit (or one period of the loop), so the draft the user gets back holds no loop.
"""

from __future__ import annotations

import json
import re
from typing import Optional

from ..lenient_json import RepairRefused, repair_loads

__all__ = ["RepetitionGuard", "content_string", "partial_content", "sentence_prefix", "REPEATS", "MIN_CLAUSE", "MIN_PARAGRAPH",
           "MIN_SENTENCE", "TAIL_SPAN", "MAX_PERIOD", "TAIL_STEP"]

#: How many times the same unit may appear before the reply counts as looping.
REPEATS = 3
#: The shortest paragraph (characters, whitespace aside) that counts as a unit.
MIN_PARAGRAPH = 16
#: The shortest sentence (characters, whitespace aside) that counts as a unit.
MIN_SENTENCE = 12
#: The shortest clause (characters, whitespace, quotes and emphasis marks aside) that counts as a unit (local models).
MIN_CLAUSE = 8
#: The periodic-tail check looks at this many trailing characters (at least three periods): long enough that
#: deliberate patterns in a reply (a chant, a ruler of characters) pass, short against a 2048-token output cap.
TAIL_SPAN = 1000
#: The longest period the tail check tries (characters).
MAX_PERIOD = 80
#: The tail check runs once per this many new characters.
TAIL_STEP = 48

_SENTENCE_END = "。！？!?…."
_CLOSERS = "」』”’\"')）】"
_WS = re.compile(r"\s+")
_CLAUSE_MARKS = "，、；：,;:"
_CLAUSE_NOISE = re.compile(r"[\s「」『』“”‘’\"'《》*_#>`~]+")
#: A sentence end: CJK / exclamation / question marks or an ellipsis, or a period followed by space, a closer or the
#: end (not the dot of 「3.5」), each with the closing quotes and brackets after it.
_ENDS = re.compile(r"(?:[。！？!?…]+|\.(?=[\s」』”’\"')）】*_]|$))[」』”’\"')）】*_]*")


def sentence_prefix(text: str) -> str:
    """``text`` up to the end of its last complete sentence (module's sentence ends, with the closing quotes,
    brackets and Markdown emphasis marks after them), trailing whitespace removed; "" when no sentence ends in it.
    Used to trim the prose kept before a loop (issue 30: a looping beat's de-duplicated part may be sealed)."""
    end = 0
    for m in _ENDS.finditer(text):
        end = m.end()
    return text[:end].rstrip()


class RepetitionGuard:
    """Feed streamed text with :meth:`feed`; it returns a reason ("paragraph", "sentence" or "periodic") the first
    time the text loops, then keeps returning it. ``keep``: characters of the text fed so far worth keeping
    (module doc); ``text``: all text fed. ``clauses``: also count repeated clauses (reason "clause"; the engine
    turns it on for a model on this machine or its network only)."""

    def __init__(self, clauses: bool = False) -> None:
        self._clauses = clauses
        self._clause: dict[str, int] = {}  # clause → times seen
        self._cur_clause: list[str] = []
        self._clause_start = 0
        self._parts: list[str] = []
        self._n = 0
        self._para_start = 0
        self._sent_start = 0
        self._para: dict[str, tuple[int, int]] = {}  # unit → (count, end offset of its first copy)
        self._sent: dict[str, tuple[int, int]] = {}
        self._tail = ""  # the last TAIL_SPAN + MAX_PERIOD characters
        self._since_tail = 0
        self._cur_para: list[str] = []
        self._cur_sent: list[str] = []
        self.reason: Optional[str] = None
        self.keep = 0

    @property
    def text(self) -> str:
        """Everything fed so far."""
        return "".join(self._parts)

    def _unit(self, table: dict[str, tuple[int, int]], raw: str, minimum: int, end: int, kind: str) -> None:
        key = _WS.sub("", raw)
        if len(key) < minimum:
            return
        count, first_end = table.get(key, (0, end))
        count += 1
        table[key] = (count, first_end)
        if count >= REPEATS and self.reason is None:
            self.reason, self.keep = kind, first_end

    def feed(self, piece: str) -> Optional[str]:
        """Take the next streamed piece; the loop's reason once it loops, else None."""
        if self.reason is not None or not piece:
            return self.reason
        self._parts.append(piece)
        base = self._n
        self._n += len(piece)
        for i, ch in enumerate(piece):
            pos = base + i + 1  # offset just after ch
            if ch == "\n":
                self._unit(self._para, "".join(self._cur_para), MIN_PARAGRAPH, pos - 1, "paragraph")
                self._unit(self._sent, "".join(self._cur_sent), MIN_SENTENCE, pos - 1, "sentence")
                self._cur_para, self._cur_sent = [], []
                if self._clauses:  # after the paragraph and sentence counts: a whole unit's loop keeps its name
                    self._clause_char(ch, pos)
                continue
            self._cur_para.append(ch)
            if ch in _SENTENCE_END or (ch in _CLOSERS and self._cur_sent and self._cur_sent[-1] in _SENTENCE_END):
                self._cur_sent.append(ch)
                # a sentence ends here unless the next character continues the punctuation run (。」 …… ?!)
                nxt = piece[i + 1] if i + 1 < len(piece) else ""
                if nxt and (nxt in _SENTENCE_END or nxt in _CLOSERS):
                    continue
                self._unit(self._sent, "".join(self._cur_sent), MIN_SENTENCE, pos, "sentence")
                self._cur_sent = []
            else:
                self._cur_sent.append(ch)
            if self._clauses:
                self._clause_char(ch, pos)
            if self.reason is not None:
                return self.reason
        if self.reason is not None:
            return self.reason
        self._tail = (self._tail + piece)[-(TAIL_SPAN + MAX_PERIOD + 1):]
        self._since_tail += len(piece)
        if self._since_tail >= TAIL_STEP:
            self._since_tail = 0
            self._check_tail()
        return self.reason

    def _clause_char(self, ch: str, pos: int) -> None:
        """One character for the clause count: a clause or sentence mark (or a line break) ends the current clause."""
        if ch not in _CLAUSE_MARKS and ch not in _SENTENCE_END and ch != "\n":
            self._cur_clause.append(ch)
            return
        key = _CLAUSE_NOISE.sub("", "".join(self._cur_clause))
        start = self._clause_start
        self._cur_clause, self._clause_start = [], pos
        if len(key) < MIN_CLAUSE:
            return
        count = self._clause.get(key, 0) + 1
        self._clause[key] = count
        if count >= REPEATS and self.reason is None:
            self.reason, self.keep = "clause", start

    def _check_tail(self) -> None:
        t = self._tail
        for p in range(1, MAX_PERIOD + 1):
            span = max(TAIL_SPAN, 3 * p)
            if len(t) < span + p:
                break
            if t[-span:] == t[-span - p:-p]:
                if not t[-span:].strip():
                    return  # trailing whitespace is no loop
                self.reason = "periodic"
                self.keep = max(0, self._n - span)  # the text before the loop and one period of it
                return


def partial_content(args: str) -> str:
    """The ``content`` of a draft_write/draft_append whose JSON arguments were cut mid-stream (the call was
    cancelled): the complete arguments when they parse, else what the json-repair library makes of the prefix;
    "" when there is no content string."""
    try:
        obj = json.loads(args)
    except (ValueError, RecursionError):  # RecursionError: nested thousands deep
        try:
            obj = repair_loads(args)
        except RepairRefused:  # too long or deep for json_repair: read the content string by hand
            return _cut_content_string(args)
        except Exception:  # json_repair raises on some inputs
            return ""
    value = obj.get("content") if isinstance(obj, dict) else None
    return value if isinstance(value, str) else ""


_CONTENT_KEY = re.compile(r'"content"[ \t\r\n]*:[ \t\r\n]*"')


def content_string(text: str) -> str:
    """The ``content`` string of a tool call cut mid-way, wherever it stands in ``text`` (native arguments, or a
    call written as text in a reply the output cap cut off: ```json {"name": "draft_write", "arguments": {…,
    "content": "…): from the first ``"content": "`` to its closing quote or the end, escapes decoded; "" when
    there is none."""
    return _cut_content_string(text)


def _cut_content_string(args: str) -> str:
    """The ``content`` string of cut JSON arguments too long for json_repair: from the first ``"content": "`` to
    its closing quote or the end, JSON escapes decoded (a cut escape at the end is dropped). Linear; "" when there
    is no such key."""
    m = _CONTENT_KEY.search(args)
    if not m:
        return ""
    i, n = m.end(), len(args)
    j = i
    while j < n and args[j] != '"':
        j += 2 if args[j] == "\\" else 1
    body = args[i:min(j, n)]
    for cut in range(0, 7):  # a \uXXXX escape cut mid-way: drop its start
        try:
            return str(json.loads('"' + (body[:len(body) - cut] if cut else body) + '"'))  # a JSON string literal
        except ValueError:
            continue
    return ""
