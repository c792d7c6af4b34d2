"""Agent mode's writing desk: the chapter folder (正文/) and its checkpoints (seed 000, agent mode and 检查点).

:mod:`.layout` names the novel's folders and files in the chat folder (``正文/``, ``大纲.md``, ``历史/``; a new
novel in English: ``chapters/``, ``outline.md``, ``history/``); :mod:`.workspace` is the chapter folder the file
tools (read/grep/edit/write) work in, confined to the story dir; :mod:`.chapters` names and splits chapters; :mod:`.checkpoints` (+ :mod:`.checkpoint_model`) keeps content-addressed
blobs and a manifest log with diff and restore; :mod:`.export` writes Markdown/EPUB/DOCX. Knows nothing of beats or
chats: it imports only core's foundations (errors, text units, atomic files).
"""
