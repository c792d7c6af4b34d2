"""Finding words in chats (issue 17 "Search"): in one open chat (the shown branch, or every branch) and across
every chat of every card in the library, read straight from the session files.

What is searched: the messages a reader sees — the opening (and alternate greetings), the user's words and the
sealed replies; a revised reply is found by its latest text (what the transcript shows), every branch's older
versions only with ``all_branches``. A group chat's hidden turns (the nudge that carries a member's follow-up,
``session.transcript.hidden_turn``) are not the user's words and are never found. Drafts of unfinished beats, model-call logs and ledger snapshots are not
messages and are not searched (``memory_search`` ranks summaries and ledger changes for the model).

Matching (SillyTavern's own chat search is a case-insensitive substring filter; we add the rest):

* plain text: case-insensitive substring (``str.casefold``), so Chinese, Japanese and Korean text is found without
  a word segmenter — any run of characters matches where it occurs;
* ``regex=True``: a pattern in Python ``re`` syntax run by RE2 in linear time (:mod:`..linear_regex`),
  case-insensitive; raises ``re.error`` for a malformed pattern and ``LinearRegexRefused`` for backreferences or
  lookaround (the caller shows the message).

Across the library the session files are streamed line by line (a 10,000-beat file is ~100 MB, mostly model-call
logs): a line is decoded only when its first bytes name a message type, and for a plain query whose letters have
no case outside ASCII it must also contain the query's bytes (ASCII-lower-cased) before JSON is parsed. No index is
kept, so nothing can go stale; ``cancelled`` lets a worker stop between lines.

**Versions of one message.** A reply regenerated (a swipe), a user message edited into a new branch and a reply
revised in place are versions of one message: across the library every hit says which message it belongs to
(``group``: the entry above the versions and the role) and which version it is (``version``, 1-based in the order
written, as the window's ◀ ▶ counts them; ``revised`` for a revised text), and whether that version is on the
chat's shown branch (``active``). :func:`group_hits` folds the hits into one :class:`MessageHits` per message — the
window's rows and ``liyuan search``'s lines, so both count the same. To know this the stream reads every line's
head (id, parent, type: the first bytes of a line as the session writer puts them) — a dictionary of ids, no JSON.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional

from pydantic import BaseModel

from ..linear_regex import compile_python_pattern
from ..linear_regex import search as re2_search
from ..messages import Msg, message
from ..session.transcript import hidden_turn, shown_user

#: Entry types whose ``text`` is a message a reader sees (a ``revision`` is a new text of its ``target`` reply).
MESSAGE_TYPES = ("opening", "user", "assistant", "revision")
SNIPPET = 80  # characters of context in a snippet, about half before the match
_TYPE_HEAD = re.compile(rb'"type":"(opening|user|assistant|revision)"')
#: the head of a line as the session writer puts it: id, parent_id, ts, type (entries.py ``_Base`` field order)
_LINE_HEAD = re.compile(rb'\{"id":"([^"\\]*)","parent_id":(?:"([^"\\]*)"|null),"ts":-?\d+,"type":"([^"\\]*)"')
#: where a leaf entry points (the shown branch's tip)
_LEAF_TARGET = re.compile(rb'"type":"leaf","target":"([^"\\]*)"')


class SearchHit(BaseModel):
    """One message that matched. ``entry_id``: the session entry (for a revision: the reply it revised);
    ``role`` opening | user | assistant; ``snippet``: one line of about :data:`SNIPPET` characters around the first
    match with ``…`` where cut; ``start``/``length``: the first match inside ``snippet`` (code points), for
    highlighting; ``ts``: the entry's time (ms since the epoch). In one chat: ``index`` is the message's place in
    the shown branch's transcript (0 = the opening; -1 when it is on another branch) and ``beat`` its beat number
    there (0 off the branch). Across the library: ``card``/``chat`` (folder names) and ``chat_dir``; ``group`` the
    message this is a version of (``<entry above the versions>/<role>``; hits with the same ``chat_dir`` and
    ``group`` are versions of one message), ``version`` its place among them (1-based, file order; 0 unknown),
    ``revised`` the revision number when the match is in a reply's revised text (0: the text as written), ``active``
    whether this version is on the chat's shown branch (module doc, "Versions of one message")."""

    entry_id: str
    role: str
    snippet: str
    start: int = 0
    length: int = 0
    ts: int = 0
    index: int = -1
    beat: int = 0
    card: str = ""
    chat: str = ""
    chat_dir: str = ""
    group: str = ""
    version: int = 0
    revised: int = 0
    active: bool = False

    @property
    def on_branch(self) -> bool:
        """Whether the message is on the shown branch (a hit elsewhere is reached by selecting its branch)."""
        return self.index >= 0


