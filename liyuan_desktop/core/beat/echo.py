"""Our own injection echoed back in a reply (issue 18 §0): small models answer with the data blocks we put before
the user's words (【世界状态】…【语言】…) or imitate the 【开场 · 名字】 label of the opening. Captured prose must never
seal such text.

:func:`strip_echo` removes, from text the loop captures:

* every block of this beat's injection (the text sent before the user's words, split at blank lines) that the
  reply repeats word for word (inside a paragraph when at least 8 characters long, else as a whole paragraph);
* every paragraph that starts with one of the injection's headers (:data:`INJECTION_HEADERS`, the ones
  ``core.prompt.assemble.build_injection`` and the prose-only prompt write) up to the next blank line — an echo
  the model reworded or cut — and, after a header that introduces entries (ends in 「：」), the 【title】body
  paragraphs under it;
* a leading 「【开场 · 名字】」 line (the label the opening carries; the opening's own label is added by the engine
  and stays).

* the user's own words of this beat repeated back (issue 18 follow-up: a 1.5B model answered a tool beat with the
  user's question 「掌柜的，这客栈开了多少年了？」 and nothing else): the whole reply when it equals them, or a
  leading paragraph that equals them — compared after normalising whitespace and quote marks (「」『』“”"\'…).

Text without 【 (and no user words given) is returned as is (the common case costs one ``in`` test).
"""

from __future__ import annotations

import re

from ..cards.st_chat import OPENING_HEADER  # the opening label's one pattern (assemble and the ST import use it)

__all__ = ["INJECTION_HEADERS", "strip_echo", "strip_opening_label", "strip_user_echo"]

#: Headers of the blocks sent before the user's words (role-play injection, agent state block, prose-only lore).
INJECTION_HEADERS = ("【前情提要】", "【世界状态】", "【登场名录】", "【本拍常驻设定】", "【相关设定】", "【设定集索引】",
                     "【语言】", "【正文目录】", "【作者注】")

_LEADING_LABEL = re.compile(r"^\s*【\s*开场\s*[·・•.．]\s*[^】\n]{0,40}】[ \t]*(?:\n|$)")
_PARA_SPLIT = re.compile(r"(\n[ \t]*\n)")
_NOISE = re.compile(r"[\s「」『』“”‘’\"'《》〈〉]+")


def _norm(text: str) -> str:
    """``text`` without whitespace and quote marks (how an echo of the user's words is compared)."""
    return _NOISE.sub("", text)


def strip_user_echo(text: str, user: str) -> str:
    """``text`` without the user's own words ``user`` repeated back: "" when the whole reply is them (after
    :func:`_norm`), else the reply without a leading paragraph (up to the first blank line, or first line) that
    is them. Unchanged when ``user`` is empty or not repeated."""
    u = _norm(user)
    if not u or not text.strip():
        return text
    if _norm(text) == u:
        return ""
    s = text.lstrip()
    for sep in ("\n\n", "\n"):
        head, found, tail = s.partition(sep)
        if found and _norm(head) == u and tail.strip():
            return tail.strip()
    return text


def strip_opening_label(text: str) -> str:
    """``text`` without a leading imitation of the opening's 「【开场 · 名字】」 label (any spacing or dot)."""
    if "开场" not in text[:64]:
        return text
    m = _LEADING_LABEL.match(text) or OPENING_HEADER.match(text)
    return text[m.end():].lstrip("\n") if m else text


def strip_echo(text: str, injection: str = "", user: str = "") -> str:
    """``text`` without echoes of our injection (module doc), surrounding blank lines tidied; "" when nothing else
    was there. ``injection``: the blocks this beat sent before the user's words ("" = headers only); ``user``: the
    user's words of this beat ("" = not checked; :func:`strip_user_echo`)."""
    if user:  # the user's words, before and after our blocks (a reply may repeat both)
        out = strip_user_echo(text, user)
        out = strip_echo(out, injection) if out else ""
        out = strip_user_echo(out, user)
        return text if out == text else out
    if "【" not in text:
        return text
    out = strip_opening_label(text)
    paras: set[str] = set()
    if injection:
        paras = {b.strip() for b in injection.split("\n\n") if b.strip()}
        for b in sorted((b for b in paras if len(b) >= 8), key=len, reverse=True):
            if b in out:
                out = out.replace(b, "")
    if paras or any(h in out for h in INJECTION_HEADERS):
        parts = _PARA_SPLIT.split(out)
        kept: list[str] = []
        listing = False  # after a header that introduces entries (「…：」): its 【title】body paragraphs
        for i in range(0, len(parts), 2):
            para = parts[i].strip()
            if para.startswith(INJECTION_HEADERS) or para in paras or (listing and para.startswith("【")):
                listing = listing or (para.startswith(INJECTION_HEADERS) and para.endswith(("：", ":")))
                continue  # a header's paragraph, a whole (short) paragraph of the injection, or an entry under it
            listing = False
            kept.append(parts[i])
        out = "\n\n".join(p.strip("\n") for p in kept if p.strip())
    if out == text:
        return text
    out = re.sub(r"\n{3,}", "\n\n", out).strip()
    return strip_opening_label(out)
