"""Our own injection echoed back in a reply (issue 18 §0): small models answer with the data blocks we put before
the user's words (【世界状态】…【语言】…) or imitate the 【开场 · 名字】 label of the opening. Captured prose must never
seal such text.

:func:`strip_echo` removes, from text the loop captures:

* every block of this beat's injection (the text sent before the user's words, split at blank lines) that the
  reply repeats word for word and that is data by its layout (issue 30 §2: several lines or a 【…】 header; inside
  a paragraph when at least 8 characters long, else as a whole paragraph). A lore fact the model *used* in its
  prose stays: a one-line block of an entry's body is never removed, and a 「【title】body」 entry repeated inside
  a paragraph of prose loses only its 【title】 label;
* every paragraph that starts with one of the injection's headers (:data:`INJECTION_HEADERS`, the ones
  ``core.prompt.assemble.build_injection`` and the prose-only prompt write) up to the next blank line — an echo
  the model reworded or cut — and, after a header that introduces entries (ends in 「：」), the 【title】body
  paragraphs under it;
* a leading 「【开场 · 名字】」 line (the label the opening carries; the opening's own label is added by the engine
  and stays).

* the user's own words of this beat repeated back (issue 18 follow-up: a 1.5B model answered a tool beat with the
  user's question 「掌柜的，这客栈开了多少年了？」 and nothing else): the whole reply when it equals them, or a
  leading paragraph that equals them — compared after normalising whitespace and quote marks (「」『』“”"\'…).

Text without 【 (and no user words given) is returned as is (the common case costs one ``in`` test).
"""

from __future__ import annotations

import re
from typing import Optional

from ..cards.st_chat import OPENING_HEADER  # the opening label's one pattern (assemble and the ST import use it)

__all__ = ["copied_run_share", "run_text", "uses_entry", "LORE_RUN_CHARS", "ECHO_MIN_SENTENCE", "ECHO_PREVIOUS_REPLIES", "ECHO_RESTATE_SHARE", "ECHO_SENTENCE_SIMILARITY", "ECHO_SHARE",
           "EchoSources", "INJECTION_HEADERS", "USER_REFERENCES", "repeat_start", "restated_share", "sentences",
           "similarity", "speaks_for_user", "spoken", "strip_echo", "strip_opening_label", "strip_user_echo"]

#: Headers of the blocks sent before the user's words (role-play injection, agent state block, prose-only lore).
INJECTION_HEADERS: tuple[str, ...] = ("【前情提要】", "【世界状态】", "【登场名录】", "【本拍常驻设定】", "【相关设定】", "【设定集索引】",
                     "【语言】", "【正文目录】", "【作者注】")
#: The same headers of an English chat's blocks (core/prompt/wording.BLOCKS["en"]: ASCII, "[World state]"); beat/
#: does not import prompt/, so they are listed here too (tests/test_english_prompts.py holds the two in step).
INJECTION_HEADERS_EN = ("[Story so far]", "[World state]", "[Roster]", "[Lore this beat]", "[Relevant lore]",
                        "[Lore index]", "[Language]", "[Chapters]", "[Author's note]")
INJECTION_HEADERS = INJECTION_HEADERS + INJECTION_HEADERS_EN

_LEADING_LABEL = re.compile(r"^\s*【\s*开场\s*[·・•.．]\s*[^】\n]{0,40}】[ \t]*(?:\n|$)")
_PARA_SPLIT = re.compile(r"(\n[ \t]*\n)")
_NOISE = re.compile(r"[\s「」『』“”‘’\"'《》〈〉]+")


def _norm(text: str) -> str:
    """``text`` without whitespace and quote marks (how an echo of the user's words is compared)."""
    return _NOISE.sub("", text)


def strip_user_echo(text: str, user: str) -> str:
    """``text`` without the user's own words ``user`` repeated back: "" when the whole reply is them (after
    :func:`_norm`), else the reply without a leading paragraph (up to the first blank line, or first line) that
    is them. Unchanged when ``user`` is empty or not repeated."""
    u = _norm(user)
    if not u or not text.strip():
        return text
    if _norm(text) == u:
        return ""
    s = text.lstrip()
    for sep in ("\n\n", "\n"):
        head, found, tail = s.partition(sep)
        if found and _norm(head) == u and tail.strip():
            return tail.strip()
    return text


