"""Prompt assembly for a role-play beat.

- system = base skeleton + role-play definition (``resources/prompts/roleplay_system.md``) + card layers; it
  depends only on the card and the persona, so it is byte-identical across the beats of a chat (prefix caching).
- messages = the opening, then past beats as the user's words and the finals only (revisions applied; asks,
  tool calls and unsealed beats left out), then one user message = injection + blank line + the user's words.
- injection order (seed 002, 场景快照放在用户原话前面): 【世界状态】 【登场名录】 【本拍常驻设定】 【相关设定】 【设定集索引】
  【语言】 (【本拍常驻设定】: constants that vary per turn, see :mod:`.lore_layers`).
Golden: ``round2.json``/``round3.json`` ``injection`` and ``messages_sent`` (system aside).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Iterable, Optional, Sequence

from ..cards import Card
from ..cards.st_chat import OPENING_HEADER, opening_header, opening_in  # the header's one home (the ST import uses it)
from ..ledger.state import WorldState, format_roster, format_state, has_roster
from ..llm.types import ChatMessage
from ..lore import Lorebook
from ..lore.search import bounded_index
from ..macros import MacroContext, apply_macros
from .lore_layers import empty_wrapper_indices, example_lore, lore_slot, render_lore, system_constants
from .presets.model import Role
from .presets.prompter import DepthBlock
from .wording import BLOCKS, CARD_TITLES, RULES_FILES, lang_of

LANGUAGE_LINES = {
    "zh": "以中文写叙事与对白（专有名词可保留原文）。",
    "en": "Write narration and dialogue in English (proper nouns may keep their original spelling).",
    "ja": "叙述と台詞は日本語で書く（固有名詞は原語のままでもよい）。",
}


@lru_cache(maxsize=None)
def prompt_resource(name: str) -> str:
    """Text of a shipped prompt file under ``liyuan_desktop/resources/prompts`` (trailing newlines removed)."""
    return resources.files("liyuan_desktop").joinpath("resources", "prompts", name).read_text("utf-8").rstrip("\n")


def rules_text(kind: str, language: str = "zh") -> str:
    """The shipped rules file ``kind`` ("roleplay", "prose", "compact", "agent", "summary";
    :data:`.wording.RULES_FILES`) in the chat's ``language``."""
    return prompt_resource(RULES_FILES[kind][lang_of(language)])


def opening_text(card: Card, ctx: MacroContext, language: str = "zh", greeting: Optional[str] = None) -> str:
    """The opening as shown and sent: 「【开场 · 名字】」 ("[Opening · Name]" in a chat not in Chinese,
    ``cards.st_chat.opening_header``) then the card's first_mes — or ``greeting``, an alternate one — macros applied.
    Both headers are read back by ``cards.st_chat.OPENING_HEADER``."""
    return f"{opening_header(card.name, language)}\n{apply_macros(card.first_mes if greeting is None else greeting, ctx)}"


def opening_body(text: str) -> str:
    """The greeting without the 「【开场 · 名字】」 line :func:`opening_text` puts in front — what SillyTavern has as
    message 0 (world-info scans this, so a key such as 「开场」 does not fire on Liyuan's own header)."""
    return OPENING_HEADER.sub("", text, count=1)


#: The extension key of a group member's card joined with the others' (``group.prompt.speaker_card`` in SillyTavern's
#: "join character cards" modes): the joined members' names, which head the card section instead of the speaker's
#: own, so the system prompt is the same whoever of them speaks (the speaker is named at the end of the prompt).
GROUP_JOIN_KEY = "liyuan_group_join"


