"""Search quality as a measured contract (issue 28): on the demo, queries about nothing it holds
match nothing, and hybrid search with the default (local, semantic) embedder reaches precision@5
0.8 and no-answer 0.9; a second store, one mem0's own library wrote, is measured the same way
with labels that never chose a floor. search_quality.py says how each figure is counted; the
README's quality table is these tests' report (MNEMOSCOPE_QUALITY_REPORT)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from helpers.owners import require, run_owner
from mnemoscope.storage import open_store
from mnemoscope.storage.embedders.local import LOCAL_MODEL, LocalEmbedder
from mnemoscope.storage.views.search import search
from quality.search_quality import Quality, labelled, quality, record

MODES = ("keyword", "vector", "hybrid")


def test_the_demo_is_searched_by_meaning_with_no_confident_noise(demo_path: Path) -> None:
    queries = labelled("demo_queries.json")["queries"]
    with open_store(demo_path, read_only=True) as store:
        assert store.settings.embedder == LOCAL_MODEL  # the default install's semantic model wrote its vectors
        rows = [quality(store, queries, mode, "demo") for mode in MODES]
    record(rows)
    hybrid = rows[2]
    assert hybrid.precision_at_5 >= 0.8 and hybrid.no_answer >= 0.9, hybrid
    assert all(row.no_answer >= 0.9 for row in rows), rows
    assert hybrid.recall_at_10 > max(rows[0].recall_at_10, rows[1].recall_at_10)  # the two lists together


def _words(text: str) -> set[str]:
    return {w.casefold() for w in re.findall(r"\w+", text)}


@pytest.mark.parametrize(("query", "answer"), [
    ("photos of items", "webshop product images are served from an S3 bucket via CloudFront."),
    ("time zone", "Dana works in UTC+1 and usually starts around 08:30."),
    ("feline companion", "Dana's cat is called Whiskerino."),
])
def test_a_question_sharing_no_word_with_its_answer_finds_it(demo_path: Path, query: str, answer: str) -> None:
    assert not _words(query) & _words(answer)
    with open_store(demo_path, read_only=True) as store:
        result = search(store, query, k=10)
    assert answer in [h.memory.content for h in result.hits[:3]]
    assert next(h for h in result.hits if h.memory.content == answer).match


MEM0_WRITE = """
from mem0 import Memory
from mnemoscope.storage.embedders.local import LocalEmbedder
_model = LocalEmbedder()
class Embedder:
    def embed(self, text, memory_action=None):
        return _model.embed([text])[0]
m = Memory.from_config({"vector_store": {"provider": "qdrant", "config": {"collection_name": "mem0",
                        "path": root + "/qdrant", "embedding_model_dims": 256}},
                        "history_db_path": root + "/history.db"})
m.embedding_model = Embedder()
for text in memories:
    m.add(text, user_id="sam", infer=False)
m.vector_store.client.close()
print(json.dumps("written"))
"""


@pytest.fixture(scope="module")
def mem0_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require("mem0")
    root = tmp_path_factory.mktemp("quality") / "mem0"
    root.mkdir()
    run_owner(MEM0_WRITE, root=str(root), memories=labelled("mem0_queries.json")["memories"],
              mem0_dir=str(root / ".mem0"))
    return root


def test_a_store_mem0_wrote_is_measured_the_same_way(mem0_store: Path, tmp_path: Path) -> None:
    copy = tmp_path / "mem0"
    shutil.copytree(mem0_store, copy)
    queries = labelled("mem0_queries.json")["queries"]
    with open_store(copy) as store:
        store.use_embedder(LocalEmbedder())  # as `mnemoscope embedder PATH local` does: mem0 records no model
        rows: list[Quality] = [quality(store, queries, mode, "mem0 (Qdrant), written by mem0") for mode in MODES]
    record(rows)
    hybrid = rows[2]
    # Out of sample (no floor or weight was chosen on it): held to what it gave when it was written
    # (0.92, 0.65 and 0.67: "tax return deadline" finds the council tax band, "Jordan's shoe size"
    # the memory naming Jordan, as matches).
    assert hybrid.precision_at_5 >= 0.9 and hybrid.recall_at_10 >= 0.6 and hybrid.no_answer >= 0.6, hybrid
