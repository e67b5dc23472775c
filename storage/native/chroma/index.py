"""Chroma records as numpy columns, and the reads both Chroma sources answer from them.

A local directory (local.ChromaSource) and a server (server.ChromaServerSource) keep,
per collection, a RecordIndex: a few numpy columns per record (status, layer, channel, times,
salience, flags), never documents or vectors. IndexedReads answers count, page, counts_by,
bin_counts and the stale list from those columns the same way for both; each source says only
where its index and its records' documents come from.
"""

from __future__ import annotations

import contextlib
import functools
import io
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ...atomic_file import atomic_write_bytes
from ...embedders.base import EMBEDDER_KEY, Embedder
from ...embedders.choice import embedder_by_name
from ...errors import UnsupportedError
from ...model import GLOBAL_CHANNEL, Kind, Layer, Memory, Status, parse_layer, parse_status
from ...query import MemoryQuery, Order
from ...source import Snapshot, effective_salience_page
from ...timeutil import as_utc, parse_time, utcnow
from .records import MIRROR_KEY, STALE_KEY, number_or, record_id_for

STATUSES = list(Status)  # a status's code in RecordIndex.status
LAYERS = list(Layer)  # a layer's code in RecordIndex.layer
NO_TIME = -(2**63)  # no time recorded: the record reads as made now (as its Memory does)
NO_SALIENCE = float("-inf")  # no salience kept: below every record that has one (as query.sort_key orders it)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_TIME_COLUMNS = {"created": "created", "updated": "updated", "accessed": "accessed"}
# The columns one record fills, in the order RecordIndexBuilder.rows holds them.
_ROW_COLUMNS = ("ids", "status", "layer", "channel", "mirror", "stale", "created", "updated", "accessed", "salience")


def micros(value: datetime) -> int:
    """A time as the index holds it: microseconds since the epoch."""
    return (as_utc(value) - _EPOCH) // timedelta(microseconds=1)


def from_micros(value: int) -> datetime:
    return _EPOCH + timedelta(microseconds=value)


def one_of(column: Any, codes: list[int]) -> Any:
    """Which rows of column hold one of codes."""
    import numpy as np

    if len(codes) == 1:
        return column == codes[0]
    return np.isin(column, codes)


