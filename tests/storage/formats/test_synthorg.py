"""SynthOrg's agent memory (seed 004): mem0 on embedded Qdrant with SynthOrg's metadata, written
by the real mem0ai library the way SynthOrg's Mem0 backend calls it, and read as SynthOrg reads it.

The child process repeats SynthOrg's own calls (memory/backends/mem0/adapter.py store(),
shared.py publish_shared(), mappers.py build_mem0_metadata()): ``Memory.add`` of one user message
with ``user_id`` the agent's id (or ``__synthorg_shared__`` with ``_synthorg_publisher``),
``infer=False`` and the ``_synthorg_`` keys. SynthOrg itself is not on PyPI; mem0 and qdrant_client
write every byte on disk.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from formats.test_mem0_qdrant import SETUP
from helpers.cli_runs import run, run_json
from helpers.owners import require, run_owner
from mnemoscope.storage.curation import Curator
from mnemoscope.storage.formats.synthorg import RESOLUTION_ORDER
from mnemoscope.storage.model import Layer, Status
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.query import MemoryQuery

require("mem0")

# SynthOrg's build_mem0_metadata (mappers.py) and the two ways it adds a memory.
COMPANY = SETUP + """
from datetime import datetime, timedelta, timezone
def synthorg_metadata(category, confidence, tags=(), expires_at=None, source=None):
    meta = {"_synthorg_category": category, "_synthorg_namespace": "default", "_synthorg_confidence": confidence}
    if source is not None:
        meta["_synthorg_source"] = source
    if tags:
        meta["_synthorg_tags"] = list(tags)
    if expires_at is not None:
        meta["_synthorg_expires_at"] = expires_at
    return meta
def store(m, agent_id, content, **request):  # Mem0MemoryBackend.store
    result = m.add([{"role": "user", "content": content}], user_id=agent_id,
                   metadata=synthorg_metadata(**request), infer=False)
    return result["results"][0]["id"]
def publish(m, agent_id, content, **request):  # publish_shared
    meta = {**synthorg_metadata(**request), "_synthorg_publisher": agent_id}
    result = m.add([{"role": "user", "content": content}], user_id="__synthorg_shared__", metadata=meta, infer=False)
    return result["results"][0]["id"]
m = open_mem0(data, collection="synthorg_memories")
ids = {
    "jwt": store(m, "ceo", "Last sprint the team chose JWT over sessions", category="episodic", confidence=0.9,
                 tags=["non-inferable"]),
    "build": store(m, "ceo", "I'm implementing the auth endpoint", category="working", confidence=0.6,
                   expires_at="2021-01-01T00:00:00+00:00"),
    "litestar": store(m, "ceo", "This project uses Litestar with aiosqlite", category="semantic", confidence=0.8),
    "qa": store(m, "qa-lead", "The QA lead prefers detailed test plans", category="social", confidence=0.7,
                tags=["non-inferable"]),
    "lesson": store(m, "qa-lead", "Next time, run the migrations before the tests", category="procedural",
                    confidence=0.95, tags=["non-inferable", "lesson"], source="procedural-proposer",
                    expires_at=(datetime.now(timezone.utc) + timedelta(days=30)).isoformat()),
    "prs": publish(m, "ceo", "PRs require 2 approvals", category="procedural", confidence=0.95),
}
# A memory of the CEO's from long ago (mem0 stamps created_at itself): its retention has run out.
m.vector_store.client.set_payload("synthorg_memories", {"created_at": "2020-01-01T00:00:00+00:00"}, [ids["litestar"]])
close(m)
print(json.dumps(ids))
"""

CONFIG = """\
company_name: Acme
memory:
  backend: mem0
  level: project
  storage:
    data_dir: {data_dir}
  options:
    max_memories_per_agent: 500
  consolidation:
    retention:
      rules:
        - {{category: working, retention_days: 1}}
        - {{category: episodic, retention_days: 30}}
      default_retention_days: 365
agents:
  - name: ceo
    role: CEO
    department: executive
    memory:
      type: persistent
      retention_days: 90
      retention_overrides:
        - {{category: episodic, retention_days: 7}}
  - name: qa-lead
    role: QA Lead
    department: quality
