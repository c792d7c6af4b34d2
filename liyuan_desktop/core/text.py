"""Text units the engine and the model share: UTF-16 offsets and same-length punctuation variants.

The model counts and addresses text the way JavaScript does (``String.length``, ``slice``): in UTF-16 code units
(seed 000, 稿纸工具的偏移量). Edits and searches forgive punctuation variants that keep the length
(full/half width, Chinese/Western quotes and dashes), so a reference the model retyped still finds its place.
Used by the draft (core/beat/draft.py), the chapter folder (core/story/workspace.py) and the ledger's roster blurbs.
"""

from __future__ import annotations

import re
from typing import Optional


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (what JavaScript's ``length`` reports)."""
    return len(text.encode("utf-16-le")) // 2


def utf16_span(text: str, start: int, end: Optional[int] = None) -> tuple[str, int, int]:
    """``text.slice(start, end)`` with JavaScript (UTF-16 code unit) offsets, clamped to the text. A cut inside a
    surrogate pair moves outward so no character is split; returns (slice, actual start, actual end)."""
    data = text.encode("utf-16-le")
    n = len(data) // 2
    s = max(0, min(start, n))
    e = n if end is None else max(s, min(end, n))

    def low(i: int) -> bool:
        return 0 <= i < n and 0xDC00 <= int.from_bytes(data[2 * i : 2 * i + 2], "little") <= 0xDFFF

    if s > 0 and low(s):
        s -= 1
    if 0 < e < n and low(e):
        e += 1
    return data[2 * s : 2 * e].decode("utf-16-le"), s, e


def utf16_slice(text: str, start: int, end: Optional[int] = None) -> str:
    """The text of :func:`utf16_span`."""
    return utf16_span(text, start, end)[0]


_SURROGATE = re.compile("[\ud800-\udfff]")


def fix_surrogates(text: str) -> tuple[str, int]:
    """``text`` with UTF-16 surrogates made sound: an adjacent high + low pair (an emoji whose two halves came as
    two ``\\uXXXX`` escapes, perhaps in two SSE chunks, or that a non-``u`` JavaScript regex split apart) becomes the
    one character it encodes; a lone surrogate becomes U+FFFD. Returns (text, how many were replaced). Python
    strings may hold lone surrogates (``json.loads`` of ``"\\ud800"``, QuickJS results), but they cannot be encoded
    as UTF-8 or UTF-16, so text from a model or a script passes here before it is measured, saved or sent again.
    Cheap when there are none (one regex search). The one surrogate repairer of the engine (llm.sse and the regex
    engine use it)."""
    if not _SURROGATE.search(text):
        return text, 0
    before = text.count("\ufffd")
    fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return fixed, fixed.count("\ufffd") - before


# Same-length punctuation variants: each maps to one canonical character, so positions line up one to one.
_PUNCT_PAIRS = {
    "「": '"', "」": '"', "『": '"', "』": '"', "“": '"', "”": '"', "„": '"', "＂": '"',
    "‘": "'", "’": "'", "＇": "'",
    "。": ".", "｡": ".", "、": ",", "―": "-", "—": "-", "–": "-", "－": "-",
    "\u3000": " ", "\u00a0": " ", "\t": " ",
    "〈": "<", "〉": ">", "《": "<", "》": ">", "【": "[", "】": "]", "〔": "[", "〕": "]",
}
_CANON = {ord(k): v for k, v in _PUNCT_PAIRS.items()}
for _cp in range(0xFF01, 0xFF5F):  # full-width ASCII forms → ASCII
    _CANON.setdefault(_cp, chr(_cp - 0xFEE0))


def canon_punct(text: str) -> str:
    """Map punctuation variants to one form, keeping the length in code points (so offsets stay valid)."""
    return text.translate(_CANON)


# One counting rule for 「字数」 (chapter list, editor): each CJK character is one, a run of Latin letters/digits is
# one word; punctuation, spaces and symbols are not counted (how Chinese word processors count 字数).
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f"
_LETTER = rf"(?:(?![{_CJK}])[^\W_])"
_WORDS = re.compile(rf"[{_CJK}]|{_LETTER}+(?:['’-]{_LETTER}+)*")


def count_words(text: str) -> int:
    """字数 of ``text``: CJK ideographs, kana and hangul count one each; a run of Latin letters/digits (an apostrophe
    or hyphen inside allowed, e.g. ``don't``, ``well-known``) counts one; punctuation and spaces count nothing.
    ``count_words("雨停了。Hello, world!")`` → 5."""
    return sum(1 for _ in _WORDS.finditer(text))


def prompt_language(language: Optional[str]) -> str:
    """The language the engine's own texts for the model are written in, for a chat in ``language`` (issue 32):
    "zh" for Chinese (or none — the seed's texts, byte for byte), "en" for every other language (the shipped texts
    exist in these two). The one rule every prompt part follows (``core/errors.py``, a foundation itself, repeats
    it in its line)."""
    return "zh" if not language or language == "zh" else "en"
