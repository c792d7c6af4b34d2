"""The ledger said in words for the user (issue 17): the scribe's applied lines and the formatted 【世界状态】 /
【登场名录】 texts, rendered through the one message catalog (``core/messages.py``, keys ``ledger.*``).

The scribe's applied lines (``state.apply_patch``: 「characters.青梧 已更新」, 「flags.k → v」, 「time → v」 …) are
byte-exact with the seed and are what the session and the golden runs keep; the user reads them in words
(「青梧：状态已更新」, 「标记「k」：v」) in either language. The formatted ledger (``state.format_state`` /
``format_roster``) is the very text the model reads, so in Chinese it is shown as is; in English its labels
(时间、地点、好感、状态、在、备注、物品、剧情线、人物) are translated and the values — story content — kept as written.
No Qt; the window (``ui/roleplay/draft_pane.py``) and the terminal (``cli/view.py``) both use it.
"""

from __future__ import annotations

import re
from typing import Callable

from ..messages import Msg, joined_clauses, message, render
from .state import WorldState, format_roster, format_state

__all__ = ["applied_in_words", "first_seen_runs", "ledger_in_words", "roster_in_words", "state_in_words"]

#: The scribe's applied lines (``state.apply_patch``) and the catalog message each becomes.
_APPLIED: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], Msg]], ...] = (
    (re.compile(r"^characters\.(.+) 已更新$", re.S), lambda m: message("led.applied.char", name=m.group(1))),
    (re.compile(r"^time → (.*)$", re.S), lambda m: message("led.applied.time", v=m.group(1))),
    (re.compile(r"^location → (.*)$", re.S), lambda m: message("led.applied.location", v=m.group(1))),
    (re.compile(r"^inventory → \[(.*)\]$", re.S), lambda m: message("led.applied.inventory", v=m.group(1) or "—")),
    (re.compile(r"^plot_threads → \[(.*)\]$", re.S), lambda m: message("led.applied.plot_threads", v=m.group(1) or "—")),
    (re.compile(r"^flags\.(.+?) → (.*)$", re.S), lambda m: message("led.applied.flag", k=m.group(1), v=m.group(2))),
)


def applied_in_words(line: str) -> Msg | str:
    """One applied line of the scribe in words as a catalog message (「characters.青梧 已更新」 → 「青梧：状态已更新」
    / "青梧: state updated"); lines of other shapes (MVU paths, panels) as they are.

    A line made by this run (``state.apply_patch``: a Msg keyed ``led.patch.*``) is mapped by its key; only a
    plain line read back from a session file (which keeps the Chinese text) is recognised by its fixed shape."""
    if isinstance(line, Msg):
        kind = line.key.removeprefix("led.patch.")
        if kind == line.key:
            return line
        params = dict(line.params)
        if kind in ("inventory", "plot_threads") and not params.get("v"):
            params["v"] = "—"
        elif kind == "plot_threads" and isinstance(params.get("v"), (list, tuple)):
            params["v"] = joined_clauses(list(params["v"]))  # threads may hold commas: "; " in English
        return message(f"led.applied.{kind}", **params)
    for pat, say in _APPLIED:
        m = pat.match(line)
        if m:
            return say(m)
    return line


_CHAR_LINE = re.compile(r"^(.+?)：好感 (-?\d+)((?:；.*)?)$", re.S)
_CHAR_PARTS = re.compile(r"；(状态：|在：|备注：|在场)")
_PART_KEYS = {"状态：": "led.status", "在：": "led.at", "备注：": "led.notes", "在场": "led.present"}