def card_layers(card: Card, book: Lorebook, ctx: MacroContext, language: str = "zh") -> str:
    """The card's part of the system prompt without a preset, in SillyTavern's default prompt order: 常驻设定
    (before-character lore, ``worldInfoBefore``), the definition fields that are present, 常驻设定（续）
    (after-character lore, ``worldInfoAfter``), the card's system prompt, the examples (with the example-message
    lore SillyTavern keeps around them), the post-history instructions, then who the user plays. The lore is the
    chat's fixed constants (:func:`.lore_layers.system_constants`, order ascending), so the text is byte-stable.
    The section titles are in the chat's ``language`` (:data:`.wording.CARD_TITLES`)."""
    w = CARD_TITLES[lang_of(language)]
    fixed = system_constants(book, card.name)
    before = render_lore([e for e in fixed if lore_slot(e) == "before"], ctx)
    after = render_lore([e for e in fixed if lore_slot(e) == "after"], ctx)
    top, bottom = example_lore(fixed, ctx)
    joined = card.extensions.get(GROUP_JOIN_KEY)  # a group's joined card: the heading names every joined member
    heading = BLOCKS[lang_of(language)]["list"].join(str(n) for n in joined) if isinstance(joined, list) and joined \
        else card.name
    sections = [w["card"].format(name=heading)]
    if before:
        sections.append(f"## {w['before']}\n{before}")

    def field(title: str, text: str) -> None:
        body = apply_macros(text or "", ctx).strip()
        if body:
            sections.append(f"## {title}\n{body}")

    field(w["description"], card.description)
    field(w["personality"], card.personality)
    field(w["scenario"], card.scenario)
    if after:
        sections.append(f"## {w['after_more'] if before else w['before']}\n{after}")
    field(w["system"], card.system_prompt)
    examples = "\n".join(x for x in (top, apply_macros(card.mes_example or "", ctx).strip(), bottom) if x)
    if examples:
        sections.append(f"## {w['examples']}\n{examples}")
    field(w["post"], card.post_history_instructions)
    if ctx.user:
        who = w["user"].format(user=ctx.user)
        if ctx.persona.strip():
            who += "\n" + apply_macros(ctx.persona, ctx).strip()
        sections.append(who)
    return "\n\n".join(sections)


_ROLES: dict[int, Role] = {0: "system", 1: "user", 2: "assistant"}


def lore_depth_blocks(result: Any, ctx: Optional[MacroContext] = None) -> list[Any]:
    """The @depth entries of an activation as depth injections (SillyTavern's WIDepthEntries: one message per
    (depth, role), contents joined by newlines; macros applied with ``ctx``, the beat's context). Keyed and
    constant @depth entries alike: they are instructions the card author placed in the chat, so they go where
    SillyTavern would put them — only here, never also in the system prompt. Wrappers left empty (a ``<Format>``
    entry and its ``</Format>`` with the rules between taken out) are dropped
    (:func:`.lore_layers.empty_wrapper_indices`)."""
    blocks = []
    for g in result.depth_groups():
        bodies = [e.body for e in g.entries if e.body]
        if ctx is not None:
            bodies = [apply_macros(b, ctx) for b in bodies]
        drop = empty_wrapper_indices(bodies)
        text = "\n".join(b for i, b in enumerate(bodies) if i not in drop).strip()
        if text:
            blocks.append(DepthBlock(depth=g.depth, order=100, role=_ROLES.get(g.role, "system"), text=text, source="lore"))
    return blocks


def system_prompt(card: Card, book: Lorebook, ctx: MacroContext, prompter: Any = None, language: str = "zh") -> str:
    """Full role-play system prompt (skeleton + definition + card layers), the engine's parts in the chat's
    ``language``. With a SillyTavern preset (``prompter``: :class:`presets.PresetPrompter`) its system layers take
    the card layers' place."""
    layers = prompter.system_layers if prompter is not None else card_layers(card, book, ctx, language)
    return f"{rules_text('roleplay', language)}\n\n{layers}"


