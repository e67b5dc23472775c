"""Scanning a store: planted items are found in the memories that hold them, reports never print a
secret whole, the demo store yields none, findings can be looked up by fingerprint, and redaction
is an undoable edit, byte-exact in markdown."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from helpers.findings_planted import PLANTED
from mnemoscope.storage import (
    Curator,
    MemoryQuery,
    NotFoundError,
    NothingToDoError,
    Status,
    create_workspace,
    open_store,
)
from mnemoscope.storage.embedders.base import HashingEmbedder
from mnemoscope.storage.findings import REDACTED, accepted_fingerprints, find_findings, memory_findings, scan_store
from mnemoscope.storage.findings.store_scan import acceptance_changes


def _native_store(root: Path):
    return create_workspace(root, HashingEmbedder())


@pytest.fixture
def planted(tmp_path: Path):
    """A native workspace whose memories each carry one planted item."""
    store = _native_store(tmp_path / "planted")
    ids = [store.add_memory(text, channel="_global") for text, _rule, _span in PLANTED]
    yield store, ids
    store.close()


@pytest.mark.parametrize("index", range(len(PLANTED)), ids=[rule for _t, rule, _s in PLANTED])
def test_every_planted_item_is_found_with_its_rule_and_span(planted, index: int) -> None:
    store, ids = planted
    text, rule, span = PLANTED[index]
    found = [f for f in scan_store(store).findings if f.memory_id == ids[index]]
    matching = [f for f in found if f.rule == rule]
    assert matching, f"{rule} not found in {text!r}: {[f.rule for f in found]}"
    assert text[matching[0].start : matching[0].end] == span


def test_reports_never_show_a_whole_secret(planted) -> None:
    store, _ids = planted
    report = json.dumps(scan_store(store).to_dict(), ensure_ascii=False)
    for _text, rule, span in PLANTED:
        if rule.startswith("secret."):
            assert span not in report, f"{rule}'s secret is printed whole"
    assert "sk-p…" in report


def test_the_demo_store_has_no_finding(demo_path: Path) -> None:
    with open_store(demo_path, read_only=True) as store:
        report = scan_store(store)
        assert report.scanned == store.count(MemoryQuery(statuses=(Status.ACTIVE, Status.ARCHIVED)))
        assert report.scanned > 200
        assert report.findings == []


def test_fingerprint_survives_an_unrelated_edit(planted) -> None:
    store, ids = planted
    before = {f.fingerprint for f in scan_store(store, memory_ids=[ids[0]]).findings}
    Curator(store).edit(ids[0], content="Note: " + PLANTED[0][0])
    after = {f.fingerprint for f in scan_store(store, memory_ids=[ids[0]]).findings}
    assert before and before == after



def test_a_report_shows_findings_at_or_above_a_severity_and_counts_them(planted) -> None:
    store, _ids = planted
    report = scan_store(store)
    high = report.shown(severity="high")
    assert high and {f.severity for f in high} == {"high"}
    assert len(report.shown()) == len(report.findings) > len(high)
    data = report.to_dict(severity="medium")
    assert data["threshold"] == "medium" and data["counts"]["low"] == 0
    assert data["counts"]["high"] == len(high) and data["scanned"] == len(PLANTED)
    assert len(data["findings"]) == data["counts"]["high"] + data["counts"]["medium"]


def test_a_scan_ticks_its_progress_and_stops_when_cancelled(planted) -> None:
    store, _ids = planted
    ticks: list[tuple[int, int]] = []
    scan_store(store, progress=lambda done, total: ticks.append((done, total)))
    assert ticks[-1] == (len(PLANTED), len(PLANTED))
    stopped = scan_store(store, cancelled=lambda: True)
    assert stopped.scanned == 0 and stopped.findings == []


def test_findings_are_looked_up_by_fingerprint_and_an_unknown_one_is_refused(planted) -> None:
    store, ids = planted
    wanted = [f for f in scan_store(store).findings if f.memory_id == ids[2]]
    prints = [f.fingerprint for f in wanted]
    assert find_findings(store, [*prints, prints[0]], memory_ids=[ids[2]]) == wanted
    with pytest.raises(NotFoundError, match="No finding 0000000000000000"):
        find_findings(store, ["0000000000000000"])


def test_accepted_findings_are_marked_in_a_memorys_findings_and_not_accepted_twice(planted) -> None:
    store, ids = planted
    (finding,) = [f for f in scan_store(store).findings if f.memory_id == ids[1]]
    assert [f.accepted for f in memory_findings(store.get(ids[1]))] == [False]
    Curator(store).accept_findings([finding.fingerprint])
    assert accepted_fingerprints(store) == {finding.fingerprint}
    assert [f.accepted for f in memory_findings(store.get(ids[1]), accepted_fingerprints(store))] == [True]
    with pytest.raises(NothingToDoError, match="already in the baseline"):
        acceptance_changes(store, [finding], "2026-11-01T12:00:00Z")


def test_redaction_is_an_undoable_edit_of_every_copy(planted) -> None:
    store, ids = planted
    finding = next(f for f in scan_store(store).findings if f.memory_id == ids[0] and f.rule == "secret.openai-key")
    Curator(store).redact(ids[0], finding.start, finding.end, finding=finding.fingerprint)
    assert store.get(ids[0]).content == f"Dana's OpenAI key is {REDACTED} in the env file."
    assert not [f for f in scan_store(store).findings if f.memory_id == ids[0]]
    entry = store._journal.history(limit=1)[0]
    assert entry.operation == "redact" and "sk-proj" not in json.dumps(entry.details)
    Curator(store).undo()
    assert store.get(ids[0]).content == PLANTED[0][0]


def test_redaction_in_markdown_changes_only_the_span_and_undo_is_byte_exact(markdown_only: Path) -> None:
    memory_md = markdown_only / "MEMORY.md"
    secret = "sk-proj-Q3v9XkLm2R8tY7wPz4NcB1hJ6fGs0aDe"
    memory_md.write_text(memory_md.read_text(encoding="utf-8") + f"\n- OpenAI key {secret} (rotate)\n", encoding="utf-8")
    original = memory_md.read_bytes()
    with open_store(markdown_only) as store:
        finding = next(f for f in scan_store(store).findings if f.rule == "secret.openai-key")
        Curator(store).redact(finding.memory_id, finding.start, finding.end)
        assert memory_md.read_bytes() == original.replace(secret.encode(), REDACTED.encode())
        Curator(store).undo()
    assert hashlib.sha256(memory_md.read_bytes()).hexdigest() == hashlib.sha256(original).hexdigest()


def test_redacting_a_memory_changed_since_the_scan_refuses(planted) -> None:
    from mnemoscope.storage import ConflictError

    store, ids = planted
    seen = store.get(ids[0])
    Curator(store).edit(ids[0], content="something else entirely, no key")
    with pytest.raises(ConflictError):
        Curator(store).redact(ids[0], 0, 4, expected_revision=seen.revision)

