"""The entity graph where it lives: ego graphs by recursive SQL, the nodes shown capped in SQL,
entities resolved by name through an index (the same SQL on SQLite and PostgreSQL).

A node is an entity (of the channels asked for); an edge is a relation (of the types and channels
asked for) between two such nodes. An ego graph holds every node within depth relations of its
center, either way, and every edge between them. Capped, it keeps the most salient nodes (then by
id), the center always."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...model import Entity, Relation
from ...timeutil import parse_time
from .rows import json_list, number

ENTITY_COLUMNS = "id, name, type, channel, description, aliases, salience, access_count, first_seen, last_accessed"
RELATION_COLUMNS = "id, source_id, target_id, type, channel, weight, created_at"


@dataclass(frozen=True)
class GraphSlice:
    """The nodes kept (at most the cap), the edges between them, and how many nodes there were."""

    entities: list[Entity]
    relations: list[Relation]
    reached: int


def entity_of(row: Sequence[Any]) -> Entity:
    return Entity(
        id=row[0], name=row[1], type=row[2], channel=row[3], description=row[4], aliases=json_list(row[5]),
        salience=number(row[6], float, 0.5, {}, "salience"), access_count=number(row[7], int, 0, {}, "access_count"),
        first_seen=parse_time(row[8]), last_accessed=parse_time(row[9]),
    )


def relation_of(row: Sequence[Any]) -> Relation:
    return Relation(id=row[0], source_id=row[1], target_id=row[2], type=row[3], channel=row[4],
                    weight=number(row[5], float, 1.0, {}, "weight"), created_at=parse_time(row[6]))


class GraphReads:
    """The graph reads of the native tables (mixed into NativeReads, which supplies _query)."""

    _mark: str
    _among_json: str
    # What makes ORDER BY on text compare code points, as Python's sort does.
    _bytewise = ""

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        raise NotImplementedError

    def entity_graph(self) -> GraphReads:
        return self

    def _among(self, column: str, values: Sequence[str], params: list[Any]) -> str:
        params.extend(values)
        return f" AND {column} IN ({', '.join([self._mark] * len(values))})" if values else ""

    def has_entities(self) -> bool:
        return bool(self._query("SELECT 1 FROM entities LIMIT 1"))

    def entities_by_id(self, ids: Sequence[str]) -> list[Entity]:
        if not ids:
            return []
        among = self._among_json.format(column="id", mark=self._mark)
        sql = f"SELECT {ENTITY_COLUMNS} FROM entities WHERE {among}"
        return [entity_of(r) for r in self._query(sql, [json.dumps(list(ids))])]

    def entities_named(self, name: str) -> list[Entity]:
        """The entities whose name is name in any case, by name (through ix_entities_lower_name)."""
        sql = (f"SELECT {ENTITY_COLUMNS} FROM entities WHERE lower(name) = lower({self._mark}) "
               f"ORDER BY name{self._bytewise}, id{self._bytewise}")
        folded = name.casefold()
        return [e for e in map(entity_of, self._query(sql, [name])) if e.name.casefold() == folded]

    def entities_containing(self, part: str) -> list[Entity]:
        """The entities named part in any case (as Python folds case: SQL's lower() does not fold
        every script), else those whose name holds it, by name. Reads every name."""
        folded = part.casefold()
        names = [(i, n.casefold()) for i, n in self._query("SELECT id, name FROM entities")]
        ids = [i for i, n in names if n == folded] or [i for i, n in names if folded in n]
        return sorted(self.entities_by_id(ids), key=lambda e: (e.name, e.id))

    def ego_slice(self, center: str, depth: int, types: Sequence[str], channels: Sequence[str],
                  max_nodes: int) -> GraphSlice | None:
        """The ego graph of center, capped at max_nodes; None when center is not a node."""
        params: list[Any] = [center]
        anchor_channel = self._among("channel", channels, params)
        params.append(depth)
        step_filters = (self._among("r.type", types, params) + self._among("r.channel", channels, params)
                        + self._among("e.channel", channels, params))
        params.append(max(max_nodes, 1))
        rows = self._query(
            "WITH RECURSIVE reach(id, depth) AS ("
            f" SELECT id, 0 FROM entities WHERE id = {self._mark}{anchor_channel}"
            " UNION SELECT e.id, reach.depth + 1 FROM reach"
            " JOIN relations r ON r.source_id = reach.id OR r.target_id = reach.id"
            " JOIN entities e ON e.id = CASE WHEN r.source_id = reach.id THEN r.target_id ELSE r.source_id END"
            f" WHERE reach.depth < {self._mark}{step_filters}),"
            " ego AS (SELECT DISTINCT id FROM reach)"
            f" SELECT {', '.join('e.' + c for c in ENTITY_COLUMNS.split(', '))}, count(*) OVER ()"
            f" FROM ego JOIN entities e ON e.id = ego.id ORDER BY e.salience DESC, e.id{self._bytewise}"
            f" LIMIT {self._mark}",
            params,
        )
        if not rows:
            return None
        kept = [entity_of(r) for r in rows]
        if all(e.id != center for e in kept):
            kept[-1] = self.entities_by_id([center])[0]
        return GraphSlice(kept, self.relations_among([e.id for e in kept], types, channels), int(rows[0][-1]))

    def whole_slice(self, types: Sequence[str], channels: Sequence[str], max_nodes: int) -> GraphSlice:
        """Every node, capped at max_nodes."""
        params: list[Any] = []
        where = self._among("channel", channels, params)
        params.append(max_nodes)
        rows = self._query(
            f"SELECT {ENTITY_COLUMNS}, count(*) OVER () FROM entities WHERE 1 = 1{where}"
            f" ORDER BY salience DESC, id{self._bytewise} LIMIT {self._mark}",
            params,
        )
        if not rows:
            counted = self._query(f"SELECT count(*) FROM entities WHERE 1 = 1{where}", params[:-1])
            return GraphSlice([], [], int(counted[0][0]))
        kept = [entity_of(r) for r in rows]
        return GraphSlice(kept, self.relations_among([e.id for e in kept], types, channels), int(rows[0][-1]))

    def relations_among(self, ids: Sequence[str], types: Sequence[str], channels: Sequence[str]) -> list[Relation]:
        """The relations between two of ids (of types and channels when given), by id."""
        if not ids:
            return []
        params: list[Any] = [json.dumps(list(ids))] * 2
        sql = (f"SELECT {RELATION_COLUMNS} FROM relations WHERE "
               f"{self._among_json.format(column='source_id', mark=self._mark)} AND "
               f"{self._among_json.format(column='target_id', mark=self._mark)}"
               f"{self._among('type', types, params)}{self._among('channel', channels, params)}"
               f" ORDER BY id{self._bytewise}")
        return [relation_of(r) for r in self._query(sql, params)]

    def best_connected(self, limit: int) -> list[tuple[Entity, int]]:
        """The limit entities with the most relations (any, memories' included), then by name."""
        rows = self._query(
            f"SELECT {ENTITY_COLUMNS}, (SELECT count(*) FROM relations WHERE source_id = entities.id)"
            " + (SELECT count(*) FROM relations WHERE target_id = entities.id) AS degree"
            f" FROM entities ORDER BY degree DESC, name{self._bytewise}, id{self._bytewise} LIMIT {self._mark}",
            [limit],
        )
        return [(entity_of(r), int(r[-1])) for r in rows]

    def relation_types(self) -> list[str]:
        return [r[0] for r in self._query("SELECT DISTINCT type FROM relations")]

    def entity_channels(self) -> list[str]:
        return [r[0] for r in self._query("SELECT DISTINCT channel FROM entities")]
