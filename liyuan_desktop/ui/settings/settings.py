"""The settings dialog: model providers (with API keys and a connection test), persona, language and theme.

Keys typed here go to the OS keyring (or, without a usable keyring, to a key file only the user can read:
core/secrets.py); they are never written
to ``settings.json`` and never logged. See :mod:`liyuan_desktop.core.settings` for the key lookup order.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any, Optional
from urllib.parse import urlsplit

from pydantic import ValidationError
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ...core.catalog_files import language_name
from ...core.llm.providers import DEFAULT_KEYRING_SERVICE, ProviderSettings, preset
from ...core.settings import (
    AppSettings,
    ConnectionReport,
    KeyProbe,
    forget_key,
    key_storage_status,
    lookup_key,
    rename_key,
    save_settings,
    store_key,
)
from ...core.settings import test_connection as run_connection_test
from ..infra.i18n import available_languages, language, set_language, show, tr
from ..infra.theme import set_role
from .local_models import LocalModelsPage, ModelPickerButton, ProviderExtrasBox

log = logging.getLogger(__name__)

#: Preset choices of the "add" combo: (label, preset name); "" = a custom OpenAI-compatible provider.
PRESET_CHOICES: list[tuple[str, str]] = [
    ("DeepSeek", "deepseek"),
    ("OpenAI", "openai"),
    ("OpenRouter", "openrouter"),
    ("Ollama", "ollama"),
    ("LM Studio", "lmstudio"),
    ("llama.cpp", "llamacpp"),
    ("", ""),  # label from tr("settings.preset.custom")
]

_ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_FORM_FIELDS = ("name", "base_url", "model", "scribe_model", "api_key_env")



def _is_valid(obj: Any) -> bool:
    try:
        import shiboken6

        return shiboken6.isValid(obj)
    except Exception:
        return True


class _Row:
    """One provider being edited: the raw form values (which may be invalid while the user types), the fields
    without a widget (kept from the preset/loaded settings), the name it had when loaded (for moving its key on
    rename), a typed-but-unsaved key and the last connection report."""

    def __init__(self, values: dict[str, Any], extras: dict[str, Any], orig_name: Optional[str]):
        self.values = values
        self.extras = extras
        self.orig_name = orig_name
        self.pending_key = ""
        self.report: Optional[ConnectionReport] = None

    @classmethod
    def from_provider(cls, p: ProviderSettings, orig_name: Optional[str]) -> "_Row":
        data = p.model_dump()
        values = {
            "name": data.pop("name"),
            "base_url": data.pop("base_url"),
            "model": data.pop("model"),
            "scribe_model": data.pop("scribe_model") or "",
            "api_key_env": data.pop("api_key_env") or "",
            "context_window": data.pop("context_window"),
        }
        return cls(values, data, orig_name)

    @classmethod
    def custom(cls, name: str) -> "_Row":
        values = {"name": name, "base_url": "", "model": "", "scribe_model": "", "api_key_env": "",
                  "context_window": 32768}
        return cls(values, {}, None)

    @property
    def name(self) -> str:
        return str(self.values["name"]).strip()

    @property
    def service(self) -> str:
        return self.extras.get("keyring_service") or DEFAULT_KEYRING_SERVICE

    def probe(self, name: Optional[str] = None) -> KeyProbe:
        env = str(self.values["api_key_env"]).strip() or None
        return KeyProbe(name or self.name, env, self.service)

    def errors(self, other_names: set[str]) -> dict[str, str]:
        """Field → message (current language) for every invalid field."""
        errs: dict[str, str] = {}
        if not self.name:
            errs["name"] = tr("settings.err.required")
        elif self.name in other_names:
            errs["name"] = tr("settings.err.dup")
        url = str(self.values["base_url"]).strip()
        if not url:
            errs["base_url"] = tr("settings.err.required")
        elif not url.lower().startswith(("http://", "https://")):
            errs["base_url"] = tr("settings.err.url")
        else:
            try:
                host = urlsplit(url).hostname
            except ValueError:
                host = None
            if not host:
                errs["base_url"] = tr("settings.err.url.host")
        if not str(self.values["model"]).strip():
            errs["model"] = tr("settings.err.required")
        env = str(self.values["api_key_env"]).strip()
        if env and not _ENV_RE.match(env):
            errs["api_key_env"] = tr("settings.err.env")
        return errs

    def build(self) -> ProviderSettings:
        """A validated ProviderSettings (raises ``pydantic.ValidationError``)."""
        data = dict(self.extras)
        data.update(
            name=self.name,
            base_url=str(self.values["base_url"]).strip(),
            model=str(self.values["model"]).strip(),
            scribe_model=str(self.values["scribe_model"]).strip() or None,
            api_key_env=str(self.values["api_key_env"]).strip() or None,
            context_window=int(self.values["context_window"]),
        )
        return ProviderSettings.model_validate(data)


class SettingsDialog(QDialog):
    """Edit :class:`AppSettings`: providers (list + form, API key, "测试连接"), persona, language, theme.

    Non-modal friendly: use ``open()`` or ``show()``; nothing blocks. ``settings`` is the dialog's own deep copy
    of the settings passed in; after a successful save it is replaced by the saved settings.

    Signals:
        settingsSaved(AppSettings): after 保存 wrote ``settings.json`` (keys went to the keyring / session).
        languageChanged(str): "zh" or "en", as soon as the language combo changes (``set_language`` is already
            applied); on 取消 the original language is restored and signalled again.

    Saving is blocked (with inline messages and a note at the bottom) while any provider is invalid: empty name,
    model or base URL, a URL not starting with http:// or https://, a duplicate name, a bad env variable name.
    """

    settingsSaved = Signal(object)
    languageChanged = Signal(str)

    def __init__(self, settings: AppSettings, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.settings: AppSettings = settings.model_copy(deep=True)
        self._initial_language = language()
        self._rows: list[_Row] = [_Row.from_provider(p, p.name) for p in self.settings.providers]
        self._active: Optional[_Row] = self._row_named(self.settings.active_provider)
        self._scribe: Optional[_Row] = self._row_named(self.settings.scribe_provider)
        self._removed: list[tuple[str, str]] = []  # (original name, keyring service) of removed providers
        self._current: Optional[_Row] = None
        self._loading = False
        self._test_task: Optional[asyncio.Future] = None
        self._testing_row: Optional[_Row] = None
        self._texts: list[tuple[Any, str]] = []
        self.keyring_ok, self.keyring_message = key_storage_status()

        self.setObjectName("SettingsDialog")
        self.setMinimumHeight(600)  # the width: at least what the layout needs (the provider form is not cut off)
        self.resize(820, 600)
        self._build()
        self._load_simple_fields()
        self._rebuild_list(select=0 if self._rows else None)
        self._retranslate()

    # -- construction -------------------------------------------------------------------------------------

    def _tx(self, setter: Any, key: str) -> None:
        """Register a translated text: ``setter(tr(key))`` now and on every language switch."""
        self._texts.append((setter, key))

    def _error_label(self) -> QLabel:
        label = QLabel()
        set_role(label, "error")
        label.setWordWrap(True)
        label.hide()
        return label

    def _with_error(self, widget: QWidget, error: QLabel) -> QWidget:
        box = QWidget()
        lay = QVBoxLayout(box)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addWidget(widget)
        lay.addWidget(error)
        return box

    def _form_label(self, key: str) -> QLabel:
        label = QLabel()
        self._tx(label.setText, key)
        return label

    def _build(self) -> None:
        outer = QVBoxLayout(self)
        self.tabs = QTabWidget()
        outer.addWidget(self.tabs, 1)
        self.tabs.addTab(self._build_models_tab(), "")
        self.tabs.addTab(self._build_persona_tab(), "")
        self.tabs.addTab(self._build_appearance_tab(), "")
        self._tx(lambda t: self.tabs.setTabText(0, t), "settings.tab.models")
        self._tx(lambda t: self.tabs.setTabText(1, t), "settings.tab.persona")
        self._tx(lambda t: self.tabs.setTabText(2, t), "settings.tab.appearance")
        self.local_page = LocalModelsPage()  # 本地模型 (ui/settings/local_models.py)
        self.tabs.addTab(self.local_page, "")
        self._tx(lambda t: self.tabs.setTabText(self.tabs.indexOf(self.local_page), t), "lm.tab")
        self.local_page.providerChosen.connect(self.add_provider_settings)

        bottom = QHBoxLayout()
        self.error_label = QLabel()
        set_role(self.error_label, "error")
        self.error_label.setWordWrap(True)
        bottom.addWidget(self.error_label, 1)
        self.save_button = QPushButton()
        self.save_button.setDefault(True)
        self.cancel_button = QPushButton()
        self._tx(self.save_button.setText, "save")
        self._tx(self.cancel_button.setText, "cancel")
        bottom.addWidget(self.save_button)
        bottom.addWidget(self.cancel_button)
        outer.addLayout(bottom)
        self.save_button.clicked.connect(self.save)
        self.cancel_button.clicked.connect(self.reject)

    def _build_models_tab(self) -> QWidget:
        page = QWidget()
        lay = QHBoxLayout(page)

        # left: the provider list, add/remove
        left = QVBoxLayout()
        self.providers_label = QLabel()
        self._tx(self.providers_label.setText, "settings.providers")
        left.addWidget(self.providers_label)
        self.provider_list = QListWidget()
        self.provider_list.setMinimumWidth(210)
        self.provider_list.setMaximumWidth(260)
        left.addWidget(self.provider_list, 1)
        self.remove_button = QPushButton()
        self.remove_button.setAutoDefault(False)
        self._tx(self.remove_button.setText, "settings.remove")
        remove_row = QHBoxLayout()
        remove_row.addStretch(1)
        remove_row.addWidget(self.remove_button)
        left.addLayout(remove_row)
        add_row = QHBoxLayout()
        self.preset_combo = QComboBox()
        for label, name in PRESET_CHOICES:
            self.preset_combo.addItem(label, name)
        self.add_button = QPushButton()
        self.add_button.setAutoDefault(False)
        self._tx(self.add_button.setText, "settings.add")
        add_row.addWidget(self.preset_combo, 1)
        add_row.addWidget(self.add_button)
        left.addLayout(add_row)
        scribe_label = QLabel()
        self._tx(scribe_label.setText, "settings.scribe_provider")
        left.addSpacing(8)
        left.addWidget(scribe_label)
        self.scribe_combo = QComboBox()
        left.addWidget(self.scribe_combo)
        lay.addLayout(left)

        # right: the form, or a hint when the list is empty
        self.form_stack = QStackedWidget()
        self.empty_label = QLabel()
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setWordWrap(True)
        set_role(self.empty_label, "muted")
        self._tx(self.empty_label.setText, "settings.empty")
        self.form_stack.addWidget(self.empty_label)
        form_scroll = QScrollArea()  # the form outgrows the dialog's minimum height (caps, capabilities, key notice)
        form_scroll.setWidgetResizable(True)
        form_scroll.setFrameShape(QFrame.Shape.NoFrame)
        form_scroll.setWidget(self._build_form())
        self.form_scroll = form_scroll
        self.form_stack.addWidget(form_scroll)
        lay.addWidget(self.form_stack, 1)

        self.provider_list.currentRowChanged.connect(self._on_row_selected)
        self.add_button.clicked.connect(self._on_add)
        self.remove_button.clicked.connect(self._on_remove)
        self.scribe_combo.currentIndexChanged.connect(self._on_scribe_changed)
        return page

    def _build_key_box(self) -> QWidget:
        """The API key row of the provider form: the field with save/forget, a status line and the no-keyring
        notice."""
        key_box = QWidget()
        key_lay = QVBoxLayout(key_box)
        key_lay.setContentsMargins(0, 0, 0, 0)
        key_lay.setSpacing(4)
        key_row = QHBoxLayout()
        self.key_edit = QLineEdit()
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self._tx(self.key_edit.setPlaceholderText, "settings.api_key.placeholder")
        self.key_save_button = QPushButton()
        self.key_save_button.setAutoDefault(False)
        self._tx(self.key_save_button.setText, "settings.key.save")
        self.key_forget_button = QPushButton()
        self.key_forget_button.setAutoDefault(False)
        self._tx(self.key_forget_button.setText, "settings.key.forget")
        key_row.addWidget(self.key_edit, 1)
        key_row.addWidget(self.key_save_button)
        key_row.addWidget(self.key_forget_button)
        key_lay.addLayout(key_row)
        self.key_status_label = QLabel()
        set_role(self.key_status_label, "muted")
        self.key_status_label.setToolTip(show(self.keyring_message))
        key_lay.addWidget(self.key_status_label)
        self.keyring_notice = QLabel()
        self.keyring_notice.setWordWrap(True)
        set_role(self.keyring_notice, "notice")
        self.keyring_notice.setVisible(False)
        key_lay.addWidget(self.keyring_notice)
        return key_box

    def _build_form(self) -> QWidget:
        self.form_box = QGroupBox()
        form = QFormLayout(self.form_box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        form.setVerticalSpacing(8)

        self.name_edit = QLineEdit()
        self.url_edit = QLineEdit()
        self.url_edit.setPlaceholderText("https://…/v1")
        self.model_edit = QLineEdit()
        self.scribe_model_edit = QLineEdit()
        self._tx(self.scribe_model_edit.setPlaceholderText, "settings.scribe_model.placeholder")
        self.context_spin = QSpinBox()
        self.context_spin.setRange(1024, 10_000_000)
        self.context_spin.setSingleStep(1024)
        self.context_spin.setGroupSeparatorShown(True)
        self.context_spin.setSuffix(" tokens")
        self.env_edit = QLineEdit()
        self._tx(self.env_edit.setPlaceholderText, "settings.api_key_env.placeholder")

        self.name_error = self._error_label()
        self.url_error = self._error_label()
        self.model_error = self._error_label()
        self.env_error = self._error_label()
        self._field_errors = {"name": self.name_error, "base_url": self.url_error, "model": self.model_error,
                              "api_key_env": self.env_error}

        form.addRow(self._form_label("settings.name"), self._with_error(self.name_edit, self.name_error))
        form.addRow(self._form_label("settings.base_url"), self._with_error(self.url_edit, self.url_error))
        self.model_picker = ModelPickerButton(self.model_edit, self._picker_source)
        model_row = QWidget()
        model_lay = QHBoxLayout(model_row)
        model_lay.setContentsMargins(0, 0, 0, 0)
        model_lay.addWidget(self.model_edit, 1)
        model_lay.addWidget(self.model_picker)
        form.addRow(self._form_label("settings.model"), self._with_error(model_row, self.model_error))
        form.addRow(self._form_label("settings.scribe_model"), self.scribe_model_edit)
        ctx_row = QHBoxLayout()
        ctx_row.addWidget(self.context_spin)
        ctx_row.addStretch(1)
        form.addRow(self._form_label("settings.context_window"), ctx_row)
        self.extras_box = ProviderExtrasBox()  # output caps, streaming, capabilities (ui/settings/local_models.py)
        self.extras_box.key_source = lambda: (self._current.pending_key or self._key_of(self._current)[1]
                                              if self._current is not None else None)
        form.addRow("", self.extras_box)
        form.addRow(self._form_label("settings.timeouts"), self._build_timeouts())
        form.addRow(self._form_label("settings.api_key_env"), self._with_error(self.env_edit, self.env_error))

        form.addRow(self._form_label("settings.api_key"), self._build_key_box())

        self.active_check = QCheckBox()
        self._tx(self.active_check.setText, "settings.active")
        form.addRow("", self.active_check)
        form.addRow("", self._build_test_box())
        self._connect_form()
        return self.form_box

    def _build_test_box(self) -> QWidget:
        """「测试连接」 and the line under it that says what the test found (selectable, wrapped)."""
        test_row = QHBoxLayout()
        self.test_button = QPushButton()
        self.test_button.setAutoDefault(False)
        self._tx(self.test_button.setText, "settings.test")
        test_row.addWidget(self.test_button)
        test_row.addStretch(1)
        self.test_result = QLabel()
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        test_box = QWidget()
        test_lay = QVBoxLayout(test_box)
        test_lay.setContentsMargins(0, 0, 0, 0)
        test_lay.addLayout(test_row)
        test_lay.addWidget(self.test_result, 0, Qt.AlignmentFlag.AlignTop)
        test_lay.addStretch(1)
        return test_box

    def _connect_form(self) -> None:
        """The form's edits reach the provider being edited (each field, the context window, the key buttons, 当前
        使用 and 测试连接)."""
        for field, edit in (("name", self.name_edit), ("base_url", self.url_edit), ("model", self.model_edit),
                            ("scribe_model", self.scribe_model_edit), ("api_key_env", self.env_edit)):
            edit.textChanged.connect(lambda text, f=field: self._on_field_edited(f, text))
        self.context_spin.valueChanged.connect(self._on_context_changed)
        self.key_edit.textChanged.connect(self._on_key_typed)
        self.key_save_button.clicked.connect(self._on_key_save)
        self.key_forget_button.clicked.connect(self._on_key_forget)
        self.active_check.toggled.connect(self._on_active_toggled)
        self.test_button.clicked.connect(self._on_test)

    #: the provider's time limits in the form: field, label key, (min, max) — seconds, or characters for
    #: ``min_rate_chars`` (core/llm/providers.py ProviderSettings; 0 characters = no minimum rate)
    _TIMEOUT_FIELDS = (("connect_timeout", "settings.timeout.connect", (1.0, 600.0)),
                       ("read_timeout", "settings.timeout.read", (1.0, 3600.0)),
                       ("idle_timeout", "settings.timeout.idle", (1.0, 3600.0)),
                       ("total_timeout", "settings.timeout.total", (10.0, 86400.0)))

    def _build_timeouts(self) -> QWidget:
        """The provider's time limits: connect, between reads, no new content, whole call (seconds) and the minimum
        rate (characters per window of seconds). Each edits the row's ``extras`` (fields without a widget of their
        own before); defaults are :class:`ProviderSettings`'."""
        box = QWidget()
        grid = QGridLayout(box)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(8)
        self.timeout_spins: dict[str, Any] = {}
        defaults = ProviderSettings.model_fields
        for i, (field, key, (lo, hi)) in enumerate(self._TIMEOUT_FIELDS):
            spin = QDoubleSpinBox()
            spin.setDecimals(0)
            spin.setRange(lo, hi)
            spin.setValue(float(defaults[field].default))
            self._tx(spin.setSuffix, "settings.timeout.seconds")
            grid.addWidget(self._form_label(key), i // 2, (i % 2) * 2)
            grid.addWidget(spin, i // 2, (i % 2) * 2 + 1)
            spin.valueChanged.connect(lambda value, f=field: self._on_timeout_changed(f, value))
            self.timeout_spins[field] = spin
        rate_row = QHBoxLayout()
        chars = QSpinBox()
        chars.setRange(0, 100_000)
        chars.setValue(int(defaults["min_rate_chars"].default))
        self._tx(chars.setSpecialValueText, "settings.timeout.rate.off")
        window = QDoubleSpinBox()
        window.setDecimals(0)
        window.setRange(1.0, 3600.0)
        window.setValue(float(defaults["min_rate_window"].default))
        self._tx(window.setSuffix, "settings.timeout.seconds")
        per = self._form_label("settings.timeout.rate.per")
        rate_row.addWidget(chars)
        rate_row.addWidget(per)
        rate_row.addWidget(window)
        rate_row.addStretch(1)
        grid.addWidget(self._form_label("settings.timeout.rate"), 2, 0)
        grid.addLayout(rate_row, 2, 1, 1, 3)
        chars.valueChanged.connect(lambda value: self._on_timeout_changed("min_rate_chars", value))
        window.valueChanged.connect(lambda value: self._on_timeout_changed("min_rate_window", value))
        self.timeout_spins.update(min_rate_chars=chars, min_rate_window=window)
        hint = QLabel()
        hint.setWordWrap(True)
        set_role(hint, "muted")
        self._tx(hint.setText, "settings.timeouts.hint")
        grid.addWidget(hint, 3, 0, 1, 4)
        return box

    def _load_timeouts(self, row: "_Row") -> None:
        """Show ``row``'s time limits (its extras; a missing one shows the default)."""
        defaults = ProviderSettings.model_fields
        for field, spin in self.timeout_spins.items():
            value = row.extras.get(field, defaults[field].default)
            spin.setValue(int(value) if field == "min_rate_chars" else float(value))

    def _on_timeout_changed(self, field: str, value: float) -> None:
        if self._loading or self._current is None:
            return
        self._current.extras[field] = int(value) if field == "min_rate_chars" else float(value)

    def _build_persona_tab(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        self.persona_name_edit = QLineEdit()
        self._tx(self.persona_name_edit.setPlaceholderText, "settings.persona.name.placeholder")
        self.persona_desc_edit = QPlainTextEdit()
        self._tx(self.persona_desc_edit.setPlaceholderText, "settings.persona.description.placeholder")
        form.addRow(self._form_label("settings.persona.name"), self.persona_name_edit)
        form.addRow(self._form_label("settings.persona.description"), self.persona_desc_edit)
        hint = QLabel()
        set_role(hint, "muted")
        hint.setWordWrap(True)
        self._tx(hint.setText, "settings.persona.hint")
        form.addRow("", hint)
        return page

    def _build_appearance_tab(self) -> QWidget:
        page = QWidget()
        outer = QVBoxLayout(page)
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        self.language_combo = QComboBox()
        for code in available_languages():  # zh, en, and every language with a translator's compiled catalog
            self.language_combo.addItem(language_name(code), code)
        self.theme_combo = QComboBox()
        self.theme_combo.setObjectName("themeCombo")
        self.theme_combo.addItem("", "system")
        self.theme_combo.addItem("", "light")
        self.theme_combo.addItem("", "dark")
        self._tx(lambda t: self.theme_combo.setItemText(0, t), "settings.theme.system")
        self._tx(lambda t: self.theme_combo.setItemText(1, t), "settings.theme.light")
        self._tx(lambda t: self.theme_combo.setItemText(2, t), "settings.theme.dark")
        form.addRow(self._form_label("settings.language"), self.language_combo)
        form.addRow(self._form_label("settings.theme"), self.theme_combo)
        self.enter_sends_check = QCheckBox()  # issue 26 §3: Enter sends (SillyTavern's default) or makes a new line
        self.enter_sends_check.setObjectName("enterSendsCheck")
        self._tx(self.enter_sends_check.setText, "settings.enter_sends")
        form.addRow(self.enter_sends_check)
        outer.addLayout(form)
        outer.addStretch(1)
        self.language_combo.currentIndexChanged.connect(self._on_language_changed)
        return page

    def _load_simple_fields(self) -> None:
        s = self.settings
        self.persona_name_edit.setText(s.persona_name)
        self.persona_desc_edit.setPlainText(s.persona_description)
        self.language_combo.blockSignals(True)
        # the window's language now: the saved one, or the system locale's / LIYUAN_LANG's (core.settings.language_for_run)
        self.language_combo.setCurrentIndex(max(self.language_combo.findData(language()), 0))
        self.language_combo.blockSignals(False)
        self.theme_combo.setCurrentIndex(max(self.theme_combo.findData(s.theme), 0))
        self.enter_sends_check.setChecked(s.enter_sends)

    def _retranslate(self) -> None:
        self.setWindowTitle(tr("settings.title"))
        for setter, key in self._texts:
            setter(tr(key))
        self.preset_combo.setItemText(len(PRESET_CHOICES) - 1, tr("settings.preset.custom"))
        self._rebuild_scribe_combo()
        self._refresh_list_labels()
        self.local_page.retranslate()
        self.extras_box.retranslate()
        if self._current is not None:
            self._show_errors()
            self._refresh_key_status()
            self._show_report()
        # the form scrolls down, never sideways: as wide as its texts in this language need (buttons were cut off)
        self.form_scroll.setMinimumWidth(self.form_scroll.widget().minimumSizeHint().width()
                                         + self.form_scroll.verticalScrollBar().sizeHint().width())

    # -- rows and the list ----------------------------------------------------------------------------------

    def _row_named(self, name: Optional[str]) -> Optional[_Row]:
        for row in self._rows:
            if row.name == name:
                return row
        return None

    def _row_label(self, row: _Row) -> str:
        model = str(row.values["model"]).strip()
        text = row.name or "?"
        if model:
            text += f" · {model}"
        if row is self._active:
            text = f"★ {text}（{tr('settings.current.mark')}）" if language() == "zh" else \
                f"★ {text} ({tr('settings.current.mark')})"
        return text

    def _refresh_list_labels(self) -> None:
        for i, row in enumerate(self._rows):
            item = self.provider_list.item(i)
            if item is not None:
                item.setText(self._row_label(row))

    def _rebuild_list(self, select: Optional[int]) -> None:
        self.provider_list.blockSignals(True)
        self.provider_list.clear()
        for row in self._rows:
            self.provider_list.addItem(QListWidgetItem(self._row_label(row)))
        self.provider_list.blockSignals(False)
        self._rebuild_scribe_combo()
        if select is None or not self._rows:
            self._current = None
            self.form_stack.setCurrentIndex(0)
            self.remove_button.setEnabled(False)
        else:
            self.provider_list.setCurrentRow(min(select, len(self._rows) - 1))
            self._on_row_selected(self.provider_list.currentRow())

    def _rebuild_scribe_combo(self) -> None:
        self.scribe_combo.blockSignals(True)
        self.scribe_combo.clear()
        self.scribe_combo.addItem(tr("settings.scribe_provider.same"))
        for row in self._rows:
            self.scribe_combo.addItem(row.name or "?")
        index = self._rows.index(self._scribe) + 1 if self._scribe in self._rows else 0
        self.scribe_combo.setCurrentIndex(index)
        self.scribe_combo.blockSignals(False)

    def _unique_name(self, base: str) -> str:
        names = {r.name for r in self._rows}
        if base not in names:
            return base
        n = 2
        while f"{base}-{n}" in names:
            n += 1
        return f"{base}-{n}"

    def select_provider(self, name: str) -> bool:
        """Show the provider called ``name`` in the form; False if there is none."""
        row = self._row_named(name)
        if row is None:
            return False
        self.provider_list.setCurrentRow(self._rows.index(row))
        return True

    def add_provider(self, preset_name: str = "") -> None:
        """Add a copy of the built-in preset ``preset_name`` (a key of ``PRESETS``; "" = custom OpenAI-compatible)
        with a unique name, and select it. The first provider added becomes the current model."""
        if preset_name:
            p = preset(preset_name)
            row = _Row.from_provider(p, None)
            row.values["name"] = self._unique_name(p.name)
        else:
            row = _Row.custom(self._unique_name("custom"))
        self._rows.append(row)
        if self._active is None and len(self._rows) == 1:
            self._active = row
        self._rebuild_list(select=len(self._rows) - 1)
        self.name_edit.setFocus()

    def add_provider_settings(self, provider: ProviderSettings) -> None:
        """Add ``provider`` (e.g. from 本地模型) under a unique name, select it and show the models tab. The
        first provider added becomes the current model."""
        row = _Row.from_provider(provider, None)
        row.values["name"] = self._unique_name(provider.name)
        self._rows.append(row)
        if self._active is None and len(self._rows) == 1:
            self._active = row
        self._rebuild_list(select=len(self._rows) - 1)
        self.tabs.setCurrentIndex(0)

    def _picker_source(self) -> tuple[str, Optional[str]]:
        row = self._current
        if row is None:
            return "", None
        return str(row.values["base_url"]).strip(), row.pending_key or self._key_of(row)[1]

    def _on_add(self) -> None:
        self.add_provider(self.preset_combo.currentData() or "")

    def _on_remove(self) -> None:
        row = self._current
        if row is None:
            return
        index = self._rows.index(row)
        self._rows.remove(row)
        if row.orig_name:
            self._removed.append((row.orig_name, row.service))
        if self._active is row:
            self._active = None
        if self._scribe is row:
            self._scribe = None
        self._rebuild_list(select=min(index, len(self._rows) - 1) if self._rows else None)

    def _on_scribe_changed(self, index: int) -> None:
        self._scribe = self._rows[index - 1] if 1 <= index <= len(self._rows) else None

    # -- the form -----------------------------------------------------------------------------------------

    def _on_row_selected(self, index: int) -> None:
        if not 0 <= index < len(self._rows):
            self._current = None
            self.form_stack.setCurrentIndex(0)
            self.remove_button.setEnabled(False)
            return
        row = self._rows[index]
        self._current = row
        self.form_stack.setCurrentIndex(1)
        self.remove_button.setEnabled(True)
        self._loading = True
        try:
            self.name_edit.setText(str(row.values["name"]))
            self.url_edit.setText(str(row.values["base_url"]))
            self.model_edit.setText(str(row.values["model"]))
            self.scribe_model_edit.setText(str(row.values["scribe_model"]))
            self.env_edit.setText(str(row.values["api_key_env"]))
            self.context_spin.setValue(int(row.values["context_window"]))
            self.key_edit.setText(row.pending_key)
            self.active_check.setChecked(row is self._active)
            self.extras_box.load(row.extras, str(row.values["base_url"]), str(row.values["model"]))
            self._load_timeouts(row)
        finally:
            self._loading = False
        self._show_errors()
        self._refresh_key_status()
        self._show_report()

    def _on_field_edited(self, field: str, text: str) -> None:
        if self._loading or self._current is None:
            return
        self._current.values[field] = text
        self._current.report = None
        self._show_report()
        self._show_errors()
        if field in ("name", "model"):
            self._refresh_list_labels()
        if field == "name":
            self._rebuild_scribe_combo()
        if field in ("name", "api_key_env"):
            self._refresh_key_status()
        if field in ("base_url", "model"):
            self.extras_box.set_target(str(self._current.values["base_url"]), str(self._current.values["model"]))

    def _on_context_changed(self, value: int) -> None:
        if not self._loading and self._current is not None:
            self._current.values["context_window"] = int(value)

    def _on_active_toggled(self, checked: bool) -> None:
        if self._loading or self._current is None:
            return
        if checked:
            self._active = self._current
        elif self._active is self._current:
            self._active = None
        self._refresh_list_labels()

    def _other_names(self, row: _Row) -> set[str]:
        return {r.name for r in self._rows if r is not row}

    def _show_errors(self) -> dict[str, str]:
        row = self._current
        errs = row.errors(self._other_names(row)) if row is not None else {}
        for field, label in self._field_errors.items():
            msg = errs.get(field, "")
            label.setText(msg)
            label.setVisible(bool(msg))
        return errs

    # -- keys ---------------------------------------------------------------------------------------------

    def _key_of(self, row: _Row) -> tuple[str, Optional[str]]:
        """(source, key) for a row: its stored key, also under the name it had when loaded (renames move the key
        only on save)."""
        source, key = lookup_key(row.probe())
        if source == "none" and row.orig_name and row.orig_name != row.name:
            source, key = lookup_key(row.probe(row.orig_name))
        return source, key

    def _refresh_key_status(self) -> None:
        row = self._current
        if row is None:
            return
        if row.pending_key.strip():
            text = tr("settings.key.status.pending")
        else:
            source, _ = self._key_of(row)
            env = str(row.values["api_key_env"]).strip()
            text = {
                "env": tr("settings.key.status.env", var=env),
                "keyring": tr("settings.key.status.keyring"),
                "file": tr("settings.key.status.file"),
                "session": tr("settings.key.status.session"),
            }.get(source, tr("settings.key.status.none"))
        self.key_status_label.setText(text)
        if not self.keyring_ok:
            env = str(row.values["api_key_env"]).strip()
            self.keyring_notice.setText(tr("settings.key.nokeyring", var=env or tr("settings.key.env.unnamed")))
        self.keyring_notice.setVisible(not self.keyring_ok)

    def _on_key_typed(self, text: str) -> None:
        if self._loading or self._current is None:
            return
        self._current.pending_key = text.strip()
        self._refresh_key_status()

    def _on_key_save(self) -> None:
        """Store the typed key now, under the provider's current name (keyring, or the user-only key file without
        one)."""
        row = self._current
        if row is None or not row.pending_key:
            return
        errs = self._show_errors()
        if "name" in errs:
            return
        try:
            store_key(row.name, row.pending_key, row.service)
        except ValueError:
            return
        row.pending_key = ""
        self._loading = True
        self.key_edit.clear()
        self._loading = False
        self._refresh_key_status()

    def _on_key_forget(self) -> None:
        row = self._current
        if row is None:
            return
        for name in {row.name, row.orig_name} - {None, ""}:
            forget_key(name, row.service)
        row.pending_key = ""
        self._loading = True
        self.key_edit.clear()
        self._loading = False
        self._refresh_key_status()

    # -- connection test ----------------------------------------------------------------------------------

    def _show_report(self) -> None:
        row = self._current
        report = row.report if row is not None else None
        if self._test_task is not None and not self._test_task.done() and self._testing_row is row:
            set_role(self.test_result, "muted")
            self.test_result.setText(tr("settings.testing"))
        elif report is None:
            self.test_result.setText("")
        else:
            set_role(self.test_result, "ok" if report.ok else "error")
            self.test_result.setText(show(report.message))

    def _on_test(self) -> None:
        row = self._current
        if row is None or (self._test_task is not None and not self._test_task.done()):
            return
        if self._show_errors():
            set_role(self.test_result, "error")
            self.test_result.setText(tr("settings.test.fix"))
            return
        try:
            provider = row.build()
        except ValidationError:
            set_role(self.test_result, "error")
            self.test_result.setText(tr("settings.test.fix"))
            return
        key = row.pending_key or self._key_of(row)[1] or ""
        row.report = None
        self._testing_row = row
        try:
            self._test_task = asyncio.ensure_future(self._run_test(row, provider, key))
        except RuntimeError as exc:  # no event loop (should not happen inside the app)
            row.report = ConnectionReport(ok=False, model=provider.model, message=str(exc), kind="error")
            self._show_report()
            return
        self.test_button.setEnabled(False)
        self._show_report()

    async def _run_test(self, row: _Row, provider: ProviderSettings, key: str) -> None:
        try:
            report = await run_connection_test(provider, key)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # test_connection reports failures itself; this is a last resort
            report = ConnectionReport(ok=False, model=provider.model, message=f"{type(exc).__name__}", kind="error")
        if not _is_valid(self):
            return
        row.report = report
        if row is self._current and report.ok:
            # a working connection: find out what the model can do (issue 18 §1) before the button is back
            await self.extras_box.probe_and_wait(provider, key)
            if not _is_valid(self):
                return
        self._test_task = None
        self.test_button.setEnabled(True)
        if row is self._current:
            self._show_report()

    def test_running(self) -> bool:
        """True while a connection test is in flight (the button is disabled)."""
        return self._test_task is not None and not self._test_task.done()

    # -- language -----------------------------------------------------------------------------------------

    def _on_language_changed(self, index: int) -> None:
        lang = self.language_combo.itemData(index) or "zh"
        set_language(lang)
        self._retranslate()
        self.languageChanged.emit(lang)

    # -- save / cancel ------------------------------------------------------------------------------------

    def collect(self) -> AppSettings:
        """The settings as currently edited (not saved). Raises ``ValueError`` (a ValidationError) when a
        provider is invalid."""
        providers = [row.build() for row in self._rows]
        data = self.settings.model_dump()
        data.update(
            providers=providers,
            active_provider=self._active.name if self._active in self._rows else None,
            scribe_provider=self._scribe.name if self._scribe in self._rows else None,
            persona_name=self.persona_name_edit.text().strip(),
            persona_description=self.persona_desc_edit.toPlainText().strip(),
            ui_language=self.language_combo.currentData() or "zh",
            theme=self.theme_combo.currentData() or "system",
            enter_sends=self.enter_sends_check.isChecked(),
        )
        return AppSettings.model_validate(data)

    def _apply_keys(self) -> None:
        """Move keys of renamed providers, store typed keys, forget keys of removed providers."""
        for row in self._rows:
            if row.orig_name and row.orig_name != row.name:
                rename_key(row.orig_name, row.name, row.service)
            if row.pending_key:
                store_key(row.name, row.pending_key, row.service)
        kept = {row.name for row in self._rows}
        for name, service in self._removed:
            if name not in kept:
                forget_key(name, service)

    def save(self) -> bool:
        """保存: validate, store keys, write ``settings.json``, emit ``settingsSaved`` and close.
        Returns False (dialog stays open, messages shown) when something is invalid or the file cannot be written."""
        self.error_label.clear()
        for row in self._rows:
            if row.errors(self._other_names(row)):
                self.provider_list.setCurrentRow(self._rows.index(row))
                self.tabs.setCurrentIndex(0)
                self._show_errors()
                self.error_label.setText(tr("settings.err.fix"))
                return False
        try:
            new = self.collect()
        except ValueError as exc:
            log.info("settings not saved: %s", type(exc).__name__)
            self.error_label.setText(tr("settings.err.fix"))
            return False
        self._apply_keys()
        try:
            save_settings(new)
        except OSError as exc:
            self.error_label.setText(tr("settings.err.save", error=f"{type(exc).__name__}: {exc.strerror or exc}"))
            return False
        self.settings = new
        for row in self._rows:
            row.orig_name = row.name
            row.pending_key = ""
        self._removed.clear()
        self._initial_language = new.ui_language
        self.settingsSaved.emit(new)
        self.accept()
        return True

    def done(self, result: int) -> None:
        """Closing (保存, 取消 or the window's close button): stop a running test; on cancel restore the
        language the dialog was opened with."""
        if self._test_task is not None and not self._test_task.done():
            self._test_task.cancel()
        self._test_task = None
        if result != QDialog.DialogCode.Accepted and language() != self._initial_language:
            set_language(self._initial_language)
            self.languageChanged.emit(self._initial_language)
        super().done(result)
