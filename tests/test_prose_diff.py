"""core/story/prose_diff.py: sentence-then-word diffs of prose (the checkpoint timeline's diff, issue 17)."""

from __future__ import annotations

import random

import pytest

from liyuan_desktop.core.story.prose_diff import Piece, diff_prose, diff_words, split_sentences, tokens


@pytest.mark.parametrize("text", [
    "", "\n\n", "雨从黄昏下起。渡口的灯亮了！「你还记得他吗？」她说。\n\n第二段……没有结尾",
    "Mr. Smith paid 3.14 dollars. Then he left... And? Yes!", "a.b.c", "end.", "「嗯。」「好。」\r\n下一行",
])
def test_sentences_and_tokens_join_back_exactly(text):
    assert "".join(split_sentences(text)) == text
    assert "".join(tokens(text)) == text


def test_sentence_ends_keep_their_closing_quotes_and_lines_split():
    assert split_sentences("「你还记得他吗？」她说。\n\n他走了……雨停了") == \
        ["「你还记得他吗？」", "她说。", "\n", "\n", "他走了……", "雨停了"]
    # a dot inside a number or a name does not end an English sentence; a dot before a space does
    assert split_sentences("It cost 3.14 yuan. He left.") == ["It cost 3.14 yuan. ", "He left."]


def test_tokens_are_cjk_characters_and_latin_words():
    assert tokens("她说：Hello world，3 好。") == ["她", "说", "：", "Hello", " ", "world", "，", "3", " ", "好", "。"]


def _sides(pieces):
    return ("".join(p.text for p in pieces if p.op != "insert"), "".join(p.text for p in pieces if p.op != "delete"))


def test_one_changed_character_in_a_long_paragraph_is_all_that_is_marked():
    old = "雨从黄昏下起，渡口的灯一盏盏亮了。她背对着你，声音很轻。雨声很密。"
    new = "雨从黄昏下起，渡口的灯一盏盏灭了。她背对着你，声音很轻。雨声很密。"
    d = diff_prose(old, new)
    changes = [b for b in d.blocks if b.kind == "change"]
    assert len(changes) == 1 and changes[0].old == "雨从黄昏下起，渡口的灯一盏盏亮了。" and not changes[0].rewrite
    assert [p for p in changes[0].pieces if p.op != "equal"] == [Piece("delete", "亮"), Piece("insert", "灭")]
    assert d.added == 1 and d.removed == 1 and d.changed_sentences == 1
    # unchanged sentences come back as equal blocks, sentence by sentence (for collapsing)
    assert d.blocks[1].kind == "equal" and d.blocks[1].sentences == ("她背对着你，声音很轻。", "雨声很密。")
    assert "".join(b.old for b in d.blocks) == old and "".join(b.new for b in d.blocks) == new


def test_latin_words_are_whole_units():
    pieces, rewrite = diff_words("The rain stopped at dusk.", "The snow stopped at dawn.")
    assert not rewrite
    assert [p for p in pieces if p.op != "equal"] == [Piece("delete", "rain"), Piece("insert", "snow"),
                                                      Piece("delete", "dusk"), Piece("insert", "dawn")]


def test_a_rewritten_sentence_is_removed_and_added_whole():
    d = diff_prose("她笑了。\n", "窗外风声大作，远处传来钟响。\n")
    ch = [b for b in d.blocks if b.kind == "change"][0]
    assert ch.rewrite and ch.pieces == (Piece("delete", "她笑了。"), Piece("insert", "窗外风声大作，远处传来钟响。"))


def test_added_and_removed_files():
    d = diff_prose(None, "新的一章。\n")
    assert d.changed and d.added == len("新的一章。\n") and d.removed == 0
    assert [b.pieces for b in d.blocks] == [(Piece("insert", "新的一章。\n"),)]
    d = diff_prose("旧的一章。", None)
    assert [b.pieces for b in d.blocks] == [(Piece("delete", "旧的一章。"),)]
    assert not diff_prose("同样。", "同样。").changed and not diff_prose(None, None).blocks
    # line breaks are not sentences in the count
    assert diff_prose(None, "开场。雨夜，渡口。\n\n").changed_sentences == 2


def test_randomised_diffs_reproduce_both_texts():
    rnd = random.Random(7)
    words = "雨 灯 河 她 你 说 走 看 风 夜 山 水 的 了 是 在 rain lamp".split()

    def sentence() -> str:
        return "".join(rnd.choice(words) for _ in range(rnd.randint(1, 12))) + rnd.choice(["。", "！", "？」", "\n", ". "])

    for _ in range(60):
        a = "".join(sentence() for _ in range(rnd.randint(0, 30)))
        parts = split_sentences(a)
        for _k in range(rnd.randint(0, 5)):
            op = rnd.choice("rid")
            i = rnd.randint(0, len(parts))
            if op == "i":
                parts.insert(i, sentence())
            elif parts and i < len(parts):
                if op == "d":
                    parts.pop(i)
                else:
                    parts[i] = parts[i][:2] + rnd.choice(words) + parts[i][3:]
        b = "".join(parts)
        d = diff_prose(a, b)
        assert "".join(x.old for x in d.blocks) == a and "".join(x.new for x in d.blocks) == b
        for blk in d.blocks:
            if blk.kind == "change":
                assert _sides(blk.pieces) == (blk.old, blk.new)
        assert d.changed == (a != b)


def test_a_20000_character_chapter_with_scattered_edits_marks_only_the_edits():
    rnd = random.Random(1)
    words = "雨 灯 河 她 你 说 走 看 风 夜 山 水 的 了 是 在 有 一 个 人".split()
    chapter = "".join("".join(rnd.choice(words) for _ in range(rnd.randint(5, 25))) + rnd.choice("。！？")
                      + ("\n" if rnd.random() < 0.2 else "") for _ in range(1400))[:20000]
    parts = split_sentences(chapter)
    picked = sorted(rnd.sample(range(len(parts)), 12))
    for i in picked:
        parts[i] = parts[i][:3] + "改动" + parts[i][4:]
    d = diff_prose(chapter, "".join(parts))
    assert d.changed_sentences == 12 and d.added == 24
