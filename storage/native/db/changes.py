"""Changing the native tables on any database: the write primitive (one row per record id,
written only if it still is what was read) and the plans of the Curator's operations (rows only;
the workspace adds their vector and markdown copies)."""

from __future__ import annotations

import contextlib
import gc
import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

from ...errors import ConflictError, NotFoundError, NothingToDoError, UnsupportedError
from ...model import Layer, Memory, Relation, RelationType, Status, parse_status
from ...source import (
    DELETE,
    EDIT,
    PROMOTE,
    PURGE,
    REEMBED,
    REINFORCE,
    RESTORE,
    Change,
    Plan,
    PlanContext,
    RowHead,
    Snapshot,
    changed_values,
    same_record,
)
from ...sqlite_engine import AnyConnection as Connection
from ...timeutil import parse_time
from .reads import NativeReads
from .rows import (
    RELATION_PREFIX,
    SCRATCH_PREFIX,
    json_dict,
    new_id,
    relation_row,
    same_json,
    scratch_key,
    scratch_text,
)
from .stored_as_bound import Kept, as_written

# The most rows of one step kept after it (written_as), for its undo to skip reading them again.
REMEMBERED_ROWS = 20_000


class NativeChanges(NativeReads):
    """The write primitive on the native tables (read_record, write_record, prepare_write) and the
    plans of the Curator's operations on a memories row, the scratchpad's rows as records."""

    # -- the write primitive ---------------------------------------------------

    def owns(self, record_id: str) -> bool:
        return not record_id.startswith(("md:", "vec:"))

    def _row_for(self, record_id: str) -> tuple[str, str, tuple[str, ...]]:
        """The table a record id names, the condition that selects its row, and its values."""
        mark = self._mark
        if record_id.startswith(SCRATCH_PREFIX):
            return "scratchpad", f"session_id = {mark} AND key = {mark}", scratch_key(record_id)
        if record_id.startswith(RELATION_PREFIX):
            return "relations", f"id = {mark}", (record_id[len(RELATION_PREFIX) :],)
        return "memories", f"id = {mark}", (record_id,)

    def _read_row(self, conn: Connection, table: str, where: str, key: tuple[str, ...], *,
                  lock: bool = False) -> Snapshot | None:
        """The row of table where selects (_row_for), every column as the driver returns it (as
        read_records reads memories); with lock, held against other writers until the transaction ends."""
        row = conn.exec_driver_sql(f"SELECT * FROM {table} WHERE {where}" + (self._lock_rows if lock else ""), key).first()
        return dict(row._mapping) if row else None

    def read_record(self, record_id: str) -> Snapshot | None:
        with self.errors(), self.engine.connect() as conn:
            return self._read_row(conn, *self._row_for(record_id))

    def write_record(
        self, record_id: str, expected: Snapshot | None, new: Snapshot | None
    ) -> Snapshot | None:
        with self.errors(), self.write_transaction() as conn:
            return self._write_row(conn, record_id, expected, new)

    def write_records(
        self, changes: Sequence[Change], then: Callable[[Connection, list[Change]], object] | None = None
    ) -> list[Change]:
        """write_record for many records in one transaction, set-based: the memories rows read in
        one query and checked against what each change expected (a ConflictError writes nothing),
        written by one statement per shape compiled once (executemany), read back in one query.
        then(conn, written): more to write in the same transaction (the step's journal entry).
        Returns the changes with what each record now holds as after."""
        with self.errors(), _collector_held_off(len(changes)), self.atomic_transaction() as conn:
            written = self._write_rows(conn, changes)
            if then is not None:
                then(conn, written)
            seen = self._commits_seen(conn)
            if seen is not None and len(written) <= REMEMBERED_ROWS:
                self._writing = (seen, {c.record: c.after for c in written})
        return written

    def atomic_transaction(self) -> AbstractContextManager[Connection]:
        """The transaction write_records writes in: all of it or nothing."""
        return self.write_transaction()

    def ensure_intact(self) -> None:
        """Refuse (StoreError) to write where a write could spread damage; see SqliteSource."""

    def prepare_write(self, changes: Sequence[Change]) -> None:
        """Run a step's memory.db writes in a transaction that is rolled back, before the journal
        holds the step: a trigger another program added that refuses them, a constraint, a full
        disk or a lock fail here, and nothing is written."""
        mine = [c for c in changes if self.owns(c.record)]
        if not mine:
            return
        with self.errors(), self.rehearsal() as conn:
            self._write_rows(conn, mine)

    def _write_row(
        self, conn: Connection, record_id: str, expected: Snapshot | None, new: Snapshot | None
    ) -> Snapshot | None:
        table, where, key = self._row_for(record_id)
        current = self._read_row(conn, table, where, key, lock=True)
        if not same_record(current, expected):
            raise ConflictError(
                f"{record_id} changed since it was read (another writer touched it); "
                "nothing was written. Reload and try again."
            )
        # driver SQL, values bound as they were read: a row another program wrote text into a
        # number column of is written back as it was, not converted or refused
        mark = self._mark
        if new is None:
            conn.exec_driver_sql(f"DELETE FROM {table} WHERE {where}", key)
        elif current is None:
            columns = ", ".join(_quoted(n) for n in new)
            conn.exec_driver_sql(f"INSERT INTO {table} ({columns}) VALUES ({', '.join([mark] * len(new))})",
                                 tuple(new.values()))
        else:
            changed = {name: value for name, value in new.items() if name not in current or current[name] != value}
            if changed:
                assignments = ", ".join(f"{_quoted(n)} = {mark}" for n in changed)
                conn.exec_driver_sql(f"UPDATE {table} SET {assignments} WHERE {where}", (*changed.values(), *key))
        return self._read_row(conn, table, where, key)

    def _write_rows(self, conn: Connection, changes: Sequence[Change]) -> list[Change]:
        """The changes written in conn's transaction, in their order: each run of memories rows
        set-based, any other record (a scratchpad key, a relation) on its own."""
        out: list[Change] = []
        run: dict[str, Change] = {}  # one record once per run
        for change in changes:
            if self._is_memory_record(change.record) and change.record not in run:
                run[change.record] = change
                continue
            out += self._write_memory_run(conn, list(run.values()))
            run = {}
            if self._is_memory_record(change.record):
                run[change.record] = change
            else:
                out.append(Change(change.record, change.before,
                                  self._write_row(conn, change.record, change.before, change.after), change.writer))
        return out + self._write_memory_run(conn, list(run.values()))

    def _write_memory_run(self, conn: Connection, run: list[Change]) -> list[Change]:
        if not run:
            return []
        ids = json.dumps([c.record for c in run])
        sql = f"SELECT * FROM memories WHERE {self._among_json.format(column='id', mark=self._mark)}"
        dbapi = conn.connection.dbapi_connection
        found: list[tuple[Change, Snapshot | None]] = []
        if self._planned_as_they_are(run):  # nothing committed since the rows were read
            found = [(change, change.before) for change in run]
        else:
            names, rows = self._fetch(dbapi, sql + self._lock_rows, (ids,))
            current = _as_read(names, rows)
            for change in run:
                now = _snapshot(names, current.get(change.record), change.before)
                if now is not change.before and not same_record(now, change.before):
                    raise ConflictError(
                        f"{change.record} changed since it was read (another writer touched it); "
                        "nothing was written. Reload and try again."
                    )
                found.append((change, now))
        sets: dict[str, Snapshot] = {}
        stored = self._write_memories(conn, found, self._kept_types(dbapi), sets)
        if stored is None:  # read back: what the database made of what was bound
            names, rows = self._fetch(dbapi, sql, (ids,))
            stored = {i: dict(zip(names, row, strict=True)) for i, row in _as_read(names, rows).items()}
            sets = {}
        out = []
        for c in run:
            after = _same_or(stored.get(c.record), c.after)
            written = Change(c.record, c.before, after, c.writer)
            if after is c.after:
                written.sets = sets.get(c.record)
            out.append(written)
        return out

    planned_from: tuple[object, dict[str, Snapshot]] | None = None
    # The memories rows the last write_records left, with the state the database was in after
    # its commit (see SqliteSource._remember_written); _writing: the same, until it commits.
    written_as: tuple[object, dict[str, Snapshot | None]] | None = None
    _writing: tuple[object, dict[str, Snapshot | None]] | None = None

    def _planned_as_they_are(self, run: list[Change]) -> bool:
        """Whether the rows of run need no second read, the database being in the state it was
        in (read_state, checked under the write lock) when either every change of run was
        planned (plan_many) from the very rows get_many then read, or every change expects the
        row this source's last step wrote (an undo of it: written_as)."""
        planned, self.planned_from = self.planned_from, None
        written = self.written_as
        if planned is None and written is None:
            return False
        state = self.read_state()
        if planned is not None and planned[0] == state:
            rows = planned[1]
            if all(c.before is not None and rows.get(c.record) is c.before for c in run):
                return True
        if written is not None and written[0] == state:
            last = written[1]
            return all(c.before is not None and last.get(c.record) == c.before for c in run)
        return False

    def _commits_seen(self, conn: Connection) -> object:
        """What changes when another connection commits (None: nothing tells)."""
        return None

    def _kept_types(self, dbapi: Any) -> Kept | None:
        """What each memories column stores unchanged (stored_as_bound.py); None: rows written
        are read back."""
        return None

    def _is_memory_record(self, record_id: str) -> bool:
        return not record_id.startswith((SCRATCH_PREFIX, RELATION_PREFIX))

    def _write_memories(self, conn: Connection, changes: list[tuple[Change, Snapshot | None]],
                        kept: Kept | None = None, sets: dict[str, Snapshot] | None = None
                        ) -> dict[str, Snapshot | None] | None:
        """memories rows, current as read: deleted, inserted and updated by one executemany per
        statement shape (the set of columns an update changes). Returns each record's row as it
        is now stored, where kept (the column types stored unchanged) tells it without reading
        them back (every value bound is of such a type, and inserts name every column); else None.
        sets: filled with the columns each update changes where its row is its before-image (what
        the journal keeps of the after-image: Change.sets)."""
        mark = self._mark
        gone = [(c.record,) for c, now in changes if c.after is None and now is not None]
        if gone:
            conn.exec_driver_sql(f"DELETE FROM memories WHERE id = {mark}", gone)
        inserts: dict[tuple[str, ...], list[tuple[Any, ...]]] = {}
        updates: dict[tuple[str, ...], list[tuple[Any, ...]]] = {}
        stored: dict[str, Snapshot | None] | None = {} if kept is not None else None
        for change, now in changes:
            if change.after is None:
                if stored is not None:
                    stored[change.record] = None
                continue
            if now is None:
                inserts.setdefault(tuple(change.after), []).append(tuple(change.after.values()))
                if stored is not None:
                    if kept is not None and list(change.after) == list(kept) and as_written(change.after, kept):
                        stored[change.record] = change.after
                    else:
                        stored = None
                continue
            # the row as planned: its planner said what it sets
            changed = change.sets if now is change.before and change.sets is not None else changed_values(now, change.after)
            if changed:
                updates.setdefault(tuple(changed), []).append((*changed.values(), change.record))
            if sets is not None and now is change.before:
                sets[change.record] = changed
            if stored is not None:
                if kept is not None and as_written(changed, kept):
                    # every column now holds the after-image's value, or one of its type: the row is it
                    stored[change.record] = change.after if now.keys() == change.after.keys() else {**now, **changed}
                else:
                    stored = None
        # driver SQL: nothing to compile, values bound as they were read (see _write_row)
        for names, values in inserts.items():
            columns = ", ".join(_quoted(n) for n in names)
            conn.exec_driver_sql(f"INSERT INTO memories ({columns}) VALUES ({', '.join([mark] * len(names))})", values)
        for names, values in updates.items():
            assignments = ", ".join(f"{_quoted(n)} = {mark}" for n in names)
            same = _same_values(values)
            if same is None:
                conn.exec_driver_sql(f"UPDATE memories SET {assignments} WHERE id = {mark}", values)
            else:  # every row set to the same values (a bulk delete): one statement over the ids
                among = self._among_json.format(column="id", mark=mark)
                conn.exec_driver_sql(f"UPDATE memories SET {assignments} WHERE {among}",
                                     (*same, json.dumps([row[-1] for row in values])))
        return stored

    def read_records(self, record_ids: Sequence[str], *, conn: Connection | None = None,
                     lock: bool = False) -> dict[str, Snapshot]:
        """The memories rows of record_ids (ids that name a row), as read_record reads each, from
        one query over them all (on conn, or a connection of the engine's); lock as read_row's."""
        wanted = list(dict.fromkeys(r for r in record_ids if self._is_memory_record(r)))
        if not wanted:
            return {}
        sql = f"SELECT * FROM memories WHERE {self._among_json.format(column='id', mark=self._mark)}"
        if lock:
            sql += self._lock_rows
        if conn is None:
            with self.errors(), self.engine.connect() as own:
                return self._rows_by_id(own, sql, json.dumps(wanted))
        return self._rows_by_id(conn, sql, json.dumps(wanted))

    _lock_rows = ""  # SQLite's write lock holds the whole file (PostgreSQL: FOR UPDATE)

    def _rows_by_id(self, conn: Connection, sql: str, ids: str) -> dict[str, Snapshot]:
        """The rows as the driver returns them (what read_row's select returns for these columns,
        without decoding every row through SQLAlchemy's result layer)."""
        names, rows = self._fetch(conn.connection.dbapi_connection, sql, (ids,))
        at = names.index("id")
        return {row[at]: dict(zip(names, row, strict=True)) for row in rows}

    # -- planning (rows only; the workspace adds their vector and markdown copies) ----------

    def plan(self, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
        return self._plan_row(operation, memory.id, self.read_record(memory.id), fields, context)

    def plan_many(
        self, operation: str, memories: Sequence[Memory], fields: dict[str, Any], context: PlanContext
    ) -> list[Plan]:
        """plan() of each memory, their rows read in one query (or taken from the get_many that
        just read them, if the database has not changed since)."""
        rows: dict[str, Snapshot] = {}
        state = None
        if self.just_read is not None:
            token, rows, state = self.just_read
            self.just_read = None
            if token != self.change_token():
                rows, state = {}, None
        rows = {m.id: rows[m.id] for m in memories if m.id in rows}
        self.planned_from = (state, rows) if state is not None else None
        if len(rows) < len(memories):
            rows.update(self.read_records([m.id for m in memories if m.id not in rows]))
        return [self._plan_row(operation, m.id, rows.get(m.id), fields, context) for m in memories]

    def plan_rows(self, operation: str, ids: Sequence[str], context: PlanContext) -> list[tuple[RowHead, Plan]] | None:
        """A bulk delete planned from the memories' rows alone, read in one query (get_many's read,
        no Memory built): (what a check reads, plan) of each id in order; None where it does not
        apply (another operation, an id with no row: plan_many then says what is wrong)."""
        if operation != DELETE:
            return None
        with _collector_held_off(len(ids)):
            return self._planned_rows(ids, context)

    def _planned_rows(self, ids: Sequence[str], context: PlanContext) -> list[tuple[RowHead, Plan]] | None:
        by_id = self._rows_read(ids)
        if len(by_id) < len(dict.fromkeys(ids)):
            return None
        self.planned_from = (self.just_read[2], by_id) if self.just_read is not None else None
        self.just_read = None
        planned = []
        for memory_id in dict.fromkeys(ids):
            row = by_id[memory_id]
            head = RowHead(memory_id, row["channel"], parse_status(row["status"]), row["content"])
            planned.append((head, self._plan_row(DELETE, memory_id, row, {}, context)))
        return planned

    def _plan_row(
        self, operation: str, memory_id: str, row: Snapshot | None, fields: dict[str, Any], context: PlanContext
    ) -> Plan:
        if row is None:
            raise NotFoundError(f"No memory {memory_id} in {self._not_found()}.")
        if operation == EDIT:
            new_row = dict(row)
            for name, value in fields.items():
                if name == "tags":
                    new_row["tags"] = json.dumps(list(value), ensure_ascii=False)
                elif name == "layer":
                    new_row["layer"] = Layer(value).value
                else:
                    new_row[name] = value
            if new_row == row:
                return Plan()
            return Plan([Change(memory_id, row, {**new_row, "updated_at": context.now})])
        if operation in (DELETE, RESTORE):
            status = Status.DELETED if operation == DELETE else Status.ACTIVE
            setting = {"status": status.value, "updated_at": context.now}
            change = Change(memory_id, row, {**row, **setting})
            # what the change sets, worked out here rather than over every column at the write
            change.sets = changed_values(row, setting)
            return Plan([change])
        if operation == PURGE:
            changes = [Change(memory_id, row, None)]
            for relation in self.relations(touching=memory_id):
                rid = RELATION_PREFIX + relation.id
                changes.append(Change(rid, self.read_record(rid), None))
            return Plan(changes)
        if operation == REINFORCE:
            new_row = {**row, "access_count": row["access_count"] + 1, "last_accessed": context.now}
            return Plan([Change(memory_id, row, new_row)])
        if operation == REEMBED:
            return Plan([Change(memory_id, row, {**row, "vector_state": "fresh"})], embed_text=row["content"])
        if operation == PROMOTE:
            return self._plan_promote(memory_id, row, fields["to"], fields.get("reason", ""), context.now)
        raise UnsupportedError(f"{memory_id}: {operation} is not something a memory.db row can do.")

    def _plan_promote(self, memory_id: str, row: Snapshot, to: str, reason: str, now: str) -> Plan:
        """A copy in channel ``to`` linked to the original by PROMOTED_FROM; the original stays
        (seed 002). The copy's access clock starts now, so that it does not start out idle."""
        if row["channel"] == to:
            raise NothingToDoError(f"{memory_id} is already in channel {to}.")
        promoted_id = new_id()
        unreadable: dict[str, str] = {}
        metadata = {**json_dict(row["metadata"], unreadable), **({"promotion_reason": reason} if reason else {})}
        promoted = {
            **row,
            "id": promoted_id,
            "channel": to,
            "promoted_from": memory_id,
            "created_at": now,
            "updated_at": now,
            "last_accessed": now,
            "import_key": None,
            # metadata too deep to read is copied as it is stored (the reason stays in the journal)
            "metadata": row["metadata"] if unreadable else json.dumps(metadata, sort_keys=True),
        }
        relation_id = new_id("r")
        relation = relation_row(
            Relation(relation_id, promoted_id, memory_id, RelationType.PROMOTED_FROM.value, to, 1.0, parse_time(now))
        )
        return Plan(
            [Change(promoted_id, None, promoted), Change(RELATION_PREFIX + relation_id, None, relation)],
            new_id=promoted_id,
        )

    # -- the scratchpad as records of the write primitive (a person's edits, through Curator) ----

    scratch_note = ""

    def scratch_record(self, session_id: str, key: str) -> str:
        return SCRATCH_PREFIX + json.dumps([session_id, key], ensure_ascii=False)

    def is_scratch_record(self, record_id: str) -> bool:
        return record_id.startswith(SCRATCH_PREFIX)

    def scratch_snapshot(self, current: Snapshot | None, session_id: str, key: str, value: Any, now: str) -> Snapshot:
        """The row set_scratch writes for value (current itself when it already holds that value:
        the same text, or JSON that reads back as the same value)."""
        try:
            stored = scratch_text(value)
        except (TypeError, ValueError):
            raise UnsupportedError(f"The value of {key} is not JSON; the scratchpad keeps text and JSON only.") from None
        if current is not None and (current["value"] == stored or same_json(current["value"], value)):
            return current
        return {"session_id": session_id, "key": key, "value": stored, "updated_at": now}


def _same_values(rows: list[tuple[Any, ...]], least: int = 64) -> tuple[Any, ...] | None:
    """The values every row of an update sets (each row: its values, then its id), where there
    are at least least rows and they all set the very same values, of the same types (1 and 1.0
    and True are not the same value stored); else None."""
    if len(rows) < least:
        return None
    first = rows[0][:-1]
    kinds = tuple(map(type, first))
    for row in rows:
        values = row[:-1]
        if values != first or tuple(map(type, values)) != kinds:
            return None
    return first


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _as_read(names: list[str], rows: list[Any]) -> dict[str, tuple[Any, ...]]:
    at = names.index("id")
    return {row[at]: tuple(row) for row in rows}


@contextlib.contextmanager
def _collector_held_off(records: int) -> Iterator[None]:
    """Python's cycle collector held off while a step of many records builds their rows and
    snapshots: the collections they would trigger (a tenth of a 10k step) find nothing, since
    rows hold no cycles. Process-wide: another thread's step may end the pause early, no harm."""
    if records < 1000 or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _snapshot(names: list[str], row: tuple[Any, ...] | None, expected: Snapshot | None) -> Snapshot | None:
    """row as a snapshot: expected itself when it holds exactly those values (no dict to build
    for each of a bulk step's rows), else a new one."""
    if row is None:
        return None
    if expected is not None and len(expected) == len(names):
        values = tuple(expected.values())
        # 1 == 1.0, but not as stored
        if values == row and list(expected) == names and tuple(map(type, values)) == tuple(map(type, row)):
            return expected
    return dict(zip(names, row, strict=True))


def _same_or(stored: Snapshot | None, expected: Snapshot | None) -> Snapshot | None:
    """stored, or expected itself when it holds exactly the same values (see _snapshot)."""
    if stored is None or expected is None or stored is expected:
        return stored
    if stored == expected and list(stored) == list(expected) \
            and tuple(map(type, stored.values())) == tuple(map(type, expected.values())):
        return expected
    return stored
