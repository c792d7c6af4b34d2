"""Where API keys live — the one home of key storage (issue 16 §2). No Qt; settings, providers, the settings dialog
and the CLI all come here.

A provider's key (keyring service ``service``, user = provider ``name``) is looked up in this order:

1. ``env``: the provider's environment variable (``api_key_env``) — always wins for a run, never stored;
2. ``keyring``: the OS keyring, when a real backend is usable (keyring's ``fail``/``null`` backends, an empty chainer
   or an import error count as none — e.g. a desktop without a Secret Service, or
   ``PYTHON_KEYRING_BACKEND=keyring.backends.fail.Keyring``);
3. ``file``: :data:`KEYS_FILE` in the data/config folder (``core.paths.home()``, beside ``settings.json``), used when
   no keyring is usable. The file is created with mode 0600 (``tempfile.mkstemp`` in :func:`fsutil.atomic_write_bytes`
   opens it with ``os.open(..., 0o600)``; the mode is set again before the rename), written atomically, and read
   only by this module. It is JSON ``{"version": 1, "keys": {service: {name: key}}}``.
4. ``session``: process memory, when even the file cannot be written (a read-only data folder). Lost at exit.

Per OS (issue 32 §2; :data:`KEYRING_BACKENDS` names the backend keyring picks, and ``packaging/liyuan.spec`` bundles
that module per platform):

* **Linux**: the Secret Service over D-Bus (GNOME Keyring, KWallet ≥ 5.97, KeePassXC); none on a bare desktop or
  over SSH without a session bus, so the key file is common there. The file's 0600 mode is what protects it.
* **Windows**: the Credential Manager (``WinVaultKeyring``, DPAPI-encrypted per user), always present, so the key
  file is rare. When it is used, ``os.chmod`` only clears the read-only flag there: the protection is the ACL the
  file inherits from ``%LOCALAPPDATA%`` (the user, SYSTEM and Administrators have access; other users none) — the
  equivalent of 0600. A data folder moved elsewhere with ``LIYUAN_HOME`` (another drive, a shared folder) inherits
  that folder's ACL instead; ``icacls <home> /inheritance:r /grant:r "%USERNAME%:(OI)(CI)F"`` restricts it to the user.
* **macOS**: the login Keychain (``macOS.Keyring``); the first read from a newly signed build asks the user to allow
  access. The key file's 0600 mode works as on Linux.

Keys are never logged (only provider names and exception class names are), never fields of a pydantic model
(``ProviderSettings`` forbids unknown fields), so they cannot reach settings.json, session files, exports or crash
reports; tests/test_privacy.py and tests/test_secrets.py check this.
"""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path
from typing import Any, Literal, Optional

from .fsutil import atomic_write_bytes
from .messages import message
from .paths import home

log = logging.getLogger(__name__)

DEFAULT_KEYRING_SERVICE = "liyuan-desktop"
"""The keyring service name keys are stored under by default (user = provider name)."""

KEYS_FILE = "api-keys.json"
"""The key file's name in the data folder (only used without a usable keyring)."""

KEYRING_BACKENDS: dict[str, tuple[str, str]] = {
    "linux": ("keyring.backends.SecretService", "Keyring"),
    "win32": ("keyring.backends.Windows", "WinVaultKeyring"),
    "darwin": ("keyring.backends.macOS", "Keyring"),
}
"""The OS keyring keyring chooses per ``sys.platform`` value: (module, class). Each refuses to be used off its OS
(its ``priority`` raises), which is how keyring picks it."""

KeySource = Literal["env", "keyring", "file", "session", "none"]

#: Keys kept in process memory only, by (service, provider name): the last resort, never written.
_SESSION_KEYS: dict[tuple[str, str], str] = {}


# --- the OS keyring -------------------------------------------------------------------------------------------------

def _probe_keyring() -> tuple[Optional[Any], Optional[str]]:
    """(usable backend or None, the exception class name when asking failed)."""
    try:
        import keyring  # inside the try: a missing or broken keyring must not stop the app
        from keyring.backends import chainer, fail, null

        backend = keyring.get_keyring()
    except Exception as exc:  # noqa: BLE001 - keyring missing or broken
        return None, type(exc).__name__
    if isinstance(backend, (fail.Keyring, null.Keyring)):
        return None, None
    if isinstance(backend, chainer.ChainerBackend):
        try:
            if not backend.backends:
                return None, None
        except Exception as exc:  # noqa: BLE001
            return None, type(exc).__name__
    return backend, None


