"""A role-play chat as a readable transcript (issue 28 "Export"): Markdown or a self-contained HTML page, beside the
SillyTavern ``.jsonl`` export (:mod:`core.cards.st_chat_export`), which stays the lossless one.

**What is in it**: the shown branch (the active path of the session tree: for every message the chosen swipe, as the
conversation view shows it — :meth:`Chat.transcript`), each message under its speaker's name (the card's name for the
opening and the replies, the persona's for the user's words, 你 / You without one), nothing else: no unfinished
draft, no ask dialogue, no ledger.

**Which text**: what the window shows — :meth:`Chat.display_text`, an engine query (no Qt): the card's display regex
scripts (markdownOnly and 'neither', at the message's depth as the view counts it: 0 = newest), EJS templates and
TavernHelper's variable macros, MVU's ``<StatusPlaceHolderImpl/>`` on a reply that carries variables — the same call
the conversation view makes off its UI thread. When the card's scripts are not allowed the window shows the stored
text and so does the export. ``display=False`` in :class:`TranscriptOptions` takes the stored text as written.

**Status bars** are what the window puts in a frame: a fenced code block whose text contains ``html>``, ``<head>`` or
``<body`` (conversation.js ``isFrontend``), and MVU's placeholder when no script replaced it. ``status_bars="omit"``
leaves them out; ``"text"`` keeps each as the text its HTML shows (scripts and styles dropped, one line per block
element; what a status bar's script would have filled in at run time is not there).

**Card HTML outside status bars** (``<div>``, ``<details>``, ``<span style=…>``…) is never carried over as markup:
it becomes the text it shows (:func:`html_text`; script, style, template and similar contents dropped), in both
formats. **The HTML page** escapes every text and builds its markup only from :func:`core.story.export.text_blocks`
(paragraphs, *italic* / **bold**, sub-headings, scene breaks) plus ``<pre>`` for code blocks; its
Content-Security-Policy (``default-src 'none'; style-src 'unsafe-inline'``) and the tiny inline stylesheet mean it
runs no script and loads nothing. (The window's own sanitiser is DOMPurify in the page, JavaScript: it is not
reachable from the engine, so the export takes the stricter road — text only.)
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from ..fsutil import atomic_write_text
from ..messages import message
from ..story.export import blocks_html, text_blocks
from .group_play import speaker_names

if TYPE_CHECKING:
    from .view import ChatView

#: The formats :func:`export_transcript` writes.
TRANSCRIPT_FORMATS = ("md", "html")

#: The transcript's own words, in the transcript's language.
LABELS: dict[str, dict[str, str]] = {
    "zh": {"you": "你", "swipe": "（第 {k}/{n} 个回复）", "with": "{char} 与 {user}",
           "status": "状态栏"},
    "en": {"you": "You", "swipe": "(reply {k} of {n})", "with": "{char} with {user}",
           "status": "Status bar"},
}

_FRONTEND = re.compile(r"html>|<head>|<body")
_FENCE_OPEN = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")
_HAS_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?>")
_PLACEHOLDER = re.compile(r"<StatusPlaceHolderImpl\s*/?>", re.IGNORECASE)
#: elements whose content is not shown text
_HIDDEN = {"script", "style", "template", "noscript", "title", "head", "iframe", "object", "embed", "svg", "math",
           "textarea", "select"}
#: elements that start a new line of text
_BLOCK = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "header", "footer",
          "table", "ul", "ol", "details", "summary", "blockquote", "pre", "hr", "dt", "dd"}


class TranscriptOptions(BaseModel):
    """How to export a chat as a transcript: ``status_bars`` omit | text (module doc); ``display`` apply the card's
    display rules as the window does (else the stored text); ``title`` ("" = the chat's title, else the card's
    name); ``language`` of the transcript's own words (zh | en)."""

    model_config = ConfigDict(extra="forbid")

    status_bars: Literal["omit", "text"] = "omit"
    display: bool = True
    title: str = ""
    language: Literal["zh", "en"] = "zh"


class TranscriptMessage(BaseModel):
    """One message of the transcript: ``id`` (the session entry), ``role`` opening | user | assistant,
    ``speaker`` (name shown), ``text`` (display text with status bars handled and card HTML turned into text),
    ``swipe`` ``[k, n]`` when the reply had alternatives (k = the one shown, 1-based), ``status`` (the status bars'
    text when kept as text, one string per bar)."""

    id: str
    role: str
    speaker: str
    text: str
    swipe: Optional[list[int]] = None
    status: list[str] = Field(default_factory=list)


