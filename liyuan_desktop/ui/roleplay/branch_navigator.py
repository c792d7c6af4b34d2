"""The branch navigator (分支): the chat's tree of user messages as a compact QTreeWidget.

Data: :meth:`Chat.branch_tree` (one node per user message: ``id``, ``parent``, ``beat``, ``text``, ``reply``,
``siblings``, ``replies``, ``active``). Layout:

- the top level is one *chain*: the shown branch from the first beat to its tip (off the shown branch, a chain
  follows the newest child at each step, which is where :meth:`Chat.select` would land);
- a node with alternatives (other user messages under the same parent: edits) gets them as child rows; expanding
  an alternative shows *its* chain, built only then (lazy);
- runs of plain nodes (no alternatives, one reply) are folded into one 「… N 拍 …」 row, built when expanded and
  split into groups of :data:`GROUP` rows, so a 10,000-beat chat shows a handful of rows and never freezes.

Nodes on the shown branch are bold; the node the shown branch ends at is marked ●. Clicking a node emits
:attr:`BranchNavigator.nodeSelected` (the main window calls ``chat.select`` and reloads). All the tree logic is
plain Python over the node dicts; the widget only renders. :class:`EditMessageDialog` is the small 「编辑」 box
for a past user message (its OK starts the new branch).
"""

from __future__ import annotations

from typing import Any, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..infra.i18n import tr
from ..infra.theme import set_role

GROUP = 100
"""Rows per group when a folded run is expanded."""
KEEP_TAIL = 6
"""The newest beats of a chain are always shown unfolded."""
MIN_FOLD = 3
"""Shorter runs of plain nodes are not folded."""

_ROLE = Qt.ItemDataRole.UserRole
_PLACEHOLDER = "…"


class BranchModel:
    """The node list of :meth:`Chat.branch_tree`, indexed: ``children`` (file order), ``by_id``, the roots.
    ``chain(start)`` follows the active child, else the newest one, down to a leaf."""

    def __init__(self, nodes: list[dict[str, Any]]):
        self.nodes = nodes
        self.by_id: dict[str, dict[str, Any]] = {n["id"]: n for n in nodes}
        self.children: dict[Optional[str], list[str]] = {}
        for n in nodes:
            self.children.setdefault(n.get("parent"), []).append(n["id"])
        self.tip = next((n["id"] for n in reversed(nodes) if n.get("active") and
                         not any(self.by_id[c].get("active") for c in self.children.get(n["id"], []))), None)

    def _next(self, kids: list[str]) -> Optional[str]:
        if not kids:
            return None
        return next((k for k in kids if self.by_id[k].get("active")), kids[-1])

    def start(self) -> Optional[str]:
        """The first node of the top-level chain (the shown branch's first beat, else the newest root)."""
        return self._next(self.children.get(None, []))

    def chain(self, start: str) -> list[str]:
        """``start`` and the nodes below it, one per beat (iterative: chains may be 10,000 long)."""
        out = [start]
        cur: Optional[str] = start
        while True:
            cur = self._next(self.children.get(cur, []))
            if cur is None:
                return out
            out.append(cur)

    def alternatives(self, node_id: str) -> list[str]:
        """The other user messages under the same parent (edits of this one), file order."""
        parent = self.by_id[node_id].get("parent")
        return [k for k in self.children.get(parent, []) if k != node_id]

    def sibling_index(self, node_id: str) -> tuple[int, int]:
        """(1-based position among its siblings, count)."""
        sibs = self.children.get(self.by_id[node_id].get("parent"), [node_id])
        return sibs.index(node_id) + 1, len(sibs)

    def plain(self, node_id: str) -> bool:
        """A node with nothing to choose at it: no alternatives and at most one reply."""
        n = self.by_id[node_id]
        return len(self.children.get(n.get("parent"), [])) <= 1 and int(n.get("replies") or 0) <= 1

    def rows(self, chain: list[str], keep: frozenset[str] = frozenset()) -> list[tuple[str, Any]]:
        """The rows of a chain: ``("node", id)`` or ``("fold", [ids])`` for runs of plain nodes. The first node,
        the last :data:`KEEP_TAIL` nodes, the tip and ``keep`` are never folded."""
        out: list[tuple[str, Any]] = []
        run: list[str] = []
        n = len(chain)

        def flush() -> None:
            if len(run) >= MIN_FOLD:
                out.append(("fold", list(run)))
            else:
                out.extend(("node", r) for r in run)
            run.clear()

        for i, nid in enumerate(chain):
            if 0 < i < n - KEEP_TAIL and self.plain(nid) and nid != self.tip and nid not in keep:
                run.append(nid)
            else:
                flush()
                out.append(("node", nid))
        flush()
        return out


