"""The native workspace agents embed: memory.db, vectors/ and workspace markdown."""
