"""One turn of a chat: assembling the role-play prompt (:func:`prepare`, world-info activation), playing a
role-play beat (:func:`play`) or an agent turn (:func:`agent_turn`) through the beat loop, and recording it on the
tree; what follows the save is :func:`pipeline.after_turn`.

One beat: the branch path → latest ``rp-state`` → 【世界状态】【登场名录】; activation over the scan window →
【相关设定】; messages (system, opening, past user words + finals, injection + the user's words); the beat loop (the
user entry is on disk before the first model call); sealed → assistant entry + the scribe; a previous-beat edit →
``revision``; not sealed → the beat entry keeps the draft (「本拍尚未收笔」, no scribe).
"""

from __future__ import annotations

import random
import unicodedata
from typing import TYPE_CHECKING, Any, Literal, Optional, TypedDict

from ..beat.draft import DRAFT_LOG_NAME, Draft, DraftLog
from ..beat.events import Activity, BeatFinished, BeatStarted
from ..beat.loop import CUT_MESSAGES, Beat, BeatInput, EventSink, PreviousBeat
from ..beat.tools.context import AskHandler
from ..beat.tools.sets import COMPACT_ROLEPLAY_TOOLS, MEMORY_TOOLS, ROLEPLAY_TOOLS
from ..errors import ToolError
from ..group.prompt import group_nudge
from ..ledger.mvu import has_era_blocks, parse_update_blocks, strip_update_blocks
from ..ledger.state import WorldState
from ..llm.sampling import with_sampling
from ..llm.types import ChatMessage, ChatRequest
from ..lore import ActivationOptions, ActivationResult, ScanMessage, TimedEffects
from ..macros import MacroContext, apply_macros
from ..messages import Msg, message
from ..prompt.assemble import HistoryCache, build_injection, build_messages, lore_depth_blocks, opening_body
from ..prompt.authors_note import character_note_block, note_depth_block, note_injection_text
from ..prompt.inspect import encode_sent
from ..prompt.lore_layers import beat_constants, render_lore
from ..prompt.presets.prompter import DepthBlock, insert_depth_injections
from ..prompt.prose_only import asked_entries, bounded_lore, compact_system, near_first, prose_lore, prose_system
from ..prompt.wording import lang_of
from ..story.workspace import quoted
from .agent import NO_EDITS_NOTICE, unbacked_claim
from .pipeline import after_turn, emit, run_scribe_step, show_ledger
from .prose_mode import PROSE_LIMITS, REJECTED_NOTICE, prose_mode, tools_unproven
from .results import BeatResult
from .templates import finish as finish_templates
from .templates import refresh as refresh_templates
from .templates import render_messages as render_templates
from .templates import requested_entries, with_text

if TYPE_CHECKING:  # pragma: no cover
    from .facade import Chat



class BeatExtras(TypedDict, total=False):
    """The optional extra keys of a ``beat`` entry, passed to ``SessionTree.append`` as keyword arguments: what
    the prompt templates rendered (``ChatContext.last_templates``), why an unsealed reply was ``cut``
    (``BeatOutput.cut``), and ``play_mode`` "prose" for a beat played in prose mode."""

    templates: list[dict[str, Any]]
    cut: str
    play_mode: Literal["prose"]


def previous_beat(h: HistoryCache) -> Optional[PreviousBeat]:
    """The newest reply on the branch as the loop's editable previous beat, or None."""
    for last in reversed(h.turns):
        if last.final is not None:
            return PreviousBeat(assistant_id=last.assistant_id, text=last.final,
                                version=h.revisions.get(last.assistant_id, ("", 0))[1])
    return None


def beat_macros(chat: "Chat", h: HistoryCache, user_text: str) -> MacroContext:
    """The chat's macro context for one beat: ``{{lastMessage}}``/``{{lastUserMessage}}`` = the user's new words,
    ``{{lastCharMessage}}`` = the newest reply (the greeting without Liyuan's header before the first one),
    ``{{lastMessageId}}`` = the index of the user's message (SillyTavern has pushed it to the chat before world
    info and the prompt are built). A shallow copy of the prompt context (with the chat's templates, if any):
    variables stay the chat's own."""
    last_char = next((t.final for t in reversed(h.turns) if t.final is not None), None)
    if last_char is None and h.opening is not None:
        last_char = opening_body(h.opening)
    return chat.context.prompt_ctx.model_copy(update={
        "last_message": user_text, "last_user_message": user_text, "last_char_message": last_char or "",
        "last_message_id": len(h.messages)})


