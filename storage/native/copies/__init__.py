"""The native workspace's copies of its memories compared with the memory rows, and repaired.

- rows.py      memory.db's memory rows, read in pages (a check never holds them all)
- vectors.py   VectorCheck: each row's vector copy (collection ``memories``) and the orphans
- markdown.py  MarkdownCheck: each row's markdown bullet, the bullets edited apart and the orphans

Importers name the module they need; nothing is re-exported here. NativeWorkspace runs them.
"""
