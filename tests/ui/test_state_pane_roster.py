"""The ledger pane's roster (issue 32): Chinese as it always was; English without a first-seen time in brackets
after every name ("Rainsong Inn (raining) (Dusk (raining))"), each run of names first seen at one time followed
once by that time."""

from __future__ import annotations

import pytest

from liyuan_desktop.core.ledger.state import Roster, WorldState
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.roleplay.state_pane import ledger_html


@pytest.fixture
def lang():
    yield i18n.set_language
    i18n.set_language("zh")


def _roster(html: str) -> str:
    return html[html.index("<h4>", html.index("登场名录" if "登场名录" in html else "Roster") - 5):]


def test_chinese_roster_unchanged(lang):
    lang("zh")
    st = WorldState(roster=Roster(characters={"青梧": "傍晚", "旅人": ""}, places={"客栈": "傍晚"},
                                  events={"寻人<急>": "夜"}))
    assert _roster(ledger_html(st, [], [])) == (
        "<h4>登场名录</h4><b>人物</b>：青梧<span class=dim>（傍晚）</span>、旅人<br>"
        "<b>地点</b>：客栈<span class=dim>（傍晚）</span><br>"
        "<b>剧情线</b>：寻人&lt;急&gt;<span class=dim>（夜）</span><br>")


def test_english_roster_says_the_time_once_per_run(lang):
    lang("en")
    st = WorldState(roster=Roster(
        characters={"Qingwu": "Dusk (raining)", "Traveller": "Dusk (raining)", "Huaijin": "Night"},
        places={"Rainsong Inn (raining)": "Dusk (raining)", "Rainsong Inn": "Dusk (raining)"},
        items={"umbrella": ""}, events={"Find <him>": "Dusk (raining)"}))
    html = _roster(ledger_html(st, [], []))
    assert html == (
        "<h4>Roster</h4>"
        "<b>Characters</b>: Qingwu, Traveller<span class=dim> — first seen Dusk (raining)</span>; "
        "Huaijin<span class=dim> — first seen Night</span><br>"
        "<b>Places</b>: Rainsong Inn (raining), Rainsong Inn<span class=dim> — first seen Dusk (raining)</span><br>"
        "<b>Items</b>: umbrella<br>"
        "<b>Plot threads</b>: “Find &lt;him&gt;”<span class=dim> — first seen Dusk (raining)</span><br>")
