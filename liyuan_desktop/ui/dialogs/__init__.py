"""The dialogs a user opens from a menu: about, the author's note, the card's world book editor, the world books of a
chat, the persona picker, the preset library, search across chats, export, the SillyTavern migration, and the two
small questions every pane asks (confirm with No as default, warn)."""
