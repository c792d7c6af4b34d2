"""Preparing a process to run Qt: the environment QtWebEngine reads at start-up, the Chromium sandbox decision, the
fallback fonts the package ships (handed to fontconfig when the system lacks a Chinese or colour-emoji font), the
rotating log file, the uncaught-exception hook and the qasync event loop. The window (``app``), the terminal card
preview (``ui/preview``) and the benchmarks call these instead of each setting the process up its own way.

The Chromium sandbox stays on for normal users. It is turned off only when running as root
(../shared/design/desktop-stack.md), when the system forbids unprivileged user namespaces (Chromium's sandbox needs
them and QtWebEngine would abort with "No usable sandbox"), or when the user sets LIYUAN_NO_SANDBOX=1 (or Qt's own
QTWEBENGINE_DISABLE_SANDBOX=1, or ``--no-sandbox`` in QTWEBENGINE_CHROMIUM_FLAGS).

Layering: this module sits under ``ui``, ``app`` and ``cli`` and above ``core``; it imports no ``ui`` (the crash
dialog and the sandbox text are the UI's, passed in or looked up there). Qt and qasync are imported only inside the
functions that need them, so the terminal commands can import it without loading Qt.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from types import TracebackType
from typing import Any, Callable, Literal, NamedTuple, Optional

from .core.llm.errors import mask_secrets
from .core.paths import APP_NAME

SandboxMode = Literal["on", "root", "user", "userns"]
"""Why the Chromium sandbox is off ("root": running as root; "user": the user asked; "userns": the system forbids
unprivileged user namespaces), or "on"."""

CrashDialog = Callable[[type[BaseException], BaseException, Path], Optional[object]]
"""Shows an uncaught exception and the log path to the user; returns None when it could not (no QApplication)."""

_sandbox: SandboxMode = "on"  # set by prepare_env
_bundled_cjk = False  # set by prepare_fontconfig when it added the bundled Chinese font
_fonts_prepared = False  # prepare_fontconfig has run in this process (prepare_env does not ask fc-list again)


def userns_sandbox_possible() -> bool:
    """Whether Chromium's namespace sandbox can start here (Linux): a forked child tries to unshare a user, PID and
    network namespace, as the sandbox does. False where the kernel, a container or an AppArmor/SELinux policy
    forbids unprivileged user namespaces. Always True off Linux."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return True
    try:
        import ctypes

        unshare = ctypes.CDLL(None, use_errno=True).unshare
    except (OSError, AttributeError):
        return True
    clone_newuser, clone_newpid, clone_newnet = 0x10000000, 0x20000000, 0x40000000
    pid = os.fork()
    if pid == 0:  # child: never returns into Python code
        code = 1
        try:
            code = 0 if unshare(clone_newuser | clone_newpid | clone_newnet) == 0 else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


NO_GPU_FLAG = "--disable-gpu"
"""QtWebEngine composites in software (issue 15): a transcript of text and small status bars gains nothing from
the GPU, and the GPU path costs ~60 MB of the window's memory (measured with bench/ui_start.py, offscreen: the GL
driver — Mesa's llvmpipe with libLLVM — and its buffers, 368 → 309 MB of distinct pages), start-up time unchanged.
WebGL is then unavailable to status-bar frames. ``LIYUAN_GPU=1`` keeps Chromium's GPU compositing."""

NO_UNSANDBOXED_ZYGOTE_FLAG = "--no-unsandboxed-zygote"
"""Chromium starts two zygotes (Linux only: Windows and macOS have no zygote): the sandboxed one every renderer (the
conversation page, the card frames) is forked from, and an unsandboxed one for helper processes that run without a
sandbox — which QtWebEngine does not start (its GPU and network service run inside the app's own process). The idle
second zygote cost 17-21 MB of PSS (bench/ui_start.py, issue 15); without it Chromium would launch such a helper
directly. The renderers' sandbox is untouched (the switch is not ``--no-zygote``, which needs ``--no-sandbox``)."""


class ChromiumChoice(NamedTuple):
    """What :func:`chromium_choice` decided: the sandbox state, the switches every process preparing QtWebEngine adds
    (``--no-sandbox`` when off) and the ones only the window adds (GPU, zygote)."""

    sandbox: SandboxMode
    sandbox_flags: list[str]
    window_flags: list[str]