def strip_opening_label(text: str) -> str:
    """``text`` without a leading imitation of the opening's 「【开场 · 名字】」 label (any spacing or dot)."""
    if "开场" not in text[:64]:
        return text
    m = _LEADING_LABEL.match(text) or OPENING_HEADER.match(text)
    return text[m.end():].lstrip("\n") if m else text


def _is_layout(block: str) -> bool:
    """True when a block of the injection is data by its layout — several lines, or headed by 【…】 — rather than
    a single fact that prose may use (issue 30 §2)."""
    return "\n" in block or block.startswith(("【",) + INJECTION_HEADERS_EN)


def _drop_block(text: str, block: str) -> str:
    """``text`` with the injection ``block`` it repeats taken out when that is a copied block (:func:`_is_layout`:
    several lines, a header, or a 「【title】body」 entry standing as a paragraph of its own); an entry repeated
    inside a paragraph of prose keeps its fact and loses only its 【title】 label; a one-line fact stays."""
    if "\n" in block or block.startswith(INJECTION_HEADERS):
        return text.replace(block, "")
    if not block.startswith("【") or "】" not in block:
        return text  # a fact from an entry's body, used in a sentence
    label = block[:block.index("】") + 1]
    parts = _PARA_SPLIT.split(text)
    for i in range(0, len(parts), 2):
        if parts[i].strip() == block:
            parts[i] = ""
        elif block in parts[i]:
            parts[i] = parts[i].replace(block, block[len(label):])
    return "".join(parts)


#: How the engine's own notes to the model open (the echo / lore nudges of ``beat.loop``, both languages): a
#: paragraph of a reply that opens so is the model writing our note back, never prose (the real 1.5B sealed
#: 「（系统提示：用户这句话本身就在要方向……）」 after a nudge, bench run ak1).
NOTE_MARKS = ("（系统提示", "(系统提示", "(System note", "（System note")


def _drop_notes(text: str) -> str:
    """``text`` without the paragraphs that open (past ``*``/``_`` emphasis and spaces) with one of
    :data:`NOTE_MARKS`; ``text`` itself when none does."""
    if not any(m in text for m in NOTE_MARKS):
        return text
    parts = [p for p in re.split(r"\n\s*\n", text) if not p.strip().strip("*_ ").startswith(NOTE_MARKS)]
    return "\n\n".join(parts).strip()


def strip_echo(text: str, injection: str = "", user: str = "") -> str:
    """``text`` without echoes of our injection (module doc) or of our notes to the model (:data:`NOTE_MARKS`),
    surrounding blank lines tidied; "" when nothing else was there. ``injection``: the blocks this beat sent before the user's words ("" = headers only); ``user``: the
    user's words of this beat ("" = not checked; :func:`strip_user_echo`)."""
    if user:  # the user's words, before and after our blocks (a reply may repeat both)
        out = strip_user_echo(text, user)
        out = strip_echo(out, injection) if out else ""
        out = strip_user_echo(out, user)
        return text if out == text else out
    noted = _drop_notes(text)
    if "【" not in noted and not ("[" in noted and any(h in noted for h in INJECTION_HEADERS_EN)):
        return noted
    out = strip_opening_label(noted)
    paras: set[str] = set()
    listed: set[str] = set()
    if injection:
        paras = {b.strip() for b in injection.split("\n\n") if b.strip()}
        if injection.strip() in out:  # the whole injection copied out
            out = out.replace(injection.strip(), "")
        for b in sorted((b for b in paras if len(b) >= 8), key=len, reverse=True):
            if b in out:
                out = _drop_block(out, b)
        listed = paras  # under a copied header: any block of the injection
        paras = {b for b in paras if _is_layout(b)}  # a one-line fact as a paragraph of its own is prose too
    if paras or any(h in out for h in INJECTION_HEADERS):
        parts = _PARA_SPLIT.split(out)
        kept: list[str] = []
        listing = False  # after a header that introduces entries (「…：」): its 【title】body paragraphs
        for i in range(0, len(parts), 2):
            para = parts[i].strip()
            bare = para.strip("*_ ")  # a header copied inside *…* / _…_ emphasis is still our header (a30rec, seed 11)
            if para.startswith(INJECTION_HEADERS) or bare.startswith(INJECTION_HEADERS) or para in paras or (listing and (para.startswith("【") or para in listed)):
                listing = listing or (para.startswith(INJECTION_HEADERS) and para.endswith(("：", ":")))
                continue  # a header's paragraph, a whole (short) paragraph of the injection, or an entry under it
            listing = False
            kept.append(parts[i])
        out = "\n\n".join(p.strip("\n") for p in kept if p.strip())
    if out == text:
        return text
    out = re.sub(r"\n{3,}", "\n\n", out).strip()
    return strip_opening_label(out)


