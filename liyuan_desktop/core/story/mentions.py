"""The mentions index behind the codex (issue 19 §3): every place a roster name (or one of its aliases) occurs in
the chapter files of ``正文/``.

One multi-pattern pass per chapter (Aho–Corasick, ``pyahocorasick`` — the dependency the lorebook key index already
uses; a plain ``str.find`` loop when it is missing), longest match wins where names overlap (「林黛玉」 is not also
「林」), and a Latin name only matches on word boundaries ("Ann" is not in "Anne"). Results are kept per chapter
by content hash: :meth:`MentionIndex.update_folder` looks at each file's (size, mtime_ns) first, reads only the
changed ones, and re-scans a file only when its content hash changed — so an edit of two chapters re-scans two
chapters. Changing the names re-scans everything (the automaton changed). Offsets are UTF-16 code units (the unit
of the agent file tools and of the UI's editor).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any, Optional

from ..deferred import DeferredModel
from ..text import utf16_len
from .checkpoint_model import scan_chapters

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_WORDCH = re.compile(r"\w")


class Mention(DeferredModel):  # built on first use (core.deferred)
    """One occurrence: ``file`` (chapter file name), ``offset`` (UTF-16 units from the file start), ``length``
    (UTF-16 units), ``name`` (the canonical roster name), ``matched`` (the name or alias as written)."""

    file: str
    offset: int
    length: int
    name: str
    matched: str


class _FileHits:
    __slots__ = ("digest", "size", "mtime", "hits")

    def __init__(self, digest: str, size: int, mtime: int, hits: dict[str, list[tuple[int, int, str]]]):
        self.digest, self.size, self.mtime, self.hits = digest, size, mtime, hits


class MentionIndex:
    """Mentions of a set of names across chapter files. ``names``: canonical name → aliases (set with
    :meth:`set_names`). Use :meth:`update_folder` (a ``正文/`` folder) or :meth:`update_texts` ({file: text}),
    then query. ``last_scanned`` is how many files the last update scanned."""

    def __init__(self) -> None:
        self._names: dict[str, list[str]] = {}
        self._automaton: Any = None
        self._needles: list[tuple[str, str]] = []  # (needle, canonical)
        self._files: dict[str, _FileHits] = {}
        self._order: list[str] = []
        self.last_scanned = 0

    # ------------------------------------------------------------------ names

    def set_names(self, names: dict[str, list[str]]) -> bool:
        """Set the names to look for (canonical → aliases; empty names dropped). Returns True when they changed
        (every file is then re-scanned on the next update)."""
        clean = {n.strip(): sorted({a.strip() for a in al if a and a.strip() and a.strip() != n.strip()})
                 for n, al in names.items() if n and n.strip()}
        if clean == self._names:
            return False
        self._names = clean
        needles: dict[str, str] = {}
        for n, al in clean.items():
            needles.setdefault(n, n)
            for a in al:
                needles.setdefault(a, n)
        self._needles = sorted(needles.items())
        self._automaton = None
        try:
            import ahocorasick
        except ImportError:  # pragma: no cover - the dependency is declared
            ahocorasick = None
        if ahocorasick is not None and self._needles:
            A = ahocorasick.Automaton()
            for i, (needle, canon) in enumerate(self._needles):
                A.add_word(needle, (needle, canon))
            A.make_automaton()
            self._automaton = A
        for f in self._files.values():
            f.digest = ""  # force a re-scan
        return True

    @property
    def names(self) -> dict[str, list[str]]:
        """The canonical names and their aliases."""
        return dict(self._names)

    # ------------------------------------------------------------------ scanning

    def _scan(self, text: str) -> dict[str, list[tuple[int, int, str]]]:
        hits: dict[str, list[tuple[int, int, str]]] = {}
        if not self._needles:
            return hits
        found: list[tuple[int, str, str]] = []  # (start, needle, canonical) in code points
        if self._automaton is not None:
            for end, (needle, canon) in self._automaton.iter_long(text):
                found.append((end - len(needle) + 1, needle, canon))
        else:
            taken: list[tuple[int, int]] = []
            for needle, canon in sorted(self._needles, key=lambda x: -len(x[0])):
                i = text.find(needle)
                while i >= 0:
                    if not any(s <= i < e or s < i + len(needle) <= e for s, e in taken):
                        found.append((i, needle, canon))
                        taken.append((i, i + len(needle)))
                    i = text.find(needle, i + len(needle))
            found.sort()
        astral = _ASTRAL.search(text) is not None
        for start, needle, canon in found:
            if needle[0].isascii() and start > 0 and _WORDCH.match(text[start - 1]) and text[start - 1].isascii():
                continue
            end = start + len(needle)
            if needle[-1].isascii() and end < len(text) and _WORDCH.match(text[end]) and text[end].isascii():
                continue
            off = utf16_len(text[:start]) if astral else start
            hits.setdefault(canon, []).append((off, utf16_len(needle) if astral else len(needle), needle))
        return hits

    def update_texts(self, texts: dict[str, str]) -> list[str]:
        """Index exactly the chapters ``texts`` ({file name: text}); files not in it are forgotten. A file whose
        content hash is unchanged is not re-scanned. Returns the names of the files scanned."""
        scanned = []
        for name, text in texts.items():
            digest = hashlib.sha1(text.encode("utf-8")).hexdigest()
            cur = self._files.get(name)
            if cur is not None and cur.digest == digest:
                continue
            self._files[name] = _FileHits(digest, -1, -1, self._scan(text))
            scanned.append(name)
        for name in [n for n in self._files if n not in texts]:
            del self._files[name]
        self._order = sorted(texts)
        self.last_scanned = len(scanned)
        return scanned

    def update_folder(self, story_dir: Path) -> list[str]:
        """Index the chapter files of ``story_dir`` (the rule of :func:`.checkpoint_model.scan_chapters`): files whose
        (size, mtime_ns) are unchanged are not read; a read file is re-scanned only when its content hash changed.
        Returns the names of the files scanned. Unreadable files are skipped (and forgotten)."""
        entries, _ignored = scan_chapters(story_dir)
        scanned: list[str] = []
        seen: list[str] = []
        for e in entries:
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            cur = self._files.get(e.name)
            if cur is not None and cur.digest and cur.size == st.st_size and cur.mtime == st.st_mtime_ns:
                seen.append(e.name)
                continue
            try:
                data = Path(e.path).read_bytes()
            except OSError:
                continue
            seen.append(e.name)
            digest = hashlib.sha1(data).hexdigest()
            if cur is not None and cur.digest == digest:
                cur.size, cur.mtime = st.st_size, st.st_mtime_ns
                continue
            self._files[e.name] = _FileHits(digest, st.st_size, st.st_mtime_ns,
                                            self._scan(data.decode("utf-8", errors="replace")))
            scanned.append(e.name)
        keep = set(seen)
        for name in [n for n in self._files if n not in keep]:
            del self._files[name]
        self._order = sorted(keep)
        self.last_scanned = len(scanned)
        return scanned

    # ------------------------------------------------------------------ queries

    def files(self) -> list[str]:
        """The indexed chapter files, in name (book) order."""
        return list(self._order)

    def mentions(self, name: str, limit: Optional[int] = None) -> list[Mention]:
        """Every mention of canonical ``name`` (aliases included), in book order; at most ``limit``."""
        out: list[Mention] = []
        for f in self._order:
            for off, ln, matched in self._files[f].hits.get(name, ()):
                out.append(Mention(file=f, offset=off, length=ln, name=name, matched=matched))
                if limit is not None and len(out) >= limit:
                    return out
        return out

    def chapters_of(self, name: str) -> list[str]:
        """The chapter files that mention ``name`` (or an alias), in book order."""
        return [f for f in self._order if self._files[f].hits.get(name)]

    def counts(self, name: str) -> dict[str, int]:
        """{chapter file: number of mentions of ``name``} for the files that mention it."""
        return {f: len(self._files[f].hits[name]) for f in self._order if self._files[f].hits.get(name)}

    def names_in(self, file: str) -> dict[str, int]:
        """{canonical name: mentions} of the names chapter ``file`` mentions (aliases counted for their name), in
        order of first mention; {} for a file not indexed."""
        f = self._files.get(file)
        if f is None:
            return {}
        return {n: len(h) for n, h in sorted(f.hits.items(), key=lambda kv: kv[1][0][0]) if h}

    def scan_text(self, text: str) -> dict[str, int]:
        """{canonical name: mentions} in any ``text`` (a chapter not written yet: its outline title and beats), in
        order of first mention; nothing is indexed."""
        hits = self._scan(text)
        return {n: len(h) for n, h in sorted(hits.items(), key=lambda kv: kv[1][0][0]) if h}

    def first(self, name: str) -> Optional[Mention]:
        """The first mention of ``name`` in book order, or None."""
        m = self.mentions(name, limit=1)
        return m[0] if m else None


def folder_mtime_key(story_dir: Path) -> tuple[int, int]:
    """A cheap change key of a folder (its mtime_ns and entry count); (0, 0) when missing."""
    try:
        st = os.stat(story_dir)
        return st.st_mtime_ns, st.st_nlink
    except OSError:
        return 0, 0
