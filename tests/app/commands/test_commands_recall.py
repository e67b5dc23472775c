"""mnemoscope recall: the list the agent would be given, as the storage layer computes it, with
each hit's formula; --explain ID; a system that needs who asks says so."""

from __future__ import annotations

from pathlib import Path

from formats.test_synthorg import _company, company  # noqa: F401  (fixtures)
from helpers.cli_runs import run, run_json
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.recall import recall

QUESTION = "which payment provider do we use"


def test_recall_lists_the_same_hits_as_the_storage_layer_with_why(demo_path: Path, capsys) -> None:
    with open_store(demo_path, read_only=True) as store:
        expected = recall(store, QUESTION, channel="webshop")
    data = run_json(capsys, "recall", demo_path, QUESTION, "--channel", "webshop")
    assert [h["id"] for h in data["hits"]] == [h.memory.id for h in expected.hits]
    assert [h["explanation"] for h in data["hits"]] == [h.explanation() for h in expected.hits]
    code, out, _err = run(capsys, "recall", demo_path, QUESTION, "--channel", "webshop", "--k", "3")
    assert code == 0
    assert "system: Mnemoscope (AgentX's retrieval rules) (channel webshop)" in out
    assert f"  1. {expected.hits[0].explanation()}" in out
    assert "near misses (just under the cut):" in out


def test_explain_says_why_one_memory_ranks_where_it_does(demo_path: Path, capsys) -> None:
    with open_store(demo_path, read_only=True) as store:
        second = recall(store, QUESTION, channel="webshop").hits[1]
    code, out, _err = run(capsys, "recall", demo_path, QUESTION, "--channel", "webshop", "--explain", second.memory.id)
    assert code == 0
    assert out.splitlines()[0].endswith("recalled at rank 2 of 10")
    assert f"score: {second.explanation()}" in out
    code, _out, err = run(capsys, "recall", demo_path, QUESTION, "--explain", "m-000000000000")
    assert code == 1 and "No memory m-000000000000" in err


def test_a_system_that_needs_the_agent_says_so(company, capsys) -> None:
    project, _ids = company
    code, _out, err = run(capsys, "recall", project / "data" / "memory", "what did the team choose")
    assert code == 2 and "give --as AGENT" in err
