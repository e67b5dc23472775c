"""How one structured memory DB of the five-layer agent memory (seed 003, Layer 2) is laid out.

The seed names the parts, not a schema: facts in SQLite with their embeddings in sqlite-vec and a
full-text index in FTS5, each fact carrying Layer 1's salience (access count, decay score, last
accessed). Agents built on it lay these out in their own ways: ``facts(id TEXT PRIMARY KEY, key,
value, ...)`` with ``facts_fts(fact_id, key, value, category)`` kept by the agent itself and
``facts_vec(id TEXT PRIMARY KEY, embedding float[N])``; or ``memories(id INTEGER PRIMARY KEY,
content, ...)`` with an external-content index ``USING fts5(content, content='memories',
content_rowid='id')`` kept by triggers and ``memories_vec USING vec0(memory_id INTEGER PRIMARY KEY,
embedding float[N], category TEXT, +content TEXT)`` (a metadata and an auxiliary column); ...

``facts_layout(path)`` finds the one table that has that shape: a content-like column, Layer 1's
access count and decay score, and a vec0 or FTS5 companion (a virtual table named after it, or
an FTS5 index whose external content it is). It reads the companions' declarations from
sqlite_master (a vec0 table's columns cannot be listed without the extension) and says how each
names a fact. Two such tables, or two indexes of one kind for one table, are ambiguous: the
file is not taken for a facts DB (a person can map it by hand).
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from ..detect.table_mapping import NAMES, quoted_name
from ..sqlite_files import read_only_connection

ROWID = "rowid"
# The columns a facts table is read through besides its text, each by the names agents give it.
ROLES: dict[str, tuple[str, ...]] = {
    "key": ("key", "name", "title"),
    "category": NAMES["category"],
    "access_count": NAMES["access_count"],
    "last_accessed": NAMES["accessed"],
    "created": NAMES["created"],
    "decay": ("decay_score", "decay", "salience", "importance", "score", "strength", "weight", "relevance"),
    "confidence": ("confidence", "certainty"),
    "source": ("source", "origin"),
}
LAYER_1 = ("access_count", "decay")  # what makes a table of texts a table of facts with salience
LINK_NAMES = ("fact_id", "memory_id", "doc_id", "row_id", "id")
VECTOR_TYPE = re.compile(r"^(float|f32|int8|i8|bit)\s*\[\s*(\d+)\s*\]", re.IGNORECASE)
_VIRTUAL = re.compile(r"^\s*CREATE\s+VIRTUAL\s+TABLE\s+.*?\bUSING\s+(\w+)\s*\((.*)\)\s*;?\s*$",
                      re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class FtsIndex:
    """An FTS5 index of the facts. link: what its rows name a fact by, "rowid" or one of its
    columns (fact_id), holding the value of the facts table's column target.
    external: its text is read from the facts table (content='<table>'). by_triggers: triggers on
    the facts table keep it in step (a write to a fact then writes no index row itself)."""

    table: str
    columns: tuple[str, ...]
    link: str = ROWID
    target: str = ROWID  # the facts column its link holds: the fact's id, content_rowid, or the rowid
    external: bool = False
    by_triggers: bool = False
    sizes: bool = True  # it keeps <table>_docsize (one row per indexed row; columnsize=0 drops it)

    @property
    def keeps_text(self) -> bool:
        """Whether its rows hold their own copy of the text (an agent-kept index)."""
        return not self.external


@dataclass(frozen=True)
class VecIndex:
    """A sqlite-vec (vec0) table of the facts' embeddings. key: its primary key column ("rowid"
    when none is declared), holding the value of the facts table's column target. columns: its
    other columns (metadata, partition key, +auxiliary), written back with the vector."""

    table: str
    key: str
    target: str  # the facts column its key holds: the fact's id, or the rowid
    embedding: str
    dimensions: int
    columns: tuple[str, ...] = ()
    text_key: bool = False  # its key is text (kept in <table>_rowids.id; an integer key is the rowid)


@dataclass(frozen=True)
class FactsLayout:
    """Which table holds the facts, which of its columns play which part, and its indexes."""

    table: str
    id: str  # the column naming a fact: its primary key, or "rowid"
    rowid: str  # the column that is the table's rowid (an INTEGER PRIMARY KEY), or "rowid"
    content: str
    roles: dict[str, str] = field(default_factory=dict)  # role (ROLES) -> column
    columns: tuple[str, ...] = ()
    fts: FtsIndex | None = None
    vec: VecIndex | None = None
    categories: bool = False  # category_id names a categories(id, name) row

    def column(self, role: str) -> str | None:
        return self.roles.get(role)

    def describe(self) -> dict[str, object]:
        return {
            "table": self.table, "id": self.id, "content": self.content, "columns": dict(self.roles),
            "full_text_index": self.fts.table if self.fts else None,
            "vectors": self.vec.table if self.vec else None,
        }


@dataclass(frozen=True)
class Found:
    """What a file holds: its facts layout, or why none was taken (ambiguous: "" when it simply
    has no table of that shape)."""

    layout: FactsLayout | None = None
    ambiguous: str = ""


def facts_layout(path: Path) -> Found:
    """The facts layout of a SQLite file (see the module docstring); never writes a byte."""
    try:
        with contextlib.closing(read_only_connection(path)) as con:
            return _found(con)
    except sqlite3.Error:
        return Found()


def _found(con: sqlite3.Connection) -> Found:
    master = con.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    virtual = {str(name): _declaration(str(sql or "")) for kind, name, _t, sql in master
               if kind == "table" and str(sql or "").lstrip().upper().startswith("CREATE VIRTUAL")}
    triggers = [(str(table), str(sql or "")) for kind, _n, table, sql in master if kind == "trigger"]
    plain = [str(name) for kind, name, _t, sql in master
             if kind == "table" and str(name) not in virtual and not str(name).lower().startswith("sqlite_")]
    if _is_mnemoscopes(con, plain):
        return Found()
    found: list[FactsLayout] = []
    unclear: list[str] = []
    for table in plain:
        if any(table.startswith(v + "_") for v in virtual):  # a virtual table's shadow table
            continue
        layout, why = _layout_of(con, table, plain, virtual, triggers)
        if layout is not None:
            found.append(layout)
        elif why:
            unclear.append(why)
    if len(found) == 1 and not unclear:
        return Found(found[0])
    if len(found) + len(unclear) > 1:
        return Found(None, "more than one table looks like facts: " + "; ".join([f.table for f in found] + unclear))
    if unclear:
        return Found(None, unclear[0])
    return Found()


def is_mnemoscopes_schema(tables: dict[str, set[str]]) -> bool:
    """Mnemoscope's own memory.db, told from its schema (table name -> column names)."""
    return "meta" in tables and {"vector_state", "md_file", "layer", "channel"} <= tables.get("memories", set())


