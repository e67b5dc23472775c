"""Keyword hits read from a Chroma directory's chroma.sqlite3: the records holding the most of a
query's words first, and how many records hold each word, as casefolded containment says."""

from __future__ import annotations

import itertools
from pathlib import Path

import chromadb
import pytest
from chromadb.config import Settings
from mnemoscope.storage.native.chroma import files as chroma_files
from mnemoscope.storage.native.chroma.files import ChromaFiles, _hit_ranges

TEXTS = [
    "Topic 42 here",
    "ΣΊΣΥΦΟΣ topic",
    "straße 420",
    "TOPİC 4%2",
    "the_42 topic",
    "ﬁle topic42",
    "nothing at all",
    "Kelvin \u212a",
    "100% sure",
    "back\\slash 42",
    "42 42 topic topic",
    "TOPIC",
]
QUERIES = [
    ["topic", "42"],
    ["42", "42"],
    ["TOPIC", "here", "42"],
    ["strasse"],
    ["file"],
    ["k"],
    ["4%2"],
    ["the_42"],
    ["%"],
    ["\\"],
    ["σίσυφος"],
    ["nomatch"],
    ["topic", "nomatch"],
]
TEXT_KEYS = ("text", "data")
ASCII_TEXTS = [t for t in TEXTS if t.isascii()]  # where a LIKE miss is final (files._all_ascii)


def _client(path: Path):
    return chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))


def _add(client, name: str, prefix: str, with_keys: bool, texts: list[str] = TEXTS) -> dict[str, list[str]]:
    """A collection of texts (and, with_keys, texts under metadata keys too); each record's texts by id."""
    col = client.get_or_create_collection(name, embedding_function=None)
    ids = [f"{prefix}{i:02d}" for i in range(len(texts) * 2)]
    documents = [None if i % 7 == 6 else texts[i % len(texts)] for i in range(len(ids))]
    metadatas = [
        {
            "n": i,
            **({"text": texts[(i * 5) % len(texts)]} if with_keys and i % 2 else {}),
            **({"data": "more Topic"} if with_keys and i % 3 == 0 else {}),
        }
        for i in range(len(ids))
    ]
    col.add(
        ids=ids, embeddings=[[float(i), 1.0, 0.5] for i in range(len(ids))], documents=documents, metadatas=metadatas
    )
    col.delete(ids=[ids[1]])
    held = {}
    for i, record_id in enumerate(ids):
        if i == 1:
            continue
        meta = metadatas[i] if with_keys else {}
        held[record_id] = [t for t in (documents[i], meta.get("text"), meta.get("data")) if t is not None]
    return held


def _expected(texts: dict[str, list[str]], words: list[str]) -> tuple[list[tuple[str, int]], list[int]]:
    def holds(record_id: str, word: str) -> bool:
        return any(word.casefold() in t.casefold() for t in texts[record_id])

    hits = [(i, sum(holds(i, w) for w in words)) for i in texts]
    ranked = sorted(((i, n) for i, n in hits if n), key=lambda h: (-h[1], h[0]))
    return ranked, [sum(holds(i, w) for i in texts) for w in words]


@pytest.fixture(scope="module")
def directories(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str, dict[str, list[str]]]]:
    """name -> (Chroma directory, collection, its records' texts): a directory of one collection,
    one shared by two, a collection whose records hold text under metadata keys too, and the
    first two of ASCII text only."""
    root = tmp_path_factory.mktemp("chroma-keywords")
    out = {}
    client = _client(root / "sole")
    out["sole"] = (root / "sole", "notes", _add(client, "notes", "n", with_keys=False))
    shared = _client(root / "shared")
    _add(shared, "before", "a", with_keys=False)
    out["shared"] = (root / "shared", "notes", _add(shared, "notes", "n", with_keys=False))
    _add(shared, "after", "z", with_keys=False)
    keyed = _client(root / "keyed")
    out["keyed"] = (root / "keyed", "notes", _add(keyed, "notes", "n", with_keys=True))
    for name, with_keys in (("ascii", False), ("ascii keyed", True)):
        ascii_client = _client(root / name)
        out[name] = (root / name, "notes", _add(ascii_client, "notes", "n", with_keys=with_keys, texts=ASCII_TEXTS))
        del ascii_client
    del client, shared, keyed
    return out


