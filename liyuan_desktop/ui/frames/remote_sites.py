"""Remote sites for one card's status bars (issue 26 §3): "allow this site for this card".

A status bar that embeds its author's remote page (a battle UI served from the author's site) is refused by the
frames' policy and the request interceptor (ui/frames/conversation.py) and listed in the view's blocked requests.
This dialog (梨园 → 这张卡允许的网站…) lists the https hosts this card's frames were refused, and the ones the user
allowed; allowing asks first (default No), revoking does not need to. An allowed host is stored beside the card
(``core/cards/meta.py`` ``allowed_sites``, through ``Chat.set_site_allowed``) and applies to this card's frames
only: the view rebuilds its page with a policy that names exactly those hosts, the interceptor lets their requests
pass (never to loopback or private addresses), and the egress gate tunnels them. Nothing is allowed by default.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ...core.cards.meta import normalize_site
from ..infra.i18n import register, show, tr
from . import frame_guard

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat
    from ..infra.session import Session
    from .conversation import ConversationView

register({
    "sites.action": {"zh": "这张卡允许的网站…", "en": "Sites allowed for this card…"},
    "sites.title": {"zh": "「{name}」的状态栏可加载的网站", "en": "Sites “{name}”'s status bars may load"},
    "sites.intro": {"zh": "状态栏想加载作者网站上的页面时会被拦下。在这里可以只为这张卡放行某个 https 网站："
                             "它的页面、脚本、图片和请求只在这张卡的状态栏里加载。默认什么都不放行，随时可以撤销。",
                    "en": "When a status bar tries to load a page from its author's site, it is refused. Here you can "
                          "allow one https site for this card only: its pages, scripts, images and requests load in "
                          "this card's status bars and nowhere else. Nothing is allowed by default; you can revoke it "
                          "at any time."},
    "sites.allowed": {"zh": "已放行", "en": "Allowed"},
    "sites.refused": {"zh": "本次被拦下的网站", "en": "Refused this session"},
    "sites.none": {"zh": "（无）", "en": "(none)"},
    "sites.allow": {"zh": "放行所选", "en": "Allow selected"},
    "sites.revoke": {"zh": "撤销所选", "en": "Revoke selected"},
    "sites.add": {"zh": "放行", "en": "Allow"},
    "sites.placeholder": {"zh": "https://example.com 或 example.com", "en": "https://example.com or example.com"},
    "sites.ask": {"zh": "放行 {host}，只用于「{name}」的状态栏？\n\n这个网站的页面和脚本将能在这张卡的状态栏里运行，"
                        "并能读写这张卡的状态栏变量。网站的主人可以随时改动它们。只放行你信任的网站。",
                  "en": "Allow {host} for “{name}”'s status bars only?\n\nThat site's pages and scripts will run in this "
                        "card's status bars and can read and write their variables. The site's owner can change them "
                        "at any time. Allow only sites you trust."},
    "sites.bad": {"zh": "这不是一个可以放行的 https 网站：{error}", "en": "Not an https site that can be allowed: {error}"},
})

_URL = re.compile(r"https://[^\s()\"'<>]+", re.I)


def refused_sites(blocked: list[str], allowed: list[str]) -> list[str]:
    """The public https hosts named in ``blocked`` (``ConversationView.blocked_requests`` entries) that are not in
    ``allowed``, first seen first, each once. Loopback, private and malformed hosts are left out."""
    out: list[str] = []
    for entry in blocked:
        for url in _URL.findall(entry):
            try:
                host = normalize_site(url)
            except ValueError:
                continue
            if host not in allowed and host not in out and frame_guard.is_public_host(host):
                out.append(host)
    return out


class SitesDialog(QDialog):
    """The card's allowed sites and the sites its frames were refused (module doc). ``chat``: the open chat (its
    card's setting is changed with ``Chat.set_site_allowed``); ``view``: the conversation view (its blocked list,
    rebuilt with the new policy after a change); ``session``: where the command's notice is broadcast."""

    def __init__(self, chat: "Chat", view: "ConversationView", session: Optional["Session"] = None,
                 parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.chat, self.view, self.session = chat, view, session
        self.setObjectName("sitesDialog")
        self.setWindowTitle(tr("sites.title", name=chat.card.name))
        lay = QVBoxLayout(self)
        intro = QLabel(tr("sites.intro"))
        intro.setWordWrap(True)
        lay.addWidget(intro)
        self.refused = self._list(lay, "sites.refused", "sitesRefused", "sites.allow", self._allow_selected)
        row = QHBoxLayout()
        self.entry = QLineEdit()
        self.entry.setObjectName("sitesEntry")
        self.entry.setPlaceholderText(tr("sites.placeholder"))
        add = QPushButton(tr("sites.add"))
        add.clicked.connect(lambda _=False: self._allow_typed())
        row.addWidget(self.entry, 1)
        row.addWidget(add)
        lay.addLayout(row)
        self.allowed = self._list(lay, "sites.allowed", "sitesAllowed", "sites.revoke", self._revoke_selected)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        box.rejected.connect(self.reject)
        lay.addWidget(box)
        self.resize(520, 460)
        self.fill()

    def _list(self, lay: QVBoxLayout, title: str, name: str, button: str, slot: Callable[[], None]) -> QListWidget:
        lay.addWidget(QLabel(tr(title)))
        lst = QListWidget()
        lst.setObjectName(name)
        lst.setSelectionMode(QListWidget.SelectionMode.ExtendedSelection)
        lay.addWidget(lst, 1)
        b = QPushButton(tr(button))
        b.setObjectName(name + "Button")
        b.clicked.connect(lambda _=False: slot())
        lay.addWidget(b, 0, Qt.AlignmentFlag.AlignRight)
        return lst

    def fill(self) -> None:
        """Show the card's allowed hosts and the hosts refused in the view this session (not yet allowed)."""
        allowed = self.chat.allowed_sites
        for lst, hosts in ((self.allowed, allowed), (self.refused, refused_sites(self.view.blocked_requests(), allowed))):
            lst.clear()
            for h in hosts:
                lst.addItem(QListWidgetItem(h))
            if not hosts:
                item = QListWidgetItem(tr("sites.none"))
                item.setFlags(Qt.ItemFlag.NoItemFlags)
                lst.addItem(item)

    def _selected(self, lst: QListWidget) -> list[str]:
        return [i.text() for i in lst.selectedItems() if i.flags() & Qt.ItemFlag.ItemIsEnabled]

    def _allow_selected(self) -> None:
        for host in self._selected(self.refused):
            self.allow(host)

    def _allow_typed(self) -> None:
        text = self.entry.text().strip()
        if not text:
            return
        try:
            host = normalize_site(text)
        except ValueError as e:
            QMessageBox.warning(self, tr("app.title"), tr("sites.bad", error=show(e)))
            return
        if self.allow(host):
            self.entry.clear()

    def allow(self, host: str) -> bool:
        """Ask (default No), then allow ``host`` for this card; True when it was allowed."""
        if QMessageBox.question(self, tr("app.title"), tr("sites.ask", host=host, name=self.chat.card.name),
                                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                QMessageBox.StandardButton.No) != QMessageBox.StandardButton.Yes:
            return False
        return self._set(host, True)

    def _revoke_selected(self) -> None:
        for host in self._selected(self.allowed):
            self._set(host, False)

    def _set(self, host: str, on: bool) -> bool:
        try:
            self.chat.set_site_allowed(host, on)
        except (OSError, ValueError) as e:
            QMessageBox.warning(self, tr("app.title"), show(e))
            return False
        if self.session is not None:
            self.session.broadcast(self.chat.last_changes)
        if self.chat.card.path:
            self.view.set_card(Path(self.chat.card.path).parent)  # the page's policy names the new set of hosts
        self.fill()
        return True


def sites_action(window: QWidget, current_chat: Callable[[], Optional["Chat"]], view: "ConversationView",
                 session: Optional["Session"] = None) -> QAction:
    """The menu action 这张卡允许的网站… opening :class:`SitesDialog` for the open chat's card (disabled without
    a chat of a card with a folder; call ``sync`` — set as the action's ``sync`` attribute — when the menu opens)."""
    act = QAction(tr("sites.action"), window)
    act.setObjectName("sitesAction")

    def sync() -> None:
        chat = current_chat()
        act.setEnabled(chat is not None and bool(chat.card.path))

    def opened() -> None:
        chat = current_chat()
        if chat is None or not chat.card.path:
            return
        SitesDialog(chat, view, session, window).exec()

    act.triggered.connect(lambda _=False: opened())
    act.sync = sync  # type: ignore[attr-defined]
    return act
