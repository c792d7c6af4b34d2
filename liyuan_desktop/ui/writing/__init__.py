"""The writing room of agent mode (写长篇): the chapter tree and editor, the checkpoint timeline and its prose diff,
and the room's panes (大纲 outline, 伏笔 threads, 设定 codex, 审稿 review) on their two skeletons (room_pane,
story_pane); writing_panes lays them out in the window."""
