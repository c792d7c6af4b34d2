"""Card inspection: what a card file contains, as counts (``liyuan card inspect``; the import dialog)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

from ..ledger.mvu import load_initvars
from ..macros import MacroContext, apply_macros
from ..macros.ejs import check_template, has_template
from ..messages import message, render
from . import Card, load_card
from .th_scripts import card_th_library

#: An HTML block meant for display: an HTML document (``<!DOCTYPE html``, ``<html``, ``<head``, ``<body``) or a
#: ``<script``, ``<style`` or ``<div`` tag — tag names case-insensitive and followed by whitespace, ``>`` or
#: ``/`` (so ``<divider>`` or ``<bodyguard>`` do not count).
HTML_BLOCK = re.compile(r"<!doctype\s+html|<(?:html|head|body|script|style|div)(?=[\s>/])", re.IGNORECASE)
_INITVAR = "[initvar]"


def has_display_html(text: Any) -> bool:
    """True when ``text`` is a string containing an :data:`HTML_BLOCK`."""
    return isinstance(text, str) and HTML_BLOCK.search(text) is not None


def book_entries(book: Any) -> Iterator[dict[str, Any]]:
    """The entry objects of a card book or World Info file (``entries`` as a list or as an object keyed by uid);
    items that are not objects are skipped."""
    entries = book.get("entries") if isinstance(book, dict) else None
    if isinstance(entries, dict):
        entries = list(entries.values())
    for e in entries if isinstance(entries, list) else []:
        if isinstance(e, dict):
            yield e


def _enabled(e: dict[str, Any]) -> bool:
    if "enabled" in e:
        return bool(e["enabled"])
    return not bool(e.get("disable", False))


def regex_scripts(card: Card) -> list[dict[str, Any]]:
    """``data.extensions.regex_scripts`` (objects only; empty when absent or malformed)."""
    rs = card.extensions.get("regex_scripts")
    return [s for s in rs if isinstance(s, dict)] if isinstance(rs, list) else []


def _shows_on_screen(script: dict[str, Any]) -> bool:
    """A regex script can put its replacement on screen unless it is disabled or prompt-only (``promptOnly`` set
    and ``markdownOnly`` not: SillyTavern then applies it only to the outgoing prompt)."""
    if script.get("disabled"):
        return False
    return not (script.get("promptOnly") and not script.get("markdownOnly"))


def inspect_loaded(card: Card) -> dict[str, Any]:
    """The inspection summary of an already loaded card; see :func:`inspect_card` for the shape and rules."""
    entries = list(book_entries(card.character_book))
    titles = [str(e.get("comment") or "") + "\n" + str(e.get("name") or "") for e in entries]
    scripts = regex_scripts(card)
    status_bar = any(_shows_on_screen(s) and has_display_html(s.get("replaceString")) for s in scripts) or \
        any(has_display_html(g) for g in [card.first_mes, *card.alternate_greetings])
    return {
        "name": card.name,
        "spec": card.spec,
        "source_format": card.source_format,
        "lorebook": {"entries": len(entries), "constant": sum(1 for e in entries if e.get("constant") and _enabled(e))},
        "regex_scripts": len(scripts),
        "status_bar_html": status_bar,
        "mvu": {"initvar_entries": sum(1 for t in titles if _INITVAR in t.lower())},
        "greetings": (1 if card.first_mes.strip() else 0) + len(card.alternate_greetings),
        "templates": templates_of(card),
        "th_scripts": _th_summary(card),
        "warnings": list(card.warnings) + _initvar_warnings(card) + list(card_th_library(card).warnings),
    }


def _th_summary(card: Card) -> dict[str, Any]:
    """The card's TavernHelper script library in counts (:mod:`.th_scripts`)."""
    lib = card_th_library(card)
    return {"count": len(lib.scripts), "enabled": sum(1 for s in lib.scripts if s.enabled and s.folder_enabled),
            "buttons": sum(len(s.visible_buttons()) for s in lib.scripts),
            "mvu_loaders": sum(1 for s in lib.scripts if s.kind == "mvu_loader"), "era": lib.uses_era,
            "remote_imports": sum(len(s.remote) for s in lib.scripts), "shape": lib.shape,
            "variables": len(lib.variables)}


