"""Sampling settings of a model call (:class:`Sampling`) and how they reach an OpenAI-compatible request body
(:func:`apply_sampling`), per provider.

Where the values come from (highest wins, :meth:`Sampling.over`): a chat's own overrides, then the connection
profile's sampling, then the chat's SillyTavern preset (``prompt.presets.model.Preset.request_sampling``). A field
left None is not sent: the server's default applies.

Which provider accepts which body field (checked against the providers' public API documentation, 2026):

* **OpenAI** (api.openai.com): ``temperature``, ``top_p``, ``frequency_penalty``, ``presence_penalty``, ``seed``,
  ``stop`` (at most 4), ``max_tokens`` and ``reasoning_effort`` (reasoning models). No ``top_k``/``min_p``/
  ``top_a``/``repetition_penalty``: dropped, the server would refuse the request.
* **DeepSeek** (api.deepseek.com): ``temperature``, ``top_p``, ``frequency_penalty``, ``presence_penalty``,
  ``max_tokens``, ``stop`` (at most 16); no ``top_k``/``min_p``/``repetition_penalty``/``reasoning_effort``/
  ``seed`` (thinking is chosen by model name).
* **OpenRouter**: the OpenAI fields plus ``top_k``, ``min_p``, ``top_a``, ``repetition_penalty``; reasoning
  effort as ``reasoning: {"effort": …}`` (OpenRouter's normalised form).
* **Ollama** (``/v1`` OpenAI compatibility): ``temperature``, ``top_p``, ``frequency_penalty``,
  ``presence_penalty``, ``seed``, ``stop``, ``max_tokens``, ``reasoning_effort``; its OpenAI layer has no
  ``top_k``/``min_p``/``repeat_penalty`` (those are only in Ollama's native API).
* **llama.cpp server**: the OpenAI fields plus its native samplers ``top_k``, ``min_p``, ``repeat_penalty``
  (llama.cpp's name for the repetition penalty, sent under that name) and the DRY ("don't repeat yourself")
  sampler: ``dry_multiplier``, ``dry_base``, ``dry_allowed_length``, ``dry_penalty_last_n`` (the names SillyTavern
  sends to llama.cpp and KoboldCpp; llama.cpp's server answers 400 for ``dry_penalty_last_n`` −1, so the range is a
  token count ≥ 1). **LM Studio**: the OpenAI fields plus
  ``top_k`` and ``repeat_penalty`` (no ``min_p`` in its documented list). No reasoning effort for either.
* **other** OpenAI-compatible servers (vLLM, proxies): every field is sent under its OpenAI/OpenRouter name (vLLM
  accepts ``top_k``/``min_p``/``repetition_penalty`` as extra sampling parameters); a server that refuses one
  answers 400 with its reason, shown to the user.

SillyTavern's reasoning-effort values (``auto``, ``min``, ``low``, ``medium``, ``high``, ``max``) are mapped as
SillyTavern maps them for OpenAI-style sources: ``auto`` → not sent, ``min`` → ``low``, ``max`` → ``high``.
Streaming: ``stream`` False asks for one JSON answer (the client accepts it; the UI then sees the reply at once).
"""

from __future__ import annotations

from typing import Any, Literal, Optional
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..jsonfile import object_at
from ..messages import Msg, joined_semi, message

__all__ = ["Sampling", "ProviderKind", "provider_kind", "apply_sampling", "SAMPLING_FIELDS", "field_label",
           "with_sampling", "SampledModel", "DRY_FIELDS", "LOCAL_DRY", "local_dry"]

ProviderKind = Literal["openai", "deepseek", "openrouter", "ollama", "llamacpp", "lmstudio", "other"]

#: The fields of :class:`Sampling`, in the order the UI shows them.
SAMPLING_FIELDS = ("temperature", "top_p", "top_k", "min_p", "top_a", "frequency_penalty", "presence_penalty",
                   "repetition_penalty", "dry_multiplier", "dry_base", "dry_allowed_length", "dry_penalty_last_n",
                   "max_tokens", "seed", "stop", "reasoning_effort", "stream")