# -- copies of earlier text (issue 30 §1) ------------------------------------------------------------------------
# A small model may answer a beat with the card's opening, an earlier reply or our data blocks copied out, sentence
# by sentence. Sealed, such a copy stays in the history and every later beat copies it again. The measure: the
# reply and each source are cut into sentences (:func:`sentences`); a reply sentence is *copied* when its character
# bigrams match one source sentence with a Dice coefficient of at least :data:`ECHO_SENTENCE_SIMILARITY`, or when it
# stands word for word inside one (「掌柜的，这客栈开了多少年了？」 out of the user's longer line); the reply
# is an echo when copied sentences hold at least :data:`ECHO_SHARE` of its characters (sentences shorter than
# :data:`ECHO_MIN_SENTENCE` are not counted either way: 「是。」 is everyone's). All thresholds live here.

#: Dice coefficient of character bigrams (0–1) from which a reply sentence counts as a copy of a source sentence.
ECHO_SENTENCE_SIMILARITY = 0.72
#: Share (0–1) of the reply's counted characters in copied sentences from which the reply is an echo.
ECHO_SHARE = 0.6
#: Sentences shorter than this (characters, after :func:`_norm`) are not counted.
ECHO_MIN_SENTENCE = 6
#: How many of the newest earlier replies are compared (plus the opening): older ones are summarised or far back.
ECHO_PREVIOUS_REPLIES = 6
#: Share (0–1) of the character's spoken words (:func:`spoken`; the whole reply when it quotes nothing) in sentences
#: that copy the user's words of this beat from which the reply *restates the user's question* (issue 30: the 1.5B
#: put the user's question back in the character's mouth — 「掌柜的，这客栈开了多少年了？」青梧重复道 — with enough
#: narration around it to stay under :data:`ECHO_SHARE` of the whole reply, answering nothing). Such a reply is
#: treated as an echo of the user's words (kind "user"): retried once with the nudge, never sealed.
ECHO_RESTATE_SHARE = 0.5

_SENTENCE_END = re.compile(r"(?<=[。！？!?…；;])|\n+")
_MARKUP = re.compile(r"[*_#>`~\-—…·・]+")


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (after 。！？!?…；; and at line breaks), each normalised — whitespace, quote marks
    and Markdown emphasis removed; the ones shorter than :data:`ECHO_MIN_SENTENCE` are left out."""
    out = []
    for piece in _SENTENCE_END.split(text):
        s = _MARKUP.sub("", _norm(piece or ""))
        if len(s) >= ECHO_MIN_SENTENCE:
            out.append(s)
    return out


def repeat_start(text: str) -> int:
    """Offset in ``text`` where its first sentence starts that copies an earlier sentence of the same text (the
    measure of :class:`EchoSources`: equal after normalising, or a Dice coefficient of at least
    :data:`ECHO_SENTENCE_SIMILARITY`; sentences shorter than :data:`ECHO_MIN_SENTENCE` are not compared);
    ``len(text)`` when none does. A looping reply's prose before the loop is cut here too (issue 30): the
    repetition stop only sees exact copies, a small model's loop often varies a word."""
    seen: list[tuple[str, frozenset[str]]] = []
    start = 0
    bounds = [(m.start(), m.end()) for m in _SENTENCE_END.finditer(text)] + [(len(text), len(text))]
    for end, nxt in bounds:
        s = _MARKUP.sub("", _norm(text[start:end]))
        if len(s) >= ECHO_MIN_SENTENCE:
            grams = _bigrams(s)
            if any(s == o or (g and grams and 2 * len(grams & g) / (len(grams) + len(g)) >= ECHO_SENTENCE_SIMILARITY)
                   for o, g in seen):
                return start
            seen.append((s, grams))
        start = nxt
    return len(text)


