"""The structured memory DB of the five-layer agent memory (seed 003, Layer 2).

One SQLite file beside the agent's workspace holds its facts, each with Layer 1's salience (access
count, decay score, last access), a sqlite-vec (vec0) table of their embeddings and an FTS5 index
of their text. The seed names no schema: facts_layout.py finds the table of that shape and its
indexes, whichever way the agent laid them out (``facts(id TEXT PRIMARY KEY, key, value, ...)``
with an index the agent keeps itself, ``facts_fts(fact_id, key, value, category)``, and
``facts_vec(id TEXT PRIMARY KEY, embedding float[N])``; or ``memories(id INTEGER PRIMARY KEY,
content, ...)`` with an external-content index its triggers keep and a vec0 table with metadata
and auxiliary columns; ...). A categories table named by ``category_id`` names the category.

Each fact is a semantic memory whose content is its text; its category is its tag, its access
count and last access are the memory's, and its decay score (the agent's reinforcement score,
already decayed by the agent's own formula) is its salience, ``min(1, decay_score)``, shown as it
is: Mnemoscope's decay model never decays it again (salience.declare_salience). Every column the
agent keeps is in the metadata by its own name. Keyword search runs on the agent's own FTS5 index,
ranked by bm25. Nearest neighbours come from the vec0 table where this Python loads sqlite-vec
(``pysqlite3-binary`` or a SQLite built to load extensions; both come with the default install
where they exist); elsewhere the vectors are reported as not read and everything else works.

The workspace markdown beside the file (MEMORY.md, memory/YYYY-MM-DD.md) is opened with it as one
store. The agent writes every fact to both ("Write-Then-Compact", ``memory_save``). Every
disagreement (a fact missing from its index or its vectors, an index row or vector whose fact is
gone, an index holding other text, a fact in no markdown file, a markdown entry that holds no
fact) is one finding of ``mnemoscope check`` (consistency_checks) and a line of ``info``
(problems), from the same comparison.

Curation: a fact's text can be edited, and a fact deleted, with its index rows rewritten in the
same transaction (by the agent's triggers where it has them; else as the agent writes them); a
delete takes the fact's vector (and the columns kept beside it) with it where sqlite-vec loads
(undo puts both back), and leaves it otherwise (the agent's search skips vectors of facts that
are gone). A step's snapshots hold an agent-kept index's rows as they were, so undo puts those
back exactly; a step whose snapshots hold the vector is undone (or redone) only where sqlite-vec
loads.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from ..consistency_report import WARNING, Finding, FindingKind, register_kind
from ..detect.looks import is_dir, looked
from ..errors import StoreError
from ..model import GLOBAL_CHANNEL, Kind, Layer, Memory, SourceRef
from ..query import MemoryQuery, Order
from ..salience import OWNERS_DECAY, declare_salience
from ..source import EDIT, Capabilities, Change, Plan, PlanContext, Snapshot
from ..sqlite_files import files_token, sqlite_error, writing
from .base import plain_row, row_values, sqlite_files, sqlite_tables, vec0_note, vec0_tables
from .facts_layout import ROLES, ROWID, FactsLayout, FtsIndex, facts_layout, is_mnemoscopes_schema
from .match import FormatMatch
from .sql_backed import SqlFormatSource, TableSpec, row_revision
from .vec0 import VEC_SWITCH, dbapi_errors, load_vec, vec_dbapi, vec_reader

__all__ = ["VEC_SWITCH", "FactsSource", "detect"]

FORMAT = "facts-db"
# The markdown files the agent writes facts to (the other workspace files are not facts).
FACT_FILES = re.compile(r"^(MEMORY\.md|memory/\d{4}-\d{2}-\d{2}\.md)$")
SHOWN_PER_PROBLEM = 10
VECTOR = "$vector"  # the snapshot key of a fact's embedding, where sqlite-vec loads
VECTOR_COLUMNS = "$vector_columns"  # ... and of the columns its vec0 table keeps beside it
FTS = "$fts"  # the snapshot key of a fact's rows in an index the agent keeps itself
ROW = "$rowid"  # the snapshot key of a fact's rowid (put back with it, where it is no column)

declare_salience(FORMAT, OWNERS_DECAY, "the agent's decay score")

# What `check` reports (and `info` lists): every way the facts, their indexes and the markdown disagree.
UNINDEXED = register_kind(FindingKind(
    "fact-unindexed", "Fact missing from the agent's full-text index", WARNING,
    advice="the agent's keyword search cannot find it; it is indexed again when the agent stores it again "
           "(or edit its text here: the index row is written with it)"))
STALE_INDEX = register_kind(FindingKind(
    "fact-index-stale", "Fact indexed with other text than it holds", WARNING,
    advice="the agent's keyword search finds it by the old text; edit its text here (the index row is written "
           "again) or let the agent store it again"))
DANGLING_INDEX = "index-fts-dangling"  # (consistency_report's: full-text rows whose row is gone)
NO_VECTOR = register_kind(FindingKind(
    "fact-no-vector", "Fact with no vector", WARNING,
    advice="the agent's semantic recall (KNN) cannot find it; the agent embeds it when it stores it again"))
ORPHAN_VECTOR = register_kind(FindingKind(
    "fact-orphan-vector", "Vector whose fact is gone", WARNING,
    advice="the agent's KNN search skips it; it goes when the agent next rebuilds its vectors"))
NOT_IN_MARKDOWN = register_kind(FindingKind(
    "fact-not-in-markdown", "Fact in no workspace markdown file", WARNING,
    advice="memory_save writes every fact to the daily log too; a fact only the DB holds is lost to the "
           "workspace's BM25 search and to a person reading the files"))
NOT_IN_FACTS = register_kind(FindingKind(
    "markdown-not-in-facts", "Markdown entry that holds no fact", WARNING,
    advice="the agent's memory_recall (the facts DB) cannot find it; it may have been written by hand or "
           "its fact deleted"))


def _q(column: str) -> str:
    """A column as SQL: the rowid as itself, any other name quoted."""
    return ROWID if column == ROWID else '"' + column.replace('"', '""') + '"'


# -- the source ------------------------------------------------------------------------------------


class FactsSource(SqlFormatSource):
    """The facts table of one structured memory DB, read with SQL where it lives."""

    format = FORMAT
    label = "structured memory DB"
    editable_fields = ("content",)
    keeps = frozenset({"access_count", "salience", "confidence"})  # decay_score as salience
    layer = Layer.SEMANTIC
    seeks = False  # pages run in the query's order (times, salience), not the key's
    # Its salience is the agent's, decayed already: effective-salience order is decay-score order.
    orders_by_effective_salience = True

    def __init__(self, path: Path, layout: FactsLayout) -> None:
        super().__init__(path.parent, [path], path)
        self.layout = layout
        self.id_prefix = f"fact:{path.name}:"
        self.table = _q(layout.table)
        category = layout.column("category")
        shown = f"{self.table}.{_q(category)}" if category else "NULL"
        if layout.categories:
            shown = f"coalesce((SELECT name FROM categories WHERE categories.id = {self.table}.category_id), {shown})"
        self.spec = TableSpec(
            layout.table, key=ROWID, created=layout.column("created"), text=layout.content,
            select=f'{self.table}.rowid AS "rowid", {self.table}.*, {shown} AS "$category"',
            record=None if layout.id == ROWID else layout.id,
        )
        self._findings: tuple[str, list[str], list[Finding]] | None = None
        self._vec_tables: dict[str, int] | None = None
        self._markdown: Any = None

    # -- rows as memories -----------------------------------------------------------------

    def _value(self, row: Any, role: str) -> Any:
        column = self.layout.column(role)
        return row[column] if column is not None else None

    def memory_of(self, row: sqlite3.Row) -> Memory:
        layout = self.layout
        created_at, accessed_at = self._value(row, "created"), self._value(row, "last_accessed")
        created = self.time_of(created_at) if created_at else None
        accessed = self.time_of(accessed_at) if accessed_at else None
        created = created or accessed or self.time_of(None)
        accessed = accessed or created  # never accessed: last "accessed" when it was made
        decay = self._value(row, "decay")
        decay = float(decay) if isinstance(decay, (int, float)) else 1.0  # (the seed's default score)
        category = str(row["$category"] or "")
        metadata: dict[str, Any] = {
            c: row[c] for c in layout.columns if c != layout.content and row[c] is not None and not isinstance(row[c], bytes)
        }
        if category:
            metadata[layout.column("category") or "category"] = category
        confidence = self._value(row, "confidence")
        count = self._value(row, "access_count")
        fact = self._fact_of(row)
        return Memory.built(
            id=self.id_prefix + str(fact),
            source=SourceRef(Kind.SQLITE, f"{self.path.name}:{layout.table}/{fact}", path=self.path.name,
                             format=self.format),
            layer=Layer.SEMANTIC,
            channel=GLOBAL_CHANNEL,
            content=str(row[layout.content] if row[layout.content] is not None else ""),
            created_at=created,
            updated_at=max(created, accessed),
            last_accessed=accessed,
            access_count=int(count) if isinstance(count, (int, float)) else 0,
            salience=max(0.0, min(1.0, decay)),
            confidence=float(confidence) if isinstance(confidence, (int, float)) else None,  # no column: none kept
            tags=(category,) if category else (),
            metadata=metadata,
            revision=row_revision(row),
        )

    def _fact_of(self, row: Any) -> Any:
        """What names the fact of a row (its id column's value, or its rowid)."""
        return row[ROWID if self.layout.id == ROWID else self.layout.id]

    def fact_id(self, record_id: str) -> Any:
        """The value of the id column a record id names (an int where the id is the rowid)."""
        raw = record_id[len(self.id_prefix):]
        if self.layout.id in (ROWID, self.layout.rowid):
            try:
                return int(raw)
            except ValueError:
                return None
        return raw

    def _where_fact(self) -> str:
        return f"{_q(self.layout.id)} = ?"

    def record_key(self, record_id: str) -> int:
        rows = self.rows(f"SELECT rowid FROM {self.table} WHERE {self._where_fact()}", [self.fact_id(record_id)])
        return int(rows[0][0]) if rows else -1

    def get(self, memory_id: str) -> Memory | None:
        if not self.owns(memory_id):
            return None
        rows = self.rows(f"SELECT {self.spec.select} FROM {self.table} WHERE {self._where_fact()}",
                         [self.fact_id(memory_id)])
        return self.memory_of(rows[0]) if rows else None

    def _order(self, query: MemoryQuery) -> str:
        direction = "DESC" if query.descending else "ASC"
        created = self.layout.column("created")
        accessed = self.layout.column("last_accessed")
        made = f"julianday({_q(created)})" if created else "NULL"
        used = f"julianday(coalesce({_q(accessed)}, {_q(created) if created else 'NULL'}))" if accessed else made
        decay = self.layout.column("decay") or "NULL"
        if query.order in (Order.SALIENCE, Order.EFFECTIVE_SALIENCE):
            value = f"max(0.0, min(1.0, coalesce({_q(decay)}, 1.0)))"
        elif query.order is Order.CREATED:
            value = made
        elif query.order is Order.ACCESSED:
            value = used
        else:  # recent: the last access or the creation, whichever is later (no update time is kept)
            value = f"max({made}, {used})"
        # Ties in the order of the memories' ids, as the stores merged with this one order them.
        return f"{value} {direction}, CAST({_q(self.layout.id)} AS TEXT) {direction}"

    def capabilities(self, record_id: str | None = None) -> Capabilities:
        return Capabilities(
            editable_fields=self.editable_fields,
            keyword_search=True,
            vector_search=self._vectors_readable(),
        )

    def describe(self) -> dict[str, Any]:
        why = vec_dbapi()[1]
        readable = self._vectors_readable()
        return {**super().describe(), "layout": self.layout.describe(), "vectors": self.vec_tables(),
                "vector_search": "sqlite-vec" if readable else f"not available: {why or 'no vec0 table of the facts'}"}

    def change_token(self) -> str:
        return f"{self.format}:" + files_token(self.path)

    # -- keyword search: the agent's FTS5 index, bm25 ----------------------------------------

    def keyword_search(self, text_query: str, query: MemoryQuery, k: int) -> list[Memory]:
        fts = self.layout.fts
        words = re.findall(r"\w+", text_query)
        where = self.where(query)
        if fts is None:
            return super().keyword_search(text_query, query, k)
        if not words or where is None or k <= 0:
            return []
        clause, params = where
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words[:64])
        index, link, target = _q(fts.table), _q(fts.link), _q(fts.target)
        try:
            # bm25() cannot be aggregated where it is computed: the hits are materialized first.
            rows = self.rows(
                f"WITH hit AS MATERIALIZED (SELECT {link} AS fact, bm25({index}) AS score FROM {index} "
                f"WHERE {index} MATCH ?) SELECT {self.spec.select} FROM {self.table} JOIN "
                f"(SELECT fact, min(score) AS score FROM hit GROUP BY fact) AS best "
                f"ON best.fact = {self.table}.{target}"
                + (f" WHERE {clause}" if clause else "")
                + f" ORDER BY best.score, CAST({self.table}.{_q(self.layout.id)} AS TEXT) LIMIT ?",
                [match, *params, k],
            )
        except Exception:  # an FTS5 index that cannot be read (no FTS5 here, damaged): plain words
            return super().keyword_search(text_query, query, k)
        return [self.memory_of(row) for row in rows]

    # -- vectors: KNN through sqlite-vec ------------------------------------------------------

    def vec_tables(self) -> dict[str, int]:
        if self._vec_tables is None:
            self._vec_tables = {}
            with contextlib.suppress(sqlite3.Error):
                self._vec_tables = vec0_tables(self._connection())
        return self._vec_tables

    def _vectors_readable(self) -> bool:
        vec = self.layout.vec
        return vec is not None and vec.table in self.vec_tables() and vec_dbapi()[0] is not None

    @contextlib.contextmanager
    def _vec_reading(self) -> Iterator[Any]:
        try:
            con = vec_reader(self.path)
        except dbapi_errors() as exc:
            raise sqlite_error(self.path, exc) from None
        if con is None:
            yield None
            return
        try:
            yield con
        except dbapi_errors() as exc:
            raise sqlite_error(self.path, exc) from None
        finally:
            con.close()

    def collections(self) -> list[str]:
        vec = self.layout.vec
        return [vec.table] if vec is not None and self._vectors_readable() else []

    def embedder_for(self, name: str) -> Any:
        return None  # the agent's embedder (a remote model) does not run here

    def embedding_function_info(self, name: str) -> dict[str, Any]:
        return {"collection": name, "recorded_embedding_function": f"the agent's own embedder ({self.path.name}:{name})"}

    def _target_of(self, record_id: str) -> Any:
        """The value of a fact's column that its vector's key holds (its id, or its rowid)."""
        vec = self.layout.vec
        assert vec is not None
        if vec.target == self.layout.id:
            return self.fact_id(record_id)
        rows = self.rows(f"SELECT {_q(vec.target)} FROM {self.table} WHERE {self._where_fact()}",
                         [self.fact_id(record_id)])
        return rows[0][0] if rows else None

    def embedding_of(self, memory_id: str) -> list[float] | None:
        vec = self.layout.vec
        if vec is None or not self.owns(memory_id) or not self._vectors_readable():
            return None
        target = self._target_of(memory_id)
        with self._vec_reading() as con:
            row = con.execute(f"SELECT vec_to_json({_q(vec.embedding)}) FROM {_q(vec.table)} WHERE {_q(vec.key)} = ?",
                              (target,)).fetchone()
        return [float(x) for x in json.loads(row[0])] if row else None

    def vector_search(self, embedding: Any, text: str | None, query: MemoryQuery, k: int) -> list[tuple[Memory, float]]:
        """The k facts nearest to embedding (a text cannot be embedded here: see embedder_for)."""
        vec = self.layout.vec
        where = self.where(query)
        if vec is None or embedding is None or where is None or k <= 0 or not self._vectors_readable():
            return []
        import sqlite_vec

        with self._vec_reading() as con:
            try:
                nearest = con.execute(
                    f"SELECT {_q(vec.key)}, distance FROM {_q(vec.table)} WHERE {_q(vec.embedding)} MATCH ? "
                    "AND k = ? ORDER BY distance",
                    (sqlite_vec.serialize_float32([float(x) for x in embedding]), k),
                ).fetchall()
            except dbapi_errors():  # another dimension than this table's: nothing is near
                return []
        distances = {row[0]: float(row[1]) for row in nearest}
        if not distances:
            return []
        clause, params = where
        target = _q(vec.target)
        rows = self.rows(
            f'SELECT {self.spec.select}, {self.table}.{target} AS "$target" FROM {self.table} '
            f"WHERE {self.table}.{target} IN ({', '.join('?' * len(distances))})"
            + (f" AND {clause}" if clause else ""),
            [*distances, *params],
        )
        found = [(self.memory_of(row), distances[row["$target"]]) for row in rows]
        return sorted(found, key=lambda hit: hit[1])

    # -- what disagrees: the indexes, the vectors, the markdown (info's problems, check's findings)

    def problems(self) -> list[str]:
        module, why = vec_dbapi()
        unread = [] if module is not None else [vec0_note(self.path, t, n) + f" ({why})" for t, n in self.vec_tables().items()]
        return unread + self._compared()[1]

    def consistency_checks(self) -> list[Finding]:
        """Every disagreement problems() lists, one finding per fact, index row, vector or entry."""
        return list(self._compared()[2])

    def consistency_checked(self) -> dict[str, int]:
        """What consistency_checks compared: the facts, their vectors, the markdown entries."""
        checked = {f"{self.layout.table} rows of {self.path.name}": int(self.rows(f"SELECT count(*) FROM {self.table}")[0][0])}
        vec = self.layout.vec
        if vec is not None and self.vec_tables().get(vec.table, -1) >= 0:
            checked[f"{vec.table} vectors"] = self.vec_tables()[vec.table]
        markdown = self._markdown_source()
        if markdown is not None:
            checked["markdown entries"] = sum(len(markdown.blocks(rel)) for rel in markdown.files() if FACT_FILES.match(rel))
        return checked

    def _compared(self) -> tuple[str, list[str], list[Finding]]:
        markdown = self._markdown_source()
        token = self.change_token() + (markdown.change_token() if markdown is not None else "")
        if self._findings is None or self._findings[0] != token:
            self._vec_tables = None
            lines: list[str] = []
            findings: list[Finding] = []
            for found in (self._index_findings(), self._vector_findings(), self._markdown_findings(markdown)):
                for line, items in found:
                    if items:
                        lines.append(line)
                        findings += items
            self._findings = (token, lines, findings)
        return self._findings

    def _finding(self, kind: FindingKind | str, record: Any, detail: str) -> Finding:
        return Finding(kind if isinstance(kind, str) else kind.id, str(record), detail, source=self.format)

    def _index_findings(self) -> list[tuple[str, list[Finding]]]:
        fts = self.layout.fts
        if fts is None:
            return []
        index, fact, target = _q(fts.table), _q(self.layout.id), _q(fts.target)
        if fts.external:  # its rows are the facts' own: which are indexed, its docsize table says
            if not fts.sizes:
                return []
            indexed, link = _q(fts.table + "_docsize"), "id"
        else:
            indexed, link = index, _q(fts.link)
        try:
            unindexed = self.rows(
                f"SELECT {fact} FROM {self.table} WHERE {target} NOT IN "
                f"(SELECT {link} FROM {indexed} WHERE {link} IS NOT NULL) ORDER BY CAST({fact} AS TEXT)")
            dangling = self.rows(f"SELECT DISTINCT {link} FROM {indexed} WHERE {link} NOT IN "
                                 f"(SELECT {target} FROM {self.table} WHERE {target} IS NOT NULL)")
            stale = []
            if fts.keeps_text and self.layout.content in fts.columns:
                text = _q(self.layout.content)
                stale = self.rows(
                    f"SELECT DISTINCT {self.table}.{fact} FROM {self.table} JOIN {index} AS f "
                    f"ON f.{link} = {self.table}.{target} WHERE f.{text} IS NOT {self.table}.{text} "
                    f"ORDER BY CAST({self.table}.{fact} AS TEXT)")
        except StoreError:  # an index this SQLite cannot read: nothing to compare it with
            return []
        return [
            (f"{len(unindexed)} fact(s) have no row in {fts.table}, so the agent's keyword search cannot find them: "
             + _listed(str(r[0]) for r in unindexed),
             [self._finding(UNINDEXED, self.id_prefix + str(r[0]), f"no row in {fts.table}") for r in unindexed]),
            (f"{len(dangling)} {fts.table} row(s) name no fact: {_listed(str(r[0]) for r in dangling)}",
             [self._finding(DANGLING_INDEX, f"fts:{fts.table}:{r[0]}", f"{fts.table} row for {r[0]}, which "
                            f"{self.layout.table} no longer holds") for r in dangling]),
            (f"{len(stale)} fact(s) are indexed in {fts.table} with other text than their {self.layout.content}: "
             + _listed(str(r[0]) for r in stale),
             [self._finding(STALE_INDEX, self.id_prefix + str(r[0]), f"{fts.table} holds other text than "
                            f"its {self.layout.content}") for r in stale]),
        ]

    def _vector_findings(self) -> list[tuple[str, list[Finding]]]:
        """Facts with no vector and vectors with no fact, from the vec0 table's plain rowids table
        (readable without the extension: it holds each vector's key)."""
        vec = self.layout.vec
        if vec is None or vec.table not in self.vec_tables():
            return []
        fact, target, keys = _q(self.layout.id), _q(vec.target), _q(vec.table + "_rowids")
        key = "id" if vec.text_key else ROWID
        try:
            missing = self.rows(
                f"SELECT {fact} FROM {self.table} WHERE {target} NOT IN (SELECT {key} FROM {keys} "
                f"WHERE {key} IS NOT NULL) ORDER BY CAST({fact} AS TEXT)")
            orphans = self.rows(f"SELECT {key} FROM {keys} WHERE {key} NOT IN "
                                f"(SELECT {target} FROM {self.table} WHERE {target} IS NOT NULL) ORDER BY 1")
        except StoreError:  # a vec0 table of another version of sqlite-vec: not compared
            return []
        return [
            (f"{len(missing)} fact(s) have no vector in {vec.table}, so the agent's semantic recall cannot find them: "
             + _listed(str(r[0]) for r in missing),
             [self._finding(NO_VECTOR, self.id_prefix + str(r[0]), f"no vector in {vec.table}") for r in missing]),
            (f"{len(orphans)} vector(s) in {vec.table} name no fact: {_listed(str(r[0]) for r in orphans)}",
             [self._finding(ORPHAN_VECTOR, f"vec:{vec.table}:{r[0]}", f"the vector of {r[0]}, which "
                            f"{self.layout.table} no longer holds") for r in orphans]),
        ]

    def _markdown_source(self) -> Any:
        from ..native.markdown.source import MarkdownSource

        if self._markdown is None and MarkdownSource.detect(self.root):
            self._markdown = MarkdownSource.open(self.root)
        return self._markdown

    def _markdown_findings(self, markdown: Any) -> list[tuple[str, list[Finding]]]:
        if markdown is None:
            return []
        blocks = [b for rel in markdown.files() if FACT_FILES.match(rel) for b in markdown.blocks(rel)]
        if not blocks:
            return []
        fact, text = _q(self.layout.id), _q(self.layout.content)
        facts = [(r[0], r[1], _folded(r[1]))
                 for r in self.rows(f"SELECT {fact}, {text} FROM {self.table} ORDER BY CAST({fact} AS TEXT)") if r[1]]
        written = "\n".join(_folded(b.content) for b in blocks)
        missing = [(fact_id, value) for fact_id, value, folded in facts if folded not in written]
        values = [folded for _id, _value, folded in facts]
        unsaved = [b for b in blocks if not any(v in _folded(b.content) for v in values)]
        name = self.path.name
        return [
            (f"{len(missing)} fact(s) in {name} are in no markdown file (MEMORY.md, memory/YYYY-MM-DD.md): "
             + _listed(f"{fact_id} ({_short(value)})" for fact_id, value in missing),
             [self._finding(NOT_IN_MARKDOWN, self.id_prefix + str(fact_id), f"in no markdown file: {_short(value)}")
              for fact_id, value in missing]),
            (f"{len(unsaved)} markdown entr{'y' if len(unsaved) == 1 else 'ies'} hold no fact of {name}: "
             + _listed(f"{b.path}:{b.line} ({_short(b.content)})" for b in unsaved),
             [self._finding(NOT_IN_FACTS, b.record_id, f"{b.path}:{b.line} holds no fact of {name}: "
                            f"{_short(b.content)}") for b in unsaved]),
        ]

    def close(self) -> None:
        if self._markdown is not None:
            self._markdown.close()
            self._markdown = None
        super().close()

    # -- the write primitive --------------------------------------------------------------------

    def _by_hand(self) -> FtsIndex | None:
        """The index a write keeps in step itself (none where the agent's triggers do it)."""
        fts = self.layout.fts
        return fts if fts is not None and not fts.by_triggers else None

    def read_record(self, record_id: str) -> Snapshot | None:
        rows = self.rows(f'SELECT rowid AS "{ROW}", * FROM {self.table} WHERE {self._where_fact()}',
                         [self.fact_id(record_id)])
        if not rows:
            return None
        snap = plain_row(rows[0])
        fts = self._by_hand()
        if fts is not None and fts.keeps_text:
            snap[FTS] = self._fts_of(fts, self.rows, snap)
        if self._vectors_readable():
            with self._vec_reading() as con:
                snap.update(self._vector_of(con, snap))
        return snap

    @staticmethod
    def _target(snap: Snapshot, column: str) -> Any:
        """The value of a facts column (or of its rowid) in a snapshot of the fact."""
        return snap.get(ROW) if column == ROWID else snap.get(column)

    def _fts_of(self, fts: FtsIndex, rows: Any, fact: Snapshot) -> list[Snapshot]:
        """The fact's rows in an index the agent keeps, as they are (kept exactly for undo)."""
        columns = ("rowid, " if fts.link == ROWID else "") + ", ".join(_q(c) for c in fts.columns)
        return [plain_row(r) for r in rows(f"SELECT {columns} FROM {_q(fts.table)} WHERE {_q(fts.link)} = ? "
                                           "ORDER BY rowid", [self._target(fact, fts.target)])]

    def _fts_row(self, fts: FtsIndex, fact: Snapshot) -> Snapshot:
        """The one index row the agent writes for a fact (it deletes the old ones first)."""
        link = self._target(fact, fts.target)
        row = {c: link if c == fts.link else fact.get(c) for c in fts.columns}
        return {"rowid": link, **row} if fts.link == ROWID else row

    def _vector_of(self, con: Any, fact: Snapshot) -> Snapshot:
        """The fact's vector ({VECTOR: None} for none) and the columns its vec0 table keeps beside it."""
        vec = self.layout.vec
        assert vec is not None
        others = "".join(f", {_q(c)}" for c in vec.columns)
        row = con.execute(f"SELECT {_q(vec.embedding)}{others} FROM {_q(vec.table)} WHERE {_q(vec.key)} = ?",
                          (self._target(fact, vec.target),)).fetchone()
        if row is None or row[0] is None:
            return {VECTOR: None}
        found: Snapshot = {VECTOR: {"$blob": bytes(row[0]).hex()}}
        if vec.columns:
            found[VECTOR_COLUMNS] = {c: {"$blob": v.hex()} if isinstance(v, bytes) else v
                                     for c, v in zip(vec.columns, tuple(row)[1:], strict=True)}
        return found

    def plan(self, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
        plan = super().plan(operation, memory, fields, context)
        vec = self.layout.vec
        if vec is None or vec.table not in self.vec_tables():
            return plan
        has_vector = not self._vectors_readable() or bool(plan.changes and (plan.changes[0].before or {}).get(VECTOR))
        if operation == EDIT and plan.changes and has_vector:
            beside = " (as is the text kept beside it)" if self.layout.content in vec.columns else ""
            plan.notes.append(f"The fact's vector in {vec.table} was computed from its old text{beside}; the agent "
                              "embeds it again when it next stores the fact.")
        elif operation != EDIT and not self._vectors_readable():
            plan.notes.append(f"Its vector stays in {vec.table} (removing it needs sqlite-vec); the agent's "
                              "search skips vectors whose fact is gone.")
        return plan

    def edit_snapshot(self, snap: Snapshot, requested: dict[str, Any], now: str) -> Snapshot:
        content = self.layout.content
        if requested["content"] == snap.get(content):
            return snap
        new = {**snap, content: requested["content"]}
        fts = self._by_hand()
        if FTS in snap and fts is not None:  # the agent's rewrite of its index: its rows deleted, one written
            new[FTS] = [self._fts_row(fts, new)]
        return new

    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        """In one write transaction: the fact as last read (else ConflictError), then its new row,
        its index rows (by the agent's triggers, else as the snapshot holds them, else written
        as the agent writes them), and its vector on delete and undo. A snapshot that holds the
        vector is written only where sqlite-vec loads (else StoreError, nothing written): without
        it the vector could be neither compared nor put back."""
        fact = self.fact_id(record_id)
        if any(snap is not None and VECTOR in snap for snap in (expected, new)) and not self._vectors_readable():
            raise self._vectors_needed(record_id)
        fts, vec = self._by_hand(), self.layout.vec
        with self._writing() as (con, vectors):
            if any(snap is not None and VECTOR in snap for snap in (expected, new)) and not vectors:
                raise self._vectors_needed(record_id)
            current = self._snapshot(con, fact, vectors)
            self.check_expected(record_id, _as_recorded(current, expected), expected)
            if fts is not None:
                self._unindex(con, fts, current, expected or new)
            if new is None:
                con.execute(f"DELETE FROM {self.table} WHERE {self._where_fact()}", (fact,))
                # Only a vector the journal holds (expected) is taken: undo puts back what it holds.
                if vectors and vec is not None and expected is not None and VECTOR in expected:
                    con.execute(f"DELETE FROM {_q(vec.table)} WHERE {_q(vec.key)} = ?",
                                (self._target(expected, vec.target),))
            else:
                values = {k: v for k, v in row_values(new).items() if not k.startswith("$")}
                if current is None:
                    if ROW in new and self.layout.rowid == ROWID:  # the rowid it had (no column holds it)
                        values = {ROWID: new[ROW], **values}
                    names = ", ".join(_q(c) for c in values)
                    con.execute(f"INSERT INTO {self.table} ({names}) VALUES ({', '.join('?' * len(values))})",
                                tuple(values.values()))
                else:
                    content = self.layout.content
                    con.execute(f"UPDATE {self.table} SET {_q(content)} = ? WHERE {self._where_fact()}",
                                (values[content], fact))
                written = self._snapshot(con, fact, False)
                assert written is not None
                if current is None and vectors and vec is not None and new.get(VECTOR):
                    beside = row_values(new.get(VECTOR_COLUMNS) or {})
                    names = ", ".join(_q(c) for c in (vec.key, vec.embedding, *beside))
                    con.execute(f"INSERT INTO {_q(vec.table)} ({names}) VALUES ({', '.join('?' * (2 + len(beside)))})",
                                (self._target(written, vec.target), bytes.fromhex(new[VECTOR]["$blob"]), *beside.values()))
                if fts is not None:
                    self._index(con, fts, new, written)
            after = self._snapshot(con, fact, vectors)
        self.invalidate()
        self._findings = None
        return after

    def _unindex(self, con: Any, fts: FtsIndex, current: Snapshot | None, named: Snapshot | None) -> None:
        """Take the fact's rows out of an index kept by hand: an agent-kept index's rows by their
        link, an external-content index's entry by FTS5's delete command (with the text indexed)."""
        if fts.external:
            if current is not None:
                columns = ", ".join(_q(c) for c in fts.columns)
                values = row_values(current)
                con.execute(f"INSERT INTO {_q(fts.table)} ({_q(fts.table)}, rowid, {columns}) "
                            f"VALUES ('delete', ?{', ?' * len(fts.columns)})",
                            (self._target(current, fts.target), *(values.get(c) for c in fts.columns)))
            return
        link = self._target(current or named or {}, fts.target)
        con.execute(f"DELETE FROM {_q(fts.table)} WHERE {_q(fts.link)} = ?", (link,))

    def _index(self, con: Any, fts: FtsIndex, new: Snapshot, written: Snapshot) -> None:
        """Index the fact as written: an external-content index from the row itself; an agent-kept
        one with the rows the snapshot holds (undo: as they were), else as the agent writes them."""
        if fts.external:
            fts_rows = [{"rowid": self._target(written, fts.target), **{c: written.get(c) for c in fts.columns}}]
        else:
            fts_rows = list(new[FTS]) if FTS in new else [self._fts_row(fts, written)]
        for fts_row in map(row_values, fts_rows):
            columns = [c for c in fts_row if c in fts.columns or c == ROWID]
            con.execute(f"INSERT INTO {_q(fts.table)} ({', '.join(_q(c) for c in columns)}) "
                        f"VALUES ({', '.join('?' * len(columns))})", tuple(fts_row[c] for c in columns))

    def prepare_write(self, changes: Sequence[Change]) -> None:
        """Refuse, before a step writes anything (its journal entry included), a change that
        holds a fact's vector where sqlite-vec does not load (see write_record)."""
        for change in changes:
            if any(s is not None and VECTOR in s for s in (change.before, change.after)) and not self._vectors_readable():
                raise self._vectors_needed(change.record)

    def _vectors_needed(self, record_id: str) -> StoreError:
        vec = self.layout.vec
        table = vec.table if vec is not None else "its vec0 table"
        why = vec_dbapi()[1] or f"no {table} table"
        return StoreError(
            f"{record_id}: this change holds the fact's vector in {table}, which can be compared and "
            f"written back only where sqlite-vec loads ({why}); nothing was written. Run it where "
            "sqlite-vec loads (pip install sqlite-vec pysqlite3-binary)."
        )

    @contextlib.contextmanager
    def _writing(self) -> Iterator[tuple[Any, bool]]:
        """A BEGIN IMMEDIATE transaction (sqlite_files.writing) on a connection that loads
        sqlite-vec where it can (True: the vectors are written too)."""
        vec = self.layout.vec
        module = vec_dbapi()[0] if vec is not None and vec.table in self.vec_tables() else None
        if module is None:
            with writing(self.path) as con:
                yield con, False
        else:
            with writing(self.path, dbapi=module, prepare=load_vec) as con:
                yield con, True

    def _snapshot(self, con: Any, fact: Any, vectors: bool) -> Snapshot | None:
        row = con.execute(f'SELECT rowid AS "{ROW}", * FROM {self.table} WHERE {self._where_fact()}', (fact,)).fetchone()
        if row is None:
            return None
        snap = plain_row(row)
        fts = self._by_hand()
        if fts is not None and fts.keeps_text:
            snap[FTS] = self._fts_of(fts, lambda sql, params: con.execute(sql, tuple(params)).fetchall(), snap)
        if vectors:
            snap.update(self._vector_of(con, snap))
        return snap


def _as_recorded(current: Snapshot | None, expected: Snapshot | None) -> Snapshot | None:
    """current without what expected does not record (a step written where sqlite-vec did not
    load, or by a Mnemoscope that kept no index rows or rowid): those parts are left as they are."""
    if current is None or expected is None:
        return current
    return {k: v for k, v in current.items() if not k.startswith("$") or k in expected}


def _folded(text: str) -> str:
    return " ".join(str(text).casefold().split())


def _short(text: str, width: int = 60) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _listed(items: Iterator[str] | Sequence[str]) -> str:
    items = list(items)
    shown = ", ".join(items[:SHOWN_PER_PROBLEM])
    return shown + (f" and {len(items) - SHOWN_PER_PROBLEM} more" if len(items) > SHOWN_PER_PROBLEM else "")


def _may_hold_facts(tables: dict[str, set[str]]) -> bool:
    """A first look, at column names only: a table with Layer 1's access count and decay score,
    in a file that is not Mnemoscope's own memory.db (which is then never opened here: a
    connection to a WAL database makes its -wal and -shm, and the folder's listing moves)."""
    if is_mnemoscopes_schema(tables):
        return False
    lowered = [{c.lower() for c in columns} for columns in tables.values()]
    return any(any(n in cols for n in ROLES["access_count"]) and any(n in cols for n in ROLES["decay"])
               for cols in lowered)


def detect(path: Path) -> list[FormatMatch]:
    matches = []
    for candidate in sqlite_files(path):
        if not _may_hold_facts(sqlite_tables(candidate)):
            continue
        found = looked("facts layout", candidate, partial(facts_layout, candidate))
        if found.layout is None:
            continue
        matches.append(FormatMatch(
            FORMAT, FactsSource.label, candidate,
            open=partial(FactsSource, candidate, found.layout),
            # A facts DB named memory.db is not Mnemoscope's own.
            claims=((Kind.SQLITE, candidate),),
            journal_dir=path if is_dir(path) else candidate.parent,
        ))
    return matches
