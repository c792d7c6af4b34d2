"""Memory of long games: compaction into relay summaries (前情提要) and ``memory_search`` over the whole branch.

:mod:`.compaction` decides after a turn whether the next prompt is too large and summarises the oldest turns into
summary entries on the session tree (issue 7); :mod:`.search` holds the pure rules it uses (where to cut, summary
sizes, when to merge summaries) and the incremental BM25 index behind ``memory_search``.
Imports: prompt (what the window holds), beat (events), session, llm.
"""
