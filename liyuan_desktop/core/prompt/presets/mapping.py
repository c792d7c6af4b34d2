"""Where a preset's prompts go in Liyuan's layered prompt: :func:`plan` (pure; see :mod:`..presets` for the rules)."""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

from ...messages import MsgText, message
from .model import (
    DEFAULT_PROMPTS,
    GLOBAL_ORDER_ID,
    IN_CHAT,
    LEGACY_ORDER_ID,
    MARKERS,
    RUNTIME_IDS,
    Preset,
    PresetPrompt,
    Role,
)

__all__ = ["Placement", "PlannedPrompt", "DroppedPrompt", "PresetPlan", "plan"]

Placement = Literal["system", "after", "depth"]


class PlannedPrompt(BaseModel):
    """One preset prompt with its place in our prompt.

    ``placement``: "system" (a system layer), "after" (a message after the user's words) or "depth" (an in-chat
    injection at ``depth`` with ``order``). ``marker`` prompts carry no text: Liyuan fills them from the card /
    persona / lorebook. ``content`` is the raw preset text (macros not yet expanded). ``main``/``jailbreak`` may
    be replaced by the card's own text at render time unless ``forbid_overrides``."""

    identifier: str
    name: str = ""
    role: Role = "system"
    content: str = ""
    marker: bool = False
    placement: Placement = "system"
    depth: int = 4
    order: int = 100
    forbid_overrides: bool = False


class DroppedPrompt(BaseModel):
    """A prompt of the order list that does not reach our prompt, and why (Chinese, for the UI)."""

    identifier: str
    name: str = ""
    reason: MsgText


class PresetPlan(BaseModel):
    """Where a preset's prompts go in Liyuan's prompt (see the module doc).

    ``system``: system layers in preset order (text prompts and markers); ``after``: after segments in order;
    ``depth``: in-chat injections in order-list order; ``dropped``: what is left out and why; ``notes``: how the
    mapping differs from SillyTavern for this preset; ``order_source``: "100001" or "default";
    ``has_chat_history``: whether the order list has an enabled ``chatHistory`` marker (without it every relative
    prompt is a system layer — Liyuan still sends the history); ``sampling``: :meth:`Preset.sampling`;
    ``context_size``: ``openai_max_context`` (tokens) or None; ``generation``: the generation type planned for."""

    preset_name: str = ""
    order_source: str = str(GLOBAL_ORDER_ID)
    system: list[PlannedPrompt] = Field(default_factory=list)
    after: list[PlannedPrompt] = Field(default_factory=list)
    depth: list[PlannedPrompt] = Field(default_factory=list)
    dropped: list[DroppedPrompt] = Field(default_factory=list)
    notes: list[MsgText] = Field(default_factory=list)
    has_chat_history: bool = True
    sampling: dict[str, Any] = Field(default_factory=dict)
    context_size: Optional[int] = None
    generation: str = "normal"

    def describe(self) -> list[str]:
        """A readable summary, one line each (for the CLI and a settings dialog): catalog messages (``plan.*``,
        :class:`~liyuan_desktop.core.messages.Msg`), rendered by the reader in its language."""
        none = message("plan.none")
        lines: list[str] = [message("plan.head", name=self.preset_name, order=self.order_source)]
        lines.append(message("plan.system", items=[p.name or p.identifier for p in self.system] or none))
        lines.append(message("plan.after", items=[message("plan.after_item", name=p.name or p.identifier, role=p.role)
                                                  for p in self.after] or none))
        lines.append(message("plan.depth", items=[message("plan.depth_item", name=p.name or p.identifier,
                                                          depth=p.depth, role=p.role) for p in self.depth] or none))
        for d in self.dropped:
            lines.append(message("plan.dropped", name=d.name or d.identifier, reason=d.reason))
        lines.extend(self.notes)
        return lines