def keyring_backend() -> Optional[Any]:
    """The usable OS keyring backend, or None (keyring missing or broken, or only the fail/null backends or an
    empty chainer). Reads and writes no key."""
    return _probe_keyring()[0]


def keyring_usable() -> bool:
    """True when :func:`keyring_backend` found a real backend."""
    return keyring_backend() is not None


def keyring_get(service: str, name: str) -> Optional[str]:
    """The key stored in the OS keyring, stripped, or None (none stored, or any backend failure). Never raises."""
    try:
        import keyring

        value = keyring.get_password(service, name)
    except Exception as exc:  # noqa: BLE001 - no backend / locked / broken: no key
        log.debug("keyring lookup failed for provider %s: %s", name, type(exc).__name__)
        return None
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def keyring_set(service: str, name: str, key: str) -> None:
    """Store ``key`` in the OS keyring. Raises ``ValueError`` for an empty key and ``RuntimeError`` (Chinese
    message, no key in it) when the keyring refuses."""
    key = (key or "").strip()
    if not key:
        raise ValueError(message("secret.empty_key"))
    try:
        import keyring

        keyring.set_password(service, name, key)
    except Exception as exc:  # noqa: BLE001
        raise RuntimeError(message("secret.keyring_refused", name=name, error=type(exc).__name__)) from None


def keyring_delete(service: str, name: str) -> bool:
    """Remove the OS keyring's key; True if one was removed. Never raises."""
    try:
        import keyring

        keyring.delete_password(service, name)
        return True
    except Exception:  # noqa: BLE001
        return False


# --- the key file ---------------------------------------------------------------------------------------------------

def keys_file_path() -> Path:
    """``<home>/api-keys.json`` (``core.paths.home()``; the folder is created)."""
    return home() / KEYS_FILE


def _read_file() -> dict[str, dict[str, str]]:
    """The key file's {service: {name: key}}; {} when absent or unreadable (a damaged file is logged, by name)."""
    try:
        p = keys_file_path()
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("key file unreadable: %s", type(exc).__name__)
        return {}
    keys = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(keys, dict):
        return {}
    return {str(s): {str(n): str(k) for n, k in v.items() if isinstance(k, str)}
            for s, v in keys.items() if isinstance(v, dict)}


def _write_file(keys: dict[str, dict[str, str]]) -> None:
    """Replace the key file with ``keys`` (mode 0600, atomic); removes the file when no key is left. Raises OSError."""
    p = keys_file_path()
    keys = {s: v for s, v in keys.items() if v}
    if not keys:
        try:
            p.unlink()
        except FileNotFoundError:
            pass
        return
    data = json.dumps({"version": 1, "keys": keys}, ensure_ascii=False, indent=1).encode("utf-8")
    atomic_write_bytes(p, data)  # mkstemp: created 0600 by os.open, renamed into place
    os.chmod(p, stat.S_IRUSR | stat.S_IWUSR)


def file_get(service: str, name: str) -> Optional[str]:
    """The key kept in the key file, or None. Never raises."""
    value = _read_file().get(service, {}).get(name, "").strip()
    return value or None


def file_set(service: str, name: str, key: str) -> None:
    """Keep ``key`` in the key file (mode 0600). Raises ``ValueError`` for an empty key, OSError when the folder
    cannot be written."""
    key = (key or "").strip()
    if not key:
        raise ValueError(message("secret.empty_key"))
    keys = _read_file()
    keys.setdefault(service, {})[name] = key
    _write_file(keys)


def file_delete(service: str, name: str) -> bool:
    """Remove the key file's key; True if one was removed. Never raises."""
    keys = _read_file()
    if name not in keys.get(service, {}):
        return False
    del keys[service][name]
    try:
        _write_file(keys)
    except OSError as exc:
        log.warning("could not remove a key from the key file: %s", type(exc).__name__)
        return False
    return True


# --- session memory -------------------------------------------------------------------------------------------------

def session_set(name: str, key: str, service: str = DEFAULT_KEYRING_SERVICE) -> None:
    """Keep ``key`` in memory until the program exits; an empty key forgets it."""
    key = (key or "").strip()
    if key:
        _SESSION_KEYS[(service, name)] = key
    else:
        _SESSION_KEYS.pop((service, name), None)


def session_get(name: str, service: str = DEFAULT_KEYRING_SERVICE) -> Optional[str]:
    """The key kept in memory for this run, or None."""
    return _SESSION_KEYS.get((service, name))


