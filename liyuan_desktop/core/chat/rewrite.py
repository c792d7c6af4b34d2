"""Rewrite a selection (issue 28): the author selects a passage of a chapter and asks the agent's model to rewrite,
expand or condense it; the answer is a proposal the author sees as a diff and accepts or rejects — the rest of the
chapter is never touched.

One model call, no tools: the system prompt says what to do with the passage (in the chat's language), the user
message carries the chapter's text before and after the passage (bounded: :data:`CONTEXT_BEFORE` /
:data:`CONTEXT_AFTER` characters) so the new words fit, the passage itself and the author's own instruction. The
answer is the new passage only (a code fence or a leading label the model adds is taken off).

Accepting writes the chapter with the passage replaced — only when the chapter still holds the same text at the same
place (UTF-16 offsets, as the editor counts) — and commits a user checkpoint 「改写 <file>」, so it is undone like
any edit. A proposal is a boundary-crossing model (pydantic).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal, Optional

from pydantic import BaseModel

from ..errors import ToolError
from ..llm.types import ChatMessage, ChatModel, ChatRequest, ModelError
from ..messages import message
from ..text import utf16_len

if TYPE_CHECKING:  # pragma: no cover
    from .facade import Chat

RewriteMode = Literal["rewrite", "expand", "condense"]
CONTEXT_BEFORE, CONTEXT_AFTER = 2000, 600
"""Characters of the chapter sent before and after the passage (the nearest ones)."""
PASSAGE_MAX = 6000
"""The longest passage (UTF-16 units) one call rewrites; longer selections are refused with a message."""
REWRITE_MAX_TOKENS = 4096

_TASK = {
    "zh": {"rewrite": "改写这段：意思和情节不变，文字更好——更具体、更有画面、节奏更好，人物口吻不变。",
           "expand": "扩写这段：情节不变，补足动作、感官细节、心理和对白，篇幅约为原文的一倍半到两倍。",
           "condense": "缩写这段：保留情节要点和关键对白，删掉重复和拖沓，篇幅约为原文的一半。"},
    "en": {"rewrite": "Rewrite this passage: same meaning and events, better prose — more concrete, more vivid, "
                      "better rhythm, the characters' voices kept.",
           "expand": "Expand this passage: same events, with action, sensory detail, thought and dialogue filled in, "
                     "about one and a half to two times as long.",
           "condense": "Condense this passage: keep the events and key lines, cut repetition and drag, about half "
                       "as long."},
}
_SYSTEM = {
    "zh": "你是这本小说的合著者。作者选中了一章里的一段，请你按要求处理这一段。{task}\n"
          "只输出新的这一段正文本身：不要解释，不要标题，不要引号或代码块，不要重复前后文。",
    "en": "You are the co-author of this novel. The author selected a passage of a chapter; do this to it: {task}\n"
          "Answer with the new passage only: no explanation, no heading, no quotes or code fences, and do not "
          "repeat the surrounding text.",
}
_USER = {
    "zh": "【前文】\n{before}\n\n【要处理的一段】\n{passage}\n\n【后文】\n{after}{note}",
    "en": "[Before]\n{before}\n\n[The passage]\n{passage}\n\n[After]\n{after}{note}",
}
_NOTE = {"zh": "\n\n【作者的要求】{text}", "en": "\n\n[The author asks] {text}"}


class RewriteProposal(BaseModel):
    """A proposed replacement: chapter ``file``, the passage's ``start``/``end`` (UTF-16 offsets in the chapter as it
    was read), ``old`` (the passage), ``new`` (the model's text), ``mode``, ``model`` (its name)."""

    file: str
    start: int
    end: int
    old: str
    new: str
    mode: str
    model: str = ""


def _py_index(text: str, utf16: int) -> int:
    """The Python index of UTF-16 offset ``utf16`` in ``text`` (ValueError when it falls inside a pair or outside)."""
    n = 0
    for i, ch in enumerate(text):
        if n == utf16:
            return i
        n += 2 if ord(ch) > 0xFFFF else 1
        if n > utf16:
            break
    if n == utf16:
        return len(text)
    raise ValueError(f"offset {utf16} is not a character boundary of the chapter")


def clean_answer(text: str) -> str:
    """The model's answer as a passage: a surrounding code fence, a leading 「改写后：」-like label and outer blank lines
    taken off."""
    t = text.strip()
    m = re.fullmatch(r"```[^\n]*\n(.*?)\n?```", t, re.S)
    if m:
        t = m.group(1).strip()
    t = re.sub(r"^(?:改写后|扩写后|缩写后|新的一段|Rewritten|Expanded|Condensed|New passage)\s*[:：]\s*", "", t,
               flags=re.I)
    return t.strip()


def _read(chat: "Chat", file: str) -> str:
    """Chapter ``file``'s text exactly as stored (no newline translation: offsets stay the editor's)."""
    target = chat.agent.story.resolve(file)
    if not target.is_file():
        raise ToolError("not_found", message("rewrite.no_chapter", file=file))
    try:
        with open(target, encoding="utf-8", newline="") as f:
            return f.read()
    except UnicodeDecodeError:
        raise ToolError("bad_args", message("rewrite.not_text", file=file)) from None


async def propose(chat: "Chat", file: str, start: int, end: int, mode: RewriteMode, instruction: str = "",
                  model: Optional[ChatModel] = None) -> RewriteProposal:
    """Ask ``model`` (else the chat's) for a new version of chapter ``file``'s passage [start, end) (UTF-16
    offsets). Raises ToolError: ``bad_args`` (an empty or over-long selection, an unknown mode, offsets outside the
    chapter), ``model_error`` (the call failed or answered nothing), and the story folder's errors (no such chapter)."""
    if mode not in ("rewrite", "expand", "condense"):
        raise ToolError("bad_args", message("rewrite.bad_mode", mode=mode))
    text = _read(chat, file)
    try:
        a, b = _py_index(text, start), _py_index(text, end)
    except ValueError:
        raise ToolError("bad_args", message("rewrite.bad_range")) from None
    old = text[a:b]
    if not old.strip() or a >= b:
        raise ToolError("bad_args", message("rewrite.empty"))
    if utf16_len(old) > PASSAGE_MAX:
        raise ToolError("bad_args", message("rewrite.too_long", n=PASSAGE_MAX))
    lang = "en" if chat.context.language == "en" else "zh"
    note = _NOTE[lang].format(text=instruction.strip()) if instruction.strip() else ""
    user = _USER[lang].format(before=text[max(0, a - CONTEXT_BEFORE):a].strip() or "—", passage=old,
                              after=text[b:b + CONTEXT_AFTER].strip() or "—", note=note)
    req = ChatRequest(messages=[ChatMessage(role="system", content=_SYSTEM[lang].format(task=_TASK[lang][mode])),
                                ChatMessage(role="user", content=user)],
                      max_tokens=REWRITE_MAX_TOKENS, thinking=False, purpose="summary", temperature=0.7)
    m = model or chat.model
    try:
        resp = await m.complete(req)
    except ModelError as e:
        raise ToolError("model_error", message("rewrite.failed", error=e.message)) from None
    new = clean_answer(resp.content or "")
    if not new:
        raise ToolError("model_error", message("rewrite.nothing"))
    return RewriteProposal(file=file, start=start, end=end, old=old, new=new, mode=mode,
                           model=resp.model or getattr(m, "name", ""))


def apply(chat: "Chat", p: RewriteProposal) -> str:
    """Write chapter ``p.file`` with the passage replaced by ``p.new`` and commit a user checkpoint 「改写 <file>」;
    returns the checkpoint id. ToolError ``conflict`` when the chapter no longer holds ``p.old`` at [start, end)
    (edited since: nothing is written); the story folder's errors otherwise."""
    text = _read(chat, p.file)
    try:
        a, b = _py_index(text, p.start), _py_index(text, p.end)
    except ValueError:
        a = b = -1
    if a < 0 or text[a:b] != p.old:
        raise ToolError("conflict", message("rewrite.conflict", file=p.file))
    chat.agent.story.write(p.file, text[:a] + p.new + text[b:])
    cp = chat.history_log.commit(author="user", message=chat.history_log.label("cp.label.rewrote", file=p.file))
    return str(cp.id) if cp is not None else ""
