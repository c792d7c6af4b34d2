"""``memory_search`` (issue 7), declared once: the role-play set of a compacted branch and the agent set offer it.

The search itself (BM25 over the branch's finals, summaries and ledger changes) is :mod:`core.memory.search`; the
chat hands it to the beat as ``ctx.memory_search``. The result is ``{"results": [{"beat", "kind", "snippet",
"score"}]}``, best first.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ...errors import ToolError
from ...ledger.wording import applied_in_words
from ...messages import Msg
from .context import ToolContext
from .registry import en, spec_language, tool


class MemorySearchArgs(BaseModel):
    query: str = Field(description="要查的细节：人名、物件、地点、事件或一句话里的关键词，多个词用空格分开",
                       json_schema_extra=en("The detail to look up: a name, an object, a place, an event or key words "
                                            "of a sentence, several words separated by spaces"))
    limit: int = Field(5, ge=1, le=10, description="最多返回几条", json_schema_extra=en("At most this many results are returned"))


MEMORY_SEARCH_DESCRIPTION = (
    "在本局当前分支的全部往事里查细节：每一拍的定稿原文、用户说过的话、【前情提要】和账本的变化。"
    "【前情提要】只留要点；写到更早的人物、物件、约定、数字时，先用它查原文再写。返回最相关的几段和它们在第几拍。"
)


MEMORY_SEARCH_DESCRIPTION_EN = (
    "Look details up in everything that happened on this story's current branch: each beat's final text, what the "
    "user said, [Story so far] and the ledger's changes. [Story so far] keeps only the gist; when you write about "
    "earlier people, objects, agreements or numbers, look the original text up with this first. Returns the most "
    "relevant passages and the beat each is from."
)


@tool("memory_search", "read", MemorySearchArgs, MEMORY_SEARCH_DESCRIPTION, en=MEMORY_SEARCH_DESCRIPTION_EN)
def _memory_search(ctx: ToolContext, a: MemorySearchArgs) -> dict[str, Any]:
    if ctx.memory_search is None:
        raise ToolError("unavailable", "这一局还没有可查的往事记录，memory_search 用不了。",
                        en="This story has no record to search yet; memory_search cannot be used.")
    results = ctx.memory_search(a.query, a.limit)
    if spec_language(ctx.language) == "en":  # the ledger's applied lines said in English (ledger.wording)
        results = [{**r, "snippet": _ledger_in_english(str(r.get("snippet", "")))} if r.get("kind") == "ledger" else r
                   for r in results]
    return {"results": results}


def _ledger_in_english(snippet: str) -> str:
    """A ``ledger`` snippet (the scribe's applied lines joined by 「；」) with each line in English words; a line cut
    by the snippet's window stays as it is."""
    out = []
    for line in snippet.split("；"):
        said = applied_in_words(line.strip())
        out.append(said.render("en") if isinstance(said, Msg) else line.strip())
    return "; ".join(out)
