"""Quick replies (快速回复, issue 26 §4): SillyTavern Quick Reply sets imported, kept in the data folder, edited,
and chosen globally or per chat. Plain kind only: a quick reply is a label and a message that is sent as the user's
words or put into the input box; STscript is never run.

Why here (``core/cards``): a Quick Reply set is one of the SillyTavern formats the app imports, like personas, regex
scripts and chat files, and its per-chat choice works like the persona's (keyed by the chat folder,
:func:`.personas.chat_key`). It is not part of prompt assembly: nothing of it reaches the model except as the user's
own message.

The SillyTavern format (``public/scripts/extensions/quick-reply``, checked against its source, 2025)
--------------------------------------------------------------------------------------------------
A set file ("Export" in the Quick Reply settings; ``QuickReplySet.toJSON``) is ``{version: 2, name, disableSend,
placeBeforeInput, injectInput, color, onlyBorderColor, qrList: [...], idIndex}``; each ``qrList`` item
(``QuickReply.toJSON``) is ``{id, label, title, message, contextList, preventAutoExecute, isHidden,
executeOnStartup, executeOnUser, executeOnAi, executeOnChatChange, executeOnGroupMemberDraft, automationId}`` (newer
versions add ``icon``, ``showLabel``, ``executeOnNewChat``, ``executeBeforeGeneration``). SillyTavern's importer
accepts a file when ``version`` is an integer and ``name`` a string. Clicking a reply
(``QuickReplySet.executeWithOptions``): with ``injectInput`` and text in the input box, the message goes before
(``placeBeforeInput``) or after the input, joined by a space; text starting with ``/`` is run as STscript unless
``disableSend``; otherwise the text (macros substituted) is put into the input box and sent unless ``disableSend``.
Version-1 files (the old extension's ``quickReplySlots`` of ``{mes, label, title}``) are converted.

What Liyuan does with it
------------------------
* **Mode** per reply: "send" (sent as the user's words) or "insert" (put into the input box). A reply without its
  own ``mode`` (a Liyuan key, ignored by SillyTavern) follows the set: "insert" when ``disableSend``, else "send".
* **STscript is not run.** A message starting with ``/`` (SillyTavern would run it) or holding ``|/command``
  pipes is kept as text; the import says so for that reply, sets its mode to "insert" and :meth:`QuickReplySet.compose`
  never sends it by itself. Automatic execution (``executeOn…``) and context menus (``contextList``) are not
  supported either; the import says so per reply. Every key is kept, so the set exports as it came.
* Hidden replies (``isHidden``) are kept and listed, not shown on the bar (:meth:`QuickReplySet.visible`).

On disk: sets are ``<home>/快速回复/<name>.json`` (the library name is the file stem; the set's ``name`` is kept equal
to it), the choice of active sets is ``<home>/quick_replies.json`` (``{"version": 1, "global_sets": [...],
"chats": {chat key: [...]}}``). A chat shows the global sets, then its own (SillyTavern shows global and chat sets
together), each once, in order (:func:`active_sets`).

Hostile files: the size is checked before reading (:data:`MAX_FILE_BYTES`), nesting is bounded
(``core.jsonfile``), a set holds at most :data:`MAX_ENTRIES` replies (more is refused), a message at most
:data:`MAX_MESSAGE_CHARS` characters (a longer one is skipped and said so), a label at most :data:`MAX_LABEL_CHARS`
(cut). Wrong types are repaired where SillyTavern would cope (numbers as text, a missing id numbered) and reported;
what cannot be a set raises :class:`QuickReplyError` with a catalog message (``qr.*``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..fsutil import atomic_write_text
from ..jsonfile import JsonFileError, check_size, loads
from ..macros import MacroContext, apply_macros
from ..messages import Msg, MsgText, message
from ..paths import home, home_folder, safe_name
from .personas import chat_key

__all__ = ["Mode", "QuickReply", "QuickReplySet", "Composed", "EntryReport", "ImportResult", "QuickReplyChoice",
           "QuickReplyError", "script_kind", "parse_set", "read_set", "import_set", "sets_dir", "set_path",
           "list_sets", "load_set", "save_set", "delete_set", "load_choices", "save_choices", "active_sets",
           "set_active", "QR_FOLDER", "CHOICES_FILE", "MAX_FILE_BYTES", "MAX_ENTRIES", "MAX_MESSAGE_CHARS",
           "MAX_LABEL_CHARS"]

Mode = Literal["send", "insert"]

#: the library folder under the data folder, and the file of the active-set choices
QR_FOLDER = "快速回复"  # the Chinese layout's name; the library is wherever sets_dir() says (core.paths)
CHOICES_FILE = "quick_replies.json"
#: the largest set file read (bytes, checked before reading); real sets are a few KB
MAX_FILE_BYTES = 16 * 1024 ** 2
#: the most replies a set may hold (a bigger file is refused)
MAX_ENTRIES = 2000
#: the longest message kept (characters; a longer reply is skipped on import and refused by edits)
MAX_MESSAGE_CHARS = 100_000
#: the longest label / set name kept (characters; longer ones are cut on import, refused by edits)
MAX_LABEL_CHARS = 200

#: SillyTavern's automatic-execution flags (Liyuan runs nothing automatically)
AUTO_FLAGS = ("executeOnStartup", "executeOnUser", "executeOnAi", "executeOnChatChange",
              "executeOnGroupMemberDraft", "executeOnNewChat", "executeBeforeGeneration")

_PIPE = re.compile(r"\|\s*/[A-Za-z]")


class QuickReplyError(ValueError):
    """A quick-reply file or edit refused; ``args[0]`` is a catalog message naming the file or reply and why."""


def script_kind(text: str) -> Optional[Literal["command", "pipe"]]:
    """Whether ``text`` is STscript: "command" when it starts with ``/`` (SillyTavern runs such a message instead of
    sending it), "pipe" when it holds a ``| /command`` pipe, else None."""
    if text.startswith("/"):
        return "command"
    if _PIPE.search(text):
        return "pipe"
    return None


class QuickReply(BaseModel):
    """One reply of a set (SillyTavern's ``QuickReply``; every other key is kept). ``id``: unique in its set;
    ``label``: the button's text; ``title``: its tooltip; ``message``: what is sent or inserted; ``isHidden``: not on
    the bar; ``mode``: Liyuan's own "send"/"insert", None = the set's (module doc)."""

    model_config = ConfigDict(extra="allow")

    id: int
    label: str = ""
    title: str = ""
    message: str = ""
    isHidden: bool = False
    mode: Optional[Mode] = None

    @property
    def script(self) -> Optional[str]:
        """:func:`script_kind` of the message ("command", "pipe" or None)."""
        return script_kind(self.message)

    def text(self, ctx: Optional[MacroContext] = None) -> str:
        """The message with its macros expanded (SillyTavern's ``substituteParams``) when ``ctx`` is given."""
        return apply_macros(self.message, ctx) if ctx is not None else self.message


class Composed(BaseModel):
    """What clicking a reply does: put ``text`` into the input box, and send it when ``send``."""

    text: str
    send: bool


class QuickReplySet(BaseModel):
    """A Quick Reply set (SillyTavern's ``QuickReplySet``; every other key — ``color``, ``onlyBorderColor`` … — is
    kept). ``disableSend``: replies are inserted, not sent; ``injectInput``/``placeBeforeInput``: the message joins
    what is already in the input box, after or before it; ``idIndex``: SillyTavern's id counter."""

    model_config = ConfigDict(extra="allow")

    version: int = 2
    name: str
    disableSend: bool = False
    placeBeforeInput: bool = False
    injectInput: bool = False
    qrList: list[QuickReply] = Field(default_factory=list)
    idIndex: int = 0

    # -- queries --------------------------------------------------------------------------------------------
    def entry(self, entry_id: int) -> QuickReply:
        """The reply ``entry_id``. QuickReplyError when the set has none."""
        for q in self.qrList:
            if q.id == entry_id:
                return q
        raise QuickReplyError(message("qr.no_entry", id=entry_id, name=self.name))

    def mode_of(self, entry: QuickReply) -> Mode:
        """The reply's mode: its own, else "insert" when the set has ``disableSend``, else "send"."""
        return entry.mode or ("insert" if self.disableSend else "send")

    def visible(self) -> list[QuickReply]:
        """The replies shown on the bar (not ``isHidden``), in order."""
        return [q for q in self.qrList if not q.isHidden]

    def compose(self, entry_id: int, current_input: str = "", ctx: Optional[MacroContext] = None) -> Composed:
        """What clicking reply ``entry_id`` does with ``current_input`` in the input box (SillyTavern's rule, module
        doc): with ``injectInput`` and input, the message goes before (``placeBeforeInput``) or after it, joined by a
        space; macros are expanded with ``ctx``. ``send`` follows :meth:`mode_of`, except that STscript is never
        sent by itself (it is inserted for the user to read). QuickReplyError for an unknown id."""
        q = self.entry(entry_id)
        msg = q.text(ctx)
        if self.injectInput and current_input:
            text = f"{msg} {current_input}" if self.placeBeforeInput else f"{current_input} {msg}"
        else:
            text = msg
        return Composed(text=text, send=self.mode_of(q) == "send" and q.script is None)

    # -- edits (in memory; save_set keeps them) ---------------------------------------------------------------
    def add(self, label: str, text: str, mode: Optional[Mode] = None, index: Optional[int] = None) -> QuickReply:
        """Add a reply (at ``index``, 0-based, default the end) with a new id (SillyTavern's: above every id and
        ``idIndex``). Returns it. QuickReplyError for a too long label or message or an unknown mode."""
        new_id = max([self.idIndex] + [q.id for q in self.qrList]) + 1
        q = QuickReply(id=new_id, label=_label(label), message=_message(text), mode=_mode(mode))
        self.idIndex = new_id + 1
        at = len(self.qrList) if index is None else max(0, min(int(index), len(self.qrList)))
        self.qrList.insert(at, q)
        return q

    def update(self, entry_id: int, *, label: Optional[str] = None, text: Optional[str] = None,
               mode: Optional[Mode] = None, hidden: Optional[bool] = None, title: Optional[str] = None,
               clear_mode: bool = False) -> QuickReply:
        """Change a reply; None leaves a field as it is (``clear_mode``: back to the set's mode). Returns it.
        QuickReplyError for an unknown id or a bad value (nothing is changed then)."""
        q = self.entry(entry_id)
        changes: dict[str, Any] = {}
        if label is not None:
            changes["label"] = _label(label)
        if title is not None:
            changes["title"] = _label(title)
        if text is not None:
            changes["message"] = _message(text)
        if mode is not None:
            changes["mode"] = _mode(mode)
        if clear_mode:
            changes["mode"] = None
        if hidden is not None:
            changes["isHidden"] = bool(hidden)
        for k, v in changes.items():
            setattr(q, k, v)
        return q

    def remove(self, entry_id: int) -> None:
        """Delete reply ``entry_id``. QuickReplyError for an unknown id."""
        self.qrList.remove(self.entry(entry_id))

    def move(self, entry_id: int, index: int) -> int:
        """Move reply ``entry_id`` to ``index`` (0-based, clamped). Returns where it landed. QuickReplyError for an
        unknown id."""
        q = self.entry(entry_id)
        self.qrList.remove(q)
        at = max(0, min(int(index), len(self.qrList)))
        self.qrList.insert(at, q)
        return at

    def to_json(self) -> dict[str, Any]:
        """The set as SillyTavern JSON (every key kept; Liyuan's ``mode`` only on replies that have one)."""
        out = self.model_dump(mode="json")
        for q in out["qrList"]:
            if q.get("mode") is None:
                q.pop("mode", None)
        return out


def _label(v: Any) -> str:
    if not isinstance(v, str):
        raise QuickReplyError(message("qr.not_text", what="label", type=type(v).__name__))
    if len(v) > MAX_LABEL_CHARS:
        raise QuickReplyError(message("qr.too_long", what="label", n=len(v), max=MAX_LABEL_CHARS))
    return v


def _message(v: Any) -> str:
    if not isinstance(v, str):
        raise QuickReplyError(message("qr.not_text", what="message", type=type(v).__name__))
    if len(v) > MAX_MESSAGE_CHARS:
        raise QuickReplyError(message("qr.too_long", what="message", n=len(v), max=MAX_MESSAGE_CHARS))
    return v


def _mode(v: Any) -> Optional[Mode]:
    if v is None:
        return None
    if v == "send":
        return "send"
    if v == "insert":
        return "insert"
    raise QuickReplyError(message("qr.bad_mode", value=repr(v)))


# -- import ---------------------------------------------------------------------------------------------------------
class EntryReport(BaseModel):
    """What the import says about one reply: its ``id`` and ``label``, ``script`` (:func:`script_kind`) and
    ``notes`` (catalog messages, :class:`..messages.Msg`: repairs, STscript kept as text, features not
    supported; render them with ``messages.render``)."""

    id: int
    label: str = ""
    script: Optional[str] = None
    notes: list[Any] = Field(default_factory=list)


class ImportResult(BaseModel):
    """A set read from a file: ``set``, ``notes`` about the whole file (repairs, skipped items) and ``entries``
    (one :class:`EntryReport` per reply kept, in order)."""

    set: QuickReplySet
    notes: list[Any] = Field(default_factory=list)
    entries: list[EntryReport] = Field(default_factory=list)

    def lines(self) -> list[Msg]:
        """Every note as a catalog message, the file's first, then ``label: note`` per reply (for the CLI and a
        dialog; ``messages.render`` them in the user's language)."""
        out: list[Msg] = list(self.notes)
        for e in self.entries:
            out += [message("qr.entry_note", label=e.label or str(e.id), note=n) for n in e.notes]
        return out


def _as_text(v: Any) -> Optional[str]:
    """A text field as SillyTavern would show it: a string, a number as its text, null as ""; None = unusable."""
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return str(v)
    return None


def _from_v1(obj: dict[str, Any], label: str, notes: list[Msg]) -> dict[str, Any]:
    """A version-1 file (``quickReplySlots``) as a version-2 set."""
    slots = obj.get("quickReplySlots")
    if not isinstance(slots, list):
        raise QuickReplyError(message("qr.bad_list", file=label, type=type(slots).__name__))
    notes.append(message("qr.v1", file=label))
    items = [{"id": i + 1, "label": s.get("label", ""), "title": s.get("title", ""), "message": s.get("mes", "")}
             if isinstance(s, dict) else s for i, s in enumerate(slots)]
    return {"version": 2, "name": obj.get("name") if isinstance(obj.get("name"), str) else "", "qrList": items,
            "disableSend": False, "placeBeforeInput": obj.get("placeBeforeInputEnabled") is True,
            "injectInput": obj.get("AutoInputInject") is True}


def _entry(i: int, raw: Any, taken: set[int], notes: list[Msg]) -> Optional[tuple[dict[str, Any], list[Msg]]]:
    """One ``qrList`` item cleaned, with its notes; None (and a file note) when it cannot be a reply."""
    if not isinstance(raw, dict):
        notes.append(message("qr.entry_not_object", i=i + 1))
        return None
    q = dict(raw)
    own: list[Msg] = []
    for key in ("label", "title", "message"):
        t = _as_text(q.get(key))
        if t is None:
            notes.append(message("qr.entry_bad_field", i=i + 1, key=key, type=type(q.get(key)).__name__))
            return None
        if key in q and q[key] is not None and not isinstance(q[key], str):
            own.append(message("qr.entry_field_text", key=key))
        q[key] = t
    if len(q["message"]) > MAX_MESSAGE_CHARS:
        notes.append(message("qr.entry_too_long", i=i + 1, label=q["label"][:40], n=len(q["message"]),
                             max=MAX_MESSAGE_CHARS))
        return None
    for key in ("label", "title"):
        if len(q[key]) > MAX_LABEL_CHARS:
            q[key] = q[key][:MAX_LABEL_CHARS]
            own.append(message("qr.entry_cut", key=key, max=MAX_LABEL_CHARS))
    qid = q.get("id")
    if isinstance(qid, bool) or not isinstance(qid, int) or qid < 0 or qid in taken:
        q["id"] = max(taken | {0}) + 1
        own.append(message("qr.entry_id", old=repr(qid), new=q["id"]))
    taken.add(q["id"])
    q["isHidden"] = q.get("isHidden") is True
    if q.get("mode") not in ("send", "insert"):
        q.pop("mode", None)
    kind = script_kind(q["message"])
    if kind is not None:
        q["mode"] = "insert"
        own.append(message("qr.script_command" if kind == "command" else "qr.script_pipe"))
    auto = [k for k in AUTO_FLAGS if q.get(k) is True]
    if auto:
        own.append(message("qr.auto_exec", flags=", ".join(auto)))
    if isinstance(q.get("contextList"), list) and q["contextList"]:
        own.append(message("qr.context_menu"))
    return q, own


def parse_set(obj: Any, label: str = "快速回复", name: Optional[str] = None) -> ImportResult:
    """A Quick Reply set from parsed JSON (module doc). ``label`` names the file in messages; ``name``: the set's
    name (default its own ``name``, else ``label``), cut to :data:`MAX_LABEL_CHARS`. Raises
    :class:`QuickReplyError` for what is not a set (not an object; ``version`` not an integer or ``name`` not a
    string, SillyTavern's rule; ``qrList`` not an array; more than :data:`MAX_ENTRIES` replies)."""
    if not isinstance(obj, dict):
        raise QuickReplyError(message("qr.not_object", file=label, type=type(obj).__name__))
    notes: list[Msg] = []
    if "quickReplySlots" in obj and "qrList" not in obj:
        obj = _from_v1(obj, label, notes)
    elif isinstance(obj.get("version"), bool) or not isinstance(obj.get("version"), int) \
            or not isinstance(obj.get("name"), str):
        raise QuickReplyError(message("qr.not_a_set", file=label))
    items = obj.get("qrList")
    if not isinstance(items, list):
        raise QuickReplyError(message("qr.bad_list", file=label, type=type(items).__name__))
    if len(items) > MAX_ENTRIES:
        raise QuickReplyError(message("qr.too_many", file=label, n=len(items), max=MAX_ENTRIES))
    data = dict(obj)
    set_name = (name if name is not None else data.get("name") or Path(label).stem or label).strip()
    data["name"] = set_name[:MAX_LABEL_CHARS]
    for key in ("disableSend", "placeBeforeInput", "injectInput"):
        data[key] = data.get(key) is True
    taken: set[int] = set()
    cleaned: list[dict[str, Any]] = []
    reports: list[EntryReport] = []
    for i, raw in enumerate(items):
        got = _entry(i, raw, taken, notes)
        if got is None:
            continue
        q, own = got
        cleaned.append(q)
        reports.append(EntryReport(id=q["id"], label=q["label"], script=script_kind(q["message"]),
                                   notes=list(own)))
    data["qrList"] = cleaned
    idx = data.get("idIndex")
    if isinstance(idx, bool) or not isinstance(idx, int):
        data["idIndex"] = max(taken | {0})
    if not isinstance(data.get("version"), int) or isinstance(data.get("version"), bool):
        data["version"] = 2
    try:
        qrs = QuickReplySet.model_validate(data)
    except ValidationError as e:  # pragma: no cover - the cleaning above covers the typed fields
        err = e.errors(include_input=False, include_url=False)[0]
        raise QuickReplyError(message("qr.bad_field", file=label, loc=".".join(str(x) for x in err.get("loc", ())),
                                      error=err.get("msg", ""))) from None
    return ImportResult(set=qrs, notes=list(notes), entries=reports)


def read_set(path: str | Path, name: Optional[str] = None) -> ImportResult:
    """Read a Quick Reply set file (UTF-8, BOM tolerated; size and nesting bounded, module doc) without storing it.
    Raises :class:`QuickReplyError` for unreadable, too big, broken or wrong files (the message names the file)."""
    p = Path(path)
    try:
        check_size(p, MAX_FILE_BYTES)
        raw = p.read_bytes()
        obj = loads(raw, p.name)
    except JsonFileError as e:
        raise QuickReplyError(e.args[0]) from None
    except UnicodeDecodeError:
        raise QuickReplyError(message("qr.not_utf8", file=p.name)) from None
    except json.JSONDecodeError as e:
        raise QuickReplyError(message("qr.bad_json", file=p.name, line=e.lineno, error=e.msg)) from None
    except OSError as e:
        raise QuickReplyError(message("qr.cannot_read", file=str(p), error=e.strerror or str(e))) from None
    return parse_set(obj, p.name, name)


# -- the library ----------------------------------------------------------------------------------------------------
def sets_dir() -> Path:
    """``<home>/快速回复`` (``<home>/quick-replies`` in an English-layout data folder, :mod:`core.paths`;
    created on demand)."""
    d = home_folder("quick_replies")
    d.mkdir(parents=True, exist_ok=True)
    return d


def set_path(name: str) -> Path:
    """The file of the set ``name`` in the library (whether it exists or not)."""
    return sets_dir() / f"{safe_name(name, 'quick-replies')}.json"


def list_sets() -> list[str]:
    """The names of the sets in the library (file stems), sorted."""
    return sorted(p.stem for p in sets_dir().glob("*.json"))


def load_set(name: str) -> QuickReplySet:
    """The library set ``name``. QuickReplyError when it is missing or its file is damaged."""
    p = set_path(name)
    if not p.is_file():
        raise QuickReplyError(message("qr.missing", name=name))
    return read_set(p, name=p.stem).set


def save_set(qrs: QuickReplySet) -> Path:
    """Write ``qrs`` into the library as ``<name>.json`` (atomic; its ``name`` becomes the file-safe library name).
    Returns the path. OSError when the disk refuses (the old file is untouched then)."""
    p = set_path(qrs.name)
    qrs.name = p.stem
    return atomic_write_text(p, json.dumps(qrs.to_json(), ensure_ascii=False, indent=4))


def import_set(path: str | Path, name: Optional[str] = None, replace: bool = False) -> ImportResult:
    """Read a set file (:func:`read_set`) and store it in the library under ``name`` (default the set's own name).
    A set of that name already there is replaced only with ``replace`` (SillyTavern asks first); otherwise
    QuickReplyError. OSError from the disk."""
    result = read_set(path, name)
    if not result.set.name:
        result.set.name = Path(path).stem
    if set_path(result.set.name).exists() and not replace:
        raise QuickReplyError(message("qr.exists", name=set_path(result.set.name).stem))
    save_set(result.set)
    return result


def delete_set(name: str) -> bool:
    """Remove the set ``name`` from the library and from every active list. True if a file was removed. OSError
    when the disk refuses."""
    p = set_path(name)
    removed = False
    if p.is_file():
        p.unlink()
        removed = True
    choices = load_choices()
    stem = p.stem
    if stem in choices.global_sets or any(stem in v for v in choices.chats.values()):
        choices.global_sets = [n for n in choices.global_sets if n != stem]
        choices.chats = {k: [n for n in v if n != stem] for k, v in choices.chats.items()}
        save_choices(choices)
    return removed


# -- which sets are active ------------------------------------------------------------------------------------------
class QuickReplyChoice(BaseModel):
    """The active sets (``<home>/quick_replies.json``): ``global_sets`` (every chat), ``chats`` (chat key →
    that chat's own sets, :func:`.personas.chat_key`). ``load_warning``: set (not saved) when the file was damaged
    and moved aside."""

    model_config = ConfigDict(extra="allow")

    version: int = 1
    global_sets: list[str] = Field(default_factory=list)
    chats: dict[str, list[str]] = Field(default_factory=dict)
    load_warning: Optional[MsgText] = Field(default=None, exclude=True)


def load_choices() -> QuickReplyChoice:
    """The active-set choices. A missing file is none; a damaged one is moved aside to ``quick_replies.json.bad``
    and none come back with ``load_warning`` (never an exception for bad content; OSError when unreadable)."""
    p = home() / CHOICES_FILE
    if not p.exists():
        return QuickReplyChoice()
    raw = p.read_bytes()
    try:
        return QuickReplyChoice.model_validate_json(raw)
    except (ValidationError, ValueError):
        try:
            os.replace(p, p.with_name(p.name + ".bad"))
        except OSError:
            pass
        return QuickReplyChoice(load_warning=message("qr.choices_damaged", file=p.name))


def save_choices(choices: QuickReplyChoice) -> Path:
    """Write the choices atomically. OSError when the disk refuses."""
    return atomic_write_text(home() / CHOICES_FILE,
                             json.dumps(choices.model_dump(mode="json"), ensure_ascii=False, indent=1))


def active_sets(chat_dir: Optional[str | Path] = None) -> list[str]:
    """The sets shown for a chat (``chat_dir``: its folder; None = the global ones only): the global sets, then
    the chat's own, each once, those no longer in the library left out."""
    c = load_choices()
    names = list(c.global_sets)
    if chat_dir is not None:
        names += c.chats.get(chat_key(chat_dir), [])
    have = set(list_sets())
    return [n for n in dict.fromkeys(names) if n in have]


def set_active(names: list[str], chat_dir: Optional[str | Path] = None) -> None:
    """Make ``names`` (in this order) the global active sets, or with ``chat_dir`` that chat's own (an empty list
    removes the chat's entry). QuickReplyError for a name not in the library; OSError from the disk."""
    have = set(list_sets())
    stems = [set_path(n).stem for n in names]
    for n, s in zip(names, stems):
        if s not in have:
            raise QuickReplyError(message("qr.missing", name=n))
    c = load_choices()
    stems = list(dict.fromkeys(stems))
    if chat_dir is None:
        c.global_sets = stems
    elif stems:
        c.chats[chat_key(chat_dir)] = stems
    else:
        c.chats.pop(chat_key(chat_dir), None)
    save_choices(c)
