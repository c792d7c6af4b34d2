"""What the PyInstaller build leaves out, and which files of the source tree it bundles (used by liyuan.spec;
tests/test_packaging.py checks both without running PyInstaller).

The QtWebEngineCore hook pulls in the QtQml/QtQuick hooks, which collect the whole QML tree and many Qt modules the
app never loads (../shared/design/desktop-stack.md §4: 599 MB -> 459 MB). ``DROP`` matches those paths on all three
platforms (``PySide6/Qt/lib/libQt6X.so.6`` on Linux, ``PySide6/Qt6X.dll`` on Windows,
``PySide6/Qt/lib/QtX.framework/…`` on macOS). Never dropped: QtWebEngineProcess, the WebEngine resources
(``*.pak``, ``icudtl.dat``, ``v8_context_snapshot.bin``), ``qtwebengine_locales``, and the libraries WebEngineCore
links against (Quick, Qml, QmlModels, OpenGL, Positioning, WebChannel).
"""

from __future__ import annotations

import re
from pathlib import Path

# Qt modules nothing in the app loads. A name is a prefix: Quick3D covers Quick3DRuntimeRender, Quick3DUtils …;
# none of them is a prefix of a name in KEEP_QT (tests/test_packaging.py checks).
UNUSED_QT = ("Quick3D", "QuickControls2", "QuickDialogs2", "QuickTemplates2", "QuickLayouts", "QuickParticles",
             "QuickShapes", "QuickTest", "QuickTimeline", "QuickEffects", "QuickVectorImage", "Labs", "3D",
             "Graphs", "DataVisualization", "Location", "Multimedia", "SpatialAudio", "TextToSpeech", "Wayland",
             "ShaderTools", "Pdf", "VirtualKeyboard", "Sensors", "Scxml", "StateMachine", "RemoteObjects", "Designer",
             "UiTools", "Help", "Bluetooth", "Nfc", "SerialBus", "SerialPort", "Sql", "Test", "HttpServer",
             "WebSockets", "WebView", "Lottie", "Protobuf", "Grpc", "QmlCompiler", "QmlLocalStorage",
             "QmlXmlListModel", "QmlNetwork", "QmlCore", "WlShellIntegration")
# WebEngineCore and the widgets the app uses link against these; they must stay even where a name above is a prefix.
KEEP_QT = ("Quick", "QuickWidgets", "Qml", "QmlModels", "QmlMeta", "QmlWorkerScript", "OpenGL", "OpenGLWidgets",
           "Positioning", "WebChannel", "WebChannelQuick", "WebEngineCore", "WebEngineWidgets", "Network",
           "PrintSupport", "DBus", "XcbQpa", "Charts",  # Charts: the ledger history's value chart (issue 33)
           "EglFSDeviceIntegration", "Core", "Gui", "Widgets")

_MODULES = "|".join(sorted(UNUSED_QT, key=len, reverse=True))
DROP = re.compile(
    r"(?:^|[/\\])(?:"
    # the QML tree (Linux/macOS: PySide6/Qt/qml, Windows: PySide6/qml)
    r"qml[/\\]"
    # Qt's own translations except the WebEngine locales and the Chinese Qt strings (app.py loads qtbase_zh_CN)
    r"|translations[/\\](?!qtwebengine_locales[/\\]|qtbase_zh_)"
    # unused Qt modules: libQt6X.so.6 / Qt6X.dll / QtX.framework / QtX.abi3.so / QtX.pyd / QtX.pyi
    r"|(?:lib)?Qt6?(?:" + _MODULES + r")"
    # plugins the app never loads
    r"|plugins[/\\](?:wayland\w*|egldeviceintegrations|qmltooling|position|generic|platforminputcontexts|sqldrivers"
    r"|multimedia|sensors|canbus|texttospeech|geoservices|designer|qmllint|scenegraph|renderers|sceneparsers"
    r"|assetimporters|renderplugins|geometryloaders|virtualkeyboard)"
    # Linux platform plugins other than xcb and offscreen
    r"|plugins[/\\]platforms[/\\]libq(?:eglfs|linuxfb|minimal|minimalegl|vkkhrdisplay|vnc|wayland[\w-]*)\.so"
    # the GTK3 theme (drags in cairo/pango/gdk-pixbuf while libgtk-3 itself is never bundled), CUPS printing (gnutls,
    # kerberos, avahi …), the PDF image format (needs the dropped QtPdf)
    r"|plugins[/\\](?:platformthemes[/\\]libqgtk3|printsupport[/\\]|imageformats[/\\]q?(?:lib)?qpdf)"
    # Python bindings the app never imports (their Qt libraries stay: WebEngineCore links against them)
    r"|PySide6[/\\]Qt(?:OpenGL|Positioning|DBus)\.(?:abi3\.so|pyd|pyi)$"
    r")"
)


