"""SillyTavern chat files: export of a Liyuan session tree (the reading side is :mod:`.st_chat`).

Export (:func:`export_st_chat`) writes ST's format from the tree's *active branch*: header (the imported one, or one
made from the tree), then every ``opening``/``user``/``assistant``/``note`` entry on the branch; a message's
``swipes`` are the alternatives of that entry (entries of the same type that are the first message below the
previous message: imported swipes, and replies regenerated in Liyuan), ``swipe_id`` the active one. Revisions on the
branch are applied to the text. When the active alternative differs from the imported selection, ``send_date``,
``gen_started``, ``gen_finished`` and ``extra`` are taken from its ``swipe_info`` entry, as ST does on a swipe.
The greeting's and the replies' ``variables`` hold each swipe's current variable table (its own snapshot, a status
bar's later write to it included; see :mod:`.st_chat`), so an exported game continues in SillyTavern.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

from ..fsutil import atomic_write_text
from ..session import SessionTree
from .st_chat import INTERNAL_FIELDS, MESSAGE_TYPES, OPENING_HEADER, format_create_date, format_send_date, iso_now


def _st(e: Any) -> dict[str, Any]:
    v = getattr(e, "st", None)
    return v if isinstance(v, dict) else {}


def _is_message(e: Any) -> bool:
    # a group chat's turn without user words (chat/group_play.py) is no message in SillyTavern's file
    return e.type in MESSAGE_TYPES and not getattr(e, "group_nudge", False)


def alternatives(tree: SessionTree, entry: Any, anchor_id: Optional[str]) -> list[Any]:
    """The alternatives of a message entry: entries of the same type that are the first message below
    ``anchor_id`` (the previous message, or the header) on any branch — imported swipes and replies regenerated in
    Liyuan (which hang under beat entries) — in file order. Always contains ``entry``."""
    out: list[Any] = []
    stack = list(reversed(tree.children_of.get(anchor_id, [])))
    while stack:
        e = tree.entries[stack.pop()]
        if _is_message(e):
            if e.type == entry.type:
                out.append(e)
            continue
        stack.extend(reversed(tree.children_of.get(e.id, [])))
    if entry not in out:
        out.append(entry)
    return out


def _strip_opening(e: Any, text: str) -> str:
    return OPENING_HEADER.sub("", text, count=1) if e.type == "opening" else text


def st_messages(tree: SessionTree, user_name: str = "", character_name: str = "") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ST header and message objects for the tree's active branch (what :func:`export_st_chat` writes).
    ``user_name``/``character_name`` fill a header made for a Liyuan chat (default: the header's persona and card
    name); an imported header is written back as it was."""
    h = tree.header
    header = dict(_st(h))
    uname = user_name or h.persona or "你"
    cname = character_name or h.card_name
    if not header:
        header = {"user_name": uname, "character_name": cname, "create_date": format_create_date(h.ts),
                  "chat_metadata": {}}
    path = tree.path_to()
    revised: dict[str, str] = {e.target: e.text for e in path if e.type == "revision"}
    aimed = {e.for_message: e.mvu for e in path if e.type == "rp-state" and getattr(e, "for_message", None)}
    on_path = {e.id: k for k, e in enumerate(path)}
    messages: list[dict[str, Any]] = []
    anchor = h.id
    for e in path:
        if not _is_message(e):
            continue
        alts = alternatives(tree, e, anchor)
        anchor = e.id
        out = _export_one(e, alts, revised, uname, cname)
        if e.type in ("opening", "assistant"):
            _write_variables(out, [aimed.get(a.id, _own_variables(tree, path, on_path, a)) for a in alts], alts.index(e))
        messages.append(out)
    return header, messages


def _own_variables(tree: SessionTree, path: Sequence[Any], on_path: dict[str, int], entry: Any) -> Optional[Any]:
    """The variable table a message's own snapshot holds (the newest ``rp-state`` with ``mvu`` below it before the
    next message: on the active branch, or down its newest children off it), as stored; None without one."""
    found = None
    if entry.id in on_path:
        below = path[on_path[entry.id] + 1:]
    else:
        below, cur = [], entry.id
        while tree.children_of.get(cur):
            cur = tree.children_of[cur][-1]
            below.append(tree.entries[cur])
    for x in below:
        if _is_message(x):
            break
        if x.type == "rp-state" and getattr(x, "mvu", None) is not None and not getattr(x, "for_message", None):
            found = x.mvu
    return found


