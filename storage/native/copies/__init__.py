"""The native workspace's copies of its memories compared with the memory rows, and repaired.

- rows.py      memory.db's memory rows, read in pages (a check never holds them all)
- vectors.py   VectorCheck: each row's vector copy (collection ``memories``) and the orphans
- markdown.py  MarkdownCheck: each row's markdown bullet, the bullets edited apart and the orphans
- check.py     check_copies: all of them, and the full-text index, into one Report
- repair.py    plan_repairs: the safe repairs of a Report's findings, as changes naming their writer

NativeWorkspace.check_copies and .plan_repairs run them (MemoryStore.consistency_checks and
.plan_repairs ask it). Importers name the module they need; nothing is re-exported here.
"""
