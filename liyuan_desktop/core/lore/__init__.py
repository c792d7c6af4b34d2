"""World info / lorebook (世界书): the entry model, SillyTavern activation, import/export, and the lorebook tools.

Where things are: :mod:`.model` (:class:`LoreEntry`, constants, decorators), :mod:`.formats` (card book / World Info
JSON ⇄ entries), :mod:`.lorebook` (:class:`Lorebook`, :func:`merge_books`), :mod:`.compile` (a book prepared for
scanning), :mod:`.jsregex` and :mod:`.keys` (key matchers), :mod:`.scan` (the scan buffer), :mod:`.activation`
(``checkWorldInfo``), :mod:`.groups` (inclusion groups), :mod:`.timed` (sticky/cooldown), :mod:`.budget` (token
budget), :mod:`.search` (``lorebook_search`` / ``lorebook_list``), :mod:`.bookcache` (big books: the parse cached on
disk by content, the key automaton cached by its needles).

**Big books** (issue 15 item 10). A scan pass looks only at the entries whose literal key text occurs in the scan
text — one Aho–Corasick pass finds them (:class:`.compile.KeyIndex`) — plus constants, decorators and regex/macro
keys; their keys are then matched exactly as below, so results are those of looking at every entry (tests compare
both on randomised books). Recursion passes scan only the text they add — regex keys too, from
:data:`.keys.REGEX_SEAM_MARGIN` characters before the seam (a longer match across it is the one accepted difference
from SillyTavern, which re-tests the joined buffer). A run stops where ST's does (a pass with nothing new,
``max_recursion_steps``, the budget overflowing) and, whatever the book, at a hard bound on its work
(:data:`.activation.SAFETY_MAX_ENTRIES` / ``SAFETY_MAX_CHARS``: logged, a notice in ``warnings``). A book of 1,000+
entries is parsed once per content and kept as rows in memory and under ``<home>/cache/lore`` (damaged or old files
ignored and rebuilt); a chat open builds it once from the rows and places the constants without compiling it.


Semantics follow SillyTavern's ``checkWorldInfo`` (``public/scripts/world-info.js``) as written down in
../shared/design/cards.md §2; where that page is silent the SillyTavern code decides. Summary, with the places where
Liyuan deliberately differs marked **(Liyuan)**:

* **Shapes.** A card's ``character_book`` (V2/V3 spec, SillyTavern extras in ``entry.extensions`` in snake_case,
  except ``useProbability`` and ``selectiveLogic`` which stay camelCase) and a SillyTavern World Info file
  (``{"entries": {"<uid>": {...camelCase...}}}``) load into the same :class:`LoreEntry`; the mapping and the
  defaults are ST's ``convertCharacterBook`` / ``convertWorldInfoToCharacterBook`` (see ``_EXT_FIELDS``).
  :meth:`Lorebook.to_card_book` / :meth:`Lorebook.to_world_info` start from the JSON that was read and write back only
  the fields that changed, so an unedited book round-trips to an equal object; converting between the shapes
  writes ST's full field set.
* **Scan buffer.** The newest ``scan_depth`` messages (entry ``scanDepth`` overrides the book's), each
  ``"Name: text"`` trimmed, newest first, each prefixed ``\\x01`` and joined by ``\\n\\x01``; then the opt-in card
  fields, extra injected prompts, and in recursion steps the content of entries activated earlier. A depth of 0
  gives an empty buffer (the ST code returns ``''`` — cards.md's "only recursion text" is not what the code does).
* **Skips, in order:** already active or failed its roll this run; disabled; character filter (names only);
  ``delay`` (chat shorter than ``delay`` messages); cooldown unless sticky; ``delayUntilRecursion`` outside a
  recursion step or above the current level unless sticky; ``excludeRecursion`` in a recursion step unless sticky;
  ``@@dont_activate``. Immediate: ``@@activate``, ``constant``, active sticky. No primary keys → never.
* **Keys.** Macro-substituted (if a ``substitute`` function is given) and trimmed. ``/pattern/flags`` keys (ST's
  ``parseRegexFromString``: flags ``gimsuy``, no unescaped ``/`` inside) are JavaScript regexes: translated to
  Python ``re`` once per key (:func:`translate_js_regex` lists what is covered); the few constructs it does not cover
  (``\\p{…}``, variable-width lookbehind, ``(?i:…)``) run in QuickJS (JavaScript's own ``RegExp``, time-limited) and
  are refused — never match, named in :attr:`Lorebook.warnings` — only if QuickJS cannot be loaded; a pattern
  that is not valid JavaScript makes the key plain text, as in ST. Case and whole-word settings do not apply to them.
  Plain keys: lower-cased unless case-sensitive (entry value, else book default); with whole words, keys
  containing whitespace match as substrings (ST), single words need a word boundary **only on a side where
  the key itself starts/ends with an ASCII word character** **(Liyuan)** — ST's ``(?:^|\\W)key(?:$|\\W)`` also
  demands a boundary next to CJK or punctuation, so ``手机`` never fires in ``用iPhone手机`` and ``理`` not in
  ``ri理``; here both fire, while ``king`` still does not fire in ``liking`` and does in ``the king.``. Primary:
  any key. Secondary (only if ``selective`` and non-empty): AND_ANY 0 / NOT_ALL 1 / NOT_ANY 2 / AND_ALL 3.
* **Per step:** candidates sticky first, then processing order; inclusion groups (sticky members win, cooldown
  members dropped, optional scoring, a group that already won in an earlier step drops its new members,
  ``groupOverride`` → highest order, else weighted roll by ``groupWeight``); then probability
  (``rng()*100 <= probability``; a failure holds for the whole run) and the token budget (sticky/constant are not
  exempt; ``ignoreBudget`` is; the entry whose content reaches the budget (``>=``) is dropped, and so is every
  later one of the step — except ``ignoreBudget`` entries — and recursion stops; as in ST's code the count is this
  step's contents plus the contents earlier steps put into the recursion buffer).
* **Recursion** (book ``recursive``, default on as in new ST installs; a card book's ``recursive_scanning`` sets it
  **(Liyuan: ST ignores the book-level flag)**): the new entries' content (not ``preventRecursion`` ones) is added to
  the buffer and the scan repeats; pending ``delayUntilRecursion`` levels run afterwards in ascending order (ST
  opens them even with recursion off); ``max_recursion_steps`` / ``min_activations`` as in ST. An entry activated
  earlier is never removed.
* **Processing order** (ST ``getSortedEntries``): chat lore, persona lore, then card/global by ``strategy``
  (1 = character first, default), each sorted by ``order`` descending; ties: books in merge order, then uid (the
  order JavaScript iterates a WI file's ``entries``).
* **Timed effects** (:class:`TimedEffects`, counted in chat messages): a newly activated entry with ``sticky`` /
  ``cooldown`` gets ``end = chat_length + n``; sticky keeps it active while ``chat_length < end``; when sticky
  ends its cooldown starts (protected); an effect is dropped when the chat did not advance past its start
  (regenerate/swipe) or the entry changed (hash of the entry).
* **Placement:** :attr:`ActivationResult.entries` is the insertion order — ``order`` ascending (higher order ends
  nearer the end of the prompt), ties in reverse activation order, as ST's ``unshift``; :meth:`positions` and
  :meth:`depth_groups` split it as ST does.

Known differences besides the (Liyuan) ones: an entry in several inclusion groups that loses twice does not make ST's
``splice(-1)`` remove an unrelated entry; character filters by tag are ignored (names are checked against
``character``); the token count is approximate (:func:`approx_tokens`); probability ``null`` reads as 100; a
translated regex key sees Python code points where JavaScript without ``u`` sees UTF-16 units (``/^.$/`` matches an
emoji here) and folds ``ſ``/``K`` to s/k under ``i``.

In Liyuan the injection lists only the titles hit this beat (【相关设定】) and the index of all non-constant titles
(【设定集索引】); the model pulls the text it needs with ``lorebook_search`` (seed 000/002 runs).
"""

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