def build_injection(
    state: WorldState,
    activated: Iterable[str],
    index: Iterable[str],
    language: str = "zh",
    summaries: Optional[list[str]] = None,
    memory_hint: bool = False,
    constants: str = "",
    lore: str = "",
    lore_last: bool = False,
) -> str:
    """The data blocks placed before the user's words, joined by blank lines. 【登场名录】 only when the roster has
    names; 【本拍常驻设定】 only with ``constants`` (the turn's constant lore that cannot sit in the byte-stable
    system prompt, rendered by :func:`.lore_layers.render_lore`); 【相关设定】 only with hits; 【设定集索引】 only
    with entries — above :data:`..lore.search.INDEX_MAX_TITLES` titles or :data:`..lore.search.INDEX_MAX_CHARS`
    characters it lists this beat's hits first and then book order up to those bounds, and says how many more exist
    and which tools reach them (:func:`..lore.search.bounded_index`). ``memory_hint``: the chat has been compacted and offers ``memory_search`` — the roster says to
    look details up there (issue 7). ``lore``: prose-only play (issue 18 §2, :mod:`.prose_only`) — the turn's
    activated entries as text (:func:`.lore_layers.render_lore`), sent in 【相关设定】 instead of their titles.
    ``lore_last``: the 【相关设定】 block of ``lore`` goes last, after 【语言】, right before the user's words (issue
    30 §2: prose-only play and the compact prompt, what small models get), under a header that says to use the
    facts in the model's own words (``lore_near``). Headers and lines in the chat's ``language`` (:data:`.wording.BLOCKS`; the
    ledger's labels too)."""
    w = BLOCKS[lang_of(language)]
    blocks: list[str] = []
    if summaries:
        blocks.append(summary_block(summaries, language))
    blocks.append(w["state"] + format_state(state, language))
    if has_roster(state):
        hint = w["memory_hint"] if memory_hint else ""
        blocks.append(f"{w['roster']}{format_roster(state, language)}{hint}")
    if constants:
        blocks.append(w["constants"].format(text=constants))
    hits = list(activated)
    if lore:
        if not lore_last:
            blocks.append(w["lore"].format(text=lore))
    elif hits:
        blocks.append(w["hits"].format(n=len(hits), titles=w["list"].join(hits)))
    idx = list(index)
    if idx:
        shown, more = bounded_index(idx, hits)
        if not more:
            blocks.append(w["index"].format(n=len(idx), titles=w["list"].join(idx)))
        else:  # a big book: the relevant titles first, and where the rest are (issue 15 item 10)
            blocks.append(w["index_big"].format(n=len(idx), shown=len(shown), titles=w["list"].join(shown), more=more))
    blocks.append(f"{w['language']}{LANGUAGE_LINES.get(language, LANGUAGE_LINES['zh' if lang_of(language) == 'zh' else 'en'])}")
    if lore and lore_last:  # next to the question, with what to do with it (a small model reads it last)
        blocks.append(w["lore_near"].format(text=lore))
    return "\n\n".join(blocks)


@dataclass(slots=True)
class HistoryTurn:
    """One past exchange as it enters the prompt: the user's words and the final (revised if edited). Imported
    chats can have a reply with no user message before it (``user`` None) or a user message with no reply
    (``final`` None, ``assistant_id`` "")."""

    user: Optional[str]
    final: Optional[str]
    assistant_id: str