@pytest.mark.parametrize("first_read", [1, 3, 1000])
@pytest.mark.parametrize("name", ["sole", "shared", "keyed", "ascii", "ascii keyed"])
def test_hits_and_frequencies_are_casefolded_containment(directories, name, first_read, monkeypatch) -> None:
    path, collection, texts = directories[name]
    monkeypatch.setattr(chroma_files, "_FIRST_READ", first_read)  # how many records the first read covers
    files = ChromaFiles(path)
    col = next(c for c in files.collections() if c.name == collection)
    assert not files.queued_states(col)  # every record is in the metadata segment: the texts above are its own
    for words in QUERIES:
        ranked, frequencies = _expected(texts, words)
        counted: list[int] = []
        assert list(files.keyword_hits(col, words, TEXT_KEYS, counted)) == ranked, words
        assert counted == frequencies, words
        assert files.document_frequencies(col, words, TEXT_KEYS) == frequencies, words


@pytest.mark.parametrize("name", ["sole", "shared", "keyed", "ascii"])
def test_a_reader_that_stops_early_has_the_best_records(directories, name, monkeypatch) -> None:
    path, collection, texts = directories[name]
    monkeypatch.setattr(chroma_files, "_FIRST_READ", 2)
    files = ChromaFiles(path)
    col = next(c for c in files.collections() if c.name == collection)
    ranked, _ = _expected(texts, ["topic", "42"])
    assert ranked[0][1] == 2 and ranked[-1][1] == 1  # records with both words and with one
    assert list(itertools.islice(files.keyword_hits(col, ["topic", "42"], TEXT_KEYS), 3)) == ranked[:3]


def test_a_text_other_than_ascii_added_later_is_matched_as_casefold_says(tmp_path: Path) -> None:
    """Where every text is ASCII a LIKE miss is final; once a text is not, its miss is asked again."""
    client = _client(tmp_path)
    texts = _add(client, "notes", "n", with_keys=False, texts=ASCII_TEXTS)
    files = ChromaFiles(tmp_path)
    col = next(c for c in files.collections() if c.name == "notes")
    assert files._all_ascii(["chroma:document"]) and list(files.keyword_hits(col, ["file"], ())) == []
    client.get_collection("notes", embedding_function=None).add(ids=["late"], embeddings=[[0.0, 1.0, 0.5]],
                                                                 documents=["the ﬁle"])
    texts["late"] = ["the ﬁle"]
    assert not files._all_ascii(["chroma:document"])
    assert list(files.keyword_hits(col, ["file", "the"], ())) == _expected(texts, ["file", "the"])[0]
    del client


def test_only_the_documents_when_no_key_is_asked_for(directories) -> None:
    path, collection, texts = directories["keyed"]
    files = ChromaFiles(path)
    col = next(c for c in files.collections() if c.name == collection)
    documents = {i: t[:1] for i, t in texts.items() if int(i[1:]) % 7 != 6}
    ranked, frequencies = _expected(documents, ["more", "topic"])
    assert ranked and frequencies[0] == 0  # "more" is only under "data"
    assert list(files.keyword_hits(col, ["more", "topic"], ())) == ranked
    assert files.document_frequencies(col, ["more", "topic"], ()) == frequencies


def test_hit_ranges_read_the_most_hits_first_then_the_rest() -> None:
    assert list(_hit_ranges([0, 50, 0, 2], 1)) == [(3, 3), (1, 1)]
    assert list(_hit_ranges([0, 50, 0, 2], 10)) == [(1, 3)]
    assert list(_hit_ranges([0, 5, 4, 2, 1], 3)) == [(3, 4), (1, 2)]
    assert list(_hit_ranges([0, 5, 4, 2, 1], 100)) == [(1, 4)]
    assert list(_hit_ranges([0, 0, 0], 1)) == []
    assert list(_hit_ranges([0], 1)) == []


@pytest.mark.parametrize("name", ["sole", "ascii"])
def test_a_word_past_sqlites_longest_like_pattern_and_thousands_of_words_are_counted(directories, name) -> None:
    """A 100,000-character word is past SQLite's LIKE limit (50,000 bytes: "pattern too complex"),
    and 5,000 words past the columns one statement may hold: the first is looked for by containment,
    the second counted a hundred words a pass."""
    path, collection, texts = directories[name]
    files = ChromaFiles(path)
    col = next(c for c in files.collections() if c.name == collection)
    long_word = "x" * 100_000
    assert list(files.keyword_hits(col, [long_word, "topic"], TEXT_KEYS)) == _expected(texts, [long_word, "topic"])[0]
    words = [f"w{i}" for i in range(chroma_files.MAX_WORDS * 2 + 7)] + ["topic"]
    assert files.document_frequencies(col, words, TEXT_KEYS) == _expected(texts, words)[1]
