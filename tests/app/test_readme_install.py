"""One install opens every format: in a venv made exactly as the README says (``python3 -m venv
.venv && .venv/bin/pip install -e .``, the headless install; the window's extra adds only Qt), the
``mnemoscope`` it installed opens one store of every row of the README's table of stores other
tools wrote and lists that row's texts; a part only an extra reads says "unread: install
mnemoscope[X]", never 0 memories.

The stores are written here, in the test venv, by the real libraries (tests/helpers/owners.py) and
the builders the format tests use; only the README venv reads them. `.ci/run` makes that venv and
names it in MNEMOSCOPE_README_VENV; without it the venv is made here, once per checkout and
pyproject.toml, under the user cache folder. A README row with no builder below fails: a new
format row needs a store here.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers.owners import run_owner
from helpers.postgres_server import postgres_server  # noqa: F401 (fixture)
from helpers.redis_server import redis_server  # noqa: F401 (fixture)

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
VENV_VARIABLE = "MNEMOSCOPE_README_VENV"
# The README's words for the install (the window's adds the gui extra: PySide6, no reader).
HEADLESS_INSTALL = "python3 -m venv .venv && .venv/bin/pip install -e ."
WINDOW_INSTALL = 'python3 -m venv .venv && .venv/bin/pip install -e ".[gui]"'


def readme_rows() -> list[str]:
    """The first cell of each row of the README's table of stores other tools wrote, up to its
    first parenthesis ("mem0 on Qdrant local mode (mem0's default; ...)" -> "mem0 on Qdrant local mode")."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Stores other tools wrote"):]
    table = section[section.index("| Tool |"):].split("\n\n", 1)[0].splitlines()[2:]
    return [re.sub(r"\s*\(.*$", "", line.split("|")[1].strip()) for line in table]


# -- the README venv -----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def readme_venv() -> Path:
    given = os.environ.get(VENV_VARIABLE)
    venv = Path(given) if given else _cached_venv()
    assert (venv / "bin" / "mnemoscope").exists(), f"{venv} has no bin/mnemoscope: not a README install"
    where = _python(venv, "import mnemoscope.storage as s; print(s.__file__)").strip()
    assert where.startswith(str(REPO)), f"the README venv runs {where}, not this checkout ({REPO})"
    owners = _python(venv, "import importlib.util as u; print([m for m in ('mem0', 'langgraph', 'pytest', 'pgserver') "
                           "if u.find_spec(m)])")
    assert owners.strip() == "[]", f"the README venv holds test packages ({owners.strip()}): not a README install"
    return venv


def _cached_venv() -> Path:
    """The README's command run here, into a folder kept per checkout and pyproject.toml."""
    digest = hashlib.sha256(str(REPO).encode() + (REPO / "pyproject.toml").read_bytes()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mnemoscope-tests"
    venv = cache / f"readme-venv-{digest}"
    if not (venv / ".installed").exists():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        done = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "-e", str(REPO)], capture_output=True,
                              text=True, timeout=1800)
        assert done.returncode == 0, done.stderr[-3000:]
        (venv / ".installed").touch()
    return venv


def _python(venv: Path, code: str) -> str:
    return subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, check=True,
                          cwd="/").stdout


@dataclass
class ReadmeCli:
    """The README venv's mnemoscope, its data folder in the test's."""

    venv: Path
    home: Path

    def __call__(self, *args: object, code: int = 0) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "MNEMOSCOPE_HOME": str(self.home), "PYTHONPATH": ""}
        done = subprocess.run([str(self.venv / "bin" / "mnemoscope"), *map(str, args)], capture_output=True, text=True,
                              env=env, timeout=300, cwd=self.home)
        assert done.returncode == code, (args, done.returncode, done.stdout[-2000:], done.stderr[-2000:])
        return done

    def json(self, *args: object) -> Any:
        return json.loads(self(*args, "--json").stdout)

    def has(self, package: str) -> bool:
        return _python(self.venv, f"import importlib.util as u; print(u.find_spec({package!r}) is not None)") == "True\n"


@pytest.fixture
def cli(readme_venv: Path, tmp_path: Path) -> ReadmeCli:
    (tmp_path / "home").mkdir()
    return ReadmeCli(readme_venv, tmp_path / "home")


# -- one store per README row --------------------------------------------------------------------


@dataclass(frozen=True)
class ExtraPart:
    package: str  # what reads it ("lancedb")
    extra: str  # the extra that installs it ("crewai")
    texts: tuple[str, ...]  # memories only it reads