#: The DRY sampler's fields (llama.cpp, KoboldCpp; SillyTavern's names).
DRY_FIELDS = ("dry_multiplier", "dry_base", "dry_allowed_length", "dry_penalty_last_n")

#: The DRY settings a small model on a local llama.cpp server writes a fresh beat with when the user set none
#: (issue 30 §1: the 1.5B copied the opening's paragraphs into 3 of 3 tool-play replies of a bench run, and into 4 of
#: 12 prose-only first replies — none with DRY, which also raised the replies using a lore fact from 6 to 10 of 12;
#: ``bench/lore_uptake.py`` measures it). The values are the DRY author's published recommendation
#: that SillyTavern's DRY panel also suggests (multiplier 0.8, base 1.75, allowed length 2): a copied run of n
#: tokens past the allowed 2 costs 0.8·1.75^(n−2) logits — a name or a two-token fact is free, a copied sentence
#: is not. ``dry_penalty_last_n`` (the tokens looked back at) is the model's context window (:func:`local_dry`).
LOCAL_DRY = {"dry_multiplier": 0.8, "dry_base": 1.75, "dry_allowed_length": 2}

#: ``dry_penalty_last_n`` when the window is unknown; the most sent (a ring buffer of this many tokens on the server)
DRY_WINDOW_DEFAULT = 8192
DRY_WINDOW_MAX = 131072


_OPENAI_BASE = {"temperature", "top_p", "frequency_penalty", "presence_penalty", "max_tokens", "stop", "stream"}
#: body fields each provider accepts (see the module doc); "other" accepts everything
_SUPPORTED: dict[str, set[str]] = {
    "openai": _OPENAI_BASE | {"seed", "reasoning_effort"},
    "deepseek": set(_OPENAI_BASE),
    "openrouter": _OPENAI_BASE | {"seed", "top_k", "min_p", "top_a", "repetition_penalty", "reasoning_effort"},
    "ollama": _OPENAI_BASE | {"seed", "reasoning_effort"},
    "llamacpp": _OPENAI_BASE | {"seed", "top_k", "min_p", "repetition_penalty", *DRY_FIELDS},
    "lmstudio": _OPENAI_BASE | {"seed", "top_k", "repetition_penalty"},
}
_STOP_LIMIT = {"openai": 4, "deepseek": 16}
_EFFORT = {"auto": None, "min": "low", "minimal": "low", "low": "low", "medium": "medium", "high": "high",
           "max": "high"}


def field_label(name: str) -> Msg | str:
    """The label of sampling field ``name`` as a catalog message (``sampling.<name>``: 温度 / Temperature…, one
    language each, rendered by the front end); an unknown field's own name."""
    return message(f"sampling.{name}") if name in SAMPLING_FIELDS else name


