"""AgenticX's automatic recall into the Meta-Agent's system prompt (seed 000, "Automatic recall:
_build_memory_recall_context"), as agenticx 0.6.5 runs it (memory/workspace_memory.py,
``WorkspaceMemoryStore.search_sync``).

The seed: the query is the last user messages, at most 500 characters; a hybrid search, limit 5,
over MEMORY.md, IDENTITY.md, USER.md, SOUL.md and memory/*.md; the snippets injected are capped
around 500 characters in all. agenticx 0.6.5 (memory/recall.py search_memory_for_chat,
runtime/prompts/meta_agent.py) asks ``search_sync(limit=30)`` and keeps the first 5; its hybrid
search, which this preview repeats over the workspace's entries:

- an FTS list of 2 x 30: the entries holding every word of the query (FTS5's implicit AND: the
  raw text is the MATCH expression, so text FTS5 cannot parse fails the whole recall and nothing
  is injected), in index order, scored 1 - 0.01 x position;
- a semantic list of 2 x 30: the cosine between AgenticX's own 64-dimension token-hash vector
  of the query and of each entry (``_embedding_vector``: no model, it runs anywhere);
- a substring list of 2 x 30, only when the FTS list is empty (or a term is CJK): each term
  found adds min(1, 0.5 + 0.08 x its length), halved after the first;
- merged: each entry's score is the best over the lists of max(its score, 1 - 0.02 x position),
  best first (ties in the lists' order), the first 5 kept;
- injected: each one's first 200 characters, once, until the next would pass 500 in all.

AgenticX indexes chunks of lines; Mnemoscope scores each entry (a bullet or paragraph) alone, and
reads one workspace (an avatar's own workspace filter is not previewed).
"""

from __future__ import annotations

import hashlib
import math
import re

from ..model import Kind, Memory, Status
from ..query import MemoryQuery
from ..store import MemoryStore
from ..views.search import cosine
from .result import NEAR_MISSES, Ask, Dropped, RecallResult, Scored, Term

SYSTEM = "AgenticX"
DOCUMENTED_BY = ("seed 000 (Memory in AgenticX: Automatic recall, Indexing vs raw files); agenticx 0.6.5 "
                 "WorkspaceMemoryStore.search_sync for the hybrid ranking")
RULES = ("query: the question, at most 500 characters; hybrid search of 30, first 5 kept: FTS (every word), "
         "semantic (64-d token hash cosine), substring when FTS finds nothing; best of max(score, 1 - 0.02 x "
         "position); 200 characters of each injected, 500 in all")
LIMIT = 5
SEARCHED = 6  # search_memory_for_chat asks search_sync for 6 x limit, then keeps limit
SNIPPET_CHARS = 200
QUERY_CHARS = 500
INJECTED_CHARS = 500
DIMENSIONS = 64
INDEXED = ("MEMORY.md", "IDENTITY.md", "USER.md", "SOUL.md")
ENTRIES_READ = 20_000
_WORD = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff]")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff]{2,8}")


def owns(store: MemoryStore) -> bool:
    return any(str(getattr(s, "format", "")).startswith("agenticx") for s in store.foreign)


def search_terms(query: str) -> list[str]:
    """agenticx's extract_search_terms: words of 2+ characters with a letter or digit, CJK runs,
    single CJK characters of a query of 4 characters or fewer; each once, longest first."""
    q = query.strip()
    found = [t.strip().lower() for t in q.split()]
    found = [t for t in found if len(t) >= 2 and re.search(r"[a-z0-9]", t, re.I)]
    found += [m.group(0) for m in _CJK_RUN.finditer(q)]
    if len(q) <= 4 and _CJK.search(q):
        found += [ch for ch in q if _CJK.match(ch)]
    return sorted(dict.fromkeys(found), key=len, reverse=True)


def token_vector(text: str) -> list[float]:
    """agenticx's _embedding_vector: each whitespace token (and CJK term) hashed into one of 64 signed slots."""
    vec = [0.0] * DIMENSIONS
    tokens = [t.strip().lower() for t in text.split() if t.strip()]
    tokens += [t for t in search_terms(text) if _CJK.search(t) and t not in tokens]
    for token in tokens:
        digest = hashlib.sha256(token.encode("utf-8")).digest()
        vec[digest[0] % DIMENSIONS] += 1.0 if digest[1] % 2 == 0 else -1.0
    norm = math.sqrt(sum(v * v for v in vec))
    return [v / norm for v in vec] if norm > 0 else vec


def _file_of(memory: Memory) -> str:
    return memory.source.location.rsplit(":", 1)[0].replace("\\", "/")


def indexed(memory: Memory) -> bool:
    """Whether WorkspaceMemoryStore indexes the entry's file: the four root files and memory/*.md."""
    name = _file_of(memory)
    return name in INDEXED or (name.startswith("memory/") and name.count("/") == 1 and name.endswith(".md"))


def _index_order(memory: Memory) -> tuple[int, str, int]:
    """Where the index holds an entry: the root files in index_workspace's order, then the daily
    files by name; within a file, by line."""
    name = _file_of(memory)
    first = INDEXED.index(name) if name in INDEXED else len(INDEXED)
    return first, name, memory.source.line_start or 0


