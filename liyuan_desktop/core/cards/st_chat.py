"""SillyTavern chat files (``.jsonl``) ⇄ Liyuan session trees.

SillyTavern format (../shared/design/cards.md §6; ST ``public/script.js`` ``saveChat``): line 1 is a header
``{"user_name", "character_name", "create_date", "chat_metadata"}`` (ST's import only checks that line 1 has
``user_name`` or ``name``); every further line is one message ``{"name", "is_user", "is_system", "send_date", "mes",
"swipes", "swipe_id", "swipe_info", "gen_started", "gen_finished", "extra", …}``. ``swipes`` are all alternatives of
a message (``mes`` == ``swipes[swipe_id]``); message 0 (the greeting) carries the alternate greetings as swipes.

Import (:func:`write_session`; :func:`core.chat.st_import.import_st_chat` opens the result as a chat) → our session tree (``core/session``):

* header → ``HeaderEntry`` (persona = ``user_name``, title = file stem) with the whole ST header line —
  ``chat_metadata`` included — under the extension key ``st``;
* message 0 from the character → ``opening`` (text = ``【开场 · card name】`` + newline + ``mes``, as
  ``assemble.opening_text`` writes it; export strips that header again);
* ``is_user`` → ``user``; other character messages → ``assistant`` (``sealed``);
* ``is_system`` (hidden ``/hide`` messages, system notices) and narrator messages (``extra.type == "narrator"``) →
  ``note`` entries (``OtherEntry``: ``text``, ``kind`` = hidden | narrator | system). They show in the tree but are not
  sent to the model (``assemble.HistoryCache`` ignores unknown entry types);
* ``swipes`` + ``swipe_id`` → sibling entries of the same type under the same parent, in swipe order; the selected
  one is on the active branch and carries the chat on; the others are leaves with ``st = {"swipe": i}``;
* everything of a message except ``mes``/``swipes`` (``name``, ``is_user``, ``is_system``, ``send_date``,
  ``gen_started``, ``gen_finished``, ``swipe_id``, ``swipe_info``, ``extra`` incl. ``reasoning``, JS-Slash-Runner
  ``variables``, …) is kept verbatim under the selected entry's ``st`` key, so export is lossless;
* ``ts`` comes from ``send_date`` (ms numbers, ISO strings, ``"October 18, 2024 8:52pm"``; else the previous one);
* per-swipe variables (JS-Slash-Runner / TavernHelper keep ``variables`` as an array parallel to ``swipes``,
  ``variables[swipe_id]`` being the message's; a legacy plain object is the selected swipe's; MVU stores its
  ``{stat_data, display_data, delta_data, initialized_lorebooks, schema}`` there — design/card-runtime.md §2, §3.1)
  of the greeting and the character's replies become an ``rp-state`` snapshot (source ``init``, ``mvu`` = the table
  as read; ``vars_raw`` when it is not an MVU snapshot) right below that swipe's entry, so status bars and the scribe
  continue from the file's values (issue 13 §2). A user message's variables (MVU copies the previous snapshot onto
  it) stay only in its ``st`` dict. Export writes each swipe's current snapshot back into ``variables``.

Damaged input never crashes: a torn last line, lines that are not JSON, not objects or have no ``mes`` are skipped
with a warning (Chinese, for the UI); a file that is not a chat at all (a card, a preset, world info, PNG) raises
:class:`StChatError` naming what it is. The whole file is parsed before anything is written, and the tree is written
with one buffered, fsynced write (:meth:`SessionTree.commit`) — a 5,000-message chat imports in well under a second.

Export (:func:`~.st_chat_export.export_st_chat`, in :mod:`.st_chat_export`) writes ST's format from the tree's
*active branch*; the lossless round trip below holds for the pair.

import → export → import yields the same messages (every key and value) and swipes. Not round-tripped:
key order inside a line and JSON spelling (``\\u`` escapes, spacing); skipped damaged lines; swipes given as objects
(Chub exports: flattened to their text); an invalid ``swipe_id`` (repaired); a headerless file (a header is made).
Liyuan → ST loses what ST has no place for: beat logs, asks, ledger snapshots (``rp-state``; their variable trees do
go back into ``variables``), unsealed drafts,
revision history (only the latest text is written), branches other than the active one except as swipes of the
message where they fork (a fork at a user message keeps only the active user text), and reasoning of replies written
in Liyuan.
"""

