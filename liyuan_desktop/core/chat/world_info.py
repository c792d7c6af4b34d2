"""A chat's world-info settings (issue 14 §1): the app's settings (SillyTavern's global ``world_info_*`` ones,
``core.settings.AppSettings.world_info``) with the chat's own overrides on top.

The overrides live on the session tree — the source of truth — as the ``world_info`` field of ``chat-settings``
entries (``session.entries.ChatSettingsEntry``: outside every branch, so swipes, undo and branch switches keep
them); the newest entry carrying the field wins, ``{}`` means "the app's settings". The effective settings are put
on the chat's merged book (:meth:`lore.settings.WorldInfoSettings.apply`) when the chat opens and whenever either
side changes; the turn reads the scan window and the budget from :attr:`ChatWorldInfo.effective`.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from ..lore import Lorebook
from ..lore.settings import WorldInfoSettings, check_overrides
from ..messages import message
from ..session.tree import SessionTree


def stored_overrides(tree: SessionTree) -> tuple[dict[str, Any], list[str]]:
    """The chat's world-info overrides from its newest ``chat-settings`` entry with a ``world_info`` field ({} when
    none), and warnings (Chinese) for stored names or values this version cannot use (they are left out).
    O(entries), once per open."""
    for i in reversed(tree.order):
        e = tree.entries[i]
        if e.type != "chat-settings":
            continue
        raw = getattr(e, "world_info", None)
        if raw is None or not isinstance(raw, dict):
            continue
        good: dict[str, Any] = {}
        warnings: list[str] = []
        for k, v in raw.items():
            try:
                good.update(check_overrides({k: v}))
            except ValueError as err:
                warnings.append(message("ctx.wi_setting_bad", error=err))
        return good, warnings
    return {}, []


class ChatWorldInfo:
    """The world-info settings of one open chat: ``defaults`` (the app's), ``overrides`` (the chat's, field → value)
    and ``effective`` (the two merged), applied to the book ``book()`` returns.

    Without app settings (``defaults`` None: library use, tests, the recorded demo) the defaults are what the
    chat's merged book carries when it is attached (:meth:`WorldInfoSettings.from_book`: a card book's own
    ``scan_depth`` / ``recursive_scanning``), so such a chat activates as it always did; the front ends pass the
    app's settings, and then the book's own values are ignored as SillyTavern ignores them."""

    def __init__(self, tree: SessionTree, defaults: Optional[WorldInfoSettings] = None):
        self._tree = tree
        self._book: Optional[Callable[[], Lorebook]] = None
        self._from_book = defaults is None
        self.defaults = defaults.model_copy() if defaults is not None else WorldInfoSettings()
        self.overrides, self.warnings = stored_overrides(tree)
        self.effective = self.defaults.merged(self.overrides)

    def attach(self, book: Callable[[], Lorebook]) -> None:
        """Apply the settings to the chat's book (``book()``: the context's current merged book) from now on."""
        self._book = book
        if self._from_book:
            self.defaults = WorldInfoSettings.from_book(book())
        self._apply()

    def _apply(self) -> None:
        self.effective = self.defaults.merged(self.overrides)
        if self._book is not None:
            self.effective.apply(self._book())

    def set_defaults(self, defaults: WorldInfoSettings) -> None:
        """The app's settings changed (the settings page saved): the chat follows them where it has no override."""
        self.defaults = defaults.model_copy()
        self._from_book = False
        self._apply()

    def set_overrides(self, overrides: dict[str, Any], replace: bool = True) -> bool:
        """Change the chat's overrides: ``overrides`` (SillyTavern names or short names → values) replace the old
        ones (``replace``) or are added to them (a value equal to the app's setting is kept too: the chat holds to it
        when the app's setting changes later). Written as a ``chat-settings`` entry and committed when something changed. Returns whether it did.
        ValueError (Chinese) for an unknown name or a bad value (nothing written); OSError when the disk refuses
        (nothing changed)."""
        new = dict(check_overrides(overrides)) if replace else {**self.overrides, **check_overrides(overrides)}
        self.defaults.merged(new)  # the combination must be valid too
        if new == self.overrides:
            return False
        mark = self._tree.pending_mark()
        self._tree.append("chat-settings", parent_id=None, move_leaf=False, world_info=new)
        try:
            self._tree.commit()
        except OSError:
            self._tree.rollback(mark)
            raise
        self.overrides = new
        self._apply()
        return True
