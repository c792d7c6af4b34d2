"""The main window and its parts: the layout (main_window), the open/close flow of a chat (chat_flow), the chat
commands and their menu (chat_commands, menus), the card and chat list (library_tree, manage), the slow commands off
the UI thread (chat_work), agent mode's hooks (agent_desk), the language switch (language_switch: the window built
again), start-up warming, the self-test, the crash dialog and the start-up bench hooks. ``window_face`` declares for
mypy what the parts use of the window."""
