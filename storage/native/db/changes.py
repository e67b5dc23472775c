"""Changing the native tables on any database: the write primitive (one row per record id,
written only if it still is what was read) and the plans of the Curator's operations (rows only;
the workspace adds their vector and markdown copies)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import and_, delete, insert, update
from sqlalchemy.engine import Connection

from ...errors import ConflictError, NotFoundError, NothingToDoError, UnsupportedError
from ...model import Layer, Memory, Relation, RelationType, Status
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
    Snapshot,
    same_record,
)
from ...timeutil import parse_time
from . import schema
from .reads import NativeReads
from .rows import (
    RELATION_PREFIX,
    SCRATCH_PREFIX,
    as_stored,
    json_dict,
    new_id,
    read_row,
    relation_row,
    same_json,
    scratch_key,
    scratch_text,
)


class NativeChanges(NativeReads):
    """The write primitive on the native tables (read_record, write_record, prepare_write) and the
    plans of the Curator's operations on a memories row, the scratchpad's rows as records."""

    # -- the write primitive ---------------------------------------------------

    def owns(self, record_id: str) -> bool:
        return not record_id.startswith(("md:", "vec:"))

    def _row_for(self, record_id: str) -> tuple[Any, Any]:
        """The table a record id names and the condition that selects its row."""
        if record_id.startswith(SCRATCH_PREFIX):
            session_id, key = scratch_key(record_id)
            sp = schema.scratchpad.c
            return schema.scratchpad, and_(sp.session_id == session_id, sp.key == key)
        if record_id.startswith(RELATION_PREFIX):
            return schema.relations, schema.relations.c.id == record_id[len(RELATION_PREFIX) :]
        return schema.memories, schema.memories.c.id == record_id

    def read_record(self, record_id: str) -> Snapshot | None:
        table, where = self._row_for(record_id)
        with self.errors(), self.engine.connect() as conn:
            return read_row(conn, table, where)

    def write_record(
        self, record_id: str, expected: Snapshot | None, new: Snapshot | None
    ) -> Snapshot | None:
        with self.errors(), self.write_transaction() as conn:
            return self._write_row(conn, record_id, expected, new)

    def prepare_write(self, changes: Sequence[Change]) -> None:
        """Run a step's memory.db writes in a transaction that is rolled back, before the journal
        holds the step: a trigger another program added that refuses them, a constraint, a full
        disk or a lock fail here, and nothing is written."""
        mine = [c for c in changes if self.owns(c.record)]
        if not mine:
            return
        with self.errors(), self.rehearsal() as conn:
            for change in mine:
                self._write_row(conn, change.record, change.before, change.after)

    def _write_row(
        self, conn: Connection, record_id: str, expected: Snapshot | None, new: Snapshot | None
    ) -> Snapshot | None:
        table, where = self._row_for(record_id)
        current = read_row(conn, table, where, lock=True)
        if not same_record(current, expected):
            raise ConflictError(
                f"{record_id} changed since it was read (another writer touched it); "
                "nothing was written. Reload and try again."
            )
        if new is None:
            conn.execute(delete(table).where(where))
        elif current is None:
            conn.execute(insert(table).values(as_stored(new)))
        else:
            changed = {name: value for name, value in new.items() if name not in current or current[name] != value}
            if changed:
                conn.execute(update(table).where(where).values(as_stored(changed)))
        return read_row(conn, table, where)

    # -- planning (rows only; the workspace adds their vector and markdown copies) ----------

    def plan(self, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
        row = self.read_record(memory.id)
        if row is None:
            raise NotFoundError(f"No memory {memory.id} in {self._not_found()}.")
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
            return Plan([Change(memory.id, row, {**new_row, "updated_at": context.now})])
        if operation in (DELETE, RESTORE):
            status = Status.DELETED if operation == DELETE else Status.ACTIVE
            return Plan([Change(memory.id, row, {**row, "status": status.value, "updated_at": context.now})])
        if operation == PURGE:
            changes = [Change(memory.id, row, None)]
            for relation in self.relations(touching=memory.id):
                rid = RELATION_PREFIX + relation.id
                changes.append(Change(rid, self.read_record(rid), None))
            return Plan(changes)
        if operation == REINFORCE:
            new_row = {**row, "access_count": row["access_count"] + 1, "last_accessed": context.now}
            return Plan([Change(memory.id, row, new_row)])
        if operation == REEMBED:
            return Plan([Change(memory.id, row, {**row, "vector_state": "fresh"})], embed_text=row["content"])
        if operation == PROMOTE:
            return self._plan_promote(memory, row, fields["to"], fields.get("reason", ""), context.now)
        raise UnsupportedError(f"{memory.id}: {operation} is not something a memory.db row can do.")

    def _plan_promote(self, memory: Memory, row: Snapshot, to: str, reason: str, now: str) -> Plan:
        """A copy in channel ``to`` linked to the original by PROMOTED_FROM; the original stays
        (seed 002). The copy's access clock starts now, so that it does not start out idle."""
        if memory.channel == to:
            raise NothingToDoError(f"{memory.id} is already in channel {to}.")
        promoted_id = new_id()
        metadata = {**json_dict(row["metadata"]), **({"promotion_reason": reason} if reason else {})}
        promoted = {
            **row,
            "id": promoted_id,
            "channel": to,
            "promoted_from": memory.id,
            "created_at": now,
            "updated_at": now,
            "last_accessed": now,
            "import_key": None,
            "metadata": json.dumps(metadata, sort_keys=True),
        }
        relation_id = new_id("r")
        relation = relation_row(
            Relation(relation_id, promoted_id, memory.id, RelationType.PROMOTED_FROM.value, to, 1.0, parse_time(now))
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