from __future__ import annotations

import json
import os
import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional

from pydantic import Field

from ..deferred import DeferredModel
from ..jsonfile import JsonFileError, check_size, loads, object_at
from ..messages import Msg, MsgText, message
from ..session import HeaderEntry, SessionTree, new_id
from ..text import prompt_language

MESSAGE_TYPES = ("opening", "user", "assistant", "note")
#: keys of the ``st`` dict that are ours, never written to the ST file
#: Keys Liyuan adds to a kept SillyTavern message (its ``st`` fields) that are not SillyTavern's: the export drops them.
INTERNAL_FIELDS = ("swipe_text",)
#: The label an imported opening message starts with (「【开场 · 角色名】」 and a newline): added on import, stripped
#: again on export, from the prompt (prompt.assemble opening_body), from the opening chapter of a role-play turned
#: into a book (chat.prose_import) and when a reply echoes it (beat.echo). Its one pattern.
#: The opening's header line, in either language (「【开场 · 名字】」, or "[Opening · Name]" in an English chat, issue 32).
OPENING_HEADER = re.compile(r"^(?:【开场 · [^】\n]*】|\[Opening · [^\]\n]*\])\n")


def opening_header(name: str, language: str = "zh") -> str:
    """The opening's header line (without its newline) for a chat in ``language``: 「【开场 · 名字】」 for Chinese (or
    none), "[Opening · Name]" for every other language — what :data:`OPENING_HEADER` reads back."""
    return f"【开场 · {name}】" if prompt_language(language) == "zh" else f"[Opening · {name}]"


_HEADER_NAME = re.compile(r"^(?:【开场 · ([^】\n]*)】|\[Opening · ([^\]\n]*)\])\n")


def opening_in(text: str, language: str) -> str:
    """An opening as a chat in ``language`` sends it: its header (either language, :data:`OPENING_HEADER`) said as
    :func:`opening_header` says it — an English chat opened before its header was English sends "[Opening · …]";
    ``text`` itself when it already has that header or none."""
    m = _HEADER_NAME.match(text)
    if m is None:
        return text
    head = opening_header(m.group(1) if m.group(1) is not None else m.group(2), language)
    return text if text.startswith(head + "\n") else f"{head}\n{text[m.end():]}"


def opening_title(text: str) -> tuple[Optional[Msg], str]:
    """An opening as a reader sees it: ``(title, body)`` — the header line (either language,
    :data:`OPENING_HEADER`) as the ``opening.title`` message (「开场 · 名字」 / "Opening · Name", rendered in the
    reader's language by the front end, whatever the chat's language) and the text after it; ``(None, text)`` when
    ``text`` has no header. Display only: what the model is sent keeps the stored header (:func:`opening_in`)."""
    m = _HEADER_NAME.match(text)
    if m is None:
        return None, text
    return message("opening.title", name=m.group(1) if m.group(1) is not None else m.group(2)), text[m.end():]
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                "November", "December")
_SEND_DATE = re.compile(r"([A-Za-z]+)\.?\s+(\d{1,2}),?\s+(\d{4})\s*@?\s*(\d{1,2})\s*(?::|h)\s*(\d{1,2})\s*m?\s*(am|pm)?",
                        re.IGNORECASE)
_CREATE_DATE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})\s*@\s*(\d{1,2})h\s*(\d{1,2})m\s*(?:(\d{1,2})s)?")
#: The longest time stamp string read (characters; SillyTavern's are under 40). A longer one is no time at all:
#: the date patterns above backtrack quadratically on long runs of letters or spaces (issue 29 §1).
MAX_TIME_CHARS = 100


class StChatError(Exception):
    """The file cannot be imported as a SillyTavern chat; the message names the file and why (for the UI/CLI)."""


class StChatCancelled(StChatError):
    """The import was cancelled (its ``cancelled()`` callback said so); nothing of it is left on disk."""


