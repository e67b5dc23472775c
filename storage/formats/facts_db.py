"""The structured memory DB of the five-layer agent memory (seed 003, Layer 2).

One SQLite file beside the agent's workspace holds ``facts(id TEXT PRIMARY KEY, key, value,
category, source, confidence, access_count, last_accessed, created_at, decay_score)`` (and,
once categories were assigned, ``category_id`` naming a ``categories`` row), an FTS5 table
``facts_fts(fact_id, key, value, category)`` that the agent keeps in step itself (it deletes a
fact's row and inserts it again on every write: no triggers, no external content), and the
sqlite-vec table ``facts_vec USING vec0(id TEXT PRIMARY KEY, embedding float[N])``.

Each fact is a semantic memory whose content is its value; its category is its tag, its access
count and last access are the memory's, its decay score (the agent's reinforcement score, 0.01
to 10) is shown as is in the metadata and as the salience ``min(1, decay_score)``. Keyword search
runs on the agent's own FTS5 index, ranked by bm25. Nearest neighbours come from facts_vec where
this Python loads sqlite-vec (``pysqlite3`` or a SQLite built to load extensions); elsewhere
the vectors are reported as not read and everything else works.

The workspace markdown beside the file (MEMORY.md, memory/YYYY-MM-DD.md) is opened with it as one
store. The agent writes every fact to both ("Write-Then-Compact", ``memory_save``), so a fact
whose value is in no markdown file, and a MEMORY.md or daily-log entry that holds no fact's value,
are reported as problems.

Curation: a fact's value can be edited, and a fact deleted, with its FTS row rewritten in the
same transaction; a delete takes the fact's vector with it where sqlite-vec loads (undo puts
both back), and leaves it otherwise (the agent's search skips vectors of facts that are gone).
A step's snapshots hold the fact's FTS rows as they were, so undo puts those back exactly; a
step whose snapshots hold the vector is undone (or redone) only where sqlite-vec loads.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import sqlite3
from collections.abc import Iterator, Sequence
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

from ..detect.looks import is_dir
from ..errors import StoreError
from ..model import GLOBAL_CHANNEL, Kind, Layer, Memory, SourceRef
from ..query import MemoryQuery, Order
from ..source import EDIT, Capabilities, Change, Plan, PlanContext, Snapshot
from ..sqlite_files import BUSY_TIMEOUT, files_token, read_only_connection, sqlite_error, writing
from .base import plain_row, row_values, sqlite_files, sqlite_tables, vec0_note, vec0_tables
from .match import FormatMatch
from .sql_backed import SqlFormatSource, TableSpec, row_revision

FACT_COLUMNS = {"id", "key", "value", "category", "access_count", "last_accessed", "decay_score"}
FTS_TABLE, VEC_TABLE = "facts_fts", "facts_vec"
FTS_COLUMNS = ("fact_id", "key", "value", "category")
# Set to "off" to read vec0 tables as if sqlite-vec could not load (an extension that crashes).
VEC_SWITCH = "MNEMOSCOPE_SQLITE_VEC"
# The markdown files the agent writes facts to (the other workspace files are not facts).
FACT_FILES = re.compile(r"^(MEMORY\.md|memory/\d{4}-\d{2}-\d{2}\.md)$")
SHOWN_PER_PROBLEM = 10
VECTOR = "$vector"  # the snapshot key of a fact's embedding (facts_vec), where sqlite-vec loads
FTS = "$fts"  # the snapshot key of a fact's facts_fts rows


def is_facts_db(tables: dict[str, set[str]]) -> bool:
    return FACT_COLUMNS <= tables.get("facts", set()) and {"fact_id", "value"} <= tables.get(FTS_TABLE, set())


# -- sqlite-vec ----------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _loading_dbapi() -> tuple[Any, str]:
    try:
        import sqlite_vec
    except ImportError:
        return None, "the sqlite-vec package is not installed"
    for name in ("sqlite3", "pysqlite3.dbapi2"):
        try:
            module = importlib.import_module(name)
            con = module.connect(":memory:")
        except ImportError:
            continue
        try:
            con.enable_load_extension(True)
            sqlite_vec.load(con)
            return module, ""
        except (AttributeError, module.Error):
            continue
        finally:
            con.close()
    return None, "this Python's SQLite cannot load extensions (pysqlite3-binary can)"


def vec_dbapi() -> tuple[Any, str]:
    """A DB-API module whose connections load sqlite-vec, or None and why not."""
    if os.environ.get(VEC_SWITCH, "").lower() in ("off", "0", "no"):
        return None, f"sqlite-vec is turned off ({VEC_SWITCH})"
    return _loading_dbapi()


def _load_vec(con: Any) -> None:
    import sqlite_vec

    con.enable_load_extension(True)
    sqlite_vec.load(con)
    con.enable_load_extension(False)


def vec_reader(path: Path) -> Any:
    """A connection to path with sqlite-vec loaded that writes no byte of it (sqlite_files's
    read-only connections: no -wal or -shm left behind, nor another program's folded in);
    None where sqlite-vec cannot load."""
    module, _why = vec_dbapi()
    if module is None:
        return None
    con = read_only_connection(path, BUSY_TIMEOUT, dbapi=module, prepare=_load_vec)
    con.isolation_level = None
    con.row_factory = module.Row
    return con


def _dbapi_errors() -> tuple[type[BaseException], ...]:
    module, _why = vec_dbapi()
    return (sqlite3.Error,) if module is None or module is sqlite3 else (sqlite3.Error, module.Error)


# -- the source ------------------------------------------------------------------------------------


class FactsSource(SqlFormatSource):
    """The facts table of one structured memory DB, read with SQL where it lives."""

    format = "facts-db"
    label = "structured memory DB"
    editable_fields = ("content",)
    keeps = frozenset({"access_count", "salience", "confidence"})  # decay_score as salience
    layer = Layer.SEMANTIC
    seeks = False  # pages run in the query's order (times, salience), not the key's

    def __init__(self, path: Path, tables: dict[str, set[str]]) -> None:
        super().__init__(path.parent, [path], path)
        self.id_prefix = f"fact:{path.name}:"
        self.fts_columns = [c for c in FTS_COLUMNS if c in tables[FTS_TABLE]]
        named = "category_id" in tables["facts"] and {"id", "name"} <= tables.get("categories", set())
        category = (
            "coalesce((SELECT name FROM categories WHERE categories.id = facts.category_id), facts.category)"
            if named else "facts.category"
        )
        self.spec = TableSpec(
            "facts", key="rowid", created="created_at", text="value",
            select=f"facts.*, {category} AS shown_category", record="id",
        )
        self._problems: tuple[str, list[str]] | None = None
        self._vec_tables: dict[str, int] | None = None
        self._markdown: Any = None

    # -- rows as memories -----------------------------------------------------------------

    def memory_of(self, row: sqlite3.Row) -> Memory:
        created = self.time_of(row["created_at"])
        accessed = self.time_of(row["last_accessed"]) if row["last_accessed"] else created
        decay = row["decay_score"] if row["decay_score"] is not None else 1.0
        category = row["shown_category"] or ""
        metadata = {
            "fact_id": row["id"], "key": row["key"], "category": category, "decay_score": decay,
            "access_count": row["access_count"] or 0,
        }
        for extra in ("source", "confidence", "category_id"):
            if extra in row.keys() and row[extra] is not None:
                metadata[extra] = row[extra]
        return Memory.built(
            id=self.id_prefix + str(row["id"]),
            source=SourceRef(Kind.SQLITE, f"{self.path.name}:facts/{row['id']}", path=self.path.name, format=self.format),
            layer=Layer.SEMANTIC,
            channel=GLOBAL_CHANNEL,
            content=str(row["value"] or ""),
            created_at=created,
            updated_at=max(created, accessed),
            last_accessed=accessed,
            access_count=int(row["access_count"] or 0),
            salience=max(0.0, min(1.0, float(decay))),
            confidence=float(row["confidence"]) if "confidence" in row.keys() and row["confidence"] is not None else None,
            tags=(category,) if category else (),
            metadata=metadata,
            revision=row_revision(row),
        )

    def fact_id(self, record_id: str) -> str:
        return record_id[len(self.id_prefix):]

    def record_key(self, record_id: str) -> int:
        rows = self.rows('SELECT rowid FROM facts WHERE id = ?', [self.fact_id(record_id)])
        return int(rows[0][0]) if rows else -1

    def get(self, memory_id: str) -> Memory | None:
        if not self.owns(memory_id):
            return None
        rows = self.rows(f"SELECT {self.spec.select} FROM facts WHERE id = ?", [self.fact_id(memory_id)])
        return self.memory_of(rows[0]) if rows else None

    def _order(self, query: MemoryQuery) -> str:
        direction = "DESC" if query.descending else "ASC"
        if query.order is Order.SALIENCE:
            value = "max(0.0, min(1.0, coalesce(decay_score, 1.0)))"
        elif query.order is Order.CREATED:
            value = "julianday(created_at)"
        elif query.order is Order.ACCESSED:
            value = "julianday(coalesce(last_accessed, created_at))"
        else:  # recent: the last access or the creation, whichever is later (no update time is kept)
            value = "max(julianday(created_at), julianday(coalesce(last_accessed, created_at)))"
        return f"{value} {direction}, id {direction}"

    def capabilities(self, record_id: str | None = None) -> Capabilities:
        return Capabilities(
            editable_fields=self.editable_fields,
            keyword_search=True,
            vector_search=self._vectors_readable(),
        )

    def describe(self) -> dict[str, Any]:
        why = vec_dbapi()[1]
        readable = self._vectors_readable()
        return {**super().describe(), "vectors": self.vec_tables(),
                "vector_search": "sqlite-vec" if readable else f"not available: {why or 'no facts_vec table'}"}

    def change_token(self) -> str:
        return f"{self.format}:" + files_token(self.path)

    # -- keyword search: the agent's FTS5 index, bm25 ----------------------------------------

    def keyword_search(self, text_query: str, query: MemoryQuery, k: int) -> list[Memory]:
        words = re.findall(r"\w+", text_query)
        where = self.where(query)
        if not words or where is None or k <= 0:
            return []
        clause, params = where
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words[:64])
        try:
            # bm25() cannot be aggregated where it is computed: the hits are materialized first.
            rows = self.rows(
                f"WITH hit AS MATERIALIZED (SELECT fact_id, bm25({FTS_TABLE}) AS score FROM {FTS_TABLE} "
                f"WHERE {FTS_TABLE} MATCH ?) SELECT {self.spec.select} FROM facts JOIN "
                "(SELECT fact_id, min(score) AS score FROM hit GROUP BY fact_id) AS best ON best.fact_id = facts.id"
                + (f" WHERE {clause}" if clause else "")
                + " ORDER BY best.score, facts.id LIMIT ?",
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
        return VEC_TABLE in self.vec_tables() and vec_dbapi()[0] is not None

    @contextlib.contextmanager
    def _vec_reading(self) -> Iterator[Any]:
        try:
            con = vec_reader(self.path)
        except _dbapi_errors() as exc:
            raise sqlite_error(self.path, exc) from None
        if con is None:
            yield None
            return
        try:
            yield con
        except _dbapi_errors() as exc:
            raise sqlite_error(self.path, exc) from None
        finally:
            con.close()

    def collections(self) -> list[str]:
        return [VEC_TABLE] if self._vectors_readable() else []

    def embedder_for(self, name: str) -> Any:
        return None  # the agent's embedder (a remote model) does not run here

    def embedding_function_info(self, name: str) -> dict[str, Any]:
        return {"collection": name, "recorded_embedding_function": f"the agent's own embedder ({self.path.name}:{name})"}

    def embedding_of(self, memory_id: str) -> list[float] | None:
        if not self.owns(memory_id) or not self._vectors_readable():
            return None
        with self._vec_reading() as con:
            row = con.execute(f"SELECT vec_to_json(embedding) FROM {VEC_TABLE} WHERE id = ?",
                              (self.fact_id(memory_id),)).fetchone()
        return [float(x) for x in json.loads(row[0])] if row else None

    def vector_search(self, embedding: Any, text: str | None, query: MemoryQuery, k: int) -> list[tuple[Memory, float]]:
        """The k facts nearest to embedding (a text cannot be embedded here: see embedder_for)."""
        where = self.where(query)
        if embedding is None or where is None or k <= 0 or not self._vectors_readable():
            return []
        import sqlite_vec

        with self._vec_reading() as con:
            try:
                nearest = con.execute(
                    f"SELECT id, distance FROM {VEC_TABLE} WHERE embedding MATCH ? AND k = ? ORDER BY distance",
                    (sqlite_vec.serialize_float32([float(x) for x in embedding]), k),
                ).fetchall()
            except _dbapi_errors():  # another dimension than this table's: nothing is near
                return []
        distances = {row[0]: float(row[1]) for row in nearest}
        if not distances:
            return []
        clause, params = where
        rows = self.rows(
            f"SELECT {self.spec.select} FROM facts WHERE id IN ({', '.join('?' * len(distances))})"
            + (f" AND {clause}" if clause else ""),
            [*distances, *params],
        )
        found = [(self.memory_of(row), distances[row["id"]]) for row in rows]
        return sorted(found, key=lambda hit: hit[1])

    # -- problems: the index, the vectors, the markdown ---------------------------------------

    def problems(self) -> list[str]:
        markdown = self._markdown_source()
        token = self.change_token() + (markdown.change_token() if markdown is not None else "")
        if self._problems is None or self._problems[0] != token:
            self._vec_tables = None
            self._problems = (token, self._index_problems() + self._markdown_problems(markdown))
        return list(self._problems[1])

    def _index_problems(self) -> list[str]:
        found: list[str] = []
        module, why = vec_dbapi()
        if module is None:
            found += [vec0_note(self.path, table, n) + f" ({why})" for table, n in self.vec_tables().items()]
        unindexed = self.rows(
            f"SELECT id FROM facts WHERE id NOT IN (SELECT fact_id FROM {FTS_TABLE} WHERE fact_id IS NOT NULL) ORDER BY id"
        )
        if unindexed:
            found.append(f"{len(unindexed)} fact(s) have no row in {FTS_TABLE}, so the agent's keyword search cannot "
                         f"find them: {_listed(r[0] for r in unindexed)}")
        dangling = self.rows(f"SELECT DISTINCT fact_id FROM {FTS_TABLE} WHERE fact_id NOT IN (SELECT id FROM facts)")
        if dangling:
            found.append(f"{len(dangling)} {FTS_TABLE} row(s) name no fact: {_listed(str(r[0]) for r in dangling)}")
        if "value" in self.fts_columns:
            stale = self.rows(
                f"SELECT DISTINCT facts.id FROM facts JOIN {FTS_TABLE} AS f ON f.fact_id = facts.id "
                "WHERE f.value IS NOT facts.value ORDER BY facts.id"
            )
            if stale:
                found.append(f"{len(stale)} fact(s) are indexed in {FTS_TABLE} with other text than their value: "
                             f"{_listed(r[0] for r in stale)}")
        return found

    def _markdown_source(self) -> Any:
        from ..native.markdown.source import MarkdownSource

        if self._markdown is None and MarkdownSource.detect(self.root):
            self._markdown = MarkdownSource.open(self.root)
        return self._markdown

    def _markdown_problems(self, markdown: Any) -> list[str]:
        if markdown is None:
            return []
        blocks = [b for rel in markdown.files() if FACT_FILES.match(rel) for b in markdown.blocks(rel)]
        if not blocks:
            return []
        facts = [(r[0], r[1], _folded(r[1])) for r in self.rows("SELECT id, value FROM facts ORDER BY id") if r[1]]
        written = "\n".join(_folded(b.content) for b in blocks)
        missing = [(fact_id, value) for fact_id, value, folded in facts if folded not in written]
        values = [folded for _id, _value, folded in facts]
        unsaved = [b for b in blocks if not any(v in _folded(b.content) for v in values)]
        found = []
        if missing:
            found.append(
                f"{len(missing)} fact(s) in {self.path.name} are in no markdown file (MEMORY.md, memory/YYYY-MM-DD.md): "
                + _listed(f"{fact_id} ({_short(value)})" for fact_id, value in missing)
            )
        if unsaved:
            found.append(
                f"{len(unsaved)} markdown entr{'y' if len(unsaved) == 1 else 'ies'} hold no fact of {self.path.name}: "
                + _listed(f"{b.path}:{b.line} ({_short(b.content)})" for b in unsaved)
            )
        return found

    def close(self) -> None:
        if self._markdown is not None:
            self._markdown.close()
            self._markdown = None
        super().close()

    # -- the write primitive --------------------------------------------------------------------

    def read_record(self, record_id: str) -> Snapshot | None:
        fact_id = self.fact_id(record_id)
        rows = self.rows("SELECT * FROM facts WHERE id = ?", [fact_id])
        if not rows:
            return None
        snap = plain_row(rows[0])
        snap[FTS] = self._fts_of(self.rows, fact_id)
        if self._vectors_readable():
            with self._vec_reading() as con:
                snap[VECTOR] = _vector_of(con, fact_id)
        return snap

    def _fts_of(self, rows: Any, fact_id: str) -> list[Snapshot]:
        """The fact's facts_fts rows as they are (the agent's index, kept exactly for undo)."""
        columns = ", ".join(self.fts_columns)
        return [plain_row(r) for r in rows(f"SELECT {columns} FROM {FTS_TABLE} WHERE fact_id = ? ORDER BY rowid",
                                           [fact_id])]

    def _fts_row(self, fact: Snapshot) -> Snapshot:
        """The one facts_fts row the agent writes for a fact (it deletes the old ones first)."""
        return {c: fact["id"] if c == "fact_id" else fact.get(c) for c in self.fts_columns}

    def plan(self, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
        plan = super().plan(operation, memory, fields, context)
        has_vector = VEC_TABLE in self.vec_tables() and (
            not self._vectors_readable() or bool(plan.changes and (plan.changes[0].before or {}).get(VECTOR))
        )
        if operation == EDIT and plan.changes and has_vector:
            plan.notes.append(f"The fact's vector in {VEC_TABLE} was computed from its old text; the agent "
                              "embeds it again when it next stores the fact.")
        elif operation != EDIT and VEC_TABLE in self.vec_tables() and not self._vectors_readable():
            plan.notes.append(f"Its vector stays in {VEC_TABLE} (removing it needs sqlite-vec); the agent's "
                              "search skips vectors whose fact is gone.")
        return plan

    def edit_snapshot(self, snap: Snapshot, requested: dict[str, Any], now: str) -> Snapshot:
        if requested["content"] == snap.get("value"):
            return snap
        new = {**snap, "value": requested["content"]}
        if FTS in snap:  # the agent's rewrite of its index: its rows deleted, one written
            new[FTS] = [self._fts_row(new)]
        return new

    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        """In one write transaction: the fact as last read (else ConflictError), then its new row,
        its FTS rows as the snapshot holds them (else written again as the agent writes them),
        and its vector on delete and undo. A snapshot that holds the vector is written only
        where sqlite-vec loads (else StoreError, nothing written): without it the vector could
        be neither compared nor put back."""
        fact_id = self.fact_id(record_id)
        if any(snap is not None and VECTOR in snap for snap in (expected, new)) and not self._vectors_readable():
            raise self._vectors_needed(record_id)
        with self._writing() as (con, vectors):
            if any(snap is not None and VECTOR in snap for snap in (expected, new)) and not vectors:
                raise self._vectors_needed(record_id)
            current = self._snapshot(con, fact_id, vectors)
            self.check_expected(record_id, _as_recorded(current, expected), expected)
            con.execute(f"DELETE FROM {FTS_TABLE} WHERE fact_id = ?", (fact_id,))
            if new is None:
                con.execute("DELETE FROM facts WHERE id = ?", (fact_id,))
                # Only a vector the journal holds (expected) is taken: undo puts back what it holds.
                if vectors and expected is not None and VECTOR in expected:
                    con.execute(f"DELETE FROM {VEC_TABLE} WHERE id = ?", (fact_id,))
            else:
                values = {k: v for k, v in row_values(new).items() if k not in (VECTOR, FTS)}
                if current is None:
                    names = ", ".join(f'"{c}"' for c in values)
                    con.execute(f"INSERT INTO facts ({names}) VALUES ({', '.join('?' * len(values))})",
                                tuple(values.values()))
                    if vectors and new.get(VECTOR):
                        con.execute(f"INSERT INTO {VEC_TABLE} (id, embedding) VALUES (?, ?)",
                                    (fact_id, bytes.fromhex(new[VECTOR]["$blob"])))
                else:
                    con.execute("UPDATE facts SET value = ? WHERE id = ?", (values["value"], fact_id))
                if FTS in new:
                    fts_rows = [row_values(r) for r in new[FTS]]
                else:  # a journal entry of an older Mnemoscope: the row as the agent writes it
                    fts_rows = [self._fts_row(plain_row(con.execute("SELECT * FROM facts WHERE id = ?",
                                                                    (fact_id,)).fetchone()))]
                for fts_row in fts_rows:
                    columns = [c for c in fts_row if c in self.fts_columns]
                    con.execute(
                        f"INSERT INTO {FTS_TABLE} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                        tuple(fts_row[c] for c in columns),
                    )
            after = self._snapshot(con, fact_id, vectors)
        self.invalidate()
        self._problems = None
        return after

    def prepare_write(self, changes: Sequence[Change]) -> None:
        """Refuse, before a step writes anything (its journal entry included), a change that
        holds a fact's vector where sqlite-vec does not load (see write_record)."""
        for change in changes:
            if any(s is not None and VECTOR in s for s in (change.before, change.after)) and not self._vectors_readable():
                raise self._vectors_needed(change.record)

    def _vectors_needed(self, record_id: str) -> StoreError:
        why = vec_dbapi()[1] or f"no {VEC_TABLE} table"
        return StoreError(
            f"{record_id}: this change holds the fact's vector in {VEC_TABLE}, which can be compared and "
            f"written back only where sqlite-vec loads ({why}); nothing was written. Run it where "
            "sqlite-vec loads (pip install sqlite-vec pysqlite3-binary)."
        )

    @contextlib.contextmanager
    def _writing(self) -> Iterator[tuple[Any, bool]]:
        """A BEGIN IMMEDIATE transaction (sqlite_files.writing) on a connection that loads
        sqlite-vec where it can (True: the vectors are written too)."""
        module = vec_dbapi()[0] if VEC_TABLE in self.vec_tables() else None
        if module is None:
            with writing(self.path) as con:
                yield con, False
        else:
            with writing(self.path, dbapi=module, prepare=_load_vec) as con:
                yield con, True

    def _snapshot(self, con: Any, fact_id: str, vectors: bool) -> Snapshot | None:
        row = con.execute("SELECT * FROM facts WHERE id = ?", (fact_id,)).fetchone()
        if row is None:
            return None
        snap = plain_row(row)
        snap[FTS] = self._fts_of(lambda sql, params: con.execute(sql, tuple(params)).fetchall(), fact_id)
        if vectors:
            snap[VECTOR] = _vector_of(con, fact_id)
        return snap


