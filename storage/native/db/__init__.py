"""The native memory tables (sessions, turns, scratchpad, memories, entities, relations, audit) on
SQLite (``memory.db``, sqlite_source) and PostgreSQL (postgres_source): their common reads, writes
and plans (tables, reads, changes, rows), schema and migrations, the SQLite full-text index (fts)."""
