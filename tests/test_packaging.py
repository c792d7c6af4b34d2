"""Packaging (packaging/): what the slim PyInstaller build drops and bundles, the desktop entry, the icons, the
installer scripts. Fast: no PyInstaller run here (packaging/smoke.sh builds and tests the real thing)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "packaging"


def _slim():
    spec = importlib.util.spec_from_file_location("liyuan_packaging_slim", PKG / "slim.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


slim = _slim()


@pytest.mark.parametrize("path", [
    "PySide6/Qt/qml/QtQuick/Controls/libqtquickcontrols2plugin.so",
    "PySide6/Qt/lib/libQt6Quick3DRuntimeRender.so.6",
    "PySide6/Qt/lib/libQt6QuickControls2Impl.so.6",
    "PySide6/Qt/lib/libQt6Pdf.so.6",
    "PySide6/Qt/lib/libQt6Multimedia.so.6",
    "PySide6/Qt/lib/libQt6WlShellIntegration.so.6",
    "PySide6/Qt/translations/qtbase_de.qm",
    "PySide6/Qt/plugins/platforms/libqwayland-egl.so",
    "PySide6/Qt/plugins/platforms/libqeglfs.so",
    "PySide6/Qt/plugins/platformthemes/libqgtk3.so",
    "PySide6/Qt/plugins/printsupport/libcupsprintersupport.so",
    "PySide6/QtDataVisualization.abi3.so",
    "PySide6/QtOpenGL.abi3.so",
    r"PySide6\Qt6Quick3D.dll",                       # Windows layout
    r"PySide6\qml\QtQuick\Window\quickwindowplugin.dll",
    "PySide6/Qt/lib/QtPdf.framework/Versions/A/QtPdf",  # macOS layout
])
def test_slim_build_drops_qml_and_unused_qt(path):
    assert slim.dropped(path)


@pytest.mark.parametrize("path", [
    "PySide6/Qt/libexec/QtWebEngineProcess",
    r"PySide6\QtWebEngineProcess.exe",
    "PySide6/Qt/lib/QtWebEngineCore.framework/Helpers/QtWebEngineProcess.app/Contents/MacOS/QtWebEngineProcess",
    "PySide6/Qt/resources/qtwebengine_resources.pak",
    "PySide6/Qt/resources/icudtl.dat",
    "PySide6/Qt/resources/v8_context_snapshot.bin",
    "PySide6/Qt/translations/qtwebengine_locales/zh-CN.pak",
    "PySide6/Qt/translations/qtwebengine_locales/de.pak",
    "PySide6/QtCharts.abi3.so",                    # the ledger history's value chart (issue 33)
    "PySide6/Qt/lib/libQt6Charts.so.6",
    "PySide6/Qt/translations/qtbase_zh_CN.qm",       # ui/infra/qt_language.py loads it for Qt's own buttons in Chinese
    "PySide6/Qt/plugins/platforms/libqxcb.so",
    "PySide6/Qt/plugins/platforms/libqoffscreen.so",
    "PySide6/Qt/plugins/platformthemes/libqxdgdesktopportal.so",
    "PySide6/QtWebEngineWidgets.abi3.so",
    "PySide6/QtOpenGLWidgets.abi3.so",
    "liyuan_desktop/resources/web/conversation.js",
])
def test_slim_build_keeps_webengine_and_what_it_needs(path):
    assert not slim.dropped(path)


@pytest.mark.parametrize("name", slim.KEEP_QT)
def test_slim_keeps_every_library_webengine_links(name):
    for path in (f"PySide6/Qt/lib/libQt6{name}.so.6", rf"PySide6\Qt6{name}.dll",
                 f"PySide6/Qt/lib/Qt{name}.framework/Versions/A/Qt{name}"):
        assert not slim.dropped(path), path


@pytest.mark.skipif(not sys.platform.startswith("linux") or not shutil.which("ldd"), reason="ldd (Linux)")
def test_slim_drops_nothing_the_installed_webengine_links():
    """ldd over the installed PySide6: no library QtWebEngine and the widgets need may match DROP."""
    import PySide6

    base = Path(PySide6.__file__).parent
    needed: set[str] = set()
    for f in (base / "Qt/lib/libQt6WebEngineCore.so.6", base / "Qt/lib/libQt6WebEngineWidgets.so.6",
              base / "Qt/plugins/platforms/libqxcb.so", base / "Qt/libexec/QtWebEngineProcess",
              *base.glob("QtWebEngineWidgets*.so"), *base.glob("QtWebChannel*.so")):
        if f.exists():
            out = subprocess.run(["ldd", str(f)], capture_output=True, text=True).stdout
            needed |= {line.split()[0] for line in out.splitlines() if "libQt6" in line}
    assert needed, "found no Qt libraries to check"
    bad = sorted(n for n in needed if slim.dropped(f"PySide6/Qt/lib/{n}"))
    assert not bad, f"DROP would remove libraries QtWebEngine links against: {bad}"


def test_prune_orphans_only_removes_what_dropped_binaries_alone_needed():
    deps = {"/s/gtk3.so": ["libcairo.so.2", "libglib.so"], "/s/cairo": ["libpixman.so"], "/s/core.so": ["libglib.so"],
            "/s/glib": [], "/s/pixman": [], "/s/nss": []}
    kept = [("PySide6/core.so", "/s/core.so", "BINARY"), ("libcairo.so.2", "/s/cairo", "BINARY"),
            ("libglib.so", "/s/glib", "BINARY"), ("libpixman.so", "/s/pixman", "BINARY"),
            ("libsoftokn3.so", "/s/nss", "BINARY")]  # loaded with dlopen: nobody links it, it must stay
    gone = [("PySide6/plugins/gtk3.so", "/s/gtk3.so", "BINARY")]
    left, removed = slim.prune_orphans(kept, gone, lambda src: deps[src])
    assert sorted(e[0] for e in removed) == ["libcairo.so.2", "libpixman.so"]
    assert sorted(e[0] for e in left) == ["PySide6/core.so", "libglib.so", "libsoftokn3.so"]


def test_bundled_data_has_resources_and_sample_cards_but_no_node_modules():
    datas = slim.source_datas(ROOT)
    dests = {(Path(src).name, dest.replace("\\", "/")) for src, dest in datas}
    assert ("roleplay_system.md", "liyuan_desktop/resources/prompts") in dests
    assert ("conversation.html", "liyuan_desktop/resources/web") in dests
    assert ("frame_libs.js", "liyuan_desktop/resources/web/vendor/lib") in dests
    assert ("liyuan-256.png", "liyuan_desktop/resources/icons") in dests
    assert ("default_Qingwu.json", "liyuan_desktop/sample_cards/青梧") in dests
    assert ("replay.json", "liyuan_desktop/sample_cards/青梧") in dests
    assert not [s for s, _ in datas if "node_modules" in Path(s).parts]


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_icons_exist_in_the_hicolor_sizes():
    icons = ROOT / "liyuan_desktop" / "resources" / "icons"
    assert (icons / "liyuan.svg").read_text(encoding="utf-8").lstrip().startswith("<?xml")
    for n in (16, 32, 48, 64, 128, 256, 512):
        assert _png_size(icons / f"liyuan-{n}.png") == (n, n)


def _render_desktop(exec_line: str, tryexec: str) -> str:
    text = (PKG / "linux" / "liyuan.desktop.in").read_text(encoding="utf-8")
    return text.replace("@EXEC@", exec_line).replace("@TRYEXEC@", tryexec)


def test_desktop_entry_fields():
    text = _render_desktop("/opt/liyuan/liyuan", "/opt/liyuan/liyuan")
    lines = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    assert lines["Type"] == "Application" and lines["Icon"] == "liyuan" and lines["Terminal"] == "false"
    assert lines["Exec"] == "/opt/liyuan/liyuan" and lines["Name[zh_CN]"] == "梨园"
    assert lines["StartupWMClass"] == "Liyuan"  # app.py: applicationName "Liyuan" is the X11 WM_CLASS class


@pytest.mark.skipif(not shutil.which("desktop-file-validate"), reason="desktop-file-validate not installed")
@pytest.mark.parametrize("exec_line,tryexec", [("/opt/liyuan/liyuan", "/opt/liyuan/liyuan"),
                                               ('"/home/a b/.local/opt/liyuan/liyuan"',
                                                "/home/a b/.local/opt/liyuan/liyuan")])
def test_desktop_entry_validates(tmp_path, exec_line, tryexec):
    f = tmp_path / "liyuan.desktop"
    f.write_text(_render_desktop(exec_line, tryexec), encoding="utf-8")
    p = subprocess.run(["desktop-file-validate", str(f)], capture_output=True, text=True)
    assert p.returncode == 0 and not p.stdout.strip(), p.stdout + p.stderr


def test_scripts_parse_and_build_info_is_never_in_the_source_tree():
    for script in ("build.sh", "smoke.sh"):
        subprocess.run(["bash", "-n", str(PKG / script)], check=True)
    for script in ("install.sh", "uninstall.sh", "deb-postinst", "deb-postrm"):
        subprocess.run(["sh", "-n", str(PKG / "linux" / script)], check=True)
    assert not (ROOT / "liyuan_desktop" / "_build_info.py").exists(), "build.sh writes it into the staged copy only"


def test_every_package_is_in_pyproject():
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]["packages"])
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "liyuan_desktop").rglob("__init__.py")
               if "__pycache__" not in p.parts}
    assert on_disk | {"liyuan_desktop.sample_cards"} == listed, (
        f"missing from pyproject [tool.setuptools] packages: {sorted(on_disk - listed)}; "
        f"listed but gone: {sorted(listed - on_disk - {'liyuan_desktop.sample_cards'})}")


def test_data_files_live_under_resources():
    """pyproject's package-data and the PyInstaller spec (packaging/slim.py source_datas) carry data files from
    ``liyuan_desktop/resources`` only: a runtime file kept beside the code (a .js, .json, .md …) would be missing from
    the wheel and the built app."""
    pkg = ROOT / "liyuan_desktop"
    stray = [str(p.relative_to(pkg)) for p in pkg.rglob("*")
             if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
             and p.relative_to(pkg).parts[0] != "resources"]
    assert stray == [], stray


# --- issue 16: the xcb helpers the built app carries, the Chinese fallback font ------------------------------------

def test_xcb_bundle_lists_what_minimal_desktops_lack():
    for soname in ("libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-image.so.0",
                   "libxcb-render-util.so.0", "libxkbcommon-x11.so.0"):
        assert soname in slim.XCB_BUNDLE
    assert slim.missing_xcb([f"PySide6/Qt/lib/{n}" for n in slim.XCB_BUNDLE]) == []
    assert slim.missing_xcb(["libxcb-icccm.so.4"])[0] == "libxcb-cursor.so.0"


@pytest.mark.skipif(not sys.platform.startswith("linux") or not shutil.which("ldd"), reason="ldd (Linux)")
def test_xcb_bundle_covers_what_the_installed_plugin_links_beyond_the_deb_depends():
    """Every library libqxcb.so links outside Qt is either carried by the app (XCB_BUNDLE) or a Depends of the .deb
    (by its Debian package name)."""
    from liyuan_desktop import platform_check as pc

    pdir = pc.plugins_dir()
    needed = pc.ldd_resolver(pdir / "libqxcb.so")
    control = (ROOT / "packaging" / "linux" / "deb-control.in").read_text("utf-8")
    depends = next(ln for ln in control.splitlines() if ln.startswith("Depends:"))
    for soname, path in needed.items():
        if path is None or "PySide6" in path or soname.startswith(("libc.", "libm.", "libstdc++", "libgcc_s",
                                                                   "libpthread", "libdl.", "librt.")):
            continue
        if soname in slim.XCB_BUNDLE:
            continue
        pkg = pc.PACKAGES["apt"].get(soname)
        if pkg is None or pkg in depends:
            continue
        # what the xcb plugin links that is neither bundled nor declared must come with a declared package
        assert soname in ("libglib-2.0.so.0", "libgthread-2.0.so.0", "libfontconfig.so.1", "libfreetype.so.6",
                          "libdbus-1.so.3", "libX11.so.6", "libxkbcommon.so.0", "libz.so.1", "libzstd.so.1",
                          "libpng16.so.16", "libexpat.so.1", "libbrotlidec.so.1", "libpcre2-8.so.0", "libXau.so.6",
                          "libXdmcp.so.6", "libGLX.so.0", "libGLdispatch.so.0"), soname


def test_cjk_hint_names_the_package_per_distro():
    from liyuan_desktop.ui.infra import cjk_font, i18n

    i18n.set_language("zh")
    assert cjk_font.cjk_hint(["Noto Sans CJK SC"], "apt") is None
    hint = cjk_font.cjk_hint([], "apt")
    assert "fonts-noto-cjk" in hint and "sudo apt install fonts-noto-cjk" in hint and "\n" not in hint
    assert "google-noto-sans-cjk-fonts" in cjk_font.cjk_hint([], "dnf")
    assert "noto-fonts-cjk" in cjk_font.cjk_hint([], "pacman")
    # the system's own WenQuanYi counts; the bundled copy does not
    assert cjk_font.cjk_hint(["WenQuanYi Micro Hei"], "apt", bundled_in_use=False) is None
    bundled = cjk_font.cjk_hint(["WenQuanYi Micro Hei"], "apt", bundled_in_use=True)
    assert "内置" in bundled and "fonts-noto-cjk" in bundled


def test_prepare_fontconfig_adds_the_bundled_font_only_without_a_system_one(tmp_path, monkeypatch):
    from liyuan_desktop import runtime  # the fonts' home (ui/infra/cjk_font only hints)

    fonts = tmp_path / "fonts"
    fonts.mkdir()
    (fonts / "wqy-microhei.ttc").write_bytes(b"\0")
    emoji = tmp_path / "emoji"
    emoji.mkdir()
    (emoji / "OpenMoji-color-glyf_colr0.ttf").write_bytes(b"\0")
    monkeypatch.setattr(runtime, "bundled_font_dir", lambda: fonts)
    monkeypatch.setattr(runtime, "bundled_emoji_dir", lambda: emoji)
    monkeypatch.setattr(runtime, "_bundled_cjk", False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("FONTCONFIG_FILE", raising=False)
    assert runtime.prepare_fontconfig(lambda: True, lambda: True) is None and "FONTCONFIG_FILE" not in os.environ
    conf = runtime.prepare_fontconfig(lambda: False, lambda: True)
    assert conf is not None and os.environ["FONTCONFIG_FILE"] == str(conf)
    text = conf.read_text("utf-8")
    assert "/etc/fonts/fonts.conf" in text and f"<dir>{fonts}</dir>" in text and str(emoji) not in text
    assert runtime.bundled_cjk_in_use()
    # a system with Chinese but no colour emoji: only the emoji folder, and the Chinese hint stays the system's
    monkeypatch.delenv("FONTCONFIG_FILE")
    monkeypatch.setattr(runtime, "_bundled_cjk", False)
    conf = runtime.prepare_fontconfig(lambda: True, lambda: False, cache=tmp_path / "c2")
    text = conf.read_text("utf-8")
    assert conf.parent == tmp_path / "c2" and f"<dir>{emoji}</dir>" in text and str(fonts) not in text
    assert not runtime.bundled_cjk_in_use()
    # a FONTCONFIG_FILE the user set is left alone
    assert runtime.prepare_fontconfig(lambda: False, lambda: False) is None


@pytest.mark.skipif(not shutil.which("fc-list"), reason="fontconfig's fc-list needed")
def test_the_written_fontconfig_file_makes_the_bundled_font_visible(tmp_path, monkeypatch):
    """Real fontconfig and the fonts the package ships: with only the bundled folders (the system's config stubbed
    out by an empty include), fc-list finds a Chinese font and a colour-emoji font through the config
    prepare_fontconfig writes."""
    from liyuan_desktop import runtime  # the fonts' home (ui/infra/cjk_font only hints)

    assert runtime.bundled_font_dir() is not None and runtime.bundled_emoji_dir() is not None
    monkeypatch.delenv("FONTCONFIG_FILE", raising=False)
    conf = runtime.prepare_fontconfig(lambda: False, lambda: False, cache=tmp_path / "cache")
    # a copy without the system folders: only the bundled fonts can answer
    only = tmp_path / "only.conf"
    only.write_text(conf.read_text("utf-8").replace("/etc/fonts/fonts.conf", str(tmp_path / "none.conf"))
                    .replace("<dir>/usr/share/fonts</dir>", ""), "utf-8")
    env = {**os.environ, "FONTCONFIG_FILE": str(only)}
    out = subprocess.run(["fc-list", ":lang=zh", "family"], env=env, capture_output=True, text=True, timeout=60).stdout
    assert "WenQuanYi" in out
    out = subprocess.run(["fc-list", ":color=true", "family"], env=env, capture_output=True, text=True,
                         timeout=60).stdout
    assert "OpenMoji" in out


def test_the_fallback_fonts_reach_the_bundle_once_from_the_package():
    """Issue 24 §1: the fonts are the package's own (resources/fonts, licences beside them), bundled with the rest of
    resources exactly once; build.sh copies no font from the build machine."""
    datas = slim.source_datas(ROOT)
    names = [Path(f).name for f, _ in datas if "/fonts/" in f.replace("\\", "/")]
    for font in ("wqy-microhei.ttc", "wqy-microhei-LICENSE.txt", "OpenMoji-color-glyf_colr0.ttf",
                 "OpenMoji-LICENSE.txt"):
        assert names.count(font) == 1, (font, names)
    build = (PKG / "build.sh").read_text(encoding="utf-8")
    assert "/usr/share/fonts" not in build and "fonts-wqy" not in build


@pytest.mark.parametrize("bpp,stride_px", [(24, 4), (32, 4), (24, 3)])
def test_xwd2png_reads_xvfb_dumps(bpp, stride_px):
    """packaging/xwd2png.py (smoke.sh's screenshot converter): a 2x2 XWD of known colours → the same RGB in the PNG.
    Xvfb's depth-24 screens give 24 bits per pixel in rows padded to 4 bytes per pixel."""
    import zlib

    spec = importlib.util.spec_from_file_location("xwd2png", ROOT / "packaging" / "xwd2png.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    w, h = 2, 2
    name = b"root\0"
    header_size = 100 + len(name)
    bpl = w * stride_px
    fields = [header_size, 7, 2, 24, w, h, 0, 0, 32, 0, 32, bpp, bpl, 5, 0xFF0000, 0xFF00, 0xFF, 8, 256, 0, w, h,
              0, 0, 0]
    colours = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (10, 20, 30)]
    rows = b""
    for y in range(h):
        row = b""
        for x in range(w):
            r, g, b = colours[y * w + x]
            row += ((r << 16) | (g << 8) | b).to_bytes(bpp // 8, "little")
        rows += row.ljust(bpl, b"\0")
    png = mod.xwd_to_png(struct.pack(">25I", *fields) + name + rows)
    assert png.startswith(b"\x89PNG")
    idat = png[png.index(b"IDAT") + 4: png.index(b"IEND") - 8]
    raw = zlib.decompress(idat)
    got = [tuple(raw[y * (1 + 3 * w) + 1 + 3 * x: y * (1 + 3 * w) + 4 + 3 * x]) for y in range(h) for x in range(w)]
    assert got == colours
