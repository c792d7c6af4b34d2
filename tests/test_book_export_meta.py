"""Issue 17 "Export": a book's title and author come from the card and the persona, not from the generated chat
folder name; a title the user gave is kept."""

from __future__ import annotations

import zipfile

import pytest

from liyuan_desktop.core.cards import library
from liyuan_desktop.core.cards.personas import Persona
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.story.export import book_meta


def agent_chat(title: str = "", persona: str = "林晚") -> Chat:
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card)  # 对话-YYYYmmdd-HHMMSS
    assert d.name.startswith("对话-")
    chat = Chat.create(d, card.load(), ReplayModel(actor=[]), mode="agent", title=title,
                       persona_obj=Persona(name=persona) if persona else None)
    (d / "正文").mkdir(exist_ok=True)
    (d / "正文" / "001-雨夜.md").write_text("雨下了一夜。", "utf-8")
    return chat


def test_markdown_epub_docx_take_the_card_name_and_the_persona(tmp_path):
    chat = agent_chat()
    md = chat.export("md", tmp_path / "b.md").read_text("utf-8")
    assert md.startswith("# 青梧\n\n作者：林晚\n") and chat.dir.name not in md
    with zipfile.ZipFile(chat.export("epub", tmp_path / "b.epub")) as z:
        opf = next(z.read(n).decode() for n in z.namelist() if n.endswith(".opf"))
    assert "<dc:title>青梧</dc:title>" in opf and "林晚</dc:creator>" in opf
    docx = pytest.importorskip("docx")
    doc = docx.Document(str(chat.export("docx", tmp_path / "b.docx")))
    assert doc.core_properties.title == "青梧" and doc.core_properties.author == "林晚"
    assert [p.text for p in doc.paragraphs][:2] == ["青梧", "作者：林晚"]


def test_a_given_title_is_kept_and_the_persona_defaults_to_the_cards(tmp_path):
    chat = agent_chat(title="听雨录", persona="")
    assert book_meta(chat.dir / "正文", "听雨录") == ("听雨录", "旅人")  # the demo card's persona_name
    assert chat.export("md", tmp_path / "b.md").read_text("utf-8").startswith("# 听雨录\n\n作者：旅人\n\n## 雨夜")
    assert book_meta(chat.dir / "正文", "听雨录", "笔名") == ("听雨录", "笔名")
    assert book_meta(tmp_path / "nowhere" / "正文", "") == ("nowhere", "")
