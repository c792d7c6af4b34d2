"""The roster said for the reader (issue 32): in Chinese exactly the text the model reads (``format_roster``); in
English one line per section with each run of names first seen at one time followed once by that time — the demo's
"Rainsong Inn (raining) (Dusk (raining))" read badly."""

from __future__ import annotations

from liyuan_desktop.core.ledger.state import Roster, WorldState, format_roster
from liyuan_desktop.core.ledger.wording import first_seen_runs, roster_in_words


def _state() -> WorldState:
    return WorldState(location="Rainsong Inn (raining)", roster=Roster(
        characters={"Qingwu": "Dusk (raining)", "Traveller": "Dusk (raining)", "Huaijin": "Night"},
        places={"Rainsong Inn (raining)": "Dusk (raining)", "Rainsong Inn": "Dusk (raining)"},
        items={"old umbrella": ""},
        events={"The Traveller is looking for Huaijin; nobody says where he went": "Dusk (raining)"}))


def test_runs_keep_the_order_and_group_neighbours_only():
    assert first_seen_runs({"a": "t1", "b": "t1", "c": "t2", "d": "t1", "e": ""}) == [
        (["a", "b"], "t1"), (["c"], "t2"), (["d"], "t1"), (["e"], "")]
    assert first_seen_runs({}) == []


def test_english_roster_reads_as_english():
    assert roster_in_words(_state(), "en") == (
        "Characters: Qingwu, Traveller — first seen Dusk (raining); Huaijin — first seen Night\n"
        "Places: Rainsong Inn (raining), Rainsong Inn — first seen Dusk (raining)\n"
        "Items: old umbrella\n"
        "Plot threads: “The Traveller is looking for Huaijin; nobody says where he went” — first seen Dusk (raining)")
    assert roster_in_words(WorldState(), "en") == "(nobody listed yet)"


def test_chinese_roster_is_the_models_text():
    st = WorldState(roster=Roster(characters={"青梧": "傍晚（雨中）", "旅人": "傍晚（雨中）"},
                                  places={"青梧的客栈（檐外下雨）": "傍晚（雨中）"}, events={"寻人": ""}))
    assert roster_in_words(st, "zh") == format_roster(st) == \
        "人物：青梧（傍晚（雨中））、旅人（傍晚（雨中））；地点：青梧的客栈（檐外下雨）（傍晚（雨中））；剧情线：寻人"
    assert roster_in_words(_state(), "zh") == format_roster(_state())


def test_story_threads_that_hold_commas_are_told_apart_in_english_and_unchanged_in_chinese():
    """Issue 32's note: the scribe's 「Story threads:」 line joined threads with ", ", so a thread holding a comma
    ran into the next. English joins them with "; "; the Chinese line keeps 「、」 byte for byte."""
    from liyuan_desktop.core.ledger.state import WorldState, apply_patch
    from liyuan_desktop.core.ledger.wording import applied_in_words
    from liyuan_desktop.core.messages import render
    threads = ["She hides the umbrella, which burned", "the ferry, at dawn", "渡口"]
    line = apply_patch(WorldState(), {"plot_threads": threads}).applied[0]
    assert render(applied_in_words(line), "en") == "Story threads: " + "; ".join(threads)
    assert render(applied_in_words(line), "zh") == "情节线：" + "、".join(threads)
    assert render(line, "zh") == "plot_threads → [" + "、".join(threads) + "]"  # what the session keeps
