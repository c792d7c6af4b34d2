"""Before Qt loads: can the Qt platform plugin open a window here? (issue 16 §1)

Qt's xcb plugin (``libqxcb.so``) links a dozen X11 helper libraries that a minimal desktop lacks (``libxcb-cursor``,
``libxcb-icccm``, ``libxcb-keysyms``…). When one is missing Qt aborts (rc 134) naming only the first, and a menu-launched
app just vanishes. This module asks the dynamic linker first — ``ldd`` of the plugin, of ``libQt6XcbQpa.so.6``
(``libqwayland.so`` in a Wayland session) and of ``libQt6WebEngineCore.so.6`` (the transcript's web view: NSS, NSPR,
ALSA, libXcomposite… — a minimal Debian chroot lacked those too) — and, when anything is "not found", names every missing library with ONE
install command for this distribution (``/etc/os-release`` ``ID``/``ID_LIKE`` → apt, dnf, pacman or zypper, with each
distribution's package names), shows it in a dialog or notification when there is no terminal, logs it and exits 3.

No Qt and nothing from ``core`` here (import-linter: the layer below ``runtime``): it must run before any Qt import,
in a few milliseconds. ``ldd`` costs ~40 ms, so a passing result is cached (per PySide6 folder and the plugin's mtime)
in the user cache folder as the list of resolved library paths; a later start only checks that those files still
exist. Failures are never cached. Skipped for the offscreen, minimal, vnc… platforms and off Linux.

Testing hooks: :func:`check` takes a ``resolver`` (plugin path → {soname: resolved path or None});
``LIYUAN_TEST_MISSING_LIBS=libxcb-cursor.so.0,…`` makes the real entry point see those libraries as missing.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import platformdirs

log = logging.getLogger("liyuan")

EXIT_MISSING_LIBS = 3
"""Exit code of the window command when the platform plugin's libraries are missing."""

Resolver = Callable[[Path], dict[str, Optional[str]]]
"""A library resolver: the shared object to inspect → {soname it needs: resolved path, or None when not found}."""

CHECKED_PLATFORMS = ("xcb", "wayland")
"""Platform plugins this module checks; every other QT_QPA_PLATFORM (offscreen, minimal, vnc, eglfs…) is skipped."""