def attempt_of(chat: "Chat") -> int:
    """How many times the beat of the branch's newest user message has been played before (0 on a send or an
    edit; 1, 2 … on a regenerate or a continue: the beat entries already under that message)."""
    user = chat.tree.latest("user")
    if user is None:
        return 0
    return sum(1 for e in chat.tree.children(user.id) if e.type == "beat")


def activate(chat: "Chat", h: HistoryCache, user_text: str, ctx: Optional[MacroContext] = None,
             attempt: int = 0) -> ActivationResult:
    """World-info activation for the next beat (SillyTavern's rules, ``Lorebook.activate_detailed``): the newest
    messages as ``Name: text`` (the greeting without Liyuan's 【开场 · 名字】 header), the branch's sticky/cooldown
    state from its latest beat entry, the chat length in messages, the card's name for character filters, and
    macros (``ctx``, default :func:`beat_macros`) applied to keys and to the content recursion scans, as ST's
    ``substituteParams`` does (so a key ``{{char}}`` fires on the ``Name:`` prefix). Probability and group rolls
    are seeded by chat id + position + ``attempt`` (:func:`attempt_of`): reproducible, yet a regenerate rolls
    again as SillyTavern does (the first attempt keeps the seed of earlier versions). Kept as
    ``chat.last_activation``."""
    c = chat.context
    if ctx is None:
        ctx = beat_macros(chat, h, user_text)
    wi = chat.world_info_settings()  # the app's world-info settings under the chat's own (chat.world_info)
    want = wi.scan_messages_needed(e.scan_depth for e in c.book.entries if isinstance(e.scan_depth, int))
    scan: list[ScanMessage] = []
    for t in reversed(h.turns):  # want None: min activations may widen the scan to the whole chat
        if want is not None and len(scan) >= want:
            break
        if t.final is not None:
            scan.append(ScanMessage(name=c.card.name, text=t.final))
        if t.user is not None:
            scan.append(ScanMessage(name=c.persona, text=t.user))
    if (want is None or len(scan) < want) and h.opening is not None:
        scan.append(ScanMessage(name=c.card.name, text=opening_body(h.opening)))
    scan.reverse()
    scan.append(ScanMessage(name=c.persona, text=user_text))
    chat_length = len(h.messages) + 1
    timed = None
    beat = chat.tree.latest("beat")
    raw = getattr(beat, "lore_timed", None) if beat is not None else None  # an extra key of the beat entry
    if raw:
        try:
            timed = TimedEffects.model_validate(raw)
        except ValueError:
            timed = None
    seed = f"{chat.tree.header.id}:{chat_length}" + (f":{attempt}" if attempt else "")
    lore = c.book.activate_detailed(scan, ActivationOptions(
        timed=timed, chat_length=chat_length, rng=random.Random(seed), substitute=lambda t: apply_macros(t, ctx),
        character=c.card.name, budget_tokens=chat.world_info_budget_basis().tokens))
    chat.last_activation = (lore, len(scan))
    return lore


#: The order of the in-chat injections within one depth and role (stable sort, the preset's own prompts first):
#: SillyTavern joins its extension prompts sorted by key — ``2_floating_prompt`` (the Author's Note), ``DEPTH_PROMPT``
#: (the card's Character's Note), ``PERSONA_DESCRIPTION``, ``customDepthWI-…`` (@depth lore) — after the prompt
#: manager's in-chat prompts (``openai.js`` ``populationInjectionPrompts``, ``script.js`` ``getExtensionPrompt``).
_INJECTION_RANK = {"authors_note": 1, "card": 2, "persona": 3, "lore": 4}