class Matcher:
    """A compiled query: :meth:`find` gives ``(start, end)`` of the first match in a text, or None. ``query`` is
    stripped; an empty query raises ValueError. ``regex``: Python ``re`` syntax run by RE2 (module doc)."""

    def __init__(self, query: str, regex: bool = False):
        q = query.strip() if not regex else query
        if not q:
            raise ValueError(message("search.empty_query"))
        self.query, self.regex = q, regex
        self._rx = compile_python_pattern(q, ignore_case=True) if regex else None
        self._folded = q.casefold()
        # bytes that a JSON line holding a match must contain (ensure_ascii=False keeps non-ASCII as is); None when
        # the query could be spelt differently in the line (escapes, or case outside ASCII)
        plain = not regex and all(c.isascii() or c.lower() == c.upper() for c in q) \
            and not any(c in q for c in '"\\') and all(c >= " " for c in q)
        self.needle: Optional[bytes] = q.lower().encode("utf-8") if plain else None

    def find(self, text: str) -> Optional[tuple[int, int]]:
        """``(start, end)`` (code points of ``text``) of the first match, or None."""
        if self._rx is not None:
            m = re2_search(self._rx, text)
            return (m.start(), m.end()) if m is not None and m.end() > m.start() else None
        folded = text.casefold()
        i = folded.find(self._folded)
        if i < 0:
            return None
        if len(folded) == len(text):
            return i, i + len(self._folded)
        # casefold changed lengths (ß → ss): find the same place by folding prefixes (rare)
        lo = next((k for k in range(len(text) + 1) if len(text[:k].casefold()) >= i), i)
        hi = next((k for k in range(lo, len(text) + 1) if len(text[lo:k].casefold()) >= len(self._folded)), len(text))
        return lo, hi


