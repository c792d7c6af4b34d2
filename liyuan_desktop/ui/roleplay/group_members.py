"""Group chats in the window (issue 31): 对话 → 群聊 (新建群组… and every group chat to open) and the 成员 tab
beside the draft and the ledger while a group chat is shown.

- **New group…** (:class:`NewGroupDialog`): a name, the members ticked from the card library (list order = the
  order ticked), who speaks next (natural / list / pooled / manual) and the card-field option (the speaker's card,
  or every member's joined). OK saves the group (``core.group.save_group``), makes its first chat
  (``core.chat.group_play.new_group_chat``) and opens it in the normal conversation view, where each reply shows
  its speaker's name.
- **成员 / Members** (:class:`GroupMembersPane`): the members with present (在场) / muted (静音) and how many
  replies each has on the shown branch; 静音/取消静音 saves the group (asks nothing: it is undone the same way);
  让TA发言 plays the next beat as that member (the words in the input box, or without user words when it is empty).
  Below them the auto-mode controls (自动续聊, delay, limit, Stop: ``group_auto.py``), which also play the other
  members a message activated, each in turn. It repaints from the session's notices (a beat, a branch switch),
  never by hand.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ...core.cards import library
from ...core.chat import group_play
from ...core.group import Group, list_groups, save_group
from ...core.group.model import group_chats, group_dir, set_muted
from ..infra.i18n import register, show, tr
from .group_auto import GroupAutoPlayer, GroupAutoRow

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

log = logging.getLogger(__name__)

register({
    "groupui.menu": {"zh": "群聊", "en": "Group chats"},
    "groupui.new": {"zh": "新建群组…", "en": "New group…"},
    "groupui.new.title": {"zh": "新建群组", "en": "New group"},
    "groupui.name": {"zh": "名字", "en": "Name"},
    "groupui.members": {"zh": "成员（按勾选顺序）", "en": "Members (in the order ticked)"},
    "groupui.strategy": {"zh": "谁来发言", "en": "Who speaks next"},
    "groupui.join": {"zh": "角色卡字段", "en": "Card fields"},
    "groupui.strategy.natural": {"zh": "自然顺序（提到谁谁先说，再看健谈度）", "en": "Natural order (named first, then talkativeness)"},
    "groupui.strategy.list": {"zh": "列表顺序", "en": "List order"},
    "groupui.strategy.pooled": {"zh": "发言最少者优先", "en": "Pooled (who spoke least)"},
    "groupui.strategy.manual": {"zh": "手动（由你指定）", "en": "Manual (you choose)"},
    "groupui.join.swap": {"zh": "只用发言者的", "en": "The speaker's only"},
    "groupui.join.join": {"zh": "合并所有未静音成员的", "en": "Join every unmuted member's"},
    "groupui.join.join_muted": {"zh": "合并所有成员的（含静音）", "en": "Join every member's (muted too)"},
    "groupui.need": {"zh": "请填名字并至少勾选两位成员。", "en": "Give a name and tick at least two members."},
    "groupui.exists": {"zh": "已有同名的群组。", "en": "A group of that name exists already."},
    "groupui.tab": {"zh": "成员", "en": "Members"},
    "groupui.mute": {"zh": "静音/取消静音", "en": "Mute / unmute"},
    "groupui.speak": {"zh": "让TA发言", "en": "Make speak"},
    "groupui.row.present": {"zh": "在场", "en": "present"},
    "groupui.row.muted": {"zh": "静音", "en": "muted"},
    "groupui.row.replies": {"zh": "{n} 次发言", "en": "{n} replies"},
    "groupui.header": {"zh": "群组「{name}」· {strategy}", "en": "Group “{name}” · {strategy}"},
})

STRATEGIES = ("natural", "list", "pooled", "manual")
JOINS = ("swap", "join", "join_muted")


class NewGroupDialog(QDialog):
    """Name, members (ticked from the card library), strategy, card fields; :meth:`group` gives the result."""

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("newGroupDialog")
        self.setWindowTitle(tr("groupui.new.title"))
        self.name = QLineEdit()
        self.name.setObjectName("groupName")
        self.members = QListWidget()
        self.members.setObjectName("groupMembers")
        self.ticked: list[str] = []
        for ref in library.list_cards():
            it = QListWidgetItem(ref.name)
            it.setFlags(it.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            it.setCheckState(Qt.CheckState.Unchecked)
            self.members.addItem(it)
        self.members.itemChanged.connect(self._ticked)
        self.strategy = QComboBox()
        self.strategy.setObjectName("groupStrategy")
        for s in STRATEGIES:
            self.strategy.addItem(tr(f"groupui.strategy.{s}"), s)
        self.join = QComboBox()
        self.join.setObjectName("groupJoin")
        for j in JOINS:
            self.join.addItem(tr(f"groupui.join.{j}"), j)
        form = QFormLayout()
        form.addRow(tr("groupui.name"), self.name)
        form.addRow(tr("groupui.members"), self.members)
        form.addRow(tr("groupui.strategy"), self.strategy)
        form.addRow(tr("groupui.join"), self.join)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(buttons)

    def _ticked(self, it: QListWidgetItem) -> None:
        name = it.text()
        if it.checkState() == Qt.CheckState.Checked and name not in self.ticked:
            self.ticked.append(name)
        elif it.checkState() != Qt.CheckState.Checked and name in self.ticked:
            self.ticked.remove(name)

    def tick(self, names: list[str]) -> None:
        """Tick these members in this order (what a click does; tests use it)."""
        for n in names:
            for i in range(self.members.count()):
                if self.members.item(i).text() == n:
                    self.members.item(i).setCheckState(Qt.CheckState.Checked)

    def group(self) -> Group:
        """The group the dialog describes."""
        return Group(name=self.name.text().strip(), members=list(self.ticked), strategy=self.strategy.currentData(),
                     join_cards=self.join.currentData())

    def _accept(self) -> None:
        g = self.group()
        if not g.name or len(g.members) < 2:
            QMessageBox.information(self, tr("groupui.new.title"), tr("groupui.need"))
            return
        if (group_dir(g.name) / "groupui.json").is_file():
            QMessageBox.information(self, tr("groupui.new.title"), tr("groupui.exists"))
            return
        self.accept()


def open_group_chat(win: Any, group: Group, chat_dir: Path) -> bool:
    """Open a group chat folder in the window (the first member's card as its card ref)."""
    first = next((m for m in group.members if (library.card_folder(m) / "card.json").is_file()), None)
    if first is None:
        return False
    card = library.CardRef(name=first, dir=str(library.card_folder(first)))
    return bool(win.open_chat(card, library.ChatRef(name=chat_dir.name, dir=str(chat_dir))))


def create_group(win: Any, group: Group) -> bool:
    """Save ``group``, make its first chat and open it; a warning box when the disk or the library refuses."""
    try:
        save_group(group)
        d = group_play.new_group_chat(group, tr("name.group_chat"))
    except (OSError, ValueError) as e:
        QMessageBox.warning(win, tr("app.title"), show(e))
        return False
    return open_group_chat(win, group, d)


def new_group_clicked(win: Any) -> Optional[NewGroupDialog]:
    """对话 → 群聊 → 新建群组…: the dialog (modeless; its OK creates and opens the group chat)."""
    dlg = NewGroupDialog(win)
    dlg.accepted.connect(lambda: create_group(win, dlg.group()))
    dlg.show()
    win.new_group_dialog = dlg
    return dlg


def _fill_menu(win: Any, menu: QMenu) -> None:
    menu.clear()
    act = menu.addAction(tr("groupui.new"))
    act.setObjectName("newGroupAction")
    act.triggered.connect(lambda: new_group_clicked(win))
    groups = list_groups()
    if groups:
        menu.addSeparator()
    for g in groups:
        for d in group_chats(g):
            a = menu.addAction(f"{g.name} / {d.name}")
            a.triggered.connect(lambda _c=False, g=g, d=d: open_group_chat(win, g, d))


class GroupMembersPane(QWidget):
    """The 成员 tab: the shown group chat's members, mute and make-speak (module doc)."""

    def __init__(self, win: Any):
        super().__init__()
        self.win = win
        self.setObjectName("groupMembersPane")
        self.header = QLabel()
        self.header.setWordWrap(True)
        self.strategy = QComboBox()
        self.strategy.setObjectName("groupPaneStrategy")
        for st in STRATEGIES:
            self.strategy.addItem(tr(f"groupui.strategy.{st}"), st)
        self.strategy.activated.connect(lambda _i: self.set_strategy(str(self.strategy.currentData())))
        self.list = QListWidget()
        self.list.setObjectName("groupMemberList")
        self.mute_btn = QPushButton(tr("groupui.mute"))
        self.mute_btn.setObjectName("groupMute")
        self.speak_btn = QPushButton(tr("groupui.speak"))
        self.speak_btn.setObjectName("groupSpeak")
        self.mute_btn.clicked.connect(lambda: self.toggle_mute())
        self.speak_btn.clicked.connect(lambda: self.make_speak())
        row = QHBoxLayout()
        row.addWidget(self.mute_btn)
        row.addWidget(self.speak_btn)
        self.auto_row = GroupAutoRow()  # auto-mode and the replies a message activated (group_auto.py)
        self.auto = GroupAutoPlayer(win, self.auto_row)
        lay = QVBoxLayout(self)
        lay.addWidget(self.header)
        lay.addWidget(self.strategy)
        lay.addWidget(self.list)
        lay.addLayout(row)
        lay.addWidget(self.auto_row)

    def refresh(self) -> bool:
        """Repaint from the shown chat; False (and nothing shown) when it is not a group chat."""
        chat = self.win.chat
        group = group_play.chat_group(chat) if chat is not None else None
        self.list.clear()
        if group is None:
            return False
        self.header.setText(tr("groupui.header", name=group.name, strategy=tr(f"groupui.strategy.{group.strategy}")))
        self.strategy.setCurrentIndex(STRATEGIES.index(group.strategy))
        self.auto.show_group(group)
        for r in group_play.member_rows(chat):
            marks = [tr("groupui.row.present")] if r.present else []
            marks += [tr("groupui.row.muted")] if r.muted else []
            marks.append(tr("groupui.row.replies", n=r.replies))
            it = QListWidgetItem(f"{r.name}  ·  {' · '.join(marks)}")
            it.setData(Qt.ItemDataRole.UserRole, r.member)
            self.list.addItem(it)
        if self.list.count():
            self.list.setCurrentRow(0)
        return True

    def selected(self) -> Optional[str]:
        """The selected member's card folder name, or None."""
        it = self.list.currentItem()
        return str(it.data(Qt.ItemDataRole.UserRole)) if it is not None else None

    def toggle_mute(self) -> None:
        """静音/取消静音 the selected member (the group is saved; the next beat follows it)."""
        chat, member = self.win.chat, self.selected()
        group = group_play.chat_group(chat) if chat is not None else None
        if group is None or member is None:
            return
        try:
            set_muted(group.name, member, member not in group.muted)
        except (OSError, ValueError) as e:
            QMessageBox.warning(self.win, tr("app.title"), show(e))
        row = self.list.currentRow()
        self.refresh()
        self.list.setCurrentRow(row)

    def set_strategy(self, strategy: str) -> None:
        """Who speaks next from now on (the group is saved; every chat of the group follows it)."""
        chat = self.win.chat
        group = group_play.chat_group(chat) if chat is not None else None
        if group is None or strategy == group.strategy:
            return
        try:
            save_group(group.model_copy(update={"strategy": strategy}))
        except OSError as e:
            QMessageBox.warning(self.win, tr("app.title"), show(e))
        self.refresh()

    def make_speak(self) -> None:
        """让TA发言: the next beat is the selected member's (the input box's words, or none: ``Chat.group_reply``)."""
        chat, member = self.win.chat, self.selected()
        if chat is None or member is None or self.win.busy:
            return
        text = self.win.input.toPlainText().strip()
        if not text:  # SillyTavern's /trigger: the member speaks without words from the user (no bubble of yours)
            self.win.run_command(lambda: chat.group_reply(ask=self.win.ask_user, on_event=self.auto.on_event,
                                                          speaker=member))
            return
        self.win.input.clear()
        self.win.run_command(lambda: chat.send(text, ask=self.win.ask_user, on_event=self.win.on_event,
                                               speaker=member), restore=text)


def member_avatars(chat: "Chat") -> dict[str, str]:
    """member → its card's avatar as a data: URL (the drawn default for a card without a picture)."""
    from ..frames.avatars import card_avatar, data_url

    out = {}
    for r in group_play.member_rows(chat):
        ref = library.CardRef(name=r.member, dir=str(library.card_folder(r.member)))
        out[r.member] = data_url(card_avatar(ref, r.name))
    return out


def install_group_chats(win: Any, chat_menu: QMenu) -> GroupMembersPane:
    """对话 → 群聊 (filled each time it opens) and the 成员 tab, shown only while a group chat is open and repainted
    from the session's notices."""
    menu = chat_menu.addMenu(tr("groupui.menu"))
    menu.setObjectName("groupMenu")
    menu.aboutToShow.connect(lambda: _fill_menu(win, menu))
    _fill_menu(win, menu)
    pane = GroupMembersPane(win)
    index = win.tabs.addTab(pane, tr("groupui.tab"))
    win.tabs.setTabVisible(index, False)

    def follow(*_a: Any) -> None:
        shown = pane.refresh()
        win.tabs.setTabVisible(win.tabs.indexOf(pane), shown)
        if shown:
            win.view.set_speaker_avatars(member_avatars(win.chat))

    win.session.chatShown.connect(follow)
    win.session.changed.connect(follow)
    win.group_menu, win.group_pane = menu, pane
    return pane


__all__ = ["GroupMembersPane", "NewGroupDialog", "create_group", "install_group_chats", "new_group_clicked",
           "open_group_chat"]
