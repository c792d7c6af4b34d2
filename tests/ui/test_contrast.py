"""What the window shows is readable (issue 24 §3): in both themes, every text the window draws has WCAG 2.x contrast
against what it is drawn on — 4.5:1 for text, 3:1 for large text (≥ 24 px, or ≥ 18.66 px bold) and for the
indicator of a control (an unchecked check box or radio button against its surroundings).

What is checked: every text role of ui/infra/theme.py; the main window with a role-play chat open (every right-hand tab)
and with an agent chat open (章节, 检查点, the writing panes); the ask dialog after a question was shown; every dialog
and window a menu command opens (settings, presets, world books and their editor, manage/trash, search, about,
persona, author's note, world-info settings, SillyTavern import, summaries, export, …), each page of every tab
widget and stacked widget in them. The window is built in the *other* theme and switched the way Settings → 主题
switches it, because a switch is where stale colours come from.

Colours come from the palette (the text's foreground role, the background of the first ancestor that fills its
background, or the window), from an item view's own ForegroundRole/BackgroundRole data and from the character
formats of a text document. A palette can lie (a style draws what it likes), so check-box and radio indicators are
checked on pixels of the grabbed window. The conversation itself is a web page with its own light/dark CSS and is
not sampled here.

WCAG 2.x: relative luminance and contrast ratio as in https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio; large text
per https://www.w3.org/TR/WCAG21/#dfn-large-scale (18 pt = 24 px, 14 pt bold = 18.66 px); non-text contrast 3:1
per success criterion 1.4.11. Disabled controls are exempt (1.4.3, "inactive user interface component")."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QModelIndex, QPoint, QRect, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QFontInfo, QImage, QPainter, QPalette, QTextCursor, QTextFormat
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QGroupBox,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QStackedWidget,
    QStyle,
    QStyleOptionButton,
    QStyleOptionTabWidgetFrame,
    QTabBar,
    QTabWidget,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from liyuan_desktop.core.beat.events import AskRequest
from liyuan_desktop.core.settings import AppSettings
from liyuan_desktop.ui.infra import theme

TEXT, LARGE, CONTROL = 4.5, 3.0, 3.0
ROLES = ("muted", "small", "error", "warn", "ok", "notice", "banner", "title")
SKIP_ACTIONS = ("menu.quit", "menu.demo")  # quitting ends the test; a second demo chat adds nothing


# -- WCAG ------------------------------------------------------------------------------------------------------------
def luminance(c: QColor) -> float:
    """Relative luminance of an sRGB colour (WCAG 2.x; alpha ignored), 0..1."""

    def lin(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

    return 0.2126 * lin(c.red()) + 0.7152 * lin(c.green()) + 0.0722 * lin(c.blue())


def contrast(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio of two colours, 1..21."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def over(fg: QColor, bg: QColor) -> QColor:
    """``fg`` composited over the opaque ``bg`` (a translucent brush is what the eye sees mixed)."""
    a = fg.alphaF()
    return QColor.fromRgbF(fg.redF() * a + bg.redF() * (1 - a), fg.greenF() * a + bg.greenF() * (1 - a),
                           fg.blueF() * a + bg.blueF() * (1 - a))


def is_large(font: QFont) -> bool:
    """WCAG large-scale text: ≥ 24 px, or ≥ 18.66 px and bold."""
    px = QFontInfo(font).pixelSize()
    return px >= 24 or (px >= 18.66 and font.weight() >= QFont.Weight.Bold)


# -- where a widget's text and background come from ----------------------------------------------------------------
def _tab_page_colour(tabs: QTabWidget) -> QColor:
    """What the style fills a tab widget's page with (Fusion: a lightened button colour, not a palette role): its
    frame primitive drawn into a small image, the centre pixel read back."""
    img = QImage(40, 40, QImage.Format.Format_ARGB32)
    img.fill(tabs.palette().color(QPalette.ColorRole.Window))
    opt = QStyleOptionTabWidgetFrame()
    opt.initFrom(tabs)
    opt.rect = QRect(0, 0, 40, 40)
    p = QPainter(img)
    tabs.style().drawPrimitive(QStyle.PrimitiveElement.PE_FrameTabWidget, opt, p, tabs)
    p.end()
    return img.pixelColor(20, 20)


def background(w: QWidget) -> QColor:
    """The colour ``w`` is drawn on: the background role of the first ancestor (``w`` included) that fills its
    background, or of the window — except inside a tab widget's page, which the style fills with a colour of its
    own (:func:`_tab_page_colour`)."""
    x = w
    while x is not None:
        if x.autoFillBackground() or x.isWindow() or x.parentWidget() is None:
            return x.palette().color(x.backgroundRole())
        tabs = x.parentWidget()
        if isinstance(x, QStackedWidget) and isinstance(tabs, QTabWidget) and not tabs.documentMode():
            return _tab_page_colour(tabs)
        x = x.parentWidget()
    return w.palette().color(QPalette.ColorRole.Window)


def _text_of(w: QWidget) -> str:
    if isinstance(w, QLabel):
        return "" if w.pixmap() is not None and not w.pixmap().isNull() else w.text()
    if isinstance(w, QAbstractButton):
        return w.text()
    return ""


class Findings:
    """Failures collected over one theme: ``where: what fg on bg = ratio < needed``."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.bad: list[str] = []
        self.checked = 0

    def pair(self, where: str, text: str, fg: QColor, bg: QColor, large: bool = False, need: float = 0.0) -> None:
        need = need or (LARGE if large else TEXT)
        fg = over(fg, bg)
        self.checked += 1
        r = contrast(fg, bg)
        if r < need:
            self.bad.append(f"[{self.mode}] {where} {text[:24]!r}: {fg.name()} on {bg.name()} = {r:.2f} < {need}")