_TH_MACRO = re.compile(r"\{\{\s*(?:get|format)_(?:message|chat|character|preset|global)_variable\s*::", re.IGNORECASE)


def template_texts(card: Card) -> Iterator[tuple[str, str]]:
    """``(where, text)`` of every text of ``card`` that may hold a prompt template: the definition fields, the
    greetings, each enabled world-info entry and each regex script's replacement; ``where`` is a catalog message
    (``inspect.where.*``: 角色设定 / description, 世界书「title」 / lorebook “title” …)."""
    for where, text in (("description", card.description), ("personality", card.personality),
                        ("scenario", card.scenario), ("examples", card.mes_example), ("system", card.system_prompt),
                        ("post_history", card.post_history_instructions), ("first_mes", card.first_mes)):
        yield message("inspect.where." + where), text or ""
    for i, g in enumerate(card.alternate_greetings):
        yield message("inspect.where.alt", n=i + 1), g if isinstance(g, str) else ""
    for e in book_entries(card.character_book):
        if _enabled(e) and isinstance(e.get("content"), str):
            yield message("inspect.where.entry", title=str(e.get('comment') or e.get('name') or e.get('id', '?'))), \
                e["content"]
    for sc in regex_scripts(card):
        if isinstance(sc.get("replaceString"), str):
            yield message("inspect.where.regex", name=str(sc.get('scriptName') or '?')), sc["replaceString"]


def templates_of(card: Card) -> dict[str, Any]:
    """The card's prompt templates: ``{"ejs": N, "tavernhelper_macros": N, "where": [str], "broken": [{"where",
    "error"}]}`` — texts holding an EJS tag (ST-Prompt-Template; evaluated when the prompt is built), texts using
    TavernHelper's ``{{get_/format_…_variable::}}`` macros, where the EJS ones are, and the EJS ones that do not
    compile (checked in the template engine without running them, ``macros.ejs.check_template``).

    A text is checked as it is rendered: the template engine sees it after the macros (``macros.apply_macros``:
    ``{{user}}``, ``<user>``, ``{{char}}``, ``{{getvar::…}}`` … filled in, as ST-Prompt-Template runs after
    SillyTavern's ``substituteParams``), so ``<% const u = <user>; %>`` compiles. The macros get a context of their
    own (the card's name and fields; the user is the card's persona name, else "User"), thrown away after."""
    ctx = MacroContext(char=card.name, user=card.persona_name or "User", description=card.description or "",
                       personality=card.personality or "", scenario=card.scenario or "",
                       mes_examples=card.mes_example or "")
    ejs: list[str] = []
    broken: list[dict[str, str]] = []
    th = 0
    for where, text in template_texts(card):
        if _TH_MACRO.search(text):
            th += 1
        if has_template(text):
            ejs.append(where)
            err = check_template(apply_macros(text, ctx.model_copy(update={"variables": {}})))
            if err:
                broken.append({"where": where, "error": err})
    return {"ejs": len(ejs), "tavernhelper_macros": th, "where": ejs, "broken": broken}


def _initvar_warnings(card: Any) -> list[str]:
    """Problems parsing the card's [InitVar] entries (broken YAML/JSON, a list at the top level): MVU would start
    the chat with those variables missing, so the card author should hear about it."""
    try:
        return list(load_initvars(card)[1])
    except Exception as e:  # the inspection itself never fails on a strange book
        return [message("inspect.initvar_failed", error=str(e))]


