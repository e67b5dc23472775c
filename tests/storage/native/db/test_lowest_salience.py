"""lowest_salience.py on real memory.db files: the memories of least effective salience found from a
few candidates are exactly those the whole-store ORDER BY gives, and the values the Salience tab
shows of them are the product's decay function's."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from mnemoscope.storage import Status, open_store
from mnemoscope.storage.native.db import lowest_salience
from mnemoscope.storage.native.db.sqlite_source import SqliteSource
from mnemoscope.storage.salience import SalienceModel
from mnemoscope.storage.views.salience import salience_overview
from sqlalchemy import select

AT = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


def _fill(root: Path, n: int, seed: int, shape: str) -> None:
    rng = random.Random(seed)
    source = SqliteSource.open(root / "memory.db", create=True)

    def row(i: int) -> dict:
        if shape == "recent":  # most memories used lately, a few old and weak
            idle = rng.expovariate(1 / 3) if rng.random() < 0.97 else rng.uniform(30, 400)
        elif shape == "ties":  # few distinct values: many equal effective saliences
            idle = rng.choice((0.0, 10.0, 40.0))
        else:
            idle = rng.uniform(0, 700)
        salience = rng.choice((0.0, 0.1, 0.5, 1.0)) if shape == "ties" else round(rng.random(), 3)
        return source.memory_row(
            f"fact {i}", memory_id=f"m-{rng.randrange(10**9):09d}-{i}",
            last_accessed=AT - timedelta(days=idle), salience=salience,
            access_count=rng.choice((0, 0, 1, 3, 40)) if shape != "ties" else 0,
            status=Status.DELETED if rng.random() < 0.05 else Status.ACTIVE,
        )

    source.insert_memory_rows([row(i) for i in range(n)])
    source.close()


def _both(root: Path, model: SalienceModel, limit: int, first_round: int) -> tuple[list[str], list[str], int]:
    with open_store(root, read_only=True) as store:
        db = store._workspace.db
        effective = db.effective_salience(model.decay_rate, model.access_boost, AT)
        with db.engine.connect() as conn:
            rows, candidates = lowest_salience.lowest_rows(conn, effective, model.decay_rate, model.access_boost, AT,
                                                           limit, first_round)
            whole = conn.execute(
                select(db_memories := lowest_salience.schema.memories)
                .where(db_memories.c.status == Status.ACTIVE.value)
                .order_by(effective.asc(), db_memories.c.id).limit(limit)
            )
            return [r.id for r in rows], [r.id for r in whole], candidates


@pytest.mark.parametrize("shape", ["recent", "uniform", "ties"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_candidates_give_the_whole_store_order(tmp_path: Path, shape: str, seed: int) -> None:
    _fill(tmp_path, 3_000, seed, shape)
    for model in (SalienceModel(), SalienceModel(decay_rate=0.8, access_boost=0.5), SalienceModel(decay_rate=1.0)):
        for limit in (1, 20, 150):
            found, whole, _candidates = _both(tmp_path, model, limit, first_round=50)
            assert found == whole, (shape, seed, model, limit)


def test_a_store_of_old_weak_memories_is_answered_from_candidates(tmp_path: Path) -> None:
    _fill(tmp_path, 6_000, 7, "recent")
    found, whole, candidates = _both(tmp_path, SalienceModel(), 20, first_round=100)
    assert found == whole and 0 < candidates < 6_000  # proved from a few, not the whole store ordered


def test_the_whole_store_is_ordered_when_the_candidates_prove_nothing(tmp_path: Path, monkeypatch) -> None:
    _fill(tmp_path, 2_000, 5, "uniform")
    monkeypatch.setattr(lowest_salience, "LAST_ROUND", 10)  # no round allowed: the old way
    found, whole, candidates = _both(tmp_path, SalienceModel(), 20, first_round=50)
    assert found == whole and candidates == 0


def test_the_at_risk_list_shows_the_decay_functions_values(tmp_path: Path) -> None:
    _fill(tmp_path, 3_000, 11, "recent")
    with open_store(tmp_path, read_only=True) as store:
        model = store.settings.salience
        overview = salience_overview(store, AT)
        listed = overview["at_risk"]
        assert len(listed) == 20
        for item in listed:
            memory = store.get(item["id"])
            assert item["effective"] == round(model.effective(memory, AT), 6)
        every = sorted((model.effective(m, AT), m.id) for m in store.page(limit=5_000))
        assert [i for _v, i in every[:20]] == [item["id"] for item in listed]
