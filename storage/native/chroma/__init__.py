"""Chroma vector stores: a local persistent directory and a ``chroma run`` server, as sources.

- local.py: ChromaSource, a local persistent directory's collections as memories (reads through
  files.py, writes through chromadb's client), and its vector search (local_vector_search.py);
- files.py: the directory's chroma.sqlite3 read directly, read-only (records, metadata, keyword
  counting), with hnsw.py (the persisted HNSW index and graph) and embeddings_queue.py (the
  operations Chroma's log holds that its segments do not yet);
- client.py: chromadb's client, started only to write, and whether it may (migrations, links);
- server.py: ChromaServerSource, the collections of a Chroma server, and its URLs;
- records.py: what a record is to Mnemoscope, for both: its id, a Memory, its plans;
- index.py: RecordIndex, a collection's records as columns, and IndexedReads, the count, page
  and filter reads both sources answer from it; index_cache.py keeps a local directory's;
- vector_collection.py: VectorCollection, a collection's vectors a batch at a time and its
  record index, as both sources hand them out to readers of every vector (the embedding map).

Importers name the module they need: nothing is re-exported here.
"""
