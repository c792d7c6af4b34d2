"""The migration's plan and report (pydantic; the report is saved as JSON and Markdown beside the imported data).

Item kinds: ``card`` (a character card with its embedded book), ``chat`` (one ``.jsonl`` of a card), ``book`` (a
``worlds/*.json`` world book), ``preset`` (an ``OpenAI Settings/*.json`` chat-completion preset), ``persona``
(one persona of ``settings.json``), ``avatar`` (a ``User Avatars/`` image of a persona), ``settings`` (the
settings that change how a chat plays). Actions: ``new`` (imported under its own name), ``rename`` (a different
item has that name here: imported as 「名字-2」), ``update`` (a world book or card of that name is here with other
content: the newer one replaces it — the chats using it are offered what changed), ``same`` (an identical item is
already here: skipped), ``skip``
(not importable, ``reason`` says why), ``error`` (damaged: ``reason`` says what is wrong).
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

from ..llm.errors import mask_secrets, url_secrets
from ..messages import Msg, MsgText, message, render

Kind = Literal["card", "chat", "book", "preset", "persona", "avatar", "settings", "group"]
Action = Literal["new", "rename", "update", "same", "skip", "error"]

KINDS: tuple[str, ...] = ("card", "chat", "book", "preset", "persona", "avatar", "settings", "group")
ACTIONS: tuple[str, ...] = ("new", "rename", "same", "skip", "error")


def kind_label(kind: str, plural: bool = False) -> Msg:
    """The user-facing name of an item kind (``migrate.kind.*``; ``plural``: ``migrate.kinds.*`` for totals)."""
    return message(("migrate.kinds." if plural else "migrate.kind.") + kind)


def action_label(action: str) -> Msg:
    """The user-facing name of an action (``migrate.action.*``: imported, imported under a new name …)."""
    return message("migrate.action." + action)


class PlanItem(BaseModel):
    """One thing found: ``kind``, ``source`` (path relative to the SillyTavern folder), ``name`` (as SillyTavern
    names it), ``target`` (the name it gets here; differs from ``name`` on ``rename``), ``action``, ``reason``
    (Chinese, for skip/error/rename), ``size`` (bytes of the source file), ``owner`` (a chat's card file stem; a
    persona's avatar file), ``links`` (a card's linked world books; a chat's attached book), ``detail`` (free
    facts: a chat's message count, the book's entry count …)."""

    kind: Kind
    source: str
    name: str
    target: str = ""
    action: Action = "new"
    reason: MsgText = ""
    size: int = 0
    owner: str = ""
    links: list[str] = Field(default_factory=list)
    detail: dict[str, Any] = Field(default_factory=dict)


class NotImported(BaseModel):
    """What is found but never imported (group chats, Quick Replies, extensions, themes, secrets.json …):
    ``what`` (Chinese label), ``count`` (files or folders), ``why``."""

    what: MsgText
    count: int
    why: MsgText


class MigrationPlan(BaseModel):
    """What :func:`core.migrate.scan` found: ``source`` (the path given), ``root`` (the SillyTavern user folder
    actually read; inside ``temp_dir`` for a zip), ``layout`` ("data/<user>" | "public" | "user folder"),
    ``home`` (our data folder at scan time), ``items``, ``not_imported``, ``problems`` (Chinese lines: refused zip
    members, an unreadable settings.json …), ``notes`` (what else the user should know), ``settings`` (the
    settings that would be taken over: ``user_name``, ``world_info`` (SillyTavern names → values), ``api``
    (``base_url``/``model``/``source``), ``default_preset``, ``default_persona``), ``temp_dir`` (the extracted
    zip; :func:`core.migrate.run` removes it, :meth:`discard` too)."""

    source: str
    root: str
    layout: str = ""
    home: str = ""
    items: list[PlanItem] = Field(default_factory=list)
    not_imported: list[NotImported] = Field(default_factory=list)
    problems: list[MsgText] = Field(default_factory=list)
    notes: list[MsgText] = Field(default_factory=list)
    settings: dict[str, Any] = Field(default_factory=dict)
    temp_dir: Optional[str] = None

    def of(self, kind: str) -> list[PlanItem]:
        """The items of one kind, in scan order."""
        return [i for i in self.items if i.kind == kind]

    def counts(self) -> dict[str, dict[str, int]]:
        """Per kind: how many items per action (``{"card": {"new": 2, "same": 1}, …}``)."""
        out: dict[str, dict[str, int]] = {}
        for i in self.items:
            out.setdefault(i.kind, {}).setdefault(i.action, 0)
            out[i.kind][i.action] += 1
        return out

    def size(self, kind: Optional[str] = None) -> int:
        """Bytes of the source files of ``kind`` (all kinds when None)."""
        return sum(i.size for i in self.items if kind is None or i.kind == kind)

    def to_import(self) -> int:
        """How many items :func:`core.migrate.run` would write (new + rename + update)."""
        return sum(1 for i in self.items if i.action in ("new", "rename", "update"))

    def discard(self) -> None:
        """Remove the extracted zip (when there is one) without importing."""
        if self.temp_dir:
            import shutil

            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = None

    def masked(self, text: str) -> str:
        """``text`` with any credentials of the SillyTavern API URL (``https://user:pass@host``) masked as ``***``
        (every text shown or saved goes through this)."""
        url = str((self.settings.get("api") or {}).get("base_url") or "")
        return mask_secrets(text, url_secrets(url) if url else ())

    def summary_lines(self, lang: str = "zh") -> list[str]:
        """The plan in ``lang`` ("zh" or "en"), one line each: per kind counts and size, conflicts, what is not
        imported. Every line is a catalog message (``migrate.sum.*``) rendered in ``lang``."""
        out = [message("migrate.sum.head", source=self.source, layout=self.layout)]
        counts = self.counts()
        sep = render(message("migrate.sum.sep"), lang)
        for kind in KINDS:
            c = counts.get(kind)
            if not c:
                continue
            parts = sep.join(render(message("migrate.sum.part", action=action_label(a), n=n), lang)
                             for a, n in c.items())
            out.append(message("migrate.sum.kind", label=kind_label(kind, plural=True), n=sum(c.values()),
                               parts=parts, size=human_size(self.size(kind))))
        for i in self.items:
            if i.action == "rename":
                out.append(message("migrate.sum.conflict", kind=kind_label(i.kind), name=i.name, target=i.target))
        for i in self.of("chat"):
            if i.detail.get("authors_note") and i.action in ("new", "rename"):
                out.append(message("migrate.sum.authors_note", kind=kind_label("chat"), name=i.name,
                                   note=i.detail["authors_note"]))
        for i in self.of("settings"):
            out.extend(message("migrate.sum.change", change=c) for c in i.detail.get("changes", []))
            out.extend(message("migrate.sum.keep", kept=c) for c in i.detail.get("kept", []))
        for n in self.not_imported:
            out.append(message("migrate.sum.not_imported", what=n.what, n=n.count, why=n.why))
        out.extend(message("migrate.sum.problem", text=p) for p in self.problems)
        out.extend(message("migrate.sum.note", text=n) for n in self.notes)
        return [self.masked(render(line, lang)) for line in out]


class MigrationReport(BaseModel):
    """What :func:`core.migrate.run` did: ``plan`` (the items with their final action — an item that failed while
    importing becomes ``error`` with the reason), ``imported`` (per kind, items written), ``skipped`` (per kind,
    identical items skipped), ``failed`` (per kind), ``settings_changed`` (Chinese lines: what settings were
    taken over) and ``settings_kept`` (what was already set here and kept), ``provider`` (the provider that holds
SillyTavern's connection here when it is not the current one — the window offers the switch; "" otherwise), ``cancelled`` (True: nothing was
    written), ``report_dir`` (where ``报告.md``/``report.json`` were saved; "" for a dry run or a cancel),
    ``started``/``finished`` (ms since the epoch), ``created`` (data-folder paths written, relative)."""

    plan: MigrationPlan
    imported: dict[str, int] = Field(default_factory=dict)
    skipped: dict[str, int] = Field(default_factory=dict)
    failed: dict[str, int] = Field(default_factory=dict)
    settings_changed: list[MsgText] = Field(default_factory=list)
    settings_kept: list[MsgText] = Field(default_factory=list)
    provider: str = ""
    cancelled: bool = False
    dry_run: bool = False
    report_dir: str = ""
    started: int = 0
    finished: int = 0
    created: list[str] = Field(default_factory=list)

    def markdown(self, lang: str = "zh") -> str:
        """The report as Markdown in ``lang`` ("zh" or "en"): totals per kind, each item with what happened,
        settings taken over, what was not imported and why (``secrets.json`` is never read), problems."""
        p = self.plan

        def t(key: str, **params: Any) -> str:
            return render(message(key, **params), lang)

        head = t("migrate.md.dry_run") if self.dry_run else t("migrate.md.cancelled") if self.cancelled else ""
        out = [t("migrate.md.title", head=head), "", t("migrate.md.source", source=p.source, layout=p.layout),
               t("migrate.md.home", home=p.home), ""]
        out += [t("migrate.md.totals"), "", t("migrate.md.table"), "|---|---|---|---|"]
        for kind in KINDS:
            items = p.of(kind)
            if not items:
                continue
            bad = sum(1 for i in items if i.action in ("error", "skip"))
            label = t("migrate.kinds." + kind)
            out.append(f"| {label} | {self.imported.get(kind, 0)} | {self.skipped.get(kind, 0)} | {bad} |")
        out += ["", t("migrate.md.details"), ""]
        for i in p.items:
            out.append(t("migrate.md.item", kind=kind_label(i.kind), name=i.name,
                         to=t("migrate.md.to", target=i.target) if i.target and i.target != i.name else "",
                         action=action_label(i.action),
                         reason=t("migrate.md.reason", reason=i.reason) if i.reason else "",
                         links=t("migrate.md.links", books=list(i.links)) if i.links else "",
                         note=t("migrate.md.note", note=i.detail["authors_note"]) if i.detail.get("authors_note")
                         else ""))
        if self.settings_changed or self.settings_kept:
            out += ["", t("migrate.md.settings"), ""]
            out += [f"- {render(s, lang)}" for s in self.settings_changed]
            out += [t("migrate.md.kept", kept=s) for s in self.settings_kept]
        if p.not_imported:  # the heading only when something was left out
            out += ["", t("migrate.md.not_imported_head"), ""]
            out += [t("migrate.md.not_imported", what=n.what, n=n.count, why=n.why) for n in p.not_imported]
        if p.problems or p.notes:
            out += ["", t("migrate.md.problems"), ""]
            out += [f"- {render(x, lang)}" for x in p.problems + p.notes]
        return p.masked("\n".join(out) + "\n")

    def to_json(self, lang: str = "zh") -> str:
        """The report as indented JSON (credentials in URLs masked, :meth:`MigrationPlan.masked`): the field names
        and the kind/action values are stable; the human texts (reasons, notes, what was not imported and why,
        the settings lines) are in ``lang``."""
        import json

        return self.plan.masked(json.dumps(_rendered(self.model_dump(), lang), ensure_ascii=False, indent=1,
                                           default=str))


def _rendered(value: Any, lang: str) -> Any:
    """``value`` (a dump) with every catalog message in it rendered in ``lang``."""
    if isinstance(value, Msg):
        return value.render(lang)
    if isinstance(value, dict):
        return {k: _rendered(v, lang) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rendered(v, lang) for v in value]
    return value


def error_text(e: BaseException) -> str:
    """What an exception says, for an item's ``reason``: the :class:`~core.messages.Msg` it carries (its key kept,
    so the report renders in the reader's language), else an OSError's ``strerror``, else its text."""
    if e.args and isinstance(e.args[0], Msg):
        return e.args[0]
    return getattr(e, "strerror", None) or str(e)


def human_size(n: int) -> str:
    """Bytes as 12 B / 3.4 KB / 5.6 MB / 1.2 GB."""
    f = float(n)
    for unit in ("B", "KB", "MB"):
        if f < 1024:
            return f"{f:.0f} {unit}" if unit == "B" else f"{f:.1f} {unit}"
        f /= 1024
    return f"{f:.1f} GB"