def dropped(path: str) -> bool:
    """True when a bundled file (its destination path inside the bundle) is left out of the build."""
    return bool(DROP.search(path.replace("\\", "/")))


def prune_orphans(kept: list, gone: list, imports) -> tuple[list, list]:
    """Drop the libraries that were bundled only because a dropped binary needed them.

    ``kept``/``gone`` are PyInstaller TOC entries (dest, src, typecode); ``imports(src)`` returns the names of the
    libraries ``src`` links against. Only top-level libraries (PyInstaller's collected dependencies, dest without a
    folder) that a dropped binary references and no kept binary reaches (transitively) are removed, so libraries
    loaded with dlopen (NSS modules, for instance) are never touched. Returns (kept, removed)."""
    by_name = {Path(d.replace("\\", "/")).name: src for d, src, _ in kept}

    def closure(roots) -> set[str]:
        seen: set[str] = set()
        todo = list(roots)
        while todo:
            src = todo.pop()
            for name in imports(src):
                base = Path(name.replace("\\", "/")).name
                if base not in seen:
                    seen.add(base)
                    if base in by_name:
                        todo.append(by_name[base])
        return seen

    toplevel = {d for d, _, _ in kept if "/" not in d.replace("\\", "/")}
    candidates = closure(src for _, src, _ in gone) & toplevel
    if not candidates:
        return kept, []
    reached = closure(src for d, src, _ in kept if d not in candidates)
    orphans = candidates - reached
    return [e for e in kept if e[0] not in orphans], [e for e in kept if e[0] in orphans]


def source_datas(src: Path) -> list[tuple[str, str]]:
    """(source file, bundle folder) pairs for PyInstaller's ``datas``: everything under ``liyuan_desktop/resources``
    (prompts, web runtime, vendored JavaScript libraries, icons) except ``web/vendor/node_modules``, and the sample
    cards (``cards/``) installed as the package ``liyuan_desktop/sample_cards`` (as pyproject.toml does)."""
    out: list[tuple[str, str]] = []
    res = src / "liyuan_desktop" / "resources"
    for f in sorted(res.rglob("*")):
        rel = f.relative_to(src)
        if not f.is_file() or "node_modules" in rel.parts or "__pycache__" in rel.parts:
            continue
        if f.name in (".gitignore", "package.json", "package-lock.json"):
            continue
        out.append((str(f), str(rel.parent)))
    cards = src / "cards"
    for f in sorted(cards.rglob("*")):
        if f.is_file() and f.suffix.lower() in (".json", ".png", ".md"):
            dest = Path("liyuan_desktop", "sample_cards") / f.relative_to(cards).parent
            out.append((str(f), str(dest)))
    return out


# Issue 16: the X11 helper libraries Qt's xcb platform plugin links that a minimal desktop lacks (Debian's minimal
# GNOME/Xfce installs and server-turned-desktop images miss xcb-cursor, icccm, keysyms, image, render-util and
# xkbcommon-x11 first; the others come with them). The built app carries them all, so it starts without them; what
# every X11 desktop has (libxcb1, libGL/libEGL, libc) is declared in the .deb's Depends instead
# (packaging/linux/deb-control.in).
XCB_BUNDLE = ("libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-image.so.0",
              "libxcb-render-util.so.0", "libxkbcommon-x11.so.0", "libxkbcommon.so.0", "libxcb-util.so.1",
              "libxcb-randr.so.0", "libxcb-shm.so.0", "libxcb-sync.so.1", "libxcb-xfixes.so.0", "libxcb-render.so.0",
              "libxcb-shape.so.0", "libxcb-xkb.so.1", "libX11-xcb.so.1")


def missing_xcb(binary_names: list[str]) -> list[str]:
    """The :data:`XCB_BUNDLE` sonames not among ``binary_names`` (destination paths of the bundle's binaries;
    compared by file name)."""
    have = {Path(n).name for n in binary_names}
    return [s for s in XCB_BUNDLE if s not in have]


def system_library(soname: str) -> str | None:
    """The path of ``soname`` in the system's linker cache (``ldconfig -p``), or None."""
    import subprocess

    for ldconfig in ("/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"):
        try:
            out = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=20).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        for line in out.splitlines():
            parts = line.strip().split(" => ")
            if len(parts) == 2 and parts[0].split(" ")[0] == soname:
                return parts[1].strip()
        return None
    return None