def _name(w: QWidget) -> str:
    top = w.window()
    own = f"{type(w).__name__}#{w.objectName()}" if w.objectName() else type(w).__name__
    return f"{type(top).__name__}/{own}"


def check_widget(w: QWidget, f: Findings) -> None:
    """The text contrast of one visible, enabled widget (labels, buttons, fields, combo boxes, tab bars, group box
    titles, item views and text documents)."""
    pal = w.palette()
    R = QPalette.ColorRole
    large = is_large(w.font())
    where = _name(w)
    if isinstance(w, (QCheckBox, QRadioButton)):
        if w.text():
            f.pair(where, w.text(), pal.color(w.foregroundRole()), background(w), large)
    elif isinstance(w, QToolButton) and w.autoRaise():
        if w.text() and w.toolButtonStyle() != Qt.ToolButtonStyle.ToolButtonIconOnly:
            f.pair(where, w.text(), pal.color(R.ButtonText), background(w), large)
    elif isinstance(w, QAbstractButton):
        if w.text() and not (isinstance(w, QPushButton) and w.isFlat()):
            f.pair(where, w.text(), pal.color(R.ButtonText), pal.color(R.Button), large)
        elif w.text():
            f.pair(where, w.text(), pal.color(R.ButtonText), background(w), large)
    elif isinstance(w, QLabel):
        text = _text_of(w)
        if text.strip():
            bg = background(w)
            f.pair(where, text, pal.color(w.foregroundRole()), bg, large)
            if "<a " in text:
                f.pair(where + " (link)", text, pal.color(R.Link), bg, large)
    elif isinstance(w, QLineEdit):
        if w.text():
            f.pair(where, w.text(), pal.color(R.Text), pal.color(R.Base), large)
        elif w.placeholderText():
            f.pair(where + " (placeholder)", w.placeholderText(), pal.color(R.PlaceholderText), pal.color(R.Base), large)
    elif isinstance(w, QComboBox):
        if w.currentText():
            bg = pal.color(R.Base) if w.isEditable() else pal.color(R.Button)
            f.pair(where, w.currentText(), pal.color(R.Text if w.isEditable() else R.ButtonText), bg, large)
    elif isinstance(w, QAbstractSpinBox):
        f.pair(where, w.text(), pal.color(R.Text), pal.color(R.Base), large)
    elif isinstance(w, QTabBar):
        for i in range(w.count()):
            if w.isTabVisible(i) and w.isTabEnabled(i) and w.tabText(i):
                color = w.tabTextColor(i) if w.tabTextColor(i).isValid() else pal.color(R.WindowText)
                f.pair(f"{where} tab", w.tabText(i), color, background(w), large)
    elif isinstance(w, QGroupBox):
        if w.title():
            f.pair(where + " title", w.title(), pal.color(R.WindowText), background(w), large)
    if isinstance(w, (QTextEdit, QPlainTextEdit)):
        check_document(w, f)
    elif isinstance(w, QAbstractItemView) and w.model() is not None:
        check_items(w, f)


