"""SillyTavern's group settings in and out (issue 31, core/group/st.py): each key of ``groups/<id>.json`` that
SillyTavern reads (``public/scripts/group-chats.js``; ``src/endpoints/groups.js`` ``/create``) maps to the group's
setting, a change made in Liyuan is written back in SillyTavern's codes, and what Liyuan does not use (sprites,
metadata, members missing from the library, codes of a newer SillyTavern) comes back as it was."""

from __future__ import annotations

import json

from test_group_chat import make_members

from liyuan_desktop.core.group import load_group, save_group
from liyuan_desktop.core.group.st import export_st_group, group_from_st, group_to_st, import_st_group

BASE = {"id": "1700000000001", "name": "Road", "members": ["Aster.png", "Birch.png", "青梧.png"],
        "avatar_url": "img/five.png", "allow_self_responses": True, "activation_strategy": 1, "generation_mode": 2,
        "disabled_members": ["青梧.png"], "chat_metadata": {"note_prompt": "rain"}, "fav": False,
        "chat_id": "Road - 1", "chats": ["Road - 1"], "auto_mode_delay": 12,
        "generation_mode_join_prefix": "[{{char}}]", "generation_mode_join_suffix": "[/{{char}}]",
        "hideMutedSprites": True, "past_metadata": {"Road - 0": {"x": 1}}}


def by_stem(avatar: str):
    stem = avatar.rsplit(".", 1)[0]
    return stem if stem in {"Aster", "Birch", "青梧"} else None


def test_every_confirmed_field_maps_to_the_groups_setting():
    g, notes = group_from_st(BASE, by_stem)
    assert notes == []
    assert g.members == ["Aster", "Birch", "青梧"] and g.muted == ["青梧"]
    assert g.strategy == "list" and g.join_cards == "join_muted" and g.allow_self_responses
    assert g.join_prefix == "[{{char}}]" and g.join_suffix == "[/{{char}}]"
    assert g.auto_delay == 12.0
    assert group_to_st(g, ["Road - 1"]) == BASE  # unchanged: written back exactly


def test_changes_made_in_liyuan_go_back_in_sillytaverns_codes():
    g, _ = group_from_st(BASE, by_stem)
    g.strategy, g.join_cards, g.allow_self_responses = "pooled", "swap", False
    g.muted, g.auto_delay, g.join_prefix = ["Aster"], 2.5, "<{{char}}>"
    out = group_to_st(g, ["Road - 1"])
    assert out["activation_strategy"] == 3 and out["generation_mode"] == 0 and out["allow_self_responses"] is False
    assert out["disabled_members"] == ["Aster.png"] and out["auto_mode_delay"] == 2.5
    assert out["generation_mode_join_prefix"] == "<{{char}}>"
    assert out["hideMutedSprites"] is True and out["past_metadata"] == BASE["past_metadata"]  # not Liyuan's: kept
    for code, name in ((0, "natural"), (1, "list"), (2, "manual"), (3, "pooled")):
        assert group_from_st({**BASE, "activation_strategy": code}, by_stem)[0].strategy == name
    for code, name in ((0, "swap"), (1, "join"), (2, "join_muted")):
        assert group_from_st({**BASE, "generation_mode": code}, by_stem)[0].join_cards == name


def test_missing_members_and_unknown_codes_come_back_as_they_were():
    data = {**BASE, "members": ["Aster.png", "Ghost.png", "Birch.png"], "disabled_members": ["Ghost.png"],
            "activation_strategy": 9, "generation_mode": 7}
    g, notes = group_from_st(data, by_stem)
    assert g.members == ["Aster", "Birch"] and len(notes) == 1  # Ghost is not in the library: said, left out
    assert g.strategy == "natural" and g.join_cards == "swap"  # played as SillyTavern's defaults here
    out = group_to_st(g, ["Road - 1"])
    assert out["members"] == ["Aster.png", "Birch.png", "Ghost.png"] and out["disabled_members"] == ["Ghost.png"]
    assert out["activation_strategy"] == 9 and out["generation_mode"] == 7
    g.strategy = "list"  # set in Liyuan: its code wins
    assert group_to_st(g, ["Road - 1"])["activation_strategy"] == 1


def test_defaults_and_bad_values():
    g, _ = group_from_st({"name": "Bare", "members": ["Aster.png"]}, by_stem)
    assert g.auto_delay == 5.0 and g.strategy == "natural" and g.join_cards == "swap" and not g.allow_self_responses
    assert group_from_st({**BASE, "auto_mode_delay": "soon"}, by_stem)[0].auto_delay == 5.0
    assert group_from_st({**BASE, "auto_mode_delay": -3}, by_stem)[0].auto_delay == 0.0
    out = group_to_st(g, [])
    assert out["auto_mode_delay"] == 5 and out["hideMutedSprites"] is False and out["members"] == ["Aster.png"]


def test_file_round_trip_through_the_library_keeps_the_fields(tmp_path):
    make_members(tmp_path / "cards")
    src = tmp_path / "st"
    (src / "groups").mkdir(parents=True)
    (src / "group chats").mkdir()
    (src / "groups" / "1700000000001.json").write_text(json.dumps(BASE, ensure_ascii=False), "utf-8")
    group, notes = import_st_group(src / "groups" / "1700000000001.json", by_stem)
    assert any("Road - 1" in n for n in notes)  # the chat file is not there: said
    assert load_group("Road").auto_delay == 12.0
    group.auto_delay = 30
    save_group(group)
    written = export_st_group(load_group("Road"), {}, tmp_path / "out")
    back = json.loads(written[0].read_text("utf-8"))
    assert back == {**BASE, "auto_mode_delay": 30, "chats": BASE["chats"]}
