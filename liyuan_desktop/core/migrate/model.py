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

Kind = Literal["card", "chat", "book", "preset", "persona", "avatar", "settings", "group"]
Action = Literal["new", "rename", "update", "same", "skip", "error"]

KIND_LABELS: dict[str, str] = {"card": "角色卡", "chat": "聊天记录", "book": "世界书", "preset": "预设",
                               "persona": "人设", "avatar": "人设头像", "settings": "设置", "group": "群组"}
ACTION_LABELS: dict[str, str] = {"new": "导入", "rename": "改名导入", "same": "已有相同的，跳过", "skip": "不导入",
                                 "error": "损坏，跳过"}


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
    reason: str = ""
    size: int = 0
    owner: str = ""
    links: list[str] = Field(default_factory=list)
    detail: dict[str, Any] = Field(default_factory=dict)


ACTION_LABELS["update"] = "替换为新版"  # a re-run of the migration brings a newer book or card (issue 33 §4)


class NotImported(BaseModel):
    """What is found but never imported (group chats, Quick Replies, extensions, themes, secrets.json …):
    ``what`` (Chinese label), ``count`` (files or folders), ``why``."""

    what: str
    count: int
    why: str


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
    problems: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
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

    def summary_lines(self) -> list[str]:
        """The plan in Chinese, one line each: per kind counts and size, conflicts, what is not imported."""
        out = [f"SillyTavern 数据：{self.source}（{self.layout}）"]
        counts = self.counts()
        for kind, label in KIND_LABELS.items():
            c = counts.get(kind)
            if not c:
                continue
            parts = "，".join(f"{ACTION_LABELS[a]} {n}" for a, n in c.items())
            out.append(f"  {label}：{sum(c.values())} 个（{parts}），{human_size(self.size(kind))}")
        for i in self.items:
            if i.action == "rename":
                out.append(f"  同名冲突：{KIND_LABELS[i.kind]}「{i.name}」→「{i.target}」")
        for i in self.of("chat"):
            if i.detail.get("authors_note") and i.action in ("new", "rename"):
                out.append(f"  {KIND_LABELS['chat']}「{i.name}」带上{i.detail['authors_note']}")
        for i in self.of("settings"):
            out.extend(f"  设置将改为：{c}" for c in i.detail.get("changes", []))
            out.extend(f"  设置保留梨园现有的：{c}" for c in i.detail.get("kept", []))
        for n in self.not_imported:
            out.append(f"  不导入：{n.what} {n.count} 个——{n.why}")
        out.extend(f"  问题：{p}" for p in self.problems)
        out.extend(f"  注意：{n}" for n in self.notes)
        return [self.masked(line) for line in out]


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
    settings_changed: list[str] = Field(default_factory=list)
    settings_kept: list[str] = Field(default_factory=list)
    provider: str = ""
    cancelled: bool = False
    dry_run: bool = False
    report_dir: str = ""
    started: int = 0
    finished: int = 0
    created: list[str] = Field(default_factory=list)

    def markdown(self) -> str:
        """The report as Markdown (Chinese): totals per kind, each item with what happened, settings taken over,
        what was not imported and why (``secrets.json`` is never read), problems."""
        p = self.plan
        head = "（试运行，什么都没写）" if self.dry_run else "（已取消，什么都没写）" if self.cancelled else ""
        out = [f"# 从 SillyTavern 导入{head}", "", f"- 来源：`{p.source}`（{p.layout}）", f"- 梨园数据文件夹：`{p.home}`", ""]
        out += ["## 合计", "", "| 种类 | 导入 | 已有相同 | 失败/跳过 |", "|---|---|---|---|"]
        for kind, label in KIND_LABELS.items():
            items = p.of(kind)
            if not items:
                continue
            bad = sum(1 for i in items if i.action in ("error", "skip"))
            out.append(f"| {label} | {self.imported.get(kind, 0)} | {self.skipped.get(kind, 0)} | {bad} |")
        out += ["", "## 明细", ""]
        for i in p.items:
            extra = f"（{i.reason}）" if i.reason else ""
            to = f" →「{i.target}」" if i.target and i.target != i.name else ""
            links = f"；世界书：{'、'.join(i.links)}" if i.links else ""
            note = f"；{i.detail['authors_note']}" if i.detail.get("authors_note") else ""
            out.append(f"- {KIND_LABELS[i.kind]}「{i.name}」{to}：{ACTION_LABELS[i.action]}{extra}{links}{note}")
        if self.settings_changed or self.settings_kept:
            out += ["", "## 设置", ""]
            out += [f"- {s}" for s in self.settings_changed]
            out += [f"- 保留梨园现有的：{s}" for s in self.settings_kept]
        out += ["", "## 没有导入的", ""]
        out += [f"- {n.what}：{n.count} 个——{n.why}" for n in p.not_imported]
        if p.problems or p.notes:
            out += ["", "## 问题与说明", ""]
            out += [f"- {x}" for x in p.problems + p.notes]
        return p.masked("\n".join(out) + "\n")

    def to_json(self) -> str:
        """The report as indented JSON (credentials in URLs masked, :meth:`MigrationPlan.masked`)."""
        import json

        return self.plan.masked(json.dumps(self.model_dump(mode="json"), ensure_ascii=False, indent=1))


def human_size(n: int) -> str:
    """Bytes as 12 B / 3.4 KB / 5.6 MB / 1.2 GB."""
    f = float(n)
    for unit in ("B", "KB", "MB"):
        if f < 1024:
            return f"{f:.0f} {unit}" if unit == "B" else f"{f:.1f} {unit}"
        f /= 1024
    return f"{f:.1f} GB"