class RecordIndex:
    """One collection's records as columns: what filtering and ordering read, and nothing else.
    Row i is the i-th record as the source listed them (a local directory: Chroma's insertion
    order); times in microseconds since the epoch (NO_TIME: none recorded)."""

    COLUMNS = ("ids", "status", "layer", "channel", "channels", "mirror", "stale", "created", "updated",
               "accessed", "salience", "id_rank")

    def __init__(self, token: str, **columns: Any) -> None:
        self.token = token
        self.ids = columns["ids"]  # numpy str array
        self.status, self.layer, self.channel = columns["status"], columns["layer"], columns["channel"]
        self.channels: list[str] = list(columns["channels"])
        self.mirror, self.stale = columns["mirror"], columns["stale"]
        self.created, self.updated, self.accessed = columns["created"], columns["updated"], columns["accessed"]
        self.salience = columns["salience"]
        self.id_rank = columns["id_rank"]  # each record's place in id order
        self._orders: dict[Order, Any] = {}
        self._position: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def ids_at(self, rows: Any) -> list[str]:
        return [str(i) for i in self.ids[rows].tolist()]

    def position(self) -> dict[str, int]:
        if self._position is None:
            self._position = {str(i): n for n, i in enumerate(self.ids.tolist())}
        return self._position

    def times(self, column: str) -> Any:
        import numpy as np

        values = getattr(self, _TIME_COLUMNS[column])
        if (values == NO_TIME).any():
            values = np.where(values == NO_TIME, micros(utcnow()), values)
        return values

    def values(self, order: Order) -> Any:
        import numpy as np

        if order is Order.SALIENCE:
            return self.salience
        raw = self._raw(order)
        return np.where(raw == NO_TIME, micros(utcnow()), raw) if (raw == NO_TIME).any() else raw

    def order(self, order: Order) -> Any:
        """Every row, ascending by (the order's value, id): a memory's sort key."""
        import numpy as np

        if order in self._orders:
            return self._orders[order]
        values = self.values(order)
        ordered = np.lexsort((self.id_rank, values))
        if order is Order.SALIENCE or not (self._raw(order) == NO_TIME).any():
            self._orders[order] = ordered  # nothing read as "now": the order holds until the records change
        return ordered

    def _raw(self, order: Order) -> Any:
        return {Order.CREATED: self.created, Order.ACCESSED: self.accessed}.get(order, self.updated)

    def labelled(self, column: str) -> tuple[Any, list[str]]:
        """A column's codes and the label of each code."""
        if column == "channel":
            return self.channel, self.channels
        if column == "layer":
            return self.layer, [layer.value for layer in LAYERS]
        if column == "status":
            return self.status, [status.value for status in STATUSES]
        raise UnsupportedError(f"Chroma records cannot be counted by {column!r}.")

    def with_record(self, token: str, record_id: str, meta: dict[str, Any] | None) -> RecordIndex:
        """A new index, made at token: this one with one record written (its metadata as
        RecordIndexBuilder reads it) or, meta None, gone. This index is left as it is."""
        import numpy as np

        at = self.position().get(record_id)
        channels = self.channels
        if meta is None:
            if at is None:
                columns = {c: getattr(self, c) for c in _ROW_COLUMNS}
            else:
                kept = np.ones(len(self), dtype=bool)
                kept[at] = False
                columns = {c: getattr(self, c)[kept] for c in _ROW_COLUMNS}
        else:
            builder = RecordIndexBuilder(token, channels)
            builder.add(record_id, meta, None)
            row, channels = builder.rows[0], list(builder.channels)
            columns = {}
            for name, value in zip(_ROW_COLUMNS, row, strict=True):
                old = getattr(self, name)
                if at is None:  # ids widen as the new id needs; the other columns keep their type
                    new = np.array([value], dtype=str if name == "ids" else old.dtype)
                    columns[name] = np.concatenate([old, new])
                else:
                    columns[name] = old.copy()
                    columns[name][at] = value
        if at is not None and meta is not None:
            rank = self.id_rank  # the same ids
        else:
            rank = np.empty(len(columns["ids"]), dtype=np.int64)
            rank[np.argsort(columns["ids"], kind="stable")] = np.arange(len(rank))
        return RecordIndex(token, channels=np.array(channels, dtype=str), id_rank=rank, **columns)

    def save(self, path: Path) -> None:
        """Write the index to path (a cache file: a failure is no error)."""
        import numpy as np

        buffer = io.BytesIO()
        try:
            columns: dict[str, Any] = {c: np.asarray(getattr(self, c)) for c in self.COLUMNS}
            np.savez(buffer, token=np.array(self.token), **columns)
            atomic_write_bytes(path, buffer.getvalue())
        except (OSError, ValueError):
            pass

    @classmethod
    def load(cls, path: Path, token: str) -> RecordIndex | None:
        """The index saved at path, when it was made at this change token."""
        import zipfile

        import numpy as np

        try:
            with np.load(path, allow_pickle=False) as data:
                if str(data["token"]) != token:
                    return None
                return cls(token, **{c: data[c] for c in cls.COLUMNS})
        except (OSError, ValueError, KeyError, zipfile.BadZipFile):
            return None


