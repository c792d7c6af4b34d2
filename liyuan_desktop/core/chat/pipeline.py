"""What happens after a turn is played, for role-play beats and agent turns alike: save → scribe → compaction →
accounting → events (:func:`after_turn`), and the scribe run itself (:func:`run_scribe_step`).

A turn whose save failed keeps this tail as ``chat.pending_finish`` (``Chat.finish_pending`` runs it once
``Chat.retry_save`` has written the turn); the failure surfaces as :class:`results.BeatSaveError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable, Optional

from ..beat.events import BeatFinished, ScribeFinished
from ..beat.loop import EventSink
from ..ledger.mvu import apply_ops
from ..ledger.panels import panel_data
from ..ledger.scribe import run_scribe
from ..ledger.state import WorldState, format_roster, format_state
from ..llm.types import ChatMessage
from ..messages import message
from .ledger import SnapshotExtras
from .results import BeatResult, BeatSaveError, call_tokens

if TYPE_CHECKING:  # pragma: no cover
    from .facade import Chat


def emit(on_event: Optional[EventSink], ev: Any) -> None:
    """Give ``ev`` to the command's event sink; a failing handler never stops the engine."""
    if on_event is not None:
        try:
            on_event(ev)
        except Exception:  # pragma: no cover - handler errors are the UI's problem
            pass


def show_ledger(chat: "Chat", result: BeatResult) -> None:
    """Fill ``result.state``/``roster`` from the branch's ledger and refresh ``meta.json``."""
    st = chat.ledger.state()
    result.state, result.roster, result.ledger = format_state(st), format_roster(st), st
    chat.write_meta()


async def after_turn(chat: "Chat", result: BeatResult, on_event: Optional[EventSink], *,
                     scribe: Optional[Callable[[], Awaitable[None]]], compact: bool, finished: BeatFinished,
                     messages: list[ChatMessage], tool_names: list[str], late_message: str = "",
                     saved: Optional[Callable[[], None]] = None) -> BeatResult:
    """The one pipeline after a turn: commit (fsync) → calibrate the token estimate from the first call →
    ``scribe()`` (the scribe, or an agent turn's checkpoint + scribe; None: just the ledger shown) → compaction
    when ``compact`` → accounting (``result.tokens``) → ``finished`` emitted. When the commit fails and there is a
    ``scribe`` step, the rest is kept as ``chat.pending_finish`` (its BeatFinished then says ``late_message``
    when it has no message); :class:`BeatSaveError` is raised either way. ``saved`` runs once the turn is on disk
    (the role-play beat's draft log is removed then: the beat entry keeps the draft). Returns ``result``."""
    calls = result.output.calls if result.output is not None else []

    async def rest(late: bool = False) -> BeatResult:
        chat.window.calibrate(messages, calls, tool_names)
        if scribe is not None:
            await scribe()
        else:
            show_ledger(chat, result)
        if compact:
            await chat.maybe_compact(on_event)
        if chat.mode == "agent" and not chat.model.is_replay:  # issue 28: summaries of the chapters just written
            await auto_summaries(chat, on_event)
        result.tokens = {**call_tokens(calls), "context": chat.context_usage()}
        if late:
            finished.message = finished.message or late_message
        emit(on_event, finished)
        return result

    try:
        chat.tree.commit()  # the turn is on disk (fsync) before the scribe runs
    except OSError as e:
        if scribe is not None:
            chat.pending_finish = lambda: rest(late=True)
        raise BeatSaveError(result, e) from e
    if saved is not None:
        saved()
    return await rest()


async def auto_summaries(chat: "Chat", on_event: Optional[EventSink]) -> None:
    """After an agent turn: summarise up to ``chapter_summaries.AUTO_MAX`` chapters whose summary is missing or
    stale (a replay model is never asked: its recorded runs hold no summaries); what was made and what failed go
    to the activity list. Never raises."""
    from ..beat.events import Activity
    from .chapter_summaries import AUTO_MAX, summarize

    try:
        done, problems = await summarize(chat, None, None, AUTO_MAX)
    except Exception as e:  # noqa: BLE001 - the turn is saved; a summary is never worth failing it
        done, problems = [], [str(e)]
    if done:
        emit(on_event, Activity(text=message("chsum.made", n=len(done), files=done)))
    for p in problems:
        emit(on_event, Activity(level="warning", text=p))


