"""Connection profiles in the window (issue 14 §3): a toolbar chooser that switches provider + model + preset +
sampling in one click, and a dialog to make and edit profiles (saved in the app settings, ``llm.profiles``).

Switching (:func:`switch_profile`): ``AppSettings.use_profile`` (active provider and its model), the settings
saved, the window's models rebuilt for the open chat (``MainWindow._settings_saved``), the profile's sampling
given to the chat (``Chat.profile_sampling``) and, when the profile names a preset, that preset used in the open
chat (``Chat.set_preset``; the notice lands in the activity list).
"""

from __future__ import annotations

import logging
from typing import Any, Optional

from pydantic import ValidationError
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QMessageBox,
    QPushButton,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from ...core.llm.profiles import ConnectionProfile
from ...core.messages import validation_reason
from ...core.prompt.presets.model import PresetError
from ...core.prompt.presets.store import list_presets
from ...core.settings import AppSettings, resolve_key, save_settings
from ..dialogs.presets_dialog import SamplingEditor
from ..infra.i18n import STRINGS, tr
from .local_models import ModelPickerButton

log = logging.getLogger(__name__)

STRINGS.update({
    "profiles.bar": {"zh": "连接配置", "en": "Connection profile"},
    "profiles.label": {"zh": "连接配置：", "en": "Profile:"},
    "profiles.none": {"zh": "（未选）", "en": "(none)"},
    "profiles.manage": {"zh": "管理连接配置…", "en": "Manage profiles…"},
    "profiles.title": {"zh": "连接配置", "en": "Connection profiles"},
    "profiles.hint": {"zh": "一个连接配置 = 服务商 + 模型 + 预设 + 采样参数，在工具栏一键切换。", "en": "A profile = provider + model + preset + sampling, switched in one click from the toolbar."},
    "profiles.name": {"zh": "名称", "en": "Name"},
    "profiles.provider": {"zh": "服务商", "en": "Provider"},
    "profiles.model": {"zh": "模型（空 = 服务商的默认模型）", "en": "Model (blank = the provider's)"},
    "profiles.preset": {"zh": "预设", "en": "Preset"},
    "profiles.add": {"zh": "新建", "en": "New"},
    "profiles.save": {"zh": "保存这个配置", "en": "Save profile"},
    "profiles.delete": {"zh": "删除", "en": "Delete"},
    "profiles.confirm.delete": {"zh": "删除连接配置「{name}」？", "en": "Delete the profile “{name}”?"},
    "profiles.switched": {"zh": "已切换到连接配置「{name}」：{model}", "en": "Switched to profile “{name}”: {model}"},
    "profiles.err": {"zh": "连接配置出错：{error}", "en": "Profile error: {error}"},
    "profiles.noprovider": {"zh": "先在「设置 → 模型服务」里配置服务商。", "en": "Configure a provider in Settings → Models first."},
})


def switch_profile(win: Any, name: str) -> bool:
    """Switch the window to profile ``name`` (module doc). Returns False (with a message) when it cannot."""
    s: AppSettings = win.settings
    try:
        prof = s.use_profile(name)
        save_settings(s)
    except (KeyError, ValueError, OSError) as e:
        QMessageBox.warning(win, tr("profiles.title"), tr("profiles.err", error=e))
        return False
    win.apply_settings(s)  # rebuild the models of the open chat for the new provider/model
    chat = win.chat
    if chat is not None and not getattr(win, "is_demo", False):
        chat.profile_sampling = s.profile_sampling()
        if prof.preset:
            try:
                notice = chat.set_preset(prof.preset)
            except (PresetError, RuntimeError, OSError) as e:
                win.draft_pane.notice(tr("profiles.err", error=e))
            else:
                if notice:
                    win.draft_pane.notice(notice)
    prov = s.active()
    win.statusBar().showMessage(tr("profiles.switched", name=name, model=prov.model if prov else ""), 8000)
    return True


class ProfileChooser(QWidget):
    """「连接配置：[chooser] [管理…]」 for the toolbar. ``refresh()`` re-reads the window's settings."""

    def __init__(self, win: Any):
        super().__init__()
        self.win = win
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 0, 4, 0)
        row.addWidget(QLabel(tr("profiles.label")))
        self.combo = QComboBox()
        self.combo.setObjectName("profileChooser")
        self.combo.setMinimumContentsLength(14)
        self.combo.activated.connect(self._chosen)
        row.addWidget(self.combo)
        self.manage = QPushButton(tr("profiles.manage"))
        self.manage.clicked.connect(self.open_manager)
        row.addWidget(self.manage)
        self.refresh()

    def refresh(self) -> None:
        """Fill the chooser from the settings' profiles, the active one selected."""
        s: AppSettings = self.win.settings
        self.combo.blockSignals(True)
        self.combo.clear()
        self.combo.addItem(tr("profiles.none"), None)
        for p in s.profiles:
            self.combo.addItem(p.name, p.name)
        self.combo.setCurrentIndex(max(0, self.combo.findData(s.active_profile)) if s.active_profile else 0)
        self.combo.blockSignals(False)

    def choose(self, name: str) -> bool:
        """Switch to profile ``name`` as if picked in the chooser."""
        ok = switch_profile(self.win, name)
        self.refresh()
        return ok

    def _chosen(self, index: int) -> None:
        name = self.combo.itemData(index)
        if name:
            self.choose(name)

    def open_manager(self) -> "ProfilesDialog":
        dlg = ProfilesDialog(self.win.settings, self.win)
        dlg.finished.connect(lambda _r: self.refresh())
        dlg.open()
        self.win.profiles_dialog = dlg
        return dlg