def _is_mnemoscopes(con: sqlite3.Connection, tables: list[str]) -> bool:
    """Mnemoscope's own memory.db (a memories table with its copies' columns, and meta)."""
    if "meta" not in tables or "memories" not in tables:
        return False
    columns = {r[1] for r in con.execute('PRAGMA table_info("memories")')}
    return is_mnemoscopes_schema({"meta": set(), "memories": columns})


def _layout_of(
    con: sqlite3.Connection, table: str, plain: list[str], virtual: dict[str, tuple[str, list[str]]],
    triggers: list[tuple[str, str]],
) -> tuple[FactsLayout | None, str]:
    info = con.execute(f'PRAGMA table_info("{quoted_name(table)}")').fetchall()
    columns = tuple(str(r[1]) for r in info)
    keys = [r for r in sorted(info, key=lambda r: r[5]) if r[5]]
    rowid = str(keys[0][1]) if len(keys) == 1 and str(keys[0][2] or "").upper() == "INTEGER" else ROWID
    fact_id = str(keys[0][1]) if len(keys) == 1 else ROWID
    roles = {role: c for role, names in ROLES.items() if (c := _named(columns, names, {fact_id})) is not None}
    content = _named(columns, NAMES["content"], {fact_id, *roles.values()})
    if content is None or not all(role in roles for role in LAYER_1):
        return None, ""
    fts = [i for name, (module, args) in virtual.items() if module == "fts5"
           if (i := _fts_of(name, args, table, fact_id, rowid, triggers)) is not None]
    vec = [v for name, (module, args) in virtual.items() if module == "vec0"
           if (v := _vec_of(name, args, table, fact_id, rowid)) is not None]
    if not fts and not vec:
        return None, ""
    if len(fts) > 1 or len(vec) > 1:
        indexes = ", ".join([i.table for i in fts] + [v.table for v in vec])
        return None, f"{table} (indexed by {indexes}: which is its own is not clear)"
    categories = "category_id" in columns and "categories" in plain and {"id", "name"} <= {
        r[1] for r in con.execute('PRAGMA table_info("categories")')}
    layout = FactsLayout(table, fact_id, rowid, content, roles, columns,
                         fts[0] if fts else None, vec[0] if vec else None, categories)
    return layout, ""


