"""What a recall result says of one memory (--explain) and how it is written out, on real recalls:
the demo store (AgentX's rules) and a Claude memory directory (no documented rules: plain search)."""

from __future__ import annotations

from pathlib import Path

from formats.test_claude_memory import build_claude_memories
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.recall import recall, system_of, who_asks
from mnemoscope.storage.recall.result import Scored, Term


def test_explain_says_where_each_memory_stands(demo_path: Path) -> None:
    with open_store(demo_path, read_only=True) as store:
        result = recall(store, "which crate do the error types use", channel="webshop", k=3)
        unrelated = store.page(limit=200)[-1]
    hit, near = result.hits[1], result.near_misses[0]
    assert result.explain(hit.memory.id)["status"] == "recalled at rank 2 of 3"
    assert result.explain(hit.memory.id)["explanation"] == hit.explanation()
    assert result.explain(near.memory.id)["status"].startswith("near miss at rank 4: under the cut")
    dropped = result.dropped[0]
    assert result.explain(dropped.memory.id)["status"] == f"dropped: {dropped.reason}"
    if unrelated.id not in {h.memory.id for h in result.hits + result.near_misses} | {d.memory.id for d in result.dropped}:
        assert result.explain(unrelated.id)["status"].startswith("not found for this question")
    written = result.to_dict()
    assert written["hits"][0]["explanation"] == result.hits[0].explanation()
    assert written["system"] == "Mnemoscope (AgentX's retrieval rules)" and written["documented"] is True
    assert set(written["hits"][0]["weights"]) == {"cosine", "recency"}


def test_a_store_whose_owner_documents_no_rules_gets_plain_search_labelled(tmp_path: Path) -> None:
    with open_store(build_claude_memories(tmp_path), read_only=True) as store:
        result = recall(store, "tea preferences")
        assert system_of(store) is None and who_asks(store) == ("", [])
    assert result.documented is False and result.system.endswith("(plain search)")
    assert "not what the agent would be given" in result.notices[0]
    assert any("tea" in h.memory.content for h in result.hits)


def test_a_score_is_written_as_its_terms_summed_then_multiplied(demo_path: Path) -> None:
    with open_store(demo_path, read_only=True) as store:
        memory = store.page(limit=1)[0]
    scored = Scored(memory, 0.3, (Term("cosine", 0.5, 0.4), Term("recency", 1.0, 0.1), Term("boost", 1.0)))
    assert scored.explanation() == "(cosine 0.50 x 0.4 + recency 1.00 x 0.1) x boost 1.00 = 0.300"


def test_an_option_the_system_does_not_scope_by_is_said_unused(demo_path: Path) -> None:
    with open_store(demo_path, read_only=True) as store:
        result = recall(store, "which payment provider do we use", channel="webshop", as_agent="dana", session="s1")
    assert result.scope == {"channel": "webshop"}
    assert "Mnemoscope (AgentX's retrieval rules) does not scope retrieval by --as: 'dana' was not used." in result.notices
    assert any("--session: 's1' was not used" in n for n in result.notices)


def test_explain_names_the_list_a_memory_is_given_in_whatever_is_asked(demo_path: Path) -> None:
    with open_store(demo_path, read_only=True) as store:
        result = recall(store, "which payment provider do we use")
        listed = {h.memory.id for h in result.hits + result.near_misses} | {d.memory.id for d in result.dropped}
        memory = next(m for m in store.page(limit=300) if m.id not in listed)
    result.extra["active goals"] = [Scored(memory, 0.0, (), "every active goal is given", found_by="goal")]
    explained = result.explain(memory.id)
    assert explained["status"] == "listed under active goals"
    assert explained["explanation"] == "every active goal is given"
