"""The scene ledger (账本) a scribe (场记) keeps after each sealed beat (seed 002).

:mod:`.state` is the world state with the fixed patch merge rules, the roster (登场名录) and presence; :mod:`.scribe`
is the scribe call (prompt, robust JSON parse, warnings fed back); :mod:`.mvu` the MVU variable tree of status-bar
cards ([InitVar], ``<UpdateVariable>`` commands, ``mvu_patch``); :mod:`.panels` Liyuan's own panels (template + data).
Imports: lore (InitVar entries), llm, and core's foundations — never a chat, a prompt or a beat.
"""