class HistoryCache:
    """The history part of the prompt for the active branch, kept up to date incrementally.

    :meth:`update` takes the branch path (root first); when the path extends the one seen last time only the new
    entries are read, so a beat costs O(new entries), not O(chat length) (bench/beat_overhead.py). Any other path
    (branch switch) rebuilds from scratch. Rules: a user message followed by a reply is a turn; a user message of a
    beat that produced no reply (unsealed, stopped, a previous-beat edit) is left out; a user message followed
    directly by another user message (imported chats) is sent on its own, and so is a reply with no user message
    before it. Revisions replace the text of their target. ``messages`` holds the opening and the past turns as
    :class:`ChatMessage` objects, shared between beats (never mutate them). ``language``: the chat's (the
    【前情提要】 header of :meth:`prompt_messages` is written in it).
    """

    def __init__(self, language: str = "zh") -> None:
        self.language = language
        self.reset()

    def reset(self) -> None:
        """Forget everything: the next :meth:`update` rebuilds from the root."""
        self.n = 0
        self.last_id: Optional[str] = None
        self.opening: Optional[str] = None
        self.turns: list[HistoryTurn] = []
        self.messages: list[ChatMessage] = []
        self.user_count = 0
        self.revisions: dict[str, tuple[str, int]] = {}
        self._where: dict[str, tuple[int, int]] = {}
        self._who: dict[str, str] = {}  # a group chat's reply id → its speaker
        self._pending_user: Optional[str] = None
        self._beat_seen = False
        #: active relay summaries of the branch (summary entries), by id; ``cut`` = how many leading entries of
        #: ``messages`` they replace in the prompt (see :meth:`prompt_messages`)
        self.summaries: dict[str, Any] = {}
        self.cut = 0
        self._end_of: dict[str, int] = {}
        self._version = 0
        self._prompt: tuple[int, list[ChatMessage]] = (-1, [])
        self._psum: list[float] = []  # running token estimates of ``messages`` (see prompt_raw_tokens)

    def _named(self, who: Optional[str], text: str) -> str:
        """A reply as sent: a group chat's under its speaker's name (「名字：…」, "Name: …" in a chat not in
        Chinese)."""
        if not who:
            return text
        return f"{who}{'：' if lang_of(self.language) == 'zh' else ': '}{text}"

    def end_of(self, entry_id: str) -> int:
        """How many leading entries of ``messages`` end at or before the reply ``entry_id`` (0 when unknown): a
        turn whose end is past :attr:`cut` is still in the prompt."""
        return self._end_of.get(entry_id, 0)

    def _flush_user(self) -> None:
        if self._pending_user is not None and not self._beat_seen:
            self.turns.append(HistoryTurn(user=self._pending_user, final=None, assistant_id=""))
            self.messages.append(ChatMessage(role="user", content=self._pending_user))
        self._pending_user = None

    def update(self, path: Sequence[Any]) -> "HistoryCache":
        """Bring the cache to ``path`` (the branch's entries, root first) and return it: only the entries after the
        ones seen last time are read when ``path`` extends that path, else it is rebuilt from scratch."""
        n = self.n
        if n and (len(path) < n or path[n - 1].id != self.last_id):
            self.reset()
            n = 0
        for e in path[n:]:
            t = e.type
            if t == "user":
                self._flush_user()
                self._pending_user = e.text
                self._beat_seen = False
                self.user_count += 1
            elif t == "beat":
                self._beat_seen = True
            elif t == "assistant":
                text = self.revisions.get(e.id, (e.text, 0))[0]
                if self._pending_user is not None:
                    self._where[e.id] = (len(self.turns), len(self.messages) + 1)
                    self.messages.append(ChatMessage(role="user", content=self._pending_user))
                else:
                    self._where[e.id] = (len(self.turns), len(self.messages))
                self.turns.append(HistoryTurn(user=self._pending_user, final=text, assistant_id=e.id))
                who = getattr(e, "speaker", None)  # a group chat's reply: sent as 「名字：…」, as SillyTavern names them
                self.messages.append(ChatMessage(role="assistant", content=self._named(who, text)))
                if who:
                    self._who[e.id] = who
                self._end_of[e.id] = len(self.messages)
                self._pending_user = None
            elif t == "revision":
                self.revisions[e.target] = (e.text, e.version)
                where = self._where.get(e.target)
                if where is not None:
                    ti, mi = where
                    self.turns[ti].final = e.text
                    who = self._who.get(e.target)  # a group chat's reply keeps its speaker's name
                    self.messages[mi] = ChatMessage(role="assistant", content=self._named(who, e.text))
                    del self._psum[mi + 1:]
            elif t == "opening":  # (sent with the header of the chat's language: an older English chat's 【开场】)
                self.opening = opening_in(e.text, self.language)
                self.messages.insert(0, ChatMessage(role="assistant", content=self.opening))
                self._psum = []
                self._where = {k: (ti, mi + 1) for k, (ti, mi) in self._where.items()}
                self._end_of = {k: v + 1 for k, v in self._end_of.items()}
                self._end_of[e.id] = 1
            elif t == "summary":
                self._add_summary(e)
            else:
                continue
            self._version += 1
        self.n = len(path)
        self.last_id = path[-1].id if path else None
        return self

    def _add_summary(self, e: Any) -> None:
        """A summary entry on the path: an edit replaces the edited summary in place, a layer-2/3 summary replaces
        the ones it merges; the cut moves to the end of the newest covered reply (never backwards)."""
        if e.edit_of and e.edit_of in self.summaries:
            self.summaries = {(e.id if k == e.edit_of else k): (e if k == e.edit_of else v) for k, v in self.summaries.items()}
        else:
            for m in e.merges:
                self.summaries.pop(m, None)
            self.summaries[e.id] = e
            self.summaries = dict(sorted(self.summaries.items(), key=lambda kv: (kv[1].beats or [0])[0]))
        end = self._end_of.get(e.upto)
        if end is not None:
            self.cut = max(self.cut, end)

    def summary_list(self) -> list[Any]:
        """The active summary entries, earliest covered beats first."""
        return list(self.summaries.values())

    def prompt_messages(self) -> list[ChatMessage]:
        """The history as sent: ``messages`` when nothing is compacted (the same list object); otherwise 【前情提要】
        (the active summaries, earliest first, "是既定事实") followed by the messages after the cut, the block
        joined to the first kept user message so roles still alternate. Cached until the history changes, so the
        same objects are sent beat after beat (the cached prefix survives until the next compaction)."""
        if not self.summaries:
            return self.messages
        if self._prompt[0] == self._version:
            return self._prompt[1]
        block = summary_block([s.text for s in self.summaries.values()], self.language)
        rest = self.messages[self.cut:]
        if rest and rest[0].role == "user":
            out = [ChatMessage(role="user", content=f"{block}\n\n{rest[0].content}"), *rest[1:]]
        else:
            out = [ChatMessage(role="user", content=block), *rest]
        self._prompt = (self._version, out)
        return out


    def prompt_raw_tokens(self, raw_of: Any) -> float:
        """The token estimate of :meth:`prompt_messages`, ``raw_of(message)`` summed — kept as running sums over
        ``messages``, so a beat costs the new messages only, not the whole history (bench/long_session.py)."""
        ps = self._psum
        if not ps:
            ps.append(0.0)
        for m in self.messages[len(ps) - 1:]:
            ps.append(ps[-1] + raw_of(m))
        if not self.summaries:
            return ps[-1]
        pm = self.prompt_messages()
        rest = self.messages[self.cut:]
        start = self.cut + (1 if rest and rest[0].role == "user" else 0)
        total: float = raw_of(pm[0]) + ps[-1] - ps[start]
        return total


