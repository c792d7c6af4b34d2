"""The card-update bar above the conversation (issue 33 §4): the card the shown chat plays was replaced in the library
(re-import, the card editor, ``liyuan card set``, another program).

The bar says what changed (``Chat.card_update``: fields, greetings, book entries, regex scripts, initial variables,
counted; 「查看改动」 lists them) and offers 「从下一拍用新版」 (``Chat.refresh_card``: the next prompt uses the new card;
its cached prefix changes once; the library kept the old version in the card's ``versions/``) or 「保持旧版」
(``Chat.keep_card``: this chat plays the version it read, also when opened again, until the card changes once
more — ``core/chat/card_keep.py``); in 「查看改动」 single changes can be checked and taken alone
(``Chat.take_card_changes``). Left alone, the next beat takes
the new version, as before. It looks when a chat is shown, after a notice naming the settings or the library, and
when the application becomes active again (the card may have been changed by another program). Strings: ``cu.``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ...core.cards.update_diff import pick_key
from ..infra.i18n import register, show, tr

if TYPE_CHECKING:  # pragma: no cover
    from ...core.cards.update_diff import CardDiff
    from ...core.chat import Chat

register({
    "cu.bar": {"zh": "角色卡「{name}」已更新：{what}。", "en": "The card “{name}” was updated: {what}."},
    "cu.fields": {"zh": "字段 {n} 处", "en": "fields: {n}"},
    "cu.greetings": {"zh": "开场白 {n} 处", "en": "greetings: {n}"},
    "cu.entries": {"zh": "世界书条目 {n} 条", "en": "book entries: {n}"},
    "cu.regex": {"zh": "正则脚本 {n} 个", "en": "regex scripts: {n}"},
    "cu.variables": {"zh": "初始变量 {n} 个", "en": "initial variables: {n}"},
    "cu.show": {"zh": "查看改动", "en": "Show changes"},
    "cu.use": {"zh": "从下一拍用新版", "en": "Use the new version from the next beat"},
    "cu.keep": {"zh": "保持旧版", "en": "Keep the old version"},
    "cu.used": {"zh": "下一拍起用新版角色卡（提示词缓存的前缀会变一次；旧版留在卡的 versions/ 里）。",
                "en": "The new card is used from the next beat (the prompt's cached prefix changes once; the old "
                      "version stays in the card's versions/)."},
    "cu.kept": {"zh": "这个对话继续用旧版角色卡（重新打开也是；卡再更新时会再问）。",
                "en": "This chat keeps the old card, also when opened again (a later update asks again)."},
    "cu.title": {"zh": "角色卡的改动", "en": "What changed in the card"},
    "cu.take": {"zh": "只用勾选的改动", "en": "Use only the checked changes"},
    "cu.close": {"zh": "关闭", "en": "Close"},
    "cu.pick.hint": {"zh": "勾选要用的改动（其余保持这个对话现在用的版本）；初始变量随它所在的世界书条目。",
                     "en": "Check the changes to use (the rest stays as this chat plays it); initial variables go with "
                           "their world-book entry."},
    "cu.picked": {"zh": "下一拍起用勾选的 {n} 处改动，其余保持旧版。",
                  "en": "The {n} checked change(s) are used from the next beat; the rest stays as it was."},
    "cu.added": {"zh": "新增", "en": "added"},
    "cu.removed": {"zh": "删除", "en": "removed"},
    "cu.changed": {"zh": "修改", "en": "changed"},
})

AREAS = ("fields", "greetings", "entries", "regex", "variables")


def _short(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else "" if value is None else str(value)
    text = text.replace("\n", " ")
    return text[:limit] + ("…" if len(text) > limit else "")


def summary(diff: CardDiff) -> str:
    """「字段 1 处、世界书条目 4 条…」: the areas that changed, counted."""
    return tr("sep.list").join(tr(f"cu.{a}", n=n) for a, n in diff.counts().items())


def change_line(area: str, c: Any) -> str:
    """One change as a line: ``key（label）: kind [parts]  old → new`` (values for text areas only)."""
    label = f"（{c.label}）" if c.label and c.label != c.key else ""
    parts = f" [{', '.join(c.parts)}]" if c.parts else ""
    values = f"  {_short(c.old)} → {_short(c.new)}" if area in ("fields", "greetings", "variables") else ""
    return f"{c.key}{label}: {tr('cu.' + c.kind)}{parts}{values}"


def details(diff: CardDiff) -> str:
    """Every change, one line each, grouped by area (:func:`change_line`, indented under the area's count)."""
    lines: list[str] = []
    for area in AREAS:
        items = getattr(diff, area)
        if items:
            lines.append(tr(f"cu.{area}", n=len(items)))
            lines += [f"  {change_line(area, c)}" for c in items]
    return "\n".join(lines)


class PickDialog(QDialog):
    """Every change of a card update, one line each (the :func:`details` lines), those that can be taken alone
    checkable (a field, all greetings, a book entry — initial variables live in theirs —, a regex script)."""

    def __init__(self, diff: CardDiff, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("cardUpdatePick")
        self.setWindowTitle(tr("cu.title"))
        self.list = QListWidget()
        seen: set[str] = set()
        for area in AREAS:
            for c in getattr(diff, area):
                it = QListWidgetItem(change_line(area, c))
                key = pick_key(area, c)
                if area != "variables" and key not in seen:
                    seen.add(key)
                    it.setFlags(it.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                    it.setCheckState(Qt.CheckState.Unchecked)
                    it.setData(Qt.ItemDataRole.UserRole, key)
                self.list.addItem(it)
        take = QPushButton(tr("cu.take"))
        take.setObjectName("cardUpdateTake")
        take.clicked.connect(lambda _=False: self.accept())
        close = QPushButton(tr("cu.close"))
        close.clicked.connect(lambda _=False: self.reject())
        close.setDefault(True)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(take)
        row.addWidget(close)
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel(tr("cu.pick.hint")))
        lay.addWidget(self.list, 1)
        lay.addLayout(row)
        self.resize(640, 420)

    def picks(self) -> list[str]:
        """The keys of the checked changes."""
        out = []
        for i in range(self.list.count()):
            it = self.list.item(i)
            if it is not None and it.checkState() == Qt.CheckState.Checked and it.data(Qt.ItemDataRole.UserRole):
                out.append(str(it.data(Qt.ItemDataRole.UserRole)))
        return out


class CardUpdateBar(QFrame):
    """The bar (module doc); hidden while the shown chat's card is the one on disk."""

    def __init__(self, session: Any, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.session = session
        self.chat: Optional[Chat] = None
        self.diff: Optional[CardDiff] = None
        self.pick_dialog: Optional[PickDialog] = None
        self.setObjectName("cardUpdateBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.label = QLabel("")
        self.label.setWordWrap(True)
        self.show_btn = QPushButton(tr("cu.show"))
        self.show_btn.setObjectName("cardUpdateShow")
        self.use_btn = QPushButton(tr("cu.use"))
        self.use_btn.setObjectName("cardUpdateUse")
        self.keep_btn = QPushButton(tr("cu.keep"))
        self.keep_btn.setObjectName("cardUpdateKeep")
        self.show_btn.clicked.connect(lambda _=False: self.show_details())
        self.use_btn.clicked.connect(lambda _=False: self.use_new())
        self.keep_btn.clicked.connect(lambda _=False: self.keep_old())
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 4, 8, 4)
        lay.addWidget(self.label, 1)
        for b in (self.show_btn, self.use_btn, self.keep_btn):
            lay.addWidget(b)
        self.hide()

    def set_chat(self, chat: Optional[Chat]) -> None:
        """Another chat is shown (or none): look at its card."""
        self.chat = chat
        self.check()

    def check(self) -> None:
        """Show the bar when the shown chat's card changed on disk, else hide it."""
        chat = self.chat
        self.diff = chat.card_update() if chat is not None and not chat.beat_running() else None
        if self.diff is None or self.diff.empty():
            self.hide()
            return
        assert chat is not None
        self.label.setText(tr("cu.bar", name=chat.card.name, what=summary(self.diff)))
        self.show()

    def app_state(self, state: Qt.ApplicationState) -> None:
        """The application became active again: the card may have been changed by another program."""
        if state == Qt.ApplicationState.ApplicationActive:
            self.check()

    def show_details(self) -> None:
        """The changes in a dialog (:class:`PickDialog`): closing it changes nothing; 「只用勾选的改动」 takes the
        checked ones (``Chat.take_card_changes``) and keeps the rest as the chat plays it."""
        if self.diff is None or self.chat is None:
            return
        dlg = PickDialog(self.diff, self)
        self.pick_dialog = dlg
        if dlg.exec() != QDialog.DialogCode.Accepted or not dlg.picks():
            return
        chat = self.chat
        try:
            chat.take_card_changes(dlg.picks())
        except (OSError, RuntimeError, ValueError) as e:  # CardError is a ValueError
            self.status(show(e))
            return
        self.session.broadcast(chat.last_changes)
        self.hide()
        self.status(tr("cu.picked", n=len(dlg.picks())))

    def use_new(self) -> None:
        """From the next beat, the new version."""
        chat = self.chat
        if chat is None:
            return
        chat.refresh_card()
        self.session.broadcast(chat.last_changes)
        self.hide()
        self.status(tr("cu.used"))

    def keep_old(self) -> None:
        """This chat keeps the version it plays (kept in its folder)."""
        chat = self.chat
        if chat is None:
            return
        try:
            chat.keep_card()
        except OSError as e:
            self.status(str(e))
            return
        self.session.broadcast(chat.last_changes)
        self.hide()
        self.status(tr("cu.kept"))

    def status(self, text: str) -> None:
        """Say ``text`` in the window's status bar."""
        win = self.window()
        bar = getattr(win, "statusBar", None)
        if callable(bar):
            bar().showMessage(show(text), 8000)


def install_card_update(window: Any) -> CardUpdateBar:
    """Put the bar above the conversation of ``window`` (kept as ``window.card_update_bar``) and wire it to the
    session (chat shown, notices naming settings or the library) and to the application becoming active."""
    bar = CardUpdateBar(window.session)
    window.view.parentWidget().layout().insertWidget(0, bar)
    window.session.chatShown.connect(bar.set_chat)
    window.session.changed.connect(lambda c: bar.check() if c.settings or c.library else None)
    app = QApplication.instance()
    if isinstance(app, QApplication):
        app.applicationStateChanged.connect(bar.app_state)  # a bound slot: dropped with the bar
    window.card_update_bar = bar
    return bar


__all__ = ["CardUpdateBar", "PickDialog", "change_line", "details", "install_card_update", "summary"]