"""

READ_BACK = SETUP + """
m = open_mem0(data, collection="synthorg_memories")
out = {"one": m.get(key), "shared": m.get_all(filters={"user_id": "__synthorg_shared__"})["results"]}
close(m)
print(json.dumps(out, default=str))
"""


@pytest.fixture(scope="module")
def _company(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    project = tmp_path_factory.mktemp("synthorg") / "acme"
    data = project / "data" / "memory"
    data.mkdir(parents=True)
    ids = run_owner(COMPANY, data=str(data), mem0_dir=str(project / ".mem0"))
    return project, ids


@pytest.fixture
def company(_company, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A SynthOrg project: synthorg.yaml and its data folder data/memory (qdrant/ + history.db)."""
    project, ids = _company
    copy = tmp_path / "acme"
    shutil.copytree(project, copy)
    (copy / "synthorg.yaml").write_text(CONFIG.format(data_dir="./data/memory"), encoding="utf-8")
    return copy, {k: f"vec:synthorg_memories:{v}" for k, v in ids.items()}


def data_of(project: Path) -> Path:
    return project / "data" / "memory"


def test_each_field_as_synthorg_reads_it(company):
    project, ids = company
    with open_store(data_of(project)) as store:
        got = {name: store.get(memory_id) for name, memory_id in ids.items()}
        assert {n: m.layer for n, m in got.items()} == {
            "jwt": Layer.EPISODIC, "build": Layer.WORKING, "litestar": Layer.SEMANTIC, "qa": Layer.SOCIAL,
            "lesson": Layer.PROCEDURAL, "prs": Layer.PROCEDURAL}
        assert {n: m.confidence for n, m in got.items()} == {
            "jwt": 0.9, "build": 0.6, "litestar": 0.8, "qa": 0.7, "lesson": 0.95, "prs": 0.95}
        assert got["jwt"].tags == ("non-inferable",) and got["lesson"].tags == ("non-inferable", "lesson")
        assert got["litestar"].tags == ()
        assert {n: m.status for n, m in got.items()} == {
            **{n: Status.ACTIVE for n in ids}, "build": Status.EXPIRED}
        assert got["build"].metadata["expires_at"] == "2021-01-01T00:00:00+00:00"
        assert {n: m.channel for n, m in got.items()} == {
            "jwt": "agent:ceo", "build": "agent:ceo", "litestar": "agent:ceo", "qa": "agent:qa-lead",
            "lesson": "agent:qa-lead", "prs": "shared"}
        assert got["prs"].metadata["publisher"] == "ceo"
        assert got["lesson"].metadata["source"] == "procedural-proposer"
        # SynthOrg's keys became fields: none is left as a raw key, and the scope is no "user".
        assert not any(k.startswith("_synthorg_") or k == "user_id" for m in got.values() for k in m.metadata)
        # The layer filter finds each category; an expired entry is not active, and is filterable.
        assert [m.id for m in store.page(MemoryQuery(layers=(Layer.EPISODIC,)), limit=10)] == [ids["jwt"]]
        assert store.count(MemoryQuery(layers=(Layer.WORKING,))) == 0
        assert [m.id for m in store.page(MemoryQuery(statuses=(Status.EXPIRED,)), limit=10)] == [ids["build"]]
        counts = store.counts()
        assert counts["statuses"] == {"active": 5, "expired": 1}
        assert counts["channels"] == {"agent:ceo": 3, "agent:qa-lead": 2, "shared": 1}
        assert counts["layers"] == {"episodic": 1, "working": 1, "semantic": 1, "social": 1, "procedural": 2}
        # Promotion thresholds are judged on the stored confidence.
        assert store.settings.promotion.check(got["litestar"])["values"]["confidence"] == 0.8
        assert not store.settings.promotion.check(got["litestar"])["met"]["confidence"]


def test_the_cli_shows_every_field(company, capsys):
    project, ids = company
    data = data_of(project)
    shown = run_json(capsys, "show", data, ids["jwt"])
    assert (shown["layer"], shown["confidence"], shown["tags"], shown["status"], shown["channel"]) == (
        "episodic", 0.9, ["non-inferable"], "active", "agent:ceo")
    assert shown["promotion"]["values"]["confidence"] == 0.9
    code, out, _ = run(capsys, "show", data, ids["jwt"])
    assert code == 0
    assert "layer episodic, channel agent:ceo, tags non-inferable" in out
    assert "confidence 0.90" in out and "confidence 0.9 >= 0.85" in out
    code, out, _ = run(capsys, "show", data, ids["prs"])
    assert "channel shared" in out and "publisher: ceo" in out
    listed = run_json(capsys, "ls", data, "--layer", "social")
    assert [m["id"] for m in listed["memories"]] == [ids["qa"]]
    listed = run_json(capsys, "ls", data)
    assert ids["build"] not in [m["id"] for m in listed["memories"]] and listed["total"] == 5
    code, out, _ = run(capsys, "ls", data, "--status", "expired")
    assert "expired" in out and "I'm implementing the auth endpoint" in out and "(1-1 of 1)" in out