def _as_recorded(current: Snapshot | None, expected: Snapshot | None) -> Snapshot | None:
    """current without what expected does not record (a step written where sqlite-vec did not
    load, or by a Mnemoscope that kept no FTS rows): those parts are left as they are."""
    if current is None or expected is None:
        return current
    return {k: v for k, v in current.items() if k not in (VECTOR, FTS) or k in expected}


def _vector_of(con: Any, fact_id: str) -> dict[str, str] | None:
    row = con.execute(f"SELECT embedding FROM {VEC_TABLE} WHERE id = ?", (fact_id,)).fetchone()
    return {"$blob": bytes(row[0]).hex()} if row and row[0] is not None else None


def _folded(text: str) -> str:
    return " ".join(str(text).casefold().split())


def _short(text: str, width: int = 60) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _listed(items: Iterator[str] | Sequence[str]) -> str:
    items = list(items)
    shown = ", ".join(items[:SHOWN_PER_PROBLEM])
    return shown + (f" and {len(items) - SHOWN_PER_PROBLEM} more" if len(items) > SHOWN_PER_PROBLEM else "")


def detect(path: Path) -> list[FormatMatch]:
    matches = []
    for candidate in sqlite_files(path):
        tables = sqlite_tables(candidate)
        if is_facts_db(tables):
            matches.append(FormatMatch(
                "facts-db", FactsSource.label, candidate,
                open=partial(FactsSource, candidate, tables),
                # A facts DB named memory.db is not Mnemoscope's own.
                claims=((Kind.SQLITE, candidate),),
                journal_dir=path if is_dir(path) else candidate.parent,
            ))
    return matches