def _plain(text: str) -> str:
    """A preview without the role-play emphasis stars (the tree shows plain text)."""
    return " ".join(str(text or "").replace("*", "").split())


def node_label(model: BranchModel, node: dict[str, Any]) -> str:
    """「第 n 拍〔版本 i/n · k 个回复〕 first words → first words of the reply」; the marks come first so a narrow
    pane never cuts them off; ● marks the last beat of the shown branch."""
    i, n = model.sibling_index(node["id"])
    extra = []
    if n > 1:
        extra.append(tr("nav.version", i=i, n=n))
    if int(node.get("replies") or 0) > 1:
        extra.append(tr("nav.replies", n=node["replies"]))
    text = tr("nav.beat", n=node.get("beat", "?"))
    if extra:
        text += f"〔{' · '.join(extra)}〕"
    text += f" {_plain(node.get('text')) or '…'}"
    if node.get("reply"):
        text += f" → {_plain(node['reply'])}"
    if node["id"] == model.tip:
        text = "● " + text
    return text


class BranchNavigator(QWidget):
    """The 分支 pane. :meth:`set_nodes` takes :meth:`Chat.branch_tree`; ``nodeSelected(id)`` when a node is
    clicked. Rebuilding is cheap (the visible rows only); folded runs and alternative chains are built on expand."""

    nodeSelected = Signal(str)
    refreshRequested = Signal()

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        head = QHBoxLayout()
        self.summary = QLabel("")
        self.summary.setObjectName("navSummary")
        self.summary.setWordWrap(True)
        set_role(self.summary, "muted")
        head.addWidget(self.summary, 1)
        self.refresh_btn = QPushButton(tr("nav.refresh"))
        self.refresh_btn.clicked.connect(self.refreshRequested.emit)
        head.addWidget(self.refresh_btn)
        lay.addLayout(head)
        self.tree = QTreeWidget()
        self.tree.setObjectName("branchTree")
        self.tree.setHeaderHidden(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setExpandsOnDoubleClick(False)
        self.tree.itemClicked.connect(self._clicked)
        self.tree.itemExpanded.connect(self._expanded)
        lay.addWidget(self.tree, 1)
        hint = QLabel(tr("nav.hint"))
        hint.setWordWrap(True)
        set_role(hint, "small")
        lay.addWidget(hint)
        self.model = BranchModel([])
        self._busy = False

    # -- data -----------------------------------------------------------------------------------------------
    def set_nodes(self, nodes: list[dict[str, Any]], focus: Optional[str] = None) -> None:
        """Show ``nodes`` (:meth:`Chat.branch_tree`); ``focus``: a node id kept unfolded and scrolled to."""
        self.model = m = BranchModel(nodes)
        self.tree.clear()
        forks = sum(1 for k, v in m.children.items() if len(v) > 1)
        swipes = sum(1 for n in nodes if int(n.get("replies") or 0) > 1)
        active = sum(1 for n in nodes if n.get("active"))
        self.summary.setText(tr("nav.summary", nodes=len(nodes), shown=active, forks=forks, swipes=swipes) if nodes
                             else tr("nav.empty"))
        start = m.start()
        if start is None:
            return
        keep = frozenset([focus]) if focus else frozenset()
        self._fill(self.tree.invisibleRootItem(), m.chain(start), keep)
        target = self.find_item(focus or m.tip or "")
        if target is not None:
            self.tree.setCurrentItem(target)
            self.tree.scrollToItem(target)

    def set_busy(self, busy: bool) -> None:
        """While a beat runs, clicks do not switch branches."""
        self._busy = busy
        self.tree.setEnabled(not busy)

    # -- building rows --------------------------------------------------------------------------------------
    def _fill(self, parent: QTreeWidgetItem, chain: list[str], keep: frozenset[str] = frozenset()) -> None:
        items = []
        for kind, what in self.model.rows(chain, keep):
            items.append(self._node_item(what) if kind == "node" else self._fold_item(what))
        parent.addChildren(items)

    def _node_item(self, node_id: str) -> QTreeWidgetItem:
        m = self.model
        node = m.by_id[node_id]
        it = QTreeWidgetItem([node_label(m, node)])
        it.setData(0, _ROLE, ("node", node_id))
        tip = f"{node.get('text', '')}\n→ {node.get('reply', '')}" if node.get("reply") else node.get("text", "")
        it.setToolTip(0, tip)
        if node.get("active"):
            f = QFont(it.font(0))
            f.setBold(True)
            it.setFont(0, f)
        alts = m.alternatives(node_id)
        if alts:
            for a in alts:
                child = self._alt_item(a)
                it.addChild(child)
            it.setExpanded(False)
        return it

    def _alt_item(self, node_id: str) -> QTreeWidgetItem:
        """An alternative of a node: its own row; its chain below it is built on expand."""
        m = self.model
        node = m.by_id[node_id]
        it = QTreeWidgetItem([node_label(m, node)])
        it.setData(0, _ROLE, ("alt", node_id))
        it.setToolTip(0, node.get("text", ""))
        if node.get("active"):
            f = QFont(it.font(0))
            f.setBold(True)
            it.setFont(0, f)
        if m.children.get(node_id) or m.alternatives(node_id):
            it.addChild(QTreeWidgetItem([_PLACEHOLDER]))
        return it

    def _fold_item(self, ids: list[str]) -> QTreeWidgetItem:
        m = self.model
        a, b = m.by_id[ids[0]].get("beat", "?"), m.by_id[ids[-1]].get("beat", "?")
        it = QTreeWidgetItem([tr("nav.fold", n=len(ids), a=a, b=b)])
        it.setData(0, _ROLE, ("fold", ids))
        it.setForeground(0, Qt.GlobalColor.gray)
        it.addChild(QTreeWidgetItem([_PLACEHOLDER]))
        return it

    def _expanded(self, it: QTreeWidgetItem) -> None:
        data = it.data(0, _ROLE)
        if not data or it.childCount() != 1 or it.child(0).data(0, _ROLE) is not None:
            return  # built already
        it.takeChild(0)
        kind, what = data
        if kind == "fold":
            if len(what) > GROUP:
                it.addChildren([self._fold_item(what[i:i + GROUP]) for i in range(0, len(what), GROUP)])
            else:
                it.addChildren([self._node_item(x) for x in what])
        elif kind == "alt":
            chain = self.model.chain(what)[1:]  # the alternative itself is this row
            if chain:
                self._fill(it, chain)

    # -- clicks ---------------------------------------------------------------------------------------------
    def _clicked(self, it: QTreeWidgetItem, _col: int = 0) -> None:
        data = it.data(0, _ROLE)
        if not data or self._busy:
            return
        kind, what = data
        if kind == "fold":
            it.setExpanded(not it.isExpanded())
        else:
            self.nodeSelected.emit(what)

    # -- for tests and the main window ----------------------------------------------------------------------
    def find_item(self, node_id: str) -> Optional[QTreeWidgetItem]:
        """The row of a node among the rows built so far (None when folded away or not built)."""
        if not node_id:
            return None
        stack = [self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount())]
        while stack:
            it = stack.pop()
            data = it.data(0, _ROLE)
            if data and data[0] in ("node", "alt") and data[1] == node_id:
                return it
            stack.extend(it.child(i) for i in range(it.childCount()))
        return None

    def row_count(self) -> int:
        """Rows built so far (all levels)."""
        n = 0
        stack = [self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount())]
        while stack:
            it = stack.pop()
            n += 1
            stack.extend(it.child(i) for i in range(it.childCount()))
        return n


