"""Workspace markdown: MEMORY.md, USER.md, SOUL.md, memory/YYYY-MM-DD.md, ... as memories.

- files.py        which files are memory files, their layers and dates, UTF-8, paths kept inside
- blocks.py       Block, content keys and ``md:<file>:<key>`` ids, a block's lines rendered
- scan.py         a file's bytes into blocks, fast (a line scanner, markdown-it where needed)
- file_blocks.py  one scanned file's blocks, looked up by key and ordered by id
- file_index.py   per-file summaries (blocks per heading) kept between opens in the cache folder
- source.py       MarkdownSource: the files of one workspace read, planned and written

Importers name the module they need; nothing is re-exported here, so importing one part
does not import the others.
"""