def inspect_card(path: str | Path) -> dict[str, Any]:
    """Load the card file at ``path`` (any format :func:`load_card` reads) and summarise it::

        {"name": str, "spec": "v1"|"v2"|"v3", "source_format": "png"|"json"|"charx",
         "lorebook": {"entries": N, "constant": N}, "regex_scripts": N, "status_bar_html": bool,
         "mvu": {"initvar_entries": N}, "greetings": N,
         "templates": {"ejs": N, "tavernhelper_macros": N, "where": [str], "broken": [{"where", "error"}]},
         "th_scripts": {"count": N, "enabled": N, "buttons": N, "mvu_loaders": N, "era": bool,
                        "remote_imports": N, "shape": "current"|"legacy"|"none", "variables": N},
         "warnings": [str, …]}

    * ``lorebook.entries``: entry objects in ``character_book.entries`` (0 without a book);
      ``lorebook.constant``: those with ``constant: true`` that are enabled (``enabled`` not false; for WI-shaped
      entries ``disable`` not true) — the always-on (常驻) entries SillyTavern would inject.
    * ``regex_scripts``: objects in ``data.extensions.regex_scripts``, disabled ones included.
    * ``status_bar_html``: True when a regex script that can reach the screen (not disabled, not prompt-only)
      has a ``replaceString`` containing an HTML block, or when ``first_mes`` or an alternate greeting does. An
      HTML block is ``<!DOCTYPE html``, or a tag ``<html``/``<head``/``<body``/``<script``/``<style``/``<div``
      (case-insensitive, whole tag name; fenced in ```` ``` ```` or not). This is the status bar that
      JS-Slash-Runner renders in an iframe (or plain SillyTavern shows as static HTML).
    * ``mvu.initvar_entries``: entries whose ``comment`` (or ``name``) contains ``[initvar]``, any case, enabled
      or not — MagVarUpdate reads them even when disabled.
    * ``greetings``: 1 for a non-blank ``first_mes`` + the number of ``alternate_greetings``
      (``group_only_greetings`` not counted).
    * ``templates``: the prompt templates (:func:`templates_of`): EJS texts, TavernHelper macro texts, and the EJS
      ones that fail to compile.
    * ``th_scripts``: the TavernHelper script library (``extensions.tavern_helper`` or the legacy
      ``TavernHelper_scripts``, :mod:`.th_scripts`): scripts, those enabled by the card (their folder too), visible
      buttons, MVU loaders (not run: the scribe plays MVU), whether it is an ERA card, remote imports, the storage
      shape and how many character variables it sets.
    * ``warnings``: what the reader repaired or ignored (the script library's problems included).

    Raises :class:`CardError` like :func:`load_card`."""
    return inspect_loaded(load_card(path))


_FORMAT_NAMES = {"png": "PNG", "json": "JSON", "charx": "CHARX"}


def format_inspect(info: dict[str, Any], lang: str = "zh") -> str:
    """The inspection summary (:func:`inspect_card`'s dict) as a few lines for the terminal, in ``lang`` ("zh" or
    "en"; every line a catalog message, ``inspect.*``)."""
    lb = info["lorebook"]
    msgs: list[Any] = [
        message("inspect.head", name=info["name"], spec=info["spec"].upper(),
                format=_FORMAT_NAMES.get(info["source_format"], info["source_format"])),
        message("inspect.greetings", n=info["greetings"]),
        message("inspect.book_constant", n=lb["entries"], constant=lb["constant"]) if lb["entries"]
        else message("inspect.book", n=lb["entries"]),
        message("inspect.regex", n=info["regex_scripts"]),
        message("inspect.html_yes" if info["status_bar_html"] else "inspect.html_no"),
        message("inspect.mvu", n=info["mvu"]["initvar_entries"]),
    ]
    t = info.get("templates") or {}
    if t.get("ejs") or t.get("tavernhelper_macros"):
        where = render(message("inspect.templates_where", where=list(t["where"])), lang) if t.get("where") else ""
        msgs.append(render(message("inspect.templates", ejs=t.get("ejs", 0), th=t.get("tavernhelper_macros", 0)),
                           lang) + where)
    msgs += [message("inspect.broken", where=b["where"], error=b["error"]) for b in t.get("broken") or []]
    th = info.get("th_scripts") or {}
    if th.get("count"):
        more = ((render(message("inspect.th_mvu", n=th["mvu_loaders"]), lang) if th.get("mvu_loaders") else "")
                + (render(message("inspect.th_era"), lang) if th.get("era") else "")
                + (render(message("inspect.th_remote", n=th["remote_imports"]), lang) if th.get("remote_imports")
                   else ""))
        msgs.append(message("inspect.th", n=th["count"], enabled=th.get("enabled", 0), buttons=th.get("buttons", 0),
                            more=more))
    msgs += [message("inspect.note", text=w) for w in info["warnings"]]
    return "\n".join(render(m, lang) for m in msgs)
