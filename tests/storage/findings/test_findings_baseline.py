"""The findings baseline: accepting hides a finding (undoably), the baseline lives with Mnemoscope's
own state and never in the tool's files, and the per-store allowed hosts are kept there too."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from helpers.findings_planted import PLANTED
from mnemoscope.storage import ConflictError, Curator, create_workspace, open_store
from mnemoscope.storage.embedders.base import HashingEmbedder
from mnemoscope.storage.findings import RECORD_PREFIX, allowed_hosts, save_allowed_hosts, scan_store


@pytest.fixture
def planted(tmp_path: Path):
    """A native workspace whose memories each carry one planted item."""
    store = create_workspace(tmp_path / "planted", HashingEmbedder())
    ids = [store.add_memory(text, channel="_global") for text, _rule, _span in PLANTED]
    yield store, ids
    store.close()


def test_accepting_hides_a_finding_and_undo_brings_it_back(planted) -> None:
    store, ids = planted
    curator = Curator(store)
    target = next(f for f in scan_store(store).findings if f.memory_id == ids[1])
    outcome = curator.accept_findings([target.fingerprint])
    assert outcome.operation == "accept_finding"
    report = scan_store(store)
    assert target.fingerprint not in {f.fingerprint for f in report.shown()}
    assert target.fingerprint in {f.fingerprint for f in report.shown(include_accepted=True)}
    assert store._journal.history(limit=1)[0].operation == "accept_finding"

    curator.undo()
    assert target.fingerprint in {f.fingerprint for f in scan_store(store).shown()}
    curator.redo()
    assert target.fingerprint not in {f.fingerprint for f in scan_store(store).shown()}


def test_baseline_is_kept_with_mnemoscope_state_not_in_the_tools_files(markdown_only: Path) -> None:
    memory_md = markdown_only / "MEMORY.md"
    memory_md.write_text(memory_md.read_text(encoding="utf-8") + "\n- token AKIAZ7QX4R2M9TLW3KPD\n", encoding="utf-8")
    before = _hashes(markdown_only)
    with open_store(markdown_only) as store:
        finding = next(f for f in scan_store(store).findings if f.rule == "secret.aws-access-key")
        Curator(store).accept_findings([finding])
        assert scan_store(store).shown() == []
    after = _hashes(markdown_only)
    assert {p: h for p, h in after.items() if not p.startswith(".mnemoscope")} == before
    assert any(p.startswith(".mnemoscope") for p in after)



def test_allowed_hosts_are_kept_per_store_cleaned_and_survive_reopening(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        assert allowed_hosts(store) == ()
        save_allowed_hosts(store, (" Docs.Example.com ", "", "wiki.example.org", "docs.example.com"))
        assert allowed_hosts(store) == ("docs.example.com", "wiki.example.org")
    with open_store(demo_path) as store:
        assert allowed_hosts(store) == ("docs.example.com", "wiki.example.org")


def test_an_allowed_host_silences_its_link_in_a_store_scan(planted) -> None:
    store, ids = planted
    link_memory = ids[[rule for _t, rule, _s in PLANTED].index("link.external-host")]

    def rules_found() -> set[str]:
        return {f.rule for f in scan_store(store, memory_ids=[link_memory]).findings}

    assert "link.external-host" in rules_found()
    save_allowed_hosts(store, ("example.com",))
    assert "link.external-host" not in rules_found()


def test_the_baseline_refuses_a_write_over_an_entry_changed_since_it_was_read(planted) -> None:
    store, ids = planted
    target = next(f for f in scan_store(store).findings if f.memory_id == ids[1])
    Curator(store).accept_findings([target.fingerprint])
    baseline = store.findings_baseline
    record = RECORD_PREFIX + target.fingerprint
    assert baseline.owns(record) and not baseline.owns(f"vec:memories:{ids[1]}")
    entry = baseline.read_record(record)
    assert entry is not None and entry["rule"] == target.rule and entry["memory_id"] == ids[1]
    with pytest.raises(ConflictError, match="changed since it was read"):
        baseline.write_record(record, None, {"rule": "other"})
    assert baseline.read_record(record) == entry
    baseline.write_record(record, entry, None)
    assert baseline.read_record(record) is None
    assert target.fingerprint in {f.fingerprint for f in scan_store(store).shown()}


def _hashes(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*")) if p.is_file()
    }