#: ``progress(done, total)``: how far a long step is (``done`` of ``total`` lines or messages), called every few
#: hundred; ``cancelled()``: True stops the step with :class:`StChatCancelled` (checked as often). The same callback
#: shapes as ``core.chat.search``.
Progress = Optional[Callable[[int, int], None]]
Cancelled = Optional[Callable[[], bool]]
#: Lines / messages between two progress reports and cancel checks.
STEP = 500
#: The largest chat file read (bytes; checked on disk before reading): a 100,000-message chat with MVU variables on
#: every message stays well below it.
MAX_CHAT_BYTES = 1024 ** 3
#: The longest first line :func:`read_header` reads (bytes)
MAX_HEADER_LINE = 4 * 1024 ** 2


def _tick(i: int, total: int, progress: Progress, cancelled: Cancelled) -> None:
    """Every :data:`STEP` items: report ``(i, total)`` and raise :class:`StChatCancelled` when asked to stop."""
    if i % STEP:
        return
    if cancelled is not None and cancelled():
        raise StChatCancelled(message("card.import_cancelled"))
    if progress is not None:
        progress(i, total)


class StChat(DeferredModel):  # built on first use (core.deferred)
    """A parsed ST chat file: the header line (``{}`` when the file had none), the message objects in file order
    (each as read), and warnings about skipped or repaired lines."""

    name: str = ""
    header: dict[str, Any] = Field(default_factory=dict)
    messages: list[dict[str, Any]] = Field(default_factory=list)
    warnings: list[MsgText] = Field(default_factory=list)
    headerless: bool = False


# ---------------------------------------------------------------------------------------------------------------
# time stamps


def parse_st_time(value: Any) -> Optional[int]:
    """A SillyTavern time stamp as ms since the epoch, or None. Accepts ms numbers (very old files), ISO strings
    (``gen_started``), ``send_date`` strings ("October 18, 2024 8:52pm", "October 18, 2024 8:52 PM",
    "June 19, 2023 @14h 20m") and ``create_date`` strings ("2024-10-18@20h52m17s", "2023-6-19 @14h 20m 5s 123ms").
    Times without a zone are local time (ST writes them from the browser's clock). A string longer than
    :data:`MAX_TIME_CHARS` is no time stamp (None)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        v = float(value)
        if v <= 0:
            return None
        return int(v if v > 1e11 else v * 1000)
    if not isinstance(value, str) or not value.strip():
        return None
    s = value.strip()
    if len(s) > MAX_TIME_CHARS:
        return None
    if s.isdigit():
        return parse_st_time(int(s))
    try:
        return int(datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        pass
    m = _CREATE_DATE.match(s)
    if m:
        y, mo, d, h, mi, sec = (int(x) if x else 0 for x in m.groups())
        try:
            return int(datetime(y, mo, d, h, mi, sec).timestamp() * 1000)
        except ValueError:
            return None
    m = _SEND_DATE.search(s)
    if m:
        month = m.group(1).lower()
        mo = next((i + 1 for i, name in enumerate(_MONTHS) if name.startswith(month[:3])), 0)
        if not mo:
            return None
        hour, minute = int(m.group(4)), int(m.group(5))
        mer = (m.group(6) or "").lower()
        if mer == "pm" and hour < 12:
            hour += 12
        elif mer == "am" and hour == 12:
            hour = 0
        try:
            return int(datetime(int(m.group(3)), mo, int(m.group(2)), hour, minute).timestamp() * 1000)
        except ValueError:
            return None
    return None


def format_send_date(ms: int) -> str:
    """ST's ``getMessageTimeStamp()`` form in local time: ``"October 18, 2024 8:52pm"``."""
    d = datetime.fromtimestamp(ms / 1000)
    hour = d.hour % 12 or 12
    return f"{_MONTH_NAMES[d.month - 1]} {d.day}, {d.year} {hour}:{d.minute:02d}{'pm' if d.hour >= 12 else 'am'}"


def format_create_date(ms: int) -> str:
    """ST's ``humanizedDateTime()`` form in local time, zero-padded: ``"2024-10-18@20h52m17s"``."""
    d = datetime.fromtimestamp(ms / 1000)
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}@{d.hour:02d}h{d.minute:02d}m{d.second:02d}s"