class EditMessageDialog(QDialog):
    """「编辑」 a past user message: the text in a box; OK emits ``submitted(entry_id, text)`` (the main window
    plays the edited beat on a new branch). Non-modal (``open()``), so the event loop keeps running."""

    submitted = Signal(str, str)

    def __init__(self, entry_id: str, text: str, parent: Optional[QWidget] = None, *, title_key: str = "branch.edit.title",
                 label_key: str = "branch.edit.label", editor_name: str = "editUserText", size: tuple = (560, 260)):
        """``title_key``/``label_key``: the catalog keys of the title and the line above the box (a subclass edits
        another kind of message with the same box, e.g. ``reply_actions.EditReplyDialog``)."""
        super().__init__(parent)
        self.entry_id = entry_id
        self.setWindowTitle(tr(title_key))
        self.resize(*size)
        lay = QVBoxLayout(self)
        self.label = label = QLabel(tr(label_key))
        label.setWordWrap(True)
        lay.addWidget(label)
        self.editor = QPlainTextEdit(text)
        self.editor.setObjectName(editor_name)
        lay.addWidget(self.editor, 1)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        box.accepted.connect(self.accept)
        box.rejected.connect(self.reject)
        lay.addWidget(box)
        self.ok_button = box.button(QDialogButtonBox.StandardButton.Ok)
        self.editor.textChanged.connect(lambda: self.ok_button.setEnabled(bool(self.editor.toPlainText().strip())))

    def accept(self) -> None:
        """Emit the new text (unless empty) and close."""
        text = self.editor.toPlainText().strip()
        if not text:
            return
        super().accept()
        self.submitted.emit(self.entry_id, text)