async def run_scribe_step(chat: "Chat", result: BeatResult, state: WorldState, user_text: str, final: str,
                          on_event: Optional[EventSink], actor_ops: Optional[list[Any]] = None,
                          covers: Optional[str] = None) -> None:
    """The scribe after a sealed beat: the actor's own ``<UpdateVariable>`` ops first (when the card has a
    variable tree), then the scribe's patch of ledger, variables and panels, written as one ``rp-state``
    snapshot (committed; :class:`BeatSaveError` stage "ledger" when the disk refuses). A failed scribe call
    becomes a warning. Fills ``result.scribe``/``state``/``roster``/``warnings``; emits :class:`ScribeFinished`.
    ``covers``: the id of the reply the snapshot keeps the ledger for, stored on it (``covers``) so a ledger gap
    left by a crash can be found and repaired later, in order (:mod:`.recovery`), even when the repair's
    snapshots land after later replies."""
    mvu = chat.ledger.mvu()
    actor_applied: list[str] = []
    if actor_ops and (mvu is not None or any(op.op.startswith("era_") for op in actor_ops)):  # ERA may start a tree
        ar = apply_ops(mvu if mvu is not None else {}, actor_ops)
        mvu, actor_applied = ar.state, list(ar.applied)
        result.warnings += [message("led.actor_vars", w=w) for w in ar.warnings]
    panels = [p for p in chat.ledger.panels() if p.data]  # ledger-only panels add nothing (seed 002)
    prev = chat.ledger.previous_warnings(with_panels=bool(panels))
    c = chat.context
    sc = await run_scribe(chat.scribe_model or chat.model, state, user_name=c.persona, char_name=c.card.name,
                          user_text=user_text, assistant_text=final, previous_warnings=prev,
                          mvu=mvu, panels=panels or None, mvu_rules=c.mvu_rules, language=c.language)
    result.scribe = sc
    tree = chat.tree
    if sc.result is not None:
        extra: SnapshotExtras = {}
        if mvu is not None:  # the variable tree lives in the same snapshot as the ledger
            mr = sc.mvu_result
            extra = {"mvu": (mr.state if mr else mvu).to_dict(), "mvu_applied": actor_applied + (list(mr.applied) if mr else []),
                     "mvu_warnings": list(mr.warnings) if mr else []}
            if actor_applied:
                extra["mvu_actor_applied"] = actor_applied
            if mr:
                result.warnings += list(mr.warnings)
        if panels:  # panel data lives in the same snapshot too: {panel id: data}
            extra["panels"] = panel_data(sc.panels if sc.panels is not None else panels)
            extra["panel_applied"] = list(sc.panel_applied)
            extra["panel_warnings"] = list(sc.panel_warnings)
            result.warnings += list(sc.panel_warnings)
        if covers is not None:
            extra["covers"] = covers
        # what the scribe call cost and who answered it (the inspector shows them), its language when not Chinese
        extra["scribe_usage"] = sc.usage
        extra["scribe_model"] = sc.model
        if c.language and c.language != "zh":
            extra["language"] = c.language
        tree.append("rp-state", state=sc.result.state.to_dict(), source="scribe", applied=sc.result.applied,
                    warnings=sc.result.warnings, raw=sc.raw, **extra)
        try:
            tree.commit()
        except OSError as e:
            raise BeatSaveError(result, e, stage="ledger") from e
        result.warnings += sc.problems + sc.result.warnings
    elif sc.error:
        result.warnings.append(sc.error)
        if actor_applied and mvu is not None:  # the scribe failed, the actor's own updates still count
            covered: SnapshotExtras = {"covers": covers} if covers is not None else {}
            tree.append("rp-state", state=state.to_dict(), source="scribe", warnings=[sc.error], mvu=mvu.to_dict(),
                        mvu_applied=actor_applied, mvu_actor_applied=actor_applied,
                        **covered)
            try:
                tree.commit()
            except OSError as e:
                raise BeatSaveError(result, e, stage="ledger") from e
    show_ledger(chat, result)
    applied = list(sc.result.applied) if sc.result else []
    # the variable tree and the panels are kept in the same step: their changes are the scribe's work too
    applied += [message("led.applied.var", x=x) for x in actor_applied + (list(sc.mvu_result.applied) if sc.mvu_result else [])]
    applied += [message("led.applied.panel", x=x) for x in sc.panel_applied]
    emit(on_event, ScribeFinished(applied=applied, warnings=(sc.problems + sc.result.warnings) if sc.result else [],
                                  state=result.state, roster=result.roster, error=sc.error))
