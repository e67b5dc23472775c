"""scan_cache.py on real stores: the streamed scan yields its first findings before it ends and
finds exactly what scan_store (`mnemoscope scan`) reports; the next scan of an unchanged store
reads none of its memories, one of a changed store scans only the memories that changed; the
file lives in Mnemoscope's data folder and a cancelled scan leaves the last one as it was."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from helpers.findings_planted import PLANTED
from mnemoscope.storage import Curator, create_workspace, open_store
from mnemoscope.storage.embedders.base import HashingEmbedder
from mnemoscope.storage.findings import save_allowed_hosts, scan_cache, scan_store, scan_stream
from mnemoscope.storage.findings.store_scan import PAGE

BENIGN = 3 * PAGE  # pages of clean memories: the planted ones spread among them


@pytest.fixture(autouse=True)
def _home(monkeypatch, tmp_path: Path) -> Path:
    home = tmp_path / "mnemoscope-home"
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(home))
    return home


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    store = create_workspace(root, HashingEmbedder())
    rows = []
    for i in range(BENIGN):
        rows.append(store.memory_row(f"fact number {i} about deploys and invoices", channel="_global"))
        if i % (BENIGN // len(PLANTED)) == 0 and i // (BENIGN // len(PLANTED)) < len(PLANTED):
            rows.append(store.memory_row(PLANTED[i // (BENIGN // len(PLANTED))][0], channel="_global"))
    store.add_memories(rows)
    store.close()
    return root


def _drain(stream):
    batches = []
    while True:
        try:
            batches.append(next(stream))
        except StopIteration as stop:
            return batches, stop.value


def _counting(monkeypatch) -> list[str]:
    scanned: list[str] = []
    real = scan_cache.scan_text

    def counted(memory_id, content, *args):
        scanned.append(memory_id)
        return real(memory_id, content, *args)

    monkeypatch.setattr(scan_cache, "scan_text", counted)
    return scanned


def test_the_stream_finds_what_scan_reports_and_shows_the_first_before_the_end(store_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(scan_cache, "PROGRESS_S", 0.0)
    with open_store(store_path, read_only=True) as store:
        expected = scan_store(store)
        batches, report = _drain(scan_stream(store))
    assert report.findings == expected.findings and report.scanned == expected.scanned
    assert {f.fingerprint for b in batches for f in b.findings} == {f.fingerprint for f in expected.findings}
    first = next(b for b in batches if b.findings)
    assert first.scanned < first.total == expected.scanned  # shown before the scan ended
    assert len(expected.findings) >= len(PLANTED) - 1


def test_an_unchanged_store_is_answered_from_the_last_scan(store_path: Path, monkeypatch, _home: Path) -> None:
    with open_store(store_path, read_only=True) as store:
        _batches, first = _drain(scan_stream(store))
    scanned = _counting(monkeypatch)
    with open_store(store_path, read_only=True) as store:
        batches, again = _drain(scan_stream(store))
    assert scanned == [] and all(b.from_cache for b in batches)
    assert again.findings == first.findings and again.scanned == first.scanned
    assert list((_home / scan_cache.FOLDER).glob("*.db")) and not list(store_path.glob("*.db.partial"))
    assert {p.name for p in store_path.iterdir()} >= {"memory.db"}
    assert not any(p.name.startswith(scan_cache.FOLDER) for p in store_path.rglob("*"))


def test_a_changed_store_rescans_only_what_changed(store_path: Path, monkeypatch) -> None:
    with open_store(store_path, read_only=True) as store:
        _drain(scan_stream(store))
    with open_store(store_path) as store:
        victim = next(f for f in scan_store(store).findings if f.rule == "pii.email")
        Curator(store).edit(victim.memory_id, content="Dana's email is gone; call ghp_8fK2mQ9xL4vT7nR1sW3yB6cD0eH5jA2pZ8gU")
        added = store.add_memory("Another key: AKIAZ7QX4R2M9TLW3KPD", channel="_global")
    scanned = _counting(monkeypatch)
    with open_store(store_path, read_only=True) as store:
        batches, report = _drain(scan_stream(store))
        expected = scan_store(store)
    assert sorted(scanned) == sorted([victim.memory_id, added])
    assert report.findings == expected.findings and not any(b.from_cache for b in batches)
    rules = {(f.memory_id, f.rule) for f in report.findings}
    assert (victim.memory_id, "secret.github-token") in rules and (victim.memory_id, "pii.email") not in rules


def test_accepting_and_allowed_hosts_are_read_fresh(store_path: Path) -> None:
    with open_store(store_path) as store:
        _drain(scan_stream(store))
        link = next(f for f in scan_store(store).findings if f.rule == "link.external-host")
        Curator(store).accept_findings([link.fingerprint])
        _batches, report = _drain(scan_stream(store))
        assert next(f for f in report.findings if f.fingerprint == link.fingerprint).accepted
        save_allowed_hosts(store, ("example.com", "example.org", "example.net"))
        _batches, report = _drain(scan_stream(store))
        assert report.findings == scan_store(store).findings
        assert "link.external-host" not in {f.rule for f in report.findings}


def test_a_cancelled_scan_leaves_the_last_one(store_path: Path, monkeypatch, _home: Path) -> None:
    monkeypatch.setattr(scan_cache, "PROGRESS_S", 0.0)
    with open_store(store_path, read_only=True) as store:
        _drain(scan_stream(store))
        kept = {p.name: p.read_bytes() for p in (_home / scan_cache.FOLDER).iterdir()}
        stop = [False]
        stream = scan_stream(store, cancelled=lambda: stop[0], cache=_home / scan_cache.FOLDER / "other.db")
        next(stream)
        stop[0] = True
        _batches, report = _drain(stream)
        assert report is None
        stream = scan_stream(store)
        next(stream)
        stream.close()  # as a worker drops its generator when cancelled
    assert {p.name: p.read_bytes() for p in (_home / scan_cache.FOLDER).iterdir()} == kept


def test_only_the_scans_of_the_stores_used_last_are_kept(tmp_path: Path, _home: Path) -> None:
    stores = []
    for n in range(scan_cache.KEPT + 2):
        root = tmp_path / f"small-{n}"
        store = create_workspace(root)
        store.add_memories([store.memory_row(f"note {n}: the api key is sk-live-{n:04d}abcdefghijklmnopqrstu")])
        stores.append(store)
    folder = _home / scan_cache.FOLDER
    for store in stores[:3]:
        _drain(scan_stream(store))
    killed = folder / "0123456789abcdef01234567.db.x1.partial"  # what a scan killed half-way left
    killed.write_bytes(b"half")
    fresh = folder / "0123456789abcdef01234567.db.x2.partial"  # one still being written
    fresh.write_bytes(b"half")
    day_ago = time.time() - scan_cache.PARTIAL_KEPT_S - 60
    os.utime(killed, (day_ago, day_ago))
    time.sleep(0.02)
    _drain(scan_stream(stores[0]))  # shown again (from its scan): now the most recently used
    for store in stores[3:]:
        time.sleep(0.002)
        _drain(scan_stream(store))
    kept = {p.name for p in folder.glob("*.db")}
    assert len(kept) == scan_cache.KEPT
    assert scan_cache.cache_path(stores[0]).name in kept  # used again, so kept
    assert not {scan_cache.cache_path(s).name for s in stores[1:3]} & kept  # the two used least lately
    assert not killed.exists() and fresh.exists()
    for store in stores:
        store.close()


def test_a_kept_scan_is_not_reused_once_a_rules_pattern_changes() -> None:
    from dataclasses import replace as changed

    from mnemoscope.storage.findings import default_rules
    from mnemoscope.storage.findings.rules import RuleSet
    from mnemoscope.storage.findings.scan_cache import rules_digest

    rules = default_rules()
    first = rules.rules[0]
    edited = RuleSet(rules.version, (changed(first, pattern=re.compile(first.pattern.pattern + "x")), *rules.rules[1:]))
    assert rules_digest(rules, ["a.example"]) == rules_digest(default_rules(), ["a.example"])
    assert rules_digest(edited, ["a.example"]) != rules_digest(rules, ["a.example"])