#: soname → package, per package manager. Debian/Ubuntu names from packages.debian.org (bookworm), Fedora's from
#: the xcb-util* split (xcb-util-wm carries icccm), Arch's from archlinux.org/packages, openSUSE's shared-library
#: packages. A library not listed here is named alone (the message still lists it).
PACKAGES: dict[str, dict[str, str]] = {
    "apt": {
        "libxcb-cursor.so.0": "libxcb-cursor0", "libxcb-icccm.so.4": "libxcb-icccm4",
        "libxcb-keysyms.so.1": "libxcb-keysyms1", "libxcb-image.so.0": "libxcb-image0",
        "libxcb-render-util.so.0": "libxcb-render-util0", "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
        "libxkbcommon.so.0": "libxkbcommon0", "libxcb-util.so.1": "libxcb-util1", "libxcb-randr.so.0": "libxcb-randr0",
        "libxcb-shm.so.0": "libxcb-shm0", "libxcb-sync.so.1": "libxcb-sync1", "libxcb-xfixes.so.0": "libxcb-xfixes0",
        "libxcb-render.so.0": "libxcb-render0", "libxcb-shape.so.0": "libxcb-shape0", "libxcb-xkb.so.1": "libxcb-xkb1",
        "libxcb.so.1": "libxcb1", "libX11-xcb.so.1": "libx11-xcb1", "libX11.so.6": "libx11-6", "libGL.so.1": "libgl1",
        "libEGL.so.1": "libegl1", "libfontconfig.so.1": "libfontconfig1", "libfreetype.so.6": "libfreetype6",
        "libglib-2.0.so.0": "libglib2.0-0", "libgthread-2.0.so.0": "libglib2.0-0", "libdbus-1.so.3": "libdbus-1-3",
        "libwayland-client.so.0": "libwayland-client0", "libwayland-cursor.so.0": "libwayland-cursor0",
        "libwayland-egl.so.1": "libwayland-egl1",
    },
    "dnf": {
        "libxcb-cursor.so.0": "xcb-util-cursor", "libxcb-icccm.so.4": "xcb-util-wm",
        "libxcb-keysyms.so.1": "xcb-util-keysyms", "libxcb-image.so.0": "xcb-util-image",
        "libxcb-render-util.so.0": "xcb-util-renderutil", "libxkbcommon-x11.so.0": "libxkbcommon-x11",
        "libxkbcommon.so.0": "libxkbcommon", "libxcb-util.so.1": "xcb-util", "libxcb-randr.so.0": "libxcb",
        "libxcb-shm.so.0": "libxcb", "libxcb-sync.so.1": "libxcb", "libxcb-xfixes.so.0": "libxcb",
        "libxcb-render.so.0": "libxcb", "libxcb-shape.so.0": "libxcb", "libxcb-xkb.so.1": "libxcb",
        "libxcb.so.1": "libxcb", "libX11-xcb.so.1": "libX11-xcb", "libX11.so.6": "libX11",
        "libGL.so.1": "libglvnd-glx", "libEGL.so.1": "libglvnd-egl", "libfontconfig.so.1": "fontconfig",
        "libfreetype.so.6": "freetype", "libglib-2.0.so.0": "glib2", "libgthread-2.0.so.0": "glib2",
        "libdbus-1.so.3": "dbus-libs", "libwayland-client.so.0": "libwayland-client",
        "libwayland-cursor.so.0": "libwayland-cursor", "libwayland-egl.so.1": "libwayland-egl",
    },
    "pacman": {
        "libxcb-cursor.so.0": "xcb-util-cursor", "libxcb-icccm.so.4": "xcb-util-wm",
        "libxcb-keysyms.so.1": "xcb-util-keysyms", "libxcb-image.so.0": "xcb-util-image",
        "libxcb-render-util.so.0": "xcb-util-renderutil", "libxkbcommon-x11.so.0": "libxkbcommon-x11",
        "libxkbcommon.so.0": "libxkbcommon", "libxcb-util.so.1": "xcb-util", "libxcb-randr.so.0": "libxcb",
        "libxcb-shm.so.0": "libxcb", "libxcb-sync.so.1": "libxcb", "libxcb-xfixes.so.0": "libxcb",
        "libxcb-render.so.0": "libxcb", "libxcb-shape.so.0": "libxcb", "libxcb-xkb.so.1": "libxcb",
        "libxcb.so.1": "libxcb", "libX11-xcb.so.1": "libx11", "libX11.so.6": "libx11", "libGL.so.1": "libglvnd",
        "libEGL.so.1": "libglvnd", "libfontconfig.so.1": "fontconfig", "libfreetype.so.6": "freetype2",
        "libglib-2.0.so.0": "glib2", "libgthread-2.0.so.0": "glib2", "libdbus-1.so.3": "dbus",
        "libwayland-client.so.0": "wayland", "libwayland-cursor.so.0": "wayland", "libwayland-egl.so.1": "wayland",
    },
    "zypper": {
        "libxcb-cursor.so.0": "libxcb-cursor0", "libxcb-icccm.so.4": "libxcb-icccm4",
        "libxcb-keysyms.so.1": "libxcb-keysyms1", "libxcb-image.so.0": "libxcb-image0",
        "libxcb-render-util.so.0": "libxcb-render-util0", "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
        "libxkbcommon.so.0": "libxkbcommon0", "libxcb-util.so.1": "libxcb-util1", "libxcb-randr.so.0": "libxcb-randr0",
        "libxcb-shm.so.0": "libxcb-shm0", "libxcb-sync.so.1": "libxcb-sync1", "libxcb-xfixes.so.0": "libxcb-xfixes0",
        "libxcb-render.so.0": "libxcb-render0", "libxcb-shape.so.0": "libxcb-shape0", "libxcb-xkb.so.1": "libxcb-xkb1",
        "libxcb.so.1": "libxcb1", "libX11-xcb.so.1": "libX11-xcb1", "libX11.so.6": "libX11-6", "libGL.so.1": "libGL1",
        "libEGL.so.1": "libEGL1", "libfontconfig.so.1": "libfontconfig1", "libfreetype.so.6": "libfreetype6",
        "libglib-2.0.so.0": "libglib-2_0-0", "libgthread-2.0.so.0": "libgthread-2_0-0",
        "libdbus-1.so.3": "libdbus-1-3", "libwayland-client.so.0": "libwayland-client0",
        "libwayland-cursor.so.0": "libwayland-cursor0", "libwayland-egl.so.1": "libwayland-egl1",
    },
}

