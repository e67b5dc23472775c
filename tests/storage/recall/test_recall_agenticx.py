"""AgenticX's automatic recall (seed 000) as agenticx 0.6.5's WorkspaceMemoryStore.search_sync
ranks it, on an AgenticX home (formats/test_agenticx.py's): a search of 30 of which the first 5
are kept, the FTS list (every word) first at 1 - 0.01 x position, the semantic list by the cosine
of its 64-slot token hash, merged by the best max(score, 1 - 0.02 x position); 200 characters of
each injected, 500 in all; text FTS5 cannot parse injects nothing."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import pytest
from formats.test_agenticx import build_agenticx_home
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.recall import recall
from mnemoscope.storage.recall.agenticx import search_terms

NOTES = [
    "The user prefers aisle seats on short flights.",
    "Porto trip: the user wants a hotel near the river.",
    "Lisbon office moved to a new building in March.",
    "The user drinks green tea in the afternoon.",
    "Dinner reservations in Porto go through the concierge.",
    "Deploys happen on Tuesdays.",
    "The user's passport expires in 2031 and must be renewed before the next long trip abroad, "
    "which means booking an appointment at the consulate at least three months ahead. " * 3,
    "Consulate appointment for the passport: bring two photos, the old passport and proof of address, "
    "and arrive early because the queue for passport renewals is long on Monday mornings. " * 2,
    "Trip abroad checklist: passport, visa letter, travel insurance, adapters, and a printed copy of "
    "the consulate appointment confirmation in case the phone battery dies on the way. " * 2,
]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = build_agenticx_home(tmp_path)
    memory = home / "workspace" / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8") + "".join(f"\n- {n}" for n in NOTES) + "\n", encoding="utf-8")
    return home


def hashed(text: str) -> list[float]:
    """agenticx 0.6.5's _embedding_vector, as its source reads: 64 slots, one signed count per token."""
    vec = [0.0] * 64
    for token in (t.lower() for t in text.split()):
        digest = hashlib.sha256(token.encode()).digest()
        vec[digest[0] % 64] += 1.0 if digest[1] % 2 == 0 else -1.0
    norm = math.sqrt(sum(v * v for v in vec))
    return [v / norm for v in vec] if norm else vec


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_an_entry_holding_every_word_leads_and_the_rest_follow_by_the_token_hash_cosine(home: Path) -> None:
    question = "hotel in Porto"
    with open_store(home, read_only=True) as store:
        result = recall(store, question)
        entries = [m for m in store.page(limit=1000) if m.source.kind.value == "markdown"]
    assert len(result.hits) == 5 and result.system == "AgenticX"
    first = result.hits[0]
    assert first.memory.content == "Booked Hotel Infante in Porto." and first.score == pytest.approx(1.0)
    assert first.found_by == "fts"
    q = hashed(question)
    semantic = sorted(((m, cosine(q, hashed(m.content))) for m in entries), key=lambda p: (-p[1], p[0].id))[:60]
    expected = {m.id: max(score, 1.0 - 0.02 * position) for position, (m, score) in enumerate(semantic)}
    for hit in result.hits[1:]:
        assert hit.score == pytest.approx(expected[hit.memory.id], abs=1e-9)
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)


def test_two_hundred_characters_of_each_hit_are_injected_until_five_hundred(home: Path) -> None:
    with open_store(home, read_only=True) as store:
        result = recall(store, "passport appointment consulate trip abroad")
    [injected] = result.extra.values()
    given = [i for i in injected if i.found_by == "injected"]
    assert sum(int(i.score) for i in given) <= 500
    assert all(int(i.score) == min(200, len(i.memory.content.strip())) for i in given)
    long_note = next(i for i in given if "passport" in i.memory.content)
    assert int(long_note.score) == 200 and len(long_note.memory.content) > 200
    assert [i.found_by for i in injected][-1] == "cut"  # the third long note would pass 500: the section stops
    assert injected[-1].explanation() == "not injected: 400 + 200 characters would pass 500"


def test_text_fts5_cannot_parse_fails_the_recall_and_nothing_is_injected(home: Path) -> None:
    with open_store(home, read_only=True) as store:
        result = recall(store, "where is the hotel in Porto?")
    assert result.hits == [] and result.extra == {}
    assert any("refuses this text" in n and "nothing is injected" in n for n in result.notices)


def test_search_terms_are_each_once_longest_first_as_agenticx_extracts_them() -> None:
    assert search_terms("猫猫") == ["猫猫", "猫"]
    assert search_terms("部署 服务器 部署") == ["服务器", "部署"]
    assert search_terms("a Porto porto hotel") == ["porto", "hotel"]


def test_a_question_longer_than_500_characters_is_cut_as_agenticx_cuts_it(home: Path) -> None:
    with open_store(home, read_only=True) as store:
        result = recall(store, "Porto " * 200)
    assert any("first 500 characters" in n for n in result.notices)
