"""The desktop UI: PySide6 only, thin. It renders engine events and calls engine commands; it never computes
engine state (../shared/design/ARCHITECTURE.md, Engine <-> UI)."""
