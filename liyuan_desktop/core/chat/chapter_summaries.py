"""Chapter summaries made by the model (issue 28; storage and the state block: ``core/story/summaries.py``).

After an agent turn that wrote or changed chapters, the chapters whose summary is missing or stale are summarised,
one model call each (purpose "summary", no tools, in the chat's language), at most :data:`AUTO_MAX` per turn so a
big import does not stall the turn's tail — the rest follow on later turns or with 总结章节 / ``liyuan story
summaries --make``. A replay model plays recorded turns only, so automatic summaries are skipped for it (the
recorded runs stay byte-for-byte). A failed call leaves the old summary and says so in the activity list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ..llm.types import ChatMessage, ChatModel, ChatRequest, ModelError
from ..messages import message
from ..story.summaries import rows, set_summary, text_sha

if TYPE_CHECKING:  # pragma: no cover
    from .facade import Chat

AUTO_MAX = 3
"""Chapters summarised automatically after one turn, at most."""
CHAPTER_MAX_CHARS = 16000
"""The chapter text sent is cut to this many characters (its beginning and end kept)."""
SUMMARY_MAX_TOKENS = 600

_SYSTEM = {
    "zh": "你在给一部长篇小说做章节摘要，供后面写作时查对前文。用 3 到 6 句话概括这一章：发生了什么；"
          "谁知道了什么、谁和谁的关系变了；新出现的人名、地名、物件；埋下或回收的伏笔。只写事实，不评价，"
          "不写标题，不用列表。",
    "en": "You write chapter summaries of a novel, for checking earlier chapters while writing later ones. Summarise "
          "this chapter in 3 to 6 sentences: what happened; who learned what, whose relationships changed; new "
          "names of people, places and things; threads planted or paid off. Facts only, no judgement, no heading, "
          "no list.",
}


def _cut(text: str) -> str:
    if len(text) <= CHAPTER_MAX_CHARS:
        return text
    half = CHAPTER_MAX_CHARS // 2
    return text[:half] + "\n……\n" + text[-half:]


async def summarize(chat: "Chat", files: Optional[list[str]] = None, model: Optional[ChatModel] = None,
                    limit: Optional[int] = None) -> tuple[list[str], list[str]]:
    """Summarise ``files`` (default: every chapter whose summary is missing or stale), at most ``limit``; returns
    (files summarised, problems as catalog messages — rendered in the reader's language by the front end). Never raises for a failed call."""
    story_dir = chat.writing.story_dir  # 正文/ or chapters/ (story.layout)
    wanted = [r.file for r in rows(chat.dir, story_dir) if (files is None and r.stale) or (files and r.file in files)]
    if limit is not None:
        wanted = wanted[:limit]
    lang = "en" if chat.context.language == "en" else "zh"
    m = model or chat.model
    done: list[str] = []
    problems: list[str] = []  # core.messages.Msg values
    for f in wanted:
        try:
            with open(story_dir / f, encoding="utf-8", newline="") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as e:
            problems.append(message("chsum.unreadable", file=f, error=str(e)))
            continue
        req = ChatRequest(messages=[ChatMessage(role="system", content=_SYSTEM[lang]),
                                    ChatMessage(role="user", content=f"{f}\n\n{_cut(text)}")],
                          max_tokens=SUMMARY_MAX_TOKENS, thinking=False, purpose="summary", temperature=0.2)
        try:
            resp = await m.complete(req)
        except ModelError as e:
            problems.append(message("chsum.failed", file=f, error=e.message))
            continue
        out = " ".join((resp.content or "").split())
        if not out:
            problems.append(message("chsum.empty", file=f))
            continue
        try:
            set_summary(chat.dir, story_dir, f, out, "model", sha=text_sha(text))
        except (OSError, ValueError) as e:
            problems.append(message("chsum.unreadable", file=f, error=str(e)))
            continue
        done.append(f)
    return done, problems
