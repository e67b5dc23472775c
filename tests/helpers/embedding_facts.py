"""Facts another tool's Chroma store holds, paraphrases that share no word with them (only a
semantic model finds them), and the loopback endpoint's API key: shared by the embedder tests
of storage and the command line."""

from __future__ import annotations

from pathlib import Path

import chromadb
from chromadb.config import Settings
from mnemoscope.storage.views.search import search

KEY = "sk-loopback-4f1c9a7e2b6d8f03a5c1"


FACTS = [
    "Alice is allergic to peanuts",
    "The user prefers dark mode in the editor",
    "Deployments to production happen every Friday afternoon",
    "Bob's favourite programming language is Rust",
    "The quarterly budget review is scheduled for March",
    "Dana moved to Lisbon last spring",
    "The team's cat is called Biscuit",
    "Backups of the database run nightly at two",
    "Carol plays the violin in an orchestra",
    "The office wifi password changes monthly",
]


# Paraphrases sharing no word with the memory they mean: only a semantic model finds them.
PARAPHRASES = {
    "food intolerance of a colleague": FACTS[0],
    "financial planning meeting": FACTS[4],
    "where does she live now in Portugal": FACTS[5],
    "name of our pet kitten": FACTS[6],
    "musician performing classical music": FACTS[8],
}


def chroma_facts(path: Path, vectors: list[list[float]], name: str = "agent-facts", **collection: object) -> None:
    """A Chroma directory another tool wrote: documents and the vectors its model made."""
    client = chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))
    col = client.get_or_create_collection(
        name, embedding_function=collection.pop("embedding_function", None),
        metadata={"hnsw:space": "cosine"}, **collection,  # type: ignore[arg-type]
    )
    col.add(
        ids=[f"f{i}" for i in range(len(FACTS))],
        documents=FACTS,
        embeddings=vectors,  # type: ignore[arg-type]
        metadatas=[{"created_at": f"2026-03-{i + 1:02d}T10:00:00Z"} for i in range(len(FACTS))],
    )



def top_hit(store, query: str) -> str | None:
    """The text of the memory a vector search (which must run) lists first, a match or a weak
    one; None when it lists none."""
    result = search(store, query, mode="vector", k=3)
    assert result.mode == "vector", result.notices
    return result.hits[0].memory.content if result.hits else None
