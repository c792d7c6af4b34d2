"""World info / lorebook (世界书): entries, keyword activation, and the lorebook_search / lorebook_list tools.

This is the minimal activation the beat loop needs (issue 2): constant entries, primary keys as case-insensitive
substrings over a scan window of the last ``scan_depth`` messages (SillyTavern's default depth is 2), each message
scanned as ``"Name: text"``; disabled entries never fire. The entry model already carries the SillyTavern fields
(secondary keys, logic, position, depth, probability, groups, sticky/cooldown/delay) so the full semantics can be
added without changing callers (see ../shared/design/cards.md).

In Liyuan the injection lists only the titles hit this beat (【相关设定】) and the index of all non-constant titles
(【设定集索引】); the model pulls the text it needs with ``lorebook_search`` (seed 000/002 runs).
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from pydantic import BaseModel, ConfigDict, Field


class LoreEntry(BaseModel):
    """One world-info entry. ``title`` is SillyTavern's ``comment`` (or a card book entry's ``name``).
    ``order`` is the insertion order (higher = closer to the end of the prompt in SillyTavern)."""

    model_config = ConfigDict(extra="allow")

    uid: int = 0
    title: str = ""
    keys: list[str] = Field(default_factory=list)
    secondary_keys: list[str] = Field(default_factory=list)
    selective_logic: int = 0
    content: str = ""
    constant: bool = False
    enabled: bool = True
    order: int = 100
    position: str = "before_char"
    case_sensitive: Optional[bool] = None
    match_whole_words: Optional[bool] = None
    probability: int = 100
    use_probability: bool = True
    group: str = ""
    sticky: int = 0
    cooldown: int = 0
    delay: int = 0
    extensions: dict[str, Any] = Field(default_factory=dict)

    @property
    def display_title(self) -> str:
        """Title shown in injections and tool results: the comment/name, else the first key, else ``#uid``."""
        return self.title or (self.keys[0] if self.keys else f"#{self.uid}")


class ScanMessage(BaseModel):
    """A chat message as the activation scanner sees it."""

    name: str
    text: str

    def scan_text(self) -> str:
        """``"Name: text"`` — the form SillyTavern scans."""
        return f"{self.name}: {self.text}"


class LoreHit(BaseModel):
    """One lorebook_search result (seed runs: ``{"title", "score", "content"}``)."""

    title: str
    score: int
    content: str


class Lorebook(BaseModel):
    """An ordered list of entries (book order is the order titles are listed in). ``scan_depth``: how many of the
    newest messages activation looks at (SillyTavern default 2)."""

    name: str = ""
    entries: list[LoreEntry] = Field(default_factory=list)
    scan_depth: int = 2
    extensions: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_card_book(cls, book: Optional[dict[str, Any]], name: str = "") -> "Lorebook":
        """Build from a card's ``character_book`` (V2/V3 spec fields; SillyTavern extras under ``extensions``).
        ``None`` or ``{"entries": null}`` is an empty book."""
        if not book or not isinstance(book, dict):
            return cls(name=name)
        raw = book.get("entries") or []
        if isinstance(raw, dict):  # SillyTavern world-info files key entries by uid
            raw = list(raw.values())
        entries = []
        for i, e in enumerate(raw):
            if not isinstance(e, dict):
                continue
            ext = e.get("extensions") or {}
            entries.append(
                LoreEntry(
                    uid=int(e.get("id", e.get("uid", i)) or i),
                    title=str(e.get("comment") or e.get("name") or ""),
                    keys=[str(k) for k in (e.get("keys") or e.get("key") or []) if str(k)],
                    secondary_keys=[str(k) for k in (e.get("secondary_keys") or e.get("keysecondary") or []) if str(k)],
                    content=str(e.get("content") or ""),
                    constant=bool(e.get("constant", False)),
                    enabled=bool(e.get("enabled", not e.get("disable", False))),
                    order=int(e.get("insertion_order", e.get("order", 100)) or 0),
                    case_sensitive=e.get("case_sensitive"),
                    extensions=ext if isinstance(ext, dict) else {},
                )
            )
        depth = book.get("scan_depth")
        return cls(name=str(book.get("name") or name), entries=entries, scan_depth=int(depth) if isinstance(depth, int) and depth > 0 else 2)

    # -- activation -----------------------------------------------------------------------------------------
    def activate(self, messages: list[ScanMessage]) -> list[LoreEntry]:
        """Entries whose primary key occurs in the scan window (the last ``scan_depth`` messages), in book order.
        Constant entries are not returned here (they are always in the system prompt); disabled entries never.
        Keys match as case-insensitive substrings unless the entry is case-sensitive."""
        window = messages[-self.scan_depth :] if self.scan_depth > 0 else []
        text = "\n".join(m.scan_text() for m in window)
        low = text.lower()
        hits = []
        for e in self.entries:
            if not e.enabled or e.constant:
                continue
            for k in e.keys:
                if (k in text) if e.case_sensitive else (k.lower() in low):
                    hits.append(e)
                    break
        return hits

    def constants(self) -> list[LoreEntry]:
        """Enabled constant (常驻) entries, in book order."""
        return [e for e in self.entries if e.enabled and e.constant]

    def index_titles(self) -> list[str]:
        """Titles of all enabled non-constant entries, book order (the 【设定集索引】)."""
        return [e.display_title for e in self.entries if e.enabled and not e.constant]

    # -- tools ----------------------------------------------------------------------------------------------
    def search(self, query: str, limit: int = 8) -> list[LoreHit]:
        """Rank entries for ``query`` (terms split on whitespace): per term, title equal +5 (title contains or is
        contained +3), a key equal to / contained in the term +3, each occurrence in the content +1 (at most 3).
        Entries scoring 0 are left out; ties keep book order. Constant entries are searchable."""
        terms = [t for t in query.lower().split() if t]
        scored: list[tuple[int, int, LoreEntry]] = []
        for idx, e in enumerate(self.entries):
            if not e.enabled:
                continue
            title = e.display_title.lower()
            keys = [k.lower() for k in e.keys]
            content = e.content.lower()
            score = 0
            for t in terms:
                if title == t:
                    score += 5
                elif title and (title in t or t in title):
                    score += 3
                if any(k == t or (len(k) >= 2 and k in t) for k in keys):
                    score += 3
                score += min(3, content.count(t))
            if score > 0:
                scored.append((score, idx, e))
        scored.sort(key=lambda x: (-x[0], x[1]))
        return [LoreHit(title=e.display_title, score=s, content=e.content) for s, _, e in scored[: max(1, limit)]]

    def list_titles(self) -> list[str]:
        """Every enabled title in book order; constant entries marked 「（常驻）」 (seed round 2 lorebook_list)."""
        return [e.display_title + ("（常驻）" if e.constant else "") for e in self.entries if e.enabled]


def merge_books(books: Iterable[Lorebook]) -> Lorebook:
    """One book from several (card, chat, global), entries concatenated in that order."""
    books = list(books)
    out = Lorebook(name=" + ".join(b.name for b in books if b.name))
    for b in books:
        out.entries.extend(b.entries)
        out.scan_depth = max(out.scan_depth, b.scan_depth) if out.entries else b.scan_depth
    return out
