"""Issue 32: the labels the app writes for its own checkpoints (restore, the autosave before it, undo, imported
chapters, a rewrite) follow the story's language — an English novel's checkpoint timeline reads English, a Chinese
one keeps the seed's labels byte for byte (StoryHistory.label, ``cp.label.*``)."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import ROOT

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel

CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")


def _restore_round(d: Path, card: Path, names: tuple[str, str]) -> list[str]:
    chat = Chat.create(d, load_card(card), ReplayModel(actor=[]), mode="agent")
    first = chat.import_chapters([(names[0], "Dawn.\n")])
    chat.import_chapters([(names[1], "Dusk.\n")], message="two")
    chat.story.edit(names[1], "Dusk.", "Dusk, again.")  # unsaved change: the restore first saves it
    assert first is not None
    chat.restore_checkpoint(first.id)
    chat.undo_restore(chat.history_log.checkpoints()[-2].id, None)  # back to the autosave made before the restore
    labels = [c.message for c in chat.history_log.checkpoints()]
    chat.close()
    return labels


def test_an_english_novels_own_labels_are_english(tmp_path):
    labels = _restore_round(tmp_path / "Book", ROOT / "cards" / "Qingwu" / "default_Qingwu.json",
                            ("001-Dawn.md", "002-Dusk.md"))
    assert labels[0] == "Imported chapters" and labels[1] == "two"
    assert labels[2:] == ["Saved before restoring", "Restored to “Imported chapters”", "Undid the restore"]
    assert not any(CJK.search(x) for x in labels)


def test_a_chinese_novel_keeps_the_seeds_labels(tmp_path):
    labels = _restore_round(tmp_path / "局", ROOT / "cards" / "青梧" / "default_Qingwu.json",
                            ("001-晨.md", "002-暮.md"))
    assert labels == ["导入章节", "two", "恢复前自动保存", "恢复到「导入章节」", "撤销恢复"]
