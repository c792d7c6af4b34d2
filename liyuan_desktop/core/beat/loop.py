"""The beat loop (一拍): up to 20 model calls in which the model searches, writes on the draft, asks, and seals.

Seed 000: 一轮对话里模型能反复调工具, 收笔就结束这一轮, 上一轮能原位改, 稿纸之外的输出, 岔口交给用户.
- Read tools in one response run concurrently, write tools in order; results go back in the calls' order.
- A successful ``draft_seal`` or ``previous_draft_edit`` ends the loop: no further model call.
- A response without tool calls ends the loop: its text is taken in (``draft_write`` when the draft is empty, or
  ``draft_append`` when the model wrote and then stopped) and the draft is sealed automatically.
- ``ask`` suspends the beat until the user answers; Stop hands the pen back and ends the beat. Prose a reply
  without tool calls had streamed when Stop came becomes the draft, unsealed (issue 18).
- A reply cut off by the output cap (``finish_reason: "length"``) or caught looping (:mod:`.repetition`, the
  call is cancelled as soon as the loop shows; live models only — a replay plays its recorded calls as recorded) is taken into the draft but never sealed (``BeatOutput.cut``), so
  the user gets 继续 / 按现稿收笔 and the scribe books nothing. Except (issue 30, small local models loop often):
  a looping reply of a model on this machine or its network, in write mode, whose prose before the loop — cut
  before a sentence that nearly repeats an earlier one and trimmed to its last sentence end — holds at least :data:`LOOP_SEAL_MIN_CHARS` characters and is no echo (:mod:`.echo`)
  is sealed with that prose, and a notice says the repeated tail was cut (``beat.cut_repeat_sealed``); such a
  model's loop guard also counts repeated clauses (a clause 3 times: cut before its third copy). A local model's
  reply the output cap cut off is sealed the same way with its complete sentences (``beat.cut_length_sealed``).
- Captured text never carries our own injection echoed back or an imitated 【开场 · 名字】 label (:mod:`.echo`);
  a leading ``<think>`` block goes to reasoning (:mod:`.think`).
- A reply that mostly copies the opening, an earlier reply or the data blocks (:class:`.echo.EchoSources`), or whose
  spoken words mostly restate the user's question (:func:`.echo.restated_share`; models
  on this machine or its network, in write mode) is never sealed (issue 30 §1): the first time the model is nudged and called once more at
  a higher temperature (captured prose: a note after the user's words; ``draft_seal``: a tool error), the second
  time the beat ends unsealed with ``cut="echo"`` and the copied prose is not kept.
- Prose-only play (``BeatInput.prose_only``, issue 18 §2): no tools are offered; the one reply is the draft and
  is sealed.
- Tool calls written as text (a ```json block, ``<tool_call>…</tool_call>``, a bare JSON reply; :mod:`.text_calls`)
  naming an offered tool with valid arguments run exactly like native calls (ids ``text_call_…``); anything else
  stays prose. Captured prose that only repeats the user's words of this beat is not sealed (:mod:`.echo`).
- Bad model output (malformed JSON arguments, an unknown tool, a stale version, a bad edit reference, seal before
  writing) becomes a tool error the model can act on; out of rounds leaves the draft saved and unsealed.
Tools are looked up by name in the registry (:mod:`core.beat.tools`) and run with one :class:`ToolContext` per beat.
This module runs one beat on in-memory inputs; :mod:`chat` loads them from the session tree and stores the result.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Optional

from ..errors import ToolError
from ..ledger.state import WorldState
from ..llm.sampling import SampledModel
from ..llm.sse import fix_surrogates_in
from ..llm.types import ChatMessage, ChatModel, ChatRequest, ChatResponse, ModelError, StreamDelta, ToolCall
from ..lore import Lorebook
from ..messages import CATALOG, Msg, message
from ..session import CallLog, ToolCallLog
from ..story.workspace import StoryFolder
from .draft import Draft, DraftLog
from .echo import (
    ECHO_PREVIOUS_REPLIES,
    ECHO_RESTATE_SHARE,
    EchoSources,
    repeat_start,
    restated_share,
    run_text,
    strip_echo,
    uses_entry,
)
from .events import Activity, AskAnswer, AskRequest, CallFinished, CallStarted, ModelDelta, ToolFinished, ToolStarted
from .merge import final_text, merge_final_text
from .repetition import RepetitionGuard, content_string, partial_content, sentence_prefix
from .text_calls import find_text_calls, is_text_call
from .think import ThinkSplitter, split_think
from .tools.context import AskHandler, MemorySearch, ToolContext
from .tools.registry import ToolSpec, get_tool, parse_args, spec_language, tool_specs
from .tools.sets import ROLEPLAY_TOOLS

log = logging.getLogger(__name__)

MAX_ROUNDS = 20
CAPTURED_NOTICE = message("beat.captured")  # 直出正文已代收为 draft_write
CAPTURED_APPEND_NOTICE = message("beat.captured_append")  # 稿纸之后的直出文字已代收为 draft_append，并自动收笔
UNSEALED_NOTICE = message("beat.unsealed")  # 本拍尚未收笔
CUT_LENGTH_NOTICE = message("beat.cut_length")  # 回复到了输出上限被截断…
CUT_REPEAT_NOTICE = "回复开始重复自己（{what}），已提前停下；重复的部分没有收进稿子，本拍尚未收笔：可以「继续」，或「按现稿收笔」。"
ECHO_NOTICE = message("beat.echo")  # 回复里复述了提示里的数据块（或仿写了开场标签），已去掉
ECHO_ONLY_NOTICE = message("beat.echo_only")  # 回复只复述了提示里的数据块，没有正文：本拍尚未收笔
TEXT_CALLS_NOTICE = "回复把工具调用写成了文字（{names}），已按工具调用执行"  # the catalog's beat.text_calls
STOP_KEPT_NOTICE = message("beat.stop_kept")  # 已流出的正文收进了稿子（未收笔）
#: The one line a front end shows for an unsealed beat that was cut (``BeatOutput.cut``).
CUT_MESSAGES = {k: message("beat.cut." + k) for k in ("length", "repetition", "echo")}
#: Activity lines of the echo guard (issue 30 §1): the first echo (retried), the second (the beat left unsealed).
_ECHO_WHAT = {"opening": "开场", "previous": "之前的回复", "data": "提示里的设定和数据",
              "user": "用户这一拍的话（让角色把用户的问题又说了一遍，没有回答）"}  # model-facing (the nudge)
ECHO_RETRY_NOTICES = {k: message("beat.echo_retry." + k) for k in _ECHO_WHAT}  # catalog messages (issue 32)
ECHO_GAVE_UP_NOTICES = {k: message("beat.echo_gave_up." + k) for k in _ECHO_WHAT}
#: A reply that used none of the world-book entries the user just asked about (:meth:`Beat._lore_unused`): shown once,
#: then the one retry — nudged (:data:`LORE_NUDGE`), not hotter (issue 30: "lore that reaches the reply").
LORE_RETRY_NOTICE = message("beat.lore_retry")
LORE_NUDGE = ("（系统提示：用户这一拍问到的事，【相关设定】里有原文，上一版回复没有用上，另编了。请重写这一拍：照设定里的事实"
              "回答，换成角色自己的话说；只写角色和旁白，不替用户说话或行动。）")
LORE_NUDGE_EN = ("(System note: what the user asked about this beat is in [Relevant lore], and the last reply did not "
                 "use it but made something up. Rewrite this beat: answer from the facts of the lore, in the "
                 "characters' own words; write only the characters and the narration, never the user's words or "
                 "actions.)")
#: What the model is told before its one retry (model-facing, never shown through the catalog).
ECHO_NUDGE = ("（系统提示：上一版回复照抄了{what}。请根据用户这一拍的话写出新的情节和对白，"
              "不要重复开场、之前的回复或设定原文里的句子；设定里的事实照样用，换成角色自己的话说出来。"
              "只写角色和旁白，不替用户说话或行动。）")
#: The same in English (a chat in English, issue 32), with what was copied.
ECHO_NUDGE_EN = ("(System note: the last reply copied {what}. Write new plot and dialogue from the user's words "
                 "of this beat; do not repeat sentences of the opening, earlier replies or the setting; the "
                 "setting's facts still hold: say them in the characters' own words. Write only the characters and "
                 "the narration, never the user's words or actions.)")
_ECHO_WHAT_EN = {"opening": "the opening", "previous": "an earlier reply", "data": "the setting and data of the prompt",
                 "user": "the user's own words of this beat (the character asked the user's question back instead of "
                         "answering it)"}
#: What the loop itself tells the model in a tool result, per language ("zh" / "en"; issue 32).
LOOP_TEXTS: dict[str, dict[str, str]] = {
    "zh": {"unknown_tool": "没有名为 {name!r} 的工具。可用的工具：{names}。", "list": "、",
           "stopped": "用户已停止本拍，这次调用没有执行。",
           "beat_ended": "本拍已经结束（已收笔或已回改上一拍），这次调用没有执行。"},
    "en": {"unknown_tool": "There is no tool named {name!r}. The tools available: {names}.", "list": ", ",
           "stopped": "The user stopped this beat; this call was not run.",
           "beat_ended": "This beat is over (sealed, or the previous beat revised); this call was not run."},
}
#: The retry's temperature: the chat's own (or :data:`ECHO_BASE_TEMPERATURE` when it sets none) plus this, capped.
ECHO_TEMPERATURE_STEP = 0.3
#: ``CallLog.error`` of a call whose reply was caught as an echo ("echo: opening" …; the inspector rebuilds the
#: retry's prompt from it, :func:`echo_nudge`).
ECHO_ERROR_PREFIX = "echo: "
ECHO_BASE_TEMPERATURE = 0.8
ECHO_MAX_TEMPERATURE = 1.5
_REPEAT_WHAT = {"paragraph": "同一段出现了 3 次", "sentence": "同一句出现了 3 次", "periodic": "末尾在循环",
                "clause": "同一个短句出现了 3 次"}
#: The shortest prose (characters, whitespace aside) kept before a loop that a small local model's looping reply is
#: sealed with (issue 30): about two sentences of a reply — shorter, the beat stays unsealed as before.
LOOP_SEAL_MIN_CHARS = 80
#: How long streamed draft text may wait before it is on disk (seconds; issue 15: no draft older than 1 s lost).
STREAM_PERSIST_S = 0.5
_STREAMED_DRAFT_TOOLS = ("draft_write", "draft_append")

EventSink = Callable[[Any], None]


def refusal_line(result: Any) -> Msg:
    """The activity line of a refused tool call (``{"ok": false, "error": code, "message": …}``) as a catalog
    message: in Chinese the reason the model was told (as before), in English what the code means — the model's
    reason is written in the card's language, not the reader's (issue 32)."""
    if not isinstance(result, dict):
        return message("tool.failed")
    code, why = str(result.get("error") or ""), str(result.get("message") or "")
    key = f"tool.refused.{code}"
    return message(key, message=why) if key in CATALOG else message("tool.refused", message=why, code=code)


@dataclass
class PreviousBeat:
    """The previous sealed beat on this branch, as previous_draft_read/edit see it. ``version`` counts revisions."""

    assistant_id: str
    text: str
    version: int


@dataclass
class BeatInput:
    """Everything one beat needs. ``messages`` is the first call's message list (system first); ``tool_names`` the
    tools offered, in the order the model sees them (a set from :mod:`core.beat.tools.sets`); ``story`` and
    ``memory_search`` the services the agent file tools and memory_search need (None when not offered)."""

    messages: list[ChatMessage]
    model: ChatModel
    book: Lorebook
    state: WorldState
    previous: Optional[PreviousBeat]
    ask: Optional[AskHandler] = None
    on_event: Optional[EventSink] = None
    max_rounds: int = MAX_ROUNDS
    tool_names: tuple[str, ...] = ROLEPLAY_TOOLS
    initial_draft: Optional[Draft] = None
    macros: Optional[Callable[[str], str]] = None
    #: "write" (role-play: prose on the draft, sealed) or "discuss" (agent mode: prose lives in chapter files; the
    #: turn ends when the model answers without tool calls, and that answer is the discussion reply).
    mode: str = "write"
    story: Optional[StoryFolder] = None
    memory_search: Optional[MemorySearch] = None
    #: Where the draft is kept on disk while the beat runs (issue 15): each change, and a draft_write/append
    #: still streaming at least every :data:`STREAM_PERSIST_S` seconds. None: memory only (tests, agent mode).
    draft_log: Optional[DraftLog] = None
    #: The blocks sent before the user's words this beat (the injection): a reply that repeats them has them
    #: taken out before it is captured (:mod:`.echo`).
    echo: str = ""
    #: Prose-only play (issue 18 §2): no tools offered; the one reply is captured and sealed.
    prose_only: bool = False
    #: The user's words of this beat (a reply that only repeats them is not sealed, :mod:`.echo`). None: taken from
    #: the last user message of ``messages`` after the ``echo`` blocks (``build_messages``' layout).
    user: Optional[str] = None
    #: Whether a reply that mostly copies earlier text is refused (issue 30 §1; :mod:`.echo`). False for 「继续」,
    #: whose reply may restate the draft or reply it continues.
    echo_guard: bool = True
    #: The text of the world-book entries the user's words of this beat asked about (keys matched in a question;
    #: ``prompt.prose_only.asked_entries``): a local model's reply that uses none of them is retried once
    #: (:meth:`Beat._lore_unused`, issue 30). Empty: no check.
    asked_lore: tuple[str, ...] = ()
    #: The chat's language (issue 32): the tools' texts, tool results and the loop's own notes to the model are in
    #: it (Chinese for "zh", English otherwise; :func:`.tools.registry.spec_language`).
    language: str = "zh"


@dataclass
class BeatOutput:
    """What the beat did. ``outcome``: sealed | revised_previous | unsealed | stopped | out_of_rounds | error."""

    outcome: str
    draft: Draft
    final: str = ""
    calls: list[CallLog] = field(default_factory=list)
    asks: list[tuple[AskRequest, AskAnswer]] = field(default_factory=list)
    revision: Optional[tuple[str, str, int]] = None  # (target id, new text, new version)
    activity: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: Optional[str] = None
    #: Why an unsealed beat's reply ended early: "length" (the output cap cut it), "repetition" (it looped and
    #: was stopped), None otherwise.
    cut: Optional[str] = None
    #: "tools" (the tool loop) or "prose" (prose-only play), as played.
    play_mode: str = "tools"
    #: For outcome "error": the model error's ``kind`` and, for kind "config", what the server rejected
    #: ("jinja" / "tools" / "argument"; the chat falls back to prose-only play on the first two).
    error_kind: str = ""
    error_config: str = ""

    @property
    def used_tools(self) -> bool:
        """True when any model call of the beat asked for a tool."""
        return any(c.tool_calls for c in self.calls)

    @property
    def sealed(self) -> bool:
        """True when the beat ended with the draft sealed (outcome ``sealed``)."""
        return self.outcome == "sealed"


def echo_nudge(kind: str, language: str = "zh") -> str:
    """What the model is told before its one retry after an echo of ``kind`` ("opening" / "previous" / "data" /
    "user"; "lore": :data:`LORE_NUDGE`): :data:`ECHO_NUDGE` (:data:`ECHO_NUDGE_EN` for a chat not in Chinese), appended to the last user message
    (captured prose) or as a ``draft_seal`` tool error."""
    if kind == "lore":
        return LORE_NUDGE_EN if spec_language(language) == "en" else LORE_NUDGE
    if spec_language(language) == "en":
        return ECHO_NUDGE_EN.format(what=_ECHO_WHAT_EN.get(kind, kind))
    return ECHO_NUDGE.format(what=_ECHO_WHAT.get(kind, kind))


def _user_words(messages: list[ChatMessage], injection: str) -> str:
    """The user's words of a beat: the last user message's text after the injection blocks and their blank line
    (``core.prompt.assemble.build_messages``); "" when there is no plain-text user message."""
    for m in reversed(messages):
        if m.role == "user":
            text = m.content if isinstance(m.content, str) else ""
            if injection and text.startswith(injection):
                text = text[len(injection):]
            return text.strip()
    return ""


class _Stop(Exception):
    """Raised inside the loop when the user pressed Stop in an ask (the pen goes back to the user)."""


class Beat:
    """One running beat. Create, then ``await run()``; ``stop()`` from elsewhere ends it at once (the current model
    call is cancelled; the draft so far is kept)."""

    def __init__(self, inp: BeatInput):
        self.inp = inp
        self.draft = inp.initial_draft or Draft()
        self.out = BeatOutput(outcome="unsealed", draft=self.draft)
        self.ctx = ToolContext(draft=self.draft, previous=inp.previous, state=inp.state, book=inp.book, ask=inp.ask,
                               macros=inp.macros, emit=self.emit, story=inp.story, memory_search=inp.memory_search,
                               asks=self.out.asks, language=inp.language)
        self._texts = LOOP_TEXTS[spec_language(inp.language)]
        self._offered = {n: sp for n in inp.tool_names if (sp := get_tool(n)) is not None}
        self._current: Optional[asyncio.Task[Any]] = None
        self._round = 0
        self._loop_tail: list[str] = []
        self._stream_flush: Optional[asyncio.TimerHandle] = None
        # the current call's streamed prose (after any think block), whether it streamed tool calls, the loop guard
        self._streamed: list[str] = []
        self._tool_streamed = False
        self._looped: Optional[str] = None
        self._guard: Optional[RepetitionGuard] = None
        self._stream_calls: tuple[dict[int, str], dict[int, list[str]]] = ({}, {})
        if inp.prose_only:
            self.out.play_mode = "prose"
        self._user = inp.user if inp.user is not None else _user_words(inp.messages, inp.echo)
        # the echo guard (issue 30 §1): live models in write mode; echoes seen so far; the retry's hotter sampling
        self._echo_sources: Optional[EchoSources] = None
        self._echoes = 0
        self._nudge = ""  # the retry's nudge once sent (a reply that copies it back is an echo, and loses it)
        self._hot = False

    # -- the draft on disk ----------------------------------------------------------------------------------
    def _persist_draft(self) -> None:
        """Record the draft in the beat's draft log when it changed (no-op without a log)."""
        if self.inp.draft_log is not None:
            self.inp.draft_log.record(self.draft)

    # -- events ---------------------------------------------------------------------------------------------
    def emit(self, ev: Any) -> None:
        """Pass an event (:mod:`core.beat.events`) to the beat's handler; a handler that raises is logged, never
        allowed to break the beat."""
        if self.inp.on_event is None:
            return
        try:
            self.inp.on_event(ev)
        except Exception:  # a broken UI handler must never break the beat
            log.exception("event handler failed")

    def _activity(self, text: str, level: Literal["info", "warning", "error"] = "info") -> None:
        self.out.activity.append(text)
        self.emit(Activity(text=text, level=level))

    def _draft_event(self, by: str = "model") -> None:
        self.emit(self.draft.changed(by))

    # -- control --------------------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the beat: cancels the running model call; the loop ends with outcome ``stopped``."""
        self.ctx.stopped = True
        if self._current is not None and not self._current.done():
            self._current.cancel()

    # -- tools ----------------------------------------------------------------------------------------------
    def _spec(self, name: str) -> Optional[ToolSpec]:
        """The declaration of an offered tool; None for a name this beat does not offer."""
        return self._offered.get(name)

    async def _run_tool(self, call: ToolCall) -> tuple[Any, bool]:
        spec = self._offered.get(call.name)
        if spec is None:  # unknown, or not offered in this mode
            names = self._texts["list"].join(self.inp.tool_names)
            return {"ok": False, "error": "unknown_tool",
                    "message": self._texts["unknown_tool"].format(name=call.name, names=names)}, False
        raw = call.arguments
        if raw and ("\\ud" in raw or "\\uD" in raw):  # a lone surrogate escape would break measuring and saving
            try:
                fixed, n = fix_surrogates_in(json.loads(raw))
            except ValueError:
                n = 0
            if n:
                raw = json.dumps(fixed, ensure_ascii=False)
                self._activity(message("beat.tool_surrogate", name=call.name), "warning")
        if call.name == "draft_seal" and not self.draft.sealed and (kind := self._refused(self.draft.text)):
            self._echo_step(kind, [])  # the nudge travels in the tool result; a second echo ends the beat unsealed
            return {"ok": False, "error": "echo", "message": echo_nudge(kind, self.inp.language)}, False
        try:
            args = parse_args(spec, raw)
            res = spec.handler(self.ctx, args)
            if asyncio.iscoroutine(res):
                res = await res
            return res, True
        except ToolError as e:
            return e.to_result(self.inp.language), False

    def _summary(self, name: str, ok: bool, result: Any, args: str) -> str:
        """The activity line of a finished call: a failure's message, or the tool's own summary of a success."""
        if not ok:
            return refusal_line(result)
        spec = self._offered.get(name)
        if spec is None or spec.summary is None:
            return ""
        try:
            a = json.loads(args or "{}")
        except json.JSONDecodeError:
            a = {}
        try:
            return spec.summary(a if isinstance(a, dict) else {}, result)
        except ToolError as e:  # a summary that reads the folder again never breaks the turn (issue 30 §5)
            return e.message

    async def _run_calls(self, calls: list[ToolCall], call_log: CallLog) -> list[tuple[ToolCall, Any, bool]]:
        """Run one response's tool calls: consecutive reads concurrently, writes one by one, in order."""
        results: list[Optional[tuple[Any, bool, float]]] = [None] * len(calls)

        async def one(i: int) -> None:
            c = calls[i]
            self.emit(ToolStarted(round=self._round, call_id=c.id, name=c.name, arguments=c.arguments,
                                  from_text=is_text_call(c.id)))
            t0 = time.perf_counter()
            if self.ctx.stopped:  # the user stopped (ask → Stop): the rest of this response is not run
                res, ok = {"ok": False, "error": "stopped", "message": self._texts["stopped"]}, False
            elif self.ctx.ended:  # sealed / previous beat revised: the beat is over, later calls are not run
                res, ok = {"ok": False, "error": "beat_ended", "message": self._texts["beat_ended"]}, False
            else:
                res, ok = await self._run_tool(c)
            results[i] = (res, ok, (time.perf_counter() - t0) * 1000)
            self._persist_draft()
            self.emit(ToolFinished(round=self._round, call_id=c.id, name=c.name, ok=ok, result=res,
                                   summary=self._summary(c.name, ok, res, c.arguments)))

        i = 0
        while i < len(calls):
            spec = self._spec(calls[i].name)
            if spec is not None and spec.mode == "read":  # ("ask" has its own mode: one question at a time)
                j = i
                while j < len(calls) and (s := self._spec(calls[j].name)) is not None and s.mode == "read":
                    j += 1
                if j - i == 1:
                    await one(i)
                else:
                    await asyncio.gather(*(one(k) for k in range(i, j)))
                i = j
            else:
                await one(i)
                i += 1
        out = []
        for c, r in zip(calls, results):
            assert r is not None
            res, ok, ms = r
            sp = self._spec(c.name)
            mode = sp.mode if sp is not None else ""
            call_log.tool_calls.append(ToolCallLog(id=c.id, name=c.name, arguments=c.arguments, result=res, ok=ok, mode=mode, ms=round(ms, 3)))
            out.append((c, res, ok))
        return out

    # -- stray text -----------------------------------------------------------------------------------------
    def _clean(self, text: str) -> str:
        """Captured text without our injection echoed back or an imitated opening label (:mod:`.echo`)."""
        clean = self._clean_quiet(text)
        if clean != text:
            self._activity(ECHO_NOTICE, "warning")
        return clean

    def _clean_quiet(self, text: str) -> str:
        """:meth:`_clean` without its activity line (what the echo guard compares); the retry's nudge copied back
        is taken out too."""
        if self._nudge and self._nudge in text:
            text = text.replace(self._nudge, "").strip()
        return strip_echo(text, self.inp.echo, self._user)

    def _keep_unsealed(self, text: str) -> bool:
        """Put prose that must not be sealed (cut off, looping, stopped) into the draft: written when the draft is
        empty, appended otherwise. False when there was nothing to keep."""
        d = self.draft
        text = self._clean(text)
        if d.sealed or not text.strip():
            return False
        if d.text.strip():
            d.append(d.version, text)
        else:
            d.write(d.version, text)
        self._persist_draft()
        self._draft_event(by="capture")
        return True

    def _capture(self, text: str) -> None:
        """A response without tool calls: take its text in and seal (seed 000, 稿纸之外的输出)."""
        d = self.draft
        if d.sealed:
            return
        # The captured text leaves the text channel; format blocks of earlier calls stay in it.
        if self._loop_tail and self._loop_tail[-1] == text:
            self._loop_tail.pop()
        raw, text = text, self._clean(text)
        if raw.strip() and not text.strip() and not d.text.strip():
            self.out.warnings.append(ECHO_ONLY_NOTICE)
            self._activity(ECHO_ONLY_NOTICE, "warning")
            return
        if d.text.strip():
            if text.strip():
                d.append(d.version, text)
                self._activity(CAPTURED_APPEND_NOTICE)
            d.seal(d.version)
            self._persist_draft()
            self._draft_event(by="capture")
        elif text.strip():
            d.write(d.version, text)
            self._persist_draft()
            self._activity(CAPTURED_NOTICE)
            d.seal(d.version)
            self._draft_event(by="capture")

    # -- echoes of earlier text (issue 30 §1) ----------------------------------------------------------------
    def _sources(self) -> EchoSources:
        """What this beat's reply must not copy: the opening (an assistant message before any user message), the
        newest :data:`ECHO_PREVIOUS_REPLIES` earlier replies of ``messages``, the injection blocks and the user's words."""
        if self._echo_sources is None:
            opening: list[tuple[str, str]] = []
            replies: list[tuple[str, str]] = []
            seen_user = False
            for m in self.inp.messages:
                if m.role == "user":
                    seen_user = True
                elif m.role == "assistant" and isinstance(m.content, str) and m.content:
                    (replies if seen_user else opening).append(("previous" if seen_user else "opening", m.content))
            data = [("data", self.inp.echo)] if self.inp.echo else []
            user = [("user", self._user)] if self._user else []  # the user's question repeated back counts too
            self._echo_sources = EchoSources(opening + replies[-ECHO_PREVIOUS_REPLIES:] + data + user)
        return self._echo_sources

    def _echo_of(self, text: str) -> str:
        """The kind of earlier text ``text`` mostly copies; "" when none, in agent mode, for 「继续」, for replays and
        for models that are not on this machine or its network (``is_local`` of the HTTP client: the small models
        that copy, issue 30; hosted models and the benches' synthetic model play as before). A reply whose spoken
        words mostly restate the user's words (:func:`.echo.restated_share` ≥ :data:`.echo.ECHO_RESTATE_SHARE`) is
        an echo of kind "user"."""
        if not self._echo_of_applies(text):
            return ""
        kind = self._sources().echo_of(text)
        if not kind and self._user and restated_share(text, self._user) >= ECHO_RESTATE_SHARE:
            kind = "user"  # the user's question put back in the character's mouth (issue 30)
        return kind

    def _refused(self, text: str) -> str:
        """Why a reply about to be sealed as it is (``draft_seal``, captured prose) gets its one retry instead: an
        echo (:meth:`_echo_of`), or "lore" — the first reply uses none of the entries the user asked about
        (:meth:`_lore_unused`); "" when it is sealed. A reply cut by a loop or the output cap is sealed by echoes
        alone (its prose is kept, not retried)."""
        kind = self._echo_of(text)
        if not kind and not self._echoes and self._echo_of_applies(text) and self._lore_unused(text):
            kind = "lore"  # asked about what the book says, answered with something else (first reply only)
        return kind

    def _echo_of_applies(self, text: str) -> bool:
        """The echo guard's conditions (:meth:`_echo_of`): a write-mode beat not 「继续」, a live local model, text."""
        return (self.inp.mode == "write" and self.inp.echo_guard and bool(getattr(self.inp.model, "is_local", False))
                and not getattr(self.inp.model, "is_replay", False) and bool(text.strip()))

    def _lore_unused(self, text: str) -> bool:
        """The user asked about entries of the world book (``inp.asked_lore``) and ``text`` uses none of them
        (:func:`.echo.uses_entry`, against what the prompt already said outside the data blocks: the system prompt,
        the opening, earlier replies, the user's words)."""
        if not self.inp.asked_lore:
            return False
        known = run_text("\n".join([self._user or "", *(m.content for m in self.inp.messages
                                                          if m.role in ("system", "assistant")
                                                          and isinstance(m.content, str))]))
        return not any(uses_entry(text, entry, known_runs=known) for entry in self.inp.asked_lore)

    def _echoed(self, kind: str, messages: list[ChatMessage]) -> bool:
        """A captured reply (the newest call, without tool calls) was caught as an echo of ``kind``: its call log is
        marked (:data:`ECHO_ERROR_PREFIX`) and :meth:`_echo_step` decides."""
        if self.out.calls:
            self.out.calls[-1].error = ECHO_ERROR_PREFIX + kind
        return self._echo_step(kind, messages)

    def _echo_step(self, kind: str, messages: list[ChatMessage]) -> bool:
        """An echo of ``kind`` was caught before sealing: the first time the last user message of ``messages``
        gets the nudge, the next call runs hotter and True is returned (go on); the second time the beat ends
        unsealed (``cut="echo"``) and False is returned."""
        self._echoes += 1
        if self._echoes == 1:
            self._activity(LORE_RETRY_NOTICE if kind == "lore" else
                           ECHO_RETRY_NOTICES.get(kind, ECHO_RETRY_NOTICES["previous"]), "warning")
            i = next((k for k in range(len(messages) - 1, -1, -1) if messages[k].role == "user"), None)
            nudge = self._nudge = echo_nudge(kind, self.inp.language)
            self._sources().add("data", nudge)
            if i is not None and isinstance(messages[i].content, str):
                messages[i] = ChatMessage(role="user", content=f"{messages[i].content}\n\n{nudge}")
            else:
                messages.append(ChatMessage(role="user", content=nudge))
            self._hot = kind != "lore"  # an echo is retried hotter; ignored lore is not (heat invents more)
            return True
        self.out.cut = "echo"
        notice = ECHO_GAVE_UP_NOTICES.get(kind, ECHO_GAVE_UP_NOTICES["previous"])
        self.out.warnings.append(notice)
        self._activity(notice, "warning")
        return False

    def _hotter(self, req: ChatRequest) -> ChatRequest:
        """``req`` with the retry's temperature (:data:`ECHO_TEMPERATURE_STEP` above the chat's own)."""
        model = self.inp.model
        sampling = model.sampling if isinstance(model, SampledModel) else None
        base = sampling.temperature if sampling is not None and sampling.temperature is not None else None
        temp = min((base if base is not None else ECHO_BASE_TEMPERATURE) + ECHO_TEMPERATURE_STEP, ECHO_MAX_TEMPERATURE)
        update: dict[str, Any] = {"temperature": temp}
        if sampling is not None:
            update["sampling"] = sampling.model_copy(update={"temperature": temp})
        return req.model_copy(update=update)

    # -- the loop -------------------------------------------------------------------------------------------
    def _tool_specs(self) -> list[dict[str, Any]]:
        return [] if self.inp.prose_only else tool_specs(self.inp.tool_names, self.inp.language)

    async def _call_model(self, messages: list[ChatMessage]) -> ChatResponse:
        rnd = self._round
        log_ = self.inp.draft_log
        names: dict[int, str] = {}
        args: dict[int, list[str]] = {}
        loop = asyncio.get_running_loop()

        def flush() -> None:  # the draft a draft_write/append still streaming would make, on disk
            self._stream_flush = None
            if log_ is None or self.draft.sealed:
                return
            for idx in sorted(args, reverse=True):
                if names.get(idx) in _STREAMED_DRAFT_TOOLS:
                    log_.record_stream(self.draft, names[idx], "".join(args[idx]))
                    return

        self._streamed, self._tool_streamed, self._looped = [], False, None
        self._stream_calls = (names, args)
        # a replay plays recorded calls as recorded (golden runs, benches): the loop guard watches live models only
        guard = self._guard = RepetitionGuard(clauses=self._local_write()) \
            if not getattr(self.inp.model, "is_replay", False) else None
        think = ThinkSplitter()
        task_box: list[asyncio.Future[Any]] = []

        def looped(piece: str) -> None:
            reason = guard.feed(piece) if guard is not None else None
            if reason and self._looped is None:
                self._looped = reason
                if task_box and not task_box[0].done():
                    task_box[0].cancel()

        def on_delta(dl: StreamDelta) -> None:
            if dl.kind == "content":
                thought, text = think.feed(dl.text)
                if thought:
                    self.emit(ModelDelta(round=rnd, channel="reasoning", text=thought, index=dl.index))
                if text:
                    self._streamed.append(text)
                    self.emit(ModelDelta(round=rnd, channel="content", text=text, index=dl.index))
                    looped(text)
                return
            if dl.kind in ("tool_name", "tool_args"):
                self._tool_streamed = True
                if dl.kind == "tool_name":
                    names[dl.index] = names.get(dl.index, "") + dl.text
                else:
                    args.setdefault(dl.index, []).append(dl.text)
                    if names.get(dl.index, "") in _STREAMED_DRAFT_TOOLS:
                        looped(dl.text)
                        if log_ is not None and self._stream_flush is None:
                            self._stream_flush = loop.call_later(STREAM_PERSIST_S, flush)
            self.emit(ModelDelta(round=rnd, channel=dl.kind, text=dl.text, index=dl.index))

        # the engine's own ChatMessage objects, not validated again: that is O(chat length) per call (beat_overhead)
        req = ChatRequest.model_construct(messages=list(messages), tools=self._tool_specs(), purpose="actor",
                                          fresh=self._local_write() and not self.draft.text)
        if self._hot:
            req = self._hotter(req)
        self._current = asyncio.ensure_future(self.inp.model.complete(req, on_delta))
        task_box.append(self._current)
        try:
            resp: ChatResponse = await self._current
        finally:
            self._current = None
            if self._stream_flush is not None:  # the call is over: its tools record the draft themselves
                self._stream_flush.cancel()
                self._stream_flush = None
        thought, rest = split_think(resp.content)
        if thought:  # a leading <think> block is reasoning, never prose (also for non-streamed replies)
            resp = resp.model_copy(update={"content": rest, "reasoning": (resp.reasoning + "\n" + thought).strip()})
        return resp

    def _text_calls(self, resp: ChatResponse) -> ChatResponse:
        """A reply without native tool calls whose content writes offered calls as text (:mod:`.text_calls`): the
        response with them as real ``tool_calls`` and the rest of the text as content. Not in prose-only play, not
        for a reply cut off by the output cap (its JSON is incomplete)."""
        if resp.tool_calls or self.inp.prose_only or not self._offered or resp.finish_reason == "length":
            return resp
        calls, rest = find_text_calls(resp.content, self._offered, tag=str(self._round))
        if not calls:
            return resp
        self._activity(message("beat.text_calls", names=[c.name for c in calls]), "warning")
        return resp.model_copy(update={"tool_calls": calls, "content": rest})

    def _repetition(self, streamed: str, t0: float) -> None:
        """The loop guard stopped a looping reply: log the call, keep the prose up to the loop (a reply without
        tool calls), and end the beat unsealed (``cut="repetition"``)."""
        g = self._guard
        reason = self._looped or "repetition"
        self.out.calls.append(CallLog(round=self._round, content=streamed, finish_reason="repetition",
                                      model=self.inp.model.name, ms=round((time.perf_counter() - t0) * 1000, 1),
                                      error=f"repetition: {reason}"))
        kept = ""
        if self.inp.mode != "write" or g is None:
            pass
        elif not self._tool_streamed:
            kept = g.text[:g.keep]
        else:  # a draft_write/append looping: its prose up to the loop, from the arguments streamed so far
            names, args = self._stream_calls
            idx = next((i for i in sorted(args, reverse=True) if names.get(i) in _STREAMED_DRAFT_TOOLS), None)
            text = partial_content("".join(args[idx])) if idx is not None else ""
            if text:
                again = RepetitionGuard(clauses=self._local_write())
                again.feed(text)
                kept = text[:again.keep] if again.reason else text
        if reason == "clause":
            kept = kept[:repeat_start(kept)]  # a whole repeated sentence before the clause's third copy goes too
        what = message(f"beat.repeat.{reason}") if reason in _REPEAT_WHAT else reason
        if kept and self._seal_before_loop(kept):
            self._activity(message("beat.cut_repeat_sealed", what=what), "warning")
            return
        if kept:
            self._keep_unsealed(kept)
        self.out.cut = "repetition"
        self._activity(message("beat.cut_repeat", what=what), "warning")

    def _local_write(self) -> bool:
        """A live model on this machine or its network (``is_local``, not a replay) playing a write-mode beat that is
        not 「继续」: the small models whose loops, echoes and cut-off replies issue 30 handles (hosted unchanged)."""
        return (self.inp.mode == "write" and self.inp.echo_guard and bool(getattr(self.inp.model, "is_local", False))
                and not getattr(self.inp.model, "is_replay", False))

    def _cut_by_length(self, resp: ChatResponse) -> None:
        """A reply without tool calls that the output cap cut off (``finish_reason: "length"``). A local model's
        (issue 30: the 1.5B's tool beats hit the 384-token cap): its prose — the ``content`` of a draft call it was
        writing as text, else the reply itself — is sealed like a looping reply's (:meth:`_seal_before_loop`: cut
        before a near repeat, trimmed to the last sentence end, long enough, no echo; notice
        ``beat.cut_length_sealed``): the user gets the complete sentences, not half a sentence to 「继续」 at a CPU
        model's speed. Otherwise (too short, an echo, a hosted model) kept unsealed, ``cut="length"``, as before."""
        text = resp.content
        if self._local_write() and text.lstrip().startswith(("```", "{", "[", "<")) and '"content"' in text:
            text = content_string(text) or text  # a draft call written as text, cut mid-argument: its prose
        if self._local_write() and self._seal_before_loop(text):
            self._activity(message("beat.cut_length_sealed"), "warning")
            return
        self._keep_unsealed(text)
        self.out.cut = "length"
        self._activity(CUT_LENGTH_NOTICE, "warning")

    def _cut_call(self, resp: ChatResponse) -> ChatResponse:
        """A local model's native ``draft_write``/``draft_append`` that the output cap cut mid-argument (JSON that
        does not parse): the response as a reply without tool calls whose content is the call's prose
        (:func:`.repetition.partial_content`), so :meth:`_cut_by_length` handles it; other responses unchanged."""
        if resp.finish_reason != "length" or not resp.tool_calls or not self._local_write():
            return resp
        for c in resp.tool_calls:
            if c.name in _STREAMED_DRAFT_TOOLS:
                try:
                    json.loads(c.arguments or "")
                except ValueError:
                    return resp.model_copy(update={"tool_calls": [], "content": partial_content(c.arguments or "")})
        return resp

    def _seal_before_loop(self, kept: str) -> bool:
        """Seal the draft with ``kept``, the prose a looping reply wrote before its loop (issue 30), when that is
        sound: a model on this machine or its network (``is_local``; not a replay), write mode, not 「继续」; the
        prose cleaned of echoed blocks, cut before its first sentence that nearly repeats an earlier one
        (:func:`.echo.repeat_start`) and trimmed to its last sentence end (:func:`.repetition.sentence_prefix`),
        at least :data:`LOOP_SEAL_MIN_CHARS` characters with the draft's earlier text, and no echo of the opening,
        earlier replies, the data blocks or the user's words (:meth:`_echo_of`). ``kept`` empty (a cut-off call
        with no prose after a draft already written): the draft as it is, under the same rules. False (nothing
        changed) otherwise."""
        d = self.draft
        if d.sealed or not self._local_write():
            return False
        text = self._clean_quiet(kept)
        text = sentence_prefix(text[:repeat_start(text)])
        if not text and d.text.strip() and not kept.strip():
            if len("".join(d.text.split())) < LOOP_SEAL_MIN_CHARS or self._echo_of(d.text):
                return False
            d.seal(d.version)
            self._persist_draft()
            self._draft_event(by="capture")
            return True
        if not text:
            return False
        last = text.rsplit("\n", 1)[-1]
        if last.count("*") % 2:  # the cut fell inside a *narration* run: close it
            text += "*"
        whole = f"{d.text.rstrip()}\n\n{text}" if d.text.strip() else text
        if len("".join(whole.split())) < LOOP_SEAL_MIN_CHARS or self._echo_of(whole):
            return False
        if d.text.strip():
            d.append(d.version, text)
        else:
            d.write(d.version, text)
        d.seal(d.version)
        self._persist_draft()
        self._draft_event(by="capture")
        return True

    def _quiet_after_tools(self, e: ModelError, messages: list[ChatMessage]) -> bool:
        """An agent turn (mode ``discuss``) whose model answered with nothing at all (ModelError ``empty``) after
        this turn's tool calls already ran: the work is done (the files are written and checkpointed), so the turn
        ends as discussed with no reply and a notice, not as a failed call (issue 30 §5: a small local model wrote
        the chapter, then sent an empty answer, and the turn was shown as an error). True when so handled."""
        ran = len(messages) > len(self.inp.messages) and any(m.role == "tool" for m in messages[len(self.inp.messages):])
        if e.kind != "empty" or self.inp.mode != "discuss" or not ran:
            return False
        part = e.partial
        self.out.calls.append(CallLog(round=self._round, content="", finish_reason=part.finish_reason if part else None,
                                      model=self.inp.model.name, error=f"{e.kind}: {e.message}"))
        self.out.outcome = "discussed"
        self.out.final = ""
        self._activity(message("beat.quiet_after_tools"), "warning")
        return True

    async def run(self) -> BeatOutput:
        """Run the loop to its end and return the :class:`BeatOutput`. Raises nothing for model or tool failures
        (they become ``outcome``/``error``); a CancelledError of the caller's own task propagates."""
        messages = list(self.inp.messages)
        out = self.out
        if self.draft.text:  # continuing an unfinished draft: show it before the first call
            self._draft_event(by="resume")
        try:
            while not self.ctx.ended:
                if self._round >= self.inp.max_rounds:
                    out.outcome = "out_of_rounds"
                    self._activity(message("beat.out_of_rounds", n=self.inp.max_rounds), "warning")
                    break
                if self.ctx.stopped:
                    raise _Stop()
                self._round += 1
                self.emit(CallStarted(round=self._round, max_rounds=self.inp.max_rounds))
                t0 = time.perf_counter()
                try:
                    resp = await self._call_model(messages)
                except asyncio.CancelledError:
                    streamed = "".join(self._streamed)
                    if self._looped is not None and not self.ctx.stopped:  # the loop guard cancelled the call
                        self._repetition(streamed, t0)
                        break
                    if self.ctx.stopped:
                        out.calls.append(CallLog(round=self._round, error="stopped", content=streamed, model=self.inp.model.name,
                                                 ms=round((time.perf_counter() - t0) * 1000, 1)))
                        if self.inp.mode == "write" and not self._tool_streamed and self._keep_unsealed(streamed):
                            self._activity(STOP_KEPT_NOTICE)
                        raise _Stop()
                    raise
                except ModelError as e:
                    if self._quiet_after_tools(e, messages):
                        break
                    part = e.partial
                    out.calls.append(CallLog(round=self._round, reasoning=part.reasoning if part else "", content=part.content if part else "",
                                             finish_reason=part.finish_reason if part else None, model=self.inp.model.name,
                                             ms=round((time.perf_counter() - t0) * 1000, 1), error=f"{e.kind}: {e.message}"))
                    out.outcome = "error"
                    out.error = e.message
                    out.error_kind, out.error_config = e.kind, getattr(e, "config", "") or ""
                    self._activity(message("beat.call_failed", error=e.message), "error")
                    break
                ms = (time.perf_counter() - t0) * 1000
                raw_content = resp.content
                resp = self._cut_call(self._text_calls(resp))
                clog = CallLog(round=self._round, reasoning=resp.reasoning, content=raw_content, finish_reason=resp.finish_reason,
                               usage=resp.usage.raw or resp.usage.model_dump(exclude={"raw"}), model=resp.model or self.inp.model.name, ms=round(ms, 1))
                out.calls.append(clog)
                self.emit(CallFinished(round=self._round, tools=[c.name for c in resp.tool_calls], usage=clog.usage,
                                       prompt_tokens=resp.usage.prompt_tokens, cached_tokens=resp.usage.cached_tokens,
                                       completion_tokens=resp.usage.completion_tokens, finish_reason=resp.finish_reason, ms=ms))
                if resp.content:
                    self._loop_tail.append(resp.content)
                if not resp.tool_calls:
                    if self.inp.mode == "discuss":  # agent mode: the answer without tools is the discussion reply
                        out.outcome = "discussed"
                        out.final = resp.content
                    elif resp.finish_reason == "length":  # cut off by the output cap: kept, never sealed (local: below)
                        if self._loop_tail and self._loop_tail[-1] == resp.content:
                            self._loop_tail.pop()
                        self._cut_by_length(resp)
                    else:
                        kind = self._refused(self._clean_quiet(resp.content))
                        if kind and self._loop_tail and self._loop_tail[-1] == resp.content:
                            self._loop_tail.pop()  # the copy's format blocks never reach the final text
                        if kind and self._echoed(kind, messages):
                            continue  # the one retry, nudged and hotter
                        if not kind:
                            self._capture(resp.content)
                    break
                messages.append(ChatMessage(role="assistant", content=resp.content, tool_calls=resp.tool_calls))
                results = await self._run_calls(resp.tool_calls, clog)
                for c, res, _ok in results:
                    messages.append(ChatMessage(role="tool", tool_call_id=c.id, content=json.dumps(res, ensure_ascii=False)))
                if out.cut == "echo":  # a second copy sealed with draft_seal: the beat ends unsealed
                    break
                if self.ctx.stopped:
                    raise _Stop()
        except _Stop:
            out.outcome = "stopped"
            self._activity(message("beat.stopped" if self.draft.sealed else "beat.stopped_unsealed"), "warning")
        d = self.draft
        out.revision = self.ctx.revision
        if out.outcome == "discussed":
            return out
        if out.revision is not None:
            out.outcome = "revised_previous"
        elif d.sealed:
            out.outcome = "sealed"
            tail = "".join(self._loop_tail)
            out.final = final_text(d.text, merge_final_text(d.text, tail))
        elif out.outcome == "unsealed" and self._round and not d.text:
            out.warnings.append(message("beat.no_prose"))
        if out.outcome in ("unsealed",) and d.text:
            self._activity(UNSEALED_NOTICE, "warning")
        return out
