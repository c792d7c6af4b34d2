"""The 预设 dialog (issue 14 §3): the preset library — import, delete, set the default for new chats —, what the
selected preset does in Liyuan (where each prompt goes, what is dropped and why, the sampling sent and what the
chat's provider does not take), the open chat's preset and its own sampling overrides; the 提示词管理 tab is
SillyTavern's Prompt Manager over the selected preset (``prompt_manager.py``). Also the new-chat dialog
(mode + preset) and the sampling editor the connection profiles reuse.

The dialog calls the chat's public commands (``Chat.set_preset``, ``Chat.set_sampling``) and the preset library
(``core.prompt.presets.store``); the default preset is saved in the app settings. A change of the chat's preset is
broadcast on the session (``Session.broadcast``): the dialog's list and the window's panes repaint from that notice. Nothing here is slow: a preset
is a small JSON file.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ...core.llm.sampling import Sampling, apply_sampling, field_label
from ...core.prompt.presets.model import PresetError
from ...core.prompt.presets.store import (
    delete_preset,
    describe_preset,
    install_preset,
    list_presets,
    load_installed_preset,
)
from ...core.settings import AppSettings, save_settings
from ..infra.i18n import STRINGS, language, show, tr
from ..infra.session import Session, session_or_own
from .prompt_manager import PromptManagerWidget

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

log = logging.getLogger(__name__)

STRINGS.update({
    "presets.action": {"zh": "预设…", "en": "Presets…"},
    "presets.title": {"zh": "预设", "en": "Presets"},
    "presets.library": {"zh": "预设库（★ = 新对话默认，▶ = 本对话在用）", "en": "Preset library (★ = default for new chats, ▶ = this chat)"},
    "presets.import": {"zh": "导入…", "en": "Import…"},
    "presets.import.filter": {"zh": "SillyTavern 预设 (*.json);;所有文件 (*)", "en": "SillyTavern presets (*.json);;All files (*)"},
    "presets.delete": {"zh": "删除", "en": "Delete"},
    "presets.default": {"zh": "设为新对话默认", "en": "Default for new chats"},
    "presets.nodefault": {"zh": "新对话不用预设", "en": "No default"},
    "presets.use": {"zh": "用于本对话", "en": "Use in this chat"},
    "presets.none.chat": {"zh": "本对话不用预设", "en": "No preset in this chat"},
    "presets.report": {"zh": "在梨园里怎么用", "en": "What it does in Liyuan"},
    "presets.empty": {"zh": "预设库是空的：点「导入…」选 SillyTavern 导出的对话补全预设（.json）。", "en": "The library is empty: Import… a SillyTavern chat-completion preset (.json)."},
    "presets.chat": {"zh": "本对话：{name}", "en": "This chat: {name}"},
    "presets.chat.none": {"zh": "（不用预设）", "en": "(no preset)"},
    "presets.nochat": {"zh": "没有打开的对话：这里只管理预设库。", "en": "No chat open: managing the library only."},
    "presets.sampling": {"zh": "本对话的采样参数（覆盖预设和连接配置；空着 = 不覆盖）", "en": "This chat's sampling (overrides preset and profile; blank = keep)"},
    "presets.sampling.save": {"zh": "保存采样参数", "en": "Save sampling"},
    "presets.sampling.saved": {"zh": "本对话的采样参数已保存，下一拍起生效。", "en": "Saved; used from the next beat."},
    "presets.sent": {"zh": "下一拍实际发送：{values}", "en": "Sent next beat: {values}"},
    "presets.imported": {"zh": "已导入预设「{name}」", "en": "Imported preset “{name}”"},
    "presets.confirm.delete": {"zh": "从预设库删除「{name}」？用它的对话以后打开时不再用预设。", "en": "Delete “{name}”? Chats using it will open without a preset."},
    "presets.err": {"zh": "预设出错：{error}", "en": "Preset error: {error}"},
    "unset": {"zh": "未设", "en": "unset"},
    "sampling.stop.placeholder": {"zh": "停止词，每行一个", "en": "Stop strings, one per line"},
    "sampling.dry.tip": {"zh": "DRY 采样（llama.cpp）：压住逐字照抄上文。未设时，本机或局域网里的 llama.cpp 服务在写新一拍时"
                               "自动用 强度 0.8、底数 1.75、允许长度 2；设成 0 即关闭。",
                         "en": "The DRY sampler (llama.cpp) holds back word-for-word copies of the text before. Unset: a "
                               "llama.cpp server on this machine or your network writes each new beat with multiplier "
                               "0.8, base 1.75, allowed length 2; set 0 to turn it off."},
    "close": {"zh": "关闭", "en": "Close"},
    "on": {"zh": "开", "en": "on"},
    "off": {"zh": "关", "en": "off"},
    "newchat.title": {"zh": "新对话", "en": "New chat"},
    "newchat.preset": {"zh": "预设：", "en": "Preset:"},
    "newchat.nopreset": {"zh": "（不用预设）", "en": "(no preset)"},
})

#: (field, kind, min, max, step, decimals); the spin box minimum below ``min`` stands for "unset"; the label is the
#: engine's (``sampling.field_label``, one language each)
_FIELDS: tuple[tuple[str, str, float, float, float, int], ...] = (
    ("temperature", "f", 0, 2, 0.05, 2),
    ("top_p", "f", 0, 1, 0.01, 2),
    ("top_k", "i", 0, 1000, 1, 0),
    ("min_p", "f", 0, 1, 0.01, 3),
    ("top_a", "f", 0, 1, 0.01, 2),
    ("frequency_penalty", "f", -2, 2, 0.05, 2),
    ("presence_penalty", "f", -2, 2, 0.05, 2),
    ("repetition_penalty", "f", 0.01, 3, 0.01, 2),
    ("dry_multiplier", "f", 0, 5, 0.05, 2),
    ("dry_base", "f", 1, 4, 0.05, 2),
    ("dry_allowed_length", "i", 1, 20, 1, 0),
    ("dry_penalty_last_n", "i", 1, 1_000_000, 256, 0),
    ("max_tokens", "i", 1, 1_000_000, 256, 0),
    ("seed", "i", 0, 2_147_483_647, 1, 0),
)
_EFFORTS = ("auto", "min", "low", "medium", "high", "max")


class SamplingEditor(QWidget):
    """A form for :class:`Sampling`: one spin box per number (its lowest position reads 未设 = not set), stop strings
    one per line, reasoning effort and streaming as choices. :meth:`value` / :meth:`set_value`."""

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        grid = QGridLayout(self)  # two label + box pairs a row: the form stays short beside the report
        grid.setContentsMargins(0, 0, 0, 0)
        cells = [0]

        def add_row(label: str, w: QWidget, wide: bool = False) -> None:
            i = cells[0]
            if wide and i % 2:
                i += 1
            r, c = divmod(i, 2)
            grid.addWidget(QLabel(label), r, c * 2)
            grid.addWidget(w, r, c * 2 + 1, 1, 3 if wide else 1)
            cells[0] = i + (2 if wide else 1)

        self.boxes: dict[str, Any] = {}
        for name, kind, lo, hi, step, dec in _FIELDS:
            if kind == "f":
                box: Any = QDoubleSpinBox()
                box.setDecimals(dec)
                box.setRange(lo - step, hi)
            else:
                box = QSpinBox()
                box.setRange(int(lo) - 1, int(hi))
            box.setSingleStep(step)
            box.setSpecialValueText(tr("unset"))
            box.setObjectName(f"sampling_{name}")
            if name.startswith("dry_"):
                box.setToolTip(tr("sampling.dry.tip"))
            box.setValue(box.minimum())
            self.boxes[name] = box
            add_row(show(field_label(name)), box)
        self.stop = QPlainTextEdit()
        self.stop.setObjectName("sampling_stop")
        self.stop.setFixedHeight(48)
        self.stop.setPlaceholderText(tr("sampling.stop.placeholder"))
        add_row(show(field_label("stop")), self.stop, wide=True)
        self.effort = QComboBox()
        self.effort.setObjectName("sampling_reasoning_effort")
        self.effort.addItem(tr("unset"), None)
        for e in _EFFORTS:
            self.effort.addItem(e, e)
        add_row(show(field_label("reasoning_effort")), self.effort)
        self.stream = QComboBox()
        self.stream.setObjectName("sampling_stream")
        for text, v in ((tr("unset"), None), (tr("on"), True), (tr("off"), False)):
            self.stream.addItem(text, v)
        add_row(show(field_label("stream")), self.stream)

    def set_value(self, s: Optional[Sampling]) -> None:
        """Show ``s`` (None = everything unset)."""
        s = s or Sampling()
        for name, box in self.boxes.items():
            v = getattr(s, name)
            box.setValue(box.minimum() if v is None else v)
        self.stop.setPlainText("\n".join(s.stop or []))
        self.effort.setCurrentIndex(max(0, self.effort.findData(s.reasoning_effort)) if s.reasoning_effort else 0)
        self.stream.setCurrentIndex(0 if s.stream is None else (1 if s.stream else 2))

    def value(self) -> Sampling:
        """What the form says (ValueError from pydantic cannot happen: the boxes keep the ranges)."""
        data: dict[str, Any] = {}
        for name, box in self.boxes.items():
            if box.value() != box.minimum():
                data[name] = box.value()
        stops = [line for line in self.stop.toPlainText().split("\n") if line]
        if stops:
            data["stop"] = stops
        if self.effort.currentData() is not None:
            data["reasoning_effort"] = self.effort.currentData()
        if self.stream.currentData() is not None:
            data["stream"] = self.stream.currentData()
        return Sampling.model_validate(data)


class PresetsDialog(QDialog):
    """The 预设 dialog. ``settings``: the app settings (the default preset is saved there); ``chat``: the open chat
    (None: the library only). ``chatPresetChanged(str)`` carries the notice of a preset change in the chat ("" when
    nothing changed in its prompt); ``settingsChanged(AppSettings)`` after the default changed."""

    chatPresetChanged = Signal(object)  # a str, or an engine message (core.messages.Msg) kept with its key
    settingsChanged = Signal(object)

    def __init__(self, settings: AppSettings, chat: Optional[Chat] = None, parent: Optional[QWidget] = None,
                 session: Optional[Session] = None):
        super().__init__(parent)
        self.setObjectName("presetsDialog")
        self.setWindowTitle(tr("presets.title"))
        self.resize(1080, 680)
        self.settings = settings
        self.chat = chat
        self.session = session_or_own(session, self)  # use_in_chat is broadcast; the list repaints from the notice
        self.session.changed.connect(self._on_changes)
        root = QVBoxLayout(self)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self._library_pane())
        self.tabs = QTabWidget()
        self.tabs.setObjectName("presetTabs")
        self.tabs.addTab(self._report_pane(), tr("presets.report"))
        self.prompts = PromptManagerWidget(chat)
        self.prompts.saved.connect(self._prompts_saved)
        self.prompts.message.connect(self.status.setText)
        self.tabs.addTab(self.prompts, tr("pm.tab"))
        split.addWidget(self.tabs)
        split.setSizes([260, 820])
        root.addWidget(split, 1)
        buttons = QDialogButtonBox()
        buttons.addButton(tr("close"), QDialogButtonBox.ButtonRole.RejectRole)
        buttons.rejected.connect(self.reject)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(buttons)
        root.addLayout(bottom)
        for w in (self.use_btn, self.none_btn, self.sampling_box):
            w.setEnabled(chat is not None)
        if chat is not None:
            self.sampling.set_value(chat.sampling_overrides())
        self.refresh()

    def _library_pane(self) -> QWidget:
        """The library list, its buttons and the chat's preset."""
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(QLabel(tr("presets.library")))
        self.list = QListWidget()
        self.list.setObjectName("presetList")
        self.list.currentItemChanged.connect(self._selection_changed)
        ll.addWidget(self.list, 1)
        self.import_btn = QPushButton(tr("presets.import"))
        self.import_btn.clicked.connect(self._import_clicked)
        self.delete_btn = QPushButton(tr("presets.delete"))
        self.delete_btn.clicked.connect(self._delete_clicked)
        self.default_btn = QPushButton(tr("presets.default"))
        self.default_btn.clicked.connect(lambda: self.set_default(self.selected()))
        self.nodefault_btn = QPushButton(tr("presets.nodefault"))
        self.nodefault_btn.clicked.connect(lambda: self.set_default(None))
        self.chat_label = QLabel()
        self.chat_label.setObjectName("presetChatLabel")
        self.chat_label.setWordWrap(True)
        self.use_btn = QPushButton(tr("presets.use"))
        self.use_btn.setObjectName("presetUseButton")
        self.use_btn.clicked.connect(lambda: self.use_in_chat(self.selected()))
        self.none_btn = QPushButton(tr("presets.none.chat"))
        self.none_btn.clicked.connect(lambda: self.use_in_chat(None))
        for pair in ((self.import_btn, self.delete_btn), (self.default_btn, self.nodefault_btn), (self.chat_label,),
                     (self.use_btn, self.none_btn)):
            row = QHBoxLayout()
            for w in pair:
                row.addWidget(w)
            ll.addLayout(row)
        self.status = QLabel("")
        self.status.setObjectName("presetStatus")
        self.status.setWordWrap(True)
        return left

    def _report_pane(self) -> QWidget:
        """What the selected preset does in Liyuan, and this chat's sampling."""
        right = QWidget()
        rl = QVBoxLayout(right)
        self.report = QPlainTextEdit()
        self.report.setObjectName("presetReport")
        self.report.setReadOnly(True)
        rl.addWidget(self.report, 1)
        self.sampling_box = QGroupBox(tr("presets.sampling"))
        sl = QVBoxLayout(self.sampling_box)
        self.sampling = SamplingEditor()
        sl.addWidget(self.sampling)
        srow = QHBoxLayout()
        self.sent_label = QLabel()
        self.sent_label.setObjectName("samplingSent")
        self.sent_label.setWordWrap(True)
        srow.addWidget(self.sent_label, 1)
        self.sampling_save = QPushButton(tr("presets.sampling.save"))
        self.sampling_save.clicked.connect(self.save_sampling)
        srow.addWidget(self.sampling_save)
        sl.addLayout(srow)
        rl.addWidget(self.sampling_box)
        return right

    def _selection_changed(self, current: Any, previous: Any) -> None:
        """Another library preset chosen: its report, and its prompts (unsaved prompt edits are asked about first;
        kept means the old preset stays selected)."""
        name = current.data(Qt.ItemDataRole.UserRole) if current is not None else None
        pm = self.prompts.manager
        if pm is not None and pm.name != name and not self.prompts.ask_discard():
            self.list.blockSignals(True)
            self.list.setCurrentItem(previous)
            self.list.blockSignals(False)
            return
        self._show_report()

    def reject(self) -> None:
        """Close (the button, Esc, the title bar's ×): unsaved prompt edits are asked about first (default No:
        the dialog stays open)."""
        if self.prompts.ask_discard():
            super().reject()

    def _prompts_saved(self, name: str) -> None:
        """The prompt manager wrote ``name`` into the library: the list shows it, and the chat using it reads it
        again (its messages are kept; only the system prompt changes)."""
        self.refresh(select=name)
        if self.chat is not None and self.chat.preset_name() == name:
            self.use_in_chat(name)

    def _on_changes(self, changes: Any) -> None:
        """A chat command's notice (the session's ``changed``): the chat's preset is a setting. A closed dialog
        does not repaint (the window makes a new one each time 预设… is chosen)."""
        if changes.settings and self.isVisible():
            self.refresh()

    # -- the list -------------------------------------------------------------------------------------------
    def selected(self) -> Optional[str]:
        """The selected preset's name, or None."""
        it = self.list.currentItem()
        return it.data(Qt.ItemDataRole.UserRole) if it is not None else None

    def refresh(self, select: Optional[str] = None) -> None:
        """Re-read the library; select ``select`` (default: the chat's preset, else the first)."""
        current = self.chat.preset_name() if self.chat is not None else ""
        select = select or self.selected() or current or None
        self.list.blockSignals(True)
        self.list.clear()
        names = list_presets()
        for n in names:
            mark = ("★" if n == self.settings.default_preset else " ") + ("▶" if n == current else " ")
            it = QListWidgetItem(f"{mark} {n}")
            it.setData(Qt.ItemDataRole.UserRole, n)
            self.list.addItem(it)
            if n == select:
                self.list.setCurrentItem(it)
        if self.list.currentItem() is None and self.list.count():
            self.list.setCurrentRow(0)
        self.list.blockSignals(False)
        for w in (self.delete_btn, self.default_btn):
            w.setEnabled(bool(names))
        self.use_btn.setEnabled(self.chat is not None and bool(names))
        if self.chat is not None:
            self.chat_label.setText(tr("presets.chat", name=current or tr("presets.chat.none")))
            self._show_sent()
        else:
            self.chat_label.setText(tr("presets.nochat"))
        self._show_report()

    def _provider(self) -> str:
        # Chat.model is always there; a configured client (llm.providers) carries its provider, a replay has none
        return getattr(self.chat.model, "provider", "other") if self.chat is not None else "other"

    def _show_report(self) -> None:
        name = self.selected()
        pm = self.prompts.manager
        if (pm.name if pm is not None else None) != name:
            self.prompts.load(name)
        if name is None:
            self.report.setPlainText(tr("presets.empty"))
            return
        try:
            self.report.setPlainText(describe_preset(load_installed_preset(name), self._provider()).text(language()))
        except PresetError as e:
            self.report.setPlainText(tr("presets.err", error=e))

    # -- commands -------------------------------------------------------------------------------------------
    def import_files(self, paths: list[str]) -> list[str]:
        """Import preset files into the library; returns the imported names (errors are shown, not raised)."""
        done: list[str] = []
        errors: list[str] = []
        for p in paths:
            try:
                done.append(install_preset(p).name)
            except (PresetError, OSError) as e:
                errors.append(show(e))
        self.refresh(select=done[-1] if done else None)
        if errors:
            QMessageBox.warning(self, tr("presets.title"), "\n".join(errors))
        return done

    def _import_clicked(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, tr("presets.import"), str(Path.home()), tr("presets.import.filter"))
        if paths:
            self.import_files(paths)

    def _delete_clicked(self) -> None:
        name = self.selected()
        if name is None:
            return
        from .dialogs import confirm  # No is the default: Enter or Esc keeps the preset

        if not confirm(self, tr("presets.title"), tr("presets.confirm.delete", name=name), tr("presets.delete")):
            return
        self.delete(name)

    def delete(self, name: str) -> None:
        """Remove ``name`` from the library (and as the default)."""
        try:
            delete_preset(name)
        except OSError as e:
            QMessageBox.warning(self, tr("presets.title"), tr("presets.err", error=e))
            return
        if self.settings.default_preset == name:
            self.set_default(None)
        self.refresh()

    def set_default(self, name: Optional[str]) -> None:
        """Make ``name`` the preset new chats get (None = none) and save the settings."""
        self.settings.default_preset = name
        try:
            save_settings(self.settings)
        except OSError as e:
            QMessageBox.warning(self, tr("presets.title"), tr("presets.err", error=e))
        self.settingsChanged.emit(self.settings)
        self.refresh(select=name)

    def use_in_chat(self, name: Optional[str]) -> str:
        """Use ``name`` (None = no preset) in the open chat; returns the notice (also sent as
        ``chatPresetChanged``)."""
        if self.chat is None:
            return ""
        try:
            notice = self.chat.set_preset(name)
        except (PresetError, RuntimeError, OSError) as e:
            QMessageBox.warning(self, tr("presets.title"), tr("presets.err", error=e))
            return ""
        self.session.broadcast(self.chat.last_changes)  # the dialog's list and the window's panes follow
        self.chatPresetChanged.emit(notice)
        return notice

    def save_sampling(self) -> None:
        """Save the sampling form as the chat's own overrides."""
        if self.chat is None:
            return
        try:
            self.chat.set_sampling(self.sampling.value())
        except OSError as e:
            QMessageBox.warning(self, tr("presets.title"), tr("presets.err", error=e))
            return
        self._show_sent()
        self.chatPresetChanged.emit(tr("presets.sampling.saved"))

    def _show_sent(self) -> None:
        """What the next beat sends for this chat's provider, and what that provider does not take."""
        if self.chat is None:
            return
        body: dict[str, Any] = {}
        dropped = apply_sampling(body, self.chat.sampling(), self._provider())  # type: ignore[arg-type]
        text = tr("presets.sent", values=_fmt(body) or tr("unset"))
        self.sent_label.setText("\n".join([text, *(show(d) for d in dropped)]))


