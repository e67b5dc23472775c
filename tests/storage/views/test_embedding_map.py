"""The embedding map on real stores: a Chroma directory written by chromadb with planted clusters,
the demo workspace (memory.db rows with vector copies, markdown), and the ids filter every source
honours (memory.db SQL, Chroma records, markdown blocks, another tool's SQLite table)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.chroma_server import (
    ChromaServer,
    chroma_server,  # noqa: F401 (fixture)
    copy_to_server,
)
from helpers.owners import run_owner
from helpers.postgres_server import postgres_server  # noqa: F401 (fixture)
from mnemoscope.storage import MemoryQuery, open_store
from mnemoscope.storage.embedders.base import EMBEDDER_KEY, HashingEmbedder
from mnemoscope.storage.native.chroma.records import NATIVE_COLLECTION
from mnemoscope.storage.views.embedding_map import MapCancelled, embedding_map, neighbours

CLUSTERS = ("alpha", "beta", "gamma")
PER_CLUSTER = 40
DIM = 32


@pytest.fixture(scope="module")
def clustered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Chroma-only workspace: three tight clusters of records, one channel each."""
    import chromadb
    from chromadb.config import Settings

    root = tmp_path_factory.mktemp("clusters")
    client = chromadb.PersistentClient(path=str(root / "vectors"), settings=Settings(anonymized_telemetry=False))
    col = client.get_or_create_collection(
        NATIVE_COLLECTION, embedding_function=None,
        metadata={EMBEDDER_KEY: HashingEmbedder().name, "hnsw:space": "cosine"},
    )
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(len(CLUSTERS), DIM)) * 5
    for c, channel in enumerate(CLUSTERS):
        vectors = centres[c] + rng.normal(scale=0.3, size=(PER_CLUSTER, DIM))
        col.add(
            ids=[f"{channel}-{i:02d}" for i in range(PER_CLUSTER)],
            embeddings=vectors.astype(np.float32),
            documents=[f"{channel} fact {i}" for i in range(PER_CLUSTER)],
            metadatas=[{"channel": channel, "layer": "semantic"} for _ in range(PER_CLUSTER)],
        )
    del col, client
    return root


def cluster_of(memory_id: str) -> str:
    return memory_id.rsplit(":", 1)[-1].split("-")[0]


def test_each_cluster_lands_together_apart_from_the_others(clustered: Path) -> None:
    with open_store(clustered, read_only=True) as store:
        found = embedding_map(store)
    assert found.count == found.total == len(CLUSTERS) * PER_CLUSTER and not found.sampled
    assert found.dimension == DIM and found.method == "pca"
    xy = np.asarray(found.xy)
    names = np.array([cluster_of(i) for i in found.ids])
    centroids = {name: xy[names == name].mean(axis=0) for name in CLUSTERS}
    for point, name in zip(xy, names, strict=True):
        distances = {other: float(np.linalg.norm(point - c)) for other, c in centroids.items()}
        assert min(distances, key=distances.__getitem__) == name
    assert found.fields["channel"] == names.tolist()  # coloured by the channel each record carries
    assert set(found.fields["kind"]) == {"chroma"}
    assert sum(found.explained_variance) > 0.8  # three clusters: two axes hold nearly all of it
    point = found.to_dict()["points"][0]
    assert point["id"] == found.ids[0] and (point["x"], point["y"]) == tuple(xy[0].tolist())
    assert point["channel"] == names[0]


def test_past_the_limit_a_fixed_uniform_sample_says_so(clustered: Path) -> None:
    with open_store(clustered, read_only=True) as store:
        first = embedding_map(store, limit=50)
        again = embedding_map(store, limit=50)
    assert first.count == 50 and first.total == 120 and first.sampled
    assert len(set(first.ids)) == 50 and first.ids == again.ids
    assert len({cluster_of(i) for i in first.ids}) == len(CLUSTERS)


def test_progress_is_reported_and_a_cancel_stops_the_map(clustered: Path) -> None:
    seen: list[tuple[int, int]] = []
    with open_store(clustered, read_only=True) as store:
        embedding_map(store, progress=lambda done, total: seen.append((done, total)))
        with pytest.raises(MapCancelled):
            embedding_map(store, cancelled=lambda: True)
    assert seen[-1] == (120, 120)


def test_the_neighbours_of_a_point_are_its_cluster_mates(clustered: Path) -> None:
    with open_store(clustered, read_only=True) as store:
        found = neighbours(store, f"vec:{NATIVE_COLLECTION}:beta-07", 8)
    assert len(found) == 8
    assert all(cluster_of(i) == "beta" for i, _d in found)
    assert f"vec:{NATIVE_COLLECTION}:beta-07" not in [i for i, _d in found]
    assert [d for _i, d in found] == sorted(d for _i, d in found)


def test_the_ids_filter_keeps_exactly_those_chroma_records(clustered: Path) -> None:
    wanted = (f"vec:{NATIVE_COLLECTION}:alpha-03", f"vec:{NATIVE_COLLECTION}:gamma-39", "vec:memories:nope")
    with open_store(clustered, read_only=True) as store:
        query = MemoryQuery(ids=wanted)
        assert store.count(query) == 2
        assert sorted(m.id for m in store.page(query, 10)) == sorted(wanted[:2])
        assert store.counts(query)["channels"] == {"alpha": 1, "gamma": 1}


