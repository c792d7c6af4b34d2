"""What the model is sent: prompt assembly, SillyTavern presets, the context window, the inspector's rebuilds.

:mod:`.assemble` builds the byte-stable system prompt, the history from the tree and the end-of-prompt injection
(seed 000, golden round2/round3 ``messages_sent``); :mod:`.presets` maps a SillyTavern preset onto our layers (its
macros go through the one engine, :mod:`core.macros`); :mod:`.window` fits the history into the model's context and
keeps the token estimates; :mod:`.tokens` counts tokens; :mod:`.inspect` records and rebuilds every call as sent.
Imports: beat (tool specs), cards, ledger, lore, macros, session, llm.
"""
