"""The ego graph at depth 2 around an entity named by the user (`mnemoscope graph --center NAME
--depth 2`: resolve the name, walk the graph, cap at 500 nodes, build the networkx graph) against
the recursive CTE a person writes on the same memory.db: the name through the same index, the
walk over relations between entities (not through the memories an ABOUT relation links), the 500
most salient nodes and the relations between them. 100k entities, 500k relations between them and
100k ABOUT relations with MNEMOSCOPE_BENCH_SCALE=full; 10k, 50k and 10k otherwise."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench import graph_store
from bench.harness import Row, cached_store, paired_medians_s, record, sizes
from mnemoscope.storage import MemoryStore, open_store
from mnemoscope.storage.views.graph import graph_view

pytestmark = pytest.mark.bench
SIZES = sizes(full=[100_000], ci=[10_000])
DEPTH = 2
MAX_NODES = 500

NODES = """WITH RECURSIVE reach(id, depth) AS (
    SELECT id, 0 FROM entities WHERE lower(name) = lower(:name)
    UNION SELECT e.id, depth + 1 FROM reach JOIN relations r ON r.source_id = reach.id
        JOIN entities e ON e.id = r.target_id WHERE depth < :depth
    UNION SELECT e.id, depth + 1 FROM reach JOIN relations r ON r.target_id = reach.id
        JOIN entities e ON e.id = r.source_id WHERE depth < :depth)
SELECT e.* FROM entities e WHERE e.id IN (SELECT id FROM reach) ORDER BY e.salience DESC, e.id LIMIT :limit"""
EDGES = """SELECT * FROM relations WHERE source_id IN (SELECT value FROM json_each(:ids))
    AND target_id IN (SELECT value FROM json_each(:ids))"""


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"{n // 1000}k")
def opened(request: pytest.FixtureRequest) -> Iterator[tuple[MemoryStore, sqlite3.Connection, int]]:
    path: Path = cached_store("graph", request.param, graph_store.VERSION, graph_store.build)
    with contextlib.closing(sqlite3.connect(f"file:{path / 'memory.db'}?mode=ro", uri=True)) as con, \
            open_store(path, read_only=True) as store:
        yield store, con, request.param


def test_ego_graph_at_depth_2(opened: tuple[MemoryStore, sqlite3.Connection, int]) -> None:
    store, con, size = opened
    center = graph_store.name(size // 3)

    def project() -> tuple[set[str], set[str]]:
        graph, _ = graph_view(store, center=center, depth=DEPTH, max_nodes=MAX_NODES)
        return set(graph.nodes), {key for _, _, key in graph.edges(keys=True)}

    def baseline() -> tuple[set[str], set[str]]:
        nodes = [row[0] for row in con.execute(NODES, {"name": center, "depth": DEPTH, "limit": MAX_NODES})]
        edges = con.execute(EDGES, {"ids": json.dumps(nodes)}).fetchall()
        return set(nodes), {row[0] for row in edges}

    nodes, edges = project()
    assert (nodes, edges) == baseline() and len(nodes) > 50 and edges
    project_s, baseline_s = paired_medians_s(project, baseline, repeat=101)
    row = record(Row("graph", "ego graph, depth 2, 5 relations per entity", size, project_s,
                     "recursive CTE + relations among", baseline_s, 1.5, guard=3.0))
    assert row.bounded