def chromium_choice(platform: str, *, root: bool = False, user_off: bool = False, userns_ok: bool = True,
                    gpu: Optional[bool] = None) -> ChromiumChoice:
    """The Chromium switches for ``platform`` (a ``sys.platform`` value: ``linux``, ``win32``, ``darwin``), a pure
    function of it and the facts given (issue 32 §2):

    * **sandbox** — ``user_off`` (LIYUAN_NO_SANDBOX=1 …) turns it off everywhere. On Linux also ``root`` (Chromium
      refuses to run sandboxed as root) and ``not userns_ok`` (no unprivileged user namespaces: "No usable sandbox").
      Windows (restricted tokens and job objects, fine for an administrator) and macOS (the seatbelt sandbox, fine as
      root) need neither, so those facts are ignored there.
    * **GPU** — ``gpu`` None takes the platform's default: off (:data:`NO_GPU_FLAG`) on Linux and Windows, where
      software compositing saves the GL driver's memory (Linux, measured) and sidesteps the GPU-driver crashes Qt's
      documentation names for Windows; on on macOS, where every supported Mac has a Metal GPU and software
      compositing of a Retina window costs more CPU than it saves. ``LIYUAN_GPU=1``/``0`` decides (``gpu``).
    * **zygote** — :data:`NO_UNSANDBOXED_ZYGOTE_FLAG` on Linux only (the other systems have no zygote).
    """
    linux = platform.startswith("linux")
    if user_off:
        sandbox: SandboxMode = "user"
    elif linux and root:
        sandbox = "root"
    elif linux and not userns_ok:
        sandbox = "userns"
    else:
        sandbox = "on"
    use_gpu = (platform == "darwin") if gpu is None else gpu
    window = ([] if use_gpu else [NO_GPU_FLAG]) + ([NO_UNSANDBOXED_ZYGOTE_FLAG] if linux else [])
    return ChromiumChoice(sandbox, [] if sandbox == "on" else ["--no-sandbox"], window)


def _gpu_wish() -> Optional[bool]:
    """``LIYUAN_GPU``: "1" keeps the GPU, "0" turns it off, else None (the platform's default)."""
    return {"1": True, "0": False}.get(os.environ.get("LIYUAN_GPU", "").strip())


def window_chromium_flags() -> list[str]:
    """The window's own switches on this platform (:func:`chromium_choice`'s ``window_flags``, ``LIYUAN_GPU`` read),
    for :func:`add_chromium_flags` after :func:`prepare_env`."""
    return chromium_choice(sys.platform, gpu=_gpu_wish()).window_flags


def prepare_env() -> SandboxMode:
    """Set the environment QtWebEngine reads when it starts (call before the first Qt import that loads it):
    ``QT_API=pyside6``, ``LANG=C.UTF-8`` when LANG is not set, Chromium's log level 3 unless the user chose one, and
    the sandbox switched off (``QTWEBENGINE_DISABLE_SANDBOX=1`` and ``--no-sandbox``) in the cases
    :func:`chromium_choice` names for this platform; the bundled fonts the system lacks handed to fontconfig
    (:func:`prepare_fontconfig`). Records and returns the sandbox decision (``sandbox_mode()`` reads it later)."""
    global _sandbox
    if not _fonts_prepared:
        prepare_fontconfig()
    os.environ.setdefault("QT_API", "pyside6")
    os.environ.setdefault("LANG", "C.UTF-8")
    flags = os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS", "")
    if "--log-level" not in flags:
        flags = (flags + " --log-level=3").strip()
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    user_off = os.environ.get("LIYUAN_NO_SANDBOX") == "1" or os.environ.get("QTWEBENGINE_DISABLE_SANDBOX") == "1" \
        or "--no-sandbox" in flags
    # the namespace probe forks: only where it decides anything (Linux, not root, not switched off by the user)
    probe = sys.platform.startswith("linux") and not root and not user_off
    choice = chromium_choice(sys.platform, root=root, user_off=user_off,
                             userns_ok=userns_sandbox_possible() if probe else True)
    _sandbox = choice.sandbox
    if _sandbox != "on":
        os.environ["QTWEBENGINE_DISABLE_SANDBOX"] = "1"
        for f in choice.sandbox_flags:
            if f not in flags:
                flags += " " + f
    os.environ["QTWEBENGINE_CHROMIUM_FLAGS"] = flags
    return _sandbox