def test_on_the_demo_workspace_points_are_the_memories_the_table_lists(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        found = embedding_map(store)
        assert found.count > 10 and set(found.fields["kind"]) == {"sqlite"}
        assert all(i.startswith("m-") for i in found.ids)  # vector copies name their memory.db rows
        chosen = tuple(found.ids[:7])
        assert sorted(m.id for m in store.page(MemoryQuery(ids=chosen), 50)) == sorted(chosen)
        near = neighbours(store, found.ids[0], 5)
        assert len(near) == 5 and all(store.find(i) is not None for i, _d in near)


def test_the_ids_filter_on_memory_db_and_markdown(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        everything = store.page(MemoryQuery(statuses=()), 1000)
        rows = [m.id for m in everything if m.id.startswith("m-")][:3]
        blocks = [m.id for m in everything if m.id.startswith("md:")][:3]
        assert len(rows) == 3 and len(blocks) == 3
        query = MemoryQuery(statuses=(), ids=(*rows, *blocks, "m-not-there"))
        assert store.count(query) == 6
        assert sorted(m.id for m in store.page(query, 50)) == sorted(rows + blocks)
        assert store.count(MemoryQuery(ids=("m-not-there",))) == 0
        many = tuple(m.id for m in everything) + tuple(f"m-x{i}" for i in range(40_000))  # past SQLite's variables
        assert store.count(MemoryQuery(statuses=(), ids=many)) == len(everything)


def test_the_ids_filter_on_another_tools_sqlite_table(tmp_path: Path) -> None:
    pytest.importorskip("agents")
    db = tmp_path / "agent_memory.db"
    run_owner(
        "import asyncio\nfrom agents import SQLiteSession\n"
        "asyncio.run(SQLiteSession('trip-1', db).add_items(items))\nprint(json.dumps('ok'))",
        db=str(db), items=[{"role": "user", "content": f"message {i}"} for i in range(6)],
    )
    with open_store(db, read_only=True) as store:
        listed = [m.id for m in store.page(MemoryQuery(statuses=()), 50)]
        assert len(listed) == 6
        chosen = (listed[1], listed[4])
        query = MemoryQuery(statuses=(), ids=chosen)
        assert store.count(query) == 2
        assert sorted(m.id for m in store.page(query, 50)) == sorted(chosen)


def test_the_ids_filter_on_memory_db_tables_in_postgresql(postgres_server) -> None:  # noqa: F811
    from mnemoscope.storage.native.db.postgres_source import PostgresSource

    postgres_server.create_database("pg_map_ids")
    source = PostgresSource.open(postgres_server.url("pg_map_ids"), create=True)
    try:
        ids = [source.add_memory(f"fact {i}") for i in range(5)]
        query = MemoryQuery(ids=(ids[0], ids[3], "m-not-there"))
        assert source.count(query) == 2
        assert sorted(m.id for m in source.page(query, 10)) == sorted([ids[0], ids[3]])
    finally:
        source.close()
        postgres_server.drop_database("pg_map_ids")


def test_a_chroma_server_is_mapped_page_by_page(chroma_server: ChromaServer, clustered: Path,  # noqa: F811
                                                tmp_path: Path) -> None:
    chroma_server.reset()
    try:
        assert copy_to_server(clustered / "vectors", chroma_server, tmp_path) == [NATIVE_COLLECTION]
        with open_store(chroma_server.url, read_only=True) as store:
            found = embedding_map(store)
            assert found.count == found.total == len(CLUSTERS) * PER_CLUSTER
            assert sorted(found.ids) == sorted(f"vec:{NATIVE_COLLECTION}:{c}-{i:02d}"
                                               for c in CLUSTERS for i in range(PER_CLUSTER))
            assert found.fields["channel"] == [cluster_of(i) for i in found.ids]
            near = neighbours(store, found.ids[0], 5)
            assert [cluster_of(i) for i, _d in near] == [cluster_of(found.ids[0])] * 5
            chosen = tuple(found.ids[::30])
            assert sorted(m.id for m in store.page(MemoryQuery(ids=chosen), 50)) == sorted(chosen)
    finally:
        chroma_server.reset()


def test_the_ids_filter_on_agentx_postgresql(postgres_server, tmp_path: Path,  # noqa: F811
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers import agentx_db

    if not postgres_server.has_pgvector:
        pytest.skip("the test PostgreSQL has no pgvector, which AgentX's schema needs")
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "home"))
    db = agentx_db.build(postgres_server, "agentx_map_ids")
    try:
        with open_store(db.url, read_only=True) as store:
            listed = [m.id for m in store.page(MemoryQuery(statuses=()), 50) if m.id.startswith("agentx:")]
            chosen = (listed[0], listed[-1], "agentx:999999")
            assert len(listed) >= 2
            query = MemoryQuery(statuses=(), ids=chosen)
            assert store.count(query) == 2
            assert sorted(m.id for m in store.page(query, 50)) == sorted(chosen[:2])
    finally:
        postgres_server.drop_database("agentx_map_ids")


def test_points_are_coloured_by_their_memorys_worst_open_finding(demo_path: Path) -> None:
    """A memory holding a live-looking AWS key reads "secret" on the map, every clean one "none";
    once the finding is accepted into the baseline the point reads "none" too."""
    from mnemoscope.storage import Curator
    from mnemoscope.storage.findings import scan_store

    with open_store(demo_path) as store:
        target = next(i for i in embedding_map(store).ids if not i.startswith(("md:", "vec:")))
        Curator(store).edit(target, content="deploy key AKIAZ3MHQWERTY7XKLPU is in the vault")
        found = embedding_map(store)
        labels = dict(zip(found.ids, found.fields["finding"], strict=True))
        assert labels.pop(target) == "secret"
        assert set(labels.values()) == {"none"}
        Curator(store).accept_findings(scan_store(store, memory_ids=[target]).findings)
        accepted = embedding_map(store)
        assert accepted.fields["finding"][accepted.ids.index(target)] == "none"