def iso_now(ms: Optional[int] = None) -> str:
    """An ISO time like ST's ``gen_started`` (UTC, ms, ``Z``)."""
    d = datetime.fromtimestamp((ms if ms is not None else time.time() * 1000) / 1000, tz=timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"


# ---------------------------------------------------------------------------------------------------------------
# reading


def _what_is(obj: Any) -> Optional[str]:
    """The kind of a JSON object that is not a chat (its message key: ``stchat.is_card`` …), or None."""
    if not isinstance(obj, dict):
        return None
    data = object_at(obj, "data")
    if str(obj.get("spec") or "").startswith("chara_card") or "first_mes" in data or "char_persona" in obj or (
            "first_mes" in obj and "mes" not in obj):
        return "stchat.is_card"
    if "prompts" in obj or "prompt_order" in obj:
        return "stchat.is_preset"
    if "entries" in obj and "mes" not in obj:
        return "stchat.is_book"
    return None


def first_line(first_raw: bytes, name: str, whole: Optional[bytes] = None) -> tuple[dict[str, Any], bool]:
    """What the first non-empty line of an ST chat file says: ``(header, headerless)`` — the header object, or
    ``({}, True)`` when the file starts with a message (no header). Raises :class:`StChatError` when it is neither
    (not JSON, nested too deep, a card, a preset, world info …). ``whole``: the whole file, to name what it is
    when the first line is not JSON (a pretty-printed card); the one rule :func:`parse_st_chat` and a plan
    (:func:`read_header`) both use."""
    if first_raw[:8] == b"\x89PNG\r\n\x1a\n":
        raise StChatError(message("stchat.png", name=name))
    try:
        first = loads(first_raw, name)
    except JsonFileError as e:
        raise StChatError(e.args[0] if e.args else str(e)) from None
    except ValueError:
        obj = None
        if whole is not None:
            try:
                obj = loads(whole, name)
            except ValueError:
                obj = None
        kind = _what_is(obj)
        if kind:
            raise StChatError(message(kind, name=name)) from None
        raise StChatError(message("stchat.first_not_json", name=name)) from None
    kind = _what_is(first)
    if kind:
        raise StChatError(message(kind, name=name))
    if isinstance(first, dict) and "mes" not in first and ("user_name" in first or "name" in first
                                                          or "character_name" in first or "chat_metadata" in first):
        return first, False
    if isinstance(first, dict) and "mes" in first:
        return {}, True
    raise StChatError(message("stchat.first_neither", name=name))


def read_header(path: str | Path) -> tuple[dict[str, Any], bool, bool]:
    """Check an ST chat file the way :func:`read_st_chat` will without reading it whole: its size
    (:data:`MAX_CHAT_BYTES`), its first line (:func:`first_line`) and whether its last line is cut off. Returns
    ``(header, headerless, torn_last_line)``. Raises :class:`StChatError` (empty, too big, not a chat, unreadable).
    Reads at most :data:`MAX_HEADER_LINE` plus 64 KB of the end."""
    p = Path(path)
    try:
        size = check_size(p, MAX_CHAT_BYTES)
        with open(p, "rb") as f:
            head = f.readline(MAX_HEADER_LINE)
            while head and not head.strip():
                head = f.readline(MAX_HEADER_LINE)
            if not head.strip():
                raise StChatError(message("stchat.empty", name=p.name))
            if head.startswith(b"\xef\xbb\xbf"):
                head = head[3:]
            if len(head) >= MAX_HEADER_LINE and not head.endswith(b"\n"):
                return {}, False, False  # a giant first line: the import reads it whole
            header, headerless = first_line(head.strip(), p.name)
            tail_at = max(f.tell(), size - 65536)
            f.seek(tail_at)
            tail = f.read()
    except JsonFileError as e:
        raise StChatError(e.args[0] if e.args else str(e)) from None
    except OSError as e:
        raise StChatError(message("stchat.cannot_read", path=str(p), error=e.strerror or str(e))) from e
    torn = False
    if tail and not tail.endswith(b"\n"):
        last = tail.rsplit(b"\n", 1)[-1]
        if tail_at > 0 and b"\n" not in tail:
            last = b""  # a last line longer than 64 KB: not judged here
        if last.strip():
            try:
                loads(last, p.name)
            except ValueError:
                torn = True
    return header, headerless, torn


def parse_st_chat(data: bytes, name: str = "", progress: Progress = None,
                  cancelled: Cancelled = None) -> StChat:
    """Parse the bytes of an ST ``.jsonl`` chat (UTF-8, BOM tolerated). Never raises for damaged lines (they are
    skipped with a warning; a line nested deeper than ``jsonfile.MAX_DEPTH`` is one of them); raises
    :class:`StChatError` when the file is not a chat at all (empty, PNG, a card, a preset, world info, a first
    line that is neither a header nor a message, :func:`first_line`). ``progress``/``cancelled``: see
    :data:`Progress` (counted in lines; :class:`StChatCancelled` when cancelled). ``name`` names the file in the
    messages (default: the words "chat log", ``stchat.default_name``)."""
    name = name or message("stchat.default_name")
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        raise StChatError(message("stchat.png", name=name))
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = data.split(b"\n")
    numbered = [(n, raw) for n, raw in enumerate(lines, 1) if raw.strip()]
    if not numbered:
        raise StChatError(message("stchat.empty", name=name))
    out = StChat(name=name)
    first_raw = numbered[0][1]
    header, headerless = first_line(first_raw, name, data)
    rest = numbered[1:]
    if headerless:
        out.headerless = True
        out.warnings.append(message("stchat.headerless", name=name))
        rest = numbered
    else:
        out.header = header
    last_no = numbered[-1][0]
    torn_possible = not data.endswith(b"\n")
    total = len(rest)
    for k, (n, raw) in enumerate(rest):
        _tick(k, total, progress, cancelled)
        try:
            obj = loads(raw, name)
        except JsonFileError:
            out.warnings.append(message("stchat.line_too_deep", name=name, n=n))
            continue
        except ValueError as e:
            if n == last_no and torn_possible:
                out.warnings.append(message("stchat.torn_last", name=name))
            else:
                out.warnings.append(message("stchat.bad_line", name=name, n=n, error=type(e).__name__))
            continue
        if not isinstance(obj, dict):
            out.warnings.append(message("stchat.line_not_object", name=name, n=n))
            continue
        if "mes" not in obj and not isinstance(obj.get("swipes"), list):
            out.warnings.append(message("stchat.line_no_mes", name=name, n=n))
            continue
        out.messages.append(obj)
    if progress is not None:
        progress(total, total)
    return out


def read_st_chat(path: str | Path, progress: Progress = None, cancelled: Cancelled = None) -> StChat:
    """Read and parse an ST chat file (see :func:`parse_st_chat`). Raises :class:`StChatError` (also for an
    unreadable file, and for one over :data:`MAX_CHAT_BYTES`, refused by its size before reading)."""
    p = Path(path)
    try:
        check_size(p, MAX_CHAT_BYTES)  # before reading: a 2 GB file is refused by its size
        data = p.read_bytes()
    except JsonFileError as e:
        raise StChatError(e.args[0] if e.args else str(e)) from None
    except OSError as e:
        raise StChatError(message("stchat.cannot_read", path=str(p), error=e.strerror or str(e))) from e
    return parse_st_chat(data, p.name, progress, cancelled)


# ---------------------------------------------------------------------------------------------------------------
# import


def _text(v: Any) -> str:
    if isinstance(v, str):
        return v
    if v is None:
        return ""
    if isinstance(v, dict):  # Chub: swipe objects
        for k in ("mes", "text", "content"):
            part = v.get(k)
            if isinstance(part, str):
                return part
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def _swipes_of(msg: dict[str, Any], label: str, warnings: list[str]) -> tuple[list[str], int, dict[str, Any]]:
    """(alternative texts, index of the selected one, ``st`` dict of the selected entry) for one ST message."""
    st = {k: v for k, v in msg.items() if k not in ("mes", "swipes")}
    mes = msg.get("mes")
    if "mes" in msg and not isinstance(mes, str):
        warnings.append(message("stchat.mes_not_text", label=label, type=type(mes).__name__))
    swipes = msg.get("swipes")
    if not isinstance(swipes, list) or not swipes:
        if "swipes" in msg:
            st["swipes"] = swipes  # kept as read (not a usable list)
        return [_text(mes)], 0, st
    texts = [_text(s) for s in swipes]
    if any(not isinstance(s, str) for s in swipes):
        warnings.append(message("stchat.swipes_not_text", label=label))
    sid = msg.get("swipe_id")
    text = _text(mes) if "mes" in msg else None
    if not (isinstance(sid, int) and not isinstance(sid, bool) and 0 <= sid < len(texts)):
        sid_new = texts.index(text) if text is not None and text in texts else 0
        warnings.append(message("stchat.swipe_id", label=label, sid=repr(sid), n=sid_new + 1))
        sid = sid_new
        st["swipe_id"] = sid
    if text is None:
        text = texts[sid]
    if texts[sid] != text:
        st["swipe_text"] = texts[sid]  # ST's swipes[swipe_id] differed from mes: keep it for export
        texts[sid] = text
    return texts, sid, st


def _swipe_variables(msg: dict[str, Any], k: int, selected: int) -> Optional[dict[str, Any]]:
    """The variables TavernHelper kept for swipe ``k`` of a message (``variables[k]``; a legacy plain object belongs
    to the selected swipe), or None when there are none (missing, not an object, or ``{}``, which is how ST pads)."""
    v = msg.get("variables")
    if isinstance(v, list):
        v = v[k] if k < len(v) else None
    elif k != selected:
        v = None
    return v if isinstance(v, dict) and v else None


def _is_mvu(v: Any) -> bool:
    """An MVU snapshot (``stat_data`` an object) rather than some other table a script kept."""
    return isinstance(v, dict) and isinstance(v.get("stat_data"), dict)


def _kind(msg: dict[str, Any], index: int) -> tuple[str, str]:
    """(entry type, note kind) of one ST message; ``index`` is its place among the messages."""
    extra = object_at(msg, "extra")
    etype = extra.get("type")
    if msg.get("is_system") or etype == "narrator":
        if etype == "narrator":
            return "note", "narrator"
        return "note", "system" if etype else "hidden"
    if msg.get("is_user"):
        return "user", ""
    return ("opening", "") if index == 0 else ("assistant", "")


#: SillyTavern's Author's Note positions (``extension_prompt_types`` in its ``public/script.js``) and roles
#: (``extension_prompt_roles``) as ``prompt.authors_note.AuthorsNote`` names them
_NOTE_POSITIONS = {0: "after", 1: "chat", 2: "before"}
_NOTE_ROLES = {0: "system", 1: "user", 2: "assistant"}


def st_authors_note(header: dict[str, Any]) -> Optional[dict[str, Any]]:
    """The Author's Note a SillyTavern chat carries in its header's ``chat_metadata`` (the Author's Note extension's
    ``note_prompt``, ``note_depth`` (default 4), ``note_interval`` (1), ``note_position`` (1 = in the chat; 0 after
    and 2 before the story string), ``note_role`` (0 system, 1 user, 2 assistant)) as the fields of
    ``prompt.authors_note.AuthorsNote`` (``text``, ``position``, ``depth``, ``role``, ``interval``), or None when the
    chat has no note text. Values out of range fall back to SillyTavern's defaults."""
    meta = object_at(header, "chat_metadata")
    text = meta.get("note_prompt")
    if not isinstance(text, str) or not text.strip():
        return None

    def number(key: str, default: int, hi: int = 10000) -> int:
        try:
            v = int(meta.get(key, default))
        except (TypeError, ValueError, OverflowError):
            return default
        return v if 0 <= v <= hi else default

    return {"text": text, "position": _NOTE_POSITIONS.get(number("note_position", 1, 2), "chat"),
            "depth": number("note_depth", 4), "role": _NOTE_ROLES.get(number("note_role", 0, 2), "system"),
            "interval": number("note_interval", 1)}


def write_session(st: StChat, session_path: str | Path, *, card_name: str = "", card_path: str = "",
                  title: str = "", progress: Progress = None, cancelled: Cancelled = None,
                  header_extra: Optional[dict[str, Any]] = None, language: str = "zh") -> SessionTree:
    """Create a session file from a parsed ST chat (fails with SessionError if ``session_path`` exists and is not
    empty). All entries are buffered and written with one commit; if that write fails — or ``cancelled()`` says
    stop (:class:`StChatCancelled`, checked every :data:`STEP` messages; ``progress(done, total)`` in messages) —
    the new file is removed and the error re-raised. A big result (``index_cache.MIN_BYTES``) gets its line index
    written too, so its first open is fast. Returns the open tree (its ``load_warnings`` hold ``st.warnings`` plus
    notes made here). ``header_extra``: more header fields (a group chat's ``group``). ``language``: the chat's
    (the opening's header, :func:`opening_header`)."""
    path = Path(session_path)
    warnings = list(st.warnings)
    header = st.header
    user_name = _text(header.get("user_name") or "") or "你"
    st_char = _text(header.get("character_name") or "")
    if card_name and st_char and st_char != card_name:
        warnings.append(message("stchat.other_card", name=st.name, char=st_char, card=card_name))
    char_name = card_name or st_char
    base_ts = parse_st_time(header.get("create_date")) or int(time.time() * 1000)
    existed = path.exists()  # SessionTree.create accepts an existing *empty* file
    tree = SessionTree.create(
        path, HeaderEntry.model_validate({  # ``st`` and ``imported_from`` are extra fields (kept in model_extra)
            "id": new_id(), "ts": base_ts, "mode": "roleplay", "card": card_path, "card_name": char_name,
            "persona": user_name, "title": title or Path(st.name).stem,
            "st": header if not st.headerless else None, "imported_from": st.name, **(header_extra or {})}))
    try:
        parent = tree.header.id
        last_ts = base_ts
        total = len(st.messages)
        for i, msg in enumerate(st.messages):
            _tick(i, total, progress, cancelled)
            label = message("stchat.message_label", name=st.name, n=i + 1)
            etype, note_kind = _kind(msg, i)
            texts, selected, st_fields = _swipes_of(msg, label, warnings)
            ts = parse_st_time(msg.get("send_date")) or parse_st_time(msg.get("gen_started")) or last_ts
            last_ts = ts
            raw_info = msg.get("swipe_info")
            info: list[Any] = raw_info if isinstance(raw_info, list) else []
            chosen = None
            for k, text in enumerate(texts):
                body = f"{opening_header(char_name, language)}\n{text}" if etype == "opening" else text
                ts_k = ts
                if k != selected and k < len(info) and isinstance(info[k], dict):
                    ts_k = parse_st_time(info[k].get("send_date")) or ts
                fields: dict[str, Any] = {"text": body, "ts": ts_k, "st": st_fields if k == selected else {"swipe": k}}
                if etype == "note":
                    fields["kind"] = note_kind
                e = tree.append(etype, parent_id=parent, move_leaf=k == selected, **fields)
                snap = _swipe_variables(msg, k, selected) if etype in ("opening", "assistant") else None
                if snap is not None:  # the game goes on from the file's values (module doc)
                    e = tree.append("rp-state", parent_id=e.id, move_leaf=k == selected, ts=ts_k, state={},
                                    source="init", mvu=snap, **({"vars_raw": True} if not _is_mvu(snap) else {}))
                if k == selected:
                    chosen = e
            assert chosen is not None
            parent = chosen.id
        tree.leaf_id = parent
        note = st_authors_note(header)
        if note is not None:  # the chat's Author's Note, for the whole chat (prompt.authors_note)
            tree.append("chat-settings", parent_id=None, move_leaf=False, ts=base_ts, authors_note=note,
                        authors_note_at=None)
            tree.leaf_id = parent
        if cancelled is not None and cancelled():
            raise StChatCancelled(message("card.import_cancelled"))
        tree.commit()
        if progress is not None:
            progress(total, total)
        tree.save_index()
    except BaseException:
        try:
            if existed:
                os.truncate(path, 0)
            else:
                path.unlink()
        except OSError:
            pass
        raise
    tree.load_warnings.extend(warnings)
    return tree


def default_chat_name(path: str | Path) -> str:
    """A chat folder name for an imported file: its stem (ST names chats ``<character> - <create_date>``)."""
    return Path(path).stem or "导入的对话"



__all__ = [
    "MAX_CHAT_BYTES", "StChat", "StChatCancelled", "StChatError", "default_chat_name", "first_line", "read_header", "st_authors_note", "format_create_date", "format_send_date", "iso_now", "opening_title", "parse_st_chat", "parse_st_time", "read_st_chat", "write_session",
]