class RecordIndexBuilder:
    """A RecordIndex folded together one record at a time."""

    def __init__(
        self, token: str, channels: list[str] | None = None, stored: Callable[[], dict[str, Any]] | None = None
    ) -> None:
        """stored: when Chroma stored each record, asked once a record's metadata keeps no
        creation time (without it, such a record reads as made now)."""
        self.token = token
        self.rows: list[tuple[Any, ...]] = []
        self.channels: dict[str, int] = {str(c): n for n, c in enumerate(channels or ())}
        self._parsed: dict[Any, int | None] = {}
        self._stored = stored
        self._stored_times: dict[str, Any] | None = None

    def _stored_micros(self, record_id: str) -> int:
        if self._stored is None:
            return NO_TIME
        if self._stored_times is None:
            self._stored_times = self._stored()
        found = self._time(self._stored_times.get(record_id))
        return NO_TIME if found is None else found

    def _time(self, value: Any) -> int | None:
        try:
            return self._parsed[value]
        except KeyError:
            parsed = parse_time(value, None)
            self._parsed[value] = found = micros(parsed) if parsed is not None else None
            return found
        except TypeError:  # unhashable (a list)
            parsed = parse_time(value, None)
            return micros(parsed) if parsed is not None else None

    def add(self, record_id: str, meta: dict[str, Any], summary: Memory | None) -> None:
        """One record: from its metadata as records.record_memory reads it, or from the memory a
        tool's reading made of it (status, layer, channel, salience; times come from the metadata)."""
        created = self._time(meta.get("created_at") or meta.get("timestamp"))
        created = self._stored_micros(record_id) if created is None else created
        updated = self._time(meta.get("updated_at"))
        updated = created if updated is None else updated
        accessed = self._time(meta.get("last_accessed"))
        accessed = updated if accessed is None else accessed
        if summary is None:
            status = parse_status(meta.get("status") or "active")
            layer = parse_layer(meta.get("layer") or meta.get("category") or meta.get("memory_type"), Layer.SEMANTIC)
            channel = str(meta.get("channel") or GLOBAL_CHANNEL)
            salience = number_or(meta.get("salience"), NO_SALIENCE)
        else:
            status, layer, channel = summary.status, summary.layer, summary.channel
            salience = NO_SALIENCE if summary.salience is None else summary.salience
        code = self.channels.setdefault(channel, len(self.channels))
        self.rows.append((
            record_id, STATUSES.index(status), LAYERS.index(layer), code, meta.get(MIRROR_KEY) is True,
            bool(meta.get(STALE_KEY)), created, updated, accessed, salience,
        ))

    def index(self) -> RecordIndex:
        import numpy as np

        columns = list(zip(*self.rows, strict=True)) if self.rows else [()] * 10
        ids = [str(i) for i in columns[0]]
        rank = np.empty(len(ids), dtype=np.int64)
        rank[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
        return RecordIndex(
            self.token,
            ids=np.array(ids, dtype=str),
            status=np.array(columns[1], dtype=np.int8),
            layer=np.array(columns[2], dtype=np.int8),
            channel=np.array(columns[3], dtype=np.int32),
            channels=np.array(list(self.channels), dtype=str),
            mirror=np.array(columns[4], dtype=bool),
            stale=np.array(columns[5], dtype=bool),
            created=np.array(columns[6], dtype=np.int64),
            updated=np.array(columns[7], dtype=np.int64),
            accessed=np.array(columns[8], dtype=np.int64),
            salience=np.array(columns[9], dtype=np.float64),
            id_rank=rank,
        )


def one_read(method: Any) -> Any:
    """Run a public read inside the source's _one_read(): one look at the store's state however
    many times the read asks for it (calls within calls share the outermost one)."""

    @functools.wraps(method)
    def read(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._one_read():
            return method(self, *args, **kwargs)

    return read


class IndexedReads:
    """count, page, counts_by, bin_counts and the stale list of a Chroma source, read from each
    collection's RecordIndex, and vector search's walk over the collections. The source supplies
    the index (_index_of), the records a text filter keeps (_ids_containing), records' documents
    and metadata (_records) and how they read as memories (_memory), one look at its state per
    call (_one_read), a collection's nearest records (_nearest_memories), the collection as Chroma
    describes it (_collection_meta: its embedder is read from there) and a record as its write
    primitive reads it (read_record)."""

    kind: Kind
    _mirrors_hidden: bool
    embedder_override: Embedder | None

    # -- what the source supplies -----------------------------------------------------------

    def collections(self) -> list[str]:
        raise NotImplementedError

    def _collection_meta(self, name: str) -> Any:
        """The collection as Chroma describes it: its metadata and configuration."""
        raise NotImplementedError

    def _index_of(self, name: str) -> RecordIndex:
        raise NotImplementedError

    # -- the collection's embedder ----------------------------------------------------------

    def embedder_for(self, name: str) -> Embedder | None:
        if self.embedder_override is not None:
            return self.embedder_override
        return embedder_by_name(self._collection_meta(name).metadata.get(EMBEDDER_KEY))

    def embedding_function_info(self, name: str) -> dict[str, Any]:
        col = self._collection_meta(name)
        ef = col.configuration.get("embedding_function")
        recorded = ef.get("name") if isinstance(ef, dict) else ef
        local = self.embedder_for(name)
        return {
            "collection": name,
            "recorded_embedding_function": recorded or col.metadata.get(EMBEDDER_KEY),
            "runs_offline_here": local is not None,
            "embedder": local.label if local else None,
        }

    def _ids_containing(self, name: str, needle: str) -> set[str]:
        raise NotImplementedError

    def _records(self, name: str, ids: list[str]) -> dict[str, tuple[str | None, dict[str, Any]]]:
        """(document, metadata) of the collection's records ids names, by id; gone ones left out."""
        raise NotImplementedError

    def _memory(
        self, name: str, record_id: str, document: str | None, meta: dict[str, Any], snap: Snapshot | None
    ) -> Memory:
        """A record as a full memory (with snap: its revision too)."""
        raise NotImplementedError

    def _nearest_memories(self, name: str, vector: list[float], query: MemoryQuery, k: int) -> list[tuple[Memory, float]]:
        """The collection's k nearest records the query keeps, as memories with their distances."""
        raise NotImplementedError

    def _one_read(self) -> contextlib.AbstractContextManager[None]:
        raise NotImplementedError

    def read_record(self, record_id: str) -> Snapshot | None:
        raise NotImplementedError

    def _count_without_index(self, name: str) -> int | None:
        """The collection's record count when the source knows it without reading its index
        (None: count the index's rows)."""
        return None

    def _bin_counts_unindexed(self, query: MemoryQuery, bin_format: str, group_by: str) -> dict[tuple[str, str], int]:
        """bin_counts grouped by what the index does not hold."""
        raise UnsupportedError(f"Chroma records cannot be grouped by {group_by!r}.")

    # -- filtering ---------------------------------------------------------------------------

    def _mask(
        self, index: RecordIndex, query: MemoryQuery, name: str, *, contains: bool = True, mirrors: bool = False
    ) -> Any:
        """Which of the collection's records the query's filters keep (None: all of them);
        mirrors: keep vector copies of memory.db memories even where they are not listed."""
        import numpy as np

        mask = None

        def both(more: Any) -> None:
            nonlocal mask
            mask = more if mask is None else mask & more

        if self._mirrors_hidden and not mirrors and index.mirror.any():
            both(~index.mirror)
        if query.channels:
            both(one_of(index.channel, [i for i, c in enumerate(index.channels) if c in set(query.channels)]))
        if query.layers:
            both(one_of(index.layer, [LAYERS.index(layer) for layer in set(query.layers)]))
        if query.statuses and set(query.statuses) != set(STATUSES):
            both(one_of(index.status, [STATUSES.index(status) for status in set(query.statuses)]))
        if query.since or query.until:
            created = index.times("created")
            if query.since:
                both(created >= micros(query.since))
            if query.until:
                both(created < micros(query.until))
        if contains and query.contains:
            position = index.position()
            hits = np.zeros(len(index), dtype=bool)
            hits[[position[i] for i in self._ids_containing(name, query.contains) if i in position]] = True
            both(hits)
        if query.ids:
            both(self._id_rows(index, query, name))
        return mask

    @staticmethod
    def _id_rows(index: RecordIndex, query: MemoryQuery, name: str) -> Any:
        """Which of the collection's records are the memories query.ids names (vec:<name>:<record>)."""
        import numpy as np

        position = index.position()
        prefix = record_id_for(name, "")
        rows = [position[i[len(prefix):]] for i in query.ids if i.startswith(prefix) and i[len(prefix):] in position]
        hits = np.zeros(len(index), dtype=bool)
        hits[rows] = True
        return hits

    def _filtered(self, query: MemoryQuery) -> bool:
        """Whether the query's filters may keep fewer than all records."""
        return bool(
            (self._mirrors_hidden or query.channels or query.layers or query.since or query.until or query.contains
             or query.ids)
            or (query.statuses and set(query.statuses) != set(STATUSES))
        )

    def _selected(self, name: str, query: MemoryQuery) -> tuple[RecordIndex, Any]:
        """The collection's index and the positions the query keeps, in the query's order."""
        index = self._index_of(name)
        mask = self._mask(index, query, name)
        order = index.order(query.order)
        chosen = order if mask is None else order[mask[order]]
        return index, chosen[::-1] if query.descending else chosen

    def _count_in(self, name: str, query: MemoryQuery) -> int:
        """How many of the collection's records the query keeps."""
        if not self._filtered(query):
            known = self._count_without_index(name)
            if known is not None:
                return known
        index = self._index_of(name)
        mask = self._mask(index, query, name)
        return len(index) if mask is None else int(mask.sum())

    def _with_documents(self, wanted: list[tuple[str, str]]) -> list[Memory]:
        """Full memories of (collection, record id) pairs, in their order; gone ones left out."""
        by_collection: dict[str, list[str]] = {}
        for name, record_id in wanted:
            by_collection.setdefault(name, []).append(record_id)
        full: dict[tuple[str, str], Memory] = {}
        for name, ids in by_collection.items():
            for record_id, (document, meta) in self._records(name, ids).items():
                full[(name, record_id)] = self._memory(name, record_id, document, meta, None)
        return [full[w] for w in wanted if w in full]

    # -- the reads ---------------------------------------------------------------------------

    @one_read
    def record_index(self, name: str) -> RecordIndex:
        """The collection's records as columns (status, layer, channel, mirror flag, times), as
        count and page read them now: every record, whatever the source hides (mirrors)."""
        return self._index_of(name)

    @one_read
    def count(self, query: MemoryQuery) -> int:
        if not query.wants_kind(self.kind):
            return 0
        return sum(self._count_in(name, query) for name in self.collections())

    @one_read
    def page(self, query: MemoryQuery, limit: int, offset: int = 0) -> list[Memory]:
        if not query.wants_kind(self.kind) or limit <= 0:
            return []
        if query.order is Order.EFFECTIVE_SALIENCE:
            # The index keeps no access counts, which the decay's boost needs: read and sort here.
            return effective_salience_page(self, query, limit, offset, None)
        names = self.collections()
        if len(names) == 1:
            index, chosen = self._selected(names[0], query)
            window = chosen[offset : offset + limit]
            return self._with_documents([(names[0], i) for i in index.ids_at(window)])
        # Several collections: each one's first offset + limit, merged by (sort value, memory id).
        candidates = []
        for name in names:
            index, chosen = self._selected(name, query)
            head = chosen[: offset + limit]
            values = index.values(query.order)[head].tolist()
            candidates += [(v, record_id_for(name, i), name, i) for v, i in zip(values, index.ids_at(head), strict=True)]
        candidates.sort(key=lambda c: (c[0], c[1]), reverse=query.descending)
        return self._with_documents([(name, i) for _v, _m, name, i in candidates[offset : offset + limit]])

    @one_read
    def counts_by(self, column: str, query: MemoryQuery = MemoryQuery(statuses=())) -> dict[str, int]:
        import numpy as np

        counts: dict[str, int] = {}
        if not query.wants_kind(self.kind):
            return counts
        for name in self.collections():
            if column == "kind":
                n = self._count_in(name, query)
                found = {self.kind.value: n} if n else {}
            else:
                index = self._index_of(name)
                mask = self._mask(index, query, name)
                codes, labels = index.labelled(column)
                kept = codes if mask is None else codes[mask]
                values, tally = np.unique(kept, return_counts=True)
                found = {labels[int(v)]: int(t) for v, t in zip(values, tally, strict=True)}
            for key, n in found.items():
                counts[key] = counts.get(key, 0) + n
        return counts

    @one_read
    def bin_counts(self, query: MemoryQuery, bin_format: str, group_by: str) -> dict[tuple[str, str], int]:
        import numpy as np

        if group_by not in ("kind", "channel", "layer", "status"):
            return self._bin_counts_unindexed(query, bin_format, group_by)
        counts: dict[tuple[str, str], int] = {}
        if not query.wants_kind(self.kind):
            return counts
        for name in self.collections():
            index = self._index_of(name)
            mask = self._mask(index, query, name)
            created = index.times("created")
            if group_by == "kind":
                codes, labels = np.zeros(len(index), dtype=np.int32), [self.kind.value]
            else:
                codes, labels = index.labelled(group_by)
            if mask is not None:
                created, codes = created[mask], codes[mask]
            if not len(created):
                continue
            pairs, tally = np.unique(np.stack([created, codes.astype(np.int64)]), axis=1, return_counts=True)
            for (when, code), n in zip(pairs.T.tolist(), tally.tolist(), strict=True):
                key = (from_micros(when).strftime(bin_format), labels[code])
                counts[key] = counts.get(key, 0) + n
        return counts

    @one_read
    def stale_record_ids(self) -> list[str]:
        """Records flagged stale (text edited without an embedder), not counting mirrors."""
        out = []
        for name in self.collections():
            index = self._index_of(name)
            stale = index.stale & ~index.mirror if self._mirrors_hidden else index.stale
            out += [record_id_for(name, i) for i in index.ids_at(stale.nonzero()[0])]
        return out

    @one_read
    def vector_search(
        self, embedding: list[float] | None, text: str | None, query: MemoryQuery, k: int
    ) -> list[tuple[Memory, float]]:
        """Nearest records, per collection whose embedder can embed ``text``."""
        results: list[tuple[Memory, float]] = []
        for name in self.collections():
            vector = embedding
            if vector is None:
                embedder = self.embedder_for(name)
                if embedder is None or text is None:
                    continue
                vector = embedder.embed([text])[0]
            results += self._nearest_memories(name, vector, query, k)
        results.sort(key=lambda t: t[1])
        return results[:k]

    def stale_ids(self) -> list[str]:
        return self.stale_record_ids()

    def embedding_of(self, memory_id: str) -> list[float] | None:
        snap = self.read_record(memory_id)
        return snap["embedding"] if snap else None


__all__ = [
    "IndexedReads", "RecordIndex", "RecordIndexBuilder", "STATUSES", "LAYERS", "NO_TIME", "micros", "from_micros",
    "one_of", "one_read",
]
