"""The beat (拍): one user turn written on the draft (稿纸) until it is sealed (收笔).

:mod:`.loop` runs the model calls (≤ 20 rounds, reads concurrent, writes and asks in order, stray-text capture, Stop);
:mod:`.draft` is the versioned draft with UTF-16 offsets and forgiving edit matching; :mod:`.merge` joins the draft
and the format blocks into the final; :mod:`.events` are the typed events the UI and the CLI render; :mod:`.tools` is
the one tool registry — every tool the model can call, declared once (seed 000, beat loop and draft tools).
Imports: story (the agent file tools work on the chapter folder), ledger, lore, session, llm, and core's foundations.
"""