def prepare(chat: "Chat", user_text: str, attempt: int = 0, prose: bool = False) -> tuple[str, list[str], list[ChatMessage], WorldState, Optional[PreviousBeat]]:
    """Injection, activated titles, first-call messages, ledger and previous beat for ``user_text`` on the active
    branch — everything a beat sends, without running it. ``attempt``: see :func:`activate`. ``prose``: prose-only
    play (:mod:`..prompt.prose_only`: the prose-only system prompt, the keyed entries' text in 【相关设定】, no index).

    Lore: keyed hits are titles in 【相关设定】; the system prompt holds the chat's fixed constants; the turn's other
    constants (rolled, grouped, filtered, or quoting the newest messages) go to 【本拍常驻设定】 and @depth entries
    into the chat at their depth, macros evaluated with the beat's context (:mod:`..prompt.lore_layers`)."""
    c = chat.context
    h = chat.history()
    state = chat.ledger.state()
    shown = chat.state_filter(state) if chat.state_filter is not None else state  # a group member's witnessed facts
    ctx = beat_macros(chat, h, user_text)
    refresh_templates(chat, h, user_text)  # EJS / TavernHelper macros: this beat's values, system rendered again
    lore = activate(chat, h, user_text, ctx, attempt)
    keyed = with_text([e for e in lore.entries if not e.constant and e.position != "at_depth"], ctx)
    order = {id(e): i for i, e in enumerate(c.book.entries)}
    activated = [e.display_title for e in sorted(keyed, key=lambda e: order.get(id(e), 0))]
    hist = bare_opening(chat, h, chat.window.fit(h, c.beat_system, user_text))
    consts = render_lore(beat_constants(lore, c.fixed_lore) + requested_entries(chat, lore), ctx)
    compact = compact_prompt(chat)
    system = prose_system(c.beat_system, c.language) if prose else (
        compact_system(c.beat_system, c.language) if compact else c.beat_system)
    # small-model play (prose-only, compact prompt): this beat's own matches first, the block next to the question
    small = prose or compact or bool(getattr(chat.model, "is_local", False))  # a30: a local model as a small one
    inlined = (near_first(keyed, order, chat.last_activation) if small
               else sorted(keyed, key=lambda e: order.get(id(e), 0)))
    if prose:
        injection = build_injection(shown, activated, [], c.language, constants=consts, lore=prose_lore(inlined, ctx),
                                    lore_last=True)
    else:  # a model that has not shown it calls tools gets the entries' text too (bounded, issue 30 §4)
        inline = bounded_lore(prose_lore(inlined, ctx)) if keyed and tools_unproven(chat) else ""
        injection = build_injection(shown, activated, c.book.index_titles(), c.language,
                                    memory_hint=bool(h.summaries) or chat.window.dropped > 0, constants=consts,
                                    lore=inline, lore_last=small)
    if chat.speaker:  # a group chat: who writes this reply, after all the members share (prefix cache, group.prompt)
        injection = f"{injection}\n\n{group_nudge(c.card.name)}"
    note = chat.authors_note()  # the Author's Note: never in the system prompt (prompt.authors_note)
    note_text = note_injection_text(note, h.user_count, ctx, c.language)
    if note_text:
        parts = [note_text, injection] if note.position == "before" else [injection, note_text]
        injection = "\n\n".join(p for p in parts if p)
    preset_depth: list[DepthBlock] = []
    after = 0  # a preset's segments after the chat (not counted by the depths)
    if c.prompter is not None:
        messages, preset_depth, after = c.prompter.build_parts(system, hist, injection, user_text)
    else:
        messages = build_messages(system, hist, injection, user_text)
    if c.scripts:
        messages = c.prompt_scripts(messages)
    messages = render_templates(chat, messages)  # templates a reply (or the user) wrote: evaluated, never sent as code
    if preset_depth:  # the extension evaluates the whole prompt: the preset's in-chat prompts too
        texts = render_templates(chat, [messages[0], *(ChatMessage(role=b.role, content=b.text) for b in preset_depth)])
        preset_depth = [b.model_copy(update={"text": m.content}) for b, m in zip(preset_depth, texts[1:])]
    # every in-chat injection in one pass, so that one depth and role make one message (prompt.authors_note):
    # the preset's in-chat prompts, then SillyTavern's extension prompts in the order of their keys — the Author's
    # Note (2_floating_prompt), the card's Character's Note (DEPTH_PROMPT; a preset's prompter renders it), the
    # persona at depth (PERSONA_DESCRIPTION), the @depth lore (customDepthWI-…)
    depth = [*preset_depth, *(b for b in (note_depth_block(note, h.user_count, ctx),
                                         character_note_block(c.card.extensions, ctx) if c.prompter is None else None)
                              if b is not None)]
    depth += lore_depth_blocks(lore, ctx)
    if depth:  # instructions the author placed @depth go where SillyTavern would put them
        depth.sort(key=lambda b: _INJECTION_RANK.get(b.source, 0))
        end = len(messages) - after
        messages = [messages[0], *insert_depth_injections(messages[1:end], depth), *messages[end:]]
    finish_templates(chat)  # what the templates rendered (the beat entry, the inspector); failures to the notices
    return injection, activated, messages, state, previous_beat(h)


