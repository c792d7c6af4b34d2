"""A chat: one session tree + its card + the models, and the commands the UI and CLI call (send a beat, …).

Data on disk (../shared/design/ARCHITECTURE.md): ``<chat dir>/session.jsonl`` is the source of truth;
``meta.json`` is a cache (mode, active leaf, title) rebuilt from the tree when missing or stale.

One beat (``Chat.send``):
1. the branch path → latest ``rp-state`` → 【世界状态】【登场名录】; activation over the scan window → 【相关设定】;
2. messages: system, opening, past user words + finals, then injection + blank line + the user's words;
3. the beat loop (:mod:`beat`); the user entry is on disk before the first model call;
4. sealed → assistant entry (the final), then the scribe → ``rp-state``; a previous-beat edit → ``revision``;
   not sealed → the beat entry keeps the draft, 「本拍尚未收笔」, no scribe. Everything is fsynced once at the end.
"""

from __future__ import annotations

import bisect
import json
import random
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, Field

from ..prompt.assemble import (
    HistoryCache, agent_state_block, agent_system_prompt, build_injection, build_messages, lore_depth_blocks, opening_text,
    prompt_resource, system_prompt,
)
from ..prompt.presets.prompter import insert_depth_injections
from ..beat.loop import AskHandler, Beat, BeatInput, EventSink, PreviousBeat
from ..beat.draft import Draft
from ..prompt.inspect import decode_sent, encode_sent, rebuild_calls, tool_specs_for
from ..fsutil import atomic_write_text
from ..cards import Card
from ..beat.events import BeatFinished, BeatStarted, DraftChanged, ScribeFinished
from ..llm.types import ChatMessage, ChatModel
from ..lore import ActivationResult, Lorebook, ScanMessage, TimedEffects, merge_books
from ..cards.regex_scripts import apply_scripts, scripts_from_card
from ..prompt.macros import MacroContext, apply_macros
from ..ledger.scribe import ScribeOutcome, run_scribe
from ..session.tree import SessionTree
from ..ledger.state import WorldState, format_roster, format_state, utf16_len


class BeatResult(BaseModel):
    """One beat as the CLI's ``--json`` prints it, plus ids for the UI. ``state``/``roster`` are the formatted
    【世界状态】/【登场名录】 texts after the beat; ``calls`` lists the tool names of each model call."""

    user: str
    injection: str
    activated: list[str] = Field(default_factory=list)
    calls: list[list[str]] = Field(default_factory=list)
    final: str = ""
    sealed: bool = False
    revised_previous: bool = False
    outcome: str = ""
    state: str = ""
    roster: str = ""
    warnings: list[str] = Field(default_factory=list)
    activity: list[str] = Field(default_factory=list)
    error: Optional[str] = None
    sent: list[ChatMessage] = Field(default_factory=list, exclude=True)
    scribe: Optional[ScribeOutcome] = Field(default=None, exclude=True)
    output: Any = Field(default=None, exclude=True)
    revised_text: Optional[str] = None
    checkpoint: Optional[dict[str, Any]] = None
    #: token accounting of the beat (issue 7): ``{"prompt", "cached", "completion"}`` summed over the beat's model
    #: calls (server usage), ``"cache_hit_share"`` = cached / prompt (None without usage), ``"context"`` =
    #: :meth:`Chat.context_usage` after the beat (the next prompt's estimate against the window)
    tokens: dict[str, Any] = Field(default_factory=dict)

    @property
    def messages_sent(self) -> list[dict[str, Any]]:
        """The first call's messages in wire form (``{"role", "content"}`` …), system first."""
        return [m.to_openai() for m in self.sent]


def global_books_dir() -> Path:
    """World-info files that apply to every chat: ``<home>/世界书/*.json`` (SillyTavern's global world info)."""
    from ..paths import home

    return home() / "世界书"


def load_books(folder: Path, source: str) -> list[Lorebook]:
    """Every SillyTavern world-info (or card book) JSON in ``folder``; unreadable files are skipped (logged)."""
    out: list[Lorebook] = []
    if not folder.is_dir():
        return out
    for f in sorted(folder.glob("*.json")):
        try:
            obj = json.loads(f.read_text("utf-8"))
            out.append(Lorebook.from_any(obj, f.stem, source=source) if hasattr(Lorebook, "from_any")
                       else Lorebook.from_world_info(obj, f.stem, source=source))
        except (OSError, ValueError) as e:
            import logging

            logging.getLogger(__name__).warning("world info %s skipped: %s", f, e)
    return out


