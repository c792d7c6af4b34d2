"""story"""