def bare_opening(chat: "Chat", h: HistoryCache, hist: list[ChatMessage]) -> list[ChatMessage]:
    """``hist`` with the opening sent without Liyuan's 「【开场 · 名字】」 label when the model is a local server
    (issue 30 §1: a 0.5B model copied the labelled opening 4 times in 4, once in 4 without it); the label stays in
    the chat for display. Other models get the opening as the seeds send it (golden runs)."""
    if not hist or h.opening is None or not getattr(chat.model, "is_local", False):
        return hist
    first = hist[0]
    if first.role != "assistant" or first.content != h.opening:
        return hist
    return [ChatMessage(role="assistant", content=opening_body(h.opening)), *hist[1:]]


def lore_reasons(chat: "Chat") -> list[Msg]:
    """One line per entry of the last activation: its title and why it fired (which key in which message,
    constant, sticky, recursion through another entry), each a catalog message (``lore.why.*``); [] before any
    activation."""
    if chat.last_activation is None:
        return []
    lore, n = chat.last_activation
    out = []
    for e, r in zip(lore.entries, lore.reasons):
        title = e.display_title
        if r.kind == "key":
            kw = r.key or ""
            if r.matched_in == "recursion":
                out.append(message("lore.why.recursion", title=title, kw=kw, via=r.via_title or ""))
            elif r.message_index is not None and r.message_index == n - 1:
                out.append(message("lore.why.this", title=title, kw=kw))
            elif r.message_index is not None:
                out.append(message("lore.why.back", title=title, kw=kw, n=n - 1 - r.message_index))
            elif r.matched_in:
                out.append(message("lore.why.in", title=title, kw=kw, where=r.matched_in))
            else:
                out.append(message("lore.why.scan", title=title, kw=kw))
        elif r.kind in ("constant", "sticky", "decorator"):
            out.append(message(f"lore.why.{r.kind}", title=title))
        else:
            out.append(message("lore.why.other", title=title, kind=r.kind))
    return out


def compact_prompt(chat: "Chat") -> bool:
    """Whether the chat's model asks for the compact prompt (``ProviderSettings.compact_prompt``, issue 30 §6)."""
    return bool(getattr(chat.model, "compact_prompt", False))


def memory_tools(chat: "Chat") -> dict[str, Any]:
    """BeatInput fields that add ``memory_search`` once the branch has been compacted (before that, every beat
    is in the prompt and the tool list stays as the seeds have it); with the compact prompt, its smaller set."""
    base = COMPACT_ROLEPLAY_TOOLS if compact_prompt(chat) else ROLEPLAY_TOOLS
    if not chat.history().summaries and not chat.window.dropped:
        return {"tool_names": base} if base is not ROLEPLAY_TOOLS else {}
    return {"tool_names": (*base, *MEMORY_TOOLS), "memory_search": chat.memory_search}


async def run_loop(chat: "Chat", inp: BeatInput, max_rounds: Optional[int]) -> Any:
    """Run one beat loop (Stop reaches it through ``chat.running``) and record its asks on the tree."""
    if max_rounds:
        inp.max_rounds = max_rounds
    beat = Beat(inp)
    chat.running = beat
    try:
        out = await beat.run()
    finally:
        chat.running = None
    for req, ans in out.asks:
        chat.tree.append("ask", question=req.question, options=req.options, answer=ans.answer, by=ans.by)
    return out