def _named(columns: tuple[str, ...], names: tuple[str, ...], taken: set[str]) -> str | None:
    lowered = {c.lower(): c for c in columns if c not in taken}
    return next((lowered[n] for n in names if n in lowered), None)


def _companion(name: str, table: str) -> bool:
    """Whether a virtual table is named after table (facts_fts, memories_vec, fact_embeddings)."""
    singular = table[:-1] if table.endswith("s") else table
    return any(name.lower().startswith(stem.lower() + "_") for stem in {table, singular})


def _fts_of(
    name: str, args: list[str], table: str, fact_id: str, rowid: str, triggers: list[tuple[str, str]]
) -> FtsIndex | None:
    options = {k: v for k, v in (_option(a) for a in args) if k}
    columns = tuple(_unquoted(a.split()[0]) for a in args if a.strip() and not _option(a)[0])
    content = options.get("content")
    if content is not None and content != table:
        return None  # another table's index (or contentless: nothing names a fact in it)
    if content is None and not _companion(name, table):
        return None
    kept = any(on == table and re.search(rf"\b{re.escape(name)}\b", sql) for on, sql in triggers)
    sizes = options.get("columnsize", "1") != "0"
    if content == table:
        return FtsIndex(name, columns, ROWID, options.get("content_rowid", rowid), True, kept, sizes)
    link = next((c for c in columns if c.lower() in LINK_NAMES or c.lower() == table[:-1].lower() + "_id"), ROWID)
    return FtsIndex(name, columns, link, fact_id if link != ROWID else rowid, False, kept, sizes)


def _vec_of(name: str, args: list[str], table: str, fact_id: str, rowid: str) -> VecIndex | None:
    if not _companion(name, table):
        return None
    key, embedding, dimensions, target, text_key = ROWID, "", 0, rowid, False
    others: list[str] = []
    for arg in args:
        words = arg.split()
        if not words or "=" in words[0]:
            continue  # a table option (chunk_size=...)
        column = _unquoted(words[0].lstrip("+"))
        declared = " ".join(words[1:])
        vector = VECTOR_TYPE.match(declared)
        if vector and not embedding:
            embedding, dimensions = column, int(vector[2])
        elif re.search(r"\bprimary\s+key\b", declared, re.IGNORECASE):
            key = column
            # A text key holds the fact's id; an integer one the rowid (its id, where that is the rowid).
            text_key = not declared.upper().startswith("INT")
            target = fact_id if text_key else rowid
        else:
            others.append(column)
    if not embedding:
        return None
    return VecIndex(name, key, target, embedding, dimensions, tuple(others), text_key)


def _declaration(sql: str) -> tuple[str, list[str]]:
    """A virtual table's module and its arguments, split at the commas between them."""
    m = _VIRTUAL.match(sql)
    if not m:
        return "", []
    return m[1].lower(), _split(m[2])


def _split(text: str) -> list[str]:
    parts, depth, quote, current = [], 0, "", ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"`":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


def _option(arg: str) -> tuple[str, str]:
    """An FTS5 option (content='facts') as (name, value); ("", "") for a column."""
    m = re.match(r"^\s*(\w+)\s*=\s*(.+?)\s*$", arg, re.DOTALL)
    return (m[1].lower(), _unquoted(m[2])) if m else ("", "")


def _unquoted(name: str) -> str:
    name = name.strip()
    if len(name) >= 2 and name[0] in "'\"`[" and name[-1] in "'\"`]":
        return name[1:-1]
    return name
