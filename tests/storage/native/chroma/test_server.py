"""A Chroma server as the vector store: the demo's vectors on a real `chroma run` read the same
as in the local directory, curate and undo, see other clients' writes, refuse conflicts, and
never show a token."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import helpers.chroma_server
import numpy as np
import pytest
from helpers.chroma_server import ChromaServer, TokenGate, _free_port, copy_to_server
from mnemoscope.storage import Curator, Layer, MemoryQuery, Order, Status
from mnemoscope.storage.credentials import Secret
from mnemoscope.storage.embedders.base import EMBEDDER_KEY, HashingEmbedder, recorded_embedders
from mnemoscope.storage.embedders.local import LocalEmbedder
from mnemoscope.storage.errors import ConflictError, SecretRefusedError, UnreadableStoreError
from mnemoscope.storage.journal.log import Journal
from mnemoscope.storage.model import Memory
from mnemoscope.storage.native.chroma.local import ChromaSource
from mnemoscope.storage.native.chroma.records import NATIVE_COLLECTION
from mnemoscope.storage.native.chroma.server import ChromaServerSource, parse_server_url
from mnemoscope.storage.source import same_record
from mnemoscope.storage.store import MemoryStore

DEMO_NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)  # tests/conftest.py's, which write_demo used

chroma_server = helpers.chroma_server.chroma_server  # the session fixture: one real `chroma run`
TOKEN = "tok-9f8e7d6c5b4a-secret"


@pytest.fixture
def on_server(chroma_server: ChromaServer, _demo_template: Path, tmp_path: Path) -> Iterator[tuple[ChromaSource, str]]:
    """The demo's vectors as a local ChromaSource, and the same records on the server (its URL)."""
    chroma_server.reset()
    assert copy_to_server(_demo_template / "vectors", chroma_server, tmp_path) == [NATIVE_COLLECTION]
    local = ChromaSource.open(_demo_template / "vectors", read_only=True)
    try:
        yield local, chroma_server.url
    finally:
        local.close()
        chroma_server.reset()


@pytest.fixture
def server_source(on_server: tuple[ChromaSource, str]) -> Iterator[ChromaServerSource]:
    source = ChromaServerSource.open(on_server[1])
    try:
        yield source
    finally:
        source.close()


def seen(memory: Memory) -> dict[str, Any]:
    """A memory as a person sees it, less where it lives (a folder or a URL) and its revision (a
    hash of the stored vector's bytes: Chroma's server hands back the vectors its cosine index
    normalised, a few units in the last place away from the local directory's)."""
    shown = memory.to_dict()
    shown.pop("source")
    shown.pop("revision")
    return shown


def seen_all(memories: list[Memory]) -> list[dict[str, Any]]:
    return [seen(m) for m in memories]


QUERIES = [
    MemoryQuery(),
    MemoryQuery(statuses=()),
    MemoryQuery(channels=("_global",)),
    MemoryQuery(layers=(Layer.EPISODIC, Layer.SEMANTIC), statuses=()),
    MemoryQuery(since=DEMO_NOW - timedelta(days=20), until=DEMO_NOW - timedelta(days=5)),
    MemoryQuery(contains="DECISION"),
    MemoryQuery(contains="api stable", order=Order.SALIENCE),
]


