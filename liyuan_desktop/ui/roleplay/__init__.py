"""The role-play panes beside the conversation: the draft (稿纸), the ledger (账本) and its form, the branch navigator
(分支), what a player does to a reply (edit, swipe, versions), the ask dialog (岔口), the prose-only switch, the prompt
inspector and the relay summaries (前情提要)."""
