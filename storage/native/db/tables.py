"""The native store's tables on any database: what SqliteSource (memory.db) and PostgresSource
(a PostgreSQL server) do alike. ``NativeDb`` is their common base: the agent's API (this module)
over the write primitive and its plans (changes.py) over the reads (reads.py); rows.py turns rows
into the model and back. Memories as rows, sessions, scratchpad and graph, through driver SQL or
SQLAlchemy Core (imported in the method that builds a statement with it: see reads.py)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from ...errors import NotFoundError
from ...model import Entity, Layer, Relation, Status
from ...timeutil import to_iso, utcnow
from . import schema
from .changes import NativeChanges
from .fts import indexed_in_bulk
from .rows import new_id, relation_row, scratch_text

NEW_SALIENCE = 0.5  # a new memory's salience and confidence in memory.db (schema defaults)
NEW_CONFIDENCE = 1.0
BULK_FTS_ROWS = 500  # from this many rows on, an insert indexes them for full-text search in one statement

class NativeDb(NativeChanges):
    """The native store's tables on one database (see the module's docstring).

    Beyond the Source protocol it is the API an agent embeds to write its
    memory: add_session, add_turns, set_scratch, add_memory, add_entity,
    add_relation, touch.
    """

    # -- the agent's API -------------------------------------------------------

    def add_session(
        self,
        session_id: str,
        *,
        channel: str = "_global",
        title: str = "",
        user_id: str = "",
        started_at: datetime | None = None,
    ) -> None:
        from sqlalchemy import insert

        with self.errors(), self.write_transaction() as conn:
            conn.execute(
                insert(schema.sessions).values(
                    id=session_id,
                    channel=channel,
                    title=title,
                    user_id=user_id,
                    started_at=to_iso(started_at or utcnow()),
                )
            )

    def add_turns(self, session_id: str, turns: Iterable[tuple[str, str, datetime]]) -> None:
        """Append (role, content, timestamp) turns to a session."""
        from sqlalchemy import func, insert, select

        with self.errors(), self.write_transaction() as conn:
            start = conn.execute(
                select(func.coalesce(func.max(schema.turns.c.idx) + 1, 0)).where(
                    schema.turns.c.session_id == session_id
                )
            ).scalar_one()
            rows = [
                {
                    "session_id": session_id,
                    "idx": start + i,
                    "role": role,
                    "content": content,
                    "timestamp": to_iso(ts),
                }
                for i, (role, content, ts) in enumerate(turns)
            ]
            if rows:
                conn.execute(insert(schema.turns), rows)

    def set_scratch(
        self, session_id: str, key: str, value: Any, updated_at: datetime | None = None
    ) -> None:
        from sqlalchemy import text

        stored = scratch_text(value)
        when = to_iso(updated_at or utcnow())
        with self.errors(), self.write_transaction() as conn:
            conn.execute(
                text(
                    "INSERT INTO scratchpad(session_id, key, value, updated_at) "
                    "VALUES (:s, :k, :v, :t) ON CONFLICT(session_id, key) "
                    "DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at"
                ),
                {"s": session_id, "k": key, "v": stored, "t": when},
            )

    def add_memory(self, content: str, **fields: Any) -> str:
        """Insert one memory; fields as for memory_row. Returns its id."""
        row = self.memory_row(content, **fields)
        self.insert_memory_rows([row])
        return row["id"]

    @staticmethod
    def memory_row(
        content: str,
        *,
        layer: Layer = Layer.SEMANTIC,
        channel: str = "_global",
        memory_id: str | None = None,
        created_at: datetime | None = None,
        last_accessed: datetime | None = None,
        access_count: int | None = None,
        salience: float | None = None,
        confidence: float | None = None,
        conversations: int | None = None,
        tags: Sequence[str] = (),
        metadata: dict[str, Any] | None = None,
        derived_from: Sequence[str] = (),
        imported_from: str | None = None,
        import_key: str | None = None,
        md_file: str | None = None,
        vector_state: str = "none",
        status: Status = Status.ACTIVE,
        promoted_from: str | None = None,
        updated_at: datetime | None = None,
    ) -> dict[str, Any]:
        created = created_at or utcnow()
        return {
            "id": memory_id or new_id(),
            "layer": Layer(layer).value,
            "channel": channel,
            "content": content,
            "created_at": to_iso(created),
            "updated_at": to_iso(updated_at or created),
            "last_accessed": to_iso(last_accessed or created),
            # memory.db keeps every one of these: a new memory starts as the native system starts one.
            "access_count": int(access_count or 0),
            "salience": float(NEW_SALIENCE if salience is None else salience),
            "confidence": float(NEW_CONFIDENCE if confidence is None else confidence),
            "conversations": int(conversations or 0),
            "tags": json.dumps(list(tags), ensure_ascii=False),
            "metadata": json.dumps(metadata or {}, ensure_ascii=False, sort_keys=True),
            "status": Status(status).value,
            "promoted_from": promoted_from,
            "derived_from": json.dumps(list(derived_from)),
            "imported_from": imported_from,
            "import_key": import_key,
            "md_file": md_file,
            "vector_state": vector_state,
        }

    def insert_memory_rows(self, rows: Sequence[dict[str, Any]]) -> None:
        """memory_row() rows in one transaction. On SQLite one prepared INSERT takes them all
        (executemany of plain tuples: no per-row parameter processing, which costs as much as
        SQLite's own work on a bulk import)."""
        from sqlalchemy import insert

        if not rows:
            return
        columns = tuple(rows[0])
        with self.errors(), self.write_transaction() as conn:
            if conn.dialect.name == "sqlite" and all(len(r) == len(columns) for r in rows):
                names = ", ".join(f'"{c}"' for c in columns)
                indexing = indexed_in_bulk(conn) if len(rows) >= BULK_FTS_ROWS else contextlib.nullcontext()
                with indexing:
                    conn.exec_driver_sql(
                        f"INSERT INTO memories ({names}) VALUES ({', '.join('?' * len(columns))})",
                        [tuple(r[c] for c in columns) for r in rows],
                    )
            else:
                conn.execute(insert(schema.memories), list(rows))

    def existing_values(self, column: str, keys: Sequence[str]) -> set[str]:
        """Which of these values a memories column already holds (ids, import keys)."""
        from sqlalchemy import select

        found: set[str] = set()
        col = schema.memories.c[column]
        with self.errors(), self.engine.connect() as conn:
            for start in range(0, len(keys), 500):
                chunk = list(keys[start : start + 500])
                found.update(r[0] for r in conn.execute(select(col).where(col.in_(chunk))))
        return found

    def touch(self, memory_id: str, at: datetime | None = None) -> None:
        """Reinforce on retrieval: one more access, last accessed now."""
        from sqlalchemy import update

        m = schema.memories.c
        with self.errors(), self.write_transaction() as conn:
            result = conn.execute(
                update(schema.memories)
                .where(m.id == memory_id)
                .values(access_count=m.access_count + 1, last_accessed=to_iso(at or utcnow()))
            )
            if result.rowcount == 0:
                raise NotFoundError(f"No memory {memory_id}.")

    def add_entity(self, entity: Entity) -> None:
        from sqlalchemy import insert

        with self.errors(), self.write_transaction() as conn:
            conn.execute(
                insert(schema.entities).values(
                    id=entity.id,
                    name=entity.name,
                    type=entity.type,
                    channel=entity.channel,
                    description=entity.description,
                    aliases=json.dumps(list(entity.aliases)),
                    salience=entity.salience,
                    access_count=entity.access_count,
                    first_seen=to_iso(entity.first_seen) if entity.first_seen else None,
                    last_accessed=to_iso(entity.last_accessed) if entity.last_accessed else None,
                )
            )

    def add_relation(self, relation: Relation) -> None:
        from sqlalchemy import insert

        with self.errors(), self.write_transaction() as conn:
            conn.execute(insert(schema.relations).values(**relation_row(relation)))