def _bigrams(s: str) -> frozenset[str]:
    return frozenset(s[i:i + 2] for i in range(len(s) - 1))


def similarity(a: str, b: str) -> float:
    """Dice coefficient (0–1) of the character bigram sets of two normalised sentences (1 = the same bigrams)."""
    x, y = _bigrams(a), _bigrams(b)
    if not x or not y:
        return 1.0 if a == b else 0.0
    return 2 * len(x & y) / (len(x) + len(y))


class EchoSources:
    """What a reply must not copy: ``(kind, text)`` pairs — kind "opening", "previous" (an earlier reply on the
    branch), "data" (the blocks sent before the user's words) or "user" (the user's words of this beat: copies of
    them count toward the share, :meth:`echo_of`). Sentences and bigrams are computed once."""

    def __init__(self, sources: list[tuple[str, str]]):
        self._sents: dict[str, tuple[str, frozenset[str]]] = {}
        for kind, text in sources:
            for s in sentences(strip_opening_label(text) if kind == "opening" else text):
                self._sents.setdefault(s, (kind, _bigrams(s)))

    def add(self, kind: str, text: str) -> None:
        """One more source: ``text``'s sentences of ``kind`` (the beat loop adds its retry nudge: a 1.5B copied it
        back, with the user's words and the lore entries, into a reply that was sealed)."""
        for s in sentences(text):
            self._sents.setdefault(s, (kind, _bigrams(s)))

    def __bool__(self) -> bool:
        return bool(self._sents)

    def _copied_from(self, sent: str) -> str:
        """The kind of source ``sent`` copies, "" when none."""
        hit = self._sents.get(sent)
        if hit is not None:
            return hit[0]
        grams = _bigrams(sent)
        if not grams:
            return ""
        for kind, other in self._sents.values():
            if other and 2 * len(grams & other) / (len(grams) + len(other)) >= ECHO_SENTENCE_SIMILARITY:
                return kind
        for source, (kind, _other) in self._sents.items():  # a part of a source sentence copied out on its own
            if sent in source:
                return kind
        return ""

    def echo_of(self, reply: str) -> str:
        """The kind of source ``reply`` mostly copies ("opening" / "previous" / "data", the one most of the copied
        characters come from), or "" when the copied sentences hold less than :data:`ECHO_SHARE` of its
        characters (or it has no counted sentence)."""
        sents = sentences(reply)
        total = sum(len(s) for s in sents)
        if not total or not self._sents:
            return ""
        by_kind: dict[str, int] = {}
        for s in sents:
            kind = self._copied_from(s)
            if kind:
                by_kind[kind] = by_kind.get(kind, 0) + len(s)
        if sum(by_kind.values()) < ECHO_SHARE * total:
            return ""
        # the user's own words repeated count toward the share, but the kind named is the other source when there
        # is one (a 0.5B answered with two lore sentences and the user's question three times, issue 30)
        others = {k: n for k, n in by_kind.items() if k != "user"} or by_kind
        return max(others.items(), key=lambda kv: kv[1])[0]


# -- the user's question in the character's mouth; the user's words or deeds written by the model (issue 30) -----
_QUOTED = re.compile(r"「[^」]*」|『[^』]*』|“[^”]*”|‘[^’\n]*’|\"[^\"\n]*\"")


def spoken(text: str) -> str:
    """The words ``text`` puts in quotation marks (「…」『…』“…”‘…’ and ASCII "…"), one quotation per line: what the
    characters say aloud. "" when nothing is quoted."""
    return "\n".join(m.group(0)[1:-1] for m in _QUOTED.finditer(text))