#: the libraries QtWebEngine (the transcript and the status-bar frames) links, same tables
PACKAGES["apt"].update({
    "libnss3.so": "libnss3", "libnssutil3.so": "libnss3", "libsmime3.so": "libnss3",
    "libnspr4.so": "libnspr4", "libXcomposite.so.1": "libxcomposite1", "libXdamage.so.1": "libxdamage1",
    "libXrandr.so.2": "libxrandr2", "libXtst.so.6": "libxtst6", "libXext.so.6": "libxext6",
    "libXfixes.so.3": "libxfixes3", "libXrender.so.1": "libxrender1", "libasound.so.2": "libasound2",
    "libxkbfile.so.1": "libxkbfile1", "libgssapi_krb5.so.2": "libgssapi-krb5-2", "libxshmfence.so.1": "libxshmfence1",
    "libgbm.so.1": "libgbm1", "libdrm.so.2": "libdrm2", "libxcb-dri3.so.0": "libxcb-dri3-0",
    "libexpat.so.1": "libexpat1", "libXau.so.6": "libxau6", "libXdmcp.so.6": "libxdmcp6",
    "libwayland-server.so.0": "libwayland-server0",
})
PACKAGES["dnf"].update({
    "libnss3.so": "nss", "libnssutil3.so": "nss-util", "libsmime3.so": "nss",
    "libnspr4.so": "nspr", "libXcomposite.so.1": "libXcomposite", "libXdamage.so.1": "libXdamage",
    "libXrandr.so.2": "libXrandr", "libXtst.so.6": "libXtst", "libXext.so.6": "libXext",
    "libXfixes.so.3": "libXfixes", "libXrender.so.1": "libXrender", "libasound.so.2": "alsa-lib",
    "libxkbfile.so.1": "libxkbfile", "libgssapi_krb5.so.2": "krb5-libs", "libxshmfence.so.1": "libxshmfence",
    "libgbm.so.1": "mesa-libgbm", "libdrm.so.2": "libdrm", "libxcb-dri3.so.0": "libxcb",
    "libexpat.so.1": "expat", "libXau.so.6": "libXau", "libXdmcp.so.6": "libXdmcp",
    "libwayland-server.so.0": "libwayland-server",
})
PACKAGES["pacman"].update({
    "libnss3.so": "nss", "libnssutil3.so": "nss", "libsmime3.so": "nss",
    "libnspr4.so": "nspr", "libXcomposite.so.1": "libxcomposite", "libXdamage.so.1": "libxdamage",
    "libXrandr.so.2": "libxrandr", "libXtst.so.6": "libxtst", "libXext.so.6": "libxext",
    "libXfixes.so.3": "libxfixes", "libXrender.so.1": "libxrender", "libasound.so.2": "alsa-lib",
    "libxkbfile.so.1": "libxkbfile", "libgssapi_krb5.so.2": "krb5", "libxshmfence.so.1": "libxshmfence",
    "libgbm.so.1": "mesa", "libdrm.so.2": "libdrm", "libxcb-dri3.so.0": "libxcb",
    "libexpat.so.1": "expat", "libXau.so.6": "libxau", "libXdmcp.so.6": "libxdmcp",
    "libwayland-server.so.0": "wayland",
})
PACKAGES["zypper"].update({
    "libnss3.so": "mozilla-nss", "libnssutil3.so": "mozilla-nss", "libsmime3.so": "mozilla-nss",
    "libnspr4.so": "mozilla-nspr", "libXcomposite.so.1": "libXcomposite1", "libXdamage.so.1": "libXdamage1",
    "libXrandr.so.2": "libXrandr2", "libXtst.so.6": "libXtst6", "libXext.so.6": "libXext6",
    "libXfixes.so.3": "libXfixes3", "libXrender.so.1": "libXrender1", "libasound.so.2": "libasound2",
    "libxkbfile.so.1": "libxkbfile1", "libgssapi_krb5.so.2": "krb5", "libxshmfence.so.1": "libxshmfence1",
    "libgbm.so.1": "libgbm1", "libdrm.so.2": "libdrm2", "libxcb-dri3.so.0": "libxcb-dri3-0",
    "libexpat.so.1": "libexpat1", "libXau.so.6": "libXau6", "libXdmcp.so.6": "libXdmcp6",
    "libwayland-server.so.0": "libwayland-server0",
})

INSTALL_PREFIX = {"apt": "sudo apt install", "dnf": "sudo dnf install", "pacman": "sudo pacman -S --needed",
                  "zypper": "sudo zypper install"}