def check_document(w: QWidget, f: Findings) -> None:
    """Every run of text of a text field's document: its character format's colours, else the palette's."""
    pal = w.palette()
    base = pal.color(QPalette.ColorRole.Base)
    text = pal.color(QPalette.ColorRole.Text)
    doc = w.document()
    if doc.isEmpty():
        if w.placeholderText():
            f.pair(_name(w) + " (placeholder)", w.placeholderText(), pal.color(QPalette.ColorRole.PlaceholderText), base)
        return
    block, seen = doc.begin(), 0
    while block.isValid() and seen < 400:
        bfmt = block.blockFormat()
        block_bg = bfmt.background().color() if bfmt.hasProperty(QTextFormat.Property.BackgroundBrush) else None
        cell_bg = None
        cur = QTextCursor(block)
        table = cur.currentTable()
        if table is not None:
            cfmt = table.cellAt(cur).format()
            if cfmt.hasProperty(QTextFormat.Property.BackgroundBrush):
                cell_bg = cfmt.background().color()
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            if frag.isValid() and frag.text().strip():
                fmt = frag.charFormat()
                fg = fmt.foreground().color() if fmt.hasProperty(QTextFormat.Property.ForegroundBrush) else text
                if fmt.isAnchor() and not fmt.hasProperty(QTextFormat.Property.ForegroundBrush):
                    fg = pal.color(QPalette.ColorRole.Link)
                bg = fmt.background().color() if fmt.hasProperty(QTextFormat.Property.BackgroundBrush) else (
                    cell_bg or block_bg or base)
                if bg.alpha() < 255:
                    bg = over(bg, base)
                font = fmt.font()
                f.pair(_name(w) + " (text)", frag.text(), fg, bg, is_large(font))
                seen += 1
            it += 1
        block = block.next()


def check_items(view: QAbstractItemView, f: Findings) -> None:
    """Every item text of a list/tree/table (first 300): its ForegroundRole/BackgroundRole data, else Text on Base
    (AlternateBase on odd rows when the view alternates)."""
    model = view.model()
    pal = view.palette()
    R = QPalette.ColorRole
    where = _name(view) + " item"
    budget = [300]

    def walk(parent: QModelIndex) -> None:
        for row in range(model.rowCount(parent)):
            if budget[0] <= 0:
                return
            try:
                columns = model.columnCount(parent)
            except TypeError:  # a list model keeps columnCount private: one column
                columns = 1
            for col in range(columns):
                if hasattr(view, "isColumnHidden") and view.isColumnHidden(col) and not parent.isValid():
                    continue
                idx = model.index(row, col, parent)
                text = idx.data(Qt.ItemDataRole.DisplayRole)
                if not isinstance(text, str) or not text.strip():
                    continue
                if not (model.flags(idx) & Qt.ItemFlag.ItemIsEnabled):
                    continue
                fg = idx.data(Qt.ItemDataRole.ForegroundRole)
                bg = idx.data(Qt.ItemDataRole.BackgroundRole)
                alt = view.alternatingRowColors() and row % 2
                base = pal.color(R.AlternateBase if alt else R.Base)
                fg_c = QColor(fg.color() if hasattr(fg, "color") else fg) if fg is not None else pal.color(R.Text)
                bg_c = QColor(bg.color() if hasattr(bg, "color") else bg) if bg is not None else base
                if bg_c.alpha() < 255:
                    bg_c = over(bg_c, base)
                font = idx.data(Qt.ItemDataRole.FontRole)
                f.pair(where, text, fg_c, bg_c, is_large(font) if isinstance(font, QFont) else False)
                budget[0] -= 1
            tree_like = hasattr(view, "isExpanded")
            first = model.index(row, 0, parent)
            if tree_like and model.hasChildren(first):
                walk(first)

    walk(view.rootIndex())


