"""Agent mode (seed 000, 写长篇 / 检查点): the chat's chapter folder ``正文/`` with the file tools, its
checkpoints (``历史/``; a new novel in English has ``chapters/`` and ``history/``, :mod:`core.story.layout`), the agent system prompt and state block, importing chapters, and restoring a checkpoint
with or without the conversation (「只恢复正文」 / 「正文和对话一起回到这一轮之前」, the front ends' 撤销本轮).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from ..beat.text_calls import text_call_candidates
from ..beat.tools.sets import AGENT_TOOLS, WRITING_TOOLS
from ..cards import Card
from ..ledger.state import WorldState
from ..macros import MacroContext
from ..messages import Msg, message
from ..paths import home
from ..prompt.assemble import agent_state_block, agent_system_prompt
from ..session.tree import SessionTree
from ..story.checkpoint_model import Checkpoint
from ..story.checkpoints import StoryHistory
from ..story.layout import history_dir, outline_file, story_dir
from ..story.workspace import StoryFolder, format_story_index

#: Said under an agent reply that claims edits when no write tool changed a file this turn (issue 18 §0: a small
#: model answered 「改好了第三章」 and no file changed).
NO_EDITS_NOTICE = message("agent.no_edits")  # one language each, rendered by the front end

# Claims of having changed the manuscript, in Chinese and English. A claim, not a plan or a question: 「我来改」,
# 「要不要改」 and "I'll update" are not matched.
_CLAIMS = re.compile(
    r"(?:改好了|改完了|写好了|写完了|已(?:经)?(?:修改|改好|改完|改写|重写|更新|写入|写好|补写|续写|替换|删除|删去|加入|添加|调整|润色)"
    r"|(?:修改|更新|改写|重写|写入)(?:完成|完毕|好了)"
    r"|\bI(?:'ve| have)\s+(?:now\s+|just\s+)?(?:updated|changed|rewritten|rewrote|edited|revised|modified|written|added|removed|fixed|replaced)\b"
    r"|\b(?:has|have) been (?:updated|changed|rewritten|edited|revised|modified|written|added|removed|replaced)\b)",
    re.IGNORECASE)


def shown_path(path: Path) -> str:
    """How the agent prompt names a folder (issue 18: the absolute path, and with it the OS user name, went to
    the provider): ``~/…`` relative to the user's home folder, else ``…/<folder name>``; never the absolute path."""
    p = Path(path)
    try:
        rel = p.resolve().relative_to(Path.home().resolve())
    except (ValueError, RuntimeError, OSError):
        return f"…/{p.name}" if p.name else "…"
    return "~" if str(rel) == "." else f"~/{rel.as_posix()}"


def claims_edits(text: str) -> bool:
    """Whether an agent reply says it changed files (「改好了」「已修改」「I've updated…」…, :data:`_CLAIMS`)."""
    return bool(text) and _CLAIMS.search(text) is not None


def wrote_files(calls: list[Any]) -> bool:
    """Whether any call log of the turn ran a write-mode tool (``edit`` / ``write``) successfully."""
    return any(t.ok and t.mode == "write" for c in calls for t in c.tool_calls)


_EDIT_NAME = re.compile(r"write|edit|replace|insert|append|patch|update|create|save", re.IGNORECASE)


def edit_call_in_text(text: str) -> bool:
    """Whether an agent reply still carries, as text, a call that looks like a file write/edit (a ```json block,
    ``<tool_call>`` or bare JSON naming write/edit/replace…; :mod:`core.beat.text_calls`). Calls that could run
    were taken out of the reply and run, so one left in the text could not (unknown tool or invalid arguments)."""
    return any(_EDIT_NAME.search(c.name) for c in text_call_candidates(text))


def pasted_result(final: str, calls: list[Any]) -> bool:
    """Whether an agent reply ``final`` is nothing but one of this turn's tool results pasted back (a JSON object,
    fenced or bare, equal to the ``result`` of a call in ``calls``). Seen on the real 1.5B (``bench/real_model.py``,
    issue 30 §5): asked for a chapter, it called ``read`` on a file that did not exist and answered with the
    ``not_found`` result word for word — the reply looked like an answer and nothing said no file changed."""
    results = [t.result for c in calls for t in c.tool_calls if isinstance(t.result, dict)]
    body = final.strip()
    if not results:
        return False
    if body.startswith("```"):
        body = body.strip("`").strip()
        body = body[4:].lstrip() if body[:4].lower() == "json" else body
    if not body.startswith("{"):
        return False
    try:
        pasted = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth (a junk reply)
        return False
    return pasted in results