def test_the_server_reads_the_same_as_the_local_directory(
    on_server: tuple[ChromaSource, str], server_source: ChromaServerSource
) -> None:
    local, _url = on_server
    server = server_source
    assert server.collections() == local.collections() == [NATIVE_COLLECTION]
    assert server.record_count(NATIVE_COLLECTION) == local.record_count(NATIVE_COLLECTION) > 20
    for query in QUERIES:
        assert server.count(query) == local.count(query), query
    assert 0 < server.count(MemoryQuery(contains="DECISION")) < server.count(MemoryQuery())

    for order in Order:
        for descending in (True, False):
            query = MemoryQuery(statuses=(), order=order, descending=descending)
            whole = local.page(query, 1000)
            assert seen_all(server.page(query, 1000)) == seen_all(whole), (order, descending)
            assert seen_all(server.page(query, 7, 5)) == seen_all(whole[5:12]), (order, descending)
    assert seen_all(server.page(MemoryQuery(channels=("_global",)), 5, 2)) == seen_all(
        local.page(MemoryQuery(channels=("_global",)), 5, 2)
    )

    some = [m.id for m in local.page(MemoryQuery(statuses=()), 4)]
    for memory_id in some:
        got, expected = server.get(memory_id), local.get(memory_id)
        assert got is not None and expected is not None
        assert seen(got) == seen(expected) and got.revision != ""
        assert same_record(server.read_record(memory_id), local.read_record(memory_id))
    assert server.get("vec:memories:no-such-record") is None

    for column in ("channel", "layer", "status", "kind"):
        for query in (MemoryQuery(statuses=()), MemoryQuery(channels=("_global",))):
            assert server.counts_by(column, query) == local.counts_by(column, query), column
    assert server.bin_counts(MemoryQuery(), "%Y-%m", "channel") == local.bin_counts(MemoryQuery(), "%Y-%m", "channel")

    for words in ("decision", "API stable", "keep keep public", "no-such-word-anywhere"):
        for query in (MemoryQuery(), MemoryQuery(statuses=(), channels=("_global",))):
            assert seen_all(server.keyword_search(words, query, 10)) == seen_all(local.keyword_search(words, query, 10))
    assert server.keyword_search("decision", MemoryQuery(), 10)

    embedder = LocalEmbedder()
    for text in ("keep the public API stable", "weekly planning"):
        for query in (MemoryQuery(), MemoryQuery(statuses=()), MemoryQuery(channels=("_global",))):
            by_text = server.vector_search(None, text, query, 5)
            expected = local.vector_search(None, text, query, 5)
            # The same nearest memories at the same distances; records at one distance (a tie) may come
            # in either order, as float rounding in each engine has it.
            assert [d for _m, d in by_text] == pytest.approx([d for _m, d in expected], abs=1e-5)
            wider = {m.id: (d, seen(m)) for m, d in local.vector_search(None, text, query, 25)}
            for memory, distance in by_text:
                assert memory.id in wider and wider[memory.id][0] == pytest.approx(distance, abs=1e-5)
                assert wider[memory.id][1] == seen(memory)
            # a hit is the memory get() returns, revision included (what an edit from a search result checks)
            assert [m.revision for m, _d in by_text] == [server.get(m.id).revision for m, _d in by_text]  # type: ignore[union-attr]
            by_vector = server.vector_search(embedder.embed([text])[0], None, query, 5)
            assert [(m.id, d) for m, d in by_vector] == [(m.id, d) for m, d in by_text]


def test_the_server_hands_out_its_vectors_a_page_at_a_time_as_the_local_directory_does(
    on_server: tuple[ChromaSource, str], server_source: ChromaServerSource
) -> None:
    """vector_collections: the same collection, count, dimension and distance as the local
    directory's; every vector fetched a page at a time with Chroma's get (the last page short);
    the record index the server filters with."""
    local, _url = on_server
    [theirs], [ours] = server_source.vector_collections(), local.vector_collections()
    shown = ("name", "count", "dimension", "space", "kind", "mirror_kind")
    assert [getattr(theirs, f) for f in shown] == [getattr(ours, f) for f in shown]
    assert theirs.space == "cosine" and theirs.count > 20
    pages = list(theirs.batches(7))
    assert [len(ids) for ids, _v in pages[:-1]] == [7] * (len(pages) - 1) and 0 < len(pages[-1][0]) <= 7
    served = {i: v for ids, vectors in pages for i, v in zip(ids, vectors.tolist(), strict=True)}
    read = {i: v for ids, vectors in ours.batches(1000) for i, v in zip(ids, vectors.tolist(), strict=True)}
    assert sorted(served) == sorted(read) and len(served) == theirs.count
    # Chroma's server hands back the vectors its cosine index normalised: the same directions.
    for record_id, vector in served.items():
        a, b = np.asarray(vector), np.asarray(read[record_id])
        assert float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))) == pytest.approx(1.0, abs=1e-5)
    index = theirs.record_index()
    assert index is server_source.record_index(NATIVE_COLLECTION)
    assert sorted(index.ids_at(np.arange(len(index)))) == sorted(served)
    assert int(index.mirror.sum()) == int(ours.record_index().mirror.sum()) > 0


def test_server_source_describes_itself_and_its_embedder(server_source: ChromaServerSource) -> None:
    url = server_source.location
    assert server_source.describe() == {
        "format": "chroma", "label": "Chroma server", "url": url,
        "tenant": "default_tenant", "database": "default_database",
    }
    info = server_source.embedding_function_info(NATIVE_COLLECTION)
    assert info["recorded_embedding_function"] == LocalEmbedder().name and info["runs_offline_here"]
    assert info["dimensions"] == LocalEmbedder().dimensions
    [recorded] = recorded_embedders([server_source])
    assert (recorded.model, recorded.dimensions) == (LocalEmbedder().name, LocalEmbedder().dimensions)
    assert server_source.embedder_for(NATIVE_COLLECTION) is not None


