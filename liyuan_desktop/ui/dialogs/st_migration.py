"""梨园 → 从 SillyTavern 导入…: the one-step migration window (issue 16 §3) over :mod:`liyuan_desktop.core.migrate`.

Flow: pick a SillyTavern folder (the SillyTavern folder, its ``data/<user>/`` or the old ``public/``) or a backup
zip → the plan is read on a worker thread and shown (counts and sizes per kind, what is already here, conflicts
that will be renamed, damaged files, what is not imported and why — ``secrets.json`` is never read) → 开始导入 runs
the import on a worker thread with a progress bar and 取消 (cancel removes everything this import created) → the
report (the same Markdown the CLI prints, saved in ``<home>/导入记录/<time>/``) is shown, and ``on_imported`` (the
main window's card list refresh) is called. SillyTavern's connection is added as a provider but never made the
current one by the import (issue 24 §4); when it was added, 改用 SillyTavern 的连接 switches to it on request.

The pickers are Qt's own file dialog (``DontUseNativeDialog``), a child of this window opened with ``open()`` —
window-modal, no nested event loop — so they paint with the application's palette like every other dialog. The
platform's dialog, reached through the static ``QFileDialog.getExistingDirectory`` from this window-modal dialog,
showed as a black box on a Linux desktop (issue 24 §3) while the same picker opened on its own was fine.

Threads: the worker (the task runner's ``migration`` lane, ui/infra/tasks.py) only runs ``core.migrate`` (no Qt); the
progress it reports reaches the bar on the UI thread through the runner — no signal carries Python objects across
threads. Nothing slow runs on
the UI thread: the scan, the import and the report's rendering input are made on the worker.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ..infra import tasks
from ..infra.i18n import language, register, show, tr
from .dialogs import confirm

if TYPE_CHECKING:  # pragma: no cover
    from ...core.migrate import MigrationPlan, MigrationReport

__all__ = ["StMigrationDialog", "open_dialog", "plan_markdown"]

register({
    "stmig.menu": {"zh": "从 SillyTavern 导入…", "en": "Import from SillyTavern…"},
    "stmig.title": {"zh": "从 SillyTavern 导入", "en": "Import from SillyTavern"},
    "stmig.intro": {"zh": "选择 SillyTavern 的文件夹（或它的 data/<用户名>/、旧版的 public/），或者它的备份 zip。"
                          "角色卡和聊天、世界书、预设、人设和设置会一起导入；API 密钥不导入。",
                    "en": "Pick the SillyTavern folder (or its data/<user>/, or the old public/), or a backup zip. "
                          "Cards with their chats, world books, presets, personas and settings come over together; "
                          "API keys do not."},
    "stmig.placeholder": {"zh": "选好之后，这里会列出找到的内容：每种多少、多大、哪些已经在梨园里、哪些同名要改名、哪些不导入。",
                          "en": "Once chosen, this lists what was found: how many of each kind, their size, what is "
                                "already here, which names conflict and are renamed, and what is not imported."},
    "stmig.pick.folder": {"zh": "选择文件夹…", "en": "Choose folder…"},
    "stmig.pick.zip": {"zh": "选择 zip…", "en": "Choose zip…"},
    "stmig.zip.filter": {"zh": "SillyTavern 备份 (*.zip)", "en": "SillyTavern backup (*.zip)"},
    "stmig.scanning": {"zh": "正在读取 {path} …", "en": "Reading {path} …"},
    "stmig.start": {"zh": "开始导入", "en": "Import"},
    "stmig.cancel": {"zh": "取消", "en": "Cancel"},
    "stmig.close": {"zh": "关闭", "en": "Close"},
    "stmig.cancelling": {"zh": "正在取消…（这次导入的东西会全部删掉）", "en": "Cancelling… (everything this import created is removed)"},
    "stmig.cancelled": {"zh": "已取消：什么都没有留下。", "en": "Cancelled: nothing was left behind."},
    "stmig.importing": {"zh": "正在导入：{label}", "en": "Importing: {label}"},
    "stmig.done": {"zh": "导入完成，报告已保存在 {path}", "en": "Done; the report is saved in {path}"},
    "stmig.nothing": {"zh": "没有新的东西要导入（相同的都已经在梨园里了）。",
                      "en": "Nothing new to import (identical items are already here)."},
    "stmig.failed": {"zh": "导入失败：{error}", "en": "Import failed: {error}"},
    "stmig.plan.head": {"zh": "找到的内容", "en": "What was found"},
    "stmig.col.kind": {"zh": "种类", "en": "Kind"},
    "stmig.col.total": {"zh": "数量", "en": "Found"},
    "stmig.col.new": {"zh": "将导入", "en": "To import"},
    "stmig.col.same": {"zh": "已有相同", "en": "Already here"},
    "stmig.col.bad": {"zh": "损坏/跳过", "en": "Damaged/skipped"},
    "stmig.col.size": {"zh": "大小", "en": "Size"},
    "stmig.conflicts": {"zh": "同名冲突（改名导入，不覆盖）", "en": "Name conflicts (imported renamed, never overwritten)"},
    "stmig.settings": {"zh": "将接管的设置（梨园里已经设过的保留）", "en": "Settings taken over (what you set here is kept)"},
    "stmig.damaged": {"zh": "损坏或跳过的", "en": "Damaged or skipped"},
    "stmig.not.imported": {"zh": "不导入的", "en": "Not imported"},
    "stmig.notes": {"zh": "说明", "en": "Notes"},
    "stmig.kind.card": {"zh": "角色卡", "en": "Cards"},
    "stmig.kind.chat": {"zh": "聊天记录", "en": "Chats"},
    "stmig.kind.book": {"zh": "世界书", "en": "World books"},
    "stmig.kind.preset": {"zh": "预设", "en": "Presets"},
    "stmig.kind.persona": {"zh": "人设", "en": "Personas"},
    "stmig.kind.avatar": {"zh": "人设头像", "en": "Persona avatars"},
    "stmig.kind.settings": {"zh": "设置", "en": "Settings"},
    # issue 33 §4: a same-named book or card that differs is SillyTavern's newer version: it replaces ours
    "stmig.updates": {"zh": "新版替换（旧的世界书留在历史版本里、旧卡放进回收站；用到它们的对话会提示改动）",
                      "en": "Newer versions replacing ours (old books kept as earlier versions, old cards in the "
                            "trash; chats using them are shown what changed)"},
    "stmig.update.title": {"zh": "用新版替换", "en": "Replace with newer versions"},
    "stmig.update.ask": {"zh": "导入会用 SillyTavern 里的新版替换梨园里的 {n} 项同名内容：\n{names}\n\n"
                               "用到它们的对话会提示改动，可以选择用新版或保持旧版。继续导入吗？",
                         "en": "The import replaces {n} items here by SillyTavern's newer versions of the same name:\n"
                               "{names}\n\nChats using them are shown what changed and can use the new version or "
                               "keep the old one. Import?"},
    "stmig.use.provider": {"zh": "改用 SillyTavern 的连接", "en": "Use SillyTavern's connection"},
    "stmig.provider.kept": {"zh": "SillyTavern 的连接已加入为服务商「{name}」，当前连接没有改变。要改用它，点「改用 SillyTavern 的连接」。",
                            "en": "SillyTavern's connection was added as the provider “{name}”; your current connection is unchanged. "
                                  "To use it, click “Use SillyTavern's connection”."},
    "stmig.provider.switched": {"zh": "当前连接已改为「{name}」（记得在设置里填密钥）。",
                                "en": "The current connection is now “{name}” (enter its key in Settings)."},
})

KINDS = ("card", "chat", "book", "preset", "persona", "avatar", "settings")


def _esc(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def scan(*args: Any, **kwargs: Any) -> "MigrationPlan":
    """``core.migrate.scan`` (same arguments) — the engine's migration is imported when the dialog first uses it,
    not when the window starts (this module is imported at start for its menu strings; issue 15)."""
    from ...core.migrate import scan as _scan

    return _scan(*args, **kwargs)


def run(*args: Any, **kwargs: Any) -> "MigrationReport":
    """``core.migrate.run`` (same arguments; imported on first use, as :func:`scan`)."""
    from ...core.migrate import run as _run

    return _run(*args, **kwargs)


def human_size(n: int) -> str:
    """``core.migrate.human_size`` (imported on first use, as :func:`scan`)."""
    from ...core.migrate import human_size as _human_size

    return _human_size(n)


def plan_markdown(plan: MigrationPlan) -> str:
    """The plan as Markdown for the window: a table per kind (found, to import, already here, damaged/skipped,
    size), the conflicts with their new names, the damaged items with the reason, what is not imported and why."""
    counts = plan.counts()
    out = [f"**{tr('stmig.plan.head')}**：`{plan.source}`（{plan.layout}）", "",
           "| " + " | ".join(tr(k) for k in ("stmig.col.kind", "stmig.col.total", "stmig.col.new", "stmig.col.same",
                                              "stmig.col.bad", "stmig.col.size")) + " |",
           "|---|---:|---:|---:|---:|---:|"]
    for kind in KINDS:
        c = counts.get(kind)
        if not c:
            continue
        out.append(f"| {tr('stmig.kind.' + kind)} | {sum(c.values())} | {c.get('new', 0) + c.get('rename', 0) + c.get('update', 0)} | "
                   f"{c.get('same', 0)} | {c.get('error', 0) + c.get('skip', 0)} | "
                   f"{human_size(plan.size(kind)) if plan.size(kind) else '—'} |")
    renamed = [i for i in plan.items if i.action == "rename"]
    if renamed:
        out += ["", f"**{tr('stmig.conflicts')}**", ""]
        out += [f"- {tr('stmig.kind.' + i.kind)}「{_esc(i.name)}」→「{_esc(i.target)}」" for i in renamed]
    updated = [i for i in plan.items if i.action == "update"]
    if updated:
        out += ["", f"**{tr('stmig.updates')}**", ""]
        out += [f"- {tr('stmig.kind.' + i.kind)}「{_esc(i.name)}」" for i in updated]
    changes = [c for i in plan.of("settings") for c in i.detail.get("changes", [])]
    if changes:
        out += ["", f"**{tr('stmig.settings')}**", ""]
        out += [f"- {_esc(c)}" for c in changes]
    bad = [i for i in plan.items if i.action in ("error", "skip")]
    if bad:
        out += ["", f"**{tr('stmig.damaged')}**", ""]
        out += [f"- `{_esc(i.source)}`{tr('sep.colon')}{_esc(show(i.reason))}" for i in bad]
    if plan.not_imported:
        out += ["", f"**{tr('stmig.not.imported')}**", ""]
        out += [f"- {n.what}：{n.count}——{n.why}" for n in plan.not_imported]
    if plan.problems or plan.notes:
        out += ["", f"**{tr('stmig.notes')}**", ""]
        out += [f"- {_esc(x)}" for x in plan.problems + plan.notes]
    return plan.masked("\n".join(out) + "\n")


class StMigrationDialog(QDialog):
    """The migration window (module doc). ``state``: "idle" | "scanning" | "ready" | "importing" | "done" |
    "cancelled" | "failed"; ``plan`` / ``report`` once known. Emits :attr:`imported` after an import that was not
    cancelled. :meth:`scan_path` and :meth:`start_import` are what the buttons call (tests call them too)."""

    imported = Signal()
    #: the current provider was switched to SillyTavern's connection (its name), saved to settings.json
    provider_switched = Signal(str)

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("stMigrationDialog")
        self.setWindowTitle(tr("stmig.title"))
        self.resize(760, 620)
        self.state = "idle"
        self.plan: Optional[MigrationPlan] = None
        self.report: Optional[MigrationReport] = None
        self.error = ""
        self._task: Optional[tasks.Task] = None
        self.confirm: Callable[[str, str], bool] = lambda title, text: confirm(self, title, text)
        lay = QVBoxLayout(self)
        intro = QLabel(tr("stmig.intro"))
        intro.setWordWrap(True)
        lay.addWidget(intro)
        row = QHBoxLayout()
        self.folder_btn = QPushButton(tr("stmig.pick.folder"))
        self.zip_btn = QPushButton(tr("stmig.pick.zip"))
        self.folder_btn.clicked.connect(lambda: self._pick_folder())
        self.zip_btn.clicked.connect(lambda: self._pick_zip())
        self.path_label = QLabel("")
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row.addWidget(self.folder_btn)
        row.addWidget(self.zip_btn)
        row.addWidget(self.path_label, 1)
        lay.addLayout(row)
        self.view = QTextBrowser()
        self.view.setObjectName("stMigrationView")
        self.view.setOpenExternalLinks(False)
        self.view.setPlaceholderText(tr("stmig.placeholder"))
        lay.addWidget(self.view, 1)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        self.bar = QProgressBar()
        self.bar.setVisible(False)
        lay.addWidget(self.bar)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.start_btn = QPushButton(tr("stmig.start"))
        self.start_btn.setObjectName("stMigrationStart")
        self.start_btn.setEnabled(False)
        self.start_btn.clicked.connect(lambda: self.start_import())
        self.cancel_btn = QPushButton(tr("stmig.cancel"))
        self.cancel_btn.setObjectName("stMigrationCancel")
        self.cancel_btn.setVisible(False)
        self.cancel_btn.clicked.connect(lambda: self.cancel_import())
        self.close_btn = QPushButton(tr("stmig.close"))
        self.close_btn.clicked.connect(lambda: self.close())
        self.provider_btn = QPushButton(tr("stmig.use.provider"))
        self.provider_btn.setObjectName("stMigrationUseProvider")
        self.provider_btn.setVisible(False)
        self.provider_btn.clicked.connect(lambda: self.use_imported_provider())
        self.picker: Optional[QFileDialog] = None
        for b in (self.provider_btn, self.start_btn, self.cancel_btn, self.close_btn):
            buttons.addWidget(b)
        lay.addLayout(buttons)

    # -- picking and scanning --------------------------------------------------------------------------------
    def _picker(self, title: str, folder: bool) -> QFileDialog:
        """Qt's own file dialog as a window-modal child of this window (module doc), opened without a nested event
        loop; a chosen path is scanned (:meth:`scan_path`). The open picker is :attr:`picker` (tests use it)."""
        if self.picker is not None:
            self.picker.close()
        dlg = QFileDialog(self, title, str(Path.home()))
        dlg.setObjectName("stMigrationPicker")
        dlg.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        if folder:
            dlg.setFileMode(QFileDialog.FileMode.Directory)
            dlg.setOption(QFileDialog.Option.ShowDirsOnly, True)
        else:
            dlg.setFileMode(QFileDialog.FileMode.ExistingFile)
            dlg.setNameFilter(tr("stmig.zip.filter"))
        dlg.setWindowModality(Qt.WindowModality.WindowModal)
        dlg.fileSelected.connect(lambda path: self.scan_path(path) if path else None)
        dlg.destroyed.connect(lambda *_: setattr(self, "picker", None))
        self.picker = dlg
        dlg.open()
        return dlg

    def _pick_folder(self) -> None:
        self._picker(tr("stmig.pick.folder"), folder=True)

    def _pick_zip(self) -> None:
        self._picker(tr("stmig.pick.zip"), folder=False)

    def _busy(self) -> bool:
        return self.state in ("scanning", "importing")

    def scan_path(self, path: str | Path) -> None:
        """Read ``path`` on the worker and show the plan (state "ready"), or the reason it is not SillyTavern data
        (state "failed")."""
        if self._busy():
            return
        if self.plan is not None and self.state == "ready":
            self.plan.discard()  # an extracted zip of the previous choice
        self.plan, self.report, self.error = None, None, ""
        self.path_label.setText(str(path))
        self.status.setText(tr("stmig.scanning", path=str(path)))
        self.view.clear()
        self.bar.setRange(0, 0)
        self.bar.setVisible(True)
        self._set_state("scanning")
        self._start(lambda job: scan(path), self._scanned)

    def _scanned(self, result: Any) -> None:
        self.bar.setVisible(False)
        if isinstance(result, BaseException):
            from ...core.migrate import MigrationError

            self.error = show(result) if isinstance(result, MigrationError) else f"{type(result).__name__}: {result}"
            self.status.setText(tr("stmig.failed", error=self.error))
            self._set_state("failed")
            return
        self.plan = result
        self.view.setMarkdown(plan_markdown(result))
        self.status.setText("" if result.to_import() else tr("stmig.nothing"))
        self._set_state("ready")

    # -- importing ------------------------------------------------------------------------------------------
    def start_import(self) -> None:
        """Import the plan on the worker with the progress bar and Cancel."""
        if self.plan is None or self._busy() or self.state != "ready":
            return
        plan = self.plan
        updated = [f"{tr('stmig.kind.' + i.kind)}「{i.name}」" for i in plan.items if i.action == "update"]
        if updated and not self.confirm(tr("stmig.update.title"), tr("stmig.update.ask", n=len(updated),
                                                                      names="、".join(updated[:10]))):
            return  # asked first, default No (a replaced book or card changes running chats)
        self.bar.setRange(0, 100)
        self.bar.setValue(0)
        self.bar.setVisible(True)
        self._set_state("importing")
        self._start(lambda work: run(plan, work.progress, work.stop), self._imported)

    def cancel_import(self) -> None:
        """Ask the running import to stop; it removes what it created and the dialog says so."""
        if self.state == "importing" and self._task is not None:
            self._task.work.cancel()
            self.cancel_btn.setEnabled(False)
            self.status.setText(tr("stmig.cancelling"))

    def _imported(self, result: Any) -> None:
        self.bar.setVisible(False)
        if isinstance(result, BaseException):
            self.error = f"{type(result).__name__}: {result}"
            self.status.setText(tr("stmig.failed", error=self.error))
            self._set_state("failed")
            return
        self.report = result
        if result.cancelled:
            self.status.setText(tr("stmig.cancelled"))
            self._set_state("cancelled")
            return
        self.view.setMarkdown(result.markdown(language()))
        status = tr("stmig.done", path=result.report_dir)
        if result.provider:
            status += "\n" + tr("stmig.provider.kept", name=result.provider)
        self.status.setText(status)
        self._set_state("done")
        self.imported.emit()

    def use_imported_provider(self) -> bool:
        """Make SillyTavern's connection (``report.provider``) the current provider and save settings.json; emits
        :attr:`provider_switched`. Returns False when there is none or the settings cannot be saved (said in the
        status line). Fast: one small file read and written."""
        name = self.report.provider if self.report is not None else ""
        if not name:
            return False
        from ...core.settings import load_settings, save_settings

        s = load_settings()
        if s.provider(name) is None:
            return False
        s.active_provider = name
        try:
            save_settings(s)
        except OSError as e:
            self.status.setText(tr("stmig.failed", error=e.strerror or e))
            return False
        self.report.provider = ""
        self.provider_btn.setVisible(False)
        self.status.setText(tr("stmig.provider.switched", name=name))
        self.provider_switched.emit(name)
        return True

    # -- the worker -----------------------------------------------------------------------------------------
    def _start(self, fn: Callable[[tasks.Work], Any], on_done: Callable[[Any], None]) -> None:
        """Run ``fn(work)`` on the task runner's ``migration`` lane; ``on_done(result or exception)`` on the UI
        thread, the progress bar follows ``work.progress(done, total, label)``."""

        def finished(result: Any, error: Optional[BaseException]) -> None:
            self._task = None
            on_done(error if error is not None else result)

        self._task = tasks.submit(fn, done=finished, on_progress=self._progressed, guard=self, lane="migration")

    def _progressed(self, work: tasks.Work) -> None:
        if self.state == "importing" and work.total:
            self.bar.setValue(int(100 * work.done / work.total))
            if not work.cancelled():
                self.status.setText(tr("stmig.importing", label=work.text or ""))

    def _set_state(self, state: str) -> None:
        self.state = state
        busy = self._busy()
        self.folder_btn.setEnabled(not busy)
        self.zip_btn.setEnabled(not busy)
        self.start_btn.setEnabled(state == "ready" and self.plan is not None and self.plan.to_import() > 0)
        self.cancel_btn.setVisible(state == "importing")
        self.cancel_btn.setEnabled(state == "importing")
        self.provider_btn.setVisible(state == "done" and self.report is not None and bool(self.report.provider))
        self.close_btn.setEnabled(not busy)

    def wait_idle(self, timeout_ms: int = 60000) -> bool:
        """For tests: process events until the worker is done (True) or ``timeout_ms`` passed (False)."""
        from PySide6.QtCore import QCoreApplication, QElapsedTimer

        t = QElapsedTimer()
        t.start()
        while self._busy() and t.elapsed() < timeout_ms:
            QCoreApplication.processEvents()
            if self._task is not None:
                self._task.wait(0.02)
        return not self._busy()

    def closeEvent(self, event: Any) -> None:  # noqa: N802 (Qt name)
        if self._busy():
            event.ignore()  # the work ends first (Cancel stops an import)
            return
        if self.plan is not None and self.state == "ready":
            self.plan.discard()
        super().closeEvent(event)

    def reject(self) -> None:  # Esc: same rule as closing
        if not self._busy():
            if self.plan is not None and self.state == "ready":
                self.plan.discard()
            super().reject()


def open_dialog(parent: QWidget, on_imported: Optional[Callable[[], None]] = None) -> StMigrationDialog:
    """Show the migration window over ``parent`` (window-modal); ``on_imported`` runs after a finished import
    (the main window refreshes its card list). Returns the dialog."""
    dlg = StMigrationDialog(parent)
    dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    if on_imported is not None:
        dlg.imported.connect(on_imported)
    session = getattr(parent, "session", None)
    if session is not None:  # replaced books and cards: the open chat's update bar looks again (issue 33 §4)
        from ...core.chat.changes import Changes

        dlg.imported.connect(lambda: session.broadcast(Changes.of("library")))
    reload = getattr(parent, "apply_settings", None)
    if callable(reload):  # the import and the switch write settings.json: the window takes the saved settings up

        def settings_changed(*_: Any) -> None:
            from ...core.settings import load_settings

            reload(load_settings())

        dlg.imported.connect(settings_changed)
        dlg.provider_switched.connect(settings_changed)
    dlg.setWindowModality(Qt.WindowModality.WindowModal)
    dlg.show()
    return dlg
