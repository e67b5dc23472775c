"""The entity graph asked of the database (storage/native/db/graph.py), on SQLite and PostgreSQL:
every ego graph, cap and filter gives the graph networkx gives over the whole graph in memory,
and a name is found as before, through the index."""

from __future__ import annotations

import random
from typing import Any

import networkx as nx
import pytest
from helpers.native_backends import native, native_demo  # noqa: F401 (fixtures)
from helpers.postgres_server import postgres_server  # noqa: F401 (fixture)
from mnemoscope.storage import NotFoundError, UnsupportedError
from mnemoscope.storage.native.db import schema
from mnemoscope.storage.views.graph import entity_graph, graph_choices, graph_view, resolve_entity

CHANNELS = ("_global", "webshop", "infra")
TYPES = ("KNOWS", "PART_OF", "RELATED_TO")


def _random_graph(native: Any, entities: int = 160, relations: int = 420) -> None:
    """entities with tied saliences, relations either way, self-loops, parallel edges, and
    ABOUT relations from memories (which join two entities only through a memory)."""
    rng = random.Random(27)
    source = native.source()
    try:
        with source.engine.begin() as conn:
            conn.execute(schema.entities.insert(), [
                {"id": f"e-{i:03d}", "name": f"Thing {i}", "type": "thing", "channel": CHANNELS[i % 3],
                 "salience": rng.choice((0.1, 0.5, 0.5, 0.9))} for i in range(entities)])
            rows = [{"id": f"r-{k:04d}", "source_id": f"e-{rng.randrange(entities):03d}",
                     "target_id": f"e-{rng.randrange(entities):03d}", "type": TYPES[k % 3],
                     "channel": CHANNELS[rng.randrange(3)]} for k in range(relations)]
            rows += [{"id": f"r-about-{k}", "source_id": f"m-{k // 2}", "target_id": f"e-{(k * 37) % entities:03d}",
                      "type": "ABOUT", "channel": "_global"} for k in range(60)]
            conn.execute(schema.relations.insert(), rows)
    finally:
        source.close()


def _oracle(store: Any, center: str | None, depth: int, types: list[str], channels: list[str],
            max_nodes: int) -> tuple[nx.MultiDiGraph, int]:
    """The graph as it was computed before: the whole graph in networkx, its ego graph, capped."""
    graph = entity_graph(store, relation_types=types, channels=channels)
    if center:
        graph = nx.ego_graph(graph, center, radius=depth, undirected=True)
    hidden = max(graph.number_of_nodes() - max_nodes, 0)
    if hidden:
        keep = sorted(graph.nodes, key=lambda n: (-graph.nodes[n]["salience"], n))[:max_nodes]
        if center and center not in keep:
            keep[-1] = center
        graph = graph.subgraph(keep).copy()
    return graph, hidden


def _same(got: nx.MultiDiGraph, expected: nx.MultiDiGraph) -> None:
    """The same nodes and edges with the same data (networkx's ego graph keeps no node order)."""
    assert dict(got.nodes(data=True)) == dict(expected.nodes(data=True))
    assert sorted(got.edges(keys=True, data=True)) == sorted(expected.edges(keys=True, data=True))


CASES = [
    (1, [], [], 500), (2, [], [], 500), (3, [], [], 500), (2, [], [], 12), (3, [], [], 40),
    (2, ["KNOWS"], [], 500), (2, [], ["webshop", "infra"], 500), (3, ["PART_OF", "KNOWS"], ["_global"], 7),
]


def test_every_ego_graph_is_the_one_networkx_finds_in_the_whole_graph(native: Any) -> None:
    _random_graph(native)
    with native.open(read_only=True) as store:
        centers = ["e-000", "e-007", "e-042", "e-101", "e-159"]
        capped = filtered_out = 0
        for center in centers:
            for depth, types, channels, max_nodes in CASES:
                if center not in entity_graph(store, channels=channels):
                    with pytest.raises(NotFoundError, match="filtered out"):
                        graph_view(store, center=center, depth=depth, relation_types=types, channels=channels)
                    filtered_out += 1
                    continue
                expected, hidden = _oracle(store, center, depth, types, channels, max_nodes)
                graph, info = graph_view(store, center=center, depth=depth, relation_types=types,
                                         channels=channels, max_nodes=max_nodes)
                assert info == {"center": center, "depth": depth, "hidden_nodes": hidden}
                _same(graph, expected)
                capped += hidden > 0 and center in graph
        assert capped > 5 and filtered_out > 2


@pytest.mark.parametrize("types, channels, max_nodes", [([], [], 500), ([], [], 25), (["KNOWS"], ["infra"], 10)])
def test_the_whole_graph_capped_is_its_most_salient_entities(native: Any, types: list[str], channels: list[str],
                                                            max_nodes: int) -> None:
    _random_graph(native)
    with native.open(read_only=True) as store:
        graph, info = graph_view(store, relation_types=types, channels=channels, max_nodes=max_nodes)
        expected, hidden = _oracle(store, None, 1, types, channels, max_nodes)
        assert info == {"center": None, "depth": None, "hidden_nodes": hidden}
        _same(graph, expected)


def test_the_demo_graph_names_and_centres_agree_on_both_databases(native_demo: Any) -> None:
    with native_demo.open(read_only=True) as store:
        assert resolve_entity(store, "STRIPE") == "e-stripe"
        assert resolve_entity(store, "okafor") == "e-dana"
        assert resolve_entity(store, "rust") == "e-rust"
        with pytest.raises(UnsupportedError, match="3 entities are named 'er': e-whiskerino, e-nuc, e-thiserror"):
            resolve_entity(store, "er")
        with pytest.raises(NotFoundError, match="No entity 'Zed'"):
            resolve_entity(store, "Zed")
        for depth in (1, 2, 3):
            graph, info = graph_view(store, center="Priya", depth=depth)
            _same(graph, _oracle(store, info["center"], depth, [], [], 500)[0])
        choices = graph_choices(store)
        degree = {e.id: len(store.relations(touching=e.id)) for e in store.entities()}
        assert [e.id for e in choices["entities"]] == [
            e.id for e in sorted(store.entities(), key=lambda e: (-degree[e.id], e.name))]
        assert choices["types"] == sorted({r.type for r in store.relations()})
        assert choices["channels"] == sorted({e.channel for e in store.entities()})


def test_the_center_choices_are_the_best_connected_few(native: Any) -> None:
    _random_graph(native)
    with native.open(read_only=True) as store:
        degree = {e.id: len(store.relations(touching=e.id)) for e in store.entities()}
        best = sorted(store.entities(), key=lambda e: (-degree[e.id], e.name))[:20]
        assert graph_choices(store, limit=20)["entities"] == best
