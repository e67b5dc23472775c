"""The audit log and undo journal of a store: ``log.py`` (the Journal: steps, their changes,
undo and redo, settings) and ``tables.py`` (its own tables and their one migration path).
"""
