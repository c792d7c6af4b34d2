"""Timed effects (SillyTavern's ``WorldInfoTimedEffects``), counted in chat messages: a newly activated entry with
``sticky`` / ``cooldown`` gets ``end = chat_length + n``; sticky keeps it active while ``chat_length < end``; when
sticky ends its cooldown starts (protected); an effect is dropped when the chat did not advance past its start
(regenerate/swipe) or the entry changed (hash of the entry). ``delay`` needs no state (the chat length decides).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from .compile import CompiledBook, EntryRec


class TimedEffect(BaseModel):
    """One sticky or cooldown effect (ST ``chat_metadata.timedWorldInfo``): active while ``chat_length < end``;
    ``start`` is the chat length when it was set; ``protected`` effects survive a chat that did not advance."""

    hash: str
    start: int
    end: int
    protected: bool = False


class TimedEffects(BaseModel):
    """Sticky/cooldown state of a chat branch, keyed ``"{book}.{uid}"``. The caller stores the :attr:`timed` of each
    :class:`ActivationResult` (e.g. in the session tree, per branch) and passes it back on the next activation.
    Plain JSON via ``model_dump()`` / ``model_validate()``."""

    sticky: dict[str, TimedEffect] = Field(default_factory=dict)
    cooldown: dict[str, TimedEffect] = Field(default_factory=dict)


def check_timed(state: TimedEffects, comp: CompiledBook, chat_len: int, sticky_on: set[int],
                cooldown_on: set[int]) -> None:
    """ST ``WorldInfoTimedEffects.checkTimedEffects`` (sticky first; an ended sticky starts its cooldown): drops the
    stale effects from ``state`` and fills ``sticky_on`` / ``cooldown_on`` with the processing positions of the
    entries that are sticky / cooling down at ``chat_len`` messages."""
    for kind in ("sticky", "cooldown"):
        store: dict[str, TimedEffect] = getattr(state, kind)
        for key, eff in list(store.items()):
            rec = comp.by_hash.get(eff.hash)
            if chat_len <= eff.start and not eff.protected:
                del store[key]
                continue
            if rec is None:
                if chat_len >= eff.end:
                    del store[key]
                continue
            if not getattr(rec, kind):
                del store[key]
                continue
            if chat_len >= eff.end:
                del store[key]
                if kind == "sticky" and rec.cooldown:
                    state.cooldown[rec.tkey] = TimedEffect(hash=rec.hash, start=chat_len,
                                                           end=chat_len + rec.cooldown, protected=True)
                    cooldown_on.add(rec.pos)
                continue
            (sticky_on if kind == "sticky" else cooldown_on).add(rec.pos)


def record_timed(state: TimedEffects, activated: list[EntryRec], chat_len: int) -> None:
    """Start the sticky/cooldown effects of the entries activated this run that have none yet (in ``state``)."""
    for r in activated:
        for kind in ("sticky", "cooldown"):
            n = getattr(r, kind)
            store = getattr(state, kind)
            if n and r.tkey not in store:
                store[r.tkey] = TimedEffect(hash=r.hash, start=chat_len, end=chat_len + n)

