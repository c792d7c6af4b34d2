"""The world-info settings page (世界书设置 / World info; issue 14 §1): SillyTavern's ``world_info_*`` settings for
all chats (the app's settings) or for the open chat only (its overrides, kept on the chat's tree), with an import
from a SillyTavern ``settings.json``.

The page edits a copy; 保存 writes the app's settings (``core.settings.save_settings``) and emits
:attr:`WorldInfoSettingsDialog.settingsSaved`, or stores the chat's overrides through ``Chat.set_world_info`` —
only the values that differ from the app's, so the rest keeps following the app. Like SillyTavern's page, setting
min activations clears max recursion steps and the other way round. Nothing here is slow: a ``settings.json`` is a
few kilobytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ...core.chat.facade import Chat
from ...core.lore.settings import WorldInfoSettings, from_st_settings
from ...core.settings import AppSettings, save_settings
from ..infra.i18n import tr

#: (field, label key, minimum, maximum, suffix) of the number settings, in SillyTavern's page order.
_NUMBERS: list[tuple[str, str, int, int, str]] = [
    ("world_info_depth", "wi.depth", 0, 1000, ""),
    ("world_info_budget", "wi.budget", 1, 100, " %"),
    ("world_info_budget_cap", "wi.budget_cap", 0, 10_000_000, ""),
    ("world_info_min_activations", "wi.min_activations", 0, 1000, ""),
    ("world_info_min_activations_depth_max", "wi.min_activations_depth_max", 0, 1000, ""),
    ("world_info_max_recursion_steps", "wi.max_recursion_steps", 0, 1000, ""),
]
#: (field, label key) of the switches.
_SWITCHES: list[tuple[str, str]] = [
    ("world_info_include_names", "wi.include_names"),
    ("world_info_recursive", "wi.recursive"),
    ("world_info_case_sensitive", "wi.case_sensitive"),
    ("world_info_match_whole_words", "wi.match_whole_words"),
    ("world_info_use_group_scoring", "wi.use_group_scoring"),
    ("world_info_overflow_alert", "wi.overflow_alert"),
]


class WorldInfoSettingsDialog(QDialog):
    """世界书设置. ``settings``: the app's settings (copied); ``chat``: the open chat, or None (then only the app's
    settings can be edited). ``chat_title``: how the chat is named in the scope list.

    Signals: ``settingsSaved(AppSettings)`` after the app's settings were written; ``chatSaved()`` after the chat's
    overrides changed. Widgets for tests: ``scope`` (0 = all chats, 1 = this chat), ``spins[field]``,
    ``checks[field]``, ``strategy``, ``notes`` (what the last import or save said)."""

    settingsSaved = Signal(object)
    chatSaved = Signal()

    def __init__(self, settings: AppSettings, chat: Optional[Chat] = None, chat_title: str = "",
                 parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("worldInfoSettingsDialog")
        self.setWindowTitle(tr("wi.title"))
        self.settings = settings.model_copy(deep=True)
        self.chat = chat
        lay = QVBoxLayout(self)
        top = QFormLayout()
        self.scope = QComboBox()
        self.scope.setObjectName("wiScope")
        self.scope.addItem(tr("wi.scope.app"))
        if chat is not None:
            self.scope.addItem(tr("wi.scope.chat", title=chat_title or chat.card.name))
        top.addRow(tr("wi.scope"), self.scope)
        lay.addLayout(top)
        self.scope_note = QLabel(tr("wi.scope.chat.note"))
        self.scope_note.setWordWrap(True)
        lay.addWidget(self.scope_note)
        form = QFormLayout()
        self.spins: dict[str, QSpinBox] = {}
        for field, key, lo, hi, suffix in _NUMBERS:
            sb = QSpinBox()
            sb.setObjectName(field)
            sb.setRange(lo, hi)
            if suffix:
                sb.setSuffix(suffix)
            sb.setToolTip(field)  # SillyTavern's name, as liyuan chat --wi takes it
            self.spins[field] = sb
            form.addRow(tr(key), sb)
            if field == "world_info_budget_cap":  # what the percentage is taken of (the preset's or the model's)
                self.budget_basis = QLabel()
                self.budget_basis.setObjectName("wiBudgetBasis")
                self.budget_basis.setWordWrap(True)
                form.addRow("", self.budget_basis)
        self.strategy = QComboBox()
        self.strategy.setObjectName("world_info_character_strategy")
        for i in range(3):
            self.strategy.addItem(tr(f"wi.strategy.{i}"), i)
        self.strategy.setToolTip("world_info_character_strategy")
        form.addRow(tr("wi.strategy"), self.strategy)
        self.checks: dict[str, QCheckBox] = {}
        for field, key in _SWITCHES:
            cb = QCheckBox(tr(key))
            cb.setObjectName(field)
            cb.setToolTip(field)
            self.checks[field] = cb
            form.addRow("", cb)
        lay.addLayout(form)
        self.notes = QLabel("")
        self.notes.setObjectName("wiNotes")
        self.notes.setWordWrap(True)
        lay.addWidget(self.notes)
        row = QHBoxLayout()
        self.import_button = QPushButton(tr("wi.import"))
        self.import_button.clicked.connect(self._pick_st_file)
        self.reset_button = QPushButton(tr("wi.reset"))
        self.reset_button.clicked.connect(lambda: self.show_values(WorldInfoSettings()))
        row.addWidget(self.import_button)
        row.addWidget(self.reset_button)
        row.addStretch(1)
        lay.addLayout(row)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Save).setText(tr("save"))
        buttons.button(QDialogButtonBox.StandardButton.Cancel).setText(tr("cancel"))
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self.spins["world_info_min_activations"].valueChanged.connect(
            lambda v: self._exclusive(v, "world_info_max_recursion_steps"))
        self.spins["world_info_max_recursion_steps"].valueChanged.connect(
            lambda v: self._exclusive(v, "world_info_min_activations"))
        self.scope.currentIndexChanged.connect(self._scope_changed)
        for field in ("world_info_budget", "world_info_budget_cap"):
            self.spins[field].valueChanged.connect(lambda _v: self._show_basis())
        if chat is not None and chat.world_info_overrides():
            self.scope.setCurrentIndex(1)  # the chat has its own settings: show those first
        self._scope_changed()

    # -- values ---------------------------------------------------------------------------------------------
    def _exclusive(self, value: int, other: str) -> None:
        """SillyTavern's page: min activations and max recursion steps exclude each other."""
        if value and self.spins[other].value():
            self.spins[other].setValue(0)
            self.notes.setText(tr("wi.exclusive"))

    def _scope_changed(self) -> None:
        chat_scope = self.scope.currentIndex() == 1 and self.chat is not None
        self.scope_note.setVisible(chat_scope)
        self.show_values(self.chat.world_info_settings() if chat_scope and self.chat is not None
                         else self.settings.world_info)

    def _show_basis(self) -> None:
        """Say what the budget is a percentage of: for a chat, its preset's context size or the model's window and
        the budget the page's values give (``Chat.world_info_budget_basis``); without one, the rule."""
        if self.chat is None:
            self.budget_basis.setText(tr("wi.basis.app"))
            return
        b = self.chat.world_info_budget_basis()
        try:
            tokens = self.values().budget_tokens(b.context)
        except ValueError:
            tokens = b.tokens
        if b.source == "preset":
            self.budget_basis.setText(tr("wi.basis.preset", name=b.preset, ctx=f"{b.preset_context:,}",
                                         reply=f"{b.preset_reply:,}", context=f"{b.context:,}", tokens=f"{tokens or 0:,}"))
        else:
            self.budget_basis.setText(tr("wi.basis.window", context=f"{b.context:,}", tokens=f"{tokens or 0:,}"))

    def show_values(self, s: WorldInfoSettings) -> None:
        """Fill the page with ``s`` (without the exclusion rule firing)."""
        for sb in self.spins.values():
            sb.blockSignals(True)
        for field, sb in self.spins.items():
            sb.setValue(int(getattr(s, field)))
        for sb in self.spins.values():
            sb.blockSignals(False)
        for field, cb in self.checks.items():
            cb.setChecked(bool(getattr(s, field)))
        self.strategy.setCurrentIndex(self.strategy.findData(s.world_info_character_strategy))
        self._show_basis()

    def values(self) -> WorldInfoSettings:
        """The settings as the page shows them."""
        data: dict[str, Any] = {f: sb.value() for f, sb in self.spins.items()}
        data.update({f: cb.isChecked() for f, cb in self.checks.items()})
        data["world_info_character_strategy"] = int(self.strategy.currentData())
        return WorldInfoSettings.model_validate(data)

    # -- import ---------------------------------------------------------------------------------------------
    def _pick_st_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, tr("wi.import.pick"), "", "settings.json (*.json);;JSON (*.json)")
        if path:
            self.import_st_file(Path(path))

    def import_st_file(self, path: Path) -> bool:
        """Fill the page from a SillyTavern ``settings.json`` (``lore.settings.from_st_settings``; keys the file does
        not have keep what the page shows). Not saved until 保存. Returns False (reason in :attr:`notes`) when the
        file cannot be read or holds no world-info settings."""
        try:
            data = json.loads(Path(path).read_text("utf-8-sig"))
            s, notes = from_st_settings(data, self.values())
        except (OSError, ValueError) as e:
            self.notes.setText(tr("wi.import.failed", error=e))
            return False
        self.show_values(s)
        self.notes.setText("\n".join(notes))
        return True

    # -- save -----------------------------------------------------------------------------------------------
    def save(self) -> bool:
        """Write what the page shows: the app's settings (all chats) or the chat's overrides (this chat: the values
        that differ from the app's). Closes the page when it worked; else the reason is in :attr:`notes`."""
        s = self.values()
        try:
            if self.scope.currentIndex() == 1 and self.chat is not None:
                self.chat.set_world_info(s.differences(self.chat.world_info_defaults))
                self.chatSaved.emit()
            else:
                self.settings.world_info = s
                save_settings(self.settings)
                self.settingsSaved.emit(self.settings)
        except (OSError, ValueError, RuntimeError) as e:
            self.notes.setText(tr("wi.err.save", error=e))
            return False
        self.accept()
        return True
