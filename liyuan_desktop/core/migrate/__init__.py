"""One-step migration from SillyTavern (issue 16 §3): ``scan(path)`` finds a SillyTavern data folder (``data/<user>/``
of 1.12+, a SillyTavern root, the older ``public/`` layout, or a backup zip of any of them) and plans its import;
``run(plan, progress, cancel)`` imports cards with their chats, world books with the card/chat links, presets with
the active one as default, personas with the default one, and the settings that change how a chat plays — never
keys (``secrets.json`` is not read). Re-running skips identical items and renames conflicts (never overwrites);
cancel leaves nothing behind; the report is saved in ``<home>/导入记录/<time>/``.

This room sits above ``chat`` (it creates chats) and reuses what each room already has: card import
(``cards.library``), the SillyTavern chat reader (``cards.st_chat`` via ``chat.folder``), the preset library
(``prompt.presets.store``), personas (``cards.personas``), world books (``lore.books``) and world-info settings
(``lore.settings``).
"""

from .apply import run, save_report
from .model import MigrationPlan, MigrationReport, NotImported, PlanItem, human_size
from .scan import scan
from .source import MigrationError

__all__ = ["MigrationError", "MigrationPlan", "MigrationReport", "NotImported", "PlanItem", "human_size", "run",
           "save_report", "scan"]