@dataclass(frozen=True)
class Built:
    store: str  # a path or URL, as a person gives it
    texts: tuple[str, ...]  # memories `ls` must list
    extra: ExtraPart | None = None
    first: tuple[tuple[str, ...], ...] = ()  # commands a person runs before (map --save)
    check: Callable[[ReadmeCli], None] | None = None  # what else the row says it shows
    memories: bool = True  # False: the owner keeps no memories there, only scratchpad keys (AgentX's Redis)


Builder = Callable[[Path, Callable[[], Any]], Built]
BUILDERS: dict[str, Builder] = {}


def row(name: str) -> Callable[[Builder], Builder]:
    def register(build: Builder) -> Builder:
        BUILDERS[name] = build
        return build
    return register


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


@row("mem0 on Qdrant local mode")
def _mem0_qdrant(tmp: Path, _servers: Callable[[], Any]) -> Built:
    from formats import test_mem0_qdrant

    root = _mkdir(tmp / "mem0-qdrant")
    run_owner(test_mem0_qdrant.BUILD, root=str(root), mem0_dir=str(root / ".mem0"))
    return Built(str(root), ("Dana prefers green tea", "Deploys run on Fridays"))


@row("SynthOrg")
def _synthorg(tmp: Path, _servers: Callable[[], Any]) -> Built:
    from formats.test_mem0_qdrant import build_synthorg

    data = build_synthorg(tmp / "synthorg-data")
    return Built(str(data / "ceo"), ("The team chose Litestar over Flask", "PRs require 2 approvals"))


@row("mem0")
def _mem0_chroma(tmp: Path, _servers: Callable[[], Any]) -> Built:
    from formats import test_mem0

    root = _mkdir(tmp / "mem0")
    run_owner(test_mem0.BUILD, root=str(root), mem0_dir=str(root / ".mem0"))
    return Built(str(root), ("Dana prefers green tea", "Dana lives in Lisbon"))


@row("LangGraph")
def _langgraph(tmp: Path, _servers: Callable[[], Any]) -> Built:
    from formats import test_langgraph

    root = _mkdir(tmp / "langgraph")
    run_owner(test_langgraph.BUILD, root=str(root))
    return Built(str(root), ("Dana likes tea", "Dana lives in Lisbon"))


@row("OpenAI Agents SDK")
def _openai_agents(tmp: Path, _servers: Callable[[], Any]) -> Built:
    from formats import test_openai_agents

    db = _mkdir(tmp / "agents") / "conversations.db"
    run_owner(test_openai_agents.BUILD, db=str(db), items=test_openai_agents.ITEMS)
    return Built(str(db), ("My invoice is wrong", "Booked Taberna da Rua at 8pm."))


@row("Google ADK")
def _google_adk(tmp: Path, _servers: Callable[[], Any]) -> Built:
    from formats import test_google_adk

    db = _mkdir(tmp / "adk") / "sessions.db"
    run_owner(test_google_adk.BUILD, db=str(db))
    return Built(str(db), ("Plan three days in Lisbon", "Day 1: Alfama"))


@row("AgenticX")
def _agenticx(tmp: Path, _servers: Callable[[], Any]) -> Built:
    from formats.test_agenticx import build_agenticx_home

    return Built(str(build_agenticx_home(_mkdir(tmp / "agenticx"))),
                 ("Reviewed the tax forms", "The user prefers window seats."))


@row("OpenClaw")
def _openclaw(tmp: Path, _servers: Callable[[], Any]) -> Built:
    """Its state folder, and an agent database holding a transcript event compressed as OpenClaw
    2026.9 may keep it (zstandard, which comes with the install)."""
    import zstandard
    from formats.test_openclaw import AGENT_DDL, build_openclaw_state

    state = build_openclaw_state(_mkdir(tmp / "openclaw"))
    db = _mkdir(tmp / "openclaw-ops" / "agents" / "ops" / "agent") / "openclaw-agent.sqlite"
    con = sqlite3.connect(db)
    con.executescript(AGENT_DDL.replace(
        "event_json TEXT NOT NULL,\n    created_at INTEGER NOT NULL,",
        "event_json TEXT,\n    created_at INTEGER NOT NULL, event_zstd BLOB, event_utf8_bytes INTEGER,"))
    con.execute("INSERT INTO session_windows (session_id, session_key, created_at, updated_at) "
                "VALUES ('w-9', 'agent:ops:main', 1763625600000, 1763625660000)")
    event = json.dumps({"type": "message", "id": "u1", "timestamp": "2026-11-20T08:00:01Z",
                        "message": {"role": "user", "content": "Is the server up?"}}).encode()
    con.execute("INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes) "
                "VALUES ('w-9', 0, NULL, 1763625601000, ?, ?)", (zstandard.ZstdCompressor().compress(event), len(event)))
    con.commit()
    con.close()

    def compressed_turn_read(cli: ReadmeCli) -> None:
        done = cli("sessions", db, "--session", "w-9")
        assert "Is the server up?" in done.stdout and "zstandard" not in done.stdout + done.stderr

    return Built(str(state), ("Ana prefers night trains.", "Name: Ana. Lives in Porto."), check=compressed_turn_read)


