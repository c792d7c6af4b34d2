"""Settings: the settings dialog (providers, keys, persona, language, theme), the world-info settings page, local
models and the connection profiles chooser."""