def make_snippet(text: str, span: tuple[int, int], width: int = SNIPPET) -> tuple[str, int, int]:
    """``(snippet, start, length)``: about ``width`` characters of ``text`` around ``span`` on one line (runs of
    white space become one space), ``…`` where cut; ``start``/``length`` locate the match inside the snippet."""
    a, b = span
    before = " ".join(text[:a].split())
    if text[:a] and text[a - 1].isspace() and before:
        before += " "
    match = " ".join(text[a:b].split()) or text[a:b]
    after_raw = text[b:]
    after = " ".join(after_raw.split())
    if after_raw[:1].isspace() and after:
        after = " " + after
    room = max(0, width - len(match))
    keep_before = min(len(before), room // 2)
    keep_after = min(len(after), room - keep_before)
    keep_before = min(len(before), room - keep_after)
    head = before[len(before) - keep_before:] if keep_before else ""
    lead = "…" if keep_before < len(before) else ""
    tail = "…" if keep_after < len(after) else ""
    return lead + head + match + after[:keep_after] + tail, len(lead) + len(head), len(match)


def _hit(matcher: Matcher, entry_id: str, role: str, text: str, ts: int, **extra: Any) -> Optional[SearchHit]:
    span = matcher.find(text)
    if span is None:
        return None
    snip, start, length = make_snippet(text, span)
    return SearchHit(entry_id=entry_id, role=role, snippet=snip, start=start, length=length, ts=ts, **extra)


def search_tree(tree: Any, matcher: Matcher, item_ids: list[str], *, all_branches: bool = False,
                limit: int = 1000, cancelled: Optional[Callable[[], bool]] = None) -> list[SearchHit]:
    """Messages of an open session tree that match, oldest first, at most ``limit``.

    ``tree``: a ``session.tree.SessionTree``; ``item_ids``: the entry ids of the shown branch's transcript items in
    order (``Transcript.layout()``), which gives each hit its ``index``. Without ``all_branches`` only the shown
    branch (as the transcript shows it: a revised reply by its latest text); with it every message entry of the
    file (a reply revised on the shown branch also by its older text), the shown branch's hits first. Reads only
    message entries, which are never lazy, so a 10,000-beat chat is searched without parsing its beat logs."""
    where = {eid: k for k, eid in enumerate(item_ids)}
    path = tree.path_to()
    revised: dict[str, Any] = {}
    beat = 0
    beats: dict[str, int] = {}
    for e in path:
        t = e.type
        if t == "revision":
            revised[e.target] = e
        elif shown_user(e):
            beat += 1
            beats[e.id] = beat
        elif t == "assistant":
            beats[e.id] = beat
    hits: list[SearchHit] = []
    seen: set[str] = set()
    for e in path:
        if cancelled is not None and cancelled():
            return hits
        t = e.type
        if t not in ("opening", "user", "assistant") or e.id not in where:
            continue
        src = revised.get(e.id, e)
        h = _hit(matcher, e.id, t, src.text, src.ts, index=where[e.id], beat=beats.get(e.id, 0))
        seen.add(e.id)
        if h is not None:
            hits.append(h)
            if len(hits) >= limit:
                return hits
    if not all_branches:
        return hits
    for n, eid in enumerate(tree.order):
        if cancelled is not None and n % 512 == 0 and cancelled():
            break
        e = tree.entries[eid]
        t = e.type
        if t not in MESSAGE_TYPES or hidden_turn(e):
            continue
        if t == "revision":
            target = tree.entries.get(e.target)
            if target is None or (e.target in seen and revised.get(e.target) is e):
                continue
            h = _hit(matcher, e.target, target.type, e.text, e.ts)
        else:
            if eid in seen and eid not in revised:
                continue  # found (or not) on the shown branch already
            h = _hit(matcher, eid, t, e.text, e.ts)
        if h is not None:
            if h.entry_id in where:
                h.index, h.beat = where[h.entry_id], beats.get(h.entry_id, 0)
            hits.append(h)
            if len(hits) >= limit:
                break
    return hits


def search_file(session: Path, matcher: Matcher, *, limit: int = 200,
                cancelled: Optional[Callable[[], bool]] = None) -> Iterator[SearchHit]:
    """Stream one ``session.jsonl``: every message entry on any branch that matches, in file order (at most
    ``limit``), each with ``group``, ``version``, ``revised`` and ``active`` set (module doc); the hits come once
    the file is read (which version is on the shown branch is known only at its end). Damaged lines are skipped
    silently (opening the chat reports them). Raises OSError when the file cannot be read."""
    needle = matcher.needle
    up: dict[str, tuple[Optional[str], str]] = {}  # id -> (parent id, type), every entry but leaf pointers
    versions: dict[str, int] = {}  # group -> versions written so far
    version_of: dict[str, tuple[str, int]] = {}  # message id -> (group, version)
    leaf: Optional[str] = None
    found: list[SearchHit] = []

    def owner(parent: Optional[str], role: str) -> str:
        """The entry above a message's versions: a user message's parent; for a reply the nearest user, opening
        or header entry above it (branches.py ``swipe_group``)."""
        if role == "user":
            return parent or ""
        cur = parent
        for _ in range(64):  # a reply hangs a few entries (beat, ask) below its user message
            if cur is None or cur not in up:
                break
            p, t = up[cur]
            if t in ("user", "opening", "header"):
                break
            cur = p
        return cur or ""

    with open(session, "rb") as f:
        for k, raw in enumerate(f):
            if cancelled is not None and k % 256 == 0 and cancelled():
                return
            head = _LINE_HEAD.match(raw)
            if head is not None:
                eid: str = head.group(1).decode("utf-8", "replace")  # groups 1 and 3 always take part
                t: str = head.group(3).decode("utf-8", "replace")
                raw_parent = head.group(2)  # None for "parent_id":null
                parent = None if raw_parent is None else raw_parent.decode("utf-8", "replace")
                if t == "leaf":
                    m = _LEAF_TARGET.search(raw, 0, 200)
                    leaf = m.group(1).decode("utf-8", "replace") if m is not None else leaf
                    continue
                up[eid] = (parent, t)
                if t in ("opening", "user", "assistant"):
                    g = f"{owner(parent, t)}/{t}"
                    versions[g] = versions.get(g, 0) + 1
                    version_of[eid] = (g, versions[g])
            m = _TYPE_HEAD.search(raw, 0, 200)
            if m is None or len(found) >= limit:
                continue
            if needle is not None and needle not in raw.lower():
                continue
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            text = obj.get("text") if isinstance(obj, dict) else None
            if not isinstance(text, str) or obj.get("group_nudge"):  # a group chat's hidden turn: no message
                continue
            t = obj.get("type")
            eid = str(obj.get("target") if t == "revision" else obj.get("id"))
            role = "assistant" if t == "revision" else str(t)
            h = _hit(matcher, eid, role, text, int(obj.get("ts") or 0))
            if h is not None:
                g, v = version_of.get(eid, (f"{eid}/{role}", 0))
                h.group, h.version = g, v
                if t == "revision":
                    h.revised = int(obj.get("version") or 1)
                found.append(h)
    shown: set[str] = set()
    cur = leaf
    while cur is not None and cur in up and cur not in shown:
        shown.add(cur)
        cur = up[cur][0]
    # a reply revised on the shown branch shows its newest text: that hit is the shown one, older texts are not
    newest: dict[str, int] = {}
    for h in found:
        if h.entry_id in shown:
            newest[h.entry_id] = max(newest.get(h.entry_id, 0), h.revised)
    for h in found:
        h.active = h.entry_id in shown and h.revised == newest[h.entry_id]
        yield h


def search_library(query: str, *, regex: bool = False, card: Optional[str] = None, limit: int = 500,
                   per_chat: int = 200, cancelled: Optional[Callable[[], bool]] = None,
                   progress: Optional[Callable[[int, int], None]] = None) -> Iterator[SearchHit]:
    """Every chat of every card in the library (or only the card folder named ``card``), streamed: hits with
    ``card``, ``chat`` and ``chat_dir`` set, card by card (by name), newest chat first, at most ``limit`` in all
    and ``per_chat`` per chat. ``progress(done, total)`` after each chat. Raises ValueError for an empty query or
    an unknown ``card``, ``re.error``/``LinearRegexRefused`` for a bad pattern (before anything is read)."""
    from ..cards.library import list_cards, list_chats

    matcher = Matcher(query, regex)
    cards = list_cards()
    if card is not None:
        cards = [c for c in cards if c.name == card or Path(c.dir) == Path(card)]
        if not cards:
            raise ValueError(message("search.no_card", card=card))
    chats = [(c, ch) for c in cards for ch in list_chats(c)]
    total, found = len(chats), 0
    for done, (c, ch) in enumerate(chats, 1):
        if cancelled is not None and cancelled():
            return
        try:
            for h in search_file(Path(ch.dir) / "session.jsonl", matcher, limit=per_chat, cancelled=cancelled):
                h.card, h.chat, h.chat_dir = c.name, ch.name, ch.dir
                yield h
                found += 1
                if found >= limit:
                    return
        except OSError:
            pass  # a chat removed while we read: nothing to find there
        if progress is not None:
            progress(done, total)


class MessageHits(BaseModel):
    """One message found across the library, with every version of it that matched: ``versions`` in file order
    (at least one); :attr:`first` is the one to show and open — the version on the chat's shown branch when one
    matched, else the newest that did."""

    versions: list[SearchHit]

    @property
    def first(self) -> SearchHit:
        """The version to show and open (class doc)."""
        shown = [h for h in self.versions if h.active]
        return shown[-1] if shown else self.versions[-1]


def group_hits(hits: Iterable[SearchHit]) -> list[MessageHits]:
    """Fold library hits (:func:`search_library`) into one :class:`MessageHits` per message (same ``chat_dir`` and
    ``group``), in the order each message was first found. A hit without a ``group`` is its own message."""
    out: list[MessageHits] = []
    where: dict[tuple[str, str], MessageHits] = {}
    for h in hits:
        key = (h.chat_dir, h.group or f"{h.entry_id}/{h.role}")
        m = where.get(key)
        if m is None:
            m = where[key] = MessageHits(versions=[h])
            out.append(m)
        else:
            m.versions.append(h)
    return out


def version_label(h: SearchHit) -> Msg:
    """Which version a hit is (catalog ``search.version`` / ``search.version.revised``; the window and the CLI
    render it in their language)."""
    return message("search.version.revised" if h.revised else "search.version", n=h.version or 1)


def found_label(groups: list[MessageHits]) -> Msg:
    """The count line of a search: messages found, and the versions when there are more of them (catalog
    ``search.found`` / ``search.found.versions``)."""
    v = sum(len(g.versions) for g in groups)
    if v > len(groups):
        return message("search.found.versions", n=len(groups), v=v)
    return message("search.found", n=len(groups))


def hits_json(hits: Iterable[SearchHit]) -> list[dict[str, Any]]:
    """Hits as plain dicts (for ``liyuan search --json``)."""
    return [h.model_dump() for h in hits]


def messages_json(groups: Iterable[MessageHits]) -> list[dict[str, Any]]:
    """Messages found as plain dicts (``liyuan search --json``): the shown version's fields with ``versions``, the
    list of every matching version (each a hit dict)."""
    return [{**g.first.model_dump(), "versions": hits_json(g.versions)} for g in groups]


__all__ = ["MESSAGE_TYPES", "Matcher", "MessageHits", "SearchHit", "found_label", "group_hits", "hits_json", "make_snippet",
           "messages_json", "search_file", "search_library", "search_tree", "version_label"]
