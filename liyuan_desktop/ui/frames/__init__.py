"""The conversation and the card frames: the conversation view (a QWebEngineView around our host page), the guard
that keeps status-bar frames from reaching anything (frame_guard), the card's display regex off the UI thread
(regex_worker), the Liyuan panels, card previews, avatars and the find bar over the conversation."""