# issue 15: a name's module is imported when the name is first read (importing one submodule no longer
# imports them all, and what they import)
__getattr__, __dir__ = lazy_exports(__name__, {
    "ActivationOptions": ".activation",
    "ActivationResult": ".activation",
    "approx_tokens": ".budget",
    "budget_from_context": ".budget",
    "JsRegexUnsupported": ".jsregex",
    "translate_js_regex": ".jsregex",
    "compile_key": ".keys",
    "key_matches": ".keys",
    "Lorebook": ".lorebook",
    "merge_books": ".lorebook",
    "LoreEntry": ".model",
    "ScanMessage": ".model",
    "TimedEffects": ".timed",
})

if TYPE_CHECKING:
    from .activation import ActivationOptions, ActivationResult
    from .budget import approx_tokens, budget_from_context
    from .jsregex import JsRegexUnsupported, translate_js_regex
    from .keys import compile_key, key_matches
    from .lorebook import Lorebook, merge_books
    from .model import LoreEntry, ScanMessage
    from .timed import TimedEffects

__all__ = [
    "ActivationOptions", "ActivationResult", "JsRegexUnsupported", "LoreEntry", "Lorebook", "ScanMessage", "TimedEffects",
    "approx_tokens", "budget_from_context", "compile_key", "key_matches", "merge_books", "translate_js_regex",
]