def restated_share(reply: str, user: str) -> float:
    """Share (0–1) of ``reply``'s spoken words (:func:`spoken`; the whole reply when it quotes nothing) that copy
    the user's words ``user`` — the larger of two measures:

    * by sentence: the characters of its sentences that copy a sentence of ``user`` (the :class:`EchoSources`
      measure: Dice of character bigrams ≥ :data:`ECHO_SENTENCE_SIMILARITY`, or standing word for word inside one,
      sentences of at least :data:`ECHO_MIN_SENTENCE` characters);
    * by run (:func:`copied_run_share`): punctuation and spacing ignored, the sentences that runs shared with
      ``user`` cover nearly whole — the real 1.5B re-cut the user's 「我明早要出镇，镇北渡口几时有船？摆渡的是谁？」
      into 「我明早要出镇。镇北渡口几时有船只？摆渡的是谁？」 (sentence measure 26 %, runs 100 %) and wrote
      「这把伞怎么不撑開？」 (one traditional character).

    0.0 when either has nothing to compare."""
    said = spoken(reply) or reply
    sents = sentences(said)
    total = sum(len(s) for s in sents)
    if not total or not user.strip():
        return 0.0
    src = EchoSources([("user", user)])
    by_sentence = sum(len(s) for s in sents if src._copied_from(s)) / total if src else 0.0
    return max(by_sentence, copied_run_share(said, user))


#: :func:`copied_run_share`: the shortest run shared with the source that counts — CJK characters, or words for other
#: scripts — and the share of a sentence's tokens such runs must cover for the sentence to count as copied. An answer
#: reuses the question's words in part (「这客栈开了多少年了？」 → 「这客栈开了百年了。」: 5 of 8 characters); a
#: restated sentence is the question again, give or take a word (「镇北渡口几时有船只？」: 8 of 9).
RESTATE_MIN_RUN_CHARS = 3
RESTATE_MIN_RUN_WORDS = 3
RESTATE_SENTENCE_COVER = 0.8
_RUN_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]|[^\W_]+")


def copied_run_share(text: str, source: str) -> float:
    """Share (0–1) of ``text``'s tokens — CJK characters one by one, other words whole and lower-cased; punctuation,
    spacing and markup ignored — in sentences (:func:`sentences`) that copy ``source``: runs also found in
    ``source`` (``difflib.SequenceMatcher`` matching blocks, no junk heuristic) of at least
    :data:`RESTATE_MIN_RUN_CHARS` CJK characters / :data:`RESTATE_MIN_RUN_WORDS` words cover at least
    :data:`RESTATE_SENTENCE_COVER` of the sentence's tokens. 0.0 when ``text`` or ``source`` has no token."""
    from difflib import SequenceMatcher
    src = [t.lower() for t in _RUN_TOKEN.findall(source)]
    parts = [[t.lower() for t in _RUN_TOKEN.findall(s)] for s in sentences(text)]
    total = sum(len(p) for p in parts)
    if not src or not total:
        return 0.0
    copied = 0
    for toks in parts:
        if not toks:
            continue
        cjk = sum(len(t) == 1 and not t.isascii() for t in toks) * 2 >= len(toks)
        least = RESTATE_MIN_RUN_CHARS if cjk else RESTATE_MIN_RUN_WORDS
        blocks = SequenceMatcher(None, src, toks, autojunk=False).get_matching_blocks()
        if sum(m.size for m in blocks if m.size >= least) >= RESTATE_SENTENCE_COVER * len(toks):
            copied += len(toks)
    return copied / total


#: :func:`uses_entry`: a reply uses a world-book entry when they share a run of this many CJK characters (or of
#: :data:`LORE_RUN_WORDS` words in other scripts) that the known text (the user's words, the system prompt, the
#: opening, earlier replies) does not already hold — 老梨, 近百, 老周, "nearly a hundred"; 客栈 (in the card) or 开了
#: (in the question) are not enough. Two characters: a Chinese name or fact is often two (老周, 姓钱).
LORE_RUN_CHARS = 2
LORE_RUN_WORDS = 3


