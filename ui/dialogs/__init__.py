"""The window's dialogs, one module each."""
