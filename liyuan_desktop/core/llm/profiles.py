"""Connection profiles: a named choice of provider + model + preset + sampling the user switches in one click
(SillyTavern's Connection Manager keeps the same bundle: API, model, preset). Saved in the app settings
(``AppSettings.profiles``; switching is ``AppSettings.use_profile``)."""

from __future__ import annotations

from typing import Optional

from pydantic import ConfigDict, Field, field_validator

from ..deferred import DeferredModel
from ..messages import message
from .sampling import Sampling

__all__ = ["ConnectionProfile"]


class ConnectionProfile(DeferredModel):  # built on first use (core.deferred)
    """One connection profile.

    Fields:
        name: shown in the chooser; unique among the profiles.
        provider: name of a configured provider (``AppSettings.providers``).
        model: the model to call on that provider; "" = the provider's own ``model``.
        preset: name of a preset in the preset library (``预设/``) used for new chats and applied to the open chat
            when the profile is chosen; None = no preset ("" is read as None).
        sampling: sampling settings sent with the actor's calls; they win over the preset's and lose to a chat's
            own overrides (:mod:`.sampling`).

    No API key here: the provider's key lookup applies (unknown fields are rejected)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    provider: str
    model: str = ""
    preset: Optional[str] = None
    sampling: Sampling = Field(default_factory=Sampling)

    @field_validator("name", "provider")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        v = v.strip()
        if not v:
            raise ValueError(message("field.required"))
        return v

    @field_validator("preset")
    @classmethod
    def _blank_is_none(cls, v: Optional[str]) -> Optional[str]:
        return (v or "").strip() or None
