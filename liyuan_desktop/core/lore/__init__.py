"""lore"""
