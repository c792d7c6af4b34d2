"""Diffs of prose for the checkpoint timeline: by sentence, then by word (Latin) or character (CJK) inside the
sentences that changed — what a writer wants to see instead of a line diff with ``@@`` hunks (a Chinese paragraph is
one long line, so a line diff marks the whole paragraph changed for one character).

* :func:`split_sentences` cuts a text into sentences whose concatenation is the text exactly: a sentence ends after
  。！？!?；…  (runs of them, then closing quotes/brackets 」』”’）】》 and spaces), after ``.`` followed by a space, and
  at every line break (a blank line is its own piece, so paragraphs stay paragraphs).
* :func:`tokens` cuts a sentence into diff units: one CJK character, one Latin word (letters/digits), one run of
  spaces, or one other character.
* :func:`diff_prose` aligns the sentences of two texts (:class:`difflib.SequenceMatcher`, no junk heuristic), then
  diffs the tokens of each changed run of sentences. A run that shares too little (under :data:`REWRITE_RATIO` of its
  text) is shown as removed and added whole rather than as confetti, and so is a run too big to diff token by token
  (over :data:`MAX_TOKEN_CELLS` token pairs) — the diff's time stays bounded.

difflib is fast enough here: a 20,000-character chapter with a dozen scattered edits diffs in ~17 ms, every third
sentence changed ~155 ms, a whole rewrite ~19 ms (one core, CPython 3.11); diff-match-patch would add a dependency
for no visible gain. Known weak spot: text that repeats the same sentences periodically can be aligned a period off
(SequenceMatcher takes the longest match first), so more is marked changed than was — still correct, just coarse. The result is plain data
(:class:`ProseDiff`): the UI (ui/writing/prose_diff.py) renders it inline or side by side and collapses unchanged runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal, Optional

REWRITE_RATIO = 0.35
"""A changed run whose common text is less than this share of its longer side is shown removed + added whole."""

MAX_TOKEN_CELLS = 4_000_000
"""Token pairs (old tokens × new tokens) above which a changed run is not diffed inside (shown removed + added)."""

_CLOSERS = re.escape("」』”’\"'）)】》〉]")
_ENDS = re.escape("。！？!?；;…")
_SENT = re.compile(
    rf"[^{_ENDS}\n.]*(?:(?:\.(?![\s]|$))[^{_ENDS}\n.]*)*"      # text, with dots that do not end a sentence (3.14, Mr.X)
    rf"(?:[{_ENDS}]+[{_CLOSERS}]*[ \t\u3000]*|\.+[{_CLOSERS}]*[ \t\u3000]*|\n)?"
)
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f"
_TOKEN = re.compile(rf"[{_CJK}]|(?:(?![{_CJK}])[^\W_])+|[ \t\u3000]+|.", re.S)

Op = Literal["equal", "insert", "delete"]


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (see the module doc); ``"".join(split_sentences(t)) == t`` always."""
    out: list[str] = []
    pos = 0
    n = len(text)
    while pos < n:
        m = _SENT.match(text, pos)
        end = m.end() if m else pos
        if end <= pos:  # cannot happen with the pattern above, but never loop forever
            end = pos + 1
        out.append(text[pos:end])
        pos = end
    return out


def _real(sentences: list[str]) -> int:
    """How many of ``sentences`` have text (bare line breaks and spaces are not sentences)."""
    return sum(1 for x in sentences if x.strip())


def tokens(text: str) -> list[str]:
    """Diff units of ``text``: a CJK character, a Latin word, a run of spaces, or any other one character.
    ``"".join(tokens(t)) == t``."""
    return _TOKEN.findall(text)


@dataclass(frozen=True)
class Piece:
    """A stretch of text in a changed block: ``equal`` (in both), ``delete`` (only old), ``insert`` (only new)."""

    op: Op
    text: str


@dataclass(frozen=True)
class Block:
    """A run of sentences. ``equal``: the same in both texts (``sentences`` lists them, for collapsing); ``change``:
    ``old`` became ``new``, ``pieces`` say how (``rewrite`` when shown removed + added whole)."""

    kind: Literal["equal", "change"]
    old: str
    new: str
    sentences: tuple[str, ...] = ()
    pieces: tuple[Piece, ...] = ()
    rewrite: bool = False


@dataclass
class ProseDiff:
    """A prose diff: ``blocks`` in text order (joining each block's ``old`` gives the old text, ``new`` the new);
    ``added`` / ``removed`` are the characters inserted / deleted; ``changed_sentences`` counts the sentences with
    text (not bare line breaks) in changed blocks, the larger side of each block."""

    blocks: list[Block] = field(default_factory=list)
    added: int = 0
    removed: int = 0
    changed_sentences: int = 0

    @property
    def changed(self) -> bool:
        """Whether the two texts differ."""
        return any(b.kind == "change" for b in self.blocks)


def _merge(pieces: list[Piece]) -> list[Piece]:
    out: list[Piece] = []
    for p in pieces:
        if not p.text:
            continue
        if out and out[-1].op == p.op:
            out[-1] = Piece(p.op, out[-1].text + p.text)
        else:
            out.append(p)
    return out


def _whole(old: str, new: str) -> tuple[Piece, ...]:
    return tuple(_merge([Piece("delete", old), Piece("insert", new)]))


def diff_words(old: str, new: str) -> tuple[tuple[Piece, ...], bool]:
    """The token diff of two stretches of prose: (pieces, rewrite). ``rewrite`` is True when they share too little
    (or are too big to diff inside) and the pieces are just ``delete old`` + ``insert new``."""
    a, b = tokens(old), tokens(new)
    if not a or not b or len(a) * len(b) > MAX_TOKEN_CELLS:
        return _whole(old, new), bool(a and b)
    import difflib  # on first use (issue 15: start-up)

    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    pieces: list[Piece] = []
    same = 0
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            t = "".join(a[i1:i2])
            same += len(t.strip())
            pieces.append(Piece("equal", t))
        else:
            if i2 > i1:
                pieces.append(Piece("delete", "".join(a[i1:i2])))
            if j2 > j1:
                pieces.append(Piece("insert", "".join(b[j1:j2])))
    longest = max(len(old.strip()), len(new.strip()), 1)
    if same / longest < REWRITE_RATIO:
        return _whole(old, new), True
    return tuple(_merge(pieces)), False


def diff_prose(old: Optional[str], new: Optional[str]) -> ProseDiff:
    """The sentence-then-word diff of ``old`` → ``new`` (None reads as empty: a file added or removed)."""
    old, new = old or "", new or ""
    sa, sb = split_sentences(old), split_sentences(new)
    import difflib

    sm = difflib.SequenceMatcher(None, sa, sb, autojunk=False)
    out = ProseDiff()
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            run = tuple(sa[i1:i2])
            t = "".join(run)
            out.blocks.append(Block("equal", t, t, sentences=run))
            continue
        o, n = "".join(sa[i1:i2]), "".join(sb[j1:j2])
        pieces, rewrite = diff_words(o, n)
        out.blocks.append(Block("change", o, n, pieces=pieces, rewrite=rewrite))
        out.added += sum(len(p.text) for p in pieces if p.op == "insert")
        out.removed += sum(len(p.text) for p in pieces if p.op == "delete")
        out.changed_sentences += max(_real(sa[i1:i2]), _real(sb[j1:j2]))
    return out
