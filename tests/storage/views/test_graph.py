"""The entity graph (storage/views/graph.py): the demo's entities and relations as the networkx
graph the Graph view draws and `mnemoscope graph` prints, filtered, centred and capped."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest
from mnemoscope.storage import open_store
from mnemoscope.storage.errors import NotFoundError, UnsupportedError
from mnemoscope.storage.views.graph import ego, entity_graph, graph_view, resolve_entity, to_json, write_graphml


@pytest.fixture
def store(demo_path: Path):
    with open_store(demo_path) as opened:
        yield opened


def test_graph_filters_by_relation_type_and_channel(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        graph, _ = graph_view(store, relation_types=["PART_OF"])
        assert {d["type"] for _, _, d in graph.edges(data=True)} == {"PART_OF"}
        web, _ = graph_view(store, channels=["webshop"])
        assert {d["channel"] for _, d in web.nodes(data=True)} == {"webshop"}
        capped, info = graph_view(store, max_nodes=5)
        assert capped.number_of_nodes() == 5 and info["hidden_nodes"] == 13


def test_every_entity_is_a_node_and_only_entity_to_entity_relations_are_edges(store) -> None:
    graph = entity_graph(store)
    assert graph.number_of_nodes() == 18
    dana = graph.nodes["e-dana"]
    assert (dana["name"], dana["type"], dana["channel"]) == ("Dana Okafor", "person", "_global")
    assert graph.has_edge("e-dana", "e-priya") and graph.has_edge("e-stripe", "e-webshop")
    assert not graph.has_edge("e-priya", "e-dana")  # directed: Dana knows Priya
    # A memory ABOUT an entity is a relation in the store, but not an edge between two entities.
    assert {t for _, _, t in graph.edges(data="type")} == {"KNOWS", "RELATED_TO", "CREATED_BY", "WORKS_FOR", "PART_OF"}
    assert not any(n.startswith("m-") for n in graph.nodes)


def test_an_entity_is_found_by_id_by_name_in_any_case_or_by_part_of_its_name(store) -> None:
    assert resolve_entity(store, "e-stripe") == "e-stripe"
    assert resolve_entity(store, "STRIPE") == "e-stripe"
    assert resolve_entity(store, "okafor") == "e-dana"
    assert resolve_entity(store, "rust") == "e-rust"  # a whole name wins over "rust-cli" holding it


def test_an_ambiguous_or_unknown_entity_is_refused_by_name(store) -> None:
    with pytest.raises(UnsupportedError, match="3 entities are named 'er': e-whiskerino, e-nuc, e-thiserror"):
        resolve_entity(store, "er")
    with pytest.raises(NotFoundError, match="No entity 'Zed'"):
        resolve_entity(store, "Zed")


def test_a_store_without_entities_says_the_graph_needs_memory_db(markdown_only: Path) -> None:
    with open_store(markdown_only) as store, pytest.raises(UnsupportedError, match="needs memory.db"):
        resolve_entity(store, "Dana")


def test_ego_graph_reaches_neighbours_either_way_up_to_the_depth(store) -> None:
    graph = entity_graph(store)
    one = ego(graph, "e-priya", 1)
    assert set(one.nodes) == {"e-priya", "e-dana", "e-webshop"}  # Dana knows her; she works for the webshop
    two = ego(graph, "e-priya", 2)
    assert {"e-stripe", "e-marco", "e-whiskerino"} <= set(two.nodes) and "e-clap" not in two.nodes
    with pytest.raises(UnsupportedError, match="Depth must be 1, 2 or 3"):
        ego(graph, "e-priya", 4)
    with pytest.raises(NotFoundError, match="filtered out"):
        ego(entity_graph(store, channels=["webshop"]), "e-priya")


def test_a_centred_graph_keeps_its_centre_when_capped(store) -> None:
    graph, info = graph_view(store, center="Whiskerino", depth=2, max_nodes=3)
    assert info == {"center": "e-whiskerino", "depth": 2, "hidden_nodes": graph_view(
        store, center="Whiskerino", depth=2)[0].number_of_nodes() - 3}
    assert graph.number_of_nodes() == 3 and "e-whiskerino" in graph.nodes
    whole, info = graph_view(store)
    assert info == {"center": None, "depth": None, "hidden_nodes": 0} and whole.number_of_nodes() == 18


def test_json_and_graphml_hold_the_same_nodes_and_edges(store, tmp_path: Path) -> None:
    graph, info = graph_view(store, channels=["rust-cli"])
    data = json.loads(json.dumps(to_json(graph, info)))
    assert data["hidden_nodes"] == 0 and data["center"] is None
    assert {n["id"] for n in data["nodes"]} == {"e-rust", "e-clap", "e-rust-cli", "e-thiserror"}
    assert {(e["source"], e["target"], e["type"]) for e in data["edges"]} == {
        ("e-clap", "e-rust-cli", "PART_OF"), ("e-thiserror", "e-rust-cli", "PART_OF"), ("e-rust", "e-rust-cli", "PART_OF")}
    write_graphml(graph, tmp_path / "rust.graphml")
    read = nx.read_graphml(tmp_path / "rust.graphml")
    assert set(read.nodes) == set(graph.nodes) and read.number_of_edges() == graph.number_of_edges()
    assert read.nodes["e-clap"]["name"] == "clap"