async def play(chat: "Chat", user_text: str, ask: Optional[AskHandler], on_event: Optional[EventSink],
               max_rounds: Optional[int], draft: Optional[Draft] = None, note: str = "",
               how: Literal["send", "regenerate", "continue", "edit"] = "send",
               continues: Optional[str] = None, chapter: Optional[str] = None) -> BeatResult:
    """Play the beat for ``user_text`` (already on the tree) on the active branch and store it (module doc).
    ``draft``/``note``: 「继续」 on an unfinished draft, or the sealed reply being continued; ``how``: send |
    regenerate | edit | continue (an unsealed draft or a sealed reply); ``continues``: the sealed reply's text a continue-reply starts
    from — the scribe then reads only what was added after it (the whole final when the model rewrote the start)."""
    chat.refresh_card()  # the card edited since the last beat (cards.edit): read again, and the activity list says so
    chat.note_books_used()  # library world books replaced since the last beat (chat.book_update)
    # a chat already past the compaction level (imported, a smaller model, a failed summary) is compacted first
    w = chat.window
    if w.share > 0 and chat.context_usage()["used"] > w.share * w.window:
        await chat.maybe_compact(on_event)
    if chat.mode == "agent":
        return await agent_turn(chat, user_text, ask, on_event, max_rounds, chapter)
    c = chat.context
    pm = prose_mode(chat)
    prose, _why = pm.decide(chat)

    def assemble(prose: bool) -> tuple[str, list[str], list[ChatMessage], WorldState, Optional[PreviousBeat]]:
        injection, activated, messages, state, previous = prepare(chat, user_text, attempt_of(chat), prose=prose)
        if note:  # after the user's own message (a preset may put "after" segments behind it)
            mine = f"{injection}\n\n{user_text}" if injection else user_text
            i = next((k for k in range(len(messages) - 1, -1, -1) if messages[k].role == "user" and messages[k].content == mine), len(messages) - 1)
            messages[i] = ChatMessage(role="user", content=f"{messages[i].content}\n\n{note}")
        return injection, activated, messages, state, previous

    injection, activated, messages, state, previous = assemble(prose)
    hist = chat.history().prompt_messages()
    emit(on_event, BeatStarted(beat=chat.history().user_count, user=user_text, injection=injection, activated=activated,
                               model=chat.model.name, is_replay=chat.model.is_replay, how=how,
                               lore=lore_reasons(chat)))
    while chat.pending_notices:  # e.g. the preset changed: the cached prefix is rebuilt once
        emit(on_event, Activity(level="info", text=chat.pending_notices.pop(0)))
    spent = chat.last_activation[0] if chat.last_activation is not None else None
    if spent is not None and spent.budget_overflowed and chat.world_info_settings().world_info_overflow_alert:
        emit(on_event, Activity(level="warning", text=message("beat.lore_budget", n=len(spent.entries))))  # ST's alert
    if spent is not None and spent.safety_stopped and spent.warnings:  # lore.activation's hard bound on one run
        emit(on_event, Activity(level="warning", text=spent.warnings[-1]))
    if w.fixed_over:
        emit(on_event, Activity(level="warning", text=message(
            "beat.window_fixed_over", tokens=f"{w.tokens.text(c.system):,}", window=f"{w.window:,}")))
    if w.dropped:
        emit(on_event, Activity(level="warning", text=message("beat.window_dropped", window=f"{w.window:,}",
                                                              n=w.dropped)))
    user_entry = chat.tree.latest("user")
    draft_log = DraftLog(chat.dir / DRAFT_LOG_NAME, user_entry.id) if user_entry is not None else None
    if prose and not pm.told_limits:
        pm.told_limits = True
        emit(on_event, Activity(level="info", text=PROSE_LIMITS))

    # lore the tools return (lorebook_search) gets the macros as the prompt's lore does: the beat's context, with
    # {{lastMessage}} / {{lastCharMessage}} of this beat (beat_macros), not the chat's bare context
    tool_ctx = beat_macros(chat, chat.history(), user_text)

    # the entries the user asked about (a local model's reply that uses none of them is retried once, issue 30)
    asked = tuple(apply_macros(e.content, tool_ctx) for e in asked_entries(chat.last_activation, user_text)) \
        if getattr(chat.model, "is_local", False) else ()

    def beat_input(prose: bool) -> BeatInput:
        return BeatInput(messages=messages, model=with_sampling(chat.model, chat.sampling()), book=c.book, state=state,
                         previous=previous, ask=ask, on_event=on_event, initial_draft=draft,
                         macros=lambda t: apply_macros(t, tool_ctx), draft_log=draft_log, echo=injection,
                         prose_only=prose, echo_guard=how != "continue" and draft is None, language=c.language,
                         asked_lore=asked, **({"tool_names": ()} if prose else memory_tools(chat)))

    inp = beat_input(prose)
    out = await run_loop(chat, inp, max_rounds)
    if out.outcome == "error" and not prose and out.error_kind == "config" and out.error_config in ("jinja", "tools"):
        # the server refuses tools: prose-only from now on, and this beat played again at once without them
        pm.tools_rejected(chat)
        emit(on_event, Activity(level="warning", text=REJECTED_NOTICE))
        failed = list(out.calls)
        prose = True
        injection, activated, messages, state, previous = assemble(True)
        inp = beat_input(True)
        out = await run_loop(chat, inp, max_rounds)
        out.calls[:0] = failed
        out.activity.insert(0, REJECTED_NOTICE)
    ignored = pm.after_beat(chat, out)
    if ignored:
        out.activity.append(ignored)
        emit(on_event, Activity(level="warning", text=ignored))
    tree = chat.tree
    lore = chat.last_activation[0] if chat.last_activation is not None else None
    extra: BeatExtras = {}
    if c.last_templates:
        extra["templates"] = c.last_templates
    if out.cut:
        extra["cut"] = out.cut
    if prose:
        extra["play_mode"] = "prose"
    beat_entry = tree.append("beat", calls=out.calls, outcome=out.outcome, draft=out.draft.text,
                             draft_version=out.draft.version, injection=injection, activated=activated,
                             activity=out.activity, warnings=out.warnings, error=out.error,
                             lore_timed=lore.timed.model_dump() if lore is not None else None, **extra,
                             sent=encode_sent(messages, c.system, hist, list(inp.tool_names), c.language))
    result = BeatResult(user=user_text, injection=injection, activated=activated,
                        calls=[[t.name for t in call.tool_calls] for call in out.calls], outcome=out.outcome,
                        sealed=out.sealed, activity=list(out.activity), warnings=list(out.warnings), error=out.error,
                        sent=messages, output=out)
    if out.revision is not None:
        target, text, version = out.revision
        tree.append("revision", target=target, text=text, version=version)
        result.revised_previous = True
        result.revised_text = text
    actor_ops: list[Any] = []
    if out.sealed and ((c.mvu_initial is not None and "<updatevariable" in out.final.lower()) or has_era_blocks(out.final)):
        actor_ops = parse_update_blocks(out.final)  # applied before the scribe's patch; hidden from the reply
        out.final = strip_update_blocks(out.final)
    reply = None
    if out.sealed:
        result.final = out.final
        named: dict[str, Any] = {"speaker": chat.speaker} if chat.speaker else {}  # a group member's reply
        reply = tree.append("assistant", text=out.final, sealed=True, beat=beat_entry.id, **named)

    scribe_text = out.final
    if continues is not None and out.final.startswith(continues):
        scribe_text = out.final[len(continues):].strip()

    async def scribe() -> None:
        await run_scribe_step(chat, result, state, user_text, scribe_text, on_event, actor_ops,
                              covers=reply.id if reply is not None else None)

    finished = BeatFinished(outcome=out.outcome, final=result.final, sealed=result.sealed,
                            message="" if out.sealed or out.revision else (out.error or CUT_MESSAGES.get(out.cut or "", message("beat.unsealed"))))
    return await after_turn(chat, result, on_event, scribe=scribe if out.sealed else None, compact=out.sealed,
                            finished=finished, messages=messages, tool_names=list(inp.tool_names),
                            late_message=message("beat.ledger_late"), saved=draft_log.clear if draft_log is not None else None)


