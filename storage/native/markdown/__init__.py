"""Workspace markdown: MEMORY.md, USER.md, SOUL.md, memory/YYYY-MM-DD.md, ... as memories.

Importers name the module they need; nothing is re-exported here, so importing one part
does not import the others.
"""
