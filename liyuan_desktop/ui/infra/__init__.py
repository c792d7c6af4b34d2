"""What every screen stands on, with no screen of its own: the widget-free session (what is open and running), the one
task runner and the collector pump (tasks, work), the theme, the UI strings in both languages (i18n) and the fallback
fonts' hint (cjk_font)."""
