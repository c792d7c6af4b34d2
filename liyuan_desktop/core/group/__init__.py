"""Group chats (issue 31): a group of library cards (:mod:`.model`), who speaks next (:mod:`.speakers`), the card a
member speaks with (:mod:`.prompt`), presence and who knows what (:mod:`.witness`), SillyTavern's group files in
and out (:mod:`.st`). A group chat is an ordinary chat (``core/chat/group_play.py`` plays it through ``Chat``)."""

from .model import Group, GroupError, delete_group, list_groups, load_group, save_group

__all__ = ["Group", "GroupError", "delete_group", "list_groups", "load_group", "save_group"]
