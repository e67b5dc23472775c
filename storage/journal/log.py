"""The audit log and undo journal of one store, kept in the store itself.

A native workspace keeps it in memory.db; a store without one (markdown or
Chroma only) gets a sidecar ``.mnemoscope/journal.db``, created on the first
write and never on a read. Each curation step is one entry holding the record
snapshots it changed, so undo and redo work across separate processes.

Every statement is SQL with `?` placeholders (in the driver's own on PostgreSQL): on SQLite the
journal is read and written through sqlite3 alone (storage/sqlite_engine.py), and a store without
a journal yet (a markdown or Chroma folder opened to read) makes no engine.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import ConflictError
from ..model import AuditEntry
from ..source import Change, changed_values
from ..timeutil import parse_time, to_iso, utcnow
from .redaction import Purge, purged_snapshot

if TYPE_CHECKING:
    from ..sqlite_engine import AnyConnection as Connection
    from ..sqlite_engine import AnyEngine as Engine

_T = TypeVar("_T")

SIDECAR_DIR = ".mnemoscope"
SIDECAR_DB = "journal.db"

DONE, UNDONE, DROPPED, LOG = "done", "undone", "dropped", "log"
# A step's intent, written before any store is touched; "interrupted" once recovery undid it,
# "failed" when a write failed and what was written had been put back.
PENDING, INTERRUPTED, FAILED = "pending", "interrupted", "failed"


class Journal:
    def __init__(
        self,
        engine_factory: Callable[[bool], Engine | None],
        label: Path,
        reading: Callable[[], AbstractContextManager[Any]] | None = None,
        errors: Callable[[], AbstractContextManager[None]] | None = None,
        home: Any = None,
    ) -> None:
        # engine_factory(create) returns the engine, or None when it does not exist yet.
        # home: the source whose database holds the journal, asked to ensure_intact() before the
        # journal writes there.
        self._engine_factory = engine_factory
        self._home = home
        self._engine: Engine | None = None
        self._reading = reading
        self._error_wording = errors
        self.label = label
        # False once a journal from before version 3 (changes in audit, opened as it is to read)
        # was found: its entries are read from audit alone.
        self._changes_apart = True
        self._sidecar = False  # a journal.db of its own (sidecar), read with sqlite3 until written

    @classmethod
    def in_database(
        cls,
        engine: Callable[[], Engine],
        db_path: Path,
        reading: Callable[[], AbstractContextManager[Any]] | None,
        *,
        errors: Callable[[], AbstractContextManager[None]] | None = None,
        home: Any = None,
    ) -> Journal:
        """The journal in the native store's own tables; engine() is asked for only when the
        journal is first written or searched. reading() lends the store's own sqlite3 connection
        for the reads every open makes (settings, unfinished steps, the count): a read-only open,
        and `info`, need neither an engine nor SQLAlchemy. errors() words the database's errors
        (SQLite's about db_path by default). home: the source that owns the database (see
        shares, and its ensure_intact, run before the journal writes an entry on its own)."""
        return cls(lambda _create: engine(), db_path, reading, errors, home)

    @classmethod
    def sidecar(cls, root: Path, *, read_only: bool = False) -> Journal:
        db_path = Path(os.path.join(root, SIDECAR_DIR, SIDECAR_DB))

        def factory(create: bool) -> Engine | None:
            if not db_path.exists():
                if not create or read_only:
                    return None
                db_path.parent.mkdir(parents=True, exist_ok=True)
            from ..sqlite_engine import sqlite_engine
            from ..sqlite_files import friendly_errors
            from . import tables

            if read_only:
                return sqlite_engine(db_path, read_only=True)
            engine = sqlite_engine(db_path)
            with friendly_errors(db_path), engine.begin() as conn:
                tables.migrate(conn)
            return engine

        journal = cls(factory, db_path)
        journal._sidecar = True
        return journal

    def _get_engine(self, create: bool) -> Engine | None:
        if self._engine is None:
            self._engine = self._engine_factory(create)
        return self._engine

    def _writable_engine(self) -> Engine:
        """The engine, for a write of the journal's own (its home checked intact first)."""
        ensure_intact = getattr(self._home, "ensure_intact", None)
        if ensure_intact is not None:
            ensure_intact()
        engine = self._get_engine(True)
        assert engine is not None
        return engine

    def _errors(self) -> AbstractContextManager[None]:
        if self._error_wording is not None:
            return self._error_wording()
        from ..sqlite_files import friendly_errors

        return friendly_errors(self.label)

    def close(self) -> None:
        if self._engine is not None and self.label.name == SIDECAR_DB:
            self._engine.dispose()
        self._engine = None

    # -- settings ------------------------------------------------------------------

    def read_setting(self, key: str) -> Any:
        rows = self._read("SELECT value FROM meta WHERE key = ?", (key,))
        if not rows:
            return None
        try:
            return json.loads(rows[0]["value"])
        except (TypeError, ValueError):  # a damaged file: the value is no JSON any more
            from ..errors import UnreadableStoreError

            raise UnreadableStoreError(
                f"{self.label}: the stored {key!r} is damaged (not JSON); nothing was written. "
                "Restore the file from a copy, or repair it with sqlite3's .recover."
            ) from None

    def write_setting(self, key: str, value: Any) -> None:
        engine = self._writable_engine()
        with self._errors(), engine.begin() as conn:
            conn.exec_driver_sql(
                _driver(conn, "INSERT INTO meta(key, value) VALUES (?, ?) "
                              "ON CONFLICT(key) DO UPDATE SET value = excluded.value"),
                (key, json.dumps(value)),
            )

    # -- entries ---------------------------------------------------------------------

    def record(
        self,
        operation: str,
        targets: list[str],
        changes: list[Change],
        *,
        channel: str | None = None,
        details: dict[str, Any] | None = None,
        actor: str = "user",
        state: str = DONE,
    ) -> AuditEntry:
        entry = self.entry(self._insert(operation, targets, changes, channel, details, actor, state))
        assert entry is not None
        return entry

    def _insert(self, operation: str, targets: list[str], changes: list[Change], channel: str | None,
                details: dict[str, Any] | None, actor: str, state: str,
                replaying: tuple[int, str] | None = None) -> int:
        engine = self._writable_engine()
        with self._errors(), engine.begin() as conn:
            if replaying is not None:  # (under the step lock: no other curator replays it until this step ends)
                seq, to_state = replaying
                now = conn.exec_driver_sql(_driver(conn, "SELECT state FROM audit WHERE seq = ?"), (seq,)).scalar()
                if now != _before_replay(to_state):
                    raise _replayed_meanwhile(seq, to_state)
            return self.record_in(conn, operation, targets, changes, channel=channel, details=details, actor=actor,
                                  state=state)

    def shares(self, source: Any) -> bool:
        """Whether the journal lives in source's database (a step written there can record its
        entry in the same transaction as its records: record_in)."""
        return source is not None and source is self._home

    def record_in(
        self,
        conn: Connection,
        operation: str,
        targets: list[str],
        changes: list[Change],
        *,
        channel: str | None = None,
        details: dict[str, Any] | None = None,
        actor: str = "user",
        state: str = DONE,
        replayed: tuple[int, str, list[Change] | None] | None = None,
    ) -> int:
        """One entry and its targets (one executemany) written in conn's transaction, and for undo
        and redo the entry it replayed marked (as finish does); the entry's seq. A step whose
        records are written in the same transaction needs no intent: it is all there or none."""
        targets = list(dict.fromkeys(targets))
        # driver SQL: a step's entry costs no statement compilation
        if state == DONE:  # a new step: what was undone can no longer be redone
            conn.exec_driver_sql(_driver(conn, "UPDATE audit SET state = ? WHERE state = ?"), (DROPPED, UNDONE))
        values = (to_iso(utcnow()), operation, json.dumps(targets), channel, actor, state,
                  json.dumps(details or {}, default=str))
        seq = int(conn.exec_driver_sql(_driver(conn,
            "INSERT INTO audit(at, operation, targets, channel, actor, state, details) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING seq"), values,
        ).scalar_one())
        conn.exec_driver_sql(_driver(conn, "INSERT INTO audit_changes(seq, changes) VALUES (?, ?)"),
                             (seq, _changes_json(changes)))
        if targets:
            conn.exec_driver_sql(_driver(conn, "INSERT INTO audit_targets(seq, target) VALUES (?, ?)"),
                                 [(seq, t) for t in targets])
        if replayed is not None:
            _mark_replayed(conn, replayed)
        return seq

    def begin(
        self,
        operation: str,
        targets: list[str],
        changes: list[Change],
        *,
        channel: str | None = None,
        details: dict[str, Any] | None = None,
        actor: str = "user",
        replaying: tuple[int, str] | None = None,
    ) -> int:
        """Write a step's intent (every change it will make, in order) durably, before any
        store is touched: a crash after this leaves an entry that recovery can undo. replaying:
        (seq, state) of the entry an undo or redo takes to state, which must still be before it."""
        return self._insert(operation, targets, changes, channel, details, actor, PENDING, replaying)

    def finish(
        self,
        seq: int,
        applied: list[Change],
        *,
        state: str = DONE,
        replayed: tuple[int, str, list[Change] | None] | None = None,
        purge: Purge | None = None,
    ) -> None:
        """Mark a step done in one transaction: its entry, and for undo/redo the entry it replayed.
        A purge's entry keeps a marker where the records' snapshots were, and every earlier entry
        is redacted of the purged memories in the same transaction (see redaction.py)."""
        engine = self._writable_engine()
        if purge is not None:
            applied = [
                Change(c.record, *(None if s is None else purged_snapshot(seq) for s in (c.before, c.after)))
                for c in applied
            ]
        with self._errors(), engine.begin() as conn:
            if state == DONE:  # a new step: what was undone can no longer be redone
                conn.exec_driver_sql(_driver(conn, "UPDATE audit SET state = ? WHERE state = ?"), (DROPPED, UNDONE))
            conn.exec_driver_sql(_driver(conn, "UPDATE audit SET state = ? WHERE seq = ?"), (state, seq))
            _set_changes(conn, seq, applied)
            if replayed is not None:
                _mark_replayed(conn, replayed)
            if purge is not None:
                _redact(conn, purge)

    def settle(self) -> list[str]:
        """After a purge: the journal's -wal (SQLite) emptied into its file, so that no page the
        redaction replaced stays there; what could not be done, as notes."""
        engine = self._get_engine(False)
        if engine is None or engine.dialect.name != "sqlite":
            return []
        from ..sqlite_engine import empty_wal

        return empty_wal(engine, self.label)

    def pending(self) -> list[AuditEntry]:
        """Steps whose intent was written but that never finished (the process died)."""
        if getattr(self._home, "without_unfinished_steps", bool)():  # (its home remembers: see SqliteSource)
            return []
        if not self._read("SELECT seq FROM audit WHERE state = ? LIMIT 1", (PENDING,)):  # every open asks: the index alone
            getattr(self._home, "found_no_unfinished_steps", lambda: None)()
            return []
        return [_entry(row) for row in self._entry_rows(" WHERE a.state = ? ORDER BY a.seq DESC", (PENDING,))]

    def set_state(self, seq: int, state: str, changes: list[Change] | None = None) -> None:
        engine = self._writable_engine()
        with self._errors(), engine.begin() as conn:
            conn.exec_driver_sql(_driver(conn, "UPDATE audit SET state = ? WHERE seq = ?"), (state, seq))
            if changes is not None:
                _set_changes(conn, seq, changes)

    def entry(self, seq: int) -> AuditEntry | None:
        rows = self._entry_rows(" WHERE a.seq = ?", (seq,))
        return _entry(rows[0]) if rows else None

    def changes(self, seq: int) -> list[Change]:
        engine = self._get_engine(False)
        if engine is None:
            return []
        with self._errors(), engine.connect() as conn:
            raw = conn.exec_driver_sql(_driver(conn, "SELECT changes FROM audit_changes WHERE seq = ?"), (seq,)).scalar_one()
        return [Change.from_json(c) for c in _loads_changes(raw)]

    def next_to_undo(self, preferring: Sequence[int] = ()) -> AuditEntry | None:
        step = self.step_to(UNDONE, preferring)
        return step[0] if step else None

    def next_to_redo(self, preferring: Sequence[int] = ()) -> AuditEntry | None:
        step = self.step_to(DONE, preferring)
        return step[0] if step else None

    def step_to(self, state: str, preferring: Sequence[int] = ()) -> tuple[AuditEntry, list[Change]] | None:
        """The step undo (state UNDONE) or redo (DONE) would replay next, and its changes, its
        JSON read once (a bulk step's is large). preferring: the steps one curator made (or
        replayed); where the store's next is another's, that curator's own next comes first, as
        undo goes by memory: another curator's later step on other memories does not stand in
        its way; one on the same memories does, and the store's order goes first."""
        order = f"ORDER BY a.seq {'DESC' if state == UNDONE else 'ASC'} LIMIT 1"
        wanted = DONE if state == UNDONE else UNDONE
        rows = self._entry_rows(f" WHERE a.state = ? {order}", (wanted,))
        if rows and preferring and rows[0]["seq"] not in preferring:
            among = ", ".join("?" * len(preferring))
            own = self._entry_rows(f" WHERE a.state = ? AND a.seq IN ({among}) {order}", (wanted, *preferring))
            if own and not self._in_the_way(own[0], wanted, later=state == UNDONE):
                rows = own
        if not rows:
            return None
        parsed = _loads_changes(rows[0]["changes"])
        return _entry(rows[0], parsed), [Change.from_json(c) for c in parsed]

    def _in_the_way(self, row: dict[str, Any], state: str, *, later: bool) -> bool:
        """Whether another entry in state, later than row (undo) or earlier (redo), has one of its
        targets: replaying row before it would be a conflict, so the store's order goes first."""
        targets = json.loads(row["targets"] or "[]")
        if not targets:
            return False
        among = ", ".join("?" * len(targets))
        return bool(self._read(
            f"SELECT 1 FROM audit WHERE state = ? AND seq {'>' if later else '<'} ? AND seq IN "
            f"(SELECT seq FROM audit_targets WHERE target IN ({among})) LIMIT 1", (state, row["seq"], *targets)))

    def history(self, limit: int = 100, target: str | None = None) -> list[AuditEntry]:
        if target is None:
            rows = self._entry_rows(" ORDER BY a.seq DESC LIMIT ?", (limit,))
        else:
            rows = self._entry_rows(f" WHERE {_TARGETING} ORDER BY a.seq DESC LIMIT ?", (target, limit))
        return [_entry(row) for row in rows]

    def last_with(self, operations: tuple[str, ...], target: str) -> AuditEntry | None:
        """The newest applied entry of one of these operations on target."""
        if not operations:
            return None
        among = ", ".join("?" * len(operations))
        rows = self._entry_rows(f" WHERE a.operation IN ({among}) AND a.state = ? AND {_TARGETING} "
                                "ORDER BY a.seq DESC LIMIT 1", (*operations, DONE, target))
        return _entry(rows[0]) if rows else None

    def count(self) -> int:
        rows = self._read("SELECT count(*) AS entries FROM audit", ())
        return int(rows[0]["entries"]) if rows else 0

    def _read(self, sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
        """The rows of one query every open runs, as driver SQL (`?` placeholders; nothing to
        compile): on the store's reading connection where it lends one, else on the engine.
        None without a journal yet."""
        if self._reading is not None:
            with self._reading() as dbapi:
                return _rows_of(dbapi.execute(sql, params))
        if self._engine is None and self._sidecar:  # a plain read of its file: no SQLAlchemy for a look
            return self._read_sidecar(sql, params)
        engine = self._get_engine(False)
        if engine is None:
            return []
        with self._errors(), engine.connect() as conn:
            return [dict(r._mapping) for r in conn.exec_driver_sql(_driver(conn, sql), params)]

    def _read_sidecar(self, sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
        import sqlite3

        from ..sqlite_files import read_only_connection, sqlite_error

        if not os.path.exists(self.label):
            return []
        try:
            con = read_only_connection(self.label)
            try:
                return _rows_of(con.execute(sql, params))
            finally:
                con.close()
        except sqlite3.Error as exc:
            raise sqlite_error(self.label, exc) from None

    def _in_its_layout(self, read: Callable[[bool], _T]) -> _T:
        """read(apart): with apart True while the changes may be in audit_changes, and False from
        the first answer that there is no such table (a journal from before version 3)."""
        if self._changes_apart:
            try:
                return read(True)
            except Exception as error:
                if _changes_table_found(error):
                    raise
                self._changes_apart = False
        return read(False)

    def _entry_rows(self, where: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
        """The rows of entries where selects (over audit as `a`), each with its changes."""
        return self._in_its_layout(
            lambda apart: self._read((_ENTRIES if apart else _ENTRIES_BEFORE_VERSION_3) + where, params))


def _rows_of(cursor: Any) -> list[dict[str, Any]]:
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _mark_replayed(conn: Connection, replayed: tuple[int, str, list[Change] | None]) -> None:
    """An undone or redone entry: its new state, and its changes as they now are on disk (None:
    as the entry holds them). ConflictError (the transaction rolls back) where another curator
    undid or redid it meanwhile."""
    target, target_state, changes = replayed
    updated = conn.exec_driver_sql(_driver(conn, "UPDATE audit SET state = ? WHERE seq = ? AND state = ?"),
                                   (target_state, target, _before_replay(target_state)))
    if updated.rowcount != 1:
        raise _replayed_meanwhile(target, target_state)
    if changes is not None:  # else its snapshots are still what is on disk
        _set_changes(conn, target, changes)


def _before_replay(state: str) -> str:
    """The state an entry is in before undo (to UNDONE) or redo (to DONE) replays it."""
    return DONE if state == UNDONE else UNDONE


def _replayed_meanwhile(seq: int, state: str) -> ConflictError:
    verb = "undid" if state == UNDONE else "redid"
    return ConflictError(f"Another curator {verb} step #{seq} meanwhile; nothing was written.")


def _set_changes(conn: Connection, seq: int, changes: list[Change]) -> None:
    conn.exec_driver_sql(_driver(conn, "UPDATE audit_changes SET changes = ? WHERE seq = ?"), (_changes_json(changes), seq))


# An entry's row with its changes (every entry has them; an outer join all the same, so that a
# row without them still reads, as no changes).
_ENTRIES = "SELECT a.*, coalesce(c.changes, '[]') AS changes FROM audit a LEFT JOIN audit_changes c ON c.seq = a.seq"
_ENTRIES_BEFORE_VERSION_3 = "SELECT a.* FROM audit a"
# The entries (as `a`) that name a target among theirs.
_TARGETING = "a.seq IN (SELECT seq FROM audit_targets WHERE target = ?)"


def _driver(conn: Connection, sql: str) -> str:
    """sql, written with `?` placeholders, in the placeholders of conn's driver."""
    from ..sqlite_files import placeholder

    mark = placeholder(conn.engine)
    return sql if mark == "?" else sql.replace("?", mark)


def _changes_table_found(error: BaseException) -> bool:
    """False where error says there is no audit_changes table (a journal from before version 3)."""
    while error is not None:
        if "audit_changes" in str(error):
            return False
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return True


def _redact(conn: Connection, purge: Purge) -> None:
    """Redact every entry that changed a purged memory's records (purge.redact), until no older
    version of them is left to find; the entries of other memories are left as they are."""
    from ..sqlite_files import escape_like

    while True:
        ids, texts = set(purge.ids), set(purge.texts)
        records = sorted(ids)
        among = ", ".join("?" * len(records)) if records else "NULL"
        # a step that changed one of the records without naming it (a repair of a copy)
        changing = "".join(" OR c.changes LIKE ? ESCAPE '\\'" for _ in records)
        rows = conn.exec_driver_sql(_driver(conn, (
            "SELECT a.seq, a.targets, a.details, c.changes FROM audit a JOIN audit_changes c ON c.seq = a.seq "
            f"WHERE a.state != ? AND (a.seq IN (SELECT seq FROM audit_targets WHERE target IN ({among})){changing}) "
            "ORDER BY a.seq DESC")),
            (PENDING, *records, *(f"%{escape_like(json.dumps({'record': r})[1:-1])}%" for r in records)),
        ).all()
        for row in rows:
            changes, details = _loads_changes(row.changes), json.loads(row.details or "{}")
            if purge.redact(json.loads(row.targets), changes, details):
                conn.exec_driver_sql(_driver(conn, "UPDATE audit SET details = ? WHERE seq = ?"),
                                     (json.dumps(details, default=str), row.seq))
                conn.exec_driver_sql(_driver(conn, "UPDATE audit_changes SET changes = ? WHERE seq = ?"),
                                     (_dumps_changes(changes), row.seq))
        if purge.ids == ids and purge.texts == texts:
            return


def _entry(row: Any, parsed: Any = None) -> AuditEntry:
    changes = _loads_changes(row["changes"]) if parsed is None else parsed
    return AuditEntry(
        seq=int(row["seq"]),
        at=parse_time(row["at"], utcnow()),
        operation=row["operation"],
        targets=tuple(json.loads(row["targets"])),
        channel=row["channel"],
        before=[c.get("before") for c in changes],
        after=[c.get("after") for c in changes],
        actor=row["actor"],
        state=row["state"],
        details=json.loads(row["details"] or "{}"),
    )


_BYTES = "$bytes"  # a blob value in a snapshot (SQLite keeps whatever a column is given)


def _changes_json(changes: list[Change]) -> str:
    return json.dumps([_kept_as(c.to_json(), c.sets) for c in changes], default=_encode)


def _dumps_changes(changes: list[dict[str, Any]]) -> str:
    return json.dumps([_kept_as(change) for change in changes], default=_encode)


def _kept_as(change: dict[str, Any], sets: dict[str, Any] | None = None) -> dict[str, Any]:
    """A change as the journal keeps it (version 2): an after-image with the very columns of its
    before-image, in their order, as only the values it changes ("set"), half what a bulk step
    writes and what every later rewrite of its entry copies. sets: those values, where the
    writer knows them (Change.sets)."""
    before, after = change.get("before"), change.get("after")
    if not isinstance(before, dict) or not isinstance(after, dict) or list(before) != list(after):
        return change
    if sets is not None:
        return {"record": change["record"], "before": before, _SET: sets}
    return {"record": change["record"], "before": before, _SET: changed_values(before, after)}


_SET = "set"


def _encode(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {_BYTES: base64.b64encode(bytes(value)).decode("ascii")}
    return str(value)


def _loads_changes(raw: str) -> Any:
    """The changes of an entry, each with its after-image whole (see _kept_as)."""
    # the hook, called for every object of a bulk step's 20,000, only where a blob was encoded
    changes = json.loads(raw, object_hook=_decode) if _BYTES in raw else json.loads(raw)
    for change in changes:
        if _SET in change:
            change["after"] = {**change["before"], **change.pop(_SET)}
    return changes


def _decode(value: dict[str, Any]) -> Any:
    if len(value) == 1 and _BYTES in value:
        return base64.b64decode(value[_BYTES])
    return value