def unbacked_claim(final: str, calls: list[Any]) -> bool:
    """True when an agent turn's reply ``final`` claims edits (:func:`claims_edits`), carries a write/edit call
    written as text that could not run (:func:`edit_call_in_text`) or only pastes a tool result back
    (:func:`pasted_result`), and no tool made one (:func:`wrote_files` over its ``calls``): the front ends show
    :data:`NO_EDITS_NOTICE` under it."""
    return ((claims_edits(final) or edit_call_in_text(final) or pasted_result(final, calls))
            and not wrote_files(calls))


@dataclass(frozen=True)
class RestoreResult:
    """What a restore did: ``checkpoint`` (the new restore checkpoint), ``files_to`` (the checkpoint whose files
    the folder now holds), ``old_leaf`` (the active leaf before, when the conversation moved; else None)."""

    checkpoint: Checkpoint
    files_to: Checkpoint
    old_leaf: Optional[str]


class AgentDesk:
    """The agent-mode parts of one chat folder ``directory`` (created lazily: a role-play chat never makes
    ``正文/``)."""

    def __init__(self, directory: Path, tree: SessionTree, card: Card, ctx: MacroContext):
        self.dir, self.tree, self.card, self.ctx = Path(directory), tree, card, ctx
        self._story: Optional[StoryFolder] = None
        self._hist: Optional[StoryHistory] = None
        #: the chat's language (issue 32): the agent prompt, the state block and the file tools' answers are in it
        self.language = "zh"
        #: extra blocks after 【正文目录】 (the writing room's 【大纲】【伏笔】…; "" adds nothing — byte-stable)
        self.extra_blocks: Optional[Callable[[WorldState], str]] = None

    @property
    def workspace(self) -> Path:
        """The folder the model's file paths are relative to: the data folder when the chat lives in it."""
        h = home().resolve()
        try:
            self.dir.resolve().relative_to(h)
            return h
        except ValueError:
            return self.dir.resolve()

    def _rel(self, p: Path) -> str:
        try:
            return Path(p).resolve().relative_to(self.workspace).as_posix()
        except ValueError:  # outside the work dir: never the absolute path (shown_path)
            return shown_path(Path(p))

    @property
    def story(self) -> StoryFolder:
        """The chapter folder (``正文/`` — ``chapters/`` for a new novel in English, :mod:`core.story.layout` —
        created on first use) with the agent file tools."""
        if self._story is None:
            folder = story_dir(self.dir, self.language)
            folder.mkdir(parents=True, exist_ok=True)
            self._story = StoryFolder(self.workspace, folder)
            self._story.language = self.language
        return self._story

    @property
    def history_log(self) -> StoryHistory:
        """The checkpoints of ``正文/`` (kept in ``历史/``; ``chapters/`` and ``history/`` in the English layout)."""
        if self._hist is None:
            self._hist = StoryHistory(story_dir(self.dir, self.language), history_dir(self.dir, self.language))
        return self._hist

    def system(self) -> str:
        """The agent system prompt (byte-stable). The user's own rules live in the data folder: ``规则/agent.md``
        replaces the shipped agent rules, ``规则/card.md`` is added after them (seed 000: userRules.agent /
        userRules.card); the card's AGENTS layer is ``extensions.liyuan.agents``."""
        def rule(name: str) -> str:
            try:
                return (home() / "规则" / name).read_text("utf-8")
            except OSError:
                return ""

        agents = str((self.card.extensions.get("liyuan") or {}).get("agents") or "")
        card_path = self._rel(Path(self.card.path)) if self.card.path else self.card.name
        return agent_system_prompt(cwd=shown_path(self.workspace), card_path=card_path, story_dir=self._rel(story_dir(self.dir, self.language)),
                                   user_rules=rule("agent.md"), card_rules=rule("card.md"), card_agents=agents, ctx=self.ctx,
                                   language=self.language)

    def state_block(self, state: WorldState) -> str:
        """【世界状态】【登场名录】【正文目录】 for the next turn (prose itself never enters the context)."""
        label = self.story.story_dir.name + "/"  # 正文/ (the seed's line) or chapters/
        block = agent_state_block(state, format_story_index(self.story, label, language=self.language),
                                  language=self.language)
        extra = self.extra_blocks(state) if self.extra_blocks is not None else ""
        return f"{block}\n\n{extra}" if extra else block

    def tool_names(self) -> tuple[str, ...]:
        """The tools an agent turn offers: :data:`AGENT_TOOLS`, plus the outline tools when the chat has an outline
        (``大纲.md`` / ``outline.md``) — a chat without one sends the same tool block as before (golden agent runs)."""
        if outline_file(self.dir, self.language).is_file():
            return (*AGENT_TOOLS, *WRITING_TOOLS)
        return AGENT_TOOLS

    def import_chapters(self, chapters: list[tuple[str, str]], message: str = "") -> Optional[Checkpoint]:
        """Write chapters (file name, text) into the chapter folder and make a user checkpoint (seed: 导入三章)."""
        for name, text in chapters:
            self.story.write(name, text)
        return self.history_log.commit(author="user", message=message or self.history_log.label("cp.label.imported"))

    def turn_user(self, cp: Checkpoint) -> Optional[Any]:
        """The user entry of the agent turn that ended in checkpoint ``cp`` (None for a user checkpoint or when
        the turn is not in this tree)."""
        if not cp.turnId or cp.turnId not in self.tree.entries:
            return None
        e = self.tree.get(cp.turnId)
        return e if e.type == "user" else None

    def restore(self, checkpoint_id: str, with_conversation: bool = False, message: str = "") -> RestoreResult:
        """Restore a checkpoint. Files only: the folder becomes exactly that checkpoint; the conversation stays.
        ``with_conversation`` (撤销本轮, for a checkpoint an agent turn made): the folder becomes the checkpoint
        *before* it (the files as they were before the turn) and the active leaf moves to the parent of the turn's
        user entry (the old conversation stays in the tree as a branch). Both first record the folder as it is,
        so the checkpoint just before the new one undoes the restore. Raises KeyError for an unknown checkpoint,
        ValueError when the conversation cannot go back (no turn, or no checkpoint before it), OSError."""
        cps = self.history_log.checkpoints()
        idx = next((i for i, c in enumerate(cps) if c.id == checkpoint_id), None)
        if idx is None:
            raise KeyError(checkpoint_id)
        cp = cps[idx]
        if not with_conversation:
            done = self.history_log.restore(cp.id, author="user", message=message or self.history_log.label("cp.label.restored_to", message=cp.message))
            return RestoreResult(done, cp, None)
        user = self.turn_user(cp)
        if user is None:
            raise ValueError(Msg("checkpoint.not_turn_end", id=cp.id))  # (``message`` is a parameter here)
        if idx == 0:
            raise ValueError(Msg("checkpoint.first", id=cp.id))
        before = cps[idx - 1]
        old_leaf = self.tree.leaf_id
        done = self.history_log.restore(before.id, author="user", message=message or self.history_log.label("cp.label.undo_turn", message=cp.message))
        if user.parent_id is not None:
            self.tree.set_leaf(user.parent_id)
            self.tree.commit()
        return RestoreResult(done, before, old_leaf)

    def undo_restore(self, checkpoint_id: str, old_leaf: Optional[str]) -> Checkpoint:
        """Undo a restore: the folder back to ``checkpoint_id`` (the one recorded just before the restore) and, when
        the conversation had moved, the active leaf back to ``old_leaf`` (ignored when no longer in the tree).
        Returns the new checkpoint. Raises CheckpointNotFound / OSError."""
        done = self.history_log.restore(checkpoint_id, author="user", message=self.history_log.label("cp.label.undo_restore"))
        if old_leaf and old_leaf in self.tree.entries:
            self.tree.set_leaf(old_leaf)
            self.tree.commit()
        return done