REPLY_IS_CHAPTER = {
    "zh": "【本轮的回复就是章节「{name}」的完整正文】这一轮没有工具：直接写出这一章的全部正文，不要说明、不要前言后记，"
          "不要复述设定；你的回复会原样写入这个文件（已有的内容会被替换）。",
    "en": "[Your reply this turn IS the full text of chapter “{name}”] There are no tools this turn: write the whole "
          "chapter's prose and nothing else — no explanation, no preface, no notes; your reply is written to that "
          "file as it is (replacing what it held).",
}
"""The line a reply-is-the-chapter turn adds after the user's words (issue 30 §5; the system prompt is unchanged, so
the cached prefix holds)."""


def reply_chapter_name(chat: "Chat", name: str) -> str:
    """The chapter file a reply-is-the-chapter turn writes: ``name`` trimmed and NFC-normalised (the story folder's
    rule), ``.md`` added when missing. ToolError (``bad_path``) for a name that is not a chapter file of this book,
    ValueError outside agent mode."""
    if chat.mode != "agent":
        raise ValueError("reply-is-the-chapter is for agent chats")
    n = unicodedata.normalize("NFC", name.strip())
    if n and not n.lower().endswith(".md"):
        n += ".md"
    chat.agent.story.resolve(n, write=True)  # ToolError for a bad name
    return n