@row("CrewAI")
def _crewai(tmp: Path, _servers: Callable[[], Any]) -> Built:
    """0.x's long-term SQLite and Chroma folders, and 1.x's LanceDB table (the crewai extra)."""
    from formats.test_crewai import build_crewai_storage, write_lance

    root = build_crewai_storage(_mkdir(tmp / "crewai"))
    write_lance(root / "memory")
    return Built(str(root), ("The 9:00 train is fastest", "Write the trip summary"),
                 extra=ExtraPart("lancedb", "crewai", ("Ana prefers window seats", "The team meets on Mondays")))


@row("Letta")
def _letta(tmp: Path, _servers: Callable[[], Any]) -> Built:
    from formats.test_letta import build_letta_home

    return Built(str(build_letta_home(_mkdir(tmp / "letta"))),
                 ("I am a careful travel agent.", "Ana took the 9:00 train to Lisbon in May"))


@row("Letta Code")
def _letta_code(tmp: Path, _servers: Callable[[], Any]) -> Built:
    from formats.test_letta_code import PERSONA, PROJECT, build_letta_code_home

    return Built(str(build_letta_code_home(_mkdir(tmp / "letta-code"))), (PERSONA, PROJECT))


@row("Agentix")
def _agentix(tmp: Path, _servers: Callable[[], Any]) -> Built:
    from formats.test_agentix import build_agentix

    project, _home = build_agentix(_mkdir(tmp / "agentix"))
    return Built(str(project), ("rail API sandbox only\n", "book Lisbon hotel\n"))


@row("Claude memory tool")
def _claude_memory(tmp: Path, _servers: Callable[[], Any]) -> Built:
    from formats.test_claude_memory import build_claude_memories

    return Built(str(build_claude_memories(_mkdir(tmp / "claude"))), ("step 3 of 5 done",))


@row("five-layer agent")
def _five_layer(tmp: Path, _servers: Callable[[], Any]) -> Built:
    """Its workspace and facts DB; nearest facts through sqlite-vec (and a SQLite that loads it)."""
    from formats.test_facts_db import build_facts_workspace

    workspace = build_facts_workspace(tmp / "five-layer" / "workspace")

    def nearest_facts_read(cli: ReadmeCli) -> None:
        found = cli.json("search", workspace, "--like", "fact:facts.db:fact_cat")
        assert found["notices"] == [] and found["hits"][0]["content"] == "Whiskerino eats salmon on Fridays", found

    return Built(str(workspace), ("The user works in Europe/Lisbon time", "Whiskerino eats salmon on Fridays"),
                 check=nearest_facts_read)


@row("any SQLite table of memories")
def _sqlite_table(tmp: Path, _servers: Callable[[], Any]) -> Built:
    from formats.test_sqlite_table import bot_db

    db = bot_db(_mkdir(tmp / "bot") / "bot.db")
    contents = [r[0] for r in sqlite3.connect(db).execute("SELECT content FROM memories ORDER BY id LIMIT 2")]
    return Built(str(db), tuple(contents), first=(("map", str(db), "--save"),))


@row("any Chroma directory")
def _chroma(tmp: Path, _servers: Callable[[], Any]) -> Built:
    from helpers.chroma_dirs import written

    written(_mkdir(tmp / "chroma") / "facts", 12)
    return Built(str(tmp / "chroma" / "facts"), ("four", "Fact 7 about Caché and Redis"))


@row("AgentX on PostgreSQL")
def _agentx_postgres(tmp: Path, servers: Callable[[], Any]) -> Built:
    from helpers import agentx_db

    server = servers()
    if not server.has_pgvector:
        pytest.skip("the test PostgreSQL has no pgvector, which AgentX's schema needs")
    db = agentx_db.build(server, "readme_agentx_" + uuid.uuid4().hex[:8])
    return Built(db.url, tuple(m[4] for m in agentx_db.MEMORIES[:2]))


@row("AgentX working memory in Redis")
def _agentx_redis(tmp: Path, servers: Callable[[], Any]) -> Built:
    from helpers.redis_server import write_working_memory

    server = servers("redis_server")
    client = server.client()
    client.flushall()
    write_working_memory(client)
    client.close()

    def scratchpad_listed(cli: ReadmeCli) -> None:
        shown = cli("scratchpad", server.url()).stdout
        assert "Plan three days in Lisbon in May" in shown and "src/parser.rs" in shown, shown
        assert "TTL" in shown, shown

    return Built(server.url(), (), check=scratchpad_listed, memories=False)