def test_info_shows_agents_shared_knowledge_levels_retention_and_the_cap(company, capsys):
    project, _ids = company
    data = data_of(project)
    [fmt] = run_json(capsys, "info", data)["formats"]
    assert fmt["label"] == "SynthOrg (mem0 on Qdrant local)"
    view = fmt["synthorg"]
    assert view["config"] == str(project / "synthorg.yaml")
    assert view["max_memories_per_agent"] == {"value": 500, "from": "memory.options.max_memories_per_agent"}
    assert view["retention_resolution_order"] == list(RESOLUTION_ORDER)
    agents = {a["id"]: a for a in view["agents"]}
    assert agents["ceo"]["level"] == {"value": "persistent", "from": "agents[ceo].memory.type"}
    assert agents["qa-lead"]["level"] == {"value": "project", "from": "memory.level"}
    assert agents["ceo"]["retention"] == {
        "working": {"days": 1, "rule": "company per-category rule"},
        "episodic": {"days": 7, "rule": "agent per-category rule"},
        "semantic": {"days": 90, "rule": "agent global default"},
        "procedural": {"days": 90, "rule": "agent global default"},
        "social": {"days": 90, "rule": "agent global default"},
    }
    assert {c: r["days"] for c, r in agents["qa-lead"]["retention"].items()} == {
        "working": 1, "episodic": 30, "semantic": 365, "procedural": 365, "social": 365}
    assert agents["qa-lead"]["retention"]["semantic"]["rule"] == "company global default"
    assert (agents["ceo"]["memories"], agents["ceo"]["expired"], agents["ceo"]["past_retention"]) == (3, 1, 1)
    assert view["shared"]["publishers"] == {"ceo": 1}
    assert view["tags"] == {"lesson": 1, "non-inferable": 3}
    code, out, _ = run(capsys, "info", data)
    assert code == 0
    assert "per status: active 5, expired 1" in out
    assert "per layer: episodic 1, procedural 2, semantic 1, social 1, working 1" in out
    assert "max_memories_per_agent: 500 (memory.options.max_memories_per_agent)" in out
    assert "agent ceo: 3 memories, 1 expired; level persistent (agents[ceo].memory.type); 1 older than" in out
    assert "retention: working 1 day (company per-category rule), episodic 7 days (agent per-category rule)" in out
    assert "shared knowledge base entries: 1 (publishers: ceo 1)" in out
    assert ("retention resolution order: agent per-category rule > company per-category rule > agent global "
            "default > company global default > keep forever") in out
    assert "tags: lesson 1, non-inferable 3" in out


def test_without_its_config_the_settings_are_said_to_be_absent(company, capsys):
    project, _ids = company
    (project / "synthorg.yaml").unlink()
    data = data_of(project)
    view = run_json(capsys, "info", data)["formats"][0]["synthorg"]
    assert view["config"] is None and view["company"] is None
    assert view["max_memories_per_agent"]["value"] is None
    assert all(a["level"] is None and a["retention"] is None for a in view["agents"])
    code, out, _ = run(capsys, "info", data)
    assert "max_memories_per_agent: — (not in the store: it is configuration" in out
    assert "memory level, retention rules and max_memories_per_agent: not in the store" in out


def test_a_config_is_applied_only_to_the_folder_it_names(company, capsys):
    project, _ids = company
    (project / "synthorg.yaml").write_text(CONFIG.format(data_dir="./elsewhere"), encoding="utf-8")
    view = run_json(capsys, "info", data_of(project))["formats"][0]["synthorg"]
    assert view["config"] is None
    assert view["config_notes"] == [f"{project / 'synthorg.yaml'} sets memory.storage.data_dir ./elsewhere, "
                                    "another folder: not applied"]
    # In Docker the config names the container's path: /data/memory is this data/memory.
    config = project / "config" / "synthorg.yaml"
    config.parent.mkdir()
    config.write_text(CONFIG.format(data_dir="/data/memory"), encoding="utf-8")
    (project / "synthorg.yaml").unlink()
    view = run_json(capsys, "info", data_of(project))["formats"][0]["synthorg"]
    assert view["config"] == str(config)
    assert view["config_notes"] == [f"{config}: data_dir /data/memory is a container's path (not on this machine); "
                                    "read as this folder"]