#: os-release ID / ID_LIKE words → package manager
_DISTRO_MANAGER = {"debian": "apt", "ubuntu": "apt", "linuxmint": "apt", "pop": "apt", "elementary": "apt",
                   "raspbian": "apt", "deepin": "apt", "uos": "apt", "kali": "apt", "fedora": "dnf", "rhel": "dnf",
                   "centos": "dnf", "rocky": "dnf", "almalinux": "dnf", "openeuler": "dnf", "anolis": "dnf",
                   "arch": "pacman", "manjaro": "pacman", "endeavouros": "pacman", "opensuse": "zypper",
                   "suse": "zypper", "sles": "zypper", "opensuse-leap": "zypper", "opensuse-tumbleweed": "zypper"}

_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found\s*$")
_RESOLVED = re.compile(r"^\s*(\S+)\s+=>\s+(/\S+)\s+\(0x[0-9a-fA-F]+\)\s*$")


@dataclass
class CheckResult:
    """What :func:`check` found.

    platforms: the plugins checked, in Qt's order of preference ("wayland", "xcb"), empty when the check was skipped.
    missing: sonames no checked plugin could resolve (union over the plugins that failed), sorted.
    skipped: why nothing was checked ("offscreen platform", "not Linux", "no PySide6 plugin folder"…), or None.
    """

    platforms: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    skipped: Optional[str] = None

    @property
    def ok(self) -> bool:
        """True when the window can start (nothing missing, or the check was skipped)."""
        return not self.missing


def parse_ldd(text: str) -> dict[str, Optional[str]]:
    """``ldd`` output → {soname: resolved path, or None for "not found"}. The vdso and the loader line (no ``=>``)
    are left out."""
    out: dict[str, Optional[str]] = {}
    for line in text.splitlines():
        m = _NOT_FOUND.match(line)
        if m:
            out[m.group(1)] = None
            continue
        m = _RESOLVED.match(line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def plugins_dir() -> Optional[Path]:
    """The installed PySide6's ``Qt/plugins/platforms`` folder, found without importing PySide6 (importing it would
    load Qt): next to the ``PySide6`` package on ``sys.path`` (in the built app, under ``sys._MEIPASS``)."""
    roots = [Path(getattr(sys, "_MEIPASS"))] if getattr(sys, "frozen", False) and hasattr(sys, "_MEIPASS") else []
    roots += [Path(p) for p in sys.path if p]
    for root in roots:
        d = root / "PySide6" / "Qt" / "plugins" / "platforms"
        if d.is_dir():
            return d
    return None


def _ldd_env() -> dict[str, str]:
    """The environment for ``ldd``: in the built app the bundled libraries' folder is searched first (the bootloader
    makes the app's own libraries visible the same way)."""
    env = dict(os.environ)
    if getattr(sys, "frozen", False) and hasattr(sys, "_MEIPASS"):
        env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (sys._MEIPASS, env.get("LD_LIBRARY_PATH", "")) if p)
    env["LC_ALL"] = "C"
    return env