def _demo_export(tmp: Path, fmt: str) -> Built:
    from mnemoscope.storage import MemoryQuery, open_store
    from mnemoscope.storage.demo import write_demo
    from mnemoscope.storage.transfer import export_memories, iter_memories

    write_demo(tmp / "demo").close()
    out = tmp / f"memories.{fmt}"
    with open_store(tmp / "demo", read_only=True) as store, open(out, "w", encoding="utf-8", newline="") as handle:
        memories = list(iter_memories(store, MemoryQuery(statuses=())))
        export_memories(memories, handle, fmt, "demo")
    return Built(str(out), tuple(m.content for m in memories[:2]))


@row("Mnemoscope's own JSONL export")
def _jsonl_export(tmp: Path, _servers: Callable[[], Any]) -> Built:
    return _demo_export(tmp, "jsonl")


@row("Mnemoscope's own CSV export")
def _csv_export(tmp: Path, _servers: Callable[[], Any]) -> Built:
    return _demo_export(tmp, "csv")


# -- the checks ----------------------------------------------------------------------------------


def test_the_readme_gives_the_install_this_test_makes() -> None:
    text = README.read_text(encoding="utf-8")
    assert HEADLESS_INSTALL in text and WINDOW_INSTALL in text


def test_every_builder_is_a_readme_row() -> None:
    assert sorted(set(BUILDERS) - set(readme_rows())) == []


@pytest.fixture
def servers(request: pytest.FixtureRequest) -> Callable[[], Any]:
    """The session's PostgreSQL (or another server fixture), started only for a row that needs it."""
    return lambda name="postgres_server": request.getfixturevalue(name)


@pytest.mark.parametrize("name", readme_rows())
def test_the_readme_install_opens_each_rows_store(name: str, cli: ReadmeCli, tmp_path: Path,
                                                  servers: Callable[[], Any]) -> None:
    assert name in BUILDERS, (f"the README's format table has a row {name!r} and this test no store of it: "
                              "add a builder to tests/app/test_readme_install.py")
    built = BUILDERS[name](tmp_path / "stores", servers)
    for command in built.first:
        cli(*command)
    extra_installed = built.extra is not None and cli.has(built.extra.package)
    unread = f"unread: install mnemoscope[{built.extra.extra}]" if built.extra and not extra_installed else None

    info = cli("info", built.store).stdout
    assert not built.memories or not re.search(r"^  memories: 0 ", info, re.MULTILINE), info
    if unread:
        assert f"  {unread} (" in info, info
    else:
        assert "pip install" not in info and "unread: install" not in info, info  # no package found missing

    listed = [m["content"] for m in cli.json("ls", built.store, "--status", "all", "--limit", "1000")["memories"]]
    for text in built.texts:
        assert text in listed, (text, listed)
    if built.extra is not None:
        for text in built.extra.texts:
            assert (text in listed) == extra_installed, (text, listed)
    if unread:
        assert cli("ls", built.store).stderr.startswith(f"note: {unread} (")
        found = cli("discover", Path(built.store).parent).stdout
        assert f"{len(listed)} + {unread}" in found, found
    if built.check is not None:
        built.check(cli)


def test_the_native_store_on_postgresql_opens_with_the_readme_install(cli: ReadmeCli, tmp_path: Path,
                                                                       servers: Callable[[], Any]) -> None:
    built = _demo_export(tmp_path, "jsonl")
    server = servers()
    name = "readme_native_" + uuid.uuid4().hex[:8]
    url = server.create_database(name)
    try:
        cli("init", url)
        cli("import", built.store, url)
        listed = [m["content"] for m in cli.json("ls", url, "--limit", "1000")["memories"]]
        assert set(built.texts) <= set(listed)
    finally:
        server.drop_database(name)


def test_the_readme_install_searches_the_demo_by_meaning(cli: ReadmeCli, tmp_path: Path) -> None:
    """Issue 28: the install the README gives has a semantic embedder, offline: the demo it writes
    is embedded by it, and a question that shares no word with its answer finds it."""
    demo = tmp_path / "demo"
    cli("demo", demo)
    assert cli.has("wordllama")
    found = cli.json("search", demo, "photos of items")
    assert found["embedder"].startswith("wordllama-l2_supercat") and found["mode"] == "hybrid"
    assert "product images" in found["hits"][0]["content"] and found["hits"][0]["strength"] == "strong"
    nothing = cli.json("search", demo, "weather on mars")
    assert nothing["matched"] == 0 and all(h["strength"] == "weak" for h in nothing["hits"])
