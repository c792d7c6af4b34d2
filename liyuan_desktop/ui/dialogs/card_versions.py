"""The card editor's 版本… (issue 26 §1: every save writes a new version of the card): the card's saved versions,
newest first (when each was replaced, what it holds), and 恢复 — the engine's ``restore_version`` puts one back
after a question (No the default), saving what it replaces as a version first, so a restore can be undone too.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.cards import CardError
from ...core.cards.edit import CardVersion, list_versions, restore_version
from ..infra.i18n import register, show, tr
from ..infra.theme import set_role
from . import card_parts

register({
    "cardver.button": {"zh": "版本…", "en": "Versions…"},
    "cardver.title": {"zh": "角色卡的旧版本：{name}", "en": "Earlier versions of the card: {name}"},
    "cardver.col.when": {"zh": "被替换的时间", "en": "Replaced at"},
    "cardver.col.files": {"zh": "文件", "en": "Files"},
    "cardver.none": {"zh": "还没有旧版本：每次保存角色卡都会把原来的留一份在这里。",
                     "en": "No earlier versions yet: each save keeps the card as it was here."},
    "cardver.restore": {"zh": "恢复这个版本", "en": "Restore this version"},
    "cardver.ask": {"zh": "把角色卡恢复成 {when} 的版本？现在的角色卡会先存为一个版本。{unsaved}",
                    "en": "Put the card back as it was at {when}? The card as it is now is kept as a version first.{unsaved}"},
    "cardver.ask.unsaved": {"zh": "\n\n编辑器里没保存的修改会丢掉。", "en": "\n\nThe editor's unsaved changes are dropped."},
    "cardver.done": {"zh": "已恢复 {when} 的版本", "en": "Restored the version of {when}"},
})


def _when(v: CardVersion) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(v.saved_ms / 1000))


class VersionsDialog(QDialog):
    """The versions of the card in ``card_dir`` (module doc). ``unsaved``: the editor has edits a restore drops
    (the question says so). After a restore, :attr:`restored` is the version put back."""

    def __init__(self, card_dir: Path, name: str, unsaved: bool, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("cardVersions")
        self.setWindowTitle(tr("cardver.title", name=name))
        self.resize(560, 360)
        self.card_dir = Path(card_dir)
        self.unsaved = unsaved
        self.restored: Optional[CardVersion] = None
        lay = QVBoxLayout(self)
        self.list = QTreeWidget()
        self.list.setRootIsDecorated(False)
        self.list.setHeaderLabels([tr("cardver.col.when"), tr("cardver.col.files")])
        self.list.setColumnWidth(0, 200)
        lay.addWidget(self.list, 1)
        self.note = QLabel("")
        self.note.setWordWrap(True)
        lay.addWidget(self.note)
        row = QHBoxLayout()
        row.addStretch(1)
        self.restore_btn = QPushButton(tr("cardver.restore"))
        self.restore_btn.setAutoDefault(False)
        self.restore_btn.clicked.connect(lambda: self.restore())
        close = QPushButton(tr("cardeditor.close"))
        close.clicked.connect(self.reject)
        row.addWidget(self.restore_btn)
        row.addWidget(close)
        lay.addLayout(row)
        self.versions: list[CardVersion] = []
        self.refresh()

    def refresh(self) -> None:
        """Read the versions again."""
        self.versions = list_versions(self.card_dir)
        self.list.clear()
        self.note.setText("")
        for v in self.versions:
            self.list.addTopLevelItem(QTreeWidgetItem([_when(v), ", ".join(v.files)]))
        first = self.list.topLevelItem(0)
        if first is not None:
            self.list.setCurrentItem(first)
        else:
            self.note.setText(tr("cardver.none"))
        self.restore_btn.setEnabled(bool(self.versions))

    def restore(self, ask: bool = True) -> bool:
        """恢复这个版本 (the selected one) after a question, No the default; closes the dialog when done."""
        cur = self.list.currentItem()
        row = self.list.indexOfTopLevelItem(cur) if cur is not None else -1
        if row < 0:
            return False
        v = self.versions[row]
        text = tr("cardver.ask", when=_when(v), unsaved=tr("cardver.ask.unsaved") if self.unsaved else "")
        if ask and not card_parts.ask_yes(self, text, tr("cardver.restore")):
            return False
        try:
            restore_version(self.card_dir, v.id)
        except (CardError, OSError) as e:
            self.note.setText(show(e))
            set_role(self.note, "error")
            return False
        self.restored = v
        self.accept()
        return True


def restored_text(v: CardVersion) -> str:
    """The editor's status line after a restore."""
    return tr("cardver.done", when=_when(v))


__all__ = ["VersionsDialog", "restored_text"]
