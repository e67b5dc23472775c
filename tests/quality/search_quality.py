"""Retrieval quality of search() against labelled queries: what each mode finds, scored as a
person would judge it.

A memory answers a query when its content holds one of the query's answer snippets (any case);
queries with no answers are about nothing the store holds. Only matches count as found (hits at
or above the floor; weak matches are shown under them and count for nothing). Per mode:

- precision@5: of the first five matches (fewer when fewer match), the share that answer, averaged
  over the answerable queries that return any match;
- answered: the share of answerable queries that return at least one match;
- recall@10: of the memories that answer (ten at most), the share among the first ten matches;
- nDCG@10: the first ten matches' discounted gain (1 for an answer) over the best possible;
- no-answer: the share of unanswerable queries that return no match at all.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

from mnemoscope.storage import MemoryQuery
from mnemoscope.storage.views.search import search

HERE = Path(__file__).parent
REPORT_ENV = "MNEMOSCOPE_QUALITY_REPORT"


def labelled(name: str) -> dict:
    return json.loads((HERE / name).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Quality:
    store: str
    mode: str
    precision_at_5: float
    answered: float
    recall_at_10: float
    ndcg_at_10: float
    no_answer: float
    queries: int
    unanswerable: int

    def row(self) -> str:
        return (f"| {self.store} | {self.mode} | {self.precision_at_5:.2f} | {self.answered:.2f} | "
                f"{self.recall_at_10:.2f} | {self.ndcg_at_10:.2f} | {self.no_answer:.2f} | "
                f"{self.queries} ({self.unanswerable} with no answer) |")


HEADER = ("| store | mode | precision@5 | answered | recall@10 | nDCG@10 | no-answer | queries |\n"
          "|---|---|---|---|---|---|---|---|")


def answers(content: str, snippets: list[str]) -> bool:
    return any(s.casefold() in content.casefold() for s in snippets)


def quality(store, queries: list[dict], mode: str, name: str) -> Quality:
    everything = [m.content for m in store.page(MemoryQuery(), 100_000)]
    precision, answered, recall, ndcg, no_answer = [], [], [], [], []
    for q in queries:
        matches = [h.memory.content for h in search(store, q["query"], mode=mode, k=10).hits if h.match]
        if not q["answers"]:
            no_answer.append(not matches)
            continue
        relevant = sum(answers(c, q["answers"]) for c in everything)
        gains = [answers(c, q["answers"]) for c in matches[:10]]
        answered.append(bool(matches))
        if matches:
            precision.append(sum(gains[:5]) / len(gains[:5]))
        ideal = min(10, relevant)
        recall.append(sum(gains) / ideal)
        dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
        ndcg.append(dcg / sum(1 / math.log2(i + 2) for i in range(ideal)))
    mean = lambda values: sum(values) / len(values) if values else 0.0  # noqa: E731
    return Quality(name, mode, mean(precision), mean(answered), mean(recall), mean(ndcg), mean(no_answer),
                   len(queries), len(no_answer))


def record(rows: list[Quality]) -> None:
    """Print the rows as a table, and add them to the report file MNEMOSCOPE_QUALITY_REPORT names."""
    table = "\n".join([HEADER, *(r.row() for r in rows)])
    print("\n" + table)
    target = os.environ.get(REPORT_ENV)
    if target:
        path = Path(target)
        kept = path.read_text(encoding="utf-8").splitlines()[2:] if path.exists() else []
        names = {(r.store, r.mode) for r in rows}
        kept = [line for line in kept if tuple(c.strip() for c in line.split("|")[1:3]) not in names]
        path.write_text("\n".join([HEADER, *kept, *(r.row() for r in rows)]) + "\n", encoding="utf-8")