async def agent_turn(chat: "Chat", user_text: str, ask: Optional[AskHandler], on_event: Optional[EventSink],
                     max_rounds: Optional[int], chapter: Optional[str] = None) -> BeatResult:
    """An agent turn (seed 000, 写长篇): discussion with the file tools over ``正文/``; after the save, a checkpoint
    of the chapter files and the scribe over the chapters it changed (discussion is not story). ``chapter``: the
    reply is that chapter's text (no tools; :data:`REPLY_IS_CHAPTER` after the user's words; the final answer is
    written to the file before the checkpoint)."""
    c = chat.context
    h = chat.history()
    state = chat.ledger.state()
    block = chat.agent.state_block(state)
    system = chat.agent.system()
    hist = h.prompt_messages()
    asked = user_text
    if chapter:
        asked += "\n\n" + REPLY_IS_CHAPTER[lang_of(c.language)].format(name=chapter)
    messages = [ChatMessage(role="system", content=system), *hist,
                ChatMessage(role="user", content=f"{block}\n\n{asked}")]
    emit(on_event, BeatStarted(beat=h.user_count, user=user_text, injection=block, activated=[],
                               model=chat.model.name, is_replay=chat.model.is_replay))
    story = chat.agent.story
    inp = BeatInput(messages=messages, model=with_sampling(chat.model, chat.sampling()), book=c.book, state=state, previous=None, ask=ask,
                    on_event=on_event, mode="discuss", tool_names=() if chapter else chat.agent.tool_names(), story=story,
                    memory_search=chat.memory_search, language=c.language,
                    macros=lambda t: apply_macros(t, c.ctx))
    out = await run_loop(chat, inp, max_rounds)
    if chapter and out.outcome == "discussed":
        _write_reply_chapter(story, chapter, out, on_event)
    elif out.outcome == "discussed" and unbacked_claim(out.final, out.calls):  # 「改好了」 with no file changed
        out.activity.append(NO_EDITS_NOTICE)
        emit(on_event, Activity(level="warning", text=NO_EDITS_NOTICE))
    tree = chat.tree
    user_entry = tree.latest("user")
    beat_entry = tree.append("beat", calls=out.calls, outcome=out.outcome, injection=block, activity=out.activity,
                             warnings=out.warnings, error=out.error,
                             sent=encode_sent(messages, system, hist, list(inp.tool_names), c.language))
    result = BeatResult(user=user_text, injection=block, calls=[[t.name for t in call.tool_calls] for call in out.calls],
                        outcome=out.outcome, activity=list(out.activity), warnings=list(out.warnings),
                        error=out.error, sent=messages, output=out)
    if out.outcome == "discussed":
        result.final = out.final
        tree.append("assistant", text=out.final, sealed=True, beat=beat_entry.id)

    async def checkpoint_and_scribe() -> None:
        cp = chat.agent.history_log.commit(author="agent", message=user_text,
                                           turn_id=user_entry.id if user_entry else None,
                                           aborted=out.outcome not in ("discussed",))
        result.checkpoint = cp.model_dump(exclude_none=True) if cp is not None else None
        changed = [] if cp is None else list(cp.changed.added) + list(cp.changed.modified) + [r["to"] for r in cp.changed.renamed]
        changed = [n for n in changed if "/" not in n]  # chapters only (the checkpoint also keeps ../大纲.md)
        texts = [t for t in (_chapter_for_scribe(story, name, result, on_event) for name in sorted(changed)) if t]
        if texts:  # the scribe keeps the ledger from the changed chapters only
            text = "\n\n".join(texts)
            await run_scribe_step(chat, result, state, "", text, on_event)
        else:
            show_ledger(chat, result)

    finished = BeatFinished(outcome=out.outcome, final=result.final, sealed=out.outcome == "discussed",
                            message=out.error or "")
    return await after_turn(chat, result, on_event, scribe=checkpoint_and_scribe, compact=out.outcome == "discussed",
                            finished=finished, messages=messages, tool_names=list(inp.tool_names))


