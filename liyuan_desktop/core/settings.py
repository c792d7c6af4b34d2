"""Application settings (``<home>/settings.json``), API-key lookup with a session fallback, and a connection test.

No Qt here: the settings dialog, the CLI and tests all use this module.

API keys are never stored in :class:`AppSettings` (its :class:`ProviderSettings` forbid unknown fields, so there is
no place for one). A key comes, in this order, from

1. the provider's environment variable (``ProviderSettings.api_key_env``),
2. the OS keyring (service ``keyring_service``, user = provider ``name``),
3. a key file only the user can read (mode 0600, ``api-keys.json`` in the data folder), used when this machine has
   no keyring backend,
4. the in-memory session store (:func:`remember_key_for_session`), when even that file cannot be written; it is lost
   when the program exits.

Key storage itself lives in ``core/secrets.py``.

See :func:`resolve_key` and :func:`key_source`.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from . import secrets
from .deferred import DeferredModel
from .fsutil import atomic_write_text
from .llm.capabilities import Capabilities, keep_newer
from .llm.errors import mask_secrets, url_secrets
from .llm.profiles import ConnectionProfile
from .llm.providers import DEFAULT_KEYRING_SERVICE, ProviderSettings, build_model
from .llm.sampling import Sampling
from .llm.types import ChatMessage, ChatRequest, ModelError
from .lore.settings import WorldInfoSettings
from .messages import Msg, MsgText, joined_semi, message, validation_reason
from .paths import home

log = logging.getLogger(__name__)

SETTINGS_FILE = "settings.json"

__all__ = [
    "AppSettings",
    "ConnectionReport",
    "KeyProbe",
    "KeySource",
    "SETTINGS_FILE",
    "clear_session_keys",
    "forget_key",
    "forget_session_key",
    "key_source",
    "lookup_key",
    "key_storage_status",
    "load_settings",
    "remember_key_for_session",
    "rename_key",
    "resolve_key",
    "save_settings",
    "session_key",
    "settings_path",
    "store_key",
    "test_connection",
]


# ----------------------------------------------------------------------------------------------------------------
# the settings model


class AppSettings(BaseModel):
    """Everything the user sets up, saved as ``<home>/settings.json``.

    Fields:
        providers: the configured model providers (edited copies of presets, or custom OpenAI-compatible ones);
            names are unique.
        active_provider: name of the provider used for the story; None = no model configured (the app offers
            the offline demo). A name that is not in ``providers`` is cleared on load.
        scribe_provider: name of an optional cheaper provider for scribe/summary calls; None = the active one
            (with its ``scribe_model`` when set). Use :meth:`scribe` to get the provider to call.
        ui_language: "zh", "en" or a translator's language code ("ja", "pt_BR"; ``core/catalog_files.py``, used
            while its compiled catalog is there, else English); when never chosen (not in the file) a start follows the system locale
            (:func:`language_for_run`) and saving leaves it out.  theme: "system" (follow the desktop's colour scheme; the default), "light" or "dark".
        persona_name / persona_description: who the user plays.
        compaction_share: share of the context window (0 < x < 1) after which old history is compacted.
        window: free-form UI state (geometry/state as base64 strings, splitter sizes, last card and chat).
        demo_done: the offline demo was finished once.
        default_preset: name of the preset (preset library ``预设/``) new chats get; None = none.
        profiles: connection profiles (provider + model + preset + sampling, ``llm.profiles``), names unique;
            ``active_profile``: the one chosen last (None = none; cleared on load when unknown). Switch with
            :meth:`use_profile`.
        world_info: SillyTavern's world-info settings (``lore.settings.WorldInfoSettings``, SillyTavern's names and
            defaults) for every chat; a chat may override them (``Chat.set_world_info``).
        enter_sends: in the chat input, Enter sends and Shift+Enter starts a new line (SillyTavern's default) when
            true; Enter starts a new line when false (the window before issue 26). Ctrl+Enter sends either way. A new
            settings file gets true; a file written before the field existed reads as false (:func:`load_settings`),
            so an existing user's keys do not change under them.
        endpoint_capabilities: what was learned about servers that are not a configured provider — a built-in
            preset used by name (``liyuan chat --provider llamacpp``) or a provider whose base URL was overridden
            (``--base-url``) — one ``Capabilities`` per (base URL, model) (issue 30 §4; ``core.provider_caps``).
        load_warning: not saved; set by :func:`load_settings` when the file was broken (Chinese text for the UI).

    Unknown top-level keys in the file are ignored (and dropped on the next save).
    """

    model_config = ConfigDict(extra="ignore", validate_assignment=False)

    providers: list[ProviderSettings] = Field(default_factory=list)
    active_provider: Optional[str] = None
    scribe_provider: Optional[str] = None
    ui_language: str = Field(default="zh", pattern=r"^[a-z]{2,3}(_[A-Za-z0-9]{2,8})*$")
    theme: Literal["system", "light", "dark"] = "system"
    persona_name: str = ""
    persona_description: str = ""
    compaction_share: float = Field(default=0.6, gt=0.0, lt=1.0)
    window: dict[str, Any] = Field(default_factory=dict)
    demo_done: bool = False
    default_preset: Optional[str] = None
    profiles: list[ConnectionProfile] = Field(default_factory=list)
    active_profile: Optional[str] = None
    world_info: WorldInfoSettings = Field(default_factory=WorldInfoSettings)
    enter_sends: bool = True
    endpoint_capabilities: list[Capabilities] = Field(default_factory=list)
    load_warning: Optional[MsgText] = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _check_names(self) -> "AppSettings":
        seen: set[str] = set()
        for p in self.providers:
            if p.name in seen:
                raise ValueError(message("settings.provider_twice", name=p.name))
            seen.add(p.name)
        if self.active_provider is not None and self.active_provider not in seen:
            self.active_provider = None
        if self.scribe_provider is not None and self.scribe_provider not in seen:
            self.scribe_provider = None
        if len({p.name for p in self.profiles}) != len(self.profiles):
            raise ValueError(message("settings.profile_twice"))
        if self.active_profile is not None and self.profile(self.active_profile) is None:
            self.active_profile = None
        return self

    def profile(self, name: Optional[str]) -> Optional[ConnectionProfile]:
        """The connection profile called ``name``, or None."""
        return next((p for p in self.profiles if p.name == name), None)

    def use_profile(self, name: str) -> ConnectionProfile:
        """Switch to the connection profile ``name``: its provider becomes the active one, with the profile's
        model (written into that provider's ``model``), and it becomes ``active_profile`` (its preset and
        sampling: :meth:`preset_for_new_chat`, :meth:`profile_sampling`). Not saved here. KeyError for an unknown
        profile, ValueError when its provider is not configured."""
        prof = self.profile(name)
        if prof is None:
            raise KeyError(message("settings.no_profile", name=name))
        prov = self.provider(prof.provider)
        if prov is None:
            raise ValueError(message("settings.profile_provider_missing", name=name, provider=prof.provider))
        if prof.model.strip():
            prov.model = prof.model.strip()
        self.active_provider = prov.name
        self.active_profile = prof.name
        return prof

    def preset_for_new_chat(self) -> Optional[str]:
        """The preset a new chat gets: the active profile's, else :attr:`default_preset` (None = no preset)."""
        prof = self.profile(self.active_profile)
        return (prof.preset if prof is not None and prof.preset else None) or self.default_preset

    def profile_sampling(self) -> Optional[Sampling]:
        """The active profile's sampling settings (None without an active profile or when it sets none)."""
        prof = self.profile(self.active_profile)
        return prof.sampling if prof is not None and not prof.sampling.is_empty() else None

    def provider(self, name: Optional[str]) -> Optional[ProviderSettings]:
        """The provider called ``name``, or None."""
        for p in self.providers:
            if p.name == name:
                return p
        return None

    def active(self) -> Optional[ProviderSettings]:
        """The active provider, or None when no model is configured (offer the offline demo)."""
        return self.provider(self.active_provider)

    def scribe(self) -> Optional[ProviderSettings]:
        """The provider for scribe/summary calls: ``scribe_provider`` if set, else the active one (None if neither).
        Build it with ``build_model(p, scribe=True)`` so its ``scribe_model`` is used when set."""
        return self.provider(self.scribe_provider) or self.active()


def settings_path() -> Path:
    """``<home>/settings.json``."""
    return home() / SETTINGS_FILE


def _describe_errors(exc: ValidationError) -> Msg:
    """Field locations and messages only: never the input values (a hand-edited file might hold a key). A catalog
    message: the complaints joined with the reader's semicolon (the Chinese text as before)."""
    parts: list[Any] = []
    for err in exc.errors(include_input=False, include_url=False)[:5]:
        loc = ".".join(str(x) for x in err.get("loc", ())) or message("settings.loc.top")
        parts.append(message("field.error", loc=loc, msg=validation_reason(err)))
    more = len(exc.errors()) - len(parts)
    if more > 0:
        parts.append(message("settings.more", n=more))
    return joined_semi(parts)


def _salvage(data: dict[str, Any]) -> tuple[AppSettings, list[Msg]]:
    """Keep every valid part of a settings object that failed validation; returns the settings and what was
    dropped (locations and messages, no values; catalog messages)."""
    dropped: list[Msg] = []
    providers: list[ProviderSettings] = []
    raw_providers = data.get("providers", [])
    if not isinstance(raw_providers, list):
        dropped.append(message("settings.providers_not_list"))
        raw_providers = []
    names: set[str] = set()
    for i, item in enumerate(raw_providers):
        try:
            p = ProviderSettings.model_validate(item)
        except ValidationError as exc:
            dropped.append(message("settings.provider_dropped", i=i, what=_describe_errors(exc)))
            continue
        if p.name in names:
            dropped.append(message("settings.provider_dup", i=i, name=p.name))
            continue
        names.add(p.name)
        providers.append(p)
    kept: dict[str, Any] = {"providers": providers}
    for key, value in data.items():
        if key in ("providers", "load_warning") or key not in AppSettings.model_fields:
            continue
        try:
            AppSettings.model_validate({key: value})
        except ValidationError as exc:
            dropped.append(_describe_errors(exc))
            continue
        kept[key] = value
    return AppSettings.model_validate(kept), dropped


def _move_aside(path: Path) -> Msg:
    """Rename the broken file to ``settings.json.broken-<ts>`` (copy if renaming fails). Returns the note (a catalog message)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.broken-{stamp}")
    n = 1
    while target.exists():
        target = path.with_name(f"{path.name}.broken-{stamp}-{n}")
        n += 1
    try:
        os.replace(path, target)
        return message("settings.renamed", name=target.name)
    except OSError:
        try:
            shutil.copy2(path, target)
            return message("settings.copied", name=target.name)
        except OSError as exc:
            return message("settings.not_kept", error=type(exc).__name__)


def load_settings() -> AppSettings:
    """Read ``<home>/settings.json``.

    - missing file → defaults;
    - unreadable / not JSON / not an object → defaults, ``load_warning`` set, and the file renamed to
      ``settings.json.broken-<YYYYmmdd-HHMMSS>`` so nothing is lost;
    - JSON whose fields partly fail validation → the valid parts are kept, the invalid ones dropped, and the
      same renaming and warning happen.

    Never raises for a bad file.
    """
    path = settings_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return AppSettings()
    except OSError as exc:
        s = AppSettings()
        s.load_warning = message("settings.unreadable", path=str(path), error=f"{type(exc).__name__}: {exc.strerror or exc}")
        log.warning("%s", s.load_warning)
        return s

    problem: Optional[Msg] = None
    data: Any = None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        problem = message("settings.not_utf8")
    except ValueError as exc:
        problem = message("settings.bad_json", error=str(exc))
    if problem is None and not isinstance(data, dict):
        problem = message("settings.not_object")

    if problem is not None:
        s = AppSettings()
        note = _move_aside(path)
        s.load_warning = message("settings.broken", problem=problem, note=note)
        log.warning("%s", s.load_warning)
        return s

    data.setdefault("enter_sends", False)  # written before the field existed: Enter keeps making a new line
    try:
        return AppSettings.model_validate(data)
    except ValidationError as exc:
        s, dropped = _salvage(data)
        note = _move_aside(path)
        what = joined_semi(dropped) or _describe_errors(exc)
        s.load_warning = message("settings.invalid", what=what, note=note)
        log.warning("%s", s.load_warning)
        return s


LANGUAGE_ENV = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")  # where a POSIX desktop says its language, first wins


def locale_language(name: str) -> Optional[Literal["zh", "en"]]:
    """The app's language for a locale name (``zh_CN.UTF-8``, ``zh-Hant``, ``en_US``, ``de_DE``…): "zh" for any
    Chinese locale, "en" for any other real locale, None for an empty name or the C/POSIX locale (no choice made).
    A GNU ``LANGUAGE`` list (``de:zh_CN``) is read by its first entry."""
    first = (name or "").split(":")[0].strip()
    if not first or first.split(".")[0] in ("C", "POSIX"):
        return None
    return "zh" if first.lower().startswith("zh") else "en"


def system_language(env: Optional[Mapping[str, str]] = None, system_locale: str = "") -> Literal["zh", "en"]:
    """The language a first start picks (issue 32): the first of ``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``
    in ``env`` (default ``os.environ``) that names a real locale, else ``system_locale`` (the window passes
    ``QLocale.system().name()``: Windows and macOS set no such variable); Chinese when that locale is Chinese,
    English otherwise (also when nothing says anything)."""
    where: Mapping[str, str] = os.environ if env is None else env
    for var in LANGUAGE_ENV:
        lang = locale_language(where.get(var, ""))
        if lang is not None:
            return lang
    return locale_language(system_locale) or "en"


def _has_catalog(lang: str) -> bool:
    from .catalog_files import available  # a translator's compiled catalog (scripts/catalog.py)

    return lang in available()


def language_for_run(settings: AppSettings, env: Optional[Mapping[str, str]] = None,
                     system_locale: str = "") -> str:
    """The language this run uses, window and CLI alike: ``LIYUAN_LANG`` ("zh"/"en", or a language with a
    translator's compiled catalog; set by ``liyuan --lang`` too) when given; else the language the settings hold
    (chosen in Settings, or read from a file that has one; English when it is a translator's language whose catalog
    is gone); else :func:`system_language` — a first start follows the desktop's locale (a translator's language
    when the locale is one with a compiled catalog)."""
    where: Mapping[str, str] = os.environ if env is None else env
    forced = where.get("LIYUAN_LANG", "")
    if forced == "zh":
        return "zh"
    if forced == "en":
        return "en"
    if forced and _has_catalog(forced):
        return forced
    if forced:  # an unknown code (LIYUAN_LANG=fr): the system locale's rule, as on a first start (issue 32)
        return fallback_language(where, system_locale)
    if "ui_language" in settings.model_fields_set:
        chosen = settings.ui_language
        return chosen if chosen in ("zh", "en") or _has_catalog(chosen) else "en"  # its catalog gone: English
    return fallback_language(where, system_locale)


def fallback_language(env: Optional[Mapping[str, str]] = None, system_locale: str = "") -> str:
    """The system locale's language (:func:`system_language`: Chinese for a Chinese locale, else English — or a
    translator's language whose compiled catalog matches the locale): what a first start uses, and what an unknown
    ``--lang``/``LIYUAN_LANG`` code falls back to."""
    where: Mapping[str, str] = os.environ if env is None else env
    lang = system_language(where, system_locale)
    if lang == "en":
        return _locale_catalog(where, system_locale) or "en"
    return lang


def is_known_language(code: str) -> bool:
    """True for "zh", "en" and a language with a translator's compiled catalog (``core/catalog_files.py``)."""
    return code in ("zh", "en") or _has_catalog(code)


def unknown_language_warning(code: str) -> str:
    """The one line printed (to stderr) for an unknown ``--lang``/``LIYUAN_LANG`` code, naming the languages there
    are. Always English: the code says the reader does not want Chinese and names no language the app has, so no
    catalog language can be chosen for it (the run then uses :func:`fallback_language`)."""
    from .catalog_files import available

    names = ", ".join(["zh", "en", *available()])
    return f"liyuan: unknown language {code!r} (available: {names}); using the system locale's language"


def _locale_catalog(where: Mapping[str, str], system_locale: str) -> Optional[str]:
    """The translator's language (a compiled catalog, ``core/catalog_files.py``) matching the desktop's locale —
    the same first real locale :func:`system_language` reads — by full name (``pt_BR``), then language (``ja``)."""
    names = [where.get(var, "") for var in LANGUAGE_ENV] + [system_locale]
    first = next((n for n in names if locale_language(n) is not None), "")
    name = first.split(":")[0].split(".")[0].split("@")[0].replace("-", "_")
    if not name:
        return None
    from .catalog_files import available

    have = available()
    return next((c for c in (name, name.split("_")[0]) if c in have), None)


def save_settings(settings: AppSettings) -> Path:
    """Write ``settings`` to ``<home>/settings.json`` atomically (temp file in the same folder, fsync, rename).

    ``load_warning`` is not written. Returns the path. Raises ``OSError`` when the folder is not writable
    (the old file is then left untouched).
    """
    path = settings_path()
    _keep_newer_capabilities(settings, path)
    data = settings.model_dump(mode="json")
    if "ui_language" not in settings.model_fields_set:
        del data["ui_language"]  # never chosen: the next start still follows the system locale (language_for_run)
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    atomic_write_text(path, text)
    return path


def _keep_newer_capabilities(settings: AppSettings, path: Path) -> None:
    """Capabilities learned since ``settings`` was loaded (a probe, the beat side's "tools ignored" mark, written
    by ``core.provider_caps``) are kept when an older copy is saved (``llm.capabilities.keep_newer``)."""
    try:
        old = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return
    stored = {p.get("name"): p.get("capabilities") for p in (old.get("providers") or []) if isinstance(p, dict)} \
        if isinstance(old, dict) else {}
    for p in settings.providers:
        kept = stored.get(p.name)
        if kept:
            p.capabilities = keep_newer(p.capabilities, kept)
    if isinstance(old, dict) and old.get("endpoint_capabilities"):
        settings.endpoint_capabilities = keep_newer(settings.endpoint_capabilities, old["endpoint_capabilities"])


# ----------------------------------------------------------------------------------------------------------------
# API keys

# Key storage lives in core/secrets.py (keyring → 0600 key file → session memory); these are its names as the
# settings dialog, the window and the tests have always called them.

KeySource = secrets.KeySource
KeyProbe = secrets.KeyProbe


def key_storage_status() -> tuple[bool, str]:
    """Whether a usable OS keyring backend exists, and a Chinese explanation for the settings dialog
    (:func:`secrets.storage_status`). Does not read or write any key."""
    return secrets.storage_status()


def remember_key_for_session(name: str, key: str) -> None:
    """Keep ``key`` for provider ``name`` in memory until the program exits (an empty key forgets it)."""
    secrets.session_set(name, key)


def session_key(name: str) -> Optional[str]:
    """The key remembered for this run for provider ``name``, or None."""
    return secrets.session_get(name)


def forget_session_key(name: str) -> None:
    """Drop the in-memory key of provider ``name`` (no error if none)."""
    secrets.session_delete(name)


def clear_session_keys() -> None:
    """Drop every in-memory key."""
    secrets.session_clear()


def lookup_key(provider: Any) -> tuple[KeySource, Optional[str]]:
    """Where the key of ``provider`` comes from and the key itself: "env", "keyring", "file" (the 0600 key file
    used without a keyring), "session" or ``("none", None)`` (:func:`secrets.lookup`). Never raises."""
    return secrets.lookup(provider)


def resolve_key(provider: ProviderSettings) -> Optional[str]:
    """The API key for ``provider``, or None, in the order of :func:`lookup_key`. Never raises.
    ``provider`` may be any object with ``name``, ``api_key_env`` and ``keyring_service`` attributes."""
    return secrets.lookup(provider)[1]


def key_source(provider: ProviderSettings) -> KeySource:
    """Where :func:`resolve_key` would take the key from."""
    return secrets.lookup(provider)[0]


def store_key(name: str, key: str, service: str = DEFAULT_KEYRING_SERVICE) -> Literal["keyring", "file", "session"]:
    """Keep the key of provider ``name``: the OS keyring when usable, else the 0600 key file in the data folder,
    else (unwritable folder) session memory (:func:`secrets.store`). Returns where it went; ``ValueError`` for an
    empty key. The key is never logged."""
    return secrets.store(name, key, service)


def forget_key(name: str, service: str = DEFAULT_KEYRING_SERVICE) -> None:
    """Remove the key of provider ``name`` from the keyring, the key file and session memory (environment variables
    are left alone). Never raises."""
    secrets.forget(name, service)


def rename_key(old: str, new: str, service: str = DEFAULT_KEYRING_SERVICE) -> None:
    """A provider was renamed: move its stored keys to the new name (one already there wins). Never raises."""
    secrets.rename(old, new, service)

# ----------------------------------------------------------------------------------------------------------------
# connection test


class ConnectionReport(DeferredModel):  # built on first use (core.deferred)
    """Result of :func:`test_connection`.

    ok: the server answered a chat completion. latency_ms: wall time of the whole request in milliseconds
    (None when it failed before an answer). model: the model the server reported (or the configured one).
    message: a catalog message for the UI (``llm.test.ok`` "连接成功 · 812 ms · model" / "Connected · 812 ms · model")
    or the exact ``ModelError`` message, its key kept (issue 32: the window renders it in the user's language).
    kind: the ``ModelError`` kind on failure ("auth", "not_found", "network", …), else None.
    """

    ok: bool
    latency_ms: Optional[int] = None
    model: str = ""
    message: MsgText = ""
    kind: Optional[str] = None


async def test_connection(provider: ProviderSettings, api_key: Optional[str] = None) -> ConnectionReport:
    """Send one tiny real request (user message "ping", ``max_tokens`` 1, no tools, thinking off, no retries)
    through :class:`OpenAIChatModel` and report how it went. Never raises for a failed call (cancellation
    propagates); the client is always closed.

    ``api_key``: the key to send; None looks it up with :func:`resolve_key`; "" sends none.
    """
    key = resolve_key(provider) if api_key is None else (api_key.strip() or None)
    # a short read timeout: the test must answer in seconds, not after the chat's 120 s
    model = build_model(provider, api_key=key or "", max_retries=0, read_timeout=min(provider.read_timeout, 20.0),
                        total_timeout=min(provider.total_timeout, 30.0))
    request = ChatRequest(messages=[ChatMessage(role="user", content="ping")], max_tokens=1, thinking=False)
    started = time.perf_counter()
    try:
        response = await model.complete(request)
        latency = int(round((time.perf_counter() - started) * 1000))
    except ModelError as exc:
        return ConnectionReport(ok=False, model=provider.model, message=exc.message, kind=exc.kind)
    except Exception as exc:  # a bug or an odd URL: still a report, with the key blanked out
        text = mask_secrets(f"{type(exc).__name__}: {exc}", ([key] if key else []) + url_secrets(provider.base_url))
        return ConnectionReport(ok=False, model=provider.model, message=message("llm.test.failed", error=text),
                                kind="error")
    finally:
        try:
            await model.aclose()
        except Exception:
            pass
    name = response.model or provider.model
    return ConnectionReport(ok=True, latency_ms=latency, model=name, message=message("llm.test.ok", ms=latency, model=name))


# pytest must not collect the function above when a test module imports it by name.
test_connection.__test__ = False  # type: ignore[attr-defined]