def fts_refuses(query: str) -> str:
    """FTS5's error for query as a MATCH expression ("" when it parses): AgenticX passes the raw
    text to ``chunks_fts MATCH ?`` and, when FTS5 refuses it, its recall injects nothing."""
    import sqlite3

    con = sqlite3.connect(":memory:")
    try:
        con.execute("CREATE VIRTUAL TABLE t USING fts5(text)")
        con.execute("SELECT * FROM t WHERE t MATCH ?", (query,)).fetchall()
        return ""
    except sqlite3.OperationalError as exc:
        return str(exc)
    finally:
        con.close()


def run(store: MemoryStore, ask: Ask) -> RecallResult:
    k = ask.k or LIMIT
    query = ask.question.strip()[:QUERY_CHARS]
    result = RecallResult(system=SYSTEM, rules=RULES, documented_by=DOCUMENTED_BY, documented=True,
                          question=ask.question, scope={}, hits=[], signal="hybrid",
                          embedder="AgenticX's 64-dimension token hash (its own, no model)")
    if len(ask.question.strip()) > QUERY_CHARS:
        result.notices.append(f"The question is cut to its first {QUERY_CHARS} characters, as AgenticX cuts its query.")
    entries = store.page(MemoryQuery(kinds=(Kind.MARKDOWN,), statuses=()), ENTRIES_READ)
    refused = fts_refuses(query)
    if refused:
        result.notices.append(f"AgenticX's full-text search refuses this text ({refused}): its recall fails and "
                              "nothing is injected. Without the punctuation FTS5 reads as syntax it would run.")
        return result
    searched = sorted((m for m in entries if indexed(m) and m.status is Status.ACTIVE), key=_index_order)
    merged = _merged(query, searched, 2 * SEARCHED * k)
    hits = sorted(merged.values(), key=lambda s: -s.score)  # stable: ties keep the lists' order, FTS first
    result.hits, result.near_misses = hits[:k], hits[k:k + NEAR_MISSES]
    result.extra[f"injected into the system prompt (at most {INJECTED_CHARS} characters)"] = injected(result.hits)
    for memory in entries:
        if not indexed(memory) and _holds_a_term(memory, query):
            result.dropped.append(Dropped(memory, f"{_file_of(memory)} is not indexed: AgenticX searches MEMORY.md, "
                                          "IDENTITY.md, USER.md, SOUL.md and memory/*.md"))
    return result


def injected(hits: list[Scored]) -> list[Scored]:
    """What _build_memory_recall_context puts in the prompt: each hit's first 200 characters, once
    (by its words), until the next would pass 500 characters in all."""
    out: list[Scored] = []
    total = 0
    seen: set[str] = set()
    for hit in hits:
        snippet = hit.memory.content.strip()[:SNIPPET_CHARS]
        key = " ".join(snippet.split())
        if not snippet or key in seen:
            continue
        seen.add(key)
        if total + len(snippet) > INJECTED_CHARS:
            out.append(Scored(hit.memory, 0.0, (), f"not injected: {total} + {len(snippet)} characters would pass "
                              f"{INJECTED_CHARS}", found_by="cut"))
            break
        total += len(snippet)
        out.append(Scored(hit.memory, float(len(snippet)), (), f"{len(snippet)} of {len(hit.memory.content)} "
                          "characters injected", found_by="injected"))
    return out


def _holds_a_term(memory: Memory, query: str) -> bool:
    text = memory.content.lower()
    return any(t in text for t in search_terms(query))


def _merged(query: str, entries: list[Memory], n: int) -> dict[str, Scored]:
    words = {w.casefold() for w in _WORD.findall(query)}
    fts = [m for m in entries if words and words <= {w.casefold() for w in _WORD.findall(m.content)}][:n]
    lists: list[tuple[str, list[tuple[Memory, float]]]] = [("fts", [(m, 1.0 - i * 0.01) for i, m in enumerate(fts)])]
    q = token_vector(query)
    semantic = sorted(((m, cosine(q, token_vector(m.content))) for m in entries), key=lambda p: (-p[1], p[0].id))
    lists.append(("semantic", semantic[:n]))
    terms = search_terms(query)
    if terms and (not fts or any(_CJK.search(t) for t in terms)):
        lists.append(("substring", _substring(terms, entries)[:n]))
    merged: dict[str, Scored] = {}
    for name, found in lists:
        for position, (memory, score) in enumerate(found):
            rank_score = max(score, 1.0 - position * 0.02)
            formula = f"{name} list: max(its score {score:.3f}, 1 - 0.02 x position {position})"
            prior = merged.get(memory.id)
            if prior is None or rank_score > prior.score:
                terms_kept = (prior.terms if prior else ()) + (Term(name, score),)
                merged[memory.id] = Scored(memory, rank_score, terms_kept, formula, found_by=name)
            else:
                merged[memory.id] = Scored(memory, prior.score, prior.terms + (Term(name, score),), prior.formula,
                                           found_by=prior.found_by)
    return merged


def _substring(terms: list[str], entries: list[Memory]) -> list[tuple[Memory, float]]:
    scored: dict[str, tuple[float, Memory]] = {}
    for term in terms:
        weight = min(1.0, 0.5 + len(term) * 0.08)
        for memory in entries:
            if term in memory.content.lower():
                prior = scored.get(memory.id)
                scored[memory.id] = (weight if prior is None else prior[0] + weight * 0.5, memory)
    return [(m, s) for s, m in sorted(scored.values(), key=lambda p: (-p[0], p[1].id))]