def ledger_in_words(text: str, lang: str) -> str:
    """The formatted ledger or roster (``state.format_state`` / ``format_roster``) for the user in ``lang``: Chinese
    as is; otherwise each line's labels translated (a line the catalog knows whole, a character line label by label,
    a roster line part by part), the values kept as written."""
    if lang == "zh" or not text:
        return text
    semi = render(message("cli.sep.semi"), lang)
    out = []
    for line in text.split("\n"):
        m = _CHAR_LINE.match(line)
        if m:
            head = render(message("led.affinity", name=m.group(1), v=m.group(2)), lang)
            rest = m.group(3)
            pieces = _CHAR_PARTS.split(rest)  # ["", "状态：", "value", "在场", "", …]
            tail = pieces[0]
            for i in range(1, len(pieces), 2):
                label, value = pieces[i], pieces[i + 1]
                shown = render(message(_PART_KEYS[label], v=value), lang) if label != "在场" else \
                    render(message("led.present"), lang) + value
                tail += semi + shown
            out.append(head + tail)
            continue
        if "；" in line:  # a roster line (人物：…；地点：…): part by part
            out.append(semi.join(render(part, lang) for part in line.split("；")))
            continue
        out.append(render(line, lang))
    return "\n".join(out)


def state_in_words(state: WorldState, lang: str) -> str:
    """The 【世界状态】 of ``state`` for the user in ``lang``, made from the state itself (no text matched back to a
    key): the facts of ``state.format_state`` with the catalog's labels (``led.*``), the values — story content —
    as written. In Chinese it is ``format_state``'s text exactly (what the model reads)."""
    if lang == "zh":
        return format_state(state)

    def say(key: str, **params: object) -> str:
        return message(key, **params).render(lang)

    semi = say("cli.sep.semi")
    lines: list[str] = []
    if state.time:
        lines.append(say("led.time", v=state.time))
    if state.location:
        lines.append(say("led.location", v=state.location))
    for name, c in state.characters.items():
        parts = [say("led.affinity", name=name, v=c.affinity)]
        if c.status:
            parts.append(say("led.status", v=c.status))
        if c.at:
            parts.append(say("led.present") if c.at == state.location else say("led.at", v=c.at))
        if c.notes:
            parts.append(say("led.notes", v=c.notes))
        lines.append(semi.join(parts))
    if state.inventory:
        lines.append(say("led.items", v=list(state.inventory)))
    lines += [f"{k}: {v}" for k, v in state.flags.items()]
    if state.plot_threads:
        lines.append(say("led.threads", v=" ".join(f"“{t}”" for t in state.plot_threads)))
    return "\n".join(lines) if lines else say("led.empty")


def first_seen_runs(table: dict[str, str]) -> list[tuple[list[str], str]]:
    """A roster table (name → in-story time first seen, "" when unknown) as runs of consecutive names first seen at
    the same time, in the table's order: ``[(names, time), …]``. The roster registers names in the order they
    appear, so one scene's names make one run — said once ("Qingwu, Traveller — first seen Dusk") instead of a
    time in brackets after every name."""
    runs: list[tuple[list[str], str]] = []
    for name, seen in table.items():
        if runs and runs[-1][1] == seen:
            runs[-1][0].append(name)
        else:
            runs.append(([name], seen))
    return runs


def roster_in_words(state: WorldState, lang: str) -> str:
    """The 【登场名录】 of ``state`` for the user in ``lang``, made from the roster itself. In Chinese it is
    ``format_roster``'s text exactly (``人物：青梧（傍晚）、…；地点：…``). In another language one line per section
    (Characters, Places, Items, Plot threads — plot threads in quotes, they are sentences), each run of names first
    seen at the same time followed once by that time (:func:`first_seen_runs`): "Places: Rainsong Inn (raining),
    Rainsong Inn — first seen Dusk (raining)" rather than "Rainsong Inn (raining) (Dusk (raining))"."""
    if lang == "zh":
        return format_roster(state)
    r = state.roster
    semi = message("cli.sep.semi").render(lang)
    sections = []
    if r is not None:
        for key, table in (("led.people", r.characters), ("led.places", r.places), ("led.items", r.items),
                           ("led.threads", r.events)):
            if not table:
                continue
            runs = []
            for names, seen in first_seen_runs(table):
                shown = [f"“{n}”" for n in names] if key == "led.threads" else names
                runs.append(message("led.first_seen", names=shown, t=seen).render(lang) if seen
                            else message("cli.sep.list").render(lang).join(shown))
            sections.append(message(key, v=semi.join(runs)).render(lang))
    return "\n".join(sections) if sections else message("led.roster_empty").render(lang)
