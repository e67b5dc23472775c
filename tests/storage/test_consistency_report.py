"""A consistency report: findings grouped by kind in the order found, counts, what "repair
everything" takes, its JSON form, and kinds a foreign format registers."""

from __future__ import annotations

from mnemoscope.storage.consistency_report import KINDS, Finding, FindingKind, Report, register_kind


def test_a_report_groups_findings_by_kind_in_the_order_found() -> None:
    report = Report(location="/tmp/store")
    assert report.clean and report.total == 0 and report.to_dict()["kinds"] == []
    report.extend([
        Finding("orphan-vector", "vec:memories:b", "gone", None, "vectors/memories"),
        Finding("text-mismatch", "md:MEMORY.md:x", "says y", "m-1", "markdown"),
        Finding("orphan-vector", "vec:memories:a", "gone", None, "vectors/memories"),
    ])
    assert not report.clean and report.total == 3
    assert report.counts() == {"orphan-vector": 2, "text-mismatch": 1}
    assert [f.record for f in report.items("orphan-vector")] == ["vec:memories:b", "vec:memories:a"]
    assert report.items("stale-fts") == []
    assert [f.record for f in report] == ["vec:memories:b", "vec:memories:a", "md:MEMORY.md:x"]
    # text-mismatch takes a side: only repaired when asked for by name
    assert report.repairable_kinds() == ["orphan-vector"]


def test_a_report_takes_in_the_report_of_one_part_of_the_store() -> None:
    report = Report(location="/tmp/store", checked={"memory rows": 2})
    report.add(Finding("orphan-vector", "vec:memories:a", "gone"))
    part = Report(location="/tmp/store/part", checked={"vectors": 3}, skipped=["full-text index: none"])
    part.add(Finding("orphan-vector", "vec:memories:b", "gone"))
    part.add(Finding("missing-fts", "fts:7", "not indexed", "m-7"))
    report.merge(part)
    assert report.location == "/tmp/store" and report.checked == {"memory rows": 2, "vectors": 3}
    assert report.skipped == ["full-text index: none"]
    assert [f.record for f in report] == ["vec:memories:a", "vec:memories:b", "fts:7"]


def test_a_reports_json_names_each_kind_with_its_items() -> None:
    report = Report(location="/tmp/store", checked={"memory rows": 4}, skipped=["vectors: none here"])
    report.add(Finding("missing-fts", "fts:7", "m-7 is not in the full-text index", "m-7", "memory.db"))
    data = report.to_dict()
    assert data == {
        "location": "/tmp/store", "clean": False, "total": 1, "checked": {"memory rows": 4},
        "skipped": ["vectors: none here"], "counts": {"missing-fts": 1},
        "kinds": [{**KINDS["missing-fts"].to_dict(), "count": 1,
                   "items": [{"record": "fts:7", "memory_id": "m-7", "detail": "m-7 is not in the full-text index",
                              "source": "memory.db"}]}],
    }
    assert data["kinds"][0]["repairable"] and data["kinds"][0]["by_default"]


def test_every_kind_has_a_repair_or_advice() -> None:
    for kind in KINDS.values():
        assert kind.title and kind.severity in ("error", "warning")
        assert kind.repair or kind.advice, kind.id
        assert kind.repairable == bool(kind.repair)


def test_a_registered_kind_is_kept_and_never_replaces_a_known_one() -> None:
    mine = FindingKind("test-report-kind", "A kind of a test format", "warning", advice="let the tool re-index")
    try:
        assert register_kind(mine) is mine and KINDS["test-report-kind"] is mine
        assert register_kind(FindingKind("test-report-kind", "Another title", "error")) is mine
        assert register_kind(FindingKind("missing-vector", "Hijacked", "warning")) is KINDS["missing-vector"]
        assert KINDS["missing-vector"].title == "Memory with no vector"
    finally:
        KINDS.pop("test-report-kind", None)
