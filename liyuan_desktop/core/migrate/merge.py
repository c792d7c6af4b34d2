"""Taking over SillyTavern's settings into ours (:class:`core.settings.AppSettings`) without overwriting what the user
set here: the user name, the world-info settings (only while ours are still SillyTavern's defaults), the default
preset (the one that was active, under the name it got in the preset library), and the active API as a provider
named ``sillytavern`` (its base URL and model; never a key) — added, never made the current one: whoever imports
their data keeps the model they set up here (issue 24 §4); the report says so and the window offers the switch. The scan runs it on a
copy to tell whether a second import would change anything; the import runs it for real.
"""

from __future__ import annotations

from typing import Optional

from ..cards.library import numbered_name
from ..llm.providers import ProviderSettings
from ..lore.settings import WorldInfoSettings
from ..messages import message
from ..settings import AppSettings
from .model import MigrationPlan

PROVIDER_NAME = "sillytavern"


def merge_settings(app: AppSettings, plan: MigrationPlan) -> tuple[list[str], list[str], list[str]]:
    """Apply ``plan.settings`` (see :class:`MigrationPlan`) to ``app`` in place (not saved). Returns Chinese lines:
    ``(changed, kept, notes)`` — what was taken over, what was already set here and kept, and remarks (the active
    preset is not among the presets)."""
    s = plan.settings
    changed: list[str] = []
    kept: list[str] = []
    notes: list[str] = []
    name = s.get("user_name")
    if name:
        if not app.persona_name:
            app.persona_name = name
            changed.append(message("migrate.set.user_name", name=name))
        elif app.persona_name != name:
            kept.append(message("migrate.kept.user_name", name=app.persona_name))
    wi = s.get("world_info")
    if wi:
        new = WorldInfoSettings.model_validate(wi)
        if new != app.world_info:
            default = WorldInfoSettings()
            if app.world_info == default:
                app.world_info = new
                diff = [f"{k}={v}" for k, v in new.model_dump().items() if v != default.model_dump()[k]]
                changed.append(message("migrate.set.world_info", items=list(diff)))
            else:
                kept.append(message("migrate.kept.world_info"))
    preset = s.get("default_preset")
    if preset:
        target = next((i.target for i in plan.of("preset") if i.name == preset and i.action != "error"), None)
        if target is None:
            notes.append(message("migrate.preset_absent", preset=preset))
        elif not app.default_preset:
            app.default_preset = target
            changed.append(message("migrate.set.preset", name=target))
        elif app.default_preset != target:
            kept.append(message("migrate.kept.preset", name=app.default_preset))
    api = s.get("api")
    if api:
        same = imported_provider(app, plan)
        if same is None:
            prov = ProviderSettings(name=numbered_name(PROVIDER_NAME, {p.name for p in app.providers}.__contains__),
                                    base_url=api["base_url"], model=api["model"])
            app.providers.append(prov)
            changed.append(message("migrate.provider_added", name=prov.name, url=prov.base_url, model=prov.model))
    return changed, kept, notes


def imported_provider(app: AppSettings, plan: MigrationPlan) -> Optional[ProviderSettings]:
    """The provider of ``app`` that is SillyTavern's connection (same base URL and model), or None."""
    api = plan.settings.get("api")
    if not api:
        return None
    return next((p for p in app.providers if p.base_url == api["base_url"].rstrip("/") and p.model == api["model"]),
                None)
