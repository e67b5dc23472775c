"""PySide6 widgets, item models and views (the desktop app; see issue 3)."""