def summary_block(texts: list[str], language: str = "zh") -> str:
    """【前情提要】 with the relay summaries, earliest first (seed 000 buildAgentStateBlock wording; the header in
    the chat's ``language``)."""
    return BLOCKS[lang_of(language)]["summaries"] + "\n\n".join(texts)


def history_from_path(path: list[Any]) -> tuple[Optional[str], list[HistoryTurn]]:
    """(opening, past turns) of a branch path (root first), rebuilt from scratch."""
    h = HistoryCache().update(path)
    return h.opening, h.turns


def build_messages(system: str, history: list[ChatMessage], injection: str, user_text: str) -> list[ChatMessage]:
    """The message list of the first call of a beat: system, the history, then injection + blank line + words."""
    return [ChatMessage(role="system", content=system), *history,
            ChatMessage(role="user", content=f"{injection}\n\n{user_text}" if injection else user_text)]


def agent_system_prompt(*, cwd: str, card_path: str, story_dir: str, user_rules: str = "", card_rules: str = "",
                        card_agents: str = "", ctx: Optional[MacroContext] = None, language: str = "zh") -> str:
    """The agent-mode system prompt (seed 000, 写长篇; golden ``agent.json`` ``system``): the shipped agent rules
    (``resources/prompts/agent_system.md``; the user's own rules replace them when given), the user's card rules,
    the card's AGENTS layer (macros applied), then the work dir / card / story dir lines; the shipped rules and the
    lines in the chat's ``language``. Byte-stable per chat."""
    sections = [(user_rules.strip() or rules_text("agent", language)).strip()]
    if card_rules.strip():
        sections.append(card_rules.strip())
    if card_agents.strip():
        sections.append(apply_macros(card_agents.strip(), ctx) if ctx is not None else card_agents.strip())
    sections.append(BLOCKS[lang_of(language)]["agent_dirs"].format(cwd=cwd, card=card_path, story=story_dir))
    return "\n\n".join(sections)


def agent_state_block(state: WorldState, story_index: str, summaries: Optional[list[str]] = None,
                      language: str = "zh") -> str:
    """The project state block sent before the user's words in agent mode (seed 000 buildAgentStateBlock; golden
    ``agent.json`` ``stateBlock``): 【前情提要】 (when present) → 【世界状态】 → 【登场名录】 (when it has names) →
    【正文目录】. Prose never enters it: only the chapter index. Headers in the chat's ``language``."""
    w = BLOCKS[lang_of(language)]
    blocks: list[str] = []
    if summaries:
        blocks.append(summary_block(summaries, language))
    blocks.append(w["state"] + format_state(state, language))
    if has_roster(state):
        blocks.append(w["roster"] + format_roster(state, language))
    blocks.append(story_index)
    return "\n\n".join(blocks)