def plan(preset: Preset, generation: str = "normal") -> PresetPlan:
    """Map ``preset`` onto Liyuan's layered prompt for a generation of type ``generation`` (ST names: normal,
    continue, impersonate, swipe, regenerate, quiet; a Liyuan beat is "normal", a regenerate "regenerate").
    Pure: no card, persona or chat needed. See the module doc for the rules; the result lists every enabled
    prompt exactly once, in ``system``, ``after``, ``depth`` or ``dropped``."""
    order, source = preset.active_order()
    out = PresetPlan(preset_name=preset.name, order_source=source, sampling=preset.sampling(),
                     context_size=preset.openai_max_context, generation=generation)
    if source == "default":
        has_legacy = preset.order_list(LEGACY_ORDER_ID) is not None
        out.notes.append(message("plan.no_order_legacy" if has_legacy else "plan.no_order"))
    by_id: dict[str, PresetPrompt] = {p.identifier: p for p in reversed(preset.prompts)}
    enabled: list[PresetPrompt] = []
    seen: set[str] = set()
    for item in order:
        ident = item.identifier
        p = by_id.get(ident)
        if p is None and ident in DEFAULT_PROMPTS:
            p = PresetPrompt(identifier=ident, **DEFAULT_PROMPTS[ident])
        name = p.name if p is not None else ""
        if ident in seen:
            out.dropped.append(DroppedPrompt(identifier=ident, name=name, reason=message("plan.dup")))
            continue
        seen.add(ident)
        if p is None:
            out.dropped.append(DroppedPrompt(identifier=ident, reason=message("plan.missing")))
            continue
        if not item.enabled:
            out.dropped.append(DroppedPrompt(identifier=ident, name=name, reason=message("plan.disabled")))
            continue
        if p.injection_trigger and generation not in p.injection_trigger:
            out.dropped.append(DroppedPrompt(identifier=ident, name=name,
                                             reason=message("plan.trigger", kinds=", ".join(p.injection_trigger))))
            continue
        enabled.append(p)
    not_in_order = [p for p in preset.prompts if p.identifier not in seen and p.identifier not in RUNTIME_IDS]
    for p in not_in_order:
        out.dropped.append(DroppedPrompt(identifier=p.identifier, name=p.name, reason=message("plan.not_in_order")))
    ids = [p.identifier for p in enabled]
    history_at = ids.index("chatHistory") if "chatHistory" in ids else None
    out.has_chat_history = history_at is not None
    if history_at is None:
        out.notes.append(message("plan.no_history"))
    for idx, p in enumerate(enabled):
        ident = p.identifier
        if ident == "chatHistory":
            continue
        label = p.name or ident
        after_history = history_at is not None and idx > history_at
        if ident in RUNTIME_IDS:
            out.dropped.append(DroppedPrompt(identifier=ident, name=p.name,
                                             reason=message("plan.runtime")))
            continue
        if p.marker or ident in MARKERS:
            if ident not in MARKERS:
                out.dropped.append(DroppedPrompt(identifier=ident, name=p.name, reason=message("plan.extension")))
                continue
            if p.injection_position == IN_CHAT:
                out.notes.append(message("plan.marker_depth", label=label))
            elif after_history:
                out.notes.append(message("plan.marker_after", label=label))
            out.system.append(PlannedPrompt(identifier=ident, name=p.name, role=p.role, marker=True, placement="system"))
            continue
        overridable = ident in ("main", "jailbreak") and not p.forbid_overrides
        if not p.content.strip() and not overridable:
            out.dropped.append(DroppedPrompt(identifier=ident, name=p.name, reason=message("plan.empty")))
            continue
        planned = PlannedPrompt(identifier=ident, name=p.name, role=p.role, content=p.content,
                                forbid_overrides=p.forbid_overrides, depth=p.injection_depth, order=p.injection_order)
        if p.injection_position == IN_CHAT:
            planned.placement = "depth"
            out.depth.append(planned)
        elif after_history:
            planned.placement = "after"
            out.after.append(planned)
        else:
            if p.role != "system":
                out.notes.append(message("plan.role_merged", label=label, role=p.role))
            out.system.append(planned)
    return out