class ProfilesDialog(QDialog):
    """Make, edit and delete connection profiles; each save writes the settings."""

    def __init__(self, settings: AppSettings, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("profilesDialog")
        self.setWindowTitle(tr("profiles.title"))
        self.resize(760, 560)
        self.settings = settings
        root = QHBoxLayout(self)
        left = QVBoxLayout()
        self.list = QListWidget()
        self.list.currentTextChanged.connect(self._load)
        left.addWidget(self.list, 1)
        add = QPushButton(tr("profiles.add"))
        add.clicked.connect(self._new)
        delete = QPushButton(tr("profiles.delete"))
        delete.clicked.connect(self._delete)
        left.addWidget(add)
        left.addWidget(delete)
        root.addLayout(left, 1)
        right = QVBoxLayout()
        hint = QLabel(tr("profiles.hint"))
        hint.setWordWrap(True)
        right.addWidget(hint)
        form = QFormLayout()
        self.name = QLineEdit()
        self.provider = QComboBox()
        for p in settings.providers:
            self.provider.addItem(p.name)
        self.model = QLineEdit()
        self.preset = QComboBox()
        self.preset.addItem("", "")
        for n in list_presets():
            self.preset.addItem(n, n)
        form.addRow(tr("profiles.name"), self.name)
        form.addRow(tr("profiles.provider"), self.provider)
        self.model_picker = ModelPickerButton(self.model, self._picker_source)  # the provider's /v1/models
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        model_row.addWidget(self.model_picker)
        form.addRow(tr("profiles.model"), model_row)
        form.addRow(tr("profiles.preset"), self.preset)
        right.addLayout(form)
        self.sampling = SamplingEditor()
        right.addWidget(self.sampling, 1)
        save = QPushButton(tr("profiles.save"))
        save.clicked.connect(self.save_current)
        right.addWidget(save)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        right.addWidget(buttons)
        root.addLayout(right, 2)
        if not settings.providers:
            hint.setText(tr("profiles.noprovider"))
        self._fill()

    def _picker_source(self) -> tuple[str, Optional[str]]:
        """(base URL, key) of the chosen provider, for the model picker."""
        prov = self.settings.provider(self.provider.currentText())
        return (prov.base_url, resolve_key(prov)) if prov is not None else ("", None)

    def _fill(self, select: Optional[str] = None) -> None:
        self.list.clear()
        for p in self.settings.profiles:
            self.list.addItem(p.name)
        items = self.list.findItems(select or "", _exact()) if select else []
        if items:
            self.list.setCurrentItem(items[0])
        elif self.list.count():
            self.list.setCurrentRow(0)

    def _load(self, name: str) -> None:
        p = self.settings.profile(name)
        if p is None:
            return
        self.name.setText(p.name)
        self.provider.setCurrentText(p.provider)
        self.model.setText(p.model)
        self.preset.setCurrentIndex(max(0, self.preset.findData(p.preset or "")))
        self.sampling.set_value(p.sampling)

    def _new(self) -> None:
        self.list.clearSelection()
        self.name.setText("")
        self.model.setText("")
        self.preset.setCurrentIndex(0)
        self.sampling.set_value(None)
        self.name.setFocus()

    def save_current(self) -> Optional[ConnectionProfile]:
        """Save the form as a profile (replacing the one with that name); returns it, or None with a message."""
        try:
            prof = ConnectionProfile(name=self.name.text(), provider=self.provider.currentText(),
                                     model=self.model.text().strip(), preset=self.preset.currentData() or None,
                                     sampling=self.sampling.value())
        except ValidationError as e:
            QMessageBox.warning(self, tr("profiles.title"), tr("profiles.err", error=validation_reason(e.errors()[0])))
            return None
        old = self.list.currentItem().text() if self.list.currentItem() is not None else None
        profiles = [p for p in self.settings.profiles if p.name not in (prof.name, old)]
        self.settings.profiles = [*profiles, prof]
        if self.settings.active_profile == old:
            self.settings.active_profile = prof.name
        try:
            save_settings(self.settings)
        except OSError as e:
            QMessageBox.warning(self, tr("profiles.title"), tr("profiles.err", error=e))
        self._fill(select=prof.name)
        return prof

    def _delete(self) -> None:
        from ..dialogs.dialogs import confirm  # No is the default: Enter or Esc keeps the profile

        it = self.list.currentItem()
        if it is None or not confirm(self, tr("profiles.title"), tr("profiles.confirm.delete", name=it.text()),
                                     tr("profiles.delete")):
            return
        self.settings.profiles = [p for p in self.settings.profiles if p.name != it.text()]
        if self.settings.active_profile == it.text():
            self.settings.active_profile = None
        try:
            save_settings(self.settings)
        except OSError as e:
            QMessageBox.warning(self, tr("profiles.title"), tr("profiles.err", error=e))
        self._fill()


def _exact() -> Any:
    from PySide6.QtCore import Qt

    return Qt.MatchFlag.MatchExactly


def install_profile_bar(win: Any) -> ProfileChooser:
    """Add the 连接配置 toolbar (the chooser) to the main window; returns the chooser (``win.profile_chooser``)."""
    bar = QToolBar(tr("profiles.bar"), win)
    bar.setObjectName("profilesToolbar")
    bar.setMovable(False)
    chooser = ProfileChooser(win)
    bar.addWidget(chooser)
    win.addToolBar(bar)
    win.profile_chooser = chooser
    return chooser


__all__ = ["ProfileChooser", "ProfilesDialog", "install_profile_bar", "switch_profile"]