class _Text(HTMLParser):
    """Shown text of an HTML fragment (:func:`html_text`)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        if tag in _HIDDEN:
            self.hidden += 1
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def html_text(fragment: str, *, collapse: bool = False) -> str:
    """The text an HTML ``fragment`` shows: tags dropped, entities decoded, the contents of script, style, template,
    head and similar elements dropped, a line break around block elements. ``collapse``: runs of spaces in a line
    become one and blank lines go (for a status bar's text). Linear in the input (``html.parser``)."""
    p = _Text()
    p.feed(fragment)
    p.close()
    text = "".join(p.parts)
    if collapse:
        lines = (" ".join(ln.split()) for ln in text.split("\n"))
        return "\n".join(ln for ln in lines if ln)
    return re.sub(r"\n{3,}", "\n\n", text)


def _chunks(text: str) -> list[tuple[str, str, str]]:
    """``[(kind, fence language, text)]``: kind ``text`` or ``code`` (a fenced block, its inner lines)."""
    out: list[tuple[str, str, str]] = []
    cur: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        if not m:
            cur.append(lines[i])
            i += 1
            continue
        if cur:
            out.append(("text", "", "\n".join(cur)))
            cur = []
        fence = m[1]
        close = re.compile(r"^\s{0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
        body: list[str] = []
        i += 1
        while i < len(lines) and not close.match(lines[i]):
            body.append(lines[i])
            i += 1
        i += 1
        out.append(("code", m[2], "\n".join(body)))
    if cur:
        out.append(("text", "", "\n".join(cur)))
    return out


def readable(text: str, status_bars: str = "omit") -> tuple[str, list[str]]:
    """A display text made readable: ``(text, status bars)``. Status bars (fenced front-end blocks, MVU's
    placeholder) are taken out — their text returned when ``status_bars == "text"``; card HTML elsewhere becomes its
    text (:func:`html_text`) when the text holds tags (the window's rule: text without tags is shown as written);
    other code blocks stay fenced."""
    text = _PLACEHOLDER.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    parts: list[str] = []
    bars: list[str] = []
    for kind, lang, body in _chunks(text):
        if kind == "code" and _FRONTEND.search(body):
            if status_bars == "text":
                shown = html_text(body, collapse=True)
                if shown:
                    bars.append(shown)
            continue
        if kind == "code":
            parts.append(f"```{lang}\n{body}\n```")
        else:
            parts.append(html_text(body) if _HAS_TAG.search(body) else body)
    out = "\n".join(parts)
    return re.sub(r"\n{3,}", "\n\n", out).strip(), bars


def transcript_messages(chat: ChatView, options: Optional[TranscriptOptions] = None) -> list[TranscriptMessage]:
    """The messages of ``chat``'s shown branch as the transcript has them (module doc). Runs the card's display
    scripts when ``options.display`` and they are not cached — slow for a long chat: call it off the UI thread."""
    o = options or TranscriptOptions()
    labels = LABELS[o.language]
    items = chat.transcript()
    n = len(items)
    char = chat.card.name
    names = speaker_names(chat)  # a group chat: each reply under its member's name
    user = chat.persona or labels["you"]
    out: list[TranscriptMessage] = []
    for i, it in enumerate(items):
        role = str(it.get("role", ""))
        if role not in ("opening", "user", "assistant"):
            continue  # an unfinished beat's draft is no message yet
        raw = chat.display_text(it, n - 1 - i) if o.display else str(it.get("text", ""))
        text, bars = readable(raw, o.status_bars)
        speaker = user if role == "user" else names.get(str(it.get("speaker") or ""), char)
        sw = it.get("swipe")
        swipe = [int(sw[0]), int(sw[1])] if isinstance(sw, (list, tuple)) and len(sw) == 2 and int(sw[1]) > 1 else None
        out.append(TranscriptMessage(id=str(it.get("id", "")), role=role, speaker=speaker, text=text, swipe=swipe,
                                     status=bars))
    return out


def _title(chat: ChatView, o: TranscriptOptions) -> str:
    if o.title.strip():
        return o.title.strip()
    return (chat.tree.header.title or "").strip() or chat.card.name


def transcript_markdown(chat: ChatView, options: Optional[TranscriptOptions] = None) -> str:
    """The transcript as Markdown: ``# title``, who talks with whom, then per message ``### speaker`` (and which
    reply of how many), its text, the status bars' text as a quote when kept."""
    o = options or TranscriptOptions()
    labels = LABELS[o.language]
    msgs = transcript_messages(chat, o)
    lines = [f"# {_title(chat, o)}", "", labels["with"].format(char=chat.card.name,
                                                                 user=chat.persona or labels["you"]), ""]
    for m in msgs:
        head = f"### {m.speaker}" + (" " + labels["swipe"].format(k=m.swipe[0], n=m.swipe[1]) if m.swipe else "")
        lines += [head, ""]
        if m.text:
            lines += [m.text, ""]
        for bar in m.status:
            lines += [f"> **{labels['status']}**", ">"] + [f"> {ln}" for ln in bar.split("\n")] + [""]
    return "\n".join(lines).rstrip() + "\n"


_CSS = ("body{font:16px/1.7 system-ui,'Noto Sans CJK SC','PingFang SC','Microsoft YaHei',sans-serif;max-width:46em;"
        "margin:2em auto;padding:0 1em;color:#222;background:#fdfcf8}h1{font-size:1.5em}.with{color:#777}"
        ".msg{margin:1.4em 0;padding:.2em 0 .2em .9em;border-left:3px solid #c9b99a}.msg.user{border-color:#8aa2c8}"
        ".speaker{font-weight:600;margin:0 0 .3em}.swipe{color:#999;font-weight:400;font-size:.85em}"
        ".msg p{margin:.4em 0}pre{white-space:pre-wrap;background:#f1eee6;padding:.5em}"
        ".status{color:#555;background:#f4f1ea;padding:.4em .6em;font-size:.9em;white-space:pre-wrap}"
        "hr.scene{border:0;border-top:1px dashed #ccc}"
        "@media (prefers-color-scheme:dark){body{background:#1d1c1a;color:#ddd}pre,.status{background:#2a2825;"
        "color:#ccc}}")


def _body_html(text: str) -> str:
    out = []
    for kind, lang, body in _chunks(text):
        if kind == "code":
            cls = f' data-lang="{html.escape(lang, quote=True)}"' if lang else ""
            out.append(f"<pre{cls}><code>{html.escape(body, quote=False)}</code></pre>")
        else:
            out.append(blocks_html(text_blocks(body), heading_tag="h4"))
    return "\n".join(x for x in out if x)


def transcript_html(chat: ChatView, options: Optional[TranscriptOptions] = None) -> str:
    """The transcript as one self-contained HTML page (module doc): escaped text only, a CSP that forbids scripts and
    remote loads, a tiny inline stylesheet (light and dark)."""
    o = options or TranscriptOptions()
    labels = LABELS[o.language]
    e = html.escape
    title = _title(chat, o)
    parts = ["<!DOCTYPE html>", f'<html lang="{o.language}"><head><meta charset="utf-8">',
             "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{e(title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{e(title)}</h1>",
             f'<p class="with">{e(labels["with"].format(char=chat.card.name, user=chat.persona or labels["you"]))}</p>']
    for m in transcript_messages(chat, o):
        sw = f' <span class="swipe">{e(labels["swipe"].format(k=m.swipe[0], n=m.swipe[1]))}</span>' if m.swipe else ""
        parts.append(f'<section class="msg {e(m.role)}"><p class="speaker">{e(m.speaker)}{sw}</p>')
        if m.text:
            parts.append(_body_html(m.text))
        for bar in m.status:
            parts.append(f'<div class="status">{e(bar)}</div>')
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def export_transcript(chat: ChatView, fmt: str, out: Path, options: Optional[TranscriptOptions] = None) -> Path:
    """Write ``chat``'s transcript as ``fmt`` (``md`` | ``html``) to ``out`` (atomically, UTF-8). Returns ``out``.
    Raises ValueError (``export.bad_format``) for another format, OSError when the file cannot be written. Runs the
    display scripts (:func:`transcript_messages`): off the UI thread."""
    if fmt not in TRANSCRIPT_FORMATS:
        raise ValueError(message("export.bad_format", fmt=fmt, formats=list(TRANSCRIPT_FORMATS)))
    text = transcript_markdown(chat, options) if fmt == "md" else transcript_html(chat, options)
    atomic_write_text(out, text)
    return Path(out)


__all__ = ["LABELS", "TRANSCRIPT_FORMATS", "TranscriptMessage", "TranscriptOptions", "export_transcript",
           "html_text", "readable", "transcript_html", "transcript_markdown", "transcript_messages"]