class Sampling(BaseModel):
    """Sampling settings of the actor's model calls; None = not set (the server's default).

    Units and ranges: ``temperature`` 0–2; ``top_p``/``min_p``/``top_a`` 0–1; ``top_k`` ≥ 0 (0 = off);
    ``frequency_penalty``/``presence_penalty`` −2…2; ``repetition_penalty`` > 0 (1 = off); ``dry_multiplier``
    0–5 (0 = off), ``dry_base`` 1–4, ``dry_allowed_length`` 1–20 tokens, ``dry_penalty_last_n`` ≥ 1 tokens (the DRY
    sampler, :data:`DRY_FIELDS`); ``max_tokens`` the reply
    budget in tokens (≥ 1); ``seed`` ≥ 0; ``stop`` strings (empty ones dropped); ``reasoning_effort`` one of
    SillyTavern's values (auto, min, low, medium, high, max); ``stream`` True/False. Persisted (settings, session
    entries) as JSON with None fields left out."""

    model_config = ConfigDict(extra="ignore")

    temperature: Optional[float] = Field(default=None, ge=0, le=2)
    top_p: Optional[float] = Field(default=None, ge=0, le=1)
    top_k: Optional[int] = Field(default=None, ge=0)
    min_p: Optional[float] = Field(default=None, ge=0, le=1)
    top_a: Optional[float] = Field(default=None, ge=0, le=1)
    frequency_penalty: Optional[float] = Field(default=None, ge=-2, le=2)
    presence_penalty: Optional[float] = Field(default=None, ge=-2, le=2)
    repetition_penalty: Optional[float] = Field(default=None, gt=0)
    dry_multiplier: Optional[float] = Field(default=None, ge=0, le=5)
    dry_base: Optional[float] = Field(default=None, ge=1, le=4)
    dry_allowed_length: Optional[int] = Field(default=None, ge=1, le=20)
    dry_penalty_last_n: Optional[int] = Field(default=None, ge=1)
    max_tokens: Optional[int] = Field(default=None, ge=1)
    seed: Optional[int] = Field(default=None, ge=0)
    stop: Optional[list[str]] = None
    reasoning_effort: Optional[Literal["auto", "min", "low", "medium", "high", "max"]] = None
    stream: Optional[bool] = None

    @field_validator("stop")
    @classmethod
    def _clean_stop(cls, v: Optional[list[str]]) -> Optional[list[str]]:
        if v is None:
            return None
        out = [s for s in v if isinstance(s, str) and s != ""]
        return out or None

    def values(self) -> dict[str, Any]:
        """The fields that are set, in :data:`SAMPLING_FIELDS` order."""
        return {k: getattr(self, k) for k in SAMPLING_FIELDS if getattr(self, k) is not None}

    def over(self, base: Optional["Sampling"]) -> "Sampling":
        """These settings on top of ``base``: a field set here wins, the others come from ``base``."""
        if base is None:
            return self.model_copy()
        return Sampling.model_validate({**base.values(), **self.values()})

    def is_empty(self) -> bool:
        """No field is set."""
        return not self.values()

    @classmethod
    def from_pairs(cls, pairs: list[str], base: Optional["Sampling"] = None) -> "Sampling":
        """``KEY=VALUE`` strings (the CLI's ``--sample``) on top of ``base``: numbers and true/false as written,
        ``stop=TEXT`` adds one stop string (repeatable), ``KEY=`` (empty) unsets KEY. Raises ValueError (Chinese)
        for an unknown key or a value out of range."""
        data: dict[str, Any] = base.values() if base is not None else {}
        stops: list[str] = list(data.get("stop") or [])
        for pair in pairs:
            key, sep, value = pair.partition("=")
            key = key.strip().replace("-", "_")
            if not sep or key not in SAMPLING_FIELDS:
                raise ValueError(message("sampling.bad_pair", fields=", ".join(SAMPLING_FIELDS), pair=repr(pair)))
            if key == "stop":
                if value:
                    stops.append(value)
                else:
                    stops = []
                continue
            if value == "":
                data.pop(key, None)
                continue
            data[key] = value.strip().lower() in ("1", "true", "yes", "on", "开") if key == "stream" else value.strip()
        data["stop"] = stops or None
        try:
            return cls.model_validate(data)
        except ValueError as e:
            errs: list[dict[str, Any]] = getattr(e, "errors", lambda **_: [])(include_input=False, include_url=False)
            where = joined_semi([f"{'.'.join(str(x) for x in er.get('loc', ()))}: {er.get('msg', '')}" for er in errs])
            raise ValueError(message("sampling.invalid", where=where or str(e))) from None


