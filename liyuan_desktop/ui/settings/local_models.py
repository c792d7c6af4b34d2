"""Settings → 本地模型, and the per-provider model parts of the settings form (issue 18 §1, §3).

* :class:`LocalModelsPage` — the 本地模型 tab: 扫描 asks the usual local servers on loopback
  (:func:`core.llm.discovery.discover`), lists what answers with its models, and 使用这个模型 hands a ready
  ``ProviderSettings`` (base URL, model, no key) to the dialog (signal ``providerChosen``).
* :class:`ModelPickerButton` — beside a provider's model field: fills a menu from the server's model list
  (``/v1/models``, :func:`core.llm.capabilities.list_models`); the field stays free text.
* :class:`ProviderExtrasBox` — the output caps (``max_tokens`` for the actor and the scribe), streaming
  (auto/on/off), and the capabilities: a read-only summary, an override of tool calling, and 探测能力.

Every network call is a coroutine on the app's event loop (qasync): nothing blocks the UI thread. Strings are
registered here (prefix ``lm.``) at import.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Callable, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QSpinBox,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.llm.capabilities import (
    Capabilities,
    apply_override,
    capabilities_for,
    list_models,
    set_capabilities,
    summary,
)
from ...core.llm.providers import ProviderSettings
from ...core.provider_caps import probe_provider
from ..infra.i18n import register, tr
from ..infra.theme import set_role

if TYPE_CHECKING:  # pragma: no cover  (discovery brings the HTTP client: imported when a scan starts)
    from ...core.llm.discovery import LocalServer, Target

log = logging.getLogger(__name__)

register({
    "lm.tab": {"zh": "本地模型", "en": "Local models"},
    "lm.intro": {"zh": "在本机查找正在运行的模型服务器（Ollama、LM Studio、llama.cpp、KoboldCpp、vLLM、"
                       "text-generation-webui、Jan），一键设成服务商（不需要密钥）。",
                 "en": "Find model servers running on this computer (Ollama, LM Studio, llama.cpp, KoboldCpp, vLLM, "
                       "text-generation-webui, Jan) and set one up in a click (no key needed)."},
    "lm.scan": {"zh": "扫描本机", "en": "Scan"},
    "lm.scanning": {"zh": "正在扫描……", "en": "Scanning…"},
    "lm.none": {"zh": "没有找到正在运行的本地模型服务器。先启动 Ollama / LM Studio / llama.cpp 等再扫描。",
                "en": "No local model server found. Start Ollama / LM Studio / llama.cpp … and scan again."},
    "lm.found": {"zh": "找到 {n} 个服务器。选一个模型，点「使用这个模型」。",
                 "en": "Found {n} server(s). Pick a model and click \u201cUse this model\u201d."},
    "lm.use": {"zh": "使用这个模型", "en": "Use this model"},
    "lm.added": {"zh": "已添加服务商「{name}」（{model}），保存设置后生效。",
                 "en": "Added provider \u201c{name}\u201d ({model}); it takes effect when you save."},
    "lm.col.server": {"zh": "服务器 / 模型", "en": "Server / model"},
    "lm.col.url": {"zh": "地址", "en": "Address"},
    "lm.needs_key": {"zh": "（需要 API key）", "en": " (needs an API key)"},
    "lm.no_models": {"zh": "（没有列出模型）", "en": "(no models listed)"},
    "lm.pick": {"zh": "从服务器列出模型", "en": "List the server's models"},
    "lm.pick.loading": {"zh": "正在读取模型列表……", "en": "Reading the model list…"},
    "lm.pick.none": {"zh": "服务器没有列出模型（可以直接输入模型名）",
                     "en": "The server lists no models (type a name instead)"},
    "lm.box": {"zh": "输出与能力", "en": "Output and capabilities"},
    "lm.max_tokens": {"zh": "回复上限", "en": "Reply cap"},
    "lm.scribe_max_tokens": {"zh": "场记上限", "en": "Scribe cap"},
    "lm.cap.off": {"zh": "不限", "en": "none"},
    "lm.stream": {"zh": "流式输出", "en": "Streaming"},
    "lm.compact": {"zh": "精简提示词（小模型、CPU 上的本地模型）", "en": "Compact prompt (small models, local models on a CPU)"},
    "lm.compact.tip": {"zh": "扮演时只发精简的规则和 5 个工具（写稿、改稿、收笔、提问、查设定），提示词约少一半，"
                             "CPU 上首字更快；角色卡内容不变。",
                       "en": "Role-play beats send short rules and 5 tools (write, edit, seal, ask, look up the world "
                             "book): about half the prompt, so a CPU server starts answering sooner; the card is "
                             "unchanged."},
    "lm.stream.auto": {"zh": "自动（按探测结果）", "en": "Auto (as detected)"},
    "lm.stream.on": {"zh": "开", "en": "On"},
    "lm.stream.off": {"zh": "关（一次返回）", "en": "Off (one answer)"},
    "lm.tools": {"zh": "工具调用", "en": "Tool calling"},
    "lm.tools.auto": {"zh": "自动（按探测结果）", "en": "Auto (as detected)"},
    "lm.tools.works": {"zh": "可用", "en": "Works"},
    "lm.tools.rejected": {"zh": "服务器拒绝（纯文字演出）", "en": "Rejected (prose only)"},
    "lm.tools.ignored": {"zh": "模型不调用（纯文字演出）", "en": "Ignored (prose only)"},
    "lm.probe": {"zh": "探测能力", "en": "Probe"},
    "lm.probing": {"zh": "正在探测……", "en": "Probing…"},
    "lm.never": {"zh": "还没有探测过这个模型。点「探测能力」或「测试连接」。",
                 "en": "This model was never probed. Click \u201cProbe\u201d or \u201cTest connection\u201d."},
})


def _spawn(coro: Any) -> Optional[asyncio.Future]:
    """Schedule ``coro`` on the running loop (qasync in the app); None when there is none."""
    try:
        return asyncio.ensure_future(coro)
    except RuntimeError:
        coro.close()
        return None


class LocalModelsPage(QWidget):
    """The 本地模型 tab. ``targets``: where to look (default: the usual ports; tests inject their own).

    Signals: ``providerChosen(ProviderSettings)`` when 使用这个模型 is clicked on a model (or on a server that lists
    none: its provider uses "local-model"); ``scanFinished(list)`` with the found :class:`LocalServer` list."""

    providerChosen = Signal(object)
    scanFinished = Signal(object)

    def __init__(self, parent: Optional[QWidget] = None, *, targets: Optional[list[Target]] = None):
        super().__init__(parent)
        self.setObjectName("LocalModelsPage")
        self.targets = targets
        self.servers: list[LocalServer] = []
        self._task: Optional[asyncio.Future] = None
        lay = QVBoxLayout(self)
        self.intro = QLabel(tr("lm.intro"))
        self.intro.setWordWrap(True)
        lay.addWidget(self.intro)
        row = QHBoxLayout()
        self.scan_button = QPushButton(tr("lm.scan"))
        self.scan_button.setAutoDefault(False)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        row.addWidget(self.scan_button)
        row.addWidget(self.status, 1)
        lay.addLayout(row)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels([tr("lm.col.server"), tr("lm.col.url")])
        self.tree.setColumnWidth(0, 320)
        lay.addWidget(self.tree, 1)
        use_row = QHBoxLayout()
        use_row.addStretch(1)
        self.use_button = QPushButton(tr("lm.use"))
        self.use_button.setAutoDefault(False)
        self.use_button.setEnabled(False)
        use_row.addWidget(self.use_button)
        lay.addLayout(use_row)
        self.scan_button.clicked.connect(self.scan)
        self.use_button.clicked.connect(self._use)
        self.tree.currentItemChanged.connect(lambda *_: self.use_button.setEnabled(self._chosen() is not None))
        self.tree.itemDoubleClicked.connect(lambda *_: self._use())

    def retranslate(self) -> None:
        """Re-set the texts in the current language."""
        self.intro.setText(tr("lm.intro"))
        self.scan_button.setText(tr("lm.scan"))
        self.use_button.setText(tr("lm.use"))
        self.tree.setHeaderLabels([tr("lm.col.server"), tr("lm.col.url")])

    def scanning(self) -> bool:
        """True while a scan is running."""
        return self._task is not None and not self._task.done()

    def scan(self) -> None:
        """Start a scan (off the UI thread's critical path: a coroutine on the loop); ignored while one runs."""
        if self.scanning():
            return
        self.status.setText(tr("lm.scanning"))
        self.scan_button.setEnabled(False)
        self._task = _spawn(self._scan())

    async def _scan(self) -> None:
        try:
            from ...core.llm.discovery import discover

            found = await discover(self.targets)
        except Exception:  # a bug must not leave the button disabled
            log.exception("local model scan failed")
            found = []
        try:
            self._show(found)
        except RuntimeError:  # the page was closed meanwhile
            return
        self.scanFinished.emit(found)

    def _show(self, found: list[LocalServer]) -> None:
        self.servers = found
        self.scan_button.setEnabled(True)
        self.tree.clear()
        for i, server in enumerate(found):
            top = QTreeWidgetItem([server.label + (tr("lm.needs_key") if server.needs_key else ""), server.base_url])
            top.setData(0, Qt.ItemDataRole.UserRole, (i, None))
            for name in server.models:
                child = QTreeWidgetItem([name, ""])
                child.setData(0, Qt.ItemDataRole.UserRole, (i, name))
                top.addChild(child)
            if not server.models:
                top.addChild(QTreeWidgetItem([tr("lm.no_models"), ""]))
            self.tree.addTopLevelItem(top)
            top.setExpanded(True)
        self.status.setText(tr("lm.found", n=len(found)) if found else tr("lm.none"))
        if found:
            first = self.tree.topLevelItem(0)
            self.tree.setCurrentItem(first.child(0) if first.childCount() else first)

    def _chosen(self) -> Optional[tuple[LocalServer, Optional[str]]]:
        item = self.tree.currentItem()
        data = item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None
        if item is not None and data is None and item.parent() is not None:
            data = item.parent().data(0, Qt.ItemDataRole.UserRole)
        if not data:
            return None
        index, model = data
        return self.servers[index], model

    def choose(self, kind: str, model: Optional[str] = None) -> bool:
        """Select ``model`` of the found server of ``kind`` (for tests and keyboard users); False if not listed."""
        for i, server in enumerate(self.servers):
            if server.kind != kind:
                continue
            top = self.tree.topLevelItem(i)
            for j in range(top.childCount()):
                if model is None or top.child(j).text(0) == model:
                    self.tree.setCurrentItem(top.child(j))
                    return True
        return False

    def _use(self) -> None:
        chosen = self._chosen()
        if chosen is None:
            return
        server, model = chosen
        provider = server.provider(model)
        self.status.setText(tr("lm.added", name=provider.name, model=provider.model))
        self.providerChosen.emit(provider)


class ModelPickerButton(QToolButton):
    """A ▾ button beside a provider's model field: lists the server's models in a menu (``/v1/models``, read on
    the loop), and a click puts the name into the field. ``source()`` returns (base_url, api_key or None)."""

    def __init__(self, target: QLineEdit, source: Callable[[], tuple[str, Optional[str]]],
                 parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.target = target
        self.source = source
        self.models: list[str] = []
        self._task: Optional[asyncio.Future] = None
        self.setText("▾")
        self.setToolTip(tr("lm.pick"))
        self.menu_ = QMenu(self)
        self.clicked.connect(self.refresh)

    def refresh(self) -> None:
        """Read the list (a coroutine) and pop the menu up when it arrives."""
        if self._task is not None and not self._task.done():
            return
        base_url, key = self.source()
        if not base_url:
            return
        self.setEnabled(False)
        self.setToolTip(tr("lm.pick.loading"))
        self._task = _spawn(self._load(base_url, key))

    async def _load(self, base_url: str, key: Optional[str]) -> None:
        try:
            names = await list_models(base_url, key, timeout=5.0)
        except Exception:
            log.exception("model list failed")
            names = []
        try:
            self.setEnabled(True)
            self.setToolTip(tr("lm.pick"))
        except RuntimeError:
            return
        self.models = names
        self.menu_.clear()
        if not names:
            self.menu_.addAction(tr("lm.pick.none")).setEnabled(False)
        for name in names:
            self.menu_.addAction(name, lambda _=False, n=name: self.target.setText(n))
        if self.isVisible():
            self.menu_.popup(self.mapToGlobal(self.rect().bottomLeft()))


class ProviderExtrasBox(QGroupBox):
    """Output caps, streaming and capabilities of the provider being edited.

    :meth:`load` binds it to the provider's extra fields (a dict the settings dialog keeps per row: the
    ``ProviderSettings`` fields without their own widget) plus its base URL and model; edits write back into that
    dict (``max_tokens``, ``scribe_max_tokens``, ``stream``, ``capabilities``). :meth:`probe` runs
    :func:`core.provider_caps.probe_provider` (not saved to disk here: the dialog saves). Signal ``probed`` with
    the new :class:`Capabilities`."""

    probed = Signal(object)

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setTitle(tr("lm.box"))
        self._extras: Optional[dict[str, Any]] = None
        self._base_url = ""
        self._model = ""
        self._loading = False
        self._task: Optional[asyncio.Future] = None
        self.key_source: Callable[[], Optional[str]] = lambda: None
        form = QFormLayout(self)
        self.max_spin = self._cap_spin()
        self.scribe_spin = self._cap_spin()
        caps_row = QHBoxLayout()
        self.max_label = QLabel(tr("lm.max_tokens"))
        self.scribe_label = QLabel(tr("lm.scribe_max_tokens"))
        caps_row.addWidget(self.max_spin)
        caps_row.addWidget(self.scribe_label)
        caps_row.addWidget(self.scribe_spin)
        caps_row.addStretch(1)
        form.addRow(self.max_label, caps_row)
        self.stream_combo = QComboBox()
        for key, value in (("lm.stream.auto", None), ("lm.stream.on", True), ("lm.stream.off", False)):
            self.stream_combo.addItem(tr(key), value)
        self.stream_label = QLabel(tr("lm.stream"))
        self.tools_combo = QComboBox()
        for key, value in (("lm.tools.auto", "auto"), ("lm.tools.works", "works"),
                           ("lm.tools.rejected", "rejected"), ("lm.tools.ignored", "ignored")):
            self.tools_combo.addItem(tr(key), value)
        self.tools_label = QLabel(tr("lm.tools"))
        modes_row = QHBoxLayout()  # streaming and tools on one row: the box stays short
        modes_row.addWidget(self.stream_combo, 1)
        modes_row.addWidget(self.tools_label)
        modes_row.addWidget(self.tools_combo, 1)
        form.addRow(self.stream_label, modes_row)
        self.compact_check = QCheckBox(tr("lm.compact"))  # issue 30 §6: the compact prompt for small / CPU models
        self.compact_check.setObjectName("compactPromptCheck")
        self.compact_check.setToolTip(tr("lm.compact.tip"))
        form.addRow("", self.compact_check)
        self.summary_label = QLabel("")
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        set_role(self.summary_label, "muted")  # coloured by the theme (ui/infra/theme.py)
        self.probe_button = QPushButton(tr("lm.probe"))
        self.probe_button.setAutoDefault(False)
        summary_row = QHBoxLayout()
        summary_row.addWidget(self.summary_label, 1)
        summary_row.addWidget(self.probe_button, 0, Qt.AlignmentFlag.AlignTop)
        form.addRow("", summary_row)
        self.max_spin.valueChanged.connect(lambda v: self._set("max_tokens", v or None))
        self.scribe_spin.valueChanged.connect(lambda v: self._set("scribe_max_tokens", v or None))
        self.stream_combo.currentIndexChanged.connect(lambda _: self._set("stream", self.stream_combo.currentData()))
        self.tools_combo.currentIndexChanged.connect(self._on_tools)
        self.compact_check.toggled.connect(lambda on: self._set("compact_prompt", bool(on)))
        self.probe_button.clicked.connect(lambda: self.probe())

    @staticmethod
    def _cap_spin() -> QSpinBox:
        spin = QSpinBox()
        spin.setRange(0, 1_000_000)
        spin.setSingleStep(256)
        spin.setSpecialValueText(tr("lm.cap.off"))
        spin.setSuffix(" tokens")
        return spin

    def retranslate(self) -> None:
        """Re-set the texts in the current language."""
        self.setTitle(tr("lm.box"))
        self.max_label.setText(tr("lm.max_tokens"))
        self.scribe_label.setText(tr("lm.scribe_max_tokens"))
        self.stream_label.setText(tr("lm.stream"))
        self.tools_label.setText(tr("lm.tools"))
        self.probe_button.setText(tr("lm.probe"))
        self.compact_check.setText(tr("lm.compact"))
        self.compact_check.setToolTip(tr("lm.compact.tip"))
        for i, key in enumerate(("lm.stream.auto", "lm.stream.on", "lm.stream.off")):
            self.stream_combo.setItemText(i, tr(key))
        for i, key in enumerate(("lm.tools.auto", "lm.tools.works", "lm.tools.rejected", "lm.tools.ignored")):
            self.tools_combo.setItemText(i, tr(key))
        self._show_caps()

    def _holder(self) -> ProviderSettings:
        """A stand-in provider over the bound fields (for the capability lookup)."""
        caps = [c if isinstance(c, Capabilities) else Capabilities.model_validate(c)
                for c in (self._extras or {}).get("capabilities") or []]
        return ProviderSettings.model_construct(base_url=self._base_url, model=self._model, capabilities=caps)

    def current(self) -> Capabilities:
        """The capabilities stored for the bound base URL and model (unknown when none)."""
        return capabilities_for(self._holder(), self._model)

    def load(self, extras: dict[str, Any], base_url: str, model: str) -> None:
        """Show and edit the provider whose extra fields are ``extras`` (edited in place), at ``base_url``/``model``."""
        self._extras, self._base_url, self._model = extras, base_url.strip().rstrip("/"), model.strip()
        self._loading = True
        try:
            default = ProviderSettings.model_fields
            mt = extras.get("max_tokens", default["max_tokens"].default)
            st = extras.get("scribe_max_tokens", default["scribe_max_tokens"].default)
            self.max_spin.setValue(int(mt or 0))
            self.scribe_spin.setValue(int(st or 0))
            self.stream_combo.setCurrentIndex(max(self.stream_combo.findData(extras.get("stream")), 0))
            self.compact_check.setChecked(bool(extras.get("compact_prompt", False)))
            caps = self.current()
            self.tools_combo.setCurrentIndex(max(self.tools_combo.findData(caps.tools), 0)
                                             if "tools" in caps.overridden else 0)
        finally:
            self._loading = False
        self._show_caps()

    def set_target(self, base_url: str, model: str) -> None:
        """The base URL or model changed in the form: show that pair's capabilities."""
        if self._extras is not None:
            self.load(self._extras, base_url, model)

    def _set(self, field: str, value: Any) -> None:
        if not self._loading and self._extras is not None:
            self._extras[field] = value

    def _store(self, caps: Capabilities) -> None:
        holder = self._holder()
        set_capabilities(holder, caps)
        if self._extras is not None:
            self._extras["capabilities"] = [c.model_dump(mode="json") for c in holder.capabilities]

    def _on_tools(self, _index: int) -> None:
        if self._loading or self._extras is None:
            return
        caps = self.current()
        value = self.tools_combo.currentData()
        if value == "auto":
            caps = caps.model_copy(update={"overridden": [f for f in caps.overridden if f != "tools"]})
            holder = self._holder()
            holder.capabilities = [c for c in holder.capabilities if not (c.model == caps.model and
                                   c.base_url.rstrip("/") == caps.base_url.rstrip("/"))] + [caps]
            self._extras["capabilities"] = [c.model_dump(mode="json") for c in holder.capabilities]
        else:
            self._store(apply_override(caps, "tools", value))
        self._show_caps()

    def _show_caps(self) -> None:
        caps = self.current()
        if not caps.probed_at and not caps.overridden:
            self.summary_label.setText(tr("lm.never"))
            return
        from ..infra.i18n import language

        en = language() != "zh"  # a translator's language reads the English labels
        parts = [f"{label}{': ' if en else '：'}{value}" for label, value in summary(caps, "en" if en else "zh")]
        text = " · ".join(parts)  # compact: the form must still fit the dialog's minimum height
        if caps.notes:
            text += "\n" + "\n".join(f"※ {note[:160]}" for note in caps.notes[:2])
        self.summary_label.setText(text)

    def probing(self) -> bool:
        """True while a probe runs."""
        return self._task is not None and not self._task.done()

    def probe(self, provider: Optional[ProviderSettings] = None) -> None:
        """Probe ``provider`` (default: one built from the bound fields) on the loop; the result is stored in the
        bound fields and shown. Ignored while a probe runs or when nothing is bound."""
        if self.probing() or (provider is None and self._extras is None):
            return
        if provider is None:
            try:
                provider = ProviderSettings.model_validate({**{k: v for k, v in (self._extras or {}).items()},
                                                            "name": "probe", "base_url": self._base_url,
                                                            "model": self._model})
            except ValueError:
                return
        self.probe_button.setEnabled(False)
        self.summary_label.setText(tr("lm.probing"))
        self._task = _spawn(self._probe(provider))

    async def probe_and_wait(self, provider: ProviderSettings, key: Optional[str] = None) -> None:
        """Probe ``provider`` now and return when the result is stored and shown (测试连接 awaits this)."""
        if self.probing():
            return
        self.probe_button.setEnabled(False)
        self.summary_label.setText(tr("lm.probing"))
        await self._probe(provider, key)

    async def _probe(self, provider: ProviderSettings, key: Optional[str] = None) -> None:
        try:
            result: Optional[Capabilities] = await probe_provider(
                provider, api_key=(key if key is not None else self.key_source()) or "", save=False)
        except Exception:
            log.exception("capability probe failed")
            result = None
        try:
            self.probe_button.setEnabled(True)
        except RuntimeError:
            return
        if result is not None:
            if result.base_url.rstrip("/") == self._base_url and result.model == self._model:
                self._store(result)
            self.probed.emit(result)
        self._show_caps()
