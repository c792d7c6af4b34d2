"""Chapter review (审稿, issue 19 §4): the findings model, the review file of a chat folder and the checks that run
locally, without a model.

A review reads one chapter and returns findings — each a kind, a quote from the text, the file, the quote's UTF-16
offset (the unit of the agent's file tools and of the window's editor) and a note — and never edits anything. The
local (deterministic) checks here:

- **repetition**: the same sentence twice or more in the chapter, a sentence copied from the previous chapter, and a
  phrase (6 CJK characters / 4 Latin words) used 4 times or more;
- **stock phrasing**: the user-editable list of stock AI phrases (:func:`stock_phrases`: ``<data>/规则/套话.txt``
  when it exists, else the shipped ``resources/review/stock_phrases.txt``, zh + en);
- **a dead character speaks**: a name whose ledger status says dead (:func:`is_dead`) is the speaker of a line of
  dialogue (outside the quotation marks, next to a speech verb or a colon) — lines that remember or dream are left;
- **a lost item is used**: an item that left the inventory (or is marked lost/destroyed) is named again — lines that
  say it is missing are left;
- **threads**: an open thread whose due chapter has passed, or is this one and the chapter does not pay it off;
- **length**: a chapter far below (under half) or above (over twice) its outline target.

What a model must judge (out-of-character lines against the card, timeline, contradictions with the previous chapter,
the outline's beats) is asked by :mod:`core.chat.review` with a structured-output prompt; its findings come back in
the same shape. The chat folder's ``审稿.json`` (:class:`ReviewStore`) keeps the last review of each chapter, the
accepted findings (queued for the agent's next turn) and the ones the user marked intentional (never reported
again: :func:`fingerprint` is kind + file + the quote without whitespace, so it survives offsets moving).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Literal, Optional

from pydantic import Field

from ..deferred import DeferredModel
from ..fsutil import atomic_write_text
from ..messages import MsgText
from ..paths import home
from ..text import canon_punct, count_words, prompt_language, utf16_len
from .layout import side_file

FindingKind = Literal["dead_speaks", "lost_item", "contradiction", "timeline", "ooc", "thread", "outline",
                      "repetition", "stock_phrase"]
KINDS: tuple[str, ...] = ("dead_speaks", "lost_item", "contradiction", "timeline", "ooc", "thread", "outline",
                          "repetition", "stock_phrase")
#: How each kind is named on screen and in the CLI (Chinese; the window translates through its own strings).
KIND_ZH: dict[str, str] = {"dead_speaks": "死者开口", "lost_item": "失物复现", "contradiction": "前后矛盾",
                           "timeline": "时间线", "ooc": "人物走样", "thread": "伏笔", "outline": "偏离大纲",
                           "repetition": "重复", "stock_phrase": "套话"}
#: The review file in the chat folder.
REVIEW_FILE = "审稿.json"
#: The user's stock-phrase list (in the data folder) and the shipped default.
USER_PHRASES = Path("规则") / "套话.txt"
#: At most this many findings of one local kind per chapter (the rest are counted in the note of the last one).
MAX_PER_KIND = 8
#: A sentence shorter than this (characters, whitespace and quote marks aside) never counts as repeated.
MIN_REPEAT_SENTENCE = 10
#: A phrase of this many CJK characters (or :data:`PHRASE_WORDS` Latin words) used :data:`PHRASE_REPEATS` times.
PHRASE_CHARS = 6
PHRASE_WORDS = 4
PHRASE_REPEATS = 4
#: A quote is cut to this many characters.
QUOTE_MAX = 80

_DEAD = re.compile(r"死|亡|身故|已故|遇害|阵亡|去世|殒命|毙命|牺牲|被杀|尸|\bdead\b|\bdeceased\b|\bkilled\b|\bdied\b",
                   re.IGNORECASE)
_NOT_DEAD = re.compile(r"假死|诈死|装死|未死|没死|不死|生死未卜|生死不明|濒死|半死|死里逃生|死敌|死守|死心|死党|死活|"
                       r"死胡同|要死|死死|拼死|冒死|险些|差点|\bnot dead\b|\bnear death\b|\bfaked?\b", re.IGNORECASE)
_LOST = re.compile(r"丢失|遗失|丢了|失落|被夺|被抢|被偷|被盗|毁|碎|烧掉|烧毁|沉入|用尽|用完|耗尽|交出|上交|没收|"
                   r"\blost\b|\bdestroyed\b|\bstolen\b|\bbroken\b|\bgone\b|\bused up\b", re.IGNORECASE)
_MEMORY = re.compile(r"回忆|想起|记得|记起|梦|生前|遗言|遗物|曾经|当年|那时|从前|往日|幻觉|幻影|灵位|墓|坟|祭|"
                     r"\bremember|\bdream|\bonce\b|\bused to\b|\bghost|\bgrave\b|\bmemory", re.IGNORECASE)
_MISSING = re.compile(r"丢|失|不见|没了|找|寻|想起|记得|可惜|若是|要是|如果|曾|\blost\b|\bmissing\b|\bremember|\bif\b",
                      re.IGNORECASE)
_SPEECH = re.compile(r"^\s*(?:[^。！？\n]{0,6}?)(?:说|道|问|答|喊|叫|笑|哭|吼|骂|叹|低声|轻声|开口|回答|嘀咕|喃喃|"
                     r"插话|补充|打断|\bsaid\b|\bsays\b|\basked\b|\breplied\b|\bwhispered\b|\bshouted\b|\bmuttered\b|"
                     r"\banswered\b)", re.IGNORECASE)
_OPEN_Q = "「『“\"‘"
_CLOSE_Q = "」』”\"’"
_SENT_END = re.compile(r"[^。！？!?…\n]*[。！？!?…]+[」』”\"’）)]*|[^。！？!?…\n]+")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_WS = re.compile(r"\s+")
_PAREN = re.compile(r"[（(][^（）()]*[)）]")


class ReviewFinding(DeferredModel):
    """One finding: ``kind`` (:data:`KINDS`), ``quote`` (the words in ``file``; "" when the finding has no single
    place, e.g. the chapter's length), ``file`` (a chapter file in ``正文/``), ``offset`` (UTF-16 units from the file
    start; None when the quote was not found), ``length`` (UTF-16 units of the quote), ``note`` (what is wrong and
    why, one or two sentences), ``source`` ("local" — this module — or "model"), ``id`` (:func:`fingerprint`)."""

    kind: FindingKind
    quote: str = ""
    file: str = ""
    offset: Optional[int] = None
    length: int = 0
    note: str = ""
    source: Literal["local", "model"] = "local"
    id: str = ""


class ChapterReviewResult(DeferredModel):
    """One review of one chapter: ``file``, ``chapter`` (1-based number: the outline's when the file is linked there,
    else its place in file-name order), ``findings`` (local ones first, then the model's), ``suppressed`` (findings
    not reported because the user marked them intentional), ``model`` (the model that answered; "" when the review
    was local only), ``model_error`` (the model call failed: the local findings still stand), ``problems`` (the
    model's output needed repair or had unusable items), ``ts`` (ms since the epoch)."""

    file: str
    chapter: Optional[int] = None
    findings: list[ReviewFinding] = Field(default_factory=list)
    suppressed: int = 0
    model: str = ""
    model_error: Optional[MsgText] = None  # a catalog message, its key kept (issue 32)
    problems: list[MsgText] = Field(default_factory=list)  # catalog messages, their keys kept
    ts: int = 0


class AcceptedFinding(DeferredModel):
    """A finding the user accepted: queued for the agent's next turn (``accepted_at``: ms since the epoch)."""

    finding: ReviewFinding
    accepted_at: int = 0


class ReviewStore(DeferredModel):
    """``审稿.json``: ``last`` (the last review per chapter file), ``recent`` (every finding of recent reviews by id,
    oldest first, at most :data:`MAX_RECENT`: a finding shown earlier can still be accepted after a new review),
    ``accepted`` (oldest first, at most :data:`MAX_ACCEPTED`), ``intentional`` ({fingerprint: "kind · quote" for the
    user to read})."""

    version: int = 1
    last: dict[str, ChapterReviewResult] = Field(default_factory=dict)
    recent: dict[str, ReviewFinding] = Field(default_factory=dict)
    accepted: list[AcceptedFinding] = Field(default_factory=list)
    intentional: dict[str, str] = Field(default_factory=dict)


MAX_ACCEPTED = 200
MAX_RECENT = 500


def fingerprint(kind: str, file: str, quote: str, note: str = "") -> str:
    """The stable id of a finding: 12 hex digits of SHA-256 over kind, file and the quote without whitespace (the
    note too when there is no quote, so two quote-less findings of one kind stay apart)."""
    key = "\x1f".join((kind, file, _WS.sub("", quote), "" if quote else _WS.sub("", note)))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def make_finding(kind: FindingKind, text: str, file: str, start: Optional[int], end: Optional[int], note: str,
                 source: Literal["local", "model"] = "local") -> ReviewFinding:
    """A finding quoting ``text[start:end]`` (code points; cut to :data:`QUOTE_MAX`) of chapter ``file``, its offset
    converted to UTF-16. ``start`` None: a finding without a place."""
    if start is None or end is None:
        f = ReviewFinding(kind=kind, file=file, note=note, source=source)
    else:
        end = min(end, start + QUOTE_MAX)
        quote = text[start:end]
        f = ReviewFinding(kind=kind, quote=quote, file=file, offset=utf16_len(text[:start]), length=utf16_len(quote),
                          note=note, source=source)
    f.id = fingerprint(f.kind, f.file, f.quote, f.note)
    return f


def locate(text: str, quote: str) -> Optional[int]:
    """Where ``quote`` (as a model retyped it) is in ``text``: the code-point index of the first exact match, else
    of the first match with punctuation variants folded (:func:`core.text.canon_punct`, same length), else of the
    match with whitespace ignored; None when it is not there."""
    q = quote.strip()
    if not q:
        return None
    i = text.find(q)
    if i >= 0:
        return i
    i = canon_punct(text).find(canon_punct(q))
    if i >= 0:
        return i
    # whitespace ignored: map positions of the squeezed text back to the original
    keep = [k for k, ch in enumerate(text) if not ch.isspace()]
    squeezed = "".join(text[k] for k in keep)
    j = canon_punct(squeezed).find(canon_punct(_WS.sub("", q)))
    return keep[j] if j >= 0 else None


# ------------------------------------------------------------------ the phrase list


def default_phrases_text() -> str:
    """The shipped stock-phrase list (``resources/review/stock_phrases.txt``) as text."""
    return resources.files("liyuan_desktop").joinpath("resources", "review", "stock_phrases.txt").read_text("utf-8")


def user_phrases_path() -> Path:
    """Where the user's own list lives: ``<data folder>/规则/套话.txt`` (it replaces the shipped list when present)."""
    return home() / USER_PHRASES


def stock_phrases_text() -> str:
    """The list in force as text: the user's file when it exists and reads, else the shipped one."""
    try:
        return user_phrases_path().read_text("utf-8")
    except OSError:
        return default_phrases_text()


def parse_phrases(text: str) -> list[str]:
    """The phrases of a list's text: one per line, ``#`` comments and blank lines skipped, duplicates dropped."""
    out: list[str] = []
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith("#") and s not in out:
            out.append(s)
    return out


def stock_phrases() -> list[str]:
    """The phrases in force (:func:`stock_phrases_text` parsed)."""
    return parse_phrases(stock_phrases_text())


def save_stock_phrases(text: str) -> Path:
    """Write the user's list (atomic); "" or whitespace only removes it (the shipped list applies again). Returns
    the path. OSError."""
    p = user_phrases_path()
    if not text.strip():
        try:
            p.unlink()
        except FileNotFoundError:
            pass
        return p
    p.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(p, text if text.endswith("\n") else text + "\n")
    return p


# ------------------------------------------------------------------ the review file


def review_path(chat_dir: Path) -> Path:
    """``<chat folder>/审稿.json`` (``review.json`` in the English layout, :func:`.layout.side_file`)."""
    return side_file(chat_dir, REVIEW_FILE)


def load_store(chat_dir: Path) -> ReviewStore:
    """The chat's ``审稿.json`` (an empty store when missing or unreadable)."""
    try:
        return ReviewStore.model_validate(json.loads(review_path(chat_dir).read_text("utf-8")))
    except (OSError, ValueError):
        return ReviewStore()


def save_store(chat_dir: Path, store: ReviewStore) -> None:
    """Write ``审稿.json`` (atomic). OSError."""
    store.accepted = store.accepted[-MAX_ACCEPTED:]
    if len(store.recent) > MAX_RECENT:
        store.recent = dict(list(store.recent.items())[-MAX_RECENT:])
    atomic_write_text(review_path(chat_dir), store.model_dump_json(indent=1))


# ------------------------------------------------------------------ ledger facts the checks need


def is_dead(status: str) -> bool:
    """Whether a ledger status says the character is dead (死/身亡/遇害/dead/killed …, not 假死/生死未卜/near death)."""
    s = status or ""
    return bool(_DEAD.search(_NOT_DEAD.sub("", s)))


def item_name(entry: str) -> str:
    """An inventory entry's item name: the owner note in brackets removed (「黄铜怀表（林薇持有）」 → 黄铜怀表)."""
    return _PAREN.sub("", entry or "").strip(" ，,。")


def lost_items(inventories: Iterable[list[str]]) -> dict[str, str]:
    """{item name: why} for items lost by the end of ``inventories`` (the branch's inventory lists, oldest first):
    an item seen earlier and no longer listed ("不在物品清单里了"), or listed with a note that says it is lost or
    destroyed (that note). Names shorter than 2 characters are ignored."""
    seen: dict[str, None] = {}
    last: list[str] = []
    for inv in inventories:
        last = [str(x) for x in inv or [] if isinstance(x, str)]
        for e in last:
            seen.setdefault(item_name(e), None)
    now = {item_name(e): e for e in last}
    out: dict[str, str] = {}
    for name in seen:
        if len(name) < 2:
            continue
        if name not in now:
            out[name] = "不在物品清单里了"
        elif _LOST.search(now[name][len(name):] if now[name].startswith(name) else now[name]):
            out[name] = now[name]
    return out


# ------------------------------------------------------------------ the checks


def _lines(text: str) -> Iterable[tuple[int, str]]:
    """(code-point start, line) of each line of ``text``."""
    pos = 0
    for line in text.split("\n"):
        yield pos, line
        pos += len(line) + 1


def _outside_quotes(line: str) -> list[tuple[int, str]]:
    """The stretches of ``line`` outside quotation marks, with their start (a straight ``"`` toggles)."""
    out: list[tuple[int, str]] = []
    depth = 0
    start = 0
    straight = False
    for i, ch in enumerate(line):
        if ch == '"':
            if straight:
                straight = False
                start = i + 1
            else:
                if depth == 0 and i > start:
                    out.append((start, line[start:i]))
                straight = True
            continue
        if straight:
            continue
        if ch in _OPEN_Q:
            if depth == 0 and i > start:
                out.append((start, line[start:i]))
            depth += 1
        elif ch in _CLOSE_Q and depth:
            depth -= 1
            if depth == 0:
                start = i + 1
    if depth == 0 and not straight and start < len(line):
        out.append((start, line[start:]))
    return out


def _has_quote(line: str) -> bool:
    return any(q in line for q in _OPEN_Q)


#: The local checks' notes per language (issue 32: a chat in English reads — and shows — them in English).
NOTES: dict[str, dict[str, str]] = {
    "zh": {"dead": "账本里「{name}」已经死了（{status}），这里却在说话。", "lost": "「{name}」在前文已经失去（{why}），这里又出现了。",
           "again": "这句在本章出现了 {n} 次。", "copied": "这句和上一章（{file}）一字不差。",
           "phrase": "「{phrase}」在本章用了 {n} 次。", "more": "，本章共 {n} 次", "stock": "套话「{phrase}」{more}。",
           "due_here": "伏笔「{title}」应在本章（第 {chapter} 章）回收，本章没有写到。",
           "overdue": "伏笔「{title}」应在第 {due} 章前回收，到第 {chapter} 章还没有回收。",
           "short": "本章 {n} 字，大纲目标 {target} 字，还不到一半。", "long": "本章 {n} 字，大纲目标 {target} 字，超出一倍多。"},
    "en": {"dead": "\"{name}\" is dead in the ledger ({status}), yet speaks here.",
           "lost": "\"{name}\" was lost earlier ({why}), yet appears here again.",
           "again": "This sentence occurs {n} times in the chapter.",
           "copied": "This sentence is word for word in the previous chapter ({file}).",
           "phrase": "\"{phrase}\" is used {n} times in the chapter.", "more": ", {n} times in the chapter",
           "stock": "Stock phrase \"{phrase}\"{more}.",
           "due_here": "The foreshadowing \"{title}\" is due in this chapter (chapter {chapter}) and is not taken up.",
           "overdue": "The foreshadowing \"{title}\" was due before chapter {due} and is still open at chapter {chapter}.",
           "short": "The chapter has {n} characters against the outline's target of {target}: under half.",
           "long": "The chapter has {n} characters against the outline's target of {target}: over twice."},
}


def _note(lang: str, key: str, **kw: object) -> str:
    return NOTES[prompt_language(lang)][key].format(**kw)


def check_dead_speakers(text: str, file: str, dead: dict[str, str], lang: str = "zh") -> list[ReviewFinding]:
    """Findings where a character of ``dead`` ({name: the ledger status}) speaks a line of dialogue in ``text``."""
    out: list[ReviewFinding] = []
    if not dead:
        return out
    for pos, line in _lines(text):
        if not _has_quote(line) or _MEMORY.search(line):
            continue
        for name, status in dead.items():
            hit = None
            for s, seg in _outside_quotes(line):
                j = seg.find(name)
                while j >= 0:
                    after = seg[j + len(name):]
                    if after[:1] in ("：", ":") or _SPEECH.match(after):
                        hit = s + j
                        break
                    j = seg.find(name, j + 1)
                if hit is not None:
                    break
            if hit is not None:
                out.append(make_finding("dead_speaks", text, file, pos, pos + len(line.rstrip()),
                                        _note(lang, "dead", name=name, status=status)))
                break
    return out[:MAX_PER_KIND]


def check_lost_items(text: str, file: str, lost: dict[str, str], lang: str = "zh") -> list[ReviewFinding]:
    """Findings where an item of ``lost`` ({name: why}) is named again in ``text`` (not in a line that says it is
    missing or remembers it): the first such place per item."""
    out: list[ReviewFinding] = []
    for name, why in lost.items():
        for pos, line in _lines(text):
            j = line.find(name)
            if j < 0 or _MISSING.search(line):
                continue
            out.append(make_finding("lost_item", text, file, pos + j, pos + len(line.rstrip()),
                                    _note(lang, "lost", name=name, why=why)))
            break
    return out[:MAX_PER_KIND]


def _sentences(text: str) -> list[tuple[int, int, str]]:
    """(start, end, normalised key) of each sentence (code points; the key drops whitespace and quote marks)."""
    out = []
    for m in _SENT_END.finditer(text):
        raw = m.group(0)
        key = _WS.sub("", raw).strip(_OPEN_Q + _CLOSE_Q + "（）()")
        if key:
            lead = len(raw) - len(raw.lstrip())
            out.append((m.start() + lead, m.end(), key))
    return out


def check_repetition(text: str, file: str, previous: str = "", previous_file: str = "",
                     names: Iterable[str] = (), lang: str = "zh") -> list[ReviewFinding]:
    """Repeated sentences in ``text`` (the second copy quoted), sentences copied from ``previous`` (the previous
    chapter), and overused phrases (not containing one of ``names``: names repeat by nature)."""
    out: list[ReviewFinding] = []
    sents = _sentences(text)
    first: dict[str, int] = {}
    counts = Counter(k for _s, _e, k in sents if len(k) >= MIN_REPEAT_SENTENCE)
    reported: set[str] = set()
    for s, e, k in sents:
        if counts.get(k, 0) < 2:
            continue
        if k in first and k not in reported:
            reported.add(k)
            out.append(make_finding("repetition", text, file, s, e, _note(lang, "again", n=counts[k])))
        first.setdefault(k, s)
    if previous:
        prev = {k for _s, _e, k in _sentences(previous) if len(k) >= MIN_REPEAT_SENTENCE + 2}
        for s, e, k in sents:
            if k in prev and k not in reported:
                reported.add(k)
                out.append(make_finding("repetition", text, file, s, e, _note(lang, "copied", file=previous_file)))
    # overused phrases
    names = [n for n in names if n]
    grams: Counter[str] = Counter()
    where: dict[str, int] = {}
    for m in _CJK_RUN.finditer(text):
        run = m.group(0)
        for i in range(len(run) - PHRASE_CHARS + 1):
            g = run[i:i + PHRASE_CHARS]
            grams[g] += 1
            where.setdefault(g, m.start() + i)
    words = [(m.start(), m.end(), m.group(0).lower()) for m in _LATIN_WORD.finditer(text)]
    for i in range(len(words) - PHRASE_WORDS + 1):
        w = words[i:i + PHRASE_WORDS]
        g = " ".join(x[2] for x in w)
        grams[g] += 1
        where.setdefault(g, w[0][0])
    taken: list[str] = []
    phrase_hits = 0
    for g, n in grams.most_common():
        if n < PHRASE_REPEATS or phrase_hits >= 5:
            break
        if any(nm in g for nm in names) or any(_overlap(g, t) for t in taken):
            continue
        if any(g in k for k in reported):
            continue
        taken.append(g)
        phrase_hits += 1
        s = where[g]
        span = len(g) if " " not in g else None
        end = s + span if span else words[next(i for i, x in enumerate(words) if x[0] == s) + PHRASE_WORDS - 1][1]
        out.append(make_finding("repetition", text, file, s, end, _note(lang, "phrase", phrase=text[s:end], n=n)))
    return out[:MAX_PER_KIND * 2]


def _overlap(a: str, b: str) -> bool:
    """Whether phrases ``a`` and ``b`` share 4 characters in a row (one repeated passage gives many n-grams)."""
    if " " in a or " " in b:
        return a.split()[1:3] == b.split()[1:3] or a in b or b in a
    return any(a[i:i + 4] in b for i in range(len(a) - 3))


def check_stock_phrases(text: str, file: str, phrases: Iterable[str], lang: str = "zh") -> list[ReviewFinding]:
    """Each phrase of ``phrases`` found in ``text`` (Chinese anywhere; Latin phrases whole words, case-insensitive):
    one finding at its first place, the note giving the count."""
    out: list[ReviewFinding] = []
    for p in phrases:
        if not p:
            continue
        if p[0].isascii():
            rx = re.compile(r"(?<![A-Za-z])" + re.escape(p) + r"(?![A-Za-z])", re.IGNORECASE)
        else:
            rx = re.compile(re.escape(p))
        hits = list(rx.finditer(text))
        if not hits:
            continue
        m = hits[0]
        more = _note(lang, "more", n=len(hits)) if len(hits) > 1 else ""
        out.append(make_finding("stock_phrase", text, file, m.start(), m.end(), _note(lang, "stock", phrase=p, more=more)))
    return out[:MAX_PER_KIND * 2]


class ThreadView(DeferredModel):
    """What the thread check needs of a thread: ``title``, ``due_chapter``, ``open``, ``intentional`` and where it
    was planted (``file``, ``quote``, UTF-16 ``offset``)."""

    title: str
    due_chapter: Optional[int] = None
    open: bool = True
    intentional: bool = False
    file: str = ""
    quote: str = ""
    offset: Optional[int] = None


def check_threads(text: str, file: str, chapter: Optional[int], threads: Iterable[ThreadView],
                  lang: str = "zh") -> list[ReviewFinding]:
    """Open threads (not intentional) past their due chapter at ``chapter``, or due at it and not taken up in
    ``text`` (no 2-character piece of the title in the text)."""
    out: list[ReviewFinding] = []
    if chapter is None:
        return out
    for t in threads:
        if not t.open or t.intentional or t.due_chapter is None or t.due_chapter > chapter:
            continue
        if t.due_chapter == chapter:
            if any(t.title[i:i + 2] in text for i in range(max(1, len(t.title) - 1)) if t.title[i:i + 2].strip()):
                continue
            note = _note(lang, "due_here", title=t.title, chapter=chapter)
        else:
            note = _note(lang, "overdue", title=t.title, due=t.due_chapter, chapter=chapter)
        f = ReviewFinding(kind="thread", quote=t.quote, file=t.file or file, offset=t.offset,
                          length=utf16_len(t.quote), note=note)
        f.id = fingerprint(f.kind, f.file, f.quote, note)
        out.append(f)
    return out[:MAX_PER_KIND]


def check_length(text: str, file: str, target: Optional[int], lang: str = "zh") -> list[ReviewFinding]:
    """The chapter's 字数 against its outline target: under half or over twice of it is a finding."""
    if not target:
        return []
    n = count_words(text)
    if n * 2 < target:
        return [make_finding("outline", text, file, None, None, _note(lang, "short", n=n, target=target))]
    if n > target * 2:
        return [make_finding("outline", text, file, None, None, _note(lang, "long", n=n, target=target))]
    return []


def outline_chapter(outline: Any, file: str, order: list[str]) -> Any:
    """The outline chapter (``story.outline.OutlineChapter``) of chapter ``file``: the one linked to it, else the one
    at its place in ``order`` (file-name order) when that one is linked to no file; None without one."""
    if outline is None:
        return None
    oc = outline.chapter_for_file(file)
    if oc is not None:
        return oc
    chs = outline.chapters()
    i = order.index(file) if file in order else -1
    return chs[i] if 0 <= i < len(chs) and not chs[i].file else None


class ReviewInput(DeferredModel):
    """Everything the local checks read: the chapter (``file``, ``text``, ``chapter`` number), the previous chapter
    (``previous_file``, ``previous``), ``dead`` ({name: status} before this chapter), ``lost`` ({item: why}),
    ``threads``, ``target`` (outline 字), ``names`` (roster names, left out of the phrase check), ``phrases``."""

    file: str
    text: str
    chapter: Optional[int] = None
    previous_file: str = ""
    previous: str = ""
    dead: dict[str, str] = Field(default_factory=dict)
    lost: dict[str, str] = Field(default_factory=dict)
    threads: list[ThreadView] = Field(default_factory=list)
    target: Optional[int] = None
    names: list[str] = Field(default_factory=list)
    phrases: list[str] = Field(default_factory=list)
    #: the chat's language: the findings' notes are written in it (:data:`NOTES`)
    language: str = "zh"


def local_findings(inp: ReviewInput, intentional: Optional[dict[str, str]] = None) -> tuple[list[ReviewFinding], int]:
    """Run every local check on ``inp``; returns (findings without duplicates and without the ``intentional``
    fingerprints, how many were left out as intentional)."""
    lang = inp.language
    found = [*check_dead_speakers(inp.text, inp.file, inp.dead, lang), *check_lost_items(inp.text, inp.file, inp.lost, lang),
             *check_threads(inp.text, inp.file, inp.chapter, inp.threads, lang),
             *check_length(inp.text, inp.file, inp.target, lang),
             *check_repetition(inp.text, inp.file, inp.previous, inp.previous_file, inp.names, lang),
             *check_stock_phrases(inp.text, inp.file, inp.phrases, lang)]
    return dedupe(found, intentional)


def dedupe(found: list[ReviewFinding], intentional: Optional[dict[str, str]] = None) -> tuple[list[ReviewFinding], int]:
    """``found`` without repeated ids and without ids in ``intentional``; returns (kept, how many intentional)."""
    seen: set[str] = set()
    kept: list[ReviewFinding] = []
    skipped = 0
    for f in found:
        if not f.id:
            f.id = fingerprint(f.kind, f.file, f.quote, f.note)
        if f.id in seen:
            continue
        seen.add(f.id)
        if intentional and f.id in intentional:
            skipped += 1
            continue
        kept.append(f)
    return kept, skipped


def finding_line(f: ReviewFinding, language: str = "zh") -> str:
    """One finding in one line (CLI, the agent's queue): ``[重复] 003.md @120「quote」：note`` (``[repetition]
    003.md @120 "quote": note`` for a chat not in Chinese)."""
    where = f"{f.file} @{f.offset}" if f.offset is not None else f.file
    if prompt_language(language) == "en":
        q = f" {json.dumps(f.quote, ensure_ascii=False)}" if f.quote else ""
        return f"[{f.kind}] {where}{q}: {f.note}"
    q = f"「{f.quote}」" if f.quote else ""
    return f"[{KIND_ZH.get(f.kind, f.kind)}] {where}{q}：{f.note}"


def as_json(obj: Any) -> str:
    """Pretty JSON of a pydantic model or a list of them (CLI ``--json``)."""
    if isinstance(obj, list):
        return json.dumps([o.model_dump() for o in obj], ensure_ascii=False, indent=1)
    return json.dumps(obj.model_dump(), ensure_ascii=False, indent=1)
