"""The chapter pane of an agent chat (写长篇): the chapter files of ``正文/`` and an editor for one of them.

Seed 000: the story is files, one ``.md`` per chapter, and the file names decide the order (``NNN-标题.md``). This
pane lists them in file-name order by title (the name without its number and ``.md``, :func:`title_of`; the file
name and its UTF-16 size in the tooltip) with their 字数 (core/text.py ``count_words``) and lets the user change the
folder by hand; every change is recorded in the story's checkpoints (``历史/``) as a ``user`` checkpoint, so the
checkpoint timeline can always bring it back:

* 新建 — asks a title; the name is :func:`chapter_filename` with the next number (last number + 1).
* 插入 — a new chapter right after the selected one. Its name must sort between the two neighbours. We choose, in
  this order: the next number when there is a gap (``001`` … ``005`` → ``002-标题.md``); else a letter suffix
  (``001`` → ``001a-标题.md``, ``001a`` → ``001b-…``; ``-`` and ``.`` sort before letters, so ``001-x.md`` <
  ``001a-y.md`` < ``002-z.md``). No other file is renamed — the model and the discussion keep referring to the same
  names. Only when no such name exists (e.g. titles that collide) the whole folder is renumbered in order.
* 改名 (or F2 on a row: the title is edited in place) — keeps the number prefix and replaces the title; typing a
  full name ending in ``.md`` renames to exactly that name (that is how a chapter is moved elsewhere in the order).
* 删除 — first a checkpoint of the folder as it is (so the chapter is restorable), then the file is removed and a
  checkpoint 「删除 X」 is made.
* 上移 / 下移 — swaps the number prefixes of the chapter and its neighbour (both renamed, one checkpoint). When the
  prefixes are equal or missing, the folder is renumbered in the new order instead.

Double-click opens a chapter in :class:`~.chapter_editor.ChapterEditor` (below the list): save (button or Ctrl+S)
writes through :meth:`StoryFolder.write` and makes a checkpoint 「编辑 <name>」; a pause in typing autosaves as
「自动保存 <name>」. Renames go through :meth:`StoryFolder.rename` (the engine's confined file operations). In the
editor's distraction-free mode the pane hides its buttons and list (the window hides the rest). Unsaved changes are marked; when the file changed
on disk since it was opened (the agent, a restore), the editor says so — an unmodified editor reloads, a modified
one asks before overwriting.

Dialogs go through the callables ``ask_text``, ``confirm`` and ``inform`` (instance attributes) so tests replace them.
``changed()`` is emitted after every change to the folder (the main window refreshes the timeline).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QInputDialog,
    QLineEdit,
    QSplitter,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.errors import ToolError
from ...core.story.chapters import chapter_filename
from ...core.text import count_words
from ..dialogs.dialogs import tool_button
from ..infra.i18n import show, tr
from .chapter_editor import ChapterEditor
from .story_pane import KEY, StoryPane

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

#: The number prefix of a chapter name: digits, optional lower-case letters (inserted chapters), then ``-``/``.``/…
_PREFIX = re.compile(r"^(\d+)([a-z]*)(?=[-_. ]|$)")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def split_prefix(name: str) -> tuple[str, str, str]:
    """``(digits, letters, tail)`` of a chapter name: ``001a-雨停.md`` → ``("001", "a", "-雨停.md")``;
    no prefix → ``("", "", name)``."""
    m = _PREFIX.match(name)
    if not m:
        return "", "", name
    return m.group(1), m.group(2), name[m.end():]


def title_of(name: str) -> str:
    """The title part of a chapter name (``001-雨夜问名.md`` → ``雨夜问名``)."""
    _d, _l, tail = split_prefix(name)
    if tail.lower().endswith(".md"):
        tail = tail[:-3]
    return tail.lstrip("-_ ")


def tail_for(title: str) -> str:
    """The safe ``-标题.md`` tail for a title, cleaned as :func:`chapter_filename` does (``.md`` when empty)."""
    return chapter_filename(0, title, 1)[1:]


def between_name(before: Optional[str], after: Optional[str], title: str, taken: set[str]) -> Optional[str]:
    """A new chapter name for ``title`` that sorts strictly after ``before`` and before ``after`` (either may be
    None) and is not in ``taken``; None when there is none without renaming other files (see the module doc)."""
    tail = tail_for(title)
    if before is None:
        if after is None:
            return chapter_filename(1, title)
        d, _l, _t = split_prefix(after)
        cands = [f"{n:0{len(d)}d}" for n in range(int(d) - 1, -1, -1)] if d else []
    else:
        d, letters, _t = split_prefix(before)
        if not d:
            return None
        cands = [f"{int(d) + 1:0{len(d)}d}"]
        if letters:
            cands += [d + letters[:-1] + c for c in _LETTERS if c > letters[-1]]
        cands += [d + letters + c for c in _LETTERS]
    for p in cands:
        name = p + tail
        if name in taken:
            continue
        if (before is None or before < name) and (after is None or name < after):
            return name
    return None



class ChapterTreePane(StoryPane):
    """The chapters of an agent chat's ``正文/`` with new / insert / rename / delete / move up / move down, and a
    :class:`ChapterEditor` below. ``set_chat(chat | None)``, ``refresh()``, ``set_busy(bool)``; ``changed()``."""

    changed = Signal()

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.ask_text: Callable[[str, str, str], Optional[str]] = self._ask_text_dialog
        self._word_cache: dict[tuple[str, int, float], int] = {}

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        bar = QHBoxLayout()
        bar.setSpacing(4)
        self.new_btn = tool_button(bar, tr("story.new"), self.new_chapter, tr("story.new.tip"))
        self.insert_btn = tool_button(bar, tr("story.insert"), self.insert_chapter, tr("story.insert.tip"))
        self.rename_btn = tool_button(bar, tr("story.rename"), self.rename_chapter, tr("story.rename.tip"))
        self.delete_btn = tool_button(bar, tr("story.delete"), self.delete_chapter, tr("story.delete.tip"))
        self.up_btn = tool_button(bar, "↑", lambda: self.move_chapter(-1), tr("story.up.tip"))
        self.down_btn = tool_button(bar, "↓", lambda: self.move_chapter(1), tr("story.down.tip"))
        bar.addStretch(1)
        self.bar = QWidget()
        self.bar.setLayout(bar)
        bar.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.bar)

        self.list = self.make_list([tr("desk.col.title"), tr("story.col.size")])
        self.list.itemDoubleClicked.connect(lambda it, _c: self.open_chapter(it.data(0, KEY)))
        self.list.itemSelectionChanged.connect(self._update_buttons)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.EditKeyPressed)  # F2 edits the title in place
        self.list.itemChanged.connect(self._title_edited)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        for text, slot in ((tr("story.open"), lambda: self.open_chapter(self.selected())),
                           (tr("story.insert"), self.insert_chapter), (tr("story.rename"), self.rename_chapter),
                           (tr("story.delete"), self.delete_chapter)):
            act = QAction(text, self.list)
            act.triggered.connect(slot)
            self.list.addAction(act)

        self.editor = ChapterEditor()
        self.editor.confirm = lambda t, x: self.confirm(t, x)
        self.editor.inform = lambda t, x: self.inform(t, x)
        self.editor.saved.connect(self._editor_saved)
        self.editor.focusModeChanged.connect(self._focus_mode)
        self.editor.autosaved.connect(self._editor_autosaved)

        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(self.list)
        self.split.addWidget(self.editor)
        self.split.setSizes([140, 560])  # the editor gets the room; the list scrolls
        self.split.setChildrenCollapsible(False)
        lay.addWidget(self.split, 1)
        self.make_status(lay)
        self.set_chat(None)

    # -- dialogs (replaced in tests) ------------------------------------------------------------------------
    def _ask_text_dialog(self, title: str, label: str, text: str = "") -> Optional[str]:
        value, ok = QInputDialog.getText(self, title, label, QLineEdit.EchoMode.Normal, text)
        return value if ok else None

    # -- chat -----------------------------------------------------------------------------------------------
    @property
    def story(self) -> Any:
        """The shown chat's story workspace (``core.story.workspace``)."""
        return self.shown_chat.story

    def set_chat(self, chat: Optional[Chat]) -> None:
        """Show ``chat``'s chapters (agent chats; anything else or None shows an empty, disabled pane)."""
        self._show_chat(chat)
        self.editor.close_chapter()
        self.refresh()

    def chapter_names(self) -> list[str]:
        return [c.name for c in self.story.chapters()] if self.chat is not None else []

    def refresh(self) -> None:
        """Re-read the folder (keeps the selection) and check the open chapter against the disk."""
        self._fill(self._rows())  # signals blocked: itemChanged means a title typed in place, not rows being filled
        if self.chat is not None:
            self.editor.check_disk()
        self._update_buttons()

    def _rows(self) -> Iterator[QTreeWidgetItem]:
        """One row a chapter: its title (editable in place) and 字数, keyed by the file name."""
        for c in self.story.chapters() if self.chat is not None else []:
            words = self._words(c)
            it = QTreeWidgetItem([title_of(c.name) or c.name, tr("desk.words", n=words)])
            it.setData(0, KEY, c.name)
            it.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            it.setToolTip(0, tr("desk.chapter.tip", name=c.name, size=c.size))
            it.setToolTip(1, tr("desk.chapter.tip", name=c.name, size=c.size))
            it.setFlags(it.flags() | Qt.ItemFlag.ItemIsEditable)
            yield it

    def _title_edited(self, item: QTreeWidgetItem, column: int) -> None:
        """A title typed in place (F2 on a row): rename the file through :meth:`rename_to`."""
        name = item.data(0, KEY)
        if column != 0:  # the 字数 cell is not editable in meaning: put it back
            QTimer.singleShot(0, self.refresh)
            return
        if not name or item.text(0) == (title_of(name) or name):
            return
        typed = item.text(0)
        QTimer.singleShot(0, lambda: self.rename_to(name, typed) or self.refresh())  # not inside the item's own signal

    def _words(self, c: Any) -> int:
        """字数 of chapter ``c`` (a ChapterInfo), cached by (name, size, mtime) so a refresh reads only changed files."""
        key = (c.name, c.size, c.mtime)
        n = self._word_cache.get(key)
        if n is None:
            try:
                with open(self.story.resolve(c.name), "r", encoding="utf-8", errors="replace", newline="") as f:
                    n = count_words(f.read())
            except (OSError, ToolError):
                n = 0
            self._word_cache[key] = n
        return n

    def names(self) -> list[str]:
        """The chapter file names as listed (top to bottom)."""
        return self.keys()

    def _update_buttons(self) -> None:
        ok = self.chat is not None and not self._busy
        sel = self.selected()
        names = self.keys()
        i = names.index(sel) if sel in names else -1
        self.new_btn.setEnabled(ok)
        self.insert_btn.setEnabled(ok and sel is not None)
        self.rename_btn.setEnabled(ok and sel is not None)
        self.delete_btn.setEnabled(ok and sel is not None)
        self.up_btn.setEnabled(ok and i > 0)
        self.down_btn.setEnabled(ok and 0 <= i < len(names) - 1)
        self.list.setEnabled(self.chat is not None)
        self.editor.setEnabled(self.chat is not None and not self._busy)

    # -- helpers --------------------------------------------------------------------------------------------
    def _done(self, message: str, select: Optional[str] = None) -> None:
        self.status.setText(message)
        self.refresh()
        if select:
            self.select(select)
        self.changed.emit()

    def _fail(self, e: BaseException) -> None:
        self.inform(tr("story.title"), show(getattr(e, "message", None) or e))
        self.refresh()

    def _check_new(self, name: str, old: Optional[str] = None) -> None:
        """Raise ToolError when ``name`` is not a valid new chapter name (or already exists)."""
        target = self.story.resolve(name, write=True)
        if target.name != name:
            raise ToolError("bad_path", tr("story.err.name", name=name))
        if target.exists() and name != old:
            raise ToolError("bad_path", tr("story.err.exists", name=name))

    def _rename_many(self, mapping: dict[str, str]) -> None:
        """Rename several chapters at once (via hidden temp names, so swaps work); no checkpoint."""
        mapping = {a: b for a, b in mapping.items() if a != b}
        if not mapping:
            return
        others = set(self.chapter_names()) - set(mapping)
        for new in mapping.values():
            self._check_new(new, old=new if new in mapping else None)
            if new in others:
                raise ToolError("bad_path", tr("story.err.exists", name=new))
        self.story.rename(mapping)  # confined to 正文/, swaps via temp names, all put back on failure
        if self.editor.name in mapping:
            self.editor.renamed(mapping[self.editor.name])

    def _renumber(self, order: list[str], insert: Optional[tuple[int, str]] = None) -> dict[str, str]:
        """Names for ``order`` (and an optional new title at position ``insert[0]``) numbered in sequence, keeping
        each title: ``{old: new}`` plus ``{"": new name of the inserted one}`` when inserting."""
        first = split_prefix(order[0])[0] if order else ""
        start = int(first) if first and int(first) <= 1 else 1
        n = len(order) + (1 if insert else 0)
        width = max(3, len(str(start + n - 1)), *(len(split_prefix(x)[0]) for x in order))
        slots: list[tuple[str, str]] = [(x, split_prefix(x)[2] if split_prefix(x)[0] else "-" + x) for x in order]
        if insert:
            slots.insert(insert[0], ("", tail_for(insert[1])))
        out = {}
        for k, (old, tail) in enumerate(slots):
            if not tail.startswith(("-", "_", ".", " ")):
                tail = "-" + tail
            out[old] = f"{start + k:0{width}d}{tail}"
        return out

    def _next_number(self) -> tuple[int, int]:
        nums = [split_prefix(n)[0] for n in self.chapter_names()]
        nums = [x for x in nums if x]
        if not nums:
            return 1, 3
        return max(int(x) for x in nums) + 1, max(3, max(len(x) for x in nums))

    # -- commands -------------------------------------------------------------------------------------------
    def new_chapter(self) -> Optional[str]:
        """Ask a title; create ``NNN-标题.md`` (next number) empty, commit 「新建 X」, open it."""
        if self.chat is None:
            return None
        title = self.ask_text(tr("story.new"), tr("story.ask.title"), "")
        if title is None:
            return None
        return self._create(lambda: self._last_name(title), "新建")

    def _last_name(self, title: str) -> str:
        """The name of a new chapter ``title`` after the last one (the next number, as wide as the others)."""
        n, width = self._next_number()
        return chapter_filename(n, title, max(width, len(str(n))))

    def _create(self, plan: Callable[[], Optional[str]], verb: str) -> Optional[str]:
        """Create an empty chapter named by ``plan()`` (which may rename others first; None: the user cancelled),
        commit 「{verb} name」, select and open it. Errors are told and leave None."""
        try:
            name = plan()
            if name is None:
                return None
            self._check_new(name)
            self.story.write(name, "")
            self.history.commit(author="user", message=f"{verb} {name}")
        except (OSError, ToolError) as e:
            self._fail(e)
            return None
        self._done(tr("story.done.new", name=name), select=name)
        self.open_chapter(name)
        return name

    def insert_chapter(self) -> Optional[str]:
        """Ask a title; create a chapter right after the selected one (see the module doc for the name)."""
        sel = self.selected()
        if self.chat is None or sel is None:
            return None
        title = self.ask_text(tr("story.insert"), tr("story.ask.insert", name=sel), "")
        if title is None:
            return None
        names = self.chapter_names()
        i = names.index(sel) if sel in names else len(names) - 1
        after = names[i + 1] if i + 1 < len(names) else None

        def plan() -> Optional[str]:
            if after is None:
                return self._last_name(title)
            name = between_name(sel, after, title, set(names))
            if name is not None:
                return name
            # no name fits between: renumber the whole folder with the new one in place
            renames = self._renumber(names, insert=(i + 1, title))
            name = renames.pop("")
            if renames:
                if not self.confirm(tr("story.insert"), tr("story.confirm.renumber", n=sum(1 for a, b in renames.items() if a != b))):
                    return None
                self.history.commit(author="user", message="插入前自动保存")
                self._rename_many(renames)
            return name

        return self._create(plan, "插入")

    def rename_chapter(self) -> Optional[str]:
        """Ask a new title (the number prefix stays) or a full name ending in ``.md``; rename, commit 「改名 A → B」."""
        sel = self.selected()
        if self.chat is None or sel is None:
            return None
        typed = self.ask_text(tr("story.rename"), tr("story.ask.rename", name=sel), title_of(sel))
        return self.rename_to(sel, typed)

    def rename_to(self, sel: str, typed: Optional[str]) -> Optional[str]:
        """Rename chapter ``sel`` to the title ``typed`` (the number prefix stays) or, when it ends in ``.md``, to
        exactly that name; commit 「改名 A → B」. The title cell's in-place edit (F2) and 改名 both end here. Returns
        the new name (``sel`` when unchanged) or None when refused (the reason is shown)."""
        if self.chat is None or typed is None or not typed.strip():
            return None
        typed = typed.strip()
        if typed.lower().endswith(".md"):
            new = typed
        else:
            d, letters, _tail = split_prefix(sel)
            tail = tail_for(typed)
            if tail == ".md":
                return None
            new = d + letters + tail if d else tail[1:]
        if new == sel:
            return sel
        try:
            self._check_new(new)
            self._rename_many({sel: new})
            self.history.commit(author="user", message=f"改名 {sel} → {new}")
        except (OSError, ToolError) as e:
            self._fail(e)
            return None
        self._done(tr("story.done.rename", old=sel, new=new), select=new)
        return new

    def delete_chapter(self) -> bool:
        """Confirm; checkpoint the folder as it is, remove the file, commit 「删除 X」 (restorable)."""
        sel = self.selected()
        if self.chat is None or sel is None:
            return False
        text = tr("story.confirm.delete", name=sel)
        if self.editor.name == sel and self.editor.dirty:
            text += "\n\n" + tr("story.confirm.delete.unsaved")
        if not self.confirm(tr("story.delete"), text):
            return False
        try:
            self.history.commit(author="user", message="删除前自动保存")
            self.story.resolve(sel).unlink()
            self.history.commit(author="user", message=f"删除 {sel}")
        except (OSError, ToolError) as e:
            self._fail(e)
            return False
        if self.editor.name == sel:
            self.editor.close_chapter()
        self._done(tr("story.done.delete", name=sel))
        return True

    def move_chapter(self, step: int) -> Optional[str]:
        """Move the selected chapter up (-1) or down (+1): swap number prefixes with the neighbour (renumber the
        folder when that cannot express the new order); one checkpoint 「上移/下移 X」."""
        sel = self.selected()
        if self.chat is None or sel is None:
            return None
        names = self.chapter_names()
        if sel not in names:
            return None
        i = names.index(sel)
        j = i + step
        if not 0 <= j < len(names):
            return None
        other = names[j]
        order = list(names)
        order[i], order[j] = order[j], order[i]
        ds, ls, ts = split_prefix(sel)
        do, lo, to = split_prefix(other)
        plan = {sel: do + lo + ts, other: ds + ls + to} if ds and do and ds + ls != do + lo else None
        if plan is not None:
            result = [plan.get(x, x) for x in order]
            if len(set(result)) != len(result) or sorted(result) != result:
                plan = None
        if plan is None:
            plan = self._renumber(order)
        new = plan.get(sel, sel)
        verb = "上移" if step < 0 else "下移"
        try:
            self._rename_many(plan)
            self.history.commit(author="user", message=f"{verb} {sel} → {new}")
        except (OSError, ToolError) as e:
            self._fail(e)
            return None
        self._done(tr("story.done.move", name=new), select=new)
        return new

    def open_chapter(self, name: Optional[str]) -> bool:
        """Open chapter ``name`` in the editor (asks first when the open one has unsaved changes)."""
        if self.chat is None or not name:
            return False
        if self.editor.name == name:
            self.editor.check_disk()
            return True
        if self.editor.dirty and not self.confirm(tr("story.title"), tr("story.confirm.discard", name=self.editor.name)):
            return False
        return self.editor.open(self.story, self.history, name)

    def _editor_saved(self, name: str) -> None:
        self._done(tr("story.done.save", name=name), select=name)

    def _editor_autosaved(self, name: str) -> None:
        self.status.setText(tr("desk.autosaved", name=name))

    def _focus_mode(self, on: bool) -> None:
        """The editor's distraction-free mode: only the editor stays (the window hides its other panes)."""
        self.bar.setVisible(not on)
        self.list.setVisible(not on)
        self.status.setVisible(not on)