def check_indicators(top: QWidget, image: QImage, f: Findings) -> None:
    """Pixels: each visible, enabled, unchecked check box or radio button of ``top`` shows its indicator — some
    pixel of the indicator square has 3:1 against the background just right of it (SC 1.4.11)."""
    for cb in top.findChildren(QAbstractButton):
        if not isinstance(cb, (QCheckBox, QRadioButton)) or not cb.isVisibleTo(top) or not cb.isEnabled():
            continue
        if cb.isChecked() or cb.visibleRegion().isEmpty():
            continue
        opt = QStyleOptionButton()
        opt.initFrom(cb)
        opt.text = cb.text()
        element = QStyle.SubElement.SE_CheckBoxIndicator if isinstance(cb, QCheckBox) else \
            QStyle.SubElement.SE_RadioButtonIndicator
        r = cb.style().subElementRect(element, opt, cb)
        origin = cb.mapTo(top, r.topLeft())
        box = QRect(origin, r.size()).intersected(image.rect())
        if box.isEmpty():
            continue
        bg_point = QPoint(min(box.right() + 3, image.width() - 1), box.top() + 1)
        bg = image.pixelColor(bg_point)
        best = max(contrast(image.pixelColor(x, y), bg)
                   for x in range(box.left(), box.right() + 1) for y in range(box.top(), box.bottom() + 1))
        f.checked += 1
        if best < CONTROL:
            f.bad.append(f"[{f.mode}] {_name(cb)} {cb.text()[:24]!r}: unchecked indicator {best:.2f} < {CONTROL} "
                         f"against {bg.name()} (pixels)")


def _is_input(w: QWidget) -> bool:
    """A field the user types into: an editable line edit (not the one inside a spin box or combo box, whose frame
    is its parent's), a spin box, an editable combo box, an editable text area."""
    if isinstance(w, QLineEdit):
        return not w.isReadOnly() and not isinstance(w.parentWidget(), (QAbstractSpinBox, QComboBox))
    if isinstance(w, QAbstractSpinBox):
        return not w.isReadOnly()
    if isinstance(w, QComboBox):
        return w.isEditable()
    if isinstance(w, (QTextEdit, QPlainTextEdit)):
        return not w.isReadOnly()
    return False


def check_boundaries(top: QWidget, image: QImage, f: Findings) -> None:
    """Pixels: the boundary of each visible, enabled text field of ``top`` can be seen (SC 1.4.11) — some pixel of
    the outermost 2 px at the middle of its left and top edges has 3:1 against the background it sits on."""
    for w in top.findChildren(QWidget):
        if not _is_input(w) or not w.isVisibleTo(top) or not w.isEnabled() or w.visibleRegion().isEmpty():
            continue
        if w.hasFocus():
            continue  # the focus frame is the highlight colour
        bg = background(w.parentWidget()) if w.parentWidget() is not None else background(w)
        o = w.mapTo(top, QPoint(0, 0))
        h, wd = w.height(), w.width()
        band = [QPoint(o.x() + dx, o.y() + h // 2) for dx in (0, 1)] + [QPoint(o.x() + wd // 2, o.y() + dy) for dy in (0, 1)]
        band = [p for p in band if image.rect().contains(p)]
        if not band:
            continue
        best = max(contrast(image.pixelColor(p), bg) for p in band)
        f.checked += 1
        if best < CONTROL:
            f.bad.append(f"[{f.mode}] {_name(w)}: field boundary {best:.2f} < {CONTROL} against {bg.name()} (pixels)")


def _visible_children(top: QWidget) -> list[QWidget]:
    return [w for w in [top, *top.findChildren(QWidget)]
            if w.isVisibleTo(top) and w.isEnabled() and not w.visibleRegion().isEmpty()]


def check_window(top: QWidget, f: Findings) -> None:
    """Everything ``top`` shows now, then each other page of its tab widgets and stacked widgets in turn."""

    def now() -> None:
        QApplication.processEvents()
        for w in _visible_children(top):
            check_widget(w, f)
        image = top.grab().toImage()
        check_indicators(top, image, f)
        check_boundaries(top, image, f)

    now()
    for stack in top.findChildren(QWidget):
        if not isinstance(stack, (QTabWidget, QStackedWidget)) or not stack.isVisibleTo(top):
            continue
        if isinstance(stack, QStackedWidget) and isinstance(stack.parentWidget(), QTabWidget):
            continue  # the tab widget's own stack: visited through the tab widget
        keep = stack.currentIndex()
        for i in range(stack.count()):
            if i == keep or (isinstance(stack, QTabWidget) and not (stack.isTabVisible(i) and stack.isTabEnabled(i))):
                continue
            stack.setCurrentIndex(i)
            now()
        stack.setCurrentIndex(keep)


# -- the tests -------------------------------------------------------------------------------------------------------
def _other(mode: str) -> str:
    return "light" if mode == "dark" else "dark"


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_every_text_role_is_readable(qtbot, mode):
    """Each role of ui/infra/theme.py (set_role) on the window background and on a text field's base."""
    theme.apply(_other(mode))
    host = QWidget()
    qtbot.addWidget(host)
    lay = QVBoxLayout(host)
    labels = []
    for role in ROLES:
        lab = QLabel(f"{role}: 文字 text")
        theme.set_role(lab, role)
        lay.addWidget(lab)
        labels.append(lab)
    host.show()
    try:
        theme.apply(mode)
        QApplication.processEvents()
        f = Findings(mode)
        c = theme.colors(mode)
        for lab in labels:
            check_widget(lab, f)
        tabs = QTabWidget()  # a tab page: the style's own fill (see background)
        tabs.addTab(QWidget(), "A")
        lay.addWidget(tabs)
        page = _tab_page_colour(tabs)
        for key in ("text", "muted", "error", "warn", "ok", "link", "heading"):  # the colours HTML takes (colors())
            for bg in ("window", "base", "alt_base"):
                f.pair(f"colors()[{key!r}] on {bg}", key, QColor(c[key]), QColor(c[bg]))
            f.pair(f"colors()[{key!r}] on a tab page", key, QColor(c[key]), page)
        for bg in ("window", "base", "alt_base"):
            f.pair(f"colors()['control'] on {bg}", "control", QColor(c["control"]), QColor(c[bg]), need=CONTROL)
        f.pair("colors()['control'] on a tab page", "control", QColor(c["control"]), page, need=CONTROL)
        f.pair("notice_fg on notice_bg", "notice", QColor(c["notice_fg"]), QColor(c["notice_bg"]))
        f.pair("highlight_text on highlight", "selection", QColor(c["highlight_text"]), QColor(c["highlight"]))
        f.pair("tooltip text", "tip", QColor(c["text"]), QColor(c["tooltip_bg"]))
        assert f.checked >= len(ROLES)
        assert not f.bad, "\n".join(f.bad)
    finally:
        theme.apply("light")


@pytest.fixture
def no_file_pickers(monkeypatch):
    """A file picker answers as if the user pressed Cancel (the native dialog would wait for a person)."""
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: ("", "")))
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(lambda *a, **k: ([], "")))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: ("", "")))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: ""))


