"""The review turn of a chat (审稿, issue 19 §4): what ``Chat.review_chapter`` / ``accept_finding`` /
``mark_finding_intentional`` delegate to.

A review of chapter file F reads, never writes, the chapter folder:

1. **What held before F was written.** The branch's ledger snapshots up to the user turn whose checkpoint first added
   F (else up to that checkpoint's time; else all of them): the characters whose status says dead, the items that
   left the inventory (:func:`core.story.review.lost_items`). So chapter 3 is not flagged for a death in chapter 9.
2. **The local checks** of :mod:`core.story.review` (repetition, stock phrases, a dead character speaking, a lost item
   used, threads past due, the outline target).
3. **The model** (optional) gets a structured-output prompt (``resources/prompts/chapter_review.md``) with the card,
   the outline chapter, the ledger before the chapter, the world-book entries of the names it mentions, open
   threads, the previous chapter's end, the local findings and the intentional list, and answers
   ``{"findings":[{kind, quote, note}]}`` — parsed like the scribe's output (code fences and prose tolerated, broken
   JSON repaired with json-repair); each quote is located in the chapter (:func:`core.story.review.locate`). A failed
   call leaves the local findings standing (``model_error``).

The result is kept in ``审稿.json`` (last review per chapter). **Accept** queues a finding for the agent's next turn:
the agent state block gains 【审稿意见】 listing the accepted findings not yet delivered on this branch — a finding
counts as delivered once an agent turn on the active branch carried its marker ``〔审稿 <id>〕`` in its state block and
finished with a reply, so 撤销本轮 (the turn leaves the branch) queues it again. **Intentional** remembers the
finding's fingerprint: it is not reported again. Nothing here runs when unused: no accepted finding, no block (the
golden agent runs stay byte for byte).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from ..ledger.state import WorldState
from ..lenient_json import fenced_body, repair_loads
from ..llm.types import ChatMessage, ChatModel, ChatRequest, ModelError
from ..messages import Msg, message
from ..prompt.assemble import prompt_resource
from ..story.review import (
    KINDS,
    AcceptedFinding,
    ChapterReviewResult,
    ReviewFinding,
    ReviewInput,
    ReviewStore,
    ThreadView,
    dedupe,
    finding_line,
    fingerprint,
    is_dead,
    load_store,
    local_findings,
    locate,
    lost_items,
    outline_chapter,
    review_path,
    save_store,
    stock_phrases,
)
from ..text import utf16_len

if TYPE_CHECKING:
    from .facade import Chat

#: Output cap of the review call (tokens).
REVIEW_MAX_TOKENS = 3000
#: The chapter text sent to the model is cut to this many characters; the previous chapter's end to this many.
CHAPTER_MAX_CHARS = 30000
PREVIOUS_TAIL_CHARS = 1500
#: At most this many accepted findings in the 【审稿意见】 block (the rest wait for the next turn).
BLOCK_MAX_FINDINGS = 10
MARKER = "〔审稿 {id}〕"
#: The marker in a chat in English (issue 32); both are read back from the state blocks sent.
MARKER_EN = "[review {id}] "
_MARK_RX = re.compile(r"(?:〔审稿 |\[review )([0-9a-f]{12})(?:〕|\])")
#: The review call's framing per language (the Chinese is the shipped wording; :meth:`ChapterReview._prompt`).
REVIEW_WORDS: dict[str, dict[str, str]] = {
    "zh": {"card": "【人物卡】{name}\n{text}", "personality": "\n性格：{text}", "outline": "【大纲】第 {n} 章 {title}",
           "target": "（目标 {n} 字）", "ledger": "【账本】（写本章之前）\n{json}", "lore": "【设定】\n",
           "threads": "【伏笔】\n", "due": "（须在第 {n} 章前回收）", "previous": "【上一章结尾】{file}\n…{text}",
           "found": "【已发现】\n", "kept": "【有意保留】\n", "cut": "\n…（后文略）", "chapter": "【本章】{file}（第 {n} 章）\n{text}",
           "lore_line": "{title}：{text}",
           "block": "【审稿意见】用户采纳了下面的审稿意见：这一轮先按它们改正文（先 read 原文，再 edit），改完在回复里说明改了哪里。",
           "more": "…另有 {n} 条，下一轮再改"},
    "en": {"card": "[Character card] {name}\n{text}", "personality": "\nPersonality: {text}",
           "outline": "[Outline] Chapter {n}: {title}", "target": " (target {n} characters)",
           "ledger": "[Ledger] (before this chapter was written)\n{json}", "lore": "[Setting]\n",
           "threads": "[Foreshadowing]\n", "due": " (to be paid off before chapter {n})",
           "previous": "[End of the previous chapter] {file}\n…{text}", "found": "[Already found]\n",
           "kept": "[Kept on purpose]\n", "cut": "\n…(the rest left out)",
           "chapter": "[This chapter] {file} (chapter {n})\n{text}", "lore_line": "{title}: {text}",
           "block": ("[Review notes] The user accepted the review notes below: this turn, first fix the prose by them "
                     "(read the text first, then edit) and say in your reply where you changed it."),
           "more": "…{n} more, for the next turn"},
}


class ChapterReview:
    """The review side of one chat (``chat``: the :class:`~core.chat.facade.Chat`; this class reads its tree,
    chapter folder, checkpoints, writing room and card)."""

    def __init__(self, chat: "Chat"):
        self.chat = chat

    @property
    def dir(self) -> Path:
        """The chat folder (where ``审稿.json`` lives)."""
        return Path(self.chat.dir)

    def store(self) -> ReviewStore:
        """The chat's ``审稿.json``."""
        return load_store(self.dir)

    # ------------------------------------------------------------------ inputs

    def _order(self) -> list[str]:
        """The chapter files in book order (file-name order: seed 000, the names decide the order)."""
        return [c.name for c in self.chat.story.chapters()]

    def _chapter_no(self, file: str, order: list[str]) -> tuple[Optional[int], Optional[int]]:
        """(1-based chapter number, outline target) of ``file``: its outline chapter's
        (:func:`core.story.review.outline_chapter`), else its place in ``order``."""
        oc = outline_chapter(self.chat.writing.outline(), file, order)
        if oc is not None:
            return oc.index + 1, oc.target
        return (order.index(file) + 1 if file in order else None), None

    def _snapshots_before(self, file: str) -> list[dict[str, Any]]:
        """The ``state`` dicts of the branch's ledger snapshots written before ``file`` first appeared (module doc)."""
        path = list(self.chat.tree.path_to())
        users = {e.id: i for i, e in enumerate(path) if e.type == "user"}
        cut: Optional[int] = None
        cut_ts: Optional[int] = None
        if (self.dir / self.chat.novel_layout().history).is_dir():
            for cp in self.chat.history_log.checkpoints():
                if file in cp.files:
                    if cp.turnId and cp.turnId in users:
                        cut = users[cp.turnId]
                    else:
                        cut_ts = cp.ts
                    break
        out = []
        for i, e in enumerate(path):
            if cut is not None and i >= cut:
                break
            if cut_ts is not None and e.ts >= cut_ts:
                break
            if e.type == "rp-state" and isinstance(getattr(e, "state", None), dict):
                out.append(e.state)
        return out

    def gather(self, file: str) -> tuple[ReviewInput, WorldState]:
        """The local checks' input for chapter ``file`` and the ledger as it stood before it. Raises ToolError
        (``not_found`` / ``bad_path``), OSError."""
        story = self.chat.story
        text = story.resolve(file).read_text("utf-8", errors="replace")
        order = self._order()
        no, target = self._chapter_no(file, order)
        prev_file = order[order.index(file) - 1] if file in order and order.index(file) > 0 else ""
        previous = story.resolve(prev_file).read_text("utf-8", errors="replace") if prev_file else ""
        snaps = self._snapshots_before(file)
        before = WorldState.model_validate(snaps[-1]) if snaps else WorldState()
        dead = {n: c.status for n, c in before.characters.items() if is_dead(c.status)}
        lost = lost_items([s.get("inventory") or [] for s in snaps])
        threads = [ThreadView(title=t.title, due_chapter=t.due_chapter, open=t.open, intentional=t.intentional,
                              file=t.planted.file, quote=t.planted.quote, offset=t.planted.offset)
                   for t in self.chat.writing.threads()]
        cur = self.chat.current_state()
        names = list(cur.characters)
        if cur.roster is not None:
            for table in (cur.roster.characters, cur.roster.places, cur.roster.items, cur.roster.events):
                names += list(table)
        inp = ReviewInput(file=file, text=text, chapter=no, previous_file=prev_file, previous=previous, dead=dead,
                          language=self._lang(),
                          lost=lost, threads=threads, target=target, names=sorted(set(names)),
                          phrases=stock_phrases())
        return inp, before

    # ------------------------------------------------------------------ the model's part

    def _lang(self) -> str:
        """The chat's language as the review's texts are written: "zh" or "en"."""
        return "zh" if getattr(self.chat.context, "language", "zh") in ("", "zh") else "en"

    def _prompt(self, inp: ReviewInput, before: WorldState, local: list[ReviewFinding], store: ReviewStore) -> str:
        card = self.chat.card
        lang = self._lang()
        w = REVIEW_WORDS[lang]
        parts = [w["card"].format(name=card.name, text=(card.description or '')[:3000])
                 + (w["personality"].format(text=card.personality[:1000]) if card.personality else "")]
        oc = outline_chapter(self.chat.writing.outline(), inp.file, self._order())
        if oc is not None:
            parts.append(w["outline"].format(n=oc.index + 1, title=oc.title)
                         + (w["target"].format(n=oc.target) if oc.target else "")
                         + "".join(f"\n- {b}" for b in oc.beats))
        parts.append(w["ledger"].format(json=before.to_json(2)))
        lore = self._lore(inp)
        if lore:
            parts.append(w["lore"] + "\n".join(lore))
        open_threads = [t for t in inp.threads if t.open]
        if open_threads:
            parts.append(w["threads"] + "\n".join(
                f"- {t.title}" + (w["due"].format(n=t.due_chapter) if t.due_chapter else "") for t in open_threads[:20]))
        if inp.previous:
            parts.append(w["previous"].format(file=inp.previous_file, text=inp.previous[-PREVIOUS_TAIL_CHARS:]))
        if local:
            parts.append(w["found"] + "\n".join(f"- {finding_line(f, lang)}" for f in local))
        if store.intentional:
            parts.append(w["kept"] + "\n".join(f"- {v}" for v in list(store.intentional.values())[-30:]))
        body = inp.text if len(inp.text) <= CHAPTER_MAX_CHARS else inp.text[:CHAPTER_MAX_CHARS] + w["cut"]
        parts.append(w["chapter"].format(file=inp.file, n=inp.chapter, text=body))
        if lang != "zh":
            parts.append("[Language] Write every note in the language of the chapter.")
        return "\n\n".join(parts)

    def _lore(self, inp: ReviewInput) -> list[str]:
        """The world-book entries whose title is a roster name the chapter mentions (at most 12, 300 characters
        each): what the model checks the chapter's facts against besides the ledger."""
        try:
            entries = list(self.chat.book.entries)
        except Exception:  # noqa: BLE001 - a book that fails to load simply adds nothing
            return []
        named = [n for n in inp.names if n and n in inp.text]
        out = []
        for e in entries:
            title = getattr(e, "title", "") or ""
            if title and title in named and getattr(e, "content", ""):
                out.append(REVIEW_WORDS[self._lang()]["lore_line"].format(title=title, text=e.content[:300]))
            if len(out) >= 12:
                break
        return out

    async def _ask_model(self, model: ChatModel, user: str, inp: ReviewInput,
                         result: ChapterReviewResult) -> list[ReviewFinding]:
        system = prompt_resource("chapter_review.md" if self._lang() == "zh" else "chapter_review.en.md")
        req = ChatRequest(messages=[ChatMessage(role="system", content=system),
                                    ChatMessage(role="user", content=user)],
                          max_tokens=REVIEW_MAX_TOKENS, thinking=False, purpose="summary", temperature=0.2)
        try:
            resp = await model.complete(req)
        except ModelError as e:
            result.model_error = message("llm.review.failed", error=e.message)
            return []
        result.model = resp.model or getattr(model, "name", "")
        items, problems = parse_review_output(resp.content)
        result.problems += problems
        out: list[ReviewFinding] = []
        for it in items:
            kind = str(it.get("kind") or "").strip()
            if kind not in KINDS:
                kind = "contradiction" if kind else ""
            note = str(it.get("note") or "").strip()
            quote = str(it.get("quote") or "").strip()
            if not kind or not note:
                result.problems.append(message("review.item_incomplete"))
                continue
            at = locate(inp.text, quote) if quote else None
            if at is not None:
                q = inp.text[at:at + len(quote)] if inp.text[at:at + len(quote)].strip() else quote
                f = ReviewFinding(kind=kind, quote=q, file=inp.file, offset=utf16_len(inp.text[:at]),  # type: ignore[arg-type]
                                  length=utf16_len(q), note=note, source="model")
            else:
                f = ReviewFinding(kind=kind, quote=quote, file=inp.file, note=note, source="model")  # type: ignore[arg-type]
                if quote:
                    result.problems.append(message("review.quote_missing", quote=quote[:30]))
            f.id = fingerprint(f.kind, f.file, f.quote, f.note)
            out.append(f)
        return out

    # ------------------------------------------------------------------ commands

    async def run(self, file: str, model: Optional[ChatModel] = None, use_model: bool = True) -> ChapterReviewResult:
        """Review chapter ``file`` (a name in ``正文/``): the local checks, then — when ``use_model`` — the model
        (``model``, else the chat's). Never edits the chapter. The result is kept in ``审稿.json`` and returned.
        Raises ToolError (no such chapter), OSError; a failed model call is ``model_error`` in the result."""
        inp, before = self.gather(file)
        store = self.store()
        local, skipped = local_findings(inp, store.intentional)
        result = ChapterReviewResult(file=file, chapter=inp.chapter, findings=list(local), suppressed=skipped,
                                     ts=int(time.time() * 1000))
        if use_model:
            found = await self._ask_model(model or self.chat.model, self._prompt(inp, before, local, store), inp, result)
            kept, skipped2 = dedupe([*local, *found], store.intentional)
            result.findings, result.suppressed = kept, skipped + skipped2
        store = self.store()  # re-read: the user may have acted while the model was thinking
        store.last[file] = result
        for f in result.findings:
            store.recent.pop(f.id, None)
            store.recent[f.id] = f
        save_store(self.dir, store)
        return result

    def last(self, file: str) -> Optional[ChapterReviewResult]:
        """The last review of ``file`` (None when never reviewed), findings marked intentional since left out."""
        store = self.store()
        r = store.last.get(file)
        if r is None:
            return None
        r.findings = [f for f in r.findings if f.id not in store.intentional]
        return r

    def _find(self, store: ReviewStore, finding_id: str) -> ReviewFinding:
        f = store.recent.get(finding_id)
        if f is None:
            f = next((x for r in store.last.values() for x in r.findings if x.id == finding_id), None)
        if f is None:
            raise KeyError(finding_id)
        return f

    def accept(self, finding_id: str) -> ReviewFinding:
        """Queue finding ``finding_id`` (of a kept review) for the agent's next turn. Accepting twice queues once.
        Raises KeyError (unknown finding), OSError."""
        store = self.store()
        f = self._find(store, finding_id)
        if f.id not in self._pending_ids(store):
            store.accepted = [a for a in store.accepted if a.finding.id != f.id]
            store.accepted.append(AcceptedFinding(finding=f, accepted_at=int(time.time() * 1000)))
        store.intentional.pop(f.id, None)
        save_store(self.dir, store)
        return f

    def intentional(self, finding_id: str, value: bool = True) -> ReviewFinding:
        """Mark finding ``finding_id`` intentional (not reported again; taken off the agent's queue) or, with
        ``value`` False, not any more. Raises KeyError, OSError."""
        store = self.store()
        f = self._find(store, finding_id)
        if value:
            store.intentional[f.id] = f"{f.kind} · {f.file} · {f.quote or f.note}"[:160]
            store.accepted = [a for a in store.accepted if a.finding.id != f.id]
        else:
            store.intentional.pop(f.id, None)
        save_store(self.dir, store)
        return f

    # ------------------------------------------------------------------ the agent's queue

    def _delivered(self, since: int) -> set[str]:
        """Ids whose marker an agent turn on the active branch (after ``since`` ms) carried and answered."""
        out: set[str] = set()
        for e in self.chat.tree.path_to():
            if e.type != "beat" or e.ts < since or getattr(e, "outcome", "") != "discussed":
                continue
            out.update(_MARK_RX.findall(getattr(e, "injection", "") or ""))
        return out

    def _pending_ids(self, store: ReviewStore) -> set[str]:
        if not store.accepted:
            return set()
        done = self._delivered(min(a.accepted_at for a in store.accepted))
        return {a.finding.id for a in store.accepted if a.finding.id not in done}

    def pending(self) -> list[ReviewFinding]:
        """The accepted findings not yet delivered to an agent turn on the active branch (oldest first)."""
        store = self.store()
        ids = self._pending_ids(store)
        return [a.finding for a in store.accepted if a.finding.id in ids]

    def block(self) -> str:
        """【审稿意见】 for the next agent turn ("" when nothing is pending)."""
        pend = self.pending()
        if not pend:
            return ""
        lang = self._lang()
        w = REVIEW_WORDS[lang]
        marker = MARKER if lang == "zh" else MARKER_EN
        lines = [w["block"]]
        for f in pend[:BLOCK_MAX_FINDINGS]:
            lines.append(f"- {marker.format(id=f.id)}{finding_line(f, lang)}")
        if len(pend) > BLOCK_MAX_FINDINGS:
            lines.append(w["more"].format(n=len(pend) - BLOCK_MAX_FINDINGS))
        return "\n".join(lines)

    def wrap_blocks(self, inner: Optional[Callable[[WorldState], str]]) -> Callable[[WorldState], str]:
        """The agent desk's ``extra_blocks`` with 【审稿意见】 after what ``inner`` gives (unchanged when nothing is
        pending)."""

        def blocks(state: WorldState) -> str:
            a = inner(state) if inner is not None else ""
            b = self.block() if review_path(self.dir).is_file() else ""
            return f"{a}\n\n{b}" if a and b else (a or b)

        return blocks


def parse_review_output(raw: str) -> tuple[list[dict[str, Any]], list[Msg]]:
    """The ``findings`` list in a review reply: code fences and prose around the JSON tolerated, broken JSON repaired
    (json-repair, as the scribe does); a bare list is taken as the findings. Returns (finding dicts, problems as
    catalog messages)."""
    problems: list[Msg] = []
    text = (raw or "").strip()
    fence = fenced_body(text)
    if fence is not None:
        text = fence
    try:
        obj: Any = json.loads(text)
    except (json.JSONDecodeError, RecursionError):  # RecursionError: nested thousands deep
        starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
        try:
            obj = repair_loads(text[min(starts):] if starts else text)
        except Exception:  # json_repair raises on some inputs, repair_loads on texts too big to mend: unusable
            obj = None
        if obj:
            problems.append(message("review.repaired"))
    if isinstance(obj, dict):
        obj = obj.get("findings")
    if not isinstance(obj, list):
        problems.append(message("review.no_findings"))
        return [], problems
    return [x for x in obj if isinstance(x, dict)], problems