def card_scripts_allowed(card: Card) -> bool:
    """Whether the user allowed this card's regex scripts (``liyuan.json`` beside the card: ``regex_allowed``)."""
    if not card.path:
        return False
    try:
        meta = json.loads((Path(card.path).parent / "liyuan.json").read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return bool(meta.get("regex_allowed"))


def set_card_scripts_allowed(card_dir: Path, allowed: bool) -> None:
    """Record the user's answer for a card's regex scripts (asked once, at import)."""
    p = Path(card_dir) / "liyuan.json"
    try:
        meta = json.loads(p.read_text("utf-8"))
    except (OSError, ValueError):
        meta = {}
    meta["regex_allowed"] = bool(allowed)
    _atomic_write(p, json.dumps(meta, ensure_ascii=False, indent=1))


class BeatSaveError(OSError):
    """The beat ran but the session file refused the write (disk full, read-only…). ``result`` holds the beat;
    its lines stay pending in the tree, so :meth:`Chat.retry_save` can write them once the disk is fixed."""

    def __init__(self, result: "BeatResult", cause: OSError, stage: str = "beat"):
        if stage == "ledger":
            text = (f"会话文件写不进去：{cause.strerror or cause}。本拍的正文已经保存，场记记的账还在内存里，"
                    "腾出空间或恢复写权限后可以重试保存。")
        else:
            text = f"会话文件写不进去：{cause.strerror or cause}。本拍的内容还在内存里，腾出空间或恢复写权限后可以重试保存。"
        super().__init__(cause.errno, text)
        self.result = result
        self.cause = cause
        #: "beat" (the reply itself is not on disk) or "ledger" (the reply is; the scribe's snapshot is not)
        self.stage = stage


class SessionWriteError(OSError):
    """The session file refused the write before a command did anything (the user's words could not be saved):
    nothing was played, memory was rolled back to what is on disk. The message is fit for the UI/CLI."""

    def __init__(self, cause: OSError):
        where = f"（{cause.filename}）" if getattr(cause, "filename", None) else ""
        super().__init__(cause.errno, f"会话文件写不进去：{cause.strerror or cause}{where}。这一拍没有开始；已经保存的内容都还在。")
        self.cause = cause


def call_tokens(calls: list[Any]) -> dict[str, Any]:
    """Server-reported usage summed over model calls (session.CallLog): ``{"prompt", "cached", "completion",
    "cache_hit_share"}`` in tokens; cached tokens are read from ``prompt_cache_hit_tokens`` (DeepSeek),
    ``prompt_tokens_details.cached_tokens`` (OpenAI) or ``cached_tokens``; the share is None without usage."""
    use = [c.usage or {} for c in calls]

    def total(*keys: str) -> int:
        n = 0
        for u in use:
            for k in keys:
                v = u.get(k)
                if isinstance(v, dict):
                    v = v.get("cached_tokens")
                if isinstance(v, (int, float)) and v:
                    n += int(v)
                    break
        return n

    prompt = total("prompt_tokens")
    cached = total("prompt_cache_hit_tokens", "prompt_tokens_details", "cached_tokens")
    return {"prompt": prompt, "cached": cached, "completion": total("completion_tokens"),
            "cache_hit_share": round(cached / prompt, 4) if prompt else None}


def _first_words(text: str, n: int = 24) -> str:
    """The first ``n`` characters of a text on one line (for the navigator), with … when cut."""
    one = " ".join(text.split())
    return one if len(one) <= n else one[:n] + "…"


def _atomic_write(path: Path, text: str) -> None:
    atomic_write_text(path, text)


class TranscriptItems:
    """A chat's transcript (:meth:`Chat.transcript`) as a read-only sequence of item dicts whose pages are built when
    first read (:meth:`Chat.transcript_page`): ``len()`` is the full count, ``items[i]``/slices/iteration give
    exactly what ``chat.transcript()`` would. A snapshot of the branch when it was made: make a new one after a
    beat or a branch switch. Iterating builds every page still missing (O(chat length), once)."""

    def __init__(self, chat: "Chat", page: int = 60):
        first, total, items = chat.transcript_page(None, page)
        self._chat, self._page, self._total = chat, max(1, page), total
        self._have: dict[int, dict[str, Any]] = {first + k: it for k, it in enumerate(items)}

    def __len__(self) -> int:
        return self._total

    def _fill(self, lo: int, hi: int) -> None:
        """Build the items missing in ``[lo, hi)``."""
        missing = [k for k in range(lo, hi) if k not in self._have]
        if missing:
            first, _total, items = self._chat.transcript_page(missing[-1] + 1, missing[-1] + 1 - missing[0])
            self._have.update((first + k, it) for k, it in enumerate(items))

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            lo, hi, step = i.indices(self._total)
            if step == 1 and lo < hi:
                self._fill(lo, hi)
            return [self[k] for k in range(lo, hi, step)]
        k = i + self._total if i < 0 else i
        if not 0 <= k < self._total:
            raise IndexError("transcript index out of range")
        if k not in self._have:
            self._fill(max(0, k + 1 - self._page), k + 1)
            if k not in self._have:  # the branch shrank since this snapshot was made
                raise IndexError("transcript index out of range")
        return self._have[k]

    def __iter__(self) -> Any:
        self._fill(0, self._total)
        return (self._have[k] for k in range(self._total))

    def __reversed__(self) -> Any:
        return (self[k] for k in range(self._total - 1, -1, -1))


class Chat:
    """An open chat. ``model`` plays the actor; ``scribe_model`` (optional side model) keeps the ledger."""

    def __init__(self, directory: Path, tree: SessionTree, card: Card, model: ChatModel,
                 scribe_model: Optional[ChatModel] = None, persona: str = "", language: Optional[str] = None,
                 preset: Any = None, persona_obj: Any = None):
        """``preset``: a SillyTavern chat-completion preset (:class:`presets.Preset`) mapped onto our layers;
        ``persona_obj``: the chat's :class:`personas.Persona` (name and description)."""
        self.dir = Path(directory)
        self.tree = tree
        self.card = card
        self.model = model
        self.scribe_model = scribe_model
        self.persona = persona or (persona_obj.name if persona_obj is not None else "") or tree.header.persona or card.persona_name or "你"
        self.language = language or card.language
        self.book: Lorebook = merge_books([card.lorebook, *load_books(self.dir / "世界书", "chat"), *load_books(global_books_dir(), "global")])
        self.book.scan_depth = card.lorebook.scan_depth if card.lorebook.entries else self.book.scan_depth
        #: The card's regex scripts run only after the user allowed them for this card (asked once at import).
        self.scripts = scripts_from_card(card.raw) if card_scripts_allowed(card) else []
        self._script_cache: dict[tuple[str, int, str, Any], str] = {}
        # Macros in the system prompt are evaluated once per chat: the clock is frozen at the chat's creation and
        # {{pick}}/{{random}} are seeded by the chat id, so the system prompt stays byte-stable (prefix caching).
        created = datetime.fromtimestamp(tree.header.ts / 1000)
        self.ctx = MacroContext(char=card.name, user=self.persona, description=card.description,
                                personality=card.personality, scenario=card.scenario, mes_examples=card.mes_example,
                                chat_id=tree.header.id, clock=lambda: created,
                                persona=getattr(persona_obj, "description", "") or getattr(tree.header, "persona_description", "") or "")
        from ..ledger.mvu import load_initvars

        #: problems with the card's [InitVar] entries, shown with the tree's load warnings (see load_warnings)
        self.mvu_warnings: list[str] = []
        try:  # the card's variable tree (MVU [InitVar] entries); macros such as <user> are filled in
            self._mvu_initial, self.mvu_warnings = load_initvars(card, substitute=lambda t: apply_macros(t, self.ctx))
        except Exception as e:  # a broken InitVar never stops a chat; the scribe just gets no tree
            self._mvu_initial, self.mvu_warnings = None, [f"[MVU] 读取初始变量失败：{e}"]
        #: the card's [mvu_update] world-info rules (how variables change): with a variable tree they go to the
        #: scribe, never to the actor (issue 5; MVU's "extra model" mode strips them from the story request too)
        self.mvu_rules = ""
        if self._mvu_initial is not None:
            rules = [e for e in self.book.entries if "[mvu_update]" in (e.display_title or "").lower()]
            if rules:
                self.mvu_rules = "\n\n".join(apply_macros(e.content, self.ctx).strip() for e in rules if e.content.strip())
                gone = {id(e) for e in rules}
                self.book = self.book.model_copy(update={"entries": [e for e in self.book.entries if id(e) not in gone]})
        self.prompter = None
        if preset is not None:
            from ..prompt.presets.mapping import plan
            from ..prompt.presets.prompter import PresetPrompter

            st_meta = (getattr(tree.header, "st", None) or {}).get("chat_metadata") or {}
            self.prompter = PresetPrompter(plan(preset), card, self.book, self.ctx, persona=persona_obj,
                                           seed=tree.header.id, variables=st_meta.get("variables"), model_name=model.name)
        self._system = system_prompt(card, self.book, self.ctx, self.prompter)
        self._running: Optional[Beat] = None
        self._history = HistoryCache()
        from ..prompt.tokens import TokenCounter

        #: token estimates, calibrated by the server's usage numbers (issue 7, token accounting)
        self.tokens = TokenCounter()
        #: the model's context size in tokens (the provider's setting; 65,536 when the model does not say)
        self.context_window: int = int(getattr(model, "context_window", 0) or 65536)
        #: compaction starts when the estimated prompt exceeds this share of the window (settings: compaction_share)
        self.compaction_share: float = 0.6
        self.dropped = 0  # history messages the last prepare() left out to fit the window (see _fit_window)
        self.fixed_over = False  # the system prompt (card, lore, preset) alone is over the window
        self._mem: Any = None
        self._mem_at: tuple[int, Optional[str]] = (0, None)

    # -- creating / opening ---------------------------------------------------------------------------------
    @classmethod
    def create(cls, directory: Path, card: Card, model: ChatModel, *, mode: str = "roleplay", persona: str = "",
               title: str = "", scribe_model: Optional[ChatModel] = None, **header_extra: Any) -> "Chat":
        """Create a chat folder with its session tree (header + opening). ``header_extra`` goes into the header
        (e.g. ``demo=True`` for a chat on the demo's replay model). Raises SessionError if one exists."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        persona = persona or card.persona_name or "你"
        preset = header_extra.pop("preset", None)
        persona_obj = header_extra.pop("persona_obj", None)
        if persona_obj is not None and not persona:
            persona = persona_obj.name
        if preset is not None:
            header_extra["preset"] = preset.name
        if persona_obj is not None and getattr(persona_obj, "description", ""):
            header_extra["persona_description"] = persona_obj.description
        tree = SessionTree.create(directory / "session.jsonl", mode=mode, card=card.path, card_name=card.name,
                                  persona=persona, title=title or directory.name, **header_extra)
        chat = cls(directory, tree, card, model, scribe_model, persona, preset=preset, persona_obj=persona_obj)
        if card.first_mes.strip() and mode != "agent":  # agent mode: the conversation is discussion, not story
            first = tree.append("opening", text=opening_text(card, chat.ctx))
            for alt in card.alternate_greetings:  # SillyTavern: the alternate greetings are swipes of message 0
                if alt.strip():
                    tree.append("opening", parent_id=first.parent_id, move_leaf=False,
                                text=f"【开场 · {card.name}】\n{apply_macros(alt, chat.ctx)}")
            tree.set_leaf(first.id)
        tree.persist_leaf()
        chat._write_meta()
        return chat

    @classmethod
    def open(cls, directory: Path, card: Card, model: ChatModel, scribe_model: Optional[ChatModel] = None,
             preset: Any = None, persona_obj: Any = None) -> "Chat":
        """Open an existing chat folder (the tree is loaded; damaged lines are skipped, see ``load_warnings``)."""
        directory = Path(directory)
        tree = SessionTree.open(directory / "session.jsonl")
        chat = cls(directory, tree, card, model, scribe_model, preset=preset, persona_obj=persona_obj)
        chat._write_meta()
        return chat

    @property
    def load_warnings(self) -> list[str]:
        """What opening the chat found wrong: damaged session lines (skipped), then the card's [InitVar] problems."""
        return self.tree.load_warnings + self.mvu_warnings

    @property
    def mode(self) -> str:
        return self.tree.header.mode

    def _write_meta(self) -> None:
        meta = {"mode": self.mode, "leaf": self.tree.leaf_id, "title": self.tree.header.title,
                "card": self.card.name, "updated": int(time.time() * 1000)}
        try:
            _atomic_write(self.dir / "meta.json", json.dumps(meta, ensure_ascii=False, indent=1))
        except OSError:
            pass  # a cache; the tree is the truth

    # -- reading the branch ---------------------------------------------------------------------------------
    @property
    def system(self) -> str:
        """The system prompt of this chat (byte-stable across beats)."""
        return self._system

    def current_state(self) -> WorldState:
        """The ledger of the active branch (its latest rp-state), or an empty one."""
        e = self.tree.latest("rp-state")
        return WorldState.model_validate(e.state) if e else WorldState()

    def previous_warnings(self) -> list[str]:
        """Warnings of the latest scribe snapshot on the branch, ledger and variable tree (fed back to the scribe)."""
        e = self.tree.latest("rp-state")
        if not e or e.source != "scribe":
            return []
        return list(e.warnings) + list(getattr(e, "mvu_warnings", None) or [])

    def current_mvu(self) -> Any:
        """The card's MVU variable tree on the active branch (seed 002: the status bar and the ledger share one
        snapshot): the latest rp-state that carries ``mvu``, else the tree from the card's [InitVar] entries, else
        None (the card has no variable tree)."""
        from ..ledger.mvu import MvuState

        # an rp-state never changes: walk back only over what the branch gained since the last call (once per beat)
        path = self.tree.path_to()
        n, last_id, found = getattr(self, "_mvu_scan", (0, None, None))
        if not (n and len(path) >= n and path[n - 1].id == last_id):
            n, found = 0, None
        for e in reversed(path[n:]):
            if e.type == "rp-state" and getattr(e, "mvu", None) is not None:
                found = e
                break
        self._mvu_scan = (len(path), path[-1].id if path else None, found)
        if found is not None:
            return MvuState.from_any(found.mvu)
        if self._mvu_initial is not None:
            return MvuState.initial(self._mvu_initial)
        return None

    def current_panels(self) -> list[Any]:
        """The card's Liyuan panels (``extensions.liyuan.panels``, :mod:`panels`) with their data on the active
        branch: the latest rp-state that carries ``panels`` (``{id: data}``), else the card's initial data; [] when
        the card declares no panels. Templates and titles always come from the card."""
        from ..ledger.panels import panels_from_card, panels_with_data

        card_panels, _ = panels_from_card(self.card)
        if not any(p.data for p in card_panels):  # ledger-only panels: no snapshot carries data for them
            return card_panels
        # as current_mvu: walk back only over what the branch gained since the last call
        path = self.tree.path_to()
        n, last_id, found = getattr(self, "_panel_scan", (0, None, None))
        if not (n and len(path) >= n and path[n - 1].id == last_id):
            n, found = 0, None
        for e in reversed(path[n:]):
            if e.type == "rp-state" and isinstance(getattr(e, "panels", None), dict):
                found = e
                break
        self._panel_scan = (len(path), path[-1].id if path else None, found)
        return panels_with_data(card_panels, found.panels) if found is not None else card_panels

    def _previous_beat(self, h: HistoryCache) -> Optional[PreviousBeat]:
        last = next((t for t in reversed(h.turns) if t.final is not None), None)
        if last is None:
            return None
        return PreviousBeat(assistant_id=last.assistant_id, text=last.final, version=h.revisions.get(last.assistant_id, ("", 0))[1])

    def history(self) -> HistoryCache:
        """The prompt history of the active branch (incrementally cached)."""
        return self._history.update(self.tree.path_to())

    def prepare(self, user_text: str) -> tuple[str, list[str], list[ChatMessage], WorldState, Optional[PreviousBeat]]:
        """Injection, activated titles, first-call messages, ledger and previous beat for ``user_text`` on the
        active branch — everything a beat sends, without running it."""
        h = self.history()
        state = self.current_state()
        lore = self._activate(h, user_text)
        self._last_lore = lore
        keyed = [e for e in lore.entries if not e.constant and e.position != "at_depth"]
        order = {id(e): i for i, e in enumerate(self.book.entries)}
        activated = [e.display_title for e in sorted(keyed, key=lambda e: order.get(id(e), 0))]
        hist = self._fit_window(h, user_text)
        injection = build_injection(state, activated, self.book.index_titles(), self.language,
                                    memory_hint=bool(h.summaries) or self.dropped > 0)
        if self.prompter is not None:
            messages = self.prompter.build_messages(self._system, hist, injection, user_text)
        else:
            messages = build_messages(self._system, hist, injection, user_text)
        if self.scripts:
            messages = self._prompt_scripts(messages)
        depth = lore_depth_blocks(lore, self.ctx)
        if depth:  # instructions the author placed @depth go where SillyTavern would put them
            messages = [messages[0], *insert_depth_injections(messages[1:], depth)]
        return injection, activated, messages, state, self._previous_beat(h)

    def _fit_window(self, h: HistoryCache, user_text: str) -> list[ChatMessage]:
        """The history as sent, trimmed when the whole prompt would not fit the context window (an imported or
        very long chat not yet compacted, a switch to a smaller model): the oldest messages are left out of this
        beat's prompt (never out of the tree; memory_search still finds them), a relay-summary message stays first.
        Sets ``self.dropped`` (how many were left out; 0 normally, then nothing is copied)."""
        hist = h.prompt_messages()
        self.dropped = 0
        budget = int(self.context_window * 0.9)  # room for the reply, the tool calls and the estimate's error
        fixed = self.tokens.text(self._system) + self.tokens.text(user_text) + 1500  # ledger blocks + tool specs
        self.fixed_over = fixed > budget  # the card alone does not fit: trimming history cannot help
        used = fixed + self._history_tokens(h)
        if used <= budget or not hist:
            return hist
        keep_first = 1 if h.summaries else 0
        k = keep_first
        while used > budget and k < len(hist) - 2:  # O(messages left out); only for a chat over the window
            used -= self.tokens.messages([hist[k]])
            k += 1
        while k < len(hist) and hist[k].role != "user":  # start on a user message so roles still alternate
            used -= self.tokens.messages([hist[k]])
            k += 1
        self.dropped = k - keep_first
        if keep_first and k < len(hist):  # the relay summary goes with the first kept user message, as before
            from ..prompt.assemble import summary_block

            block = summary_block([e.text for e in h.summary_list()])
            return [ChatMessage(role="user", content=f"{block}\n\n{hist[k].content}"), *hist[k + 1:]]
        return hist[:keep_first] + hist[k:]

    def _depth_key(self, depth: int) -> Any:
        """Depths past every finite min/maxDepth of the scripts behave alike: cache them under one key."""
        bound = max([x for sc in self.scripts for x in (sc.minDepth, sc.maxDepth) if isinstance(x, int) and x >= 0] + [0])
        return depth if depth <= bound else "deep"

    def _scripted(self, text: str, placement: int, depth: int, view: str) -> str:
        key = (text, placement, view, self._depth_key(depth))
        hit = self._script_cache.get(key)
        if hit is None:
            hit = apply_scripts(text, self.scripts, placement=placement, is_markdown=view == "display",
                                is_prompt=view == "prompt", depth=depth, macros_ctx=self.ctx)
            if len(self._script_cache) > 20000:
                self._script_cache.clear()
            self._script_cache[key] = hit
        return hit

    def _prompt_scripts(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        """The card's prompt-side regex scripts on the history (SillyTavern: promptOnly and 'neither' scripts, by
        message depth, 0 = the user's new message). Stored text is never changed; the system message and the
        final user message's data blocks are left alone (only the user's own words are scripted)."""
        out = [messages[0]]
        body = messages[1:]
        n = len(body)
        for i, m in enumerate(body):
            depth = n - 1 - i
            if m.role == "assistant":
                out.append(ChatMessage(role="assistant", content=self._scripted(m.content, 2, depth, "prompt")))
            elif m.role == "user" and i < n - 1:
                out.append(ChatMessage(role="user", content=self._scripted(m.content, 1, depth, "prompt")))
            else:
                out.append(m)
        return out

    def display_text(self, item: dict[str, Any], depth: int) -> str:
        """What the conversation view shows for a transcript item: the display-side regex scripts of the card
        (markdownOnly and 'neither' scripts, SillyTavern's rules) at the item's depth (0 = newest)."""
        text = item.get("text", "")
        if item.get("role") in ("assistant", "opening") and item.get("variables") is not None \
                and "<StatusPlaceHolderImpl/>" not in text:
            # as MVU does: a message that carries a variable snapshot gets the placeholder the card's display regex
            # turns into its status bar (prompt-side scripts keep it away from the model)
            text = f"{text}\n\n<StatusPlaceHolderImpl/>"
        if not self.scripts or item.get("role") not in ("user", "assistant", "opening"):
            return text
        return self._scripted(text, 1 if item["role"] == "user" else 2, depth, "display")

    def _activate(self, h: HistoryCache, user_text: str) -> ActivationResult:
        """World-info activation for the next beat (SillyTavern's rules, lorebook.activate_detailed): the newest
        messages as ``Name: text``, the branch's sticky/cooldown state from its latest beat entry, the chat length in
        messages. Deterministic per chat and beat (the probability roll is seeded)."""
        depth = max([self.book.scan_depth] + [e.scan_depth or 0 for e in self.book.entries if isinstance(getattr(e, "scan_depth", None), int)])
        want = max(2, depth + 1)
        scan: list[ScanMessage] = []
        for t in reversed(h.turns):
            if len(scan) >= want:
                break
            if t.final is not None:
                scan.append(ScanMessage(name=self.card.name, text=t.final))
            if t.user is not None:
                scan.append(ScanMessage(name=self.persona, text=t.user))
        if len(scan) < want and h.opening is not None:
            scan.append(ScanMessage(name=self.card.name, text=h.opening))
        scan.reverse()
        scan.append(ScanMessage(name=self.persona, text=user_text))
        chat_length = len(h.messages) + 1
        timed = None
        beat = self.tree.latest("beat")
        raw = getattr(beat, "lore_timed", None) if beat is not None else None
        if raw:
            try:
                timed = TimedEffects.model_validate(raw)
            except ValueError:
                timed = None
        rng = random.Random(f"{self.tree.header.id}:{chat_length}")
        self._last_scan_len = len(scan)
        return self.book.activate_detailed(scan, timed=timed, chat_length=chat_length, rng=rng)

    def lore_reasons(self) -> list[str]:
        """One line per entry of the last activation: its title and why it fired (which key in which message,
        constant, sticky, recursion through another entry)."""
        lore = getattr(self, "_last_lore", None)
        if lore is None:
            return []
        n = getattr(self, "_last_scan_len", 0)
        out = []
        for e, r in zip(lore.entries, lore.reasons):
            if r.kind == "key":
                if r.matched_in == "recursion":
                    where = f"条目「{r.via_title}」的正文里（递归）"
                elif r.message_index is not None and r.message_index == n - 1:
                    where = "你这一拍的话里"
                elif r.message_index is not None:
                    where = f"往前第 {n - 1 - r.message_index} 条消息里"
                else:
                    where = r.matched_in or "扫描文本里"
                out.append(f"{e.display_title}：关键词「{r.key}」出现在{where}")
            else:
                label = {"constant": "常驻", "sticky": "黏滞（上次命中后仍在生效）", "decorator": "@@activate"}.get(r.kind, r.kind)
                out.append(f"{e.display_title}：{label}")
        return out

    # -- commands -------------------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the running beat, if any (the draft so far is kept)."""
        if self._running is not None:
            self._running.stop()

    async def send(self, user_text: str, ask: Optional[AskHandler] = None, on_event: Optional[EventSink] = None,
                   max_rounds: Optional[int] = None) -> BeatResult:
        """Play one beat for ``user_text`` on the active branch and store it. Returns a :class:`BeatResult`.
        Model/network failures end the beat with ``outcome="error"`` and a message; nothing already written is
        lost. Raises OSError only when the disk refuses the write (the beat's data is kept in memory then)."""
        mark = self.tree.pending_mark()
        self.tree.append("user", text=user_text)
        self._commit_or_rollback(mark)  # the user's words are on disk before the first model call
        return await self._play(user_text, ask, on_event, max_rounds)

    def _commit_or_rollback(self, mark: tuple[int, Optional[str]]) -> None:
        try:
            self.tree.commit()
        except OSError as e:
            self.tree.rollback(mark)
            raise SessionWriteError(e) from e

    async def regenerate(self, ask: Optional[AskHandler] = None, on_event: Optional[EventSink] = None) -> BeatResult:
        """Play the last user message of the branch again: the new reply is a sibling of the old one under the same
        user entry (nothing is deleted; the old reply stays on its branch). Raises ValueError with no user message."""
        user = self.tree.latest("user")
        if user is None:
            raise ValueError("还没有可以重来的一拍")
        self.tree.leaf_id = user.id
        return await self._play(user.text, ask, on_event, None, how="regenerate")

    # -- branches (issue 7: regenerate = sibling, swipes, edit a past user message, undo, navigator) -----------
    def _tip(self, entry_id: str) -> str:
        """The tip of the branch below ``entry_id``: follow the newest child (file order) down to a leaf entry."""
        cur = entry_id
        while True:
            kids = self.tree.children_of.get(cur)
            if not kids:
                return cur
            cur = kids[-1]

    def select(self, entry_id: str) -> str:
        """Show the branch through ``entry_id``: the active leaf moves to the tip below it (newest child at each
        step) and only that leaf pointer is written (nothing else changes on disk). The ledger, roster, variables
        and lorebook timers used from then on are those of that branch (its latest snapshot). Returns the new leaf
        id. Raises KeyError for an unknown id, RuntimeError while a beat runs."""
        if self._running is not None:
            raise RuntimeError("本拍还在进行，先停下再切换分支")
        self.tree.set_leaf(self._tip(entry_id))
        self.tree.persist_leaf()
        self._write_meta()
        return self.tree.leaf_id

    def _swipe_group(self, entry_id: str) -> tuple[Optional[str], list[str], int]:
        """(owner, sibling ids, index) for a transcript item: an assistant reply's alternatives are the children of
        its user entry (one per regenerate); a user message's alternatives are the user entries under the same
        parent (one per edit). ``index`` is the position of the one on the active branch."""
        e = self.tree.get(entry_id)
        if e.type == "user":
            owner = e.parent_id
            sibs = [i for i in self.tree.children_of.get(owner, []) if self.tree.entries[i].type == "user"]
            return owner, sibs, sibs.index(e.id)
        # walk up to the child of the nearest user/opening/header entry
        cur = e
        while cur.parent_id is not None and self.tree.entries[cur.parent_id].type not in ("user", "opening", "header"):
            cur = self.tree.entries[cur.parent_id]
        owner = cur.parent_id
        # alternatives are the attempts that produced a reply; a failed/stopped attempt counts only while it is the
        # one on screen (so 重来 after errors shows 1/1, not 8/8, and ◀ never lands on a dead end)
        sibs = [i for i in self.tree.children_of.get(owner, [])
                if self.tree.entries[i].type != "user" and (i == cur.id or self._has_reply(i))]
        return owner, sibs, sibs.index(cur.id) if cur.id in sibs else 0

    def _has_reply(self, entry_id: str) -> bool:
        """Whether the branch below ``entry_id`` (following the newest child down to its tip, the way :meth:`select`
        goes) reaches a reply before the next user message."""
        cur = entry_id
        while True:
            t = self.tree.entries[cur].type
            if t in ("assistant", "opening"):
                return True
            if t == "user" and cur != entry_id:
                return False
            kids = self.tree.children_of.get(cur)
            if not kids:
                return False
            cur = kids[-1]

    def _count_user_siblings(self, e: Any) -> int:
        kids = self.tree.children_of.get(e.parent_id, [])
        return 1 if len(kids) == 1 else sum(1 for k in kids if self.tree.entries[k].type == "user")

    def swipe_info(self, entry_id: str) -> tuple[int, int]:
        """(index, count) of the alternatives of a transcript item (1-based index; (1, 1) when there are none)."""
        _, sibs, i = self._swipe_group(entry_id)
        return i + 1, max(1, len(sibs))

    def swipe(self, entry_id: str, delta: int) -> str:
        """「◀ n/m ▶」: show the previous (-1) or next (+1) alternative of a reply (another regenerate) or of a user
        message (another edit), wrapping around; only the leaf pointer is written. Returns the new leaf id."""
        _, sibs, i = self._swipe_group(entry_id)
        if len(sibs) < 2:
            return self.tree.leaf_id
        return self.select(sibs[(i + delta) % len(sibs)])

    def undo(self) -> str:
        """「撤销本轮」: the active leaf moves back to just before the branch's last user message (nothing is
        deleted; the undone beat stays on the tree and the navigator can jump back to it). Returns the new leaf id.
        Raises ValueError when there is no beat to undo, RuntimeError while a beat runs."""
        if self._running is not None:
            raise RuntimeError("本拍还在进行，先停下再撤销")
        user = self.tree.latest("user")
        if user is None or user.parent_id is None:
            raise ValueError("没有可以撤销的一拍")
        self.tree.set_leaf(user.parent_id)
        self.tree.persist_leaf()
        self._write_meta()
        return user.parent_id

    async def edit_user(self, user_id: str, text: str, ask: Optional[AskHandler] = None,
                        on_event: Optional[EventSink] = None, max_rounds: Optional[int] = None) -> BeatResult:
        """Edit a past user message: the new words start a new branch from the same point (a sibling user entry;
        the old branch stays and is one swipe away) and the beat is played there. Raises KeyError for an unknown
        id, ValueError when ``user_id`` is not a user message."""
        old = self.tree.get(user_id)
        if old.type != "user":
            raise ValueError("只能修改用户的话")
        mark = self.tree.pending_mark()
        self.tree.append("user", parent_id=old.parent_id, text=text)
        self._commit_or_rollback(mark)
        return await self._play(text, ask, on_event, max_rounds, how="edit")

    def branch_tree(self) -> list[dict[str, Any]]:
        """The chat as a compact tree for the branch navigator: one node per user message, file order,
        ``{"id", "parent" (id of the node above or None), "beat" (1-based depth), "text" (first words),
        "reply" (first words of its reply on the shown branch for an active node, else of the newest reply below
        it; "" when none), "reply_id", "siblings" (alternatives of this message), "replies" (attempts under it that
        produced a reply), "active" (on the shown branch)}``. O(entries)."""
        tree = self.tree
        on_path = {e.id for e in tree.path_to()}
        node_of: dict[str, Optional[str]] = {}
        beat_of: dict[Optional[str], int] = {None: 0}
        nodes: list[dict[str, Any]] = []
        by_id: dict[str, dict[str, Any]] = {}
        for i in tree.order:
            e = tree.entries[i]
            up = node_of.get(e.parent_id) if e.parent_id is not None else None
            if e.type == "user":
                sib = sum(1 for k in tree.children_of.get(e.parent_id, []) if tree.entries[k].type == "user")
                replies = [k for k in tree.children_of.get(e.id, []) if tree.entries[k].type != "user" and self._has_reply(k)]
                beat_of[e.id] = beat_of.get(up, 0) + 1
                node = {"id": e.id, "parent": up, "beat": beat_of[e.id], "text": _first_words(e.text),
                        "reply": "", "siblings": sib, "replies": len(replies), "active": e.id in on_path}
                nodes.append(node)
                by_id[e.id] = node
                node_of[e.id] = e.id
            else:
                node_of[e.id] = up
                if e.type == "assistant" and up in by_id:
                    node = by_id[up]
                    if not (node["active"] and node.get("_shown")):  # an active node keeps the reply on screen
                        node["reply"] = _first_words(e.text)
                        node["reply_id"] = e.id
                        if node["active"] and e.id in on_path:
                            node["_shown"] = True
        for n in nodes:
            n.pop("_shown", None)
        return nodes

    def pending_draft(self) -> Optional[Any]:
        """The beat entry of an unfinished beat at the tip of the branch (not sealed, draft not empty, no reply
        after it), or None."""
        for e in reversed(self.tree.path_to()):
            if e.type in ("assistant", "user", "revision"):
                return None
            if e.type == "beat":
                return e if e.outcome in ("unsealed", "out_of_rounds", "stopped", "error") and e.draft.strip() else None
        return None

    async def seal_as_is(self, on_event: Optional[EventSink] = None) -> BeatResult:
        """「按现稿收笔」: the user seals the unfinished beat's draft as it stands; the scribe then keeps the ledger as
        after any sealed beat. Raises ValueError when there is no unfinished draft."""
        pending = self.pending_draft()
        user = self.tree.latest("user")
        if pending is None or user is None:
            raise ValueError("没有未收笔的稿件")
        state = self.current_state()
        self.tree.append("assistant", text=pending.draft, sealed=True, beat=pending.id, by="user")
        self.tree.commit()
        result = BeatResult(user=user.text, injection=pending.injection, activated=list(pending.activated),
                            final=pending.draft, sealed=True, outcome="sealed")
        self._emit(on_event, DraftChanged(text=pending.draft, version=pending.draft_version,
                                          chars=utf16_len(pending.draft), sealed=True, by="user"))
        await self._scribe(result, state, user.text, pending.draft, on_event)
        self._emit(on_event, BeatFinished(outcome="sealed", final=pending.draft, sealed=True, message="按现稿收笔"))
        return result

    async def continue_beat(self, ask: Optional[AskHandler] = None, on_event: Optional[EventSink] = None) -> BeatResult:
        """「继续」: run the loop again on the unfinished beat, starting from its draft (same version), so the model
        can finish and seal. Raises ValueError when there is no unfinished draft."""
        pending = self.pending_draft()
        user = self.tree.latest("user")
        if pending is None or user is None:
            raise ValueError("没有未收笔的稿件")
        note = (f"（接着上一次没写完的稿子：稿件当前版本 {pending.draft_version}，尚未收笔。"
                "先用 draft_read 看一遍，需要时补写或修改，写完用 draft_seal 收笔。）")
        return await self._play(user.text, ask, on_event, None, draft=Draft(pending.draft, pending.draft_version), note=note,
                                how="continue")

    def retry_save(self) -> None:
        """Write what a failed save left pending (raises OSError again if the disk still refuses). A sealed beat
        whose save failed has not been through the scribe yet: :attr:`needs_scribe` tells, :meth:`finish_pending`
        does it."""
        self.tree.commit()
        self._write_meta()

    @property
    def needs_scribe(self) -> bool:
        """A beat (or agent turn) was saved late (after :meth:`retry_save`) and what follows saving — the scribe's
        ledger, an agent turn's checkpoint — is still to be done."""
        return getattr(self, "_pending_finish", None) is not None

    async def finish_pending(self, on_event: Optional[EventSink] = None) -> BeatResult:
        """Do for the beat whose save failed and was retried what the beat would have done next: the scribe and
        compaction (role-play), the checkpoint and the scribe over changed chapters (agent mode). Its events go to
        the beat's own ``on_event`` (the parameter is accepted for symmetry with the other commands). Raises
        ValueError when nothing is pending, OSError when the disk refuses again."""
        pending = getattr(self, "_pending_finish", None)
        if pending is None:
            raise ValueError("没有等着记账的一拍")
        if self.tree._pending:
            self.retry_save()
        self._pending_finish = None
        return await pending()

    async def _run_loop(self, inp: BeatInput, max_rounds: Optional[int]) -> Any:
        """Run one beat loop (Stop reaches it through :meth:`stop`) and record its asks on the tree."""
        if max_rounds:
            inp.max_rounds = max_rounds
        beat = Beat(inp)
        self._running = beat
        try:
            out = await beat.run()
        finally:
            self._running = None
        for req, ans in out.asks:
            self.tree.append("ask", question=req.question, options=req.options, answer=ans.answer, by=ans.by)
        return out

    def _emit(self, on_event: Optional[EventSink], ev: Any) -> None:
        if on_event is not None:
            try:
                on_event(ev)
            except Exception:  # pragma: no cover - handler errors are the UI's problem
                pass

    # -- agent mode (seed 000, 写长篇 / 检查点) ----------------------------------------------------------------
    AGENT_TOOLS = ("read", "grep", "edit", "write", "ask", "world_state_get", "lorebook_search", "lorebook_list",
                   "memory_search")

    @property
    def workspace(self) -> Path:
        """The folder the model's file paths are relative to: the data folder when the chat lives in it."""
        from ..paths import home

        h = home().resolve()
        try:
            self.dir.resolve().relative_to(h)
            return h
        except ValueError:
            return self.dir.resolve()

    def _rel(self, p: Path) -> str:
        try:
            return Path(p).resolve().relative_to(self.workspace).as_posix()
        except ValueError:
            return Path(p).as_posix()

    @property
    def story(self):
        """The chat's chapter folder (``正文/``) with the agent file tools (core.story.StoryFolder)."""
        from ..story.workspace import StoryFolder

        if getattr(self, "_story", None) is None:
            (self.dir / "正文").mkdir(parents=True, exist_ok=True)
            self._story = StoryFolder(self.workspace, self.dir / "正文")
        return self._story

    @property
    def history_log(self):
        """The chat's checkpoints (core.checkpoints.StoryHistory over 正文/ and 历史/)."""
        from ..story.checkpoints import StoryHistory

        if getattr(self, "_hist", None) is None:
            self._hist = StoryHistory(self.dir / "正文", self.dir / "历史")
        return self._hist

    def agent_system(self) -> str:
        """The agent system prompt of this chat (byte-stable). The user's own rules live in the data folder:
        ``规则/agent.md`` replaces the shipped agent rules, ``规则/card.md`` is added after them (seed 000:
        userRules.agent / userRules.card); the card's AGENTS layer is ``extensions.liyuan.agents``."""
        from ..paths import home

        def rule(name: str) -> str:
            try:
                return (home() / "规则" / name).read_text("utf-8")
            except OSError:
                return ""

        agents = str((self.card.extensions.get("liyuan") or {}).get("agents") or "")
        return agent_system_prompt(cwd=str(self.workspace), card_path=self._rel(Path(self.card.path)) if self.card.path else self.card.name,
                                   story_dir=self._rel(self.dir / "正文"), user_rules=rule("agent.md"), card_rules=rule("card.md"),
                                   card_agents=agents, ctx=self.ctx)

    def agent_state_block(self) -> str:
        """【世界状态】【登场名录】【正文目录】 for the next turn (prose itself never enters the context)."""
        from ..story.workspace import format_story_index

        return agent_state_block(self.current_state(), format_story_index(self.story))

    def import_chapters(self, chapters: list[tuple[str, str]], message: str = "导入章节") -> Any:
        """Write chapters (file name, text) into 正文/ and make a user checkpoint (seed: 导入三章)."""
        for name, text in chapters:
            self.story.write(name, text)
        return self.history_log.commit(author="user", message=message)

    async def _agent_turn(self, user_text: str, ask: Optional[AskHandler], on_event: Optional[EventSink],
                          max_rounds: Optional[int]) -> BeatResult:
        from ..story.workspace import AGENT_FILE_TOOLS

        h = self.history()
        state = self.current_state()
        block = self.agent_state_block()
        system = self.agent_system()
        hist = h.prompt_messages()
        messages = [ChatMessage(role="system", content=system), *hist,
                    ChatMessage(role="user", content=f"{block}\n\n{user_text}")]
        self._emit(on_event, BeatStarted(beat=h.user_count, user=user_text, injection=block, activated=[],
                                         model=self.model.name, is_replay=getattr(self.model, "is_replay", False)))
        story = self.story
        extra = {sp.name: (sp, (lambda a, n=sp.name: story.call(n, a))) for sp in AGENT_FILE_TOOLS}
        from ..memory.search import memory_tool_spec

        msp = memory_tool_spec()  # the agent rules point to it (seed 000: 细节可用 memory_search 查)
        extra[msp.name] = (msp, lambda a: {"results": self.memory_search(a.query, a.limit)})
        inp = BeatInput(messages=messages, model=self.model, book=self.book, state=state, previous=None, ask=ask,
                        on_event=on_event, mode="discuss", tool_names=self.AGENT_TOOLS, extra_tools=extra,
                        macros=lambda t: apply_macros(t, self.ctx))
        out = await self._run_loop(inp, max_rounds)
        tree = self.tree
        user_entry = tree.latest("user")
        beat_entry = tree.append("beat", calls=out.calls, outcome=out.outcome, injection=block, activity=out.activity,
                                 warnings=out.warnings, error=out.error,
                                 sent=encode_sent(messages, system, hist, list(inp.tool_names)))
        result = BeatResult(user=user_text, injection=block, calls=[[t.name for t in c.tool_calls] for c in out.calls],
                            outcome=out.outcome, activity=list(out.activity), warnings=list(out.warnings),
                            error=out.error, sent=messages, output=out)
        if out.outcome == "discussed":
            result.final = out.final
            tree.append("assistant", text=out.final, sealed=True, beat=beat_entry.id)

        async def after_save() -> BeatResult:
            self._calibrate(messages, out, inp)
            return await self._agent_after_save(result, out, state, user_text, user_entry, story, on_event)

        try:
            tree.commit()
        except OSError as e:
            self._pending_finish = after_save  # checkpoint and scribe once the turn is saved (finish_pending)
            raise BeatSaveError(result, e) from e
        return await after_save()

    async def _agent_after_save(self, result: BeatResult, out: Any, state: WorldState, user_text: str, user_entry: Any,
                                story: Any, on_event: Optional[EventSink]) -> BeatResult:
        """An agent turn once it is on disk: the checkpoint of the chapter files, the scribe over changed chapters,
        compaction, accounting, BeatFinished."""
        cp = self.history_log.commit(author="agent", message=user_text, turn_id=user_entry.id if user_entry else None,
                                     aborted=out.outcome not in ("discussed",))
        result.checkpoint = cp.model_dump(exclude_none=True) if cp is not None else None
        changed = [] if cp is None else list(cp.changed.added) + list(cp.changed.modified) + [r["to"] for r in cp.changed.renamed]
        if changed:
            # the scribe keeps the ledger from the changed chapters only (discussion is not story)
            text = "\n\n".join(story.read(name) for name in sorted(changed))
            await self._scribe(result, state, "", text, on_event)
        else:
            fs = self.current_state()
            result.state, result.roster = format_state(fs), format_roster(fs)
            self._write_meta()
        if out.outcome == "discussed":
            await self.maybe_compact(on_event)
        self._account(result)
        self._emit(on_event, BeatFinished(outcome=out.outcome, final=result.final, sealed=out.outcome == "discussed",
                                          message=out.error or ""))
        return result

    async def _play(self, user_text: str, ask: Optional[AskHandler], on_event: Optional[EventSink],
                    max_rounds: Optional[int], draft: Optional[Draft] = None, note: str = "",
                    how: str = "send") -> BeatResult:
        # a chat already past the compaction level (imported, opened with a smaller model, a failed summary last
        # time) is compacted before it is sent, not only after the next sealed beat
        if self.compaction_share > 0 and self.context_usage()["used"] > self.compaction_share * self.context_window:
            await self.maybe_compact(on_event)
        if self.mode == "agent":
            return await self._agent_turn(user_text, ask, on_event, max_rounds)
        injection, activated, messages, state, previous = self.prepare(user_text)
        hist = self.history().prompt_messages()
        if note:  # after the user's own message (a preset may put "after" segments behind it)
            mine = f"{injection}\n\n{user_text}" if injection else user_text
            i = next((k for k in range(len(messages) - 1, -1, -1) if messages[k].role == "user" and messages[k].content == mine), len(messages) - 1)
            messages[i] = ChatMessage(role="user", content=f"{messages[i].content}\n\n{note}")
        beat_no = self._history.user_count
        self._emit(on_event, BeatStarted(beat=beat_no, user=user_text, injection=injection, activated=activated,
                                         model=self.model.name, is_replay=getattr(self.model, "is_replay", False), how=how,
                                         lore=self.lore_reasons()))
        if self.fixed_over:
            from ..beat.events import Activity

            self._emit(on_event, Activity(level="warning", text=(
                f"角色卡、常驻设定和预设本身就约有 {self.tokens.text(self._system):,} token，"
                f"超过了这个模型的上下文窗口（{self.context_window:,}）：请求很可能被服务商拒绝，"
                "换一个窗口更大的模型，或在设置里把窗口调成模型的真实大小。")))
        if self.dropped:
            from ..beat.events import Activity

            self._emit(on_event, Activity(level="warning", text=(
                f"提示词超出上下文窗口（{self.context_window:,} token）：最早的 {self.dropped} 条历史消息这一拍没有发送"
                "（仍在记录里，模型可用 memory_search 查；前情压缩会逐拍补上）")))
        inp = BeatInput(messages=messages, model=self.model, book=self.book, state=state,
                        previous=previous, ask=ask, on_event=on_event, initial_draft=draft,
                        macros=lambda t: apply_macros(t, self.ctx), **self._memory_tools())
        out = await self._run_loop(inp, max_rounds)
        tree = self.tree
        lore = getattr(self, "_last_lore", None)
        beat_entry = tree.append("beat", calls=out.calls, outcome=out.outcome, draft=out.draft.text,
                                 draft_version=out.draft.version, injection=injection, activated=activated,
                                 activity=out.activity, warnings=out.warnings, error=out.error,
                                 lore_timed=lore.timed.model_dump() if lore is not None else None,
                                 sent=encode_sent(messages, self._system, hist, list(inp.tool_names)))
        result = BeatResult(user=user_text, injection=injection, activated=activated,
                            calls=[[t.name for t in c.tool_calls] for c in out.calls], outcome=out.outcome,
                            sealed=out.sealed, activity=list(out.activity), warnings=list(out.warnings), error=out.error,
                            sent=messages, output=out)
        if out.revision is not None:
            target, text, version = out.revision
            tree.append("revision", target=target, text=text, version=version)
            result.revised_previous = True
            result.revised_text = text
        actor_ops: list[Any] = []
        if out.sealed and self._mvu_initial is not None and "<updatevariable" in out.final.lower():
            from ..ledger.mvu import parse_update_blocks, strip_update_blocks

            actor_ops = parse_update_blocks(out.final)  # applied before the scribe's patch; hidden from the reply
            out.final = strip_update_blocks(out.final)
        if out.sealed:
            result.final = out.final
            tree.append("assistant", text=out.final, sealed=True, beat=beat_entry.id)
        try:
            tree.commit()  # the beat is on disk (fsync) before the scribe runs
        except OSError as e:
            if out.sealed:  # the scribe runs once the beat is saved (finish_pending, after retry_save)
                async def after_save() -> BeatResult:
                    await self._scribe(result, state, user_text, out.final, on_event, actor_ops)
                    await self.maybe_compact(on_event)
                    self._account(result)
                    self._emit(on_event, BeatFinished(outcome="sealed", final=out.final, sealed=True, message="补记账"))
                    return result

                self._pending_finish = after_save
            raise BeatSaveError(result, e) from e
        self._calibrate(messages, out, inp)
        if out.sealed:
            await self._scribe(result, state, user_text, out.final, on_event, actor_ops)
            await self.maybe_compact(on_event)
        else:
            final_state = self.current_state()
            result.state = format_state(final_state)
            result.roster = format_roster(final_state)
            self._write_meta()
        self._account(result)
        self._emit(on_event, BeatFinished(outcome=out.outcome, final=result.final, sealed=result.sealed,
                                          message="" if out.sealed or out.revision else (out.error or "本拍尚未收笔")))
        return result

    async def _scribe(self, result: BeatResult, state: WorldState, user_text: str, final: str,
                      on_event: Optional[EventSink], actor_ops: Optional[list[Any]] = None) -> None:
        mvu = self.current_mvu()
        actor_applied: list[str] = []
        if mvu is not None and actor_ops:  # the actor wrote <UpdateVariable> anyway: applied first, then the scribe
            from ..ledger.mvu import apply_ops

            ar = apply_ops(mvu, actor_ops)
            mvu, actor_applied = ar.state, list(ar.applied)
            result.warnings += [f"演员输出的变量更新：{w}" for w in ar.warnings]
        panels = [p for p in self.current_panels() if p.data]  # ledger-only panels add nothing (seed 002)
        prev = self.previous_warnings()
        last = self.tree.latest("rp-state")
        if panels and last is not None and last.source == "scribe":
            prev += list(getattr(last, "panel_warnings", None) or [])
        sc = await run_scribe(self.scribe_model or self.model, state, user_name=self.persona, char_name=self.card.name,
                              user_text=user_text, assistant_text=final, previous_warnings=prev,
                              mvu=mvu, panels=panels or None, mvu_rules=self.mvu_rules)
        result.scribe = sc
        tree = self.tree
        if sc.result is not None:
            extra: dict[str, Any] = {}
            if mvu is not None:  # the variable tree lives in the same snapshot as the ledger
                mr = sc.mvu_result
                extra = {"mvu": (mr.state if mr else mvu).to_dict(), "mvu_applied": actor_applied + (list(mr.applied) if mr else []),
                         "mvu_warnings": list(mr.warnings) if mr else []}
                if actor_applied:
                    extra["mvu_actor_applied"] = actor_applied
                if mr:
                    result.warnings += list(mr.warnings)
            if panels:  # panel data lives in the same snapshot too: {panel id: data}
                from ..ledger.panels import panel_data

                extra.update(panels=panel_data(sc.panels if sc.panels is not None else panels),
                             panel_applied=list(sc.panel_applied), panel_warnings=list(sc.panel_warnings))
                result.warnings += list(sc.panel_warnings)
            tree.append("rp-state", state=sc.result.state.to_dict(), source="scribe", applied=sc.result.applied,
                        warnings=sc.result.warnings, raw=sc.raw, **extra)
            try:
                tree.commit()
            except OSError as e:
                raise BeatSaveError(result, e, stage="ledger") from e
            result.warnings += sc.problems + sc.result.warnings
        elif sc.error:
            result.warnings.append(sc.error)
            if actor_applied:  # the scribe failed, the actor's own updates still count
                tree.append("rp-state", state=state.to_dict(), source="scribe", warnings=[sc.error], mvu=mvu.to_dict(),
                            mvu_applied=actor_applied, mvu_actor_applied=actor_applied)
                try:
                    tree.commit()
                except OSError as e:
                    raise BeatSaveError(result, e, stage="ledger") from e
        final_state = self.current_state()
        result.state = format_state(final_state)
        result.roster = format_roster(final_state)
        self._write_meta()
        applied = list(sc.result.applied) if sc.result else []
        # the variable tree and the panels are kept in the same step: their changes are the scribe's work too
        applied += [f"变量 {x}" for x in actor_applied + (list(sc.mvu_result.applied) if sc.mvu_result else [])]
        applied += [f"面板 {x}" for x in (getattr(sc, "panel_applied", None) or [])]
        self._emit(on_event, ScribeFinished(applied=applied,
                                            warnings=(sc.problems + sc.result.warnings) if sc.result else [],
                                            state=result.state, roster=result.roster, error=sc.error))

    def transcript(self, start: int = 0, stop: Optional[int] = None) -> list[dict[str, Any]]:
        """What the conversation view shows for the active branch, oldest first: ``{"id", "role", "text", "beat"}``
        with role opening | user | assistant | draft (an unfinished beat's draft, with ``"outcome"``); revised
        replies carry their latest text and ``"revised": true``; a reply with alternatives (regenerates) carries
        ``"swipe": [index, count]`` (1-based), a user message with alternatives (edits) ``"branch": [index, count]``
        (see :meth:`swipe`). ``start``/``stop``: read only the branch path's entries ``[start:stop]`` (positions in
        ``tree.path_to()``), beat numbers and variables carried over from before ``start`` — for
        :meth:`transcript_page`, which picks cut points where that gives the same items."""
        items: list[dict[str, Any]] = []
        revised: dict[str, str] = {}
        path = self.tree.path_to()
        for e in path:
            if e.type == "revision":
                revised[e.target] = e.text
        beat = sum(1 for e in path[:start] if e.type == "user")
        mvu = self._mvu_before(path, start)
        from ..ledger.mvu import MvuState

        def vars_now() -> Any:
            return MvuState.from_any(mvu).to_dict() if mvu is not None else None

        for e in path[start:stop]:
            t = e.type
            if t == "rp-state" and getattr(e, "mvu", None) is not None:
                mvu = e.mvu
                last = next((i for i in reversed(items) if i["role"] in ("assistant", "opening")), None)
                if last is not None:  # the scribe's snapshot belongs to the reply it followed
                    last["variables"] = vars_now()
            if t == "opening":
                item = {"id": e.id, "role": "opening", "text": e.text, "beat": 0, "variables": vars_now()}
                k, n_alt = self.swipe_info(e.id)
                if n_alt > 1:  # alternate greetings
                    item["swipe"] = [k, n_alt]
                items.append(item)
            elif t == "user":
                beat += 1
                item = {"id": e.id, "role": "user", "text": e.text, "beat": beat}
                n_sib = self._count_user_siblings(e)
                if n_sib > 1:
                    item["branch"] = list(self.swipe_info(e.id))
                items.append(item)
            elif t == "assistant":
                item = {"id": e.id, "role": "assistant", "text": revised.get(e.id, e.text), "beat": beat, "variables": vars_now()}
                if e.id in revised:
                    item["revised"] = True
                k, n_alt = self.swipe_info(e.id)
                if n_alt > 1:
                    item["swipe"] = [k, n_alt]
                items.append(item)
            elif t == "beat" and e.outcome not in ("sealed", "revised_previous"):
                if items and items[-1]["role"] == "draft":
                    items.pop()
                draft = {"id": e.id, "role": "draft", "text": e.draft, "beat": beat, "outcome": e.outcome,
                         "error": e.error}
                k, n_alt = self.swipe_info(e.id)
                if n_alt > 1:  # a failed attempt on screen: the replies of the other attempts are one swipe away
                    draft["swipe"] = [k, n_alt]
                items.append(draft)
            if t in ("assistant", "revision") and items and len(items) >= 2 and items[-2]["role"] == "draft":
                items.pop(-2)
        for it in items:
            if it.get("variables", 0) is None:
                del it["variables"]
        return items

    def _mvu_before(self, path: list[Any], start: int) -> Any:
        """The raw variable tree in force just before ``path[start]``: the latest rp-state with ``mvu`` before it,
        else the card's initial tree (None without one)."""
        lay = getattr(self, "_layout", None)
        if start and lay is not None and lay[0] == len(path) and path and path[-1].id == lay[1]:
            k = bisect.bisect_left(lay[5], start)  # the layout knows where the snapshots with variables are
            return path[lay[5][k - 1]].mvu if k else self._mvu_initial
        for e in reversed(path[:start]):
            if e.type == "rp-state" and getattr(e, "mvu", None) is not None:
                return e.mvu
        return self._mvu_initial

    def _transcript_layout(self) -> tuple[list[str], list[int]]:
        """Entry ids and path positions of the items :meth:`transcript` returns for the active branch, in order —
        the same item rules, but read from entry types and beat outcomes only (no text, no dicts), so the count and
        the cut points of :meth:`transcript_page` cost O(new entries) per call (kept incrementally, like the
        history cache; rebuilt after a branch switch). Also notes the positions of snapshots with variables."""
        path = self.tree.path_to()
        lay = getattr(self, "_layout", None)
        if lay is None or not (lay[0] and len(path) >= lay[0] and path[lay[0] - 1].id == lay[1]):
            lay = (0, None, [], [], [], [])
        n, _, ids, pos, roles, mvu_pos = lay
        for p in range(n, len(path)):
            e = path[p]
            t = e.type
            if t == "rp-state" and getattr(e, "mvu", None) is not None:
                mvu_pos.append(p)
            if t in ("opening", "user", "assistant"):
                ids.append(e.id), pos.append(p), roles.append(t)
            elif t == "beat" and e.outcome not in ("sealed", "revised_previous"):
                if roles and roles[-1] == "draft":
                    ids.pop(), pos.pop(), roles.pop()
                ids.append(e.id), pos.append(p), roles.append("draft")
            if t in ("assistant", "revision") and len(roles) >= 2 and roles[-2] == "draft":
                del ids[-2], pos[-2], roles[-2]
        self._layout = (len(path), path[-1].id if path else None, ids, pos, roles, mvu_pos)
        return ids, pos

    def transcript_page(self, end: Optional[int] = None, count: int = 60) -> tuple[int, int, list[dict[str, Any]]]:
        """Items ``[first, end)`` of :meth:`transcript` (at most ``count``; ``end`` defaults to the total, i.e. the
        newest page) without building the others: returns ``(first, total, items)``, ``first`` being the index of
        ``items[0]`` in the full transcript. A 10,000-beat chat's last screen costs as much as a short chat's.
        The read starts at the user message at or before the page (nothing before it changes these items) and ends
        at the first reply after it (nothing later does)."""
        ids, pos = self._transcript_layout()
        total = len(ids)
        end = total if end is None else max(0, min(end, total))
        first = max(0, end - max(0, count))
        if first >= end:
            return first, total, []
        path = self.tree.path_to()
        start = pos[first]
        while start > 0 and path[start].type != "user":
            start -= 1
        stop = pos[end - 1] + 1
        while stop < len(path) and path[stop].type not in ("assistant", "opening"):
            stop += 1
        by_id = {it["id"]: it for it in self.transcript(start, stop + 1)}
        if all(i in by_id for i in ids[first:end]):
            return first, total, [by_id[i] for i in ids[first:end]]
        full = self.transcript()  # the layout rules fell behind transcript(): the slow way is always right
        first = max(0, min(end, len(full)) - count)
        return first, len(full), full[first:end]

    def transcript_items(self, page: int = 60) -> "TranscriptItems":
        """The active branch's transcript as a read-only sequence that builds only the pages that are read
        (:class:`TranscriptItems`; the newest ``page`` items are built at once)."""
        return TranscriptItems(self, page)

    def edit_state(self, state: WorldState) -> None:
        """The user edited the ledger: append a new snapshot (source user); the next beat uses it (seed 002). The
        variable tree is carried over unchanged."""
        mvu = self.current_mvu()
        extra = {"mvu": mvu.to_dict()} if mvu is not None else {}
        self.tree.append("rp-state", state=state.to_dict(), source="user", **extra)
        self.tree.persist_leaf()
        self._write_meta()

    # -- memory: token accounting, compaction, memory_search (issue 7) -------------------------------------------
    def _account(self, result: "BeatResult") -> None:
        """Fill ``result.tokens`` from the beat's call logs and the context meter."""
        calls = result.output.calls if result.output is not None else []
        result.tokens = {**call_tokens(calls), "context": self.context_usage()}

    def last_beat_tokens(self) -> Optional[dict[str, Any]]:
        """Token accounting of the newest beat on the shown branch, from its stored call logs (so the draft pane can
        show 「缓存命中」 after reopening): ``{"prompt", "cached", "completion", "cache_hit_share"}``, or None
        when the branch has no beat."""
        beat = self.tree.latest("beat")
        return call_tokens(beat.calls) if beat is not None else None

    def _calibrate_from_tree(self, last: int = 8) -> None:
        """Calibrate the token estimate from the newest beats (up to ``last``) on the branch that have usage and a
        ``sent`` record, oldest first as they were played (after opening a chat the ratio is derived from the tree,
        not stored beside it)."""
        found = []
        seen = 0
        for e in reversed(self.tree.path_to()):
            if e.type != "beat":
                continue
            seen += 1
            if seen > last:  # only the newest beats are read (each is parsed from disk on first access)
                break
            if e.calls and getattr(e, "sent", None) and int((e.calls[0].usage or {}).get("prompt_tokens") or 0) > 0:
                found.append(e)
        if not found:
            self.tokens.observed = -1  # nothing to learn from: do not look again
            return
        system = self.agent_system() if self.mode == "agent" else self._system
        path = self.tree.path_to()
        pos = {x.id: i for i, x in enumerate(path)}
        hc = HistoryCache()  # one cache, extended beat by beat: the history is read once, not once per beat
        for e in reversed(found):
            hist = hc.update(path[:pos[e.parent_id] + 1]).prompt_messages()
            msgs = decode_sent(e.sent, system, hist)
            specs = tool_specs_for(e.sent.get("tools") or [])
            self.tokens.observe(self.tokens.raw_messages(msgs) + self.tokens.raw(json.dumps(specs, ensure_ascii=False)),
                                int(e.calls[0].usage["prompt_tokens"]))

    def _calibrate(self, messages: list[ChatMessage], out: Any, inp: BeatInput) -> None:
        """Correct the token estimate with the first call's ``prompt_tokens`` as the server counted them."""
        if not out.calls:
            return
        actual = int((out.calls[0].usage or {}).get("prompt_tokens") or 0)
        if actual > 0:
            specs = tool_specs_for(list(inp.tool_names))
            if self.tokens.observed < 0:
                self.tokens.observed = 0
            self.tokens.observe(self.tokens.raw_messages(messages) + self.tokens.raw(json.dumps(specs, ensure_ascii=False)), actual)

    def context_usage(self) -> dict[str, Any]:
        """The context meter: ``{"used": tokens, "window": tokens, "share": used/window}`` — the estimated prompt of
        the next beat (system, history as sent, the ledger blocks, tool specs; the user's next words not counted),
        calibrated by the server's usage numbers once a call has returned them."""
        from ..beat.tools import tool_specs

        if self.tokens.observed == 0:
            self._calibrate_from_tree()
        # asked several times per beat (before sending, after the scribe, for the meter): computed once per state
        key = (self.tree.leaf_id, len(self.tree.order), self.tokens.ratio, self.context_window, self.mode)
        cached = getattr(self, "_usage_cache", None)
        if cached is not None and cached[0] == key:
            return dict(cached[1])
        h = self.history()
        state = self.current_state()
        injection = build_injection(state, [], self.book.index_titles(), self.language, memory_hint=bool(h.summaries))
        system = self.agent_system() if self.mode == "agent" else self._system
        used = (self.tokens.text(system) + self._history_tokens(h) + self.tokens.text(injection)
                + self.tokens.tools(tool_specs()) + 8)
        window = self.context_window
        out = {"used": used, "window": window, "share": round(used / window, 4) if window else 0.0}
        self._usage_cache = (key, out)
        return dict(out)

    def _history_tokens(self, h: HistoryCache) -> int:
        """Calibrated tokens of the history as sent, from the history cache's running sums."""
        return round(h.prompt_raw_tokens(lambda m: self.tokens.raw_messages((m,))) * self.tokens.ratio)

    def summaries(self) -> list[dict[str, Any]]:
        """The relay summaries (前情提要) active on the shown branch, earliest first:
        ``[{"id", "text", "beats": [first, last], "layer", "source"}]``."""
        return [{"id": e.id, "text": e.text, "beats": list(e.beats), "layer": e.layer, "source": e.source}
                for e in self.history().summary_list()]

    def edit_summary(self, summary_id: str, text: str) -> str:
        """The user rewrote a summary: a new summary entry (``edit_of`` the old one, source user) is appended on the
        branch; the next beat sends the new text. Returns the new entry's id. Raises KeyError for an id that is not
        an active summary of this branch, ValueError for an empty text."""
        if not text.strip():
            raise ValueError("摘要不能为空")
        h = self.history()
        old = h.summaries.get(summary_id)
        if old is None:
            raise KeyError(summary_id)
        e = self.tree.append("summary", text=text.strip(), upto=old.upto, beats=list(old.beats), layer=old.layer,
                             edit_of=old.id, source="user", tokens=self.tokens.text(text))
        self.tree.persist_leaf()
        self._write_meta()
        return e.id

    def _beat_numbers(self) -> dict[str, int]:
        beat = 0
        out: dict[str, int] = {}
        for e in self.tree.path_to():
            if e.type == "user":
                beat += 1
            elif e.type in ("assistant", "opening"):
                out[e.id] = beat
        return out

    async def maybe_compact(self, on_event: Optional[EventSink] = None) -> Optional[Any]:
        """After a sealed beat (seed 000: 收笔之后……再判断要不要压缩): when the next prompt would exceed
        ``compaction_share`` of ``context_window``, summarise the oldest turns into a layer-1 summary entry (cut
        down to about half the trigger level, the newest turns kept), then merge summaries into higher layers as
        :func:`memory.merge_plan` says. Returns the :class:`events.Compacted` event, or None when nothing was due.
        A failed summary call cuts nothing (the event carries the error). Raises OSError when the disk refuses."""
        from ..beat.events import Compacted
        from ..memory.search import TurnCost, format_turns, plan_cut, summarize, summary_limit

        if self.compaction_share <= 0:
            return None
        h = self.history()
        before = self.context_usage()["used"]
        threshold = int(self.compaction_share * self.context_window)
        if before <= threshold:
            return None
        beat_of = self._beat_numbers()
        turns = [TurnCost(t.assistant_id, beat_of.get(t.assistant_id, 0), t.user, t.final,
                          self.tokens.text(t.user or "") + self.tokens.text(t.final) + 8)
                 for t in h.turns if t.final is not None and t.assistant_id and h._end_of.get(t.assistant_id, 0) > h.cut]
        fixed = max(0, before - self.tokens.messages(self._uncompacted(h)))  # what no cut can shrink
        # a window barely larger than the card's fixed prompt: let the history have a fifth of the window before
        # compacting (up to 85% in all), or every beat would summarise a sliver and break the cached prefix
        threshold = max(threshold, min(int(self.context_window * 0.85), fixed + int(self.context_window * 0.2)))
        if before <= threshold:
            return None
        cut = plan_cut(turns, before, threshold, fixed=fixed)
        if not cut:
            return None
        # each summary call must fit the window too: the covered turns go in chunks of at most half of it, oldest
        # first, and one compaction makes at most SUMMARY_CALLS of them (a huge imported chat is caught up over
        # several beats; meanwhile _fit_window keeps each prompt inside the window)
        from ..memory.search import SUMMARY_CALLS

        budget = max(1500, int(self.context_window * 0.5) - 800)
        chunks: list[list[Any]] = [[]]
        size = 0
        for t in cut:
            if chunks[-1] and size + t.tokens > budget:
                if len(chunks) == SUMMARY_CALLS:
                    break
                chunks.append([])
                size = 0
            chunks[-1].append(t)
            size += t.tokens
        ev = Compacted(beats=[cut[0].beat, chunks[-1][-1].beat], layer=1, before=before)
        first = True
        for part in chunks:
            story = format_turns(part, self.persona, self.card.name)
            if first and h.cut == 0 and h.opening:
                story = f"【开场】\n{h.opening}\n\n{story}"
            first = False
            user = (f"【待压缩的剧情】第 {part[0].beat}–{part[-1].beat} 拍（摘要不超过 {summary_limit(len(story))} 字）：\n\n"
                    f"{story}")
            out = await summarize(self.scribe_model or self.model, prompt_resource("compact.md"), user)
            if out.text is None:
                ev.error = out.error
                if part is chunks[0]:
                    self._emit(on_event, ev)
                    return ev
                ev.beats = [cut[0].beat, part[0].beat - 1]
                break
            self.tree.append("summary", text=out.text, upto=part[-1].assistant_id, beats=[part[0].beat, part[-1].beat],
                             layer=1, tokens=self.tokens.text(out.text))
            self.tree.commit()
        ev.error = await self._merge_summaries() or ev.error
        ev.after = self.context_usage()["used"]
        self._write_meta()
        self._emit(on_event, ev)
        return ev

    def _uncompacted(self, h: HistoryCache) -> list[ChatMessage]:
        """The history messages a cut can still remove (those after the cut; the relay summary stays)."""
        return h.messages[h.cut:]

    async def _merge_summaries(self) -> Optional[str]:
        """Summaries of summaries (at most three layers, and together at most a fifth of the window); returns an
        error text when a merge call failed."""
        from ..memory.search import merge_plan, summarize

        for _ in range(6):
            plan = merge_plan(self.history().summary_list(), budget=int(self.context_window * 0.2))
            if plan is None:
                return None
            layer, group = plan
            user = "【待合并的摘要】按时间先后，合并成一份接力摘要（不超过 900 字）：\n\n" + "\n\n".join(
                f"（第 {s.beats[0]}–{s.beats[-1]} 拍）{s.text}" if s.beats else s.text for s in group)
            out = await summarize(self.scribe_model or self.model, prompt_resource("compact.md"), user)
            if out.text is None:
                return out.error
            first = group[0].beats[0] if group[0].beats else 0
            last = group[-1].beats[-1] if group[-1].beats else 0
            self.tree.append("summary", text=out.text, upto=group[-1].upto, beats=[first, last], layer=layer,
                             merges=[s.id for s in group], tokens=self.tokens.text(out.text))
            self.tree.commit()
        return None

    def _memory_index(self) -> Any:
        """The memory_search index of the active branch, extended incrementally while the branch only grows."""
        from ..memory.search import MemoryDoc, MemoryIndex

        path = self.tree.path_to()
        n, last = self._mem_at
        if self._mem is None or n > len(path) or (n and path[n - 1].id != last):
            self._mem, n = MemoryIndex(), 0
            self._mem_beat, self._mem_superseded = 0, {}
        idx = self._mem
        for e in path[n:]:
            t = e.type
            if t == "user":
                self._mem_beat += 1
                idx.add(MemoryDoc(e.id, "user", self._mem_beat, e.text))
            elif t in ("assistant", "opening"):
                idx.add(MemoryDoc(e.id, "final", self._mem_beat, e.text))
            elif t == "revision":
                old = idx.keys.get(e.target)
                idx.add(MemoryDoc(e.id, "final", idx.docs[old].beat if old is not None else self._mem_beat, e.text))
                if old is not None:
                    self._mem_superseded[old] = idx.keys[e.id]
            elif t == "summary":
                idx.add(MemoryDoc(e.id, "summary", (e.beats or [self._mem_beat])[-1], e.text))
            elif t == "rp-state" and getattr(e, "applied", None):
                idx.add(MemoryDoc(e.id, "ledger", self._mem_beat, "；".join(e.applied)))
        self._mem_at = (len(path), path[-1].id if path else None)
        return idx

    def memory_search(self, query: str, limit: int = 5) -> list[dict[str, Any]]:
        """``memory_search``: the finals, user words, summaries and ledger changes of the active branch ranked by
        BM25 over character bigrams / words (core.memory). Returns ``[{"beat", "kind", "snippet", "score"}]``, best
        first; ``kind`` final | user | summary | ledger. Replaced text (a revised reply) is not returned."""
        from ..memory.search import snippet

        idx = self._memory_index()
        skip = set(self._mem_superseded)
        tip = self.tree.path_to()[-1]
        if tip.type in ("user", "ask", "beat"):  # the words of the beat being played are in its prompt already
            user = self.tree.latest("user")
            if user is not None and user.id in idx.keys:
                skip.add(idx.keys[user.id])
        hits = idx.search(query, limit, exclude=skip)
        return [{"beat": d.beat, "kind": d.kind, "snippet": snippet(d.text, query), "score": round(sc, 3)}
                for d, sc in hits]

    def _memory_tools(self) -> dict[str, Any]:
        """BeatInput fields that add ``memory_search`` once the branch has been compacted (before that, every beat
        is in the prompt and the tool list stays as the seeds have it)."""
        if not self.history().summaries and not self.dropped:
            return {}
        from ..memory.search import memory_tool_spec
        from ..beat.tools import TOOLS_BY_NAME

        spec = memory_tool_spec()
        return {"tool_names": (*TOOLS_BY_NAME, spec.name),
                "extra_tools": {spec.name: (spec, lambda a: {"results": self.memory_search(a.query, a.limit)})}}

    # -- the prompt inspector (issue 7) ----------------------------------------------------------------------------
    def _beat_of_item(self, entry_id: str) -> Any:
        """The beat entry behind a transcript item: a draft item is the beat; a reply names its beat; a user
        message → the newest beat below it on the shown branch (else its newest beat child)."""
        e = self.tree.get(entry_id)
        if e.type == "beat":
            return e
        if e.type == "assistant":
            if e.beat and e.beat in self.tree.entries:
                return self.tree.get(e.beat)
            cur = e
            while cur.parent_id is not None:
                cur = self.tree.get(cur.parent_id)
                if cur.type == "beat":
                    return cur
            raise ValueError("这条回复没有模型调用记录（导入的或开场）")
        if e.type == "user":
            path = self.tree.path_to()
            ids = [x.id for x in path]
            if e.id in ids:
                beats = [x for x in path[ids.index(e.id) + 1:] if x.type == "beat"]
                nxt = next((x for x in path[ids.index(e.id) + 1:] if x.type == "user"), None)
                if nxt is not None:
                    beats = [x for x in beats if ids.index(x.id) < ids.index(nxt.id)]
                if beats:
                    return beats[-1]
            kids = [k for k in self.tree.children(e.id) if k.type == "beat"]
            if kids:
                return kids[-1]
        raise ValueError("这一项没有模型调用记录")

    def inspect_beat(self, entry_id: str) -> list[dict[str, Any]]:
        """Every model call of the beat behind a transcript item, exactly as sent (core.inspect): ``[{"round",
        "purpose": "actor", "request": {"messages": [OpenAI dicts], "tools": [specs]}, "reply": {"content",
        "reasoning", "finish_reason", "tool_calls": [{"id", "name", "arguments", "result", "ok"}]}, "usage", "model",
        "ms", "error"}]``, then the scribe's call (``"purpose": "scribe"``, its prompts rebuilt by the same functions
        from the ledger before the beat, ``"reply": {"content": raw}``) when the beat was sealed and kept. Beats
        written before this record existed have ``"request": None``. Raises KeyError/ValueError for an item without
        model calls."""
        beat = self._beat_of_item(entry_id)
        sent = getattr(beat, "sent", None)
        calls: list[dict[str, Any]]
        if sent:
            hist = HistoryCache().update(self.tree.path_to(beat.parent_id)).prompt_messages()
            system = self.agent_system() if self.mode == "agent" else self._system
            calls = rebuild_calls(decode_sent(sent, system, hist), beat.calls, tool_specs_for(sent.get("tools") or []))
        else:
            calls = [dict(c, request=None) for c in rebuild_calls([], beat.calls, [])]
        sc = self._inspect_scribe(beat)
        if sc is not None:
            calls.append(sc)
        return calls

    def _inspect_scribe(self, beat: Any) -> Optional[dict[str, Any]]:
        from ..ledger.scribe import scribe_system_prompt, scribe_user_text

        reply = next((k for k in self.tree.children(beat.id) if k.type == "assistant"), None)
        if reply is None:
            return None
        snap = next((k for k in self.tree.children(reply.id) if k.type == "rp-state" and k.source == "scribe"), None)
        if snap is None:
            return None
        before_path = self.tree.path_to(beat.parent_id)
        prev = next((x for x in reversed(before_path) if x.type == "rp-state"), None)
        state = WorldState.model_validate(prev.state) if prev else WorldState()
        warnings = (list(prev.warnings) + list(getattr(prev, "mvu_warnings", None) or [])) if prev and prev.source == "scribe" else []
        mvu = None
        if getattr(snap, "mvu", None) is not None:
            from ..ledger.mvu import MvuState

            mv = next((x for x in reversed(before_path) if x.type == "rp-state" and getattr(x, "mvu", None) is not None), None)
            mvu = MvuState.from_any(mv.mvu) if mv else (MvuState.initial(self._mvu_initial) if self._mvu_initial is not None else None)
            if getattr(snap, "mvu_actor_applied", None) and mvu is not None:  # the actor's own blocks came first
                from ..ledger.mvu import apply_ops, parse_update_blocks

                mvu = apply_ops(mvu, parse_update_blocks(beat.draft)).state
        panels = None
        if getattr(snap, "panels", None) is not None:
            from ..ledger.panels import panels_from_card, panels_with_data

            card_panels, _ = panels_from_card(self.card)
            pv = next((x for x in reversed(before_path) if x.type == "rp-state" and isinstance(getattr(x, "panels", None), dict)), None)
            panels = [p for p in (panels_with_data(card_panels, pv.panels) if pv else card_panels) if p.data] or None
            if panels and prev is not None and prev.source == "scribe":
                warnings += list(getattr(prev, "panel_warnings", None) or [])
        user = next((x for x in reversed(before_path) if x.type == "user"), None)
        user_text = "" if self.mode == "agent" else (user.text if user else "")
        system = scribe_system_prompt(state, self.persona, self.card.name, mvu, panels)
        text = scribe_user_text(state, self.persona, self.card.name, user_text, reply.text, warnings, mvu, panels,
                                self.mvu_rules)
        return {"round": len(beat.calls) + 1, "purpose": "scribe",
                "request": {"messages": [{"role": "system", "content": system}, {"role": "user", "content": text}], "tools": []},
                "reply": {"content": snap.raw or "", "reasoning": "", "finish_reason": None, "tool_calls": []},
                "usage": {}, "model": getattr(self.scribe_model or self.model, "name", ""), "ms": 0.0, "error": None,
                "applied": list(snap.applied), "warnings": list(snap.warnings)}