def _menu_actions(win) -> list:
    out = []

    def walk(menu: QMenu) -> None:
        menu.aboutToShow.emit()
        for a in menu.actions():
            if a.isSeparator():
                continue
            if a.menu():
                walk(a.menu())
            else:
                out.append(a)

    for a in win.menuBar().actions():
        if a.menu():
            walk(a.menu())
    return out


@pytest.fixture
def idle_loop():
    """A current (not running) asyncio loop for this synchronous test: panes that start their loading with
    ``asyncio.ensure_future`` (the book editor) need one to exist; an earlier async test leaves none set."""
    import asyncio

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield loop
    pending = asyncio.all_tasks(loop)  # started, never run: cancelled so that nothing is left unawaited
    for task in pending:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    asyncio.set_event_loop(None)
    loop.close()


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_every_window_and_dialog_is_readable(qtbot, no_file_pickers, idle_loop, mode, tmp_path):
    """The window, both chat modes, the ask dialog and every dialog a menu command opens, after a theme switch."""
    from liyuan_desktop.core.cards import library
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.ui.infra.i18n import tr
    from liyuan_desktop.ui.window.main_window import MainWindow

    theme.apply(_other(mode))
    win = MainWindow(AppSettings(theme=_other(mode)))
    qtbot.addWidget(win)
    win.resize(1360, 860)
    win.show()
    f = Findings(mode)
    try:
        win.start_demo()
        qtbot.waitUntil(lambda: win.chat is not None, timeout=30000)
        # a question was asked before the switch (the dialog stays built, hidden between questions)
        win.ask_dialog._show(AskRequest(question="往哪里走？ Which way?", options=["渡口", "回城"]))
        QApplication.processEvents()
        win.ask_dialog.hide()
        win.apply_settings(win.settings.model_copy(update={"theme": mode}))  # Settings → 主题, saved
        QApplication.processEvents()
        assert theme.mode() == mode

        # the activity list's coloured lines (a warning, a failed and a finished step)
        win.draft_pane.notice("开场时跳过了 1 行损坏的记录")
        win.draft_pane._line(lambda: "✗ 出错了", "red")
        win.draft_pane._line(lambda: "✓ 完成", "green")
        check_window(win, f)  # role-play chat: the conversation's panes
        win.ask_dialog._show(AskRequest(question="往哪里走？ Which way?", options=["渡口", "回城", "再等等"]))
        win.ask_dialog.set_note("演示会按录好的选择继续。")
        check_window(win.ask_dialog, f)
        win.ask_dialog.hide()

        # an agent chat: 章节 (with a chapter open in the editor), 检查点 and the writing panes
        card = library.ensure_demo_card()
        d = library.new_chat_dir(card, "对比度")
        chat = Chat.create(d, card.load(), win.chat.model, mode="agent")
        chat.import_chapters([("000-开场.md", "雨从黄昏下起。\n"), ("001-问名.md", "「你还记得他吗？」\n")], message="导入")
        win.chat, win.chat_ref, win.card_ref, win.is_demo = chat, library.ChatRef(name=d.name, dir=str(d)), card, False
        win._after_open()
        win.chapter_pane.open_chapter("001-问名.md")
        check_window(win, f)

        # every dialog or window a menu command opens, checked as it is shown (modal ones from their own loop)
        win.start_demo()
        qtbot.waitUntil(lambda: win.chat is not None and win.is_demo, timeout=30000)
        skip = {tr(k) for k in SKIP_ACTIONS}
        seen: set = set()

        def visit_new(before: set) -> None:
            for w in QApplication.topLevelWidgets():
                if w is win or w in before or not w.isVisible() or isinstance(w, QMenu) or w in seen:
                    continue
                seen.add(w)
                check_window(w, f)
                if isinstance(w, QDialog):
                    w.reject()
                w.close()

        current_before: list[set] = [set()]

        def close_modal() -> None:
            m = QApplication.activeModalWidget()
            if m is not None and m not in seen:
                visit_new(current_before[0])
            elif isinstance(m, QDialog):
                m.reject()
            elif m is not None:
                m.close()

        modal = QTimer()
        modal.setInterval(100)
        modal.timeout.connect(close_modal)
        modal.start()
        tried = 0
        try:
            for selected in ("chat", "card"):
                if selected == "card":
                    win.tree.setCurrentItem(win.tree.topLevelItem(0))
                for act in _menu_actions(win):
                    if act.text() in skip or not act.isEnabled():
                        continue
                    before = {w for w in QApplication.topLevelWidgets() if w.isVisible()}
                    current_before[0] = before
                    act.trigger()
                    tried += 1
                    qtbot.wait(120)
                    visit_new(before)
        finally:
            modal.stop()
        assert tried > 20 and len(seen) >= 8, (tried, [type(w).__name__ for w in seen])

        # the dialogs no menu command opens directly (a button in a pane or in another dialog opens them)
        from liyuan_desktop.ui.dialogs.authors_note import AuthorsNoteDialog
        from liyuan_desktop.ui.dialogs.book_editor import BookEditorDialog
        from liyuan_desktop.ui.dialogs.presets_dialog import NewChatDialog
        from liyuan_desktop.ui.roleplay.branch_navigator import EditMessageDialog
        from liyuan_desktop.ui.roleplay.inspector import InspectorDialog
        from liyuan_desktop.ui.settings.profiles import ProfilesDialog
        from liyuan_desktop.ui.writing.outline_pane import TextDialog

        chat = win.chat
        for make in (lambda: AuthorsNoteDialog(chat, win), lambda: BookEditorDialog(chat, win),
                     lambda: EditMessageDialog("e1", "改一句。", win), lambda: InspectorDialog([], "", win),
                     lambda: TextDialog("大纲", "第一章：渡口。", win), lambda: NewChatDialog(None, win),
                     lambda: ProfilesDialog(win.settings, win)):
            dlg = make()
            dlg.show()
            seen.add(dlg)
            check_window(dlg, f)
            dlg.reject()
            dlg.close()
    finally:
        theme.apply("light")
    assert f.checked > 200, f.checked
    assert not f.bad, f"{len(f.bad)} unreadable:\n" + "\n".join(dict.fromkeys(f.bad))