def _write_variables(out: dict[str, Any], tables: list[Optional[Any]], idx: int) -> None:
    """Put the swipes' current variable tables into the message's ``variables`` (TavernHelper's array parallel to
    ``swipes``; a legacy plain object stays one, holding the selected swipe's). A swipe without a snapshot keeps what
    the file had there, else ``{}``; nothing is added to a message that has neither."""
    old = out.get("variables")
    if isinstance(old, dict):
        if tables[idx] is not None:
            out["variables"] = tables[idx]
        return
    if all(t is None for t in tables):
        return
    prev = old if isinstance(old, list) else []
    out["variables"] = [t if t is not None else (prev[k] if k < len(prev) else {}) for k, t in enumerate(tables)]


def _export_one(e: Any, alts: list[Any], revised: dict[str, str], uname: str, cname: str) -> dict[str, Any]:
    idx = alts.index(e)
    base_entry: Any = next((a for a in alts if _st(a) and set(_st(a)) != {"swipe"}), None)
    base = dict(_st(base_entry)) if base_entry is not None else {}
    imported = base_entry is not None
    own_text = revised.get(e.id, e.text)
    text = _strip_opening(e, own_text)
    if imported:
        msg = {k: v for k, v in base.items() if k not in INTERNAL_FIELDS}
    else:
        is_user = e.type == "user"
        msg = {"name": uname if is_user else (getattr(e, "speaker", None) or cname), "is_user": is_user, "is_system": e.type == "note",
               "send_date": format_send_date(e.ts), "extra": {}}
    head: dict[str, Any] = {k: msg.pop(k) for k in ("name", "is_user", "is_system", "send_date") if k in msg}
    out: dict[str, Any] = {**head, "mes": text}
    want_swipes = "swipe_id" in base or len(alts) > 1 or (not imported and e.type in ("assistant", "opening"))
    if e.type == "user" and "swipe_id" not in base:
        want_swipes = False
    if want_swipes:
        texts = [_strip_opening(a, revised.get(a.id, a.text)) for a in alts]
        orig_sid = base.get("swipe_id")
        if "swipe_text" in base and base_entry is e and own_text == e.text and isinstance(orig_sid, int) and orig_sid == idx:
            texts[idx] = base["swipe_text"]
        info = msg.get("swipe_info")
        if isinstance(info, list) or not imported:
            info = list(info) if isinstance(info, list) else []
            for a in alts[len(info):]:
                info.append({"send_date": format_send_date(a.ts), "gen_started": iso_now(a.ts),
                             "gen_finished": iso_now(a.ts), "extra": {}})
            msg["swipe_info"] = info
        variables = msg.get("variables")
        if isinstance(variables, list) and len(variables) < len(alts):
            msg["variables"] = variables + [{} for _ in range(len(alts) - len(variables))]
        if imported and base_entry is not e:
            # the active alternative is not the one selected in the file: take its per-swipe data, as ST does on a
            # swipe; without swipe_info (old files) the message-level data of the other reply must not stick to it
            src = info[idx] if isinstance(info, list) and idx < len(info) and isinstance(info[idx], dict) else None
            if src is None:
                src = {"send_date": format_send_date(e.ts), "extra": {}}
                msg.pop("gen_started", None)
                msg.pop("gen_finished", None)
            for k in ("send_date", "gen_started", "gen_finished", "extra"):
                if k in src:
                    (out if k == "send_date" else msg)[k] = src[k]
        out["swipes"] = texts
        out["swipe_id"] = idx
        msg.pop("swipe_id", None)
    for k, v in msg.items():
        if k not in out:
            out[k] = v
    return out


def export_st_chat(tree: SessionTree, dest_path: str | Path, user_name: str = "", character_name: str = "") -> Path:
    """Write the tree's active branch as an ST ``.jsonl`` chat (see the module doc for what is and is not kept):
    one buffered write to a temp file, fsync, rename — an existing file is replaced only when the write succeeded.
    Lines are ``JSON.stringify``-style (no spaces, UTF-8 text unescaped), joined by ``\\n`` like ST's saveChat.
    Returns the path. Raises OSError."""
    header, messages = st_messages(tree, user_name, character_name)
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    blob = "\n".join([dumps(header), *(dumps(m) for m in messages)])
    dest = Path(dest_path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write_text(dest, blob)



__all__ = ["alternatives", "export_st_chat", "st_messages"]
