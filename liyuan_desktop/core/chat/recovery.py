"""What a crash can leave behind in a chat, found when it is opened and put right (issue 15, "nothing lost").

- **The draft of a beat that never got its beat entry** (killed while the model was still writing): the beat's
  draft log (:class:`~..beat.draft.DraftLog`, ``session.draft.jsonl`` beside the session) holds it; on opening,
  :func:`recover_draft` writes it as an ``unsealed`` beat entry under the user's words, so the window and
  ``liyuan chat --continue``/``--seal-as-is`` offer it exactly as they offer a beat that ended without 收笔
  (``Chat.pending_draft``). A log whose beat entry did get written (killed between that write and the log's
  removal) is stale and only removed.
- **Ledger gaps**: a reply saved but killed before the scribe's snapshot. :func:`ledger_gaps` lists the sealed
  replies on the branch that no snapshot covers (a scribe snapshot names the reply it covers in ``covers``; one
  without — older files, the user's own edits — covers everything before it); ``Chat.repair_ledger`` runs the
  scribe for them, oldest first.
- **An unanswered message**: the user's words with no beat after them (killed before the reply). Sent again as
  they are, they would sit in every later prompt as a message the character never answered;
  :func:`unanswered` finds them so the front ends show them and let the user resend, edit or drop them, and
  ``Chat.send`` puts new words beside them rather than after them.
- **A session file with no usable header** (0 bytes after a crash between create and the first write, a full
  disk): :func:`header_fields` gives the fields to rebuild it from the chat folder's ``meta.json`` and the card
  (``SessionTree.open(rebuild_header=…)`` does the repair).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from ..beat.draft import DRAFT_LOG_NAME, DraftLog
from ..cards import Card
from ..messages import Msg, message
from ..session.entries import UserEntry
from ..session.tree import SessionTree


def header_fields(directory: Path, card: Card) -> dict[str, Any]:
    """Header fields for a chat folder whose session lost its header: mode and title from ``meta.json`` (a cache
    the chat rewrites after every command; missing or damaged: role-play, the folder's name), card path and name
    from ``card``. Never raises."""
    meta: dict[str, Any] = {}
    try:
        loaded = json.loads((Path(directory) / "meta.json").read_text("utf-8"))
        meta = loaded if isinstance(loaded, dict) else {}
    except (OSError, ValueError):
        pass
    mode = meta.get("mode") if meta.get("mode") in ("roleplay", "agent") else "roleplay"
    title = meta.get("title") if isinstance(meta.get("title"), str) and meta.get("title") else Path(directory).name
    return {"mode": mode, "card": card.path or "", "card_name": card.name, "persona": card.persona_name or "你",
            "title": title}


def recover_draft(tree: SessionTree, directory: Path) -> Optional[Msg]:
    """Turn the draft log a crash left in ``directory`` into an ``unsealed`` beat entry (committed), then remove
    the log. Returns the warning to show (a catalog message), or None when there was nothing to recover (no log, an empty draft, a
    stale log, the user entry gone). Raises OSError when the beat entry cannot be written (the log is kept)."""
    path = Path(directory) / DRAFT_LOG_NAME
    if not path.exists():
        return None
    rec = DraftLog.read(path)
    user = tree.entries.get(rec.user) if rec is not None else None
    if rec is None or user is None or user.type != "user" or not rec.text.strip():
        path.unlink(missing_ok=True)
        return None
    after = tree.order.index(user.id)
    for i in reversed(tree.order[after + 1:]):  # written after the user's words: file order
        e = tree.entries[i]
        if e.type == "beat" and e.ts >= rec.started:  # the beat entry made it to disk: the log is stale
            path.unlink(missing_ok=True)
            return None
    on_branch = any(e.id == user.id for e in tree.path_to())
    parent = tree.leaf_id if on_branch else user.id
    tree.append("beat", parent_id=parent, move_leaf=on_branch, outcome="unsealed", draft=rec.text,
                draft_version=rec.version, warnings=[message("beat.recovered_short")])
    tree.commit()
    path.unlink(missing_ok=True)
    return message("beat.recovered", n=len(rec.text))


def ledger_gaps(tree: SessionTree) -> list[Any]:
    """The sealed replies on the active branch (role-play chats) that no ledger snapshot covers, oldest first
    (module doc). [] for agent chats, whose ledger follows checkpoints. Replies imported from a SillyTavern chat
    file (their entries carry the file's ``st`` fields) were never scribed and are no gap: the walk stops at the
    newest of them, so an imported 50,000-message chat reports only the replies played here since."""
    if tree.header.mode != "roleplay":
        return []
    gaps: list[Any] = []
    covered_id: Optional[str] = None
    for e in reversed(tree.path_to()):
        if e.type == "assistant" and getattr(e, "st", None) is not None:
            break  # imported from a SillyTavern file: never scribed there, and everything before it is imported too
        if covered_id is not None:
            if e.id == covered_id:
                break
            if e.type == "assistant" and e.sealed:
                gaps.append(e)
            continue
        if e.type == "rp-state":
            cov = getattr(e, "covers", None)  # an extra key of scribe snapshots (chat.pipeline)
            if not isinstance(cov, str) or cov not in tree.entries:
                break  # covers everything before it
            covered_id = cov
            continue
        if e.type == "assistant" and e.sealed:
            gaps.append(e)
    gaps.reverse()
    return gaps


def unanswered(tree: SessionTree) -> Optional[Any]:
    """The user entry at the tip of the active branch that has no beat after it (only its asks, if any) — words
    a crash left unanswered — or None."""
    for e in reversed(tree.path_to()):
        if e.type == "ask":
            continue
        return e if e.type == "user" else None
    return None


def user_before(tree: SessionTree, entry_id: str) -> str:
    """The user's words the reply ``entry_id`` answers (the nearest user entry above it; "" when none)."""
    for e in reversed(tree.path_to(entry_id)):
        if isinstance(e, UserEntry):  # what a "user" line always parses to (a lazy one is a subclass)
            return e.text
    return ""