def ldd_resolver(lib: Path) -> dict[str, Optional[str]]:
    """The real resolver: ``ldd LIB`` parsed by :func:`parse_ldd`. An ``ldd`` that is missing or fails yields {}
    (nothing known missing: the check must never stop a start it cannot judge)."""
    ldd = shutil.which("ldd") or ("/usr/bin/ldd" if os.path.exists("/usr/bin/ldd") else None)
    if ldd is None:
        return {}
    try:
        proc = subprocess.run([ldd, str(lib)], capture_output=True, text=True, timeout=10, env=_ldd_env(),
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return {}
    return parse_ldd(proc.stdout)


def candidate_platforms(environ: Optional[dict[str, str]] = None) -> tuple[list[str], Optional[str]]:
    """The platform plugins Qt would try here, and why the check is skipped (or None).

    ``QT_QPA_PLATFORM`` names them (``wayland;xcb``; a ``:options`` tail ignored); when it names anything other than
    xcb/wayland (offscreen, minimal, vnc…) the check is skipped. Unset: Qt 6 prefers wayland in a Wayland session
    (``WAYLAND_DISPLAY`` or ``XDG_SESSION_TYPE=wayland``) and falls back to xcb where an X display (XWayland) exists."""
    env = os.environ if environ is None else environ
    explicit = env.get("QT_QPA_PLATFORM", "").strip()
    if explicit:
        names = [n.split(":", 1)[0].strip() for n in explicit.split(";") if n.strip()]
        if not names or any(n not in CHECKED_PLATFORMS for n in names):
            return [], f"platform {explicit}"
        return names, None
    names = []
    if env.get("WAYLAND_DISPLAY") or env.get("XDG_SESSION_TYPE") == "wayland":
        names.append("wayland")
    if env.get("DISPLAY") or not names:
        names.append("xcb")
    return names, None


def _plugin_files(platform: str, pdir: Path) -> list[Path]:
    """The shared objects whose links decide whether ``platform`` loads: the plugin and its Qt integration
    library (``libQt6XcbQpa.so*`` / ``libQt6WaylandClient.so*`` in ``Qt/lib``)."""
    plugin = pdir / ("libqxcb.so" if platform == "xcb" else "libqwayland.so")
    if not plugin.exists() and platform == "wayland":
        plugin = pdir / "libqwayland-generic.so"
    if not plugin.exists():
        return []
    files = [plugin]
    libdir = pdir.parent.parent / "lib"
    if not libdir.is_dir():  # the built app keeps Qt's libraries beside the plugins folder's grandparent
        libdir = pdir.parent.parent
    stem = "libQt6XcbQpa.so" if platform == "xcb" else "libQt6WaylandClient.so"
    for name in (stem, "libQt6WebEngineCore.so"):  # the window's web view needs its libraries as much
        found = sorted(libdir.glob(name + "*"))
        if found:
            files.append(found[0])
    return files


def _cache_file() -> Path:
    return Path(platformdirs.user_cache_dir("liyuan", appauthor=False)) / "platform-check.json"


def _cache_key(files: list[Path]) -> str:
    parts = []
    for f in files:
        try:
            parts.append(f"{f}:{f.stat().st_mtime_ns}")
        except OSError:
            parts.append(f"{f}:?")
    return "|".join(parts)


def _cached_ok(key: str) -> bool:
    """A passing result was cached for ``key`` and every library it resolved to is still on disk."""
    try:
        data = json.loads(_cache_file().read_text(encoding="utf-8"))
        entry = data.get(key)
        return isinstance(entry, list) and all(os.path.exists(p) for p in entry)
    except (OSError, ValueError, AttributeError):
        return False


def _remember_ok(key: str, paths: list[str]) -> None:
    try:
        f = _cache_file()
        f.parent.mkdir(parents=True, exist_ok=True)
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                data = {}
        except (OSError, ValueError):
            data = {}
        data = {k: v for k, v in data.items() if k.split(":", 1)[0] != key.split(":", 1)[0]}  # old mtimes out
        data[key] = sorted(set(paths))
        tmp = f.with_name(f".{f.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, f)
    except OSError:
        pass  # no cache: the next start runs ldd again


def _test_missing() -> set[str]:
    return {s.strip() for s in os.environ.get("LIYUAN_TEST_MISSING_LIBS", "").split(",") if s.strip()}


def check(resolver: Optional[Resolver] = None, environ: Optional[dict[str, str]] = None,
          pdir: Optional[Path] = None) -> CheckResult:
    """Whether the platform plugin Qt would use here finds all its system libraries.

    ``resolver`` (default :func:`ldd_resolver`, cached when it passes) maps each plugin file to its needed libraries;
    ``environ`` (default ``os.environ``) decides the platforms (:func:`candidate_platforms`); ``pdir`` the plugin
    folder (default :func:`plugins_dir`). Sonames named in ``LIYUAN_TEST_MISSING_LIBS`` count as missing. The result
    is ok when any candidate platform resolves everything; otherwise ``missing`` is the union of what the candidates
    lack. Never raises."""
    if not sys.platform.startswith("linux"):
        return CheckResult(skipped="not Linux")
    names, skipped = candidate_platforms(environ)
    if skipped:
        return CheckResult(skipped=skipped)
    pdir = pdir or plugins_dir()
    if pdir is None:
        return CheckResult(skipped="no PySide6 plugin folder")
    forced = _test_missing()
    use_cache = resolver is None and not forced
    resolve = resolver or ldd_resolver
    missing: set[str] = set()
    checked: list[str] = []
    for name in names:
        files = _plugin_files(name, pdir)
        if not files:
            continue
        checked.append(name)
        key = name + ":" + _cache_key(files)
        if use_cache and _cached_ok(key):
            return CheckResult(platforms=checked)
        lacking: set[str] = set()
        resolved: list[str] = []
        for f in files:
            for soname, path in resolve(f).items():
                if path is None or soname in forced:
                    lacking.add(soname)
                else:
                    resolved.append(path)
        if not lacking:
            if use_cache:
                _remember_ok(key, resolved)
            return CheckResult(platforms=checked)
        missing |= lacking
    if not checked:
        return CheckResult(skipped="no platform plugin file")
    return CheckResult(platforms=checked, missing=sorted(missing))


def package_manager(os_release: Optional[str] = None) -> Optional[str]:
    """The package manager of this distribution from ``/etc/os-release`` (text given, or read): ``ID`` first, then
    each word of ``ID_LIKE``; "apt", "dnf", "pacman", "zypper" or None when unknown."""
    if os_release is None:
        for p in ("/etc/os-release", "/usr/lib/os-release"):
            try:
                os_release = Path(p).read_text(encoding="utf-8", errors="replace")
                break
            except OSError:
                continue
        else:
            return None
    fields: dict[str, str] = {}
    for line in os_release.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            fields[k.strip()] = v.strip().strip('"').strip("'").lower()
    words = [fields.get("ID", "")] + fields.get("ID_LIKE", "").split()
    for w in words:
        if w in _DISTRO_MANAGER:
            return _DISTRO_MANAGER[w]
        if w.startswith("opensuse"):
            return "zypper"
    return None


def install_command(missing: list[str], manager: Optional[str]) -> Optional[str]:
    """The one command that installs the packages providing ``missing`` with ``manager``, package names de-duplicated
    in order; None when the manager is unknown or no missing library has a known package."""
    if manager not in PACKAGES:
        return None
    table = PACKAGES[manager]
    pkgs: list[str] = []
    for soname in missing:
        pkg = table.get(soname)
        if pkg and pkg not in pkgs:
            pkgs.append(pkg)
    return f"{INSTALL_PREFIX[manager]} {' '.join(pkgs)}" if pkgs else None


def message(result: CheckResult, manager: Optional[str], logfile: Optional[Path] = None) -> str:
    """The text shown to the user (Chinese, then English): every missing library, the install command, the log."""
    plat = " / ".join(result.platforms) or "xcb"
    cmd = install_command(result.missing, manager)
    lines = [f"梨园无法打开窗口：Qt 图形界面（{plat} 平台插件与网页引擎）缺少以下系统库 / "
             f"Liyuan cannot open its window: Qt ({plat} platform plugin and web engine) needs these missing system "
             "libraries:"]
    lines += [f"  {s}" for s in result.missing]
    if cmd:
        lines += ["请用这条命令安装后再启动 / Install them with:", f"  {cmd}"]
    else:
        lines += ["请用系统的软件包管理器安装提供这些库的软件包后再启动 / "
                  "Install the packages that provide them with your system's package manager, then start again."]
    if logfile is not None:
        lines.append(f"日志 / log: {logfile}")
    return "\n".join(lines)


def _show_dialog(text: str) -> Optional[str]:
    """Show ``text`` without Qt: the first of zenity, kdialog, notify-send, xmessage found on PATH, started detached
    (this process exits at once; the box stays). Returns the tool used, or None."""
    tools = [("zenity", ["zenity", "--error", "--no-markup", "--title", "梨园 Liyuan", "--text", text]),
             ("kdialog", ["kdialog", "--title", "梨园 Liyuan", "--error", text]),
             ("notify-send", ["notify-send", "-u", "critical", "-a", "liyuan", "梨园无法启动 / Liyuan cannot start",
                              text]),
             ("xmessage", ["xmessage", "-center", "-buttons", "OK", text])]
    for name, argv in tools:
        exe = shutil.which(name)
        if not exe:
            continue
        try:
            subprocess.Popen([exe] + argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
            return name
        except OSError:
            continue
    return None


def _has_terminal() -> bool:
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def preflight(setup_logging: Callable[[], Path], resolver: Optional[Resolver] = None) -> Optional[int]:
    """Run :func:`check` before Qt loads; None when the window may start. Otherwise: log the message through
    ``setup_logging()`` (runtime's; returns the log path), print it (and the log path) on stderr, show it in a box
    when stdin/stdout is not a terminal, and return :data:`EXIT_MISSING_LIBS` (3)."""
    result = check(resolver)
    if result.ok:
        return None
    try:
        logfile: Optional[Path] = setup_logging()
    except OSError:
        logfile = None
    text = message(result, package_manager(), logfile)
    log.error("platform libraries missing: %s", text)
    print(text, file=sys.stderr, flush=True)
    if not _has_terminal():
        _show_dialog(text)
    return EXIT_MISSING_LIBS
