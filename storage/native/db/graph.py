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
from typing import Any, NamedTuple

from ...model import Entity
from ...timeutil import parse_time
from .rows import json_list, number

ENTITY_COLUMNS = "id, name, type, channel, description, aliases, salience, access_count, first_seen, last_accessed"
NODE_COLUMNS = "id, name, type, channel, salience, description"


class Node(NamedTuple):
    """An entity as the graph draws it."""

    id: str
    name: str
    type: str
    channel: str
    salience: float
    description: str


class Edge(NamedTuple):
    """A relation as the graph draws it."""

    id: str
    source_id: str
    target_id: str
    type: str
    channel: str
    weight: float


@dataclass(frozen=True)
class GraphSlice:
    """The nodes kept (at most the cap), the edges between them, and how many nodes there were."""

    nodes: list[Node]
    edges: list[Edge]
    reached: int


def node_of(row: Sequence[Any]) -> Node:
    salience = row[4] if type(row[4]) is float else number(row[4], float, 0.5, {}, "salience")
    return Node(row[0], row[1], row[2], row[3], salience, row[5])


def _weight(value: Any) -> float:
    return value if type(value) is float else number(value, float, 1.0, {}, "weight")


def entity_of(row: Sequence[Any]) -> Entity:
    return Entity(
        id=row[0], name=row[1], type=row[2], channel=row[3], description=row[4], aliases=json_list(row[5]),
        salience=number(row[6], float, 0.5, {}, "salience"), access_count=number(row[7], int, 0, {}, "access_count"),
        first_seen=parse_time(row[8]), last_accessed=parse_time(row[9]),
    )


class GraphReads:
    """The graph reads of the native tables (mixed into NativeReads, which supplies _query)."""

    _mark: str
    _among_json: str
    # What makes ORDER BY on text compare code points, as Python's sort does.
    _bytewise = ""
    # Count each entity's relations by grouping them all (PostgreSQL), not by two index
    # lookups per entity (SQLite: faster there, 4x slower on PostgreSQL).
    _degree_by_groups = False

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

    def entities_named(self, ref: str) -> list[Entity]:
        """The entity whose id is ref, else those whose name is ref in any case, by name
        (through the primary key and ix_entities_lower_name)."""
        sql = (f"SELECT {ENTITY_COLUMNS} FROM entities WHERE id = {self._mark} OR lower(name) = lower({self._mark}) "
               f"ORDER BY name{self._bytewise}, id{self._bytewise}")
        found = [entity_of(r) for r in self._query(sql, [ref, ref])]
        folded = ref.casefold()
        return [e for e in found if e.id == ref] or [e for e in found if e.name.casefold() == folded]

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
        reach = (
            "WITH RECURSIVE reach(id, depth) AS ("
            f" SELECT id, 0 FROM entities WHERE id = {self._mark}{anchor_channel}"
            " UNION SELECT e.id, reach.depth + 1 FROM reach"
            " JOIN relations r ON r.source_id = reach.id OR r.target_id = reach.id"
            " JOIN entities e ON e.id = CASE WHEN r.source_id = reach.id THEN r.target_id ELSE r.source_id END"
            f" WHERE reach.depth < {self._mark}{step_filters}),"
        )
        # The center, then the most salient others: the most salient max_nodes with the center
        # in place of the last when it is not among them.
        params.append(center)
        return self._slice(reach, "id IN (SELECT id FROM reach)", f"(id = {self._mark}) DESC, ", params,
                           types, channels, max_nodes)

    def whole_slice(self, types: Sequence[str], channels: Sequence[str], max_nodes: int) -> GraphSlice:
        """Every node, capped at max_nodes."""
        params: list[Any] = []
        where = "1 = 1" + self._among("channel", channels, params)
        found = self._slice("WITH", where, "", params, types, channels, max_nodes)
        if found is None:
            return GraphSlice([], [], int(self._query(f"SELECT count(*) FROM entities WHERE {where}", params)[0][0]))
        return found

    def _slice(self, walk: str, nodes: str, first: str, params: list[Any], types: Sequence[str],
               channels: Sequence[str], max_nodes: int) -> GraphSlice | None:
        """The entities that meet nodes (SQL, after the CTEs of walk), the first max_nodes in
        first's order then by salience, and the relations between them, in one statement."""
        params = [*params, max_nodes]
        edge_filters = self._among("r.type", types, params) + self._among("r.channel", channels, params)
        rows = self._query(
            f"{walk} kept AS (SELECT {NODE_COLUMNS}, count(*) OVER () AS reached FROM entities WHERE {nodes}"
            f" ORDER BY {first}salience DESC, id{self._bytewise} LIMIT {self._mark})"
            f" SELECT 'n', {NODE_COLUMNS}, reached FROM kept UNION ALL"
            " SELECT 'e', r.id, r.source_id, r.target_id, r.type, r.weight, r.channel, 0 FROM relations r"
            f" WHERE r.source_id IN (SELECT id FROM kept) AND r.target_id IN (SELECT id FROM kept){edge_filters}",
            params,
        )
        node_rows = [r[1:] for r in rows if r[0] == "n"]
        if not node_rows:
            return None
        edges = sorted((Edge(r[1], r[2], r[3], r[4], r[6], _weight(r[5])) for r in rows if r[0] == "e"),
                       key=lambda e: e.id)
        return GraphSlice([node_of(r) for r in node_rows], edges, int(node_rows[0][-1]))

    def best_connected(self, limit: int) -> list[tuple[Entity, int]]:
        """The limit entities with the most relations (any, memories' included), then by name."""
        columns = ", ".join(f"e.{c}" for c in ENTITY_COLUMNS.split(", "))
        if self._degree_by_groups:
            degree, source = "coalesce(d.n, 0)", (
                "entities e LEFT JOIN (SELECT id, count(*) AS n FROM (SELECT source_id AS id FROM relations"
                " UNION ALL SELECT target_id FROM relations) ends GROUP BY id) d ON d.id = e.id")
        else:
            degree, source = ("(SELECT count(*) FROM relations WHERE source_id = e.id)"
                              " + (SELECT count(*) FROM relations WHERE target_id = e.id)"), "entities e"
        rows = self._query(
            f"SELECT {columns}, {degree} AS degree FROM {source}"
            f" ORDER BY degree DESC, e.name{self._bytewise}, e.id{self._bytewise} LIMIT {self._mark}",
            [limit],
        )
        return [(entity_of(r), int(r[-1])) for r in rows]

    def relation_types(self) -> list[str]:
        return [r[0] for r in self._query("SELECT DISTINCT type FROM relations")]

    def entity_channels(self) -> list[str]:
        return [r[0] for r in self._query("SELECT DISTINCT channel FROM entities")]