def _write_reply_chapter(story: Any, chapter: str, out: Any, on_event: Optional[EventSink]) -> None:
    """Write a reply-is-the-chapter answer (``out.final``) to ``chapter``; an empty answer or a refused write is a
    warning in the activity list (the turn is kept, the file untouched), each line a catalog message rendered in the
    reader's language by the front end."""
    text = (out.final or "").strip()
    if not text:
        note = message("agent.reply_chapter.empty", name=chapter)
    else:
        try:
            story.write(chapter, text + "\n")
        except (ToolError, OSError) as e:
            note = message("agent.reply_chapter.failed", name=chapter, error=getattr(e, "message", str(e)))
        else:
            out.activity.append(message("agent.reply_chapter.written", name=chapter))
            emit(on_event, Activity(text=out.activity[-1]))
            return
    out.warnings.append(note)
    emit(on_event, Activity(level="warning", text=note))


def _chapter_for_scribe(story: Any, name: str, result: BeatResult, on_event: Optional[EventSink]) -> str:
    """The text of the changed chapter ``name`` for the scribe; "" with a warning when it cannot be read (issue 30
    §5: a ToolError after the turn was saved escaped ``Chat.send``; the turn is kept, the scribe skips the file)."""
    try:
        return str(story.read(name))
    except ToolError as e:
        why = e.message if isinstance(e.message, Msg) else message("text.both", zh=e.message, en=e.en or e.message)
        note = message("scribe.chapter_unread", file=quoted(name), error=why)
        result.warnings.append(note)
        emit(on_event, Activity(level="warning", text=note))
        return ""


async def impersonate(chat: "Chat", prompt: str, on_delta: Optional[Any] = None) -> str:
    """SillyTavern's Impersonate: one completion, no tools, in which the model writes the user's next message in
    the persona's voice. Sent: the chat's system prompt, the branch history (fitted to the window), then
    ``prompt`` (the impersonation prompt, macros applied here) as the last user message, the card's Character's
    Note at its depth (prompt.authors_note.character_note_block). Nothing is written to the
    tree; returns the text (stripped; the model's reasoning left out). ``on_delta``: streamed pieces
    (``llm.types.StreamDelta``). Raises ``llm.types.ModelError``."""
    c = chat.context
    h = chat.history()
    ctx = beat_macros(chat, h, "")
    ask = apply_macros(prompt, ctx)
    hist = chat.window.fit(h, c.beat_system, ask)
    messages = [ChatMessage(role="system", content=c.beat_system), *hist, ChatMessage(role="user", content=ask)]
    note = character_note_block(c.card.extensions, ctx)  # SillyTavern sends it on an impersonation too
    if note is not None:
        messages = [messages[0], *insert_depth_injections(messages[1:], [note])]
    model = with_sampling(chat.model, chat.sampling())
    resp = await model.complete(ChatRequest(messages=messages, tools=[], purpose="actor"), on_delta)
    return (resp.content or "").strip()