def _fmt(values: dict[str, Any]) -> str:
    return "，".join(f"{k}={v}" for k, v in values.items())


class NewChatDialog(QDialog):
    """Mode (role-play / long-form, fixed afterwards) and preset for a new chat; :meth:`choice` after accept."""

    def __init__(self, default_preset: Optional[str], parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("newChatDialog")
        self.setWindowTitle(tr("newchat.title"))
        form = QFormLayout(self)
        self.mode = QComboBox()
        self.mode.addItem(tr("mode.roleplay"), "roleplay")
        self.mode.addItem(tr("mode.agent"), "agent")
        form.addRow(tr("new.chat.mode"), self.mode)
        self.preset = QComboBox()
        self.preset.setObjectName("newChatPreset")
        self.preset.addItem(tr("newchat.nopreset"), "")
        for n in list_presets():
            self.preset.addItem(n, n)
        i = self.preset.findData(default_preset or "")
        self.preset.setCurrentIndex(max(0, i))
        form.addRow(tr("newchat.preset"), self.preset)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def choice(self) -> tuple[str, str]:
        """(mode "roleplay" | "agent", preset name or "")."""
        return self.mode.currentData(), self.preset.currentData() or ""


def add_presets_action(win: Any, *menus: Any) -> QAction:
    """The 「预设…」 action of the main window (added to ``menus``): opens :class:`PresetsDialog` on the window's
    settings and open chat; a preset change in the chat lands in the activity list (the draft pane's notices)."""
    act = QAction(tr("presets.action"), win)
    act.setObjectName("presetsAction")

    def open_dialog() -> PresetsDialog:
        chat = win.chat if not getattr(win, "is_demo", False) else None
        dlg = PresetsDialog(win.settings, chat, win, session=win.session)
        dlg.chatPresetChanged.connect(lambda text: text and win.draft_pane.notice(text))
        dlg.settingsChanged.connect(lambda s: setattr(win, "settings", s))
        dlg.open()
        win.presets_dialog = dlg
        return dlg

    act.triggered.connect(open_dialog)
    win.open_presets = open_dialog
    for m in menus:
        m.addAction(act)
    return act


def preset_for_new_chat(name: str) -> Any:
    """The library preset ``name`` for ``Chat.create`` (None for "" or a preset that no longer loads)."""
    if not name:
        return None
    try:
        return load_installed_preset(name)
    except PresetError as e:
        log.warning("new chat without its preset: %s", e)
        return None


__all__ = ["PresetsDialog", "SamplingEditor", "NewChatDialog", "add_presets_action", "preset_for_new_chat"]
