"""MVU (MagVarUpdate) variable trees: the state a TavernHelper status bar reads (design/card-runtime.md §3).

A card that ships a status bar keeps its variable tree's initial values in one or more ``[InitVar]`` lorebook
entries (JSON or YAML, usually *disabled* so they are never sent to the model). In SillyTavern the actor model
then appends ``<UpdateVariable>`` commands to every reply; in Liyuan the actor no longer does (seed 002,
「卡的状态栏和自建面板吃同一份快照」): the scribe emits one extra field, ``"mvu_patch"`` — ``{"a.b.c": new value}`` —
which :func:`apply_mvu_patch` merges with type checks. :func:`parse_update_blocks` / :func:`apply_ops` still read the
classic and JSON-Patch dialects (greetings and imported chats carry them), and :func:`strip_update_blocks` hides
them from display.

Tree conventions (MVU): a leaf ``[value, "description"]`` (a *VWD pair*) keeps its description — only element 0
changes; keys starting with ``$`` are derived (computed by the card, never written); any path segment starting
with ``_`` is read-only for the model. ``display_data`` is the tree with each changed leaf replaced by an
``"old->new"`` string (classic bars show it); ``delta_data`` holds only the changed leaves in that string form.

Where things are: :mod:`.paths` (path syntax, VWD pairs, type rules), :mod:`.state` (the snapshot and its display
strings), :mod:`.patch` (the scribe's ``mvu_patch``), :mod:`.initvar` (``[InitVar]`` entries), :mod:`.commands`
(``<UpdateVariable>`` parsing), :mod:`.era` (the ERA framework's ``<VariableInsert/Edit/Delete>``), :mod:`.apply` (applying parsed commands), :mod:`.greeting` (what a greeting sets).
"""

from typing import TYPE_CHECKING

from ...lazy_exports import lazy_exports

# issue 15: a name's module is imported when the name is first read (importing one submodule no longer
# imports them all, and what they import)
__getattr__, __dir__ = lazy_exports(__name__, {
    "apply_ops": ".apply",
    "parse_update_blocks": ".commands",
    "strip_update_blocks": ".commands",
    "has_era_blocks": ".era",
    "parse_era_blocks": ".era",
    "GreetingVars": ".greeting",
    "greeting_variables": ".greeting",
    "strip_variable_blocks": ".greeting",
    "initial_tree": ".initvar",
    "initvar_entries": ".initvar",
    "load_initvars": ".initvar",
    "load_initvars_books": ".initvar",
    "merge_initial": ".initvar",
    "apply_mvu_patch": ".patch",
    "MvuResult": ".state",
    "MvuState": ".state",
})

if TYPE_CHECKING:
    from .apply import apply_ops
    from .commands import parse_update_blocks, strip_update_blocks
    from .era import has_era_blocks, parse_era_blocks
    from .greeting import GreetingVars, greeting_variables, strip_variable_blocks
    from .initvar import initial_tree, initvar_entries, load_initvars, load_initvars_books, merge_initial
    from .patch import apply_mvu_patch
    from .state import MvuResult, MvuState

__all__ = [
    "GreetingVars", "MvuResult", "MvuState", "apply_mvu_patch", "apply_ops", "greeting_variables", "has_era_blocks",
    "initial_tree", "parse_era_blocks",
    "initvar_entries", "load_initvars", "load_initvars_books", "merge_initial", "parse_update_blocks",
    "strip_update_blocks", "strip_variable_blocks",
]
