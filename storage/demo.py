"""The demo workspace: a realistic agent memory holding all three store kinds.

Sessions with turns and scratchpad keys (reserved patterns included), facts in
``_global`` and two project channels, entities and relations, 60 days of daily
logs, a spread of salience and access counts, and some facts ready to promote.
Deterministic for a given ``now`` and ``seed``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from .model import Entity, Layer, Relation, RelationType
from .opening import create_workspace, open_store
from .store import MemoryStore
from .timeutil import utcnow

CHANNELS = ("_global", "rust-cli", "webshop")

FACTS: dict[str, list[tuple[Layer, str]]] = {
    "_global": [
        (Layer.SOCIAL, "The user's name is Dana Okafor; she prefers to be called Dana."),
        (Layer.SOCIAL, "Dana prefers concise answers with code first and explanation after."),
        (Layer.SEMANTIC, "Dana works in UTC+1 and usually starts around 08:30."),
        (Layer.SEMANTIC, "Dana's cat is called Whiskerino."),
        (Layer.PROCEDURAL, "Always run the test suite before proposing a commit."),
        (Layer.PROCEDURAL, "Use British spelling in user-facing prose."),
        (Layer.SEMANTIC, "Dana uses Neovim with the LazyVim distribution."),
        (Layer.SOCIAL, "Dana's manager is Priya; weekly sync on Thursdays."),
        (Layer.SEMANTIC, "The home server runs Debian 12 on a NUC in the hallway cupboard."),
        (Layer.CORE, "The assistant is called Mnemo and speaks plainly."),
        (Layer.SEMANTIC, "Dana is learning Portuguese and likes example sentences."),
        (Layer.PROCEDURAL, "Dates are written ISO style: 2026-03-14."),
    ],
    "rust-cli": [
        (Layer.SEMANTIC, "rust-cli targets Rust 1.80 and uses clap 4 for argument parsing."),
        (Layer.SEMANTIC, "rust-cli's config lives in ~/.config/rust-cli/config.toml."),
        (Layer.PROCEDURAL, "Release rust-cli with cargo-release; tag format v{version}."),
        (Layer.EPISODIC, "Fixed the Windows path bug in rust-cli by switching to dunce::canonicalize."),
        (Layer.SEMANTIC, "rust-cli error types use thiserror; the binary uses anyhow."),
        (Layer.PROCEDURAL, "Run cargo clippy --all-targets -- -D warnings before pushing rust-cli."),
        (Layer.SEMANTIC, "rust-cli integration tests use assert_cmd and predicates."),
        (Layer.EPISODIC, "Benchmarked rust-cli startup: 4.1 ms cold, 1.2 ms warm."),
        (Layer.SEMANTIC, "Prefer tracing over log in rust-cli."),
        (Layer.WORKING, "Next for rust-cli: shell completions for fish."),
    ],
    "webshop": [
        (Layer.SEMANTIC, "webshop backend is Litestar with aiosqlite; frontend is SvelteKit."),
        (Layer.SEMANTIC, "webshop payments go through Stripe in test mode until launch."),
        (Layer.PROCEDURAL, "webshop PRs need two approvals and a green CI."),
        (Layer.EPISODIC, "Migrated webshop sessions from cookies to JWT last sprint."),
        (Layer.SEMANTIC, "webshop staging is at staging.webshop.internal behind the VPN."),
        (Layer.SOCIAL, "The webshop QA lead, Marco, prefers detailed test plans."),
        (Layer.EPISODIC, "webshop checkout p95 latency fell from 900 ms to 240 ms after adding an index."),
        (Layer.PROCEDURAL, "Run alembic upgrade head after pulling webshop main."),
        (Layer.SEMANTIC, "webshop product images are served from an S3 bucket via CloudFront."),
        (Layer.WORKING, "Next for webshop: refund flow for partial orders."),
    ],
}

ENTITIES = [
    ("e-dana", "Dana Okafor", "person", "_global"),
    ("e-priya", "Priya", "person", "_global"),
    ("e-marco", "Marco", "person", "webshop"),
    ("e-whiskerino", "Whiskerino", "pet", "_global"),
    ("e-rust-cli", "rust-cli", "project", "rust-cli"),
    ("e-webshop", "webshop", "project", "webshop"),
    ("e-clap", "clap", "library", "rust-cli"),
    ("e-thiserror", "thiserror", "library", "rust-cli"),
    ("e-litestar", "Litestar", "framework", "webshop"),
    ("e-sveltekit", "SvelteKit", "framework", "webshop"),
    ("e-stripe", "Stripe", "service", "webshop"),
    ("e-neovim", "Neovim", "tool", "_global"),
    ("e-debian", "Debian", "os", "_global"),
    ("e-nuc", "home server", "machine", "_global"),
    ("e-rust", "Rust", "language", "rust-cli"),
    ("e-python", "Python", "language", "webshop"),
    ("e-s3", "S3", "service", "webshop"),
    ("e-jwt", "JWT", "concept", "webshop"),
]

RELATIONS = [
    ("e-dana", "e-priya", "KNOWS"),
    ("e-dana", "e-marco", "KNOWS"),
    ("e-dana", "e-whiskerino", "RELATED_TO"),
    ("e-dana", "e-rust-cli", "CREATED_BY"),
    ("e-dana", "e-webshop", "WORKS_FOR"),
    ("e-dana", "e-neovim", "RELATED_TO"),
    ("e-clap", "e-rust-cli", "PART_OF"),
    ("e-thiserror", "e-rust-cli", "PART_OF"),
    ("e-rust", "e-rust-cli", "PART_OF"),
    ("e-litestar", "e-webshop", "PART_OF"),
    ("e-sveltekit", "e-webshop", "PART_OF"),
    ("e-stripe", "e-webshop", "PART_OF"),
    ("e-s3", "e-webshop", "PART_OF"),
    ("e-jwt", "e-webshop", "PART_OF"),
    ("e-python", "e-litestar", "RELATED_TO"),
    ("e-marco", "e-webshop", "WORKS_FOR"),
    ("e-debian", "e-nuc", "PART_OF"),
    ("e-nuc", "e-dana", "CREATED_BY"),
    ("e-priya", "e-webshop", "WORKS_FOR"),
]

ENTITY_KEYWORDS = {
    "e-dana": "dana",
    "e-priya": "priya",
    "e-marco": "marco",
    "e-whiskerino": "whiskerino",
    "e-rust-cli": "rust-cli",
    "e-webshop": "webshop",
    "e-clap": "clap",
    "e-thiserror": "thiserror",
    "e-litestar": "litestar",
    "e-sveltekit": "sveltekit",
    "e-stripe": "stripe",
    "e-neovim": "neovim",
    "e-debian": "debian",
    "e-nuc": "home server",
    "e-rust": "rust ",
    "e-jwt": "jwt",
    "e-s3": "s3",
}

DAILY_LINES = [
    "用户请求: review the {project} changes from yesterday",
    "完成事项: {project} tests green after the refactor",
    "Dana asked for a summary of open {project} issues",
    "Paired on {project} error handling; agreed to keep errors typed",
    "Looked up the {project} deployment checklist",
    "Dana mentioned she will be offline Friday afternoon",
    "Drafted release notes for {project}",
    "Reminder set: renew the domain for webshop before month end",
    "Explained the difference between Arc and Rc with examples",
    "Dana liked the shorter answer format today",
]

ROOT_FILES = {
    "IDENTITY.md": "# Identity\n\n- Name: Mnemo\n- Role: Dana's coding and planning assistant\n- Voice: plain, direct, warm\n",
    "SOUL.md": (
        "# Soul\n\nMnemo is patient and precise. It says when it does not know,\n"
        "and it never pretends a test passed.\n\n"
        "> Prefer the boring solution that works over the clever one that might.\n"
    ),
    "USER.md": (
        "# User\n\n- Dana Okafor, software engineer, UTC+1\n- Likes concise answers, code first\n"
        "- Learning Portuguese #language\n- Cat: Whiskerino\n"
    ),
    "AGENTS.md": (
        "# Agents\n\n- **mnemo**: the main assistant; reads MEMORY.md at session start\n"
        "- **researcher**: gathers information; project-scoped memory\n"
        "- **writer**: stateless; turns research into prose\n"
    ),
    "HEARTBEAT.md": (
        "# Heartbeat\n\n- Every morning: check CI status of rust-cli and webshop\n"
        "- Every Friday: summarise the week's daily logs into MEMORY.md candidates\n"
    ),
    "learnings/errors.md": (
        "# Errors\n\n- cargo publish failed: crates.io token expired (renewed 2026-09-30)\n"
        "- pytest hung on webshop: a fixture left the event loop running\n"
    ),
    "learnings/corrections.md": (
        "# Corrections\n\n- Dana: 'colour', not 'color', in docs\n"
        "- Dana: the release branch is main, not master\n"
    ),
}

MEMORY_MD = (
    "# Memory\n\nCurated long-term facts. Edited by Dana and by Mnemo.\n\n"
    "## People\n\n- Dana Okafor is the user; prefers concise answers\n- Priya is Dana's manager\n\n"
    "## Projects\n\n- rust-cli: a command-line tool in Rust\n- webshop: Litestar + SvelteKit shop\n"
)

Progress = Callable[[str], None]


def write_demo(path: Path, *, now: datetime | None = None, seed: int = 7, progress: Progress | None = None) -> MemoryStore:
    """Write the demo workspace into an empty (or missing) folder and return it open."""
    say = progress or (lambda _msg: None)
    now = now or utcnow()
    rng = random.Random(seed)
    root = Path(path)
    store = create_workspace(root)  # embedded by the local semantic model (embedders.choice.default_embedder)
    sqlite = store  # the agent's API: what an embedding agent calls

    say("markdown files")
    for rel, text in ROOT_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
    daily_dir = root / "memory"
    daily_dir.mkdir(exist_ok=True)
    mirrored: list[tuple[str, str, datetime, str]] = []
    for day in range(60, 0, -1):
        date = (now - timedelta(days=day)).date()
        project = rng.choice(CHANNELS[1:])
        lines = [f"# {date.isoformat()}", "", f"## project: {project}", ""]
        for line in rng.sample(DAILY_LINES, rng.randint(2, 4)):
            lines.append("- " + line.format(project=project))
        if day % 9 == 0:
            fact = f"{project} decision on {date.isoformat()}: keep the public API stable until 1.0"
            lines.append("- " + fact)
            mirrored.append((f"memory/{date.isoformat()}.md", fact, now - timedelta(days=day), project))
        (daily_dir / f"{date.isoformat()}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")

    say("sessions, turns and scratchpad")
    session_ids = []
    for i in range(9):
        channel = CHANNELS[i % 3]
        started = now - timedelta(days=57 - i * 6, hours=rng.randint(0, 8))
        sid = f"s-{started:%Y%m%d}-{i:02d}"
        session_ids.append((sid, channel, started))
        sqlite.add_session(sid, channel=channel, title=f"{channel} session {i + 1}", user_id="dana", started_at=started)
        turns = []
        for t in range(rng.randint(6, 16)):
            role = "user" if t % 2 == 0 else "assistant"
            topic = channel if channel != "_global" else "the week"
            text = (
                f"Can you help me with {topic}? (turn {t})" if role == "user"
                else f"Here is what I found about {topic}: step {t // 2 + 1} done."
            )
            turns.append((role, text, started + timedelta(minutes=3 * t)))
        sqlite.add_turns(sid, turns)
        sqlite.set_scratch(sid, "session_facts", "- 用户请求: plan the sprint\n- 完成事项: tests pass", started)
        sqlite.set_scratch(sid, f"subagent_result::sa-{i:03d}", f"researcher summary {i}: 3 sources checked", started)
        if i % 2 == 0:
            sqlite.set_scratch(
                sid, f"delegation_result::dl-{i:03d}",
                json.dumps({"agent": "writer", "status": "ok", "words": 420 + i}), started,
            )
            sqlite.set_scratch(
                sid, "__pending_subagent_summaries__", json.dumps([f"sa-{i + 1:03d}"]), started
            )
        sqlite.set_scratch(sid, "__taskspace_hint__", f"~/work/{channel.strip('_')}", started)
        sqlite.set_scratch(sid, "todo", json.dumps({"open": ["write docs", "fix flaky test"], "done": 3}), started)

    say("memories")
    rows = []
    for channel, facts in FACTS.items():
        for layer, text in facts:
            created = now - timedelta(days=rng.randint(5, 59), hours=rng.randint(0, 23))
            idle = rng.choice([0, 1, 2, 5, 10, 20, 35, 50])
            last = min(now, max(created, now - timedelta(days=idle, hours=rng.randint(0, 12))))
            rows.append(
                sqlite.memory_row(
                    text, layer=layer, channel=channel, created_at=created,
                    updated_at=created + (last - created) / 2, last_accessed=last,
                    access_count=rng.choice([0, 1, 2, 3, 5, 8, 13]),
                    salience=round(rng.uniform(0.15, 0.95), 2),
                    confidence=rng.choice([0.5, 0.7, 0.85, 0.95]),
                    conversations=rng.randint(1, 4),
                    tags=[channel.strip("_"), layer.value],
                    derived_from=[rng.choice(session_ids)[0]],
                    vector_state="fresh",
                )
            )
    # Facts that already meet the promotion thresholds.
    for channel, text in (
        ("rust-cli", "Dana wants every CLI to support --json output."),
        ("webshop", "Dana prefers feature flags over long-lived branches."),
        ("rust-cli", "Dana wants error messages that say what to do next."),
    ):
        created = now - timedelta(days=rng.randint(10, 30))
        rows.append(
            sqlite.memory_row(
                text, layer=Layer.SEMANTIC, channel=channel, created_at=created,
                last_accessed=now - timedelta(days=1), access_count=7, salience=0.9,
                confidence=0.95, conversations=3, tags=["preference", "promotion-ready"],
                vector_state="fresh",
            )
        )
    for rel, text, created, channel in mirrored:
        rows.append(
            sqlite.memory_row(
                text, layer=Layer.EPISODIC, channel=channel, created_at=created,
                last_accessed=created, access_count=1, salience=0.4, confidence=0.85,
                conversations=1, tags=["decision"], md_file=rel, vector_state="fresh",
            )
        )
    say("vectors")
    store.add_memories(rows)

    say("entities and relations")
    for eid, name, etype, channel in ENTITIES:
        sqlite.add_entity(
            Entity(
                id=eid, name=name, type=etype, channel=channel,
                description=f"{name} ({etype})", salience=round(rng.uniform(0.3, 1.0), 2),
                access_count=rng.randint(0, 12), first_seen=now - timedelta(days=59),
                last_accessed=now - timedelta(days=rng.randint(0, 20)),
            )
        )
    for i, (src, dst, rtype) in enumerate(RELATIONS):
        sqlite.add_relation(
            Relation(id=f"r-demo-{i:03d}", source_id=src, target_id=dst, type=rtype,
                     channel=_channel_of(src, dst), created_at=now - timedelta(days=50 - i))
        )
    n = len(RELATIONS)
    for row in rows:
        lowered = row["content"].lower()
        for eid, keyword in ENTITY_KEYWORDS.items():
            if keyword in lowered:
                n += 1
                sqlite.add_relation(
                    Relation(id=f"r-demo-{n:03d}", source_id=row["id"], target_id=eid,
                             type=RelationType.ABOUT.value, channel=row["channel"],
                             created_at=now - timedelta(days=1))
                )
    store.close()
    return open_store(root)


def _channel_of(src: str, dst: str) -> str:
    channels = {eid: ch for eid, _n, _t, ch in ENTITIES}
    a, b = channels.get(src, "_global"), channels.get(dst, "_global")
    return a if a != "_global" else b