def provider_kind(name: str = "", base_url: str = "") -> ProviderKind:
    """Which provider a connection talks to, from its host (api.openai.com, api.deepseek.com, openrouter.ai),
    else its configured name (the built-in presets' names: ollama, llamacpp, lmstudio…), else the local default
    ports (11434 Ollama, 8080 llama.cpp, 1234 LM Studio); "other" when nothing matches."""
    parts = urlsplit(base_url or "")
    host = (parts.hostname or "").lower()
    if host.endswith("openai.com"):
        return "openai"
    if host.endswith("deepseek.com"):
        return "deepseek"
    if host.endswith("openrouter.ai"):
        return "openrouter"
    n = (name or "").lower().replace(".", "").replace("-", "").replace("_", "")
    for kind in ("openrouter", "deepseek", "ollama", "llamacpp", "lmstudio", "openai"):
        if n.startswith(kind):
            return kind
    port = parts.port
    if port == 11434:
        return "ollama"
    if port == 8080:
        return "llamacpp"
    if port == 1234:
        return "lmstudio"
    return "other"


def apply_sampling(body: dict[str, Any], sampling: Optional[Sampling], kind: ProviderKind = "other"
                   ) -> list[str]:
    """Put ``sampling`` into the request ``body`` (in place) the way provider ``kind`` takes it (module doc).
    Returns a line per setting left out and why (Chinese, for the preset dialog and the CLI); [] when everything
    was sent. Fields already in ``body`` are overwritten (the caller's ``max_tokens`` included)."""
    if sampling is None:
        return []
    dropped: list[str] = []
    ok = _SUPPORTED.get(kind)
    for name, value in sampling.values().items():
        if ok is not None and name not in ok:
            dropped.append(message("sampling.not_accepted", field=field_label(name), name=name, kind=kind))
            continue
        if name == "stream":
            body["stream"] = bool(value)
            if not value:
                body.pop("stream_options", None)
            continue
        if name == "reasoning_effort":
            effort = _EFFORT.get(value)
            if effort is None:
                continue  # "auto": the server decides (SillyTavern sends nothing)
            if kind == "openrouter":
                reasoning = object_at(body, "reasoning")
                body["reasoning"] = {**reasoning, "effort": effort}
            else:
                body["reasoning_effort"] = effort
            continue
        if name == "stop":
            limit = _STOP_LIMIT.get(kind)
            if limit is not None and len(value) > limit:
                dropped.append(message("sampling.stop_limit", field=field_label(name), name=name, kind=kind,
                                       limit=limit))
                value = value[:limit]
            body["stop"] = list(value)
            continue
        if name == "repetition_penalty" and kind in ("llamacpp", "lmstudio"):
            body["repeat_penalty"] = value
            continue
        body[name] = value
    return dropped


def local_dry(context_window: Optional[int] = None) -> dict[str, Any]:
    """The body fields of :data:`LOCAL_DRY` with ``dry_penalty_last_n`` the model's ``context_window`` in tokens
    (:data:`DRY_WINDOW_DEFAULT` when unknown, at most :data:`DRY_WINDOW_MAX`): the opening and the earlier beats
    are all looked back at."""
    window = int(context_window) if context_window and context_window > 0 else DRY_WINDOW_DEFAULT
    return {**LOCAL_DRY, "dry_penalty_last_n": min(window, DRY_WINDOW_MAX)}


class SampledModel:
    """A :class:`~.types.ChatModel` that adds ``sampling`` to every actor request (``purpose == "actor"``) that
    has none of its own, then calls ``inner``. Scribe and summary calls keep their own settings. Every other
    attribute (``name``, ``is_replay``, ``context_window``…) is the inner model's."""

    def __init__(self, inner: Any, sampling: Optional[Sampling]):
        self.inner = inner
        self.sampling = sampling

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def complete(self, request: Any, on_delta: Any = None) -> Any:
        """The inner model's answer to ``request`` with the sampling added (see the class doc)."""
        if self.sampling is not None and request.purpose == "actor" and getattr(request, "sampling", None) is None:
            request = request.model_copy(update={"sampling": self.sampling})
        return await self.inner.complete(request, on_delta)


def with_sampling(model: Any, sampling: Optional[Sampling]) -> Any:
    """``model`` wrapped in :class:`SampledModel`, or ``model`` itself when ``sampling`` is None or empty."""
    if sampling is None or sampling.is_empty():
        return model
    return SampledModel(model, sampling)