# --- fonts (issue 24 §1): the package's fallback fonts, for Qt's widgets and Chromium alike -----------------------

_FONT_SUFFIXES = (".ttf", ".ttc", ".otf")


def _font_folder(name: str) -> Optional[Path]:
    d = Path(__file__).resolve().parent / "resources" / "fonts" / name
    if d.is_dir() and any(p.suffix.lower() in _FONT_SUFFIXES for p in d.iterdir()):
        return d
    return None


def bundled_font_dir() -> Optional[Path]:
    """``liyuan_desktop/resources/fonts/cjk`` (WenQuanYi Micro Hei, Simplified and Traditional Chinese) when it holds
    a font file, else None. The folders are separate because fontconfig's ``<dir>`` is recursive and each kind is
    added only when the system lacks it."""
    return _font_folder("cjk")


def bundled_emoji_dir() -> Optional[Path]:
    """``liyuan_desktop/resources/fonts/emoji`` (OpenMoji, COLRv0 colour emoji) when it holds a font file, else None."""
    return _font_folder("emoji")


def _fc_list(*patterns: str) -> Optional[bool]:
    """Whether ``fc-list PATTERN family`` names any font for one of ``patterns`` (asked in order, stopping at the
    first that does); None when fc-list is missing or fails (then nothing is known)."""
    fc = shutil.which("fc-list")
    if fc is None:
        return None
    for pattern in patterns:
        try:
            out = subprocess.run([fc, pattern, "family"], capture_output=True, text=True, timeout=10,
                                 stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return None
        if out.stdout.strip():
            return True
    return False


def fontconfig_has_cjk() -> Optional[bool]:
    """Whether fontconfig lists a font for Chinese (``fc-list :lang=zh family``, ~10 ms); None when fc-list is
    missing or fails (then nothing is known)."""
    return _fc_list(":lang=zh")


def fontconfig_has_emoji() -> Optional[bool]:
    """Whether fontconfig lists a colour-emoji font: one covering the emoji "language" ``und-zsye`` (fontconfig ≥
    2.13.1), or any colour font (``:color=true``: COLR/CBDT/sbix, in practice emoji fonts). A monochrome font with a
    few emoji (DejaVu Sans has 😀) does not count. None when fc-list is missing or fails."""
    return _fc_list(":lang=und-zsye", ":color=true")


def bundled_cjk_in_use() -> bool:
    """Whether :func:`prepare_fontconfig` added the bundled Chinese font in this process (then its families are not
    the system's: ``ui/infra/cjk_font.cjk_hint`` still suggests installing a better one)."""
    return _bundled_cjk


def prepare_fontconfig(has_cjk: Callable[[], Optional[bool]] = fontconfig_has_cjk,
                       has_emoji: Callable[[], Optional[bool]] = fontconfig_has_emoji,
                       cache: Optional[Path] = None) -> Optional[Path]:
    """Before Qt loads: hand the bundled fonts the system lacks to fontconfig, which both Qt's widgets and
    QtWebEngine's Chromium ask (Chromium does not see ``QFontDatabase.addApplicationFont``; the card frames' CSP
    allows only ``data:`` fonts, so an ``@font-face`` file URL would not reach them either).

    The Chinese folder is added when ``has_cjk()`` is False (or None: fc-list missing), the emoji folder when
    ``has_emoji()`` is; a system font of a kind wins (usually Noto, better hinted) and ours never competes with it.
    When a folder is to be added, ``fonts.conf`` is written in ``cache`` (default: the user cache folder): the
    system's ``/etc/fonts/fonts.conf`` included (when present), ``/usr/share/fonts``, those folders, and a cache
    folder beside it; ``FONTCONFIG_FILE`` is set to it. Returns the file written, or None (nothing to add, a
    FONTCONFIG_FILE already set — the user's or an earlier call's — or the folder cannot be written). Never raises."""
    global _bundled_cjk, _fonts_prepared
    _fonts_prepared = True
    if os.environ.get("FONTCONFIG_FILE"):
        return None
    cjk, emoji = bundled_font_dir(), bundled_emoji_dir()
    add_cjk = cjk is not None and not has_cjk()
    dirs = ([cjk] if add_cjk else []) + ([emoji] if emoji is not None and not has_emoji() else [])
    if not dirs:
        return None
    if cache is None:
        import platformdirs

        cache = Path(platformdirs.user_cache_dir("liyuan", appauthor=False))
    conf = cache / "fonts.conf"
    text = ('<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n<fontconfig>\n'
            '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n'
            '  <dir>/usr/share/fonts</dir>\n'
            + "".join(f"  <dir>{_xml(str(d))}</dir>\n" for d in dirs)
            + f"  <cachedir>{_xml(str(cache / 'fontconfig'))}</cachedir>\n"
            "</fontconfig>\n")
    try:
        cache.mkdir(parents=True, exist_ok=True)
        conf.write_text(text, encoding="utf-8")
    except OSError:
        return None
    os.environ["FONTCONFIG_FILE"] = str(conf)
    _bundled_cjk = _bundled_cjk or add_cjk
    return conf


def _xml(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def add_chromium_flags(flags: list[str]) -> str:
    """Add Chromium switches to ``QTWEBENGINE_CHROMIUM_FLAGS`` (read once, when QtWebEngine starts: call before
    the first web view). A switch already there with another value is replaced (``--name=value`` by name), so the
    security switches of ``ui/frame_guard`` win over a user's. A value with spaces is quoted (QtWebEngine's parser
    of this variable keeps a quoted part as one argument). Returns the new value."""
    current = split_flags(os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS", ""))
    for flag in flags:
        name = flag.split("=", 1)[0]
        current = [f for f in current if f.split("=", 1)[0] != name]
        current.append(flag)
    text = " ".join(f'"{f}"' if " " in f else f for f in current)
    os.environ["QTWEBENGINE_CHROMIUM_FLAGS"] = text
    return text


def split_flags(text: str) -> list[str]:
    """Split a QTWEBENGINE_CHROMIUM_FLAGS value the way QtWebEngine does (spaces separate, double quotes group)."""
    out, arg, quoted, started = [], "", False, False
    for c in text:
        if c == '"':
            quoted, started = not quoted, True
        elif c == " " and not quoted:
            if started:
                out.append(arg)
            arg, started = "", False
        else:
            arg, started = arg + c, True
    if started:
        out.append(arg)
    return out


def skip_pyside_source_scan() -> bool:
    """Spare every import after PySide6 a read of the module's source (issue 15, start-up time). PySide6's
    ``__feature__`` support (``snake_case``/``true_property``) hooks the import system and, for each module imported
    once PySide6 is loaded, calls ``shibokensupport.feature._mod_uses_pyside``: ``inspect.getsource`` of the whole
    module, searched for the text "PySide6", to give the module the selection 0 ("no feature") or -1 ("ignore").
    That cost 41 ms over the ~100 modules the window imports after Qt (0.4 ms each: tokenising the file again).
    This project selects no feature anywhere, so the two selections behave the same; every module is given 0, the
    one a PySide-using module gets. Call after Python may import ``shiboken6`` and before the window's modules are
    imported; imports ``shiboken6`` (not Qt). Returns False, changing nothing, when PySide6 has no such hook (a
    later version) — start-up is then only as slow as before."""
    try:
        import shiboken6  # noqa: F401  loads shibokensupport.feature
    except ImportError:
        return False
    feature = sys.modules.get("shibokensupport.feature")
    if feature is None or not callable(getattr(feature, "_mod_uses_pyside", None)):
        return False

    def uses_pyside(module: object) -> bool:
        return True

    feature._mod_uses_pyside = uses_pyside
    return True


def sandbox_mode() -> SandboxMode:
    """The sandbox decision ``prepare_env`` made in this process ("on" before it has run)."""
    return _sandbox


def log_path() -> Path:
    """The rotating log file: ``$LIYUAN_HOME/logs/liyuan.log`` when LIYUAN_HOME is set, else ``liyuan.log`` in the
    platform's user log folder. Creates the folder (OSError when it cannot)."""
    home = os.environ.get("LIYUAN_HOME", "").strip()
    if home:
        d = Path(home).expanduser() / "logs"
    else:
        import platformdirs  # only without LIYUAN_HOME (issue 15: start-up)

        d = Path(platformdirs.user_log_dir("liyuan", appauthor=False))
    d.mkdir(parents=True, exist_ok=True)
    return d / "liyuan.log"


class MaskCredentials(logging.Filter):
    """A log filter that masks credentials written inside URLs (``https://user:pass@host`` → ``https://***@host``,
    :func:`~liyuan_desktop.core.llm.errors.mask_secrets`) in every record, message and arguments alike — httpx
    logs each request's full URL at INFO. Attached to the log file's handler by :func:`setup_logging`."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            text = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string: let logging report it as usual
            return True
        masked = mask_secrets(text)
        if masked != text:
            record.msg, record.args = masked, None
        return True


def data_folder() -> Path:
    """The data folder ``core.paths.home()`` would use (``LIYUAN_HOME``, else the platform's), without creating it."""
    env = os.environ.get("LIYUAN_HOME", "").strip()
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def data_folder_problem(folder: Optional[Path] = None) -> Optional[str]:
    """Why ``folder`` (default: :func:`data_folder`) cannot be used for writing — the folder and the OS error, e.g.
    ``/mnt/ro/liyuan: Read-only file system`` — or None when a file can be created and removed in it. Creates the
    folder when missing; leaves nothing behind."""
    d = Path(folder) if folder is not None else data_folder()
    try:
        d.mkdir(parents=True, exist_ok=True)
        probe = d / f".liyuan-write-test-{os.getpid()}"
        with open(probe, "wb") as f:
            f.write(b"ok")
        probe.unlink()
    except OSError as exc:
        return f"{d}: {exc.strerror or exc}"
    return None


def _fallback_log_path() -> Path:
    """Where the log goes when the data folder refuses it: ``liyuan.log`` in a per-user folder of the system's
    temporary directory."""
    user = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    d = Path(tempfile.gettempdir()) / f"liyuan-logs-{user}"
    d.mkdir(parents=True, exist_ok=True)
    return d / "liyuan.log"


def setup_logging() -> Path:
    """Send the root logger (level INFO) to ``log_path()``, rotated at 2 MB with three old files kept, credentials
    in URLs masked (:class:`MaskCredentials`); returns the path. When the data folder refuses the log (read-only,
    cannot be created) the log goes to the system's temporary folder instead (issue 15 item 8: the window must
    still start); only when that fails too is OSError raised."""
    refused: Optional[OSError] = None
    try:
        path = log_path()
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
    except OSError as exc:
        refused = exc
        path = _fallback_log_path()
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(MaskCredentials())
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    if refused is not None:
        logging.getLogger("liyuan").warning("the data folder refuses the log (%s); logging to %s", refused, path)
    return path


def install_excepthook(logfile: Path, show_dialog: Optional[CrashDialog] = None) -> None:
    """Route uncaught exceptions (also those raised in Qt slots) to the log (logger ``liyuan``, level ERROR) and
    then to ``show_dialog`` (the window's crash dialog, given the log path); Python's default hook prints them when
    there is no dialog, it returns None, or it fails. KeyboardInterrupt is logged and re-raised the default way. The
    session files are append-only and written as the beat goes, so no chat is lost."""

    def excepthook(tp: type[BaseException], value: BaseException, tb: Optional[TracebackType]) -> None:
        logging.getLogger("liyuan").error("uncaught: %s", "".join(traceback.format_exception(tp, value, tb)))
        if issubclass(tp, KeyboardInterrupt) or show_dialog is None:
            sys.__excepthook__(tp, value, tb)
            return
        try:
            if show_dialog(tp, value, logfile) is None:
                sys.__excepthook__(tp, value, tb)
        except Exception:  # noqa: BLE001 - the hook itself must never raise
            sys.__excepthook__(tp, value, tb)

    sys.excepthook = excepthook


def make_loop(app: Any) -> Any:
    """A ``qasync.QEventLoop`` for the QApplication ``app``, with asyncio's async-generator hooks installed (qasync's
    run_forever does not install them, so half-read httpx streams would be finalised with no running loop and print
    warnings). The caller sets it as the current loop."""
    import qasync

    loop = qasync.QEventLoop(app)
    sys.set_asyncgen_hooks(firstiter=loop._asyncgen_firstiter_hook, finalizer=loop._asyncgen_finalizer_hook)
    return loop


def has_display() -> bool:
    """True when Qt can open a window here (a display, or an explicit QT_QPA_PLATFORM such as offscreen)."""
    if os.environ.get("QT_QPA_PLATFORM"):
        return True
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True