def test_retracting_shared_knowledge_is_read_back_by_mem0_and_undone(company):
    project, ids = company
    data = data_of(project)
    key = ids["prs"].rsplit(":", 1)[1]
    with open_store(data) as store:
        outcome = Curator(store).delete(ids["prs"])
        assert any("shared knowledge published by ceo" in n and "retraction" in n for n in outcome.notes)
    gone = run_owner(READ_BACK, data=str(data), key=key, mem0_dir=str(project / ".mem0"))
    assert gone["one"] is None and gone["shared"] == []
    with open_store(data) as store:
        Curator(store).undo()
        assert store.get(ids["prs"]).metadata["publisher"] == "ceo"
    back = run_owner(READ_BACK, data=str(data), key=key, mem0_dir=str(project / ".mem0"))
    assert back["one"]["metadata"] == {"_synthorg_category": "procedural", "_synthorg_namespace": "default",
                                       "_synthorg_confidence": 0.95, "_synthorg_publisher": "ceo"}


def test_an_edit_keeps_synthorgs_metadata_for_synthorg(company):
    project, ids = company
    data = data_of(project)
    with open_store(data) as store:
        Curator(store).edit(ids["jwt"], content="Last sprint the team chose JWT over server sessions")
        edited = store.get(ids["jwt"])
        assert (edited.layer, edited.confidence, edited.tags) == (Layer.EPISODIC, 0.9, ("non-inferable",))
    view = run_owner(READ_BACK, data=str(data), key=ids["jwt"].rsplit(":", 1)[1], mem0_dir=str(project / ".mem0"))
    assert view["one"]["memory"] == "Last sprint the team chose JWT over server sessions"
    assert {k: v for k, v in view["one"]["metadata"].items() if k != "mnemoscope_stale"} == {
        "_synthorg_category": "episodic", "_synthorg_namespace": "default", "_synthorg_confidence": 0.9,
        "_synthorg_tags": ["non-inferable"]}
    assert view["one"]["user_id"] == "ceo"


def test_reading_writes_nothing(company, capsys):
    project, ids = company
    before = {p: p.read_bytes() for p in sorted(project.rglob("*")) if p.is_file()}
    for command in (("info",), ("ls",), ("ls", "--status", "expired"), ("show", ids["prs"])):
        run_json(capsys, *command[:1], data_of(project), *command[1:])
    after = {p: p.read_bytes() for p in sorted(project.rglob("*")) if p.is_file()}
    assert after == before


def test_the_non_inferable_tag_is_a_facet(company, capsys, tmp_path: Path):
    project, ids = company
    data = data_of(project)
    with open_store(data) as store:
        assert store.tag_counts() == {"lesson": 1, "non-inferable": 3}  # active memories
        assert store.tagged(("non-inferable", "lesson")) == [ids["lesson"]]
    listed = run_json(capsys, "ls", data, "--tag", "non-inferable")
    assert sorted(m["id"] for m in listed["memories"]) == sorted([ids["jwt"], ids["qa"], ids["lesson"]])
    assert all("non-inferable" in m["tags"] for m in listed["memories"]) and listed["total"] == 3
    assert run_json(capsys, "ls", data, "--tag", "non-inferable", "--layer", "social")["total"] == 1
    assert run_json(capsys, "ls", data, "--tag", "no-such-tag")["total"] == 0
    # A store whose tags are not all counted (memory.db here) has no facet, rather than a short one.
    from mnemoscope.storage.opening import create_workspace

    with create_workspace(tmp_path / "native") as native:
        native.add_memory("Tagged in the native store", tags=["non-inferable"])
        assert native.tag_counts() is None and native.tagged(("non-inferable",)) is None
    code, _out, err = run(capsys, "ls", tmp_path / "native", "--tag", "non-inferable")
    assert code != 0 and "cannot be filtered by tag" in err
