"""Branches of a session tree (issue 7): regenerate = a sibling reply, swipes, an edited user message = a sibling
user entry, undo, and the navigator's compact tree. Reads the tree and moves its leaf; never deletes anything.

Rules: an assistant reply's alternatives are the attempts under its user entry (one per regenerate; a failed
attempt counts only while it is the one on screen); a user message's alternatives are the user entries under the
same parent (one per edit). Moving to an entry shows the tip below it, following the newest child at each step.
"""

from __future__ import annotations

from typing import Any, Optional

from ..messages import message
from .tree import SessionTree


def _shown_user(e: Any) -> bool:
    """``transcript.shown_user`` (transcript.py imports this module): a user entry that is not a group chat's
    hidden turn."""
    from .transcript import shown_user

    return shown_user(e)


def first_words(text: str, n: int = 24) -> str:
    """The first ``n`` characters of a text on one line (for the navigator), with … when cut."""
    one = " ".join(text.split())
    return one if len(one) <= n else one[:n] + "…"


class Branches:
    """Branch queries and leaf moves over one :class:`SessionTree` (leaf moves write only the leaf pointer)."""

    def __init__(self, tree: SessionTree):
        self.tree = tree

    def tip(self, entry_id: str) -> str:
        """The tip of the branch below ``entry_id``: follow the newest child (file order) down to a leaf entry."""
        cur = entry_id
        while True:
            kids = self.tree.children_of.get(cur)
            if not kids:
                return cur
            cur = kids[-1]

    def move_to(self, entry_id: str) -> str:
        """Make the tip below ``entry_id`` the active leaf and persist it. Returns the new leaf id; KeyError for an
        unknown id."""
        leaf = self.tip(entry_id)
        self.tree.set_leaf(leaf)
        self.tree.persist_leaf()
        return leaf

    def has_reply(self, entry_id: str) -> bool:
        """Whether the branch below ``entry_id`` (newest child down to its tip) reaches a reply before the next
        user message."""
        cur = entry_id
        while True:
            t = self.tree.entries[cur].type
            if t in ("assistant", "opening"):
                return True
            if t == "user" and cur != entry_id:
                return False
            kids = self.tree.children_of.get(cur)
            if not kids:
                return False
            cur = kids[-1]

    def swipe_group(self, entry_id: str) -> tuple[Optional[str], list[str], int]:
        """(owner, sibling ids, index of the one on the active branch) for a transcript item (see module doc)."""
        tree = self.tree
        e = tree.get(entry_id)
        if e.type == "user":
            owner = e.parent_id
            sibs = [i for i in tree.children_of.get(owner, []) if _shown_user(tree.entries[i])]
            return owner, sibs, sibs.index(e.id)
        cur = e  # walk up to the child of the nearest user/opening/header entry
        while cur.parent_id is not None and tree.entries[cur.parent_id].type not in ("user", "opening", "header"):
            cur = tree.entries[cur.parent_id]
        owner = cur.parent_id
        # a failed/stopped attempt counts only while it is on screen (重来 after errors shows 1/1, not 8/8)
        sibs = [i for i in tree.children_of.get(owner, [])
                if tree.entries[i].type != "user" and (i == cur.id or self.has_reply(i))]
        return owner, sibs, sibs.index(cur.id) if cur.id in sibs else 0

    def count_user_siblings(self, e: Any) -> int:
        """How many user entries share ``e``'s parent (1 when it is an only child; a group chat's hidden turn
        beside it — words sent after a crash cut a follow-up — is no alternative)."""
        kids = self.tree.children_of.get(e.parent_id, [])
        return 1 if len(kids) == 1 else sum(1 for k in kids if _shown_user(self.tree.entries[k]))

    def swipe_info(self, entry_id: str) -> tuple[int, int]:
        """(index, count) of the alternatives of a transcript item (1-based index; (1, 1) when there are none)."""
        _, sibs, i = self.swipe_group(entry_id)
        return i + 1, max(1, len(sibs))

    def swipe_target(self, entry_id: str, delta: int) -> Optional[str]:
        """The alternative ``delta`` steps away (wrapping), or None when the item has no alternatives."""
        _, sibs, i = self.swipe_group(entry_id)
        return sibs[(i + delta) % len(sibs)] if len(sibs) >= 2 else None

    def undo_target(self) -> str:
        """Where 「撤销本轮」 moves the leaf: the parent of the branch's last user message. ValueError without one.
        A ledger revert or hand-set value at the leaf (a snapshot with ``reverts`` / ``sets``, issue 33) is undone
        first: the leaf goes to its parent."""
        leaf = self.tree.entries.get(self.tree.leaf_id or "")
        if leaf is not None and leaf.type == "rp-state" and leaf.parent_id and \
                (getattr(leaf, "reverts", None) or getattr(leaf, "sets", None)):
            return str(leaf.parent_id)
        user = self.tree.latest("user")
        if user is None or user.parent_id is None:
            raise ValueError(message("undo.nothing"))
        return str(user.parent_id)

    def pending_draft(self) -> Optional[Any]:
        """The beat entry of an unfinished beat at the tip of the branch (not sealed, draft not empty, no reply
        after it), or None."""
        for e in reversed(self.tree.path_to()):
            if e.type in ("assistant", "user", "revision"):
                return None
            if e.type == "beat":
                return e if e.outcome in ("unsealed", "out_of_rounds", "stopped", "error") and e.draft.strip() else None
        return None

    def sealed_beat_count(self) -> int:
        """Beats on the active branch that ended sealed or revised the previous reply."""
        return sum(1 for e in self.tree.path_to() if e.type == "beat" and e.outcome in ("sealed", "revised_previous"))

    def navigator(self) -> list[dict[str, Any]]:
        """The chat as a compact tree for the branch navigator: one node per user message, file order,
        ``{"id", "parent" (node above or None), "beat" (1-based depth), "text" (first words), "reply" (first words
        of its reply on the shown branch for an active node, else of the newest reply below it; "" when none),
        "reply_id", "siblings" (alternatives of this message), "replies" (attempts under it that produced a reply),
        "active" (on the shown branch)}``. A group chat's hidden turns (``transcript.hidden_turn``) are no node:
        the replies after them belong to the user's message above. O(entries)."""
        tree = self.tree
        on_path = {e.id for e in tree.path_to()}
        node_of: dict[str, Optional[str]] = {}
        beat_of: dict[Optional[str], int] = {None: 0}
        nodes: list[dict[str, Any]] = []
        by_id: dict[str, dict[str, Any]] = {}
        for i in tree.order:
            e = tree.entries[i]
            up = node_of.get(e.parent_id) if e.parent_id is not None else None
            if _shown_user(e):  # a group chat's hidden turn is no node
                sib = sum(1 for k in tree.children_of.get(e.parent_id, []) if tree.entries[k].type == "user")
                replies = [k for k in tree.children_of.get(e.id, []) if tree.entries[k].type != "user" and self.has_reply(k)]
                beat_of[e.id] = beat_of.get(up, 0) + 1
                node = {"id": e.id, "parent": up, "beat": beat_of[e.id], "text": first_words(e.text),
                        "reply": "", "siblings": sib, "replies": len(replies), "active": e.id in on_path}
                nodes.append(node)
                by_id[e.id] = node
                node_of[e.id] = e.id
            else:
                node_of[e.id] = up
                if e.type == "assistant" and up in by_id:
                    node = by_id[up]
                    if not (node["active"] and node.get("_shown")):  # an active node keeps the reply on screen
                        node["reply"] = first_words(e.text)
                        node["reply_id"] = e.id
                        if node["active"] and e.id in on_path:
                            node["_shown"] = True
        for n in nodes:
            n.pop("_shown", None)
        return nodes