def _store(source: ChromaServerSource, tmp_path: Path) -> MemoryStore:
    sidecar = tmp_path / "sidecar"
    sidecar.mkdir()
    return MemoryStore(sidecar, [source], Journal.sidecar(sidecar), location=source.location)  # type: ignore[list-item]


def test_edit_delete_restore_and_undo_through_the_curator(server_source: ChromaServerSource, tmp_path: Path) -> None:
    store = _store(server_source, tmp_path)
    other = ChromaServerSource.open(server_source.location)  # what another process sees
    try:
        curator = Curator(store)
        target = store.page(MemoryQuery(channels=("_global",)), 1)[0]
        before = other.read_record(target.id)
        active = store.count(MemoryQuery())

        curator.edit(target.id, content="Deploys go out on Thursdays", tags=["ops"])
        after = other.read_record(target.id)
        assert after is not None and after["document"] == "Deploys go out on Thursdays"
        assert after["embedding"] == pytest.approx(LocalEmbedder().embed(["Deploys go out on Thursdays"])[0], abs=1e-6)
        assert other.get(target.id).tags == ("ops",)  # type: ignore[union-attr]
        assert [m.id for m, _d in other.vector_search(None, "Deploys go out on Thursdays", MemoryQuery(), 1)] == [target.id]

        curator.undo()
        assert same_record(other.read_record(target.id), before)

        curator.delete(target.id)
        assert other.get(target.id).status is Status.DELETED  # type: ignore[union-attr]
        assert store.count(MemoryQuery()) == active - 1
        curator.undo()
        assert other.get(target.id).status is Status.ACTIVE  # type: ignore[union-attr]
        curator.delete(target.id)
        curator.restore(target.id)
        assert other.get(target.id).status is Status.ACTIVE  # type: ignore[union-attr]
        assert store.count(MemoryQuery()) == active
        assert [e.operation for e in store._journal.history()] == ["restore", "delete", "undo", "delete", "undo", "edit"]
    finally:
        other.close()
        store.close()


def test_another_clients_write_moves_the_change_token_and_is_seen(
    chroma_server: ChromaServer, server_source: ChromaServerSource
) -> None:
    source = server_source
    first = source.change_token()
    assert source.change_token() == first  # nothing written: the same token
    total = source.count(MemoryQuery())

    agent = chroma_server.client().get_collection(NATIVE_COLLECTION, embedding_function=None)
    agent.add(
        ids=["agent-1"], documents=["The agent learned a new fact"],
        embeddings=LocalEmbedder().embed(["The agent learned a new fact"]),
        metadatas=[{"channel": "_global", "status": "active", "created_at": "2026-11-01T12:00:00+00:00"}],
    )
    second = source.change_token()
    assert second != first
    assert source.count(MemoryQuery()) == total + 1
    assert [m.content for m in source.keyword_search("learned", MemoryQuery(), 5)] == ["The agent learned a new fact"]

    other = ChromaServerSource.open(source.location)  # another Mnemoscope process edits in place
    try:
        snap = other.read_record("vec:memories:agent-1")
        assert snap is not None
        other.write_record("vec:memories:agent-1", snap, {**snap, "document": "The agent corrected the fact"})
    finally:
        other.close()
    assert source.change_token() not in (first, second)
    assert source.get("vec:memories:agent-1").content == "The agent corrected the fact"  # type: ignore[union-attr]
    assert source.count(MemoryQuery(contains="corrected")) == 1


def test_a_record_changed_by_another_client_since_it_was_read_is_refused(
    chroma_server: ChromaServer, server_source: ChromaServerSource, tmp_path: Path
) -> None:
    store = _store(server_source, tmp_path)
    try:
        target = store.page(MemoryQuery(), 1)[0]
        read = store.get(target.id)
        snap = server_source.read_record(target.id)
        agent = chroma_server.client().get_collection(NATIVE_COLLECTION, embedding_function=None)
        text = "Written by the agent meanwhile"
        agent.update(ids=[target.id.split(":", 2)[2]], documents=[text], embeddings=LocalEmbedder().embed([text]))

        with pytest.raises(ConflictError, match="changed since it was read"):
            server_source.write_record(target.id, snap, {**snap, "document": "Mine"})  # type: ignore[dict-item]
        with pytest.raises(ConflictError, match="changed since it was read"):
            Curator(store).edit(target.id, content="Mine", expected_revision=read.revision)
        assert server_source.get(target.id).content == "Written by the agent meanwhile"  # type: ignore[union-attr]
        assert [e.operation for e in store._journal.history()] == []  # refused before its intent was written
    finally:
        store.close()