def _shingles(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


def run_text(text: str) -> str:
    """``text`` as :func:`uses_entry` compares it: its tokens (CJK characters one by one, other words whole,
    lower-cased; punctuation and spacing dropped) each between NUL separators — made once for a long text and
    searched with ``in`` (linear, in C) instead of turned into a set of runs."""
    return "\x00" + "\x00".join(t.lower() for t in _RUN_TOKEN.findall(text)) + "\x00"


def uses_entry(reply: str, entry: str, known: str = "", *, known_runs: Optional[str] = None) -> bool:
    """Whether ``reply`` carries something of the world-book entry text ``entry`` that ``known`` does not already
    say: a run of :data:`LORE_RUN_CHARS` CJK characters (:data:`LORE_RUN_WORDS` words when the entry is mostly in
    other scripts; punctuation and spacing ignored, words lower-cased) found in both ``reply`` and ``entry`` and not
    in ``known`` (``known_runs``: :func:`run_text` of it, made once by a caller that asks about several entries). A
    rough test by design (issue 30: a small model asked about the inn's age answered 「一百多年」 beside an entry
    saying 近百年; one that wrote 老梨树 used it): a paraphrase (姓钱 → 老钱) reads as unused, and a reply that only
    confirms with the question's own words (「后院的梨树还在」) too. False for an empty entry. Cost: linear in the
    three texts (a 200,000-character history is searched, not split into runs)."""
    ent = [t.lower() for t in _RUN_TOKEN.findall(entry)]
    if not ent:
        return False
    cjk = sum(len(t) == 1 and not t.isascii() for t in ent) * 2 >= len(ent)
    n = LORE_RUN_CHARS if cjk else LORE_RUN_WORDS
    shared = _shingles(ent, n) & _shingles([t.lower() for t in _RUN_TOKEN.findall(reply)], n)
    if not shared:
        return False
    runs = run_text(known) if known_runs is None else known_runs
    return any("\x00" + "\x00".join(sh) + "\x00" not in runs for sh in shared)


#: How a reply refers to the user when it speaks or acts for them, besides the persona's own name (the demo card's
#: innkeeper calls the player 客官 and the narration says 旅人): the default of :func:`speaks_for_user`'s ``names``.
USER_REFERENCES: tuple[str, ...] = ("你", "旅人", "客官", "客人", "you")
_ZH_DEEDS = ("道", "说", "问", "答", "应", "喊", "叫", "笑", "叹", "心想", "想", "点头", "摇头", "接过", "坐", "站",
             "走", "推门", "伸手", "转身", "拿", "放下", "看", "望", "指", "握", "抬", "低头", "递", "掏", "靠")
_EN_DEEDS = ("say", "said", "ask", "asked", "reply", "replied", "answer", "answered", "whisper", "whispered",
             "shout", "shouted", "nod", "nodded", "smile", "smiled", "laugh", "laughed", "sigh", "sighed", "take",
             "took", "walk", "walked", "sit", "sat", "stand", "stood", "reach", "reached", "turn", "turned")


def speaks_for_user(reply: str, names: tuple[str, ...] = USER_REFERENCES) -> str:
    """The first place where ``reply`` writes the user's words or deeds, "" when none — a heuristic for the bench
    (issue 30 §8; the engine does not act on it). Quoted speech is taken out first (a character may say 「你说吧」),
    then the narration is searched for one of ``names`` (the persona's name, 你, 旅人, you …) *starting a clause*
    (at the start, or after a sentence or clause mark, a line break, ``*`` or a closing quote) and followed within
    six characters by a speech or action verb (Chinese: 你道, 旅人问, 你笑着说, 你点头; English, whole words, any
    case: "you say", "You nod", "Alex asked"), or heading a dialogue line (「你：」, "You:"). Misses indirect forms
    (「你的声音响起」) and counts a second-person narration of the user's deed (「你推门进来」) as speaking for them."""
    narration = _QUOTED.sub("\u3000", reply)
    for name in (n for n in names if n.strip()):
        if name.isascii():
            deeds = "|".join(_EN_DEEDS)
            pat = (rf"(?:^|(?<=[.!?;:,*\n\u3000]))\s*{re.escape(name)}(?:\s+\w+)?\s+(?:{deeds})\b"
                   rf"|^\W*{re.escape(name)}\W*:\W*$")
            flags = re.I | re.M
        else:
            deeds = "|".join(_ZH_DEEDS)
            pat = (rf"(?:^|(?<=[。！？!?…；;，,、：:*\n\u3000\s]))\s*{re.escape(name)}[^。！？!?…\n，,、\u3000]{{0,6}}?(?:{deeds})"
                   rf"|^\W*{re.escape(name)}\W*[：:]\W*$")
            flags = re.M
        m = re.search(pat, narration, flags)
        if m:
            return m.group(0).strip()
    return ""
