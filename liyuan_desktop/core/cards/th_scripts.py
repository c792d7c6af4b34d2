"""TavernHelper (JS-Slash-Runner) *script libraries* carried by cards and presets (issue 27): reading, listing,
the permission to run them and the user's own on/off switches.

Storage shapes, as JS-Slash-Runner reads them (``src/type/scripts.ts``, ``src/type/backward.ts``,
``src/store/settings/character.ts``, checked at commit c62cdc36; design/card-runtime.md):

* current — ``data.extensions.tavern_helper = {"scripts": [...], "variables": {...}}``; SillyTavern may store that
  object as an array of ``[key, value]`` pairs (TavernHelper reads it with ``Object.fromEntries``). ``scripts`` holds
  scripts ``{"type": "script", "enabled", "name", "id", "content", "info", "button": {"enabled", "buttons":
  [{"name", "visible"}]}, "data"}`` and folders ``{"type": "folder", "enabled", "name", "id", "scripts": [...]}``.
  A script written by an earlier 4.x keeps its buttons at the top (``"buttons_enabled"``, ``"buttons"``): read too.
* legacy — ``data.extensions.TavernHelper_scripts``: items ``{"type": "script", "value": {...}}``, folders
  ``{"type": "folder", "value": [...]}`` or bare script objects; the character variables in
  ``data.extensions.TavernHelper_characterScriptVariables``. TavernHelper reads them only when ``tavern_helper`` is
  absent (it then migrates them); so do we. Legacy folders count as enabled, as TavernHelper's migration sets.
* presets carry ``extensions.tavern_helper`` the same way (no legacy key).

A script runs in TavernHelper when its scope is allowed (the user answered 「是否现在就启用它们?」 once for that
card or preset), its folder is enabled (top-level scripts have none) and its own ``enabled`` is true. Here the
user's own switch for one script (:mod:`.meta`, never written into the card) wins over the card's ``enabled``.

Reading is bounded and never raises: at most :data:`MAX_SCRIPTS` scripts, folders :data:`MAX_DEPTH` deep, a
script's text at most :data:`MAX_CONTENT` characters (a longer one is listed but marked ``too_big``: it will not
run); an item of the wrong type becomes a warning naming it (Chinese, catalog keys ``th.*``).

Each script is classified (``kind``): ``mvu_loader`` — its only code is importing MagVarUpdate's bundle (our scribe
plays MVU, so it never runs); ``era_framework`` — the ERA variable framework (``<VariableInsert>`` /
``<VariableEdit>`` / ``<VariableDelete>``, whose commands the ledger applies itself: :mod:`..ledger.mvu.commands`;
the framework's script still runs like any other); ``plain`` — anything else.

For a chat, :func:`chat_script_scopes` gathers the preset's and the card's libraries with the user's records
(:class:`ScriptScope`: ``needs_asking``, ``runnable()``) and :func:`script_buttons` the buttons to show; listings use
:func:`script_rows`. The character / preset variables are :func:`card_th_variables` / :func:`preset_th_variables`
(the chat's tables: ``macros.variables_scopes``).
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Literal, Optional

from pydantic import BaseModel, Field

from ..messages import Msg, MsgText, message

__all__ = ["ScriptButton", "ThScript", "ThLibrary", "read_th_library", "card_th_library", "preset_th_library",
           "script_imports", "script_kind", "uses_era", "iter_runnable", "script_rows", "card_th_variables", "preset_th_variables", "ScriptScope", "chat_script_scopes", "script_buttons", "MAX_SCRIPTS", "MAX_DEPTH", "MAX_CONTENT"]

#: the most scripts (folders' scripts included) read from one card or preset; the rest are dropped with a warning
MAX_SCRIPTS = 500
#: how deep folders may nest (TavernHelper itself has one level; deeper ones are read, with a warning)
MAX_DEPTH = 4
#: the longest script text (characters) kept runnable; longer ones are listed with ``too_big``
MAX_CONTENT = 4 * 1024 * 1024
#: the most buttons kept per script
MAX_BUTTONS = 100
#: the most import specifiers listed per script
MAX_IMPORTS = 200

Kind = Literal["plain", "mvu_loader", "era_framework"]


class ScriptButton(BaseModel):
    """A button a script declares (shown above the input when the script runs and ``visible``)."""

    name: str
    visible: bool = True


class ThScript(BaseModel):
    """One script of a library. ``folder``: the names of the folders it sits in, outer first ([] at the top);
    ``folder_enabled``: all those folders are enabled; ``enabled``: the card's own flag (the user's switch is applied
    by :func:`.meta.scripts_state`); ``imports``: every module specifier it loads (static ``import … from 'X'`` and
    ``import 'X'``, dynamic ``import('X')``, ``<script src="X">`` inside strings), in order, duplicates dropped;
    ``remote``: those that are http(s) URLs; ``loads_mvu``: one of them is MagVarUpdate's bundle; ``too_big``: the
    text was over :data:`MAX_CONTENT` (listed, never run; ``content`` is then empty)."""

    id: str
    name: str
    enabled: bool = False
    folder: list[str] = Field(default_factory=list)
    folder_enabled: bool = True
    content: str = ""
    info: str = ""
    buttons_enabled: bool = True
    buttons: list[ScriptButton] = Field(default_factory=list)
    data: dict[str, Any] = Field(default_factory=dict)
    imports: list[str] = Field(default_factory=list)
    remote: list[str] = Field(default_factory=list)
    loads_mvu: bool = False
    kind: Kind = "plain"
    too_big: bool = False

    def visible_buttons(self) -> list[str]:
        """The names of the buttons shown above the input while the script runs (TavernHelper: the script's buttons
        enabled and the button visible)."""
        return [b.name for b in self.buttons if b.visible] if self.buttons_enabled else []


class ThLibrary(BaseModel):
    """The script library of a card or preset: ``source`` card | preset; ``shape`` current | legacy | none;
    ``scripts`` in the library's order (folders flattened); ``variables`` the character (card) or preset scope's
    initial variables; ``warnings`` what was dropped or repaired (catalog messages, Chinese text)."""

    source: Literal["card", "preset"] = "card"
    shape: Literal["current", "legacy", "none"] = "none"
    scripts: list[ThScript] = Field(default_factory=list)
    variables: dict[str, Any] = Field(default_factory=dict)
    warnings: list[MsgText] = Field(default_factory=list)

    def by_id(self, script_id: str) -> Optional[ThScript]:
        """The script with id ``script_id``, or None."""
        return next((s for s in self.scripts if s.id == script_id), None)

    @property
    def uses_era(self) -> bool:
        """Whether one of the scripts is the ERA variable framework."""
        return any(s.kind == "era_framework" for s in self.scripts)


# -- imports -------------------------------------------------------------------------------------------------------
# Literal searches, each bounded: every ``import`` token looks at most _WINDOW characters ahead, so the scan is
# linear in the text (the note of commit 5e07f36: no pattern that backtracks over a run of spaces).
_IMPORT = re.compile(r"(?<![\w$.])import\b")
_SCRIPT_SRC = re.compile(r"<script\b[^>]{0,400}?\bsrc\s*=\s*\\?[\"']?([^\"'\s>\\]{1,2000})", re.IGNORECASE)
_QUOTED = re.compile(r"\s{0,200}([\"'`])([^\"'`\n]{1,2000})\1")
_WINDOW = 600
_MVU = re.compile(r"magvarupdate|/mvu(?:@[^/]*)?/|mvu[._-]?bundle", re.IGNORECASE)
_ERA_MARK = re.compile(r"<?/?Variable(?:Insert|Edit|Delete)>|era:(?:insertByObject|updateByObject|insertByPath|"
                       r"updateByPath)|ERA[ _-]?(?:变量框架|Variable Framework|framework)", re.IGNORECASE)


def script_imports(content: str) -> list[str]:
    """The module specifiers ``content`` loads, in order, duplicates dropped, at most :data:`MAX_IMPORTS`: static
    ``import x from 'X'`` / ``import {a} from "X"`` / ``import 'X'``, dynamic ``import('X')`` (a quoted literal only),
    and ``<script src="X">`` anywhere (HTML built in a string). Linear in the text."""
    out: dict[str, None] = {}
    for m in _IMPORT.finditer(content):
        if len(out) >= MAX_IMPORTS:
            break
        pos = m.end()
        while pos < len(content) and content[pos] in " \t\r\n":
            pos += 1
        if pos >= len(content):
            break
        c = content[pos]
        if c == "(":
            q = _QUOTED.match(content, pos + 1)
            if q:
                out.setdefault(q.group(2).strip(), None)
        elif c in "\"'":
            q = _QUOTED.match(content, pos)
            if q:
                out.setdefault(q.group(2).strip(), None)
        elif c == "." or c == "=":  # import.meta, a variable called import
            continue
        else:
            end = min(len(content), pos + _WINDOW)
            f = content.find("from", pos, end)
            semi = content.find(";", pos, end)
            if f >= 0 and (semi < 0 or f < semi):
                q = _QUOTED.match(content, f + 4)
                if q:
                    out.setdefault(q.group(2).strip(), None)
    for m in _SCRIPT_SRC.finditer(content):
        if len(out) >= MAX_IMPORTS:
            break
        out.setdefault(m.group(1).strip(), None)
    return [k for k in out if k]


_LINE_COMMENT = re.compile(r"//[^\n]*")
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
#: what a loader with a fallback wraps its imports in (``try { await import(a) } catch (e) { await import(b) }``)
_GLUE = re.compile(r"\b(?:try|catch|finally|await)\b|\(\s{0,20}\w{0,40}\s{0,20}\)|[{};()]")
_IMPORT_STMT = re.compile(r"(?<![\w$.])import\s{0,50}(?:\(\s{0,50})?([\"'`])[^\"'`\n]{1,2000}\1\s{0,50}\)?\s{0,50};?")


def script_kind(name: str, content: str, imports: list[str]) -> Kind:
    """``mvu_loader`` when the script's code, comments, the MagVarUpdate imports and the ``try``/``catch``/``await``
    glue around them left out, is empty (an import of MVU's bundle, perhaps with a fallback mirror, and nothing else); ``era_framework``
    when it is the ERA variable framework (its name says ERA and it mentions the framework's tags or events, or an
    import names ``era``… and the tags appear); ``plain`` otherwise."""
    if any(_MVU.search(u) for u in imports):
        rest = _IMPORT_STMT.sub(lambda m: "" if _MVU.search(m.group(0)) else m.group(0), content)
        rest = _GLUE.sub("", _LINE_COMMENT.sub("", _BLOCK_COMMENT.sub("", rest)))
        if not rest.strip(" \t\r\n;"):
            return "mvu_loader"
    era = _ERA_MARK.search(content) is not None
    named = re.search(r"(?<![a-z])era(?![a-z])", name, re.IGNORECASE) is not None
    if era and (named or any(re.search(r"(?<![a-z])era(?![a-z])", u, re.IGNORECASE) for u in imports)
                or "era:" in content):
        return "era_framework"
    return "plain"


def uses_era(text: str) -> bool:
    """Whether ``text`` (a script, a world-info entry, a greeting) names ERA's variable commands."""
    return _ERA_MARK.search(text or "") is not None


# -- reading -------------------------------------------------------------------------------------------------------
def _as_object(value: Any) -> Optional[dict[str, Any]]:
    """A dict, or an array of ``[key, value]`` pairs turned into one (``Object.fromEntries``); None otherwise."""
    if isinstance(value, dict):
        return value
    if isinstance(value, list) and all(isinstance(p, (list, tuple)) and len(p) == 2 and isinstance(p[0], str)
                                       for p in value):
        return {p[0]: p[1] for p in value}
    return None


def _text(v: Any) -> str:
    """``z.coerce.string()`` for what scripts hold: strings as they are, numbers written out, other values ''."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    return ""


class _Reader:
    def __init__(self, where: str) -> None:
        self.where = where
        self.scripts: list[ThScript] = []
        self.warnings: list[str] = []
        self.dropped = 0

    def warn(self, msg: Msg) -> None:
        if len(self.warnings) < 50:
            self.warnings.append(msg)

    def items(self, items: Any, folder: list[str], folder_enabled: bool, depth: int, legacy: bool) -> None:
        if not isinstance(items, list):
            self.warn(message("th.not_list", where=self.where, kind=type(items).__name__))
            return
        for i, item in enumerate(items):
            label = "/".join([*folder, str(i + 1)])
            if not isinstance(item, dict):
                self.warn(message("th.bad_item", where=self.where, item=label, kind=type(item).__name__))
                continue
            kind = item.get("type")
            if legacy and kind == "script" and isinstance(item.get("value"), dict):
                self.script(item["value"], folder, folder_enabled, label, legacy=True)
            elif kind == "folder":
                name = _text(item.get("name")) or label
                if depth >= MAX_DEPTH:
                    self.warn(message("th.too_deep", where=self.where, item=name, max=MAX_DEPTH))
                    continue
                if depth >= 1:
                    self.warn(message("th.nested_folder", where=self.where, item=name))
                inner = item.get("value") if legacy and "scripts" not in item else item.get("scripts", [])
                on = True if legacy and "enabled" not in item else item.get("enabled") is True
                self.items(inner if inner is not None else [], [*folder, name], folder_enabled and on, depth + 1,
                           legacy)
            elif kind in (None, "script"):
                self.script(item, folder, folder_enabled, label, legacy)
            else:
                self.warn(message("th.bad_type", where=self.where, item=label, kind=str(kind)[:40]))

    def script(self, obj: dict[str, Any], folder: list[str], folder_enabled: bool, label: str, legacy: bool) -> None:
        if len(self.scripts) >= MAX_SCRIPTS:
            self.dropped += 1
            return
        name = _text(obj.get("name")) or ("" if legacy else "")
        sid = _text(obj.get("id")) or f"{self.where}-{len(self.scripts) + 1}"
        raw_content = obj.get("content")
        if raw_content is not None and not isinstance(raw_content, str):
            self.warn(message("th.bad_field", where=self.where, item=name or label, field="content",
                              kind=type(raw_content).__name__))
        content = _text(raw_content)
        too_big = len(content) > MAX_CONTENT
        if too_big:
            self.warn(message("th.too_big", where=self.where, item=name or label, size=len(content) // 1024,
                              max=MAX_CONTENT // 1024))
        enabled = obj.get("enabled")
        if enabled is not None and not isinstance(enabled, bool):
            self.warn(message("th.bad_field", where=self.where, item=name or label, field="enabled",
                              kind=type(enabled).__name__))
        button = obj.get("button")
        if isinstance(button, dict):
            b_enabled, raw_buttons = button.get("enabled", True), button.get("buttons", [])
        else:
            b_enabled, raw_buttons = obj.get("buttons_enabled", True), obj.get("buttons", [])
        buttons: list[ScriptButton] = []
        for b in raw_buttons if isinstance(raw_buttons, list) else []:
            if len(buttons) >= MAX_BUTTONS:
                break
            if isinstance(b, dict) and _text(b.get("name")):
                buttons.append(ScriptButton(name=_text(b.get("name"))[:200], visible=b.get("visible", True) is not False))
            elif isinstance(b, str) and b:
                buttons.append(ScriptButton(name=b[:200]))
        if raw_buttons and not isinstance(raw_buttons, list):
            self.warn(message("th.bad_field", where=self.where, item=name or label, field="buttons",
                              kind=type(raw_buttons).__name__))
        data = obj.get("data")
        scan = content[:MAX_CONTENT]
        imports = script_imports(scan)
        remote = [u for u in imports if u.lower().startswith(("http://", "https://", "//"))]
        self.scripts.append(ThScript(
            id=sid[:200], name=name[:200], enabled=enabled is True, folder=folder, folder_enabled=folder_enabled,
            content="" if too_big else content, info=_text(obj.get("info"))[:20000],
            buttons_enabled=b_enabled is not False, buttons=buttons, data=data if isinstance(data, dict) else {},
            imports=imports, remote=remote, loads_mvu=any(_MVU.search(u) for u in imports),
            kind=script_kind(name, scan, imports), too_big=too_big))


def read_th_library(extensions: Any, source: Literal["card", "preset"] = "card", where: str = "") -> ThLibrary:
    """The script library in an ``extensions`` object (a card's ``data.extensions`` or a preset's ``extensions``):
    shapes and rules in the module doc. ``where`` names the card or preset in warnings. Never raises."""
    where = where or message("migrate.kind.card" if source == "card" else "migrate.kind.preset")
    ext = extensions if isinstance(extensions, dict) else {}
    r = _Reader(where)
    lib = ThLibrary(source=source)
    if "tavern_helper" in ext:
        th = _as_object(ext.get("tavern_helper"))
        if th is None:
            r.warn(message("th.bad_root", where=where, kind=type(ext.get("tavern_helper")).__name__))
            th = {}
        lib.shape = "current"
        r.items(th.get("scripts", []), [], True, 0, legacy=False)
        variables = th.get("variables", {})
    elif source == "card" and ("TavernHelper_scripts" in ext or "TavernHelper_characterScriptVariables" in ext):
        lib.shape = "legacy"
        r.items(ext.get("TavernHelper_scripts") or [], [], True, 0, legacy=True)
        variables = ext.get("TavernHelper_characterScriptVariables") or {}
    else:
        return lib
    if isinstance(variables, dict):
        lib.variables = variables
    elif variables is not None:
        r.warn(message("th.bad_variables", where=where, kind=type(variables).__name__))
    if r.dropped:
        r.warn(message("th.too_many", where=where, max=MAX_SCRIPTS, dropped=r.dropped))
    _unique_ids(r.scripts, r)
    lib.scripts, lib.warnings = r.scripts, r.warnings
    return lib


def _unique_ids(scripts: list[ThScript], r: _Reader) -> None:
    """Two scripts with one id (a hand-edited card) get ``id#2``… so each switch names one script."""
    seen: dict[str, int] = {}
    for s in scripts:
        n = seen.get(s.id, 0) + 1
        seen[s.id] = n
        if n > 1:
            r.warn(message("th.duplicate_id", where=r.where, id=s.id))
            s.id = f"{s.id}#{n}"


def card_th_library(card: Any) -> ThLibrary:
    """The script library of a :class:`~liyuan_desktop.core.cards.Card` (its ``extensions``)."""
    return read_th_library(getattr(card, "extensions", None), "card", getattr(card, "name", "") or "")


def preset_th_library(preset: Any) -> ThLibrary:
    """The script library of a preset: a ``Preset`` (its ``raw`` JSON as read) or the preset's JSON object."""
    raw = preset if isinstance(preset, dict) else getattr(preset, "raw", None)
    ext = raw.get("extensions") if isinstance(raw, dict) else None
    return read_th_library(ext, "preset", getattr(preset, "name", "") or "")


def iter_runnable(lib: ThLibrary, allowed: bool, switches: Optional[dict[str, bool]] = None) -> Iterator[ThScript]:
    """The scripts that run: the scope ``allowed``, the script's folders enabled, its switch on (the user's
    ``switches[id]`` when set, else the card's ``enabled``), not too big, and not an MVU loader (our scribe plays
    MVU)."""
    if not allowed:
        return
    for s in lib.scripts:
        on = (switches or {}).get(s.id, s.enabled)
        if on and s.folder_enabled and not s.too_big and s.kind != "mvu_loader":
            yield s


def script_rows(lib: ThLibrary, allowed: Optional[bool], switches: Optional[dict[str, bool]] = None
                ) -> list[dict[str, Any]]:
    """The library as rows for listings (``liyuan card scripts --json``, the window's script list), in order::

        {"id", "name", "enabled", "card_enabled", "switched", "folder": [str], "folder_enabled", "buttons":
         [{"name", "visible"}], "buttons_enabled", "imports": [str], "remote": [str], "kind", "loads_mvu",
         "too_big", "allowed": bool|None, "runs": bool}

    ``enabled``: the user's switch when set (``switched`` True), else the card's flag; ``allowed``: the scope's
    permission (None = never asked); ``runs``: whether the script runs (:func:`iter_runnable`)."""
    running = {s.id for s in iter_runnable(lib, allowed is True, switches)}
    rows: list[dict[str, Any]] = []
    for s in lib.scripts:
        sw = (switches or {}).get(s.id)
        rows.append({"id": s.id, "name": s.name, "enabled": s.enabled if sw is None else sw,
                     "card_enabled": s.enabled, "switched": sw is not None, "folder": list(s.folder),
                     "folder_enabled": s.folder_enabled, "buttons": [b.model_dump() for b in s.buttons],
                     "buttons_enabled": s.buttons_enabled, "imports": list(s.imports), "remote": list(s.remote),
                     "kind": s.kind, "loads_mvu": s.loads_mvu, "too_big": s.too_big, "allowed": allowed,
                     "runs": s.id in running})
    return rows


def _variables_of(extensions: Any, legacy: bool) -> dict[str, Any]:
    ext = extensions if isinstance(extensions, dict) else {}
    if "tavern_helper" in ext:
        th = _as_object(ext.get("tavern_helper")) or {}
        v = th.get("variables")
    elif legacy:
        v = ext.get("TavernHelper_characterScriptVariables")
    else:
        v = None
    return v if isinstance(v, dict) else {}


def card_th_variables(card: Any) -> dict[str, Any]:
    """The card's character-scope variables (``tavern_helper.variables``, else the legacy
    ``TavernHelper_characterScriptVariables``); {} when none. Reads nothing else (cheap: no script is scanned).
    The dict is the card's own: copy before changing it."""
    return _variables_of(getattr(card, "extensions", None), True)


def preset_th_variables(preset: Any) -> dict[str, Any]:
    """A preset's preset-scope variables (``extensions.tavern_helper.variables``; a ``Preset`` or its JSON object,
    None allowed); {} when none. The dict is the preset's own: copy before changing it."""
    raw = preset if isinstance(preset, dict) else getattr(preset, "raw", None)
    return _variables_of(raw.get("extensions") if isinstance(raw, dict) else None, False)


class ScriptScope(BaseModel):
    """One scope's scripts for a chat: ``source`` card | preset, ``name`` the card's or preset's name, ``library``,
    and the user's record (``allowed`` None = never asked; ``switches``)."""

    source: Literal["card", "preset"]
    name: str
    library: ThLibrary
    allowed: Optional[bool] = None
    switches: dict[str, bool] = Field(default_factory=dict)

    @property
    def needs_asking(self) -> bool:
        """The user has never answered for it and it has a script that would run once allowed (TavernHelper asks
        once, when the card or preset is first opened)."""
        return self.allowed is None and any(True for _ in iter_runnable(self.library, True, self.switches))

    def runnable(self) -> list[ThScript]:
        """The scripts that run now (:func:`iter_runnable` with the user's record)."""
        return list(iter_runnable(self.library, self.allowed is True, self.switches))


def chat_script_scopes(card: Any, preset: Any = None, presets_folder: Any = None) -> list[ScriptScope]:
    """The script scopes of a chat, in TavernHelper's order (its global scripts aside: Liyuan has none): the
    preset's (when ``preset`` — a ``Preset`` or None — has scripts and ``presets_folder``, the preset library, is
    given), then the card's. Each with the user's record from :mod:`.meta`. Never raises on a broken record."""
    from .meta import card_th_permission, preset_th_permission

    out: list[ScriptScope] = []
    if preset is not None and presets_folder is not None:
        lib = preset_th_library(preset)
        if lib.scripts:
            name = str(getattr(preset, "name", "") or "")
            perm = preset_th_permission(presets_folder, name)
            out.append(ScriptScope(source="preset", name=name, library=lib, allowed=perm.allowed,
                                   switches=perm.switches))
    lib = card_th_library(card)
    if lib.scripts:
        perm = card_th_permission(card)
        out.append(ScriptScope(source="card", name=str(getattr(card, "name", "") or ""), library=lib,
                               allowed=perm.allowed, switches=perm.switches))
    return out


def script_buttons(scopes: list[ScriptScope]) -> list[tuple[str, str]]:
    """``(script id, button name)`` of every visible button of the scripts that run, in order (TavernHelper shows
    them above the input, script by script)."""
    return [(s.id, b) for sc in scopes for s in sc.runnable() for b in s.visible_buttons()]