def test_an_unreachable_server_wrong_tenant_database_or_collection_is_one_clear_message(
    chroma_server: ChromaServer,
) -> None:
    port = _free_port()
    with pytest.raises(UnreadableStoreError) as refused:
        ChromaServerSource.open(f"http://127.0.0.1:{port}", token=Secret(TOKEN))
    message = str(refused.value)
    assert f"http://127.0.0.1:{port}" in message and "could not be reached" in message
    assert TOKEN not in message

    url = chroma_server.url
    for query, says in (
        ("tenant=nobody", "has no tenant 'nobody'"),
        ("database=nowhere", "has no database 'nowhere'"),
        ("collection=absent", "absent"),
    ):
        with pytest.raises(UnreadableStoreError) as refused:
            ChromaServerSource.open(f"{url}/?{query}&token={TOKEN}")
        assert says in str(refused.value) and url in str(refused.value)
        assert TOKEN not in str(refused.value)

    for bad in ("ftp://127.0.0.1:1", f"{url}/some/path", f"{url}/?tenant=", f"{url}/?colour=red", "http://:8000"):
        with pytest.raises(UnreadableStoreError):
            ChromaServerSource.open(bad)


def test_a_token_never_appears_in_what_the_source_says(
    chroma_server: ChromaServer, on_server: tuple[ChromaSource, str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    url = f"{chroma_server.url}/?collection={NATIVE_COLLECTION}&token={TOKEN}"
    address, inline = parse_server_url(url)
    assert inline is not None and inline.reveal() == TOKEN and TOKEN not in address.location
    source = ChromaServerSource.open(url, read_only=True)
    try:
        said = [
            repr(source.describe()), repr(source.problems()), source.location, str(source.root),
            repr(source.capabilities()), repr(source.embedding_function_info(NATIVE_COLLECTION)),
            repr(source.page(MemoryQuery(), 3)),
        ]
        with pytest.raises(Exception) as refused:
            source.write_record("vec:memories:x", None, None)
        said.append(str(refused.value))
        assert "read-only" in str(refused.value)
        assert all(TOKEN not in text for text in said)
        assert source.describe()["collection"] == NATIVE_COLLECTION
    finally:
        source.close()
    assert TOKEN not in caplog.text


def test_create_makes_the_native_collection_with_its_embedder(chroma_server: ChromaServer) -> None:
    chroma_server.reset()
    embedder = HashingEmbedder(64)
    source = ChromaServerSource.create(f"{chroma_server.url}/?collection=team-memories", embedder, token=Secret(TOKEN))
    try:
        assert source.collections() == ["team-memories"]
        assert chroma_server.client().get_collection("team-memories").metadata[EMBEDDER_KEY] == embedder.name
        texts = ["Ship on Fridays", "Tea in the afternoon"]
        source.add_records(
            "team-memories", ["a", "b"], texts,
            [{"channel": "_global", "status": "active"}, {"channel": "ops", "status": "active"}], embedder.embed(texts),
        )
        assert source.count(MemoryQuery()) == 2
        hits = source.vector_search(None, "Ship on Fridays", MemoryQuery(), 1)
        assert [m.content for m, _d in hits] == ["Ship on Fridays"] and hits[0][1] == pytest.approx(0.0, abs=1e-5)
        assert source.counts_by("channel", MemoryQuery()) == {"_global": 1, "ops": 1}
    finally:
        source.close()
        chroma_server.reset()


def test_a_gateway_asking_for_a_token_takes_the_right_one_and_refuses_others(
    chroma_server: ChromaServer, on_server: tuple[ChromaSource, str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    local, _url = on_server
    wrong = "tok-wrong-0123456789"
    with TokenGate(chroma_server.url, TOKEN) as gate:
        source = ChromaServerSource.open(gate.url, token=Secret(TOKEN))
        try:
            assert source.count(MemoryQuery(statuses=())) == local.count(MemoryQuery(statuses=()))
            assert [m.id for m, _d in source.vector_search(None, "weekly planning", MemoryQuery(), 3)]
            gate.token = "tok-rotated-by-the-admin"  # the token is revoked while the store is open
            with pytest.raises(SecretRefusedError) as revoked:
                source.page(MemoryQuery(), 5)
            assert gate.url in str(revoked.value) and TOKEN not in str(revoked.value)
            gate.token = TOKEN
        finally:
            source.close()
        with pytest.raises(SecretRefusedError) as refused:
            ChromaServerSource.open(gate.url, token=Secret(wrong))
        assert "refused the token" in str(refused.value) and gate.url in str(refused.value)
        with pytest.raises(SecretRefusedError, match="asks for a token and none was given"):
            ChromaServerSource.open(gate.url)
        assert gate.refused >= 3
    for text in (str(refused.value), caplog.text):
        assert TOKEN not in text and wrong not in text