def session_delete(name: str, service: Optional[str] = None) -> None:
    """Drop the in-memory key of ``name`` (under ``service``, or under every service). No error if none."""
    for k in [k for k in _SESSION_KEYS if k[1] == name and (service is None or k[0] == service)]:
        del _SESSION_KEYS[k]


def session_clear() -> None:
    """Drop every in-memory key."""
    _SESSION_KEYS.clear()


# --- the lookup order ---------------------------------------------------------------------------------------------

def storage_status() -> tuple[bool, str]:
    """Whether a usable OS keyring exists, and an explanation for the settings dialog (a catalog message; no key
    read)."""
    backend, error = _probe_keyring()
    try:
        where = str(keys_file_path())
    except OSError:
        where = KEYS_FILE
    if backend is None:
        why = message("secret.keyring_unusable", error=error) if error else message("secret.keyring_none")
        return False, message("secret.in_file", why=why, where=where)
    name = getattr(backend, "name", None) or type(backend).__name__
    return True, message("secret.in_keyring", name=name)


def _env_key(provider: Any) -> Optional[str]:
    var = getattr(provider, "api_key_env", None)
    if var:
        value = os.environ.get(var, "").strip()
        if value:
            return value
    return None


def _service(provider: Any) -> str:
    return getattr(provider, "keyring_service", None) or DEFAULT_KEYRING_SERVICE


def lookup(provider: Any) -> tuple[KeySource, Optional[str]]:
    """Where the key of ``provider`` comes from and the key itself: env → keyring → file → session;
    ``("none", None)`` when there is none. ``provider`` is any object with ``name``, ``api_key_env`` and
    ``keyring_service``. Never raises."""
    value = _env_key(provider)
    if value:
        return "env", value
    service, name = _service(provider), provider.name
    value = keyring_get(service, name)
    if value:
        return "keyring", value
    value = file_get(service, name)
    if value:
        return "file", value
    value = session_get(name, service)
    if value:
        return "session", value
    return "none", None


def store(name: str, key: str, service: str = DEFAULT_KEYRING_SERVICE) -> Literal["keyring", "file", "session"]:
    """Keep the key of provider ``name`` where it lasts: the OS keyring when one is usable (file and session copies
    then dropped); else, or when the keyring refuses, the key file (0600); else (the folder cannot be written)
    session memory. Returns where it went. Raises ``ValueError`` for an empty key. The key is never logged."""
    key = (key or "").strip()
    if not key:
        raise ValueError(message("secret.empty_key"))
    if keyring_usable():
        try:
            keyring_set(service, name, key)
        except RuntimeError as exc:
            log.warning("%s", exc)
        else:
            file_delete(service, name)
            session_delete(name, service)
            return "keyring"
    try:
        file_set(service, name, key)
    except OSError as exc:
        log.warning("could not write the key file (%s); the key of %s lasts for this run only",
                    type(exc).__name__, name)
    else:
        session_delete(name, service)
        return "file"
    session_set(name, key, service)
    return "session"


def forget(name: str, service: str = DEFAULT_KEYRING_SERVICE) -> None:
    """Remove the key of provider ``name`` from the keyring, the key file and session memory (environment variables
    are left alone). Never raises."""
    keyring_delete(service, name)
    file_delete(service, name)
    session_delete(name, service)


def rename(old: str, new: str, service: str = DEFAULT_KEYRING_SERVICE) -> None:
    """A provider was renamed from ``old`` to ``new``: move its stored key in each store (a key already stored
    under ``new`` wins) and remove the old one. Never raises."""
    if old == new:
        return
    value = keyring_get(service, old)
    if value:
        if not keyring_get(service, new):
            try:
                keyring_set(service, new, value)
            except (RuntimeError, ValueError):
                try:
                    file_set(service, new, value)
                except (OSError, ValueError):
                    session_set(new, value, service)
        keyring_delete(service, old)
    value = file_get(service, old)
    if value:
        if not file_get(service, new):
            try:
                file_set(service, new, value)
            except (OSError, ValueError):
                session_set(new, value, service)
        file_delete(service, old)
    value = session_get(old, service)
    if value:
        if not session_get(new, service):
            session_set(new, value, service)
        session_delete(old, service)


class KeyProbe:
    """The three attributes the key lookup needs, for a provider that is not (yet) a valid ProviderSettings."""

    def __init__(self, name: str, api_key_env: Optional[str], keyring_service: str = DEFAULT_KEYRING_SERVICE):
        self.name = name
        self.api_key_env = api_key_env
        self.keyring_service = keyring_service
