"""Bad inputs for the fuzz test (tests/storage/reliability/test_bad_inputs.py): a seeded
generator of broken workspaces, and the worker that runs the command line over each one.

Case ``i`` of a seed is always the same input: its category and its mutation come from
``random.Random(f"{seed}:{i}")`` alone. A case is a copy of the demo workspace (``store/``)
with one thing broken, and a folder beside it (``outside/``) that symlinks point into. The
worker runs the read commands and one write command on it in-process
(``mnemoscope.app.cli.main``), capturing what they print down to file descriptors 1 and 2
(Rust and SQLite write there directly), and hashes every file before and after.

To look at one case (it builds a demo first):

    cd tests && ../.venv/bin/python -m helpers.bad_inputs 1234 /tmp/case-1234 [--run]

rebuilds case 1234 of the default seed in /tmp/case-1234/store, prints the commands the test
runs on it and, with --run, runs them and prints what the checks found.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import random
import resource
import shutil
import sqlite3
import stat
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SEED = 20261124
# Relative weights of the categories; case i draws its category from them.
CATEGORIES: dict[str, int] = {
    "sqlite": 20,  # memory.db bit-flipped, truncated, overwritten, with a hot journal
    "wal": 11,  # memory.db-wal (and -shm) intact, bit-flipped, truncated, foreign
    "chroma": 18,  # vectors/: chroma.sqlite3 and HNSW files flipped, cut, missing; bad rows
    "markdown": 22,  # hostile MEMORY.md / daily logs
    "foreign": 10,  # other SQLite schemas named memory.db
    "symlinks": 8,  # to outside files, loops, dangling
    "special": 3,  # a FIFO, a directory where a file belongs, undecodable file names
    "permissions": 7,  # chmod 000 / read-only files and folders (meaningless as root)
    "locked": 1,  # memory.db held by another process (its cases mostly wait: few of them)
    "deep_json": 6,  # memory.db rows whose JSON (metadata, tags, a scratchpad value...) nests 1,000+ deep
    "huge_args": 4,  # 100,000-character ids and queries on the command line
    "encodings": 6,  # markdown files saved as UTF-16, UTF-32, Latin-1, CP1252, Shift-JIS
    "unreadable": 6,  # folders that cannot be read: vectors/ a file, chroma.sqlite3 a folder, chmod 000
    "torn_chroma": 8,  # a Chroma file written half-way: cut, or new bytes over old (a segment with an index)
}
# Cases whose damage leaves memory.db whole (vectors/, a markdown file, a row's JSON): every read
# exits 0 on them (the rest of the store reads), or the case fails as "rest unreadable".
CONFINED = ("chroma", "markdown", "deep_json", "encodings", "unreadable", "torn_chroma")
READ_LIMIT = 5.0  # seconds a command may take on any input
LOCKED_LIMIT = 6.0  # ...and on a database another process holds locked (waiting, by wall time)
HOLD_SCRIPT = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
for pragma in sys.argv[2:]:
    con.execute(pragma)
print("held", flush=True)
sys.stdin.read()
"""
TRACE_MARKS = ("Traceback (most recent call last)", "panicked at", "Segmentation fault", "core dumped")
SEARCH_QUERY = "webshop release"


def category_of(index: int, seed: int = SEED) -> str:
    rng = random.Random(f"{seed}:{index}")
    return rng.choices(list(CATEGORIES), weights=list(CATEGORIES.values()))[0]


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


# -- templates (built once per session) ---------------------------------------------------


@dataclass(frozen=True)
class Templates:
    """The demo workspace and the variants cases start from."""

    demo: Path  # the demo as written
    wal: Path  # memory.db with a live -wal and -shm (copied while a writer had them open)
    hot_journal: Path  # memory.db in rollback mode with the hot -journal of a killed writer
    other_wal: Path  # a -wal file belonging to another database
    memory_ids: tuple[str, ...]  # the demo's memory.db rows, for show/rm when no ls listed ids
    big: Path  # the demo with 1,100 more vectors: its collection's HNSW index and label map are on disk

    @classmethod
    def prepare(cls, demo: Path, where: Path) -> Templates:
        where.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(demo / "memory.db")
        ids = tuple(r[0] for r in con.execute("SELECT id FROM memories ORDER BY id"))
        con.close()
        return cls(demo, _live_wal(demo, where / "wal"), _hot_journal(demo, where / "hot-journal"),
                   _foreign_wal(where / "other"), ids, _big_vectors(demo, where / "big"))


def _copy_store(src: Path, dest: Path) -> None:
    shutil.copytree(src, dest, symlinks=True)


def _live_wal(demo: Path, dest: Path) -> Path:
    """A workspace as an agent leaves it while writing: committed frames still in memory.db-wal."""
    work = dest.with_name(dest.name + "-work")
    _copy_store(demo, work)
    con = sqlite3.connect(work / "memory.db", isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA wal_autocheckpoint = 0")
    for n in range(6):
        con.execute("BEGIN")
        con.execute("UPDATE memories SET access_count = access_count + 1, content = content || ?"
                    " WHERE rowid % 3 = ?", (f" (seen {n})", n % 3))
        con.execute("UPDATE scratchpad SET value = value || ? WHERE rowid % 4 = 0", (f" #{n}",))
        con.execute("COMMIT")
    _copy_store(work, dest)  # while the connection is open: -wal and -shm are copied too
    con.close()
    shutil.rmtree(work)
    assert (dest / "memory.db-wal").stat().st_size > 0
    return dest


def _hot_journal(demo: Path, dest: Path) -> Path:
    """A rollback-mode memory.db whose writer was killed mid-transaction (pages already spilled)."""
    _copy_store(demo, dest)
    db = dest / "memory.db"
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("PRAGMA journal_mode = DELETE")
    con.close()
    script = (
        "import os, signal, sqlite3, sys\n"
        "con = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "con.execute('PRAGMA cache_size = 2')\n"
        "con.execute('BEGIN')\n"
        "con.execute(\"UPDATE turns SET content = content || ' (rewritten by an agent that died)'\")\n"
        "con.execute(\"UPDATE memories SET content = upper(content)\")\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(db)], check=False)
    assert (dest / "memory.db-journal").exists(), "the killed writer left no hot journal"
    return dest


AGENT_VECTORS = 1100  # past chromadb's sync threshold (1,000): the index is written to the segment's files


def _big_vectors(demo: Path, dest: Path) -> Path:
    """The demo, its collection grown by vectors an agent added (records of their own, not copies):
    header.bin, data_level0.bin and index_metadata.pickle then hold them (the demo's index is empty)."""
    import chromadb
    from chromadb.config import Settings

    _copy_store(demo, dest)
    client = chromadb.PersistentClient(path=str(dest / "vectors"), settings=Settings(anonymized_telemetry=False))
    try:
        col = client.get_collection("memories", embedding_function=None)
        dimension = len(col.get(limit=1, include=["embeddings"])["embeddings"][0])
        rng = random.Random("big vectors")
        for start in range(0, AGENT_VECTORS, 500):
            ids = [f"agent-{i:05d}" for i in range(start, min(start + 500, AGENT_VECTORS))]
            col.add(ids=ids, embeddings=[[rng.uniform(-1, 1) for _ in range(dimension)] for _ in ids],
                    documents=[f"agent note {i}: webshop release check {rng.randrange(10**6)}" for i in ids],
                    metadatas=[{"channel": "webshop", "layer": "episodic"} for _ in ids])
    finally:
        client.close()
    assert list((dest / "vectors").glob("*/index_metadata.pickle")), "no HNSW index was written"
    return dest


def _foreign_wal(dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    db = dest / "other.db"
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA wal_autocheckpoint = 0")
    con.execute("CREATE TABLE t (x)")
    con.executemany("INSERT INTO t VALUES (?)", [(os.urandom(200),) for _ in range(200)])
    shutil.copyfile(dest / "other.db-wal", dest / "other-wal")
    con.close()
    return dest / "other-wal"


# -- a case -------------------------------------------------------------------------------


@dataclass
class Case:
    index: int
    category: str
    root: Path  # holds store/ and outside/
    kind: str = ""  # what was done, precise enough to redo it by hand
    target: str | None = None  # the store file the mutation aimed at (ids are picked there)
    holder: subprocess.Popen | None = None
    restore_modes: list[tuple[Path, int]] = field(default_factory=list)
    path_arg: Path | None = None  # what the commands are given (default: store/)
    confined: bool = False  # memory.db is whole: every read must exit 0 (see CONFINED)
    memory_id: str | None = None  # the id show and rm take, that no ls listed (default: one ls lists, or a demo row)
    query: str | None = None  # what search looks for (default: SEARCH_QUERY)
    read: str | None = None  # the read the case is about (default: the case's turn in READS)

    @property
    def store(self) -> Path:
        return self.root / "store"

    @property
    def outside(self) -> Path:
        return self.root / "outside"

    @property
    def limit(self) -> float:
        return LOCKED_LIMIT if self.category == "locked" else READ_LIMIT

    def release(self) -> None:
        if self.holder is not None:
            with contextlib.suppress(OSError):
                self.holder.stdin.close()  # type: ignore[union-attr]
            try:
                self.holder.wait(10)
            except subprocess.TimeoutExpired:
                self.holder.kill()
                self.holder.wait()
            self.holder = None
        for path, mode in reversed(self.restore_modes):
            with contextlib.suppress(OSError):
                os.chmod(path, mode, follow_symlinks=False)
        self.restore_modes.clear()


def build_case(index: int, templates: Templates, root: Path, seed: int = SEED) -> Case:
    """Case ``index``: the demo copied into root/store, then broken the way its draw says."""
    rng = random.Random(f"{seed}:{index}")
    category = rng.choices(list(CATEGORIES), weights=list(CATEGORIES.values()))[0]
    case = Case(index, category, root)
    root.mkdir(parents=True)
    case.outside.mkdir()
    (case.outside / "victim.md").write_bytes(
        b"# Outside the store\n\n- A file outside the workspace that nothing may write.\n- Second line.\n"
    )
    base = {"wal": templates.wal, "torn_chroma": templates.big}.get(category, templates.demo)
    if category in ("chroma", "unreadable") and rng.random() < 0.4:
        base = templates.big
    _copy_store(base, case.store)
    case.confined = category in CONFINED
    MUTATORS[category](case, rng, templates)
    _at_rest(case.store)
    return case


def _at_rest(store: Path) -> None:
    """Every file of the store last written a minute ago, as damage is found at rest: a reader waits
    out index files written within the last seconds (another process may be rewriting them: see
    hnsw.read_settled), which is not what these cases are about."""
    then = time.time() - 60
    for dirpath, dirnames, filenames in os.walk(store, onerror=lambda _e: None):
        for name in dirnames + filenames:
            with contextlib.suppress(OSError):
                os.utime(os.path.join(dirpath, name), (then, then), follow_symlinks=False)


# -- byte-level damage ----------------------------------------------------------------------


def _flip_bits(path: Path, rng: random.Random, count: int, start: int = 0, end: int | None = None) -> str:
    data = bytearray(path.read_bytes())
    end = len(data) if end is None else min(end, len(data))
    if end <= start:
        return "nothing to flip"
    offsets = []
    for _ in range(count):
        offset = rng.randrange(start, end)
        data[offset] ^= 1 << rng.randrange(8)
        offsets.append(offset)
    path.write_bytes(bytes(data))
    shown = ",".join(map(str, sorted(offsets)[:8])) + ("..." if len(offsets) > 8 else "")
    return f"{count} bit(s) flipped at {shown}"


def _truncate(path: Path, rng: random.Random, page: int = 4096) -> str:
    size = path.stat().st_size
    choices = [0, 1, 16, 99, 100, 512, size // 2, size - 1, rng.randrange(max(size, 1))]
    if size > page:
        choices.append(page * rng.randrange(1, max(2, size // page)))
    new = max(0, min(rng.choice(choices), size))
    with open(path, "r+b") as handle:
        handle.truncate(new)
    return f"truncated {size} -> {new} bytes"


def _overwrite(path: Path, rng: random.Random, page: int = 4096) -> str:
    data = bytearray(path.read_bytes())
    pages = max(1, len(data) // page)
    n = rng.randrange(pages)
    fill = rng.choice(["zeros", "0xff", "random"])
    chunk = {"zeros": bytes(page), "0xff": b"\xff" * page}.get(fill) or rng.randbytes(page)
    data[n * page : (n + 1) * page] = chunk
    path.write_bytes(bytes(data))
    return f"page {n} (of {page} bytes) overwritten with {fill}"


def _garbage(path: Path, rng: random.Random, keep: bytes = b"") -> str:
    size = rng.choice([1, 100, 4096, 65536, max(1, path.stat().st_size if path.exists() else 4096)])
    path.write_bytes(keep + rng.randbytes(size))
    return f"replaced by {size} random bytes" + (f" after {keep[:16]!r}" if keep else "")


def _damage(path: Path, rng: random.Random, *, page: int = 4096, magic: bytes = b"") -> str:
    """One of the byte-level damages, chosen by rng."""
    how = rng.choice(["flip", "flip", "flip-head", "flip-many", "truncate", "truncate", "overwrite", "garbage",
                      "append", "empty"])
    if how == "flip":
        return _flip_bits(path, rng, rng.choice([1, 1, 2, 4]))
    if how == "flip-head":
        return "in the first page: " + _flip_bits(path, rng, rng.choice([1, 2, 3]), 0, page)
    if how == "flip-many":
        return _flip_bits(path, rng, rng.choice([16, 64, 512]))
    if how == "truncate":
        return _truncate(path, rng, page)
    if how == "overwrite":
        return _overwrite(path, rng, page)
    if how == "garbage":
        return _garbage(path, rng, magic if rng.random() < 0.5 else b"")
    if how == "append":
        extra = rng.randbytes(rng.choice([1, 100, 5000]))
        with open(path, "ab") as handle:
            handle.write(extra)
        return f"{len(extra)} random bytes appended"
    path.write_bytes(b"")
    return "emptied (0 bytes)"


def _undecodable_name(db: Path, rng: random.Random) -> str:
    """An index's name in the schema given bytes that are not UTF-8: SQLite names it in the message of
    every statement that reads the schema, which Python's sqlite3 then fails to decode."""
    con = sqlite3.connect(db)
    try:
        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")]
    finally:
        con.close()
    data = bytearray(db.read_bytes())
    name = rng.choice(names).encode() if names else b""
    at = data.find(b"INDEX " + name) if name else -1
    if at < 0:
        return "no index to rename (file as is)"
    at += len(b"INDEX ")
    data[at : at + 3] = rng.choice([b"\xff\xfe\xc3", b"\xc0\xaf\x80", b"\xed\xa0\x80"])
    db.write_bytes(bytes(data))
    return f"the index {name.decode()!r} renamed with bytes that are not UTF-8 in its CREATE statement"


def _page_size(db: Path) -> int:
    with open(db, "rb") as handle:
        header = handle.read(18)
    size = int.from_bytes(header[16:18], "big") if len(header) >= 18 else 4096
    return 65536 if size == 1 else (size or 4096)


# -- categories --------------------------------------------------------------------------------


def mutate_sqlite(case: Case, rng: random.Random, templates: Templates) -> None:
    db = case.store / "memory.db"
    page = _page_size(db)
    case.target = "memory.db"
    pick = rng.random()
    if pick < 0.12:
        shutil.rmtree(case.store)
        _copy_store(templates.hot_journal, case.store)
        case.kind = "memory.db with the hot -journal of a writer killed mid-transaction"
        if rng.random() < 0.5:
            case.kind += "; the journal " + _damage(case.store / "memory.db-journal", rng, page=512)
        return
    if pick < 0.2:
        journal = case.store / "memory.db-journal"
        journal.write_bytes(rng.choice([b"", bytes(512), rng.randbytes(2048), b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7"
                                        + rng.randbytes(600)]))
        case.kind = f"memory.db with a stray memory.db-journal of {journal.stat().st_size} bytes"
        return
    if pick < 0.25:
        case.kind = "memory.db: " + _undecodable_name(db, rng)
        return
    case.kind = "memory.db " + _damage(db, rng, page=page, magic=b"SQLite format 3\x00")


def mutate_wal(case: Case, rng: random.Random, templates: Templates) -> None:
    wal = case.store / "memory.db-wal"
    shm = case.store / "memory.db-shm"
    db = case.store / "memory.db"
    page = _page_size(db)
    case.target = "memory.db"
    pick = rng.randrange(10)
    if pick == 0:
        case.kind = "memory.db with a live -wal and -shm (intact)"
    elif pick == 1:
        shm.unlink()
        case.kind = "memory.db with a live -wal, no -shm"
    elif pick in (2, 3):
        frame = 24 + page
        frames = max(1, (wal.stat().st_size - 32) // frame)
        where = rng.choice(["header", "frame header", "anywhere"])
        if where == "header":
            how = _flip_bits(wal, rng, rng.choice([1, 2]), 0, 32)
        elif where == "frame header":
            start = 32 + rng.randrange(frames) * frame
            how = _flip_bits(wal, rng, 1, start, start + 24)
        else:
            how = _flip_bits(wal, rng, rng.choice([1, 3, 50]))
        case.kind = f"memory.db-wal, in the {where}: {how}"
    elif pick in (4, 5):
        case.kind = "memory.db-wal " + _damage(wal, rng, page=page)
    elif pick == 6:
        shutil.copyfile(templates.other_wal, wal)
        case.kind = "memory.db-wal of another database (salt and page size mismatch)"
    elif pick == 7:
        case.kind = "memory.db-shm " + _damage(shm, rng, page=page)
    elif pick == 8:
        db.unlink()
        case.kind = "memory.db-wal and -shm left, memory.db missing"
    else:
        case.kind = "memory.db (with a live -wal) " + _damage(db, rng, page=page, magic=b"SQLite format 3\x00")


def _chroma_files(store: Path) -> list[Path]:
    vectors = store / "vectors"
    return sorted(p for p in vectors.rglob("*") if p.is_file())


CHROMA_SQL = [
    "UPDATE collections SET dimension = 3",
    "UPDATE collections SET dimension = -1",
    "UPDATE collections SET config_json_str = '{not json'",
    "UPDATE collections SET config_json_str = '[1, 2]'",
    "DELETE FROM segments",
    "DELETE FROM segments WHERE scope = 'VECTOR'",
    "UPDATE segments SET id = '00000000-0000-0000-0000-000000000000' WHERE scope = 'VECTOR'",
    "DELETE FROM collections",
    "DROP TABLE embeddings_queue",
    "DROP TABLE embedding_metadata",
    "UPDATE migrations SET version = version + 100",
    "UPDATE embedding_metadata SET string_value = 'bad ' || char(0) || ' nul' WHERE key = 'chroma:document'",
    "UPDATE embedding_metadata SET string_value = NULL, int_value = 7 WHERE key = 'chroma:document'",
    "UPDATE embedding_metadata SET string_value = 'not-a-layer' WHERE key = 'layer'",
    "UPDATE embedding_metadata SET float_value = 1e308, string_value = NULL WHERE key = 'salience'",
    "UPDATE embedding_metadata SET key = 'chroma:document' WHERE key = 'channel'",
    "UPDATE embeddings SET embedding_id = embedding_id || char(10) || 'x'",
    "UPDATE embeddings SET seq_id = x'00ff'",
    "INSERT INTO embeddings_queue (seq_id, operation, topic, id, vector, encoding, metadata) "
    "SELECT 999999, 0, topic, 'queued-bad', x'0102', 'FLOAT32', '{bad' FROM embeddings_queue LIMIT 1",
    "INSERT INTO embeddings_queue (seq_id, operation, topic, id, vector, encoding, metadata) "
    "VALUES (999998, 9, 'persistent://default/default/nowhere', 'queued-odd', NULL, 'INT8', NULL)",
    "UPDATE collection_metadata SET str_value = 'cosine-ish' WHERE key = 'hnsw:space'",
    "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = 'CREATE TABLE embeddings (x)' "
    "WHERE name = 'embeddings'",
]


def mutate_chroma(case: Case, rng: random.Random, templates: Templates) -> None:
    vectors = case.store / "vectors"
    files = _chroma_files(case.store)
    case.target = "vectors"
    pick = rng.random()
    if pick < 0.25:
        statement = rng.choice(CHROMA_SQL)
        con = sqlite3.connect(vectors / "chroma.sqlite3", isolation_level=None)
        try:
            con.executescript(statement)
            case.kind = f"vectors/chroma.sqlite3 changed by SQL: {statement}"
        except sqlite3.Error as exc:
            case.kind = f"vectors/chroma.sqlite3 (SQL {statement!r} failed: {exc}; file as is)"
        finally:
            con.close()
        return
    if pick < 0.35:
        segments = [p for p in vectors.iterdir() if p.is_dir()]
        what = rng.choice(["segment dir", "chroma.sqlite3", "every file", "extra segment"])
        if what == "segment dir" and segments:
            shutil.rmtree(segments[0])
        elif what == "chroma.sqlite3":
            (vectors / "chroma.sqlite3").unlink()
        elif what == "every file":
            shutil.rmtree(vectors)
            vectors.mkdir()
        else:
            extra = vectors / "11111111-2222-3333-4444-555555555555"
            extra.mkdir()
            for name in ("header.bin", "data_level0.bin", "length.bin", "link_lists.bin", "index_metadata.pickle"):
                (extra / name).write_bytes(rng.randbytes(rng.choice([0, 8, 100, 4096])))
        case.kind = f"vectors/: {what} " + ("added (garbage files)" if what == "extra segment" else "removed")
        return
    if pick < 0.4:
        case.kind = "vectors/chroma.sqlite3: " + _undecodable_name(vectors / "chroma.sqlite3", rng)
        return
    if pick < 0.45:
        header = next((p for p in files if p.name == "header.bin"), None)
        if header is not None:
            data = bytearray(header.read_bytes())
            field_at = rng.choice([(4, "offset_level0"), (12, "max_elements"), (20, "cur_element_count"),
                                   (28, "size_data_per_element"), (36, "label_offset"), (44, "offset_data")])
            value = rng.choice([0, 1, 2**31 - 1, 2**40, 2**63 - 1, 2**64 - 1])
            if len(data) >= field_at[0] + 8:
                struct.pack_into("<Q", data, field_at[0], value)
            header.write_bytes(bytes(data))
            case.kind = f"{header.relative_to(case.store)}: {field_at[1]} set to {value}"
            return
    victim = rng.choice(files)
    rel = victim.relative_to(case.store).as_posix()
    if victim.name == "chroma.sqlite3":
        case.kind = f"{rel} " + _damage(victim, rng, page=_page_size(victim), magic=b"SQLite format 3\x00")
    elif rng.random() < 0.15:
        victim.unlink()
        case.kind = f"{rel} removed"
    else:
        case.kind = f"{rel} " + _damage(victim, rng, page=256)


# hostile markdown: each maker gives the bytes of a file, from rng
def _lines(rng: random.Random, n: int, sep: bytes = b"\n") -> bytes:
    return sep.join(f"- fuzz note {i}: webshop release {rng.randrange(10**6)}".encode() for i in range(n)) + sep


MARKDOWN_MAKERS: dict[str, Callable[[random.Random], bytes]] = {
    "huge line": lambda r: b"- " + b"x" * r.choice([100_000, 1_000_000, 2_000_000]) + b"\n- after\n",
    "huge line of words": lambda r: b"- " + b"webshop " * r.choice([20_000, 100_000]) + b"\n",
    "many bullets": lambda r: _lines(r, r.choice([2_000, 20_000])),
    "NUL bytes": lambda r: _lines(r, 20).replace(b"note", b"no\x00te") + b"\x00" * 100 + b"\n- tail\n",
    "invalid UTF-8": lambda r: b"- ok line\n- bad \xff\xfe\xc3\x28 \xed\xa0\x80 \xc0\xaf \xf8\x88\x80\x80\x80\n- cut \xe2\x82",
    "random bytes": lambda r: r.randbytes(r.choice([10, 1000, 100_000])),
    "U+2028/U+2029": lambda r: _lines(r, 30).replace(b": ", b": \xe2\x80\xa8", 7).replace(b"release", b"\xe2\x80\xa9"),
    "NEL": lambda r: _lines(r, 30).replace(b"fuzz", b"\xc2\x85fuzz", 9),
    "form feed / VT / FS": lambda r: _lines(r, 30).replace(b"note", b"\x0cnote", 5).replace(b"- ", b"\x0b- \x1c", 4),
    "BOM": lambda r: b"\xef\xbb\xbf" + _lines(r, 10),
    "BOM mid-file": lambda r: _lines(r, 5) + b"\xef\xbb\xbf- after a BOM\n" + _lines(r, 5),
    "UTF-16 with BOM": lambda r: "\ufeff# Memory\n\n- UTF-16 webshop fact\n- another\n".encode("utf-16-le"),
    "CRLF/CR mix": lambda r: b"".join(f"- mixed {i}".encode() + r.choice([b"\n", b"\r\n", b"\r", b"\r\r\n"])
                                      for i in range(40)),
    "lone CR only": lambda r: _lines(r, 30, b"\r"),
    "deep blockquote": lambda r: b"> " * r.choice([100, 1000, 20_000]) + b"- deep webshop note\n",
    "deep list": lambda r: b"".join(b"  " * i + b"- level %d\n" % i for i in range(r.choice([200, 2000]))),
    "deep brackets": lambda r: b"- " + b"[" * r.choice([1000, 50_000]) + b"x" + b"](" * 1000 + b"\n",
    "emphasis bomb": lambda r: b"- " + b"*a **a " * r.choice([1000, 20_000]) + b"\n",
    "backtick bomb": lambda r: b"- " + b"`" * 5000 + b" x " + b"``" * 5000 + b"\n",
    "html bomb": lambda r: b"<div>" * r.choice([1000, 20_000]) + b"\n- inside html\n",
    "unclosed fence": lambda r: b"- before\n```\n" + _lines(r, 50),
    "unclosed front matter": lambda r: b"---\ntitle: x\n" + _lines(r, 20),
    "tabs and spaces": lambda r: b"\t-\tx\n \t - y\n\t\t\t\t- z\n- \t\n",
    "empty": lambda r: b"",
    "whitespace only": lambda r: b" \n\t\n\r\n \n",
    "bare markers": lambda r: b"-\n*\n+\n1.\n-\n",
    "headings only": lambda r: b"".join(b"#" * (i % 8 + 1) + b" h\n" for i in range(200)),
    "long heading": lambda r: b"# " + b"h" * 500_000 + b"\n- item\n",
    "link reference defs": lambda r: b"".join(b"[r%d]: http://x/%d\n" % (i, i) for i in range(5000)) + b"- [r1]\n",
}


def mutate_markdown(case: Case, rng: random.Random, templates: Templates) -> None:
    daily = sorted(p.relative_to(case.store).as_posix() for p in (case.store / "memory").glob("*.md"))
    target = rng.choice(["MEMORY.md", "USER.md", "learnings/errors.md", rng.choice(daily), rng.choice(daily),
                         "memory/2026-11-01.md"])
    name = rng.choice(list(MARKDOWN_MAKERS))
    hostile = MARKDOWN_MAKERS[name](rng)
    path = case.store / target
    how = "replaced by" if rng.random() < 0.5 or not path.exists() else "with, inserted"
    if how == "replaced by":
        path.write_bytes(hostile)
    else:
        lines = path.read_bytes().splitlines(keepends=True)
        at = rng.randrange(len(lines) + 1)
        path.write_bytes(b"".join(lines[:at]) + hostile + b"\n" + b"".join(lines[at:]))
        how = f"with, inserted at line {at + 1},"
    case.target = target
    case.kind = f"{target} {how} {name} ({len(hostile)} bytes)"


FOREIGN_SCHEMAS: dict[str, str] = {
    "random tables": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('x');",
    "langgraph checkpoints": "CREATE TABLE checkpoints (thread_id TEXT, checkpoint_ns TEXT, checkpoint_id TEXT, "
    "parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, metadata BLOB, PRIMARY KEY (thread_id, checkpoint_ns, "
    "checkpoint_id)); CREATE TABLE writes (thread_id TEXT, task_id TEXT, idx INTEGER, value BLOB);",
    "mem0 history": "CREATE TABLE history (id TEXT PRIMARY KEY, memory_id TEXT, old_memory TEXT, new_memory TEXT, "
    "event TEXT, created_at DATETIME, updated_at DATETIME, is_deleted INTEGER);",
    "meta without a version": "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);",
    "meta with a newer version": "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); "
    "INSERT INTO meta VALUES ('schema_version', '999');",
    "meta with a non-numeric version": "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); "
    "INSERT INTO meta VALUES ('schema_version', 'one');",
    "meta with other columns": "CREATE TABLE meta (k, v, w); INSERT INTO meta VALUES ('schema_version', 1, 2);",
    "meta as a view": "CREATE TABLE t (key, value); INSERT INTO t VALUES ('schema_version', '1'); "
    "CREATE VIEW meta AS SELECT key, value FROM t;",
    "meta and views named like ours": "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); "
    "INSERT INTO meta VALUES ('schema_version', '1'); CREATE TABLE t (x); "
    "CREATE VIEW memories AS SELECT x AS id FROM t; CREATE VIEW sessions AS SELECT x AS id FROM t;",
    "meta, a trigger and a view": "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); "
    "CREATE TABLE log (x); CREATE TRIGGER meta_log AFTER INSERT ON meta BEGIN INSERT INTO log VALUES (new.key); END;"
    "CREATE VIEW audit AS SELECT x AS seq FROM log;",
    "empty SQLite": "",
    "UTF-16 with foreign tables": "PRAGMA encoding = 'UTF-16le'; CREATE TABLE memories (id, text);",
    "WITHOUT ROWID tables": "CREATE TABLE memories (id TEXT PRIMARY KEY, content TEXT) WITHOUT ROWID; "
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID; "
    "INSERT INTO meta VALUES ('schema_version', '1');",
}
# Changes to the demo's own memory.db: ours, altered by some other program
DEMO_ALTERATIONS: dict[str, str] = {
    "a trigger that refuses updates": "CREATE TRIGGER no_update BEFORE UPDATE ON memories "
    "BEGIN SELECT RAISE(ABORT, 'memories are frozen'); END;",
    "a trigger writing a missing table": "CREATE TRIGGER log_it AFTER UPDATE ON memories "
    "BEGIN INSERT INTO missing_table VALUES (new.id); END;",
    "a trigger that deletes the row": "CREATE TRIGGER eat AFTER UPDATE ON memories BEGIN DELETE FROM memories "
    "WHERE id = new.id; END;",
    "the audit table dropped": "DROP TABLE audit;",
    "the entities table dropped": "DROP TABLE entities;",
    "a column dropped": "ALTER TABLE memories DROP COLUMN vector_state;",
    "memories replaced by a view": "ALTER TABLE memories RENAME TO memories_real; "
    "CREATE VIEW memories AS SELECT * FROM memories_real;",
    "schema version 0": "UPDATE meta SET value = '0' WHERE key = 'schema_version';",
    "a newer schema version": "UPDATE meta SET value = '4' WHERE key = 'schema_version';",
    "garbage in JSON columns": "UPDATE memories SET tags = '{not json', metadata = '[1,', derived_from = 'null';",
    "text in number columns": "UPDATE memories SET salience = 'high', access_count = 'many', confidence = x'00';",
    "dates that are not dates": "UPDATE memories SET created_at = 'yesterday', updated_at = '', "
    "last_accessed = '9999-99-99';",
    "NULs and huge text in rows": "UPDATE memories SET content = 'a' || char(0) || 'b' || zeroblob(10) "
    "WHERE rowid % 2 = 0; UPDATE memories SET content = printf('%.*c', 2000000, 'x') WHERE rowid = 3;",
    "md_file outside the store": "UPDATE memories SET md_file = '../outside/victim.md' WHERE rowid % 2 = 0;",
    "md_file absolute": "UPDATE memories SET md_file = '/etc/hostname' WHERE rowid % 2 = 1;",
    "rollback journal mode": "PRAGMA journal_mode = DELETE;",
}


def mutate_foreign(case: Case, rng: random.Random, templates: Templates) -> None:
    db = case.store / "memory.db"
    case.target = "memory.db"
    pick = rng.random()
    if pick < 0.4:
        name = rng.choice(list(DEMO_ALTERATIONS))
        con = sqlite3.connect(db, isolation_level=None)
        con.executescript(DEMO_ALTERATIONS[name])
        con.close()
        case.kind = f"the demo's memory.db with {name}"
        return
    if pick < 0.5:
        shutil.copyfile(case.store / "vectors" / "chroma.sqlite3", db)
        case.kind = "memory.db is a copy of vectors/chroma.sqlite3"
    else:
        name = rng.choice(list(FOREIGN_SCHEMAS))
        db.unlink()
        con = sqlite3.connect(db, isolation_level=None)
        if rng.random() < 0.5:
            con.execute("PRAGMA journal_mode = DELETE")
        else:
            con.execute("PRAGMA journal_mode = WAL")
        con.executescript(FOREIGN_SCHEMAS[name])
        mode = con.execute("PRAGMA journal_mode").fetchone()[0]
        con.close()
        case.kind = f"memory.db is a foreign SQLite file ({name}; journal_mode {mode})"
    if rng.random() < 0.3:  # alone: no markdown or vectors to fall back on
        for child in case.store.iterdir():
            if child.name != "memory.db":
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        case.kind += ", alone in its folder"


def mutate_symlinks(case: Case, rng: random.Random, templates: Templates) -> None:
    store, outside = case.store, case.outside
    pick = rng.randrange(16)

    def link(rel: str, target: str | Path) -> None:
        path = store / rel
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)
        case.target = rel

    if pick == 0:
        link("MEMORY.md", outside / "victim.md")
        case.kind = "MEMORY.md -> a markdown file outside the store"
    elif pick == 1:
        link("memory/2026-10-31.md", "../../outside/victim.md")
        case.kind = "memory/2026-10-31.md -> ../../outside/victim.md (relative, outside)"
    elif pick == 2:
        shutil.copytree(store / "memory", outside / "memory")
        link("memory", outside / "memory")
        case.kind = "memory/ -> a folder outside the store"
    elif pick == 3:
        shutil.copyfile(store / "memory.db", outside / "memory.db")
        link("memory.db", outside / "memory.db")
        case.kind = "memory.db -> a copy outside the store"
    elif pick == 4:
        shutil.copytree(store / "vectors", outside / "vectors")
        link("vectors", outside / "vectors")
        case.kind = "vectors/ -> a copy outside the store"
    elif pick == 5:
        link("MEMORY.md", "MEMORY.md")
        case.kind = "MEMORY.md -> itself (loop)"
    elif pick == 6:
        link("memory/2026-11-01.md", "2026-11-02.md")
        link("memory/2026-11-02.md", "2026-11-01.md")
        case.kind = "memory/2026-11-01.md <-> memory/2026-11-02.md (loop)"
    elif pick == 7:
        link("memory/loop", "..")
        case.kind = "memory/loop -> .. (a folder loop)"
    elif pick == 8:
        link("memory.db", "memory.db")
        case.kind = "memory.db -> itself (loop)"
    elif pick == 9:
        link("vectors", "vectors")
        case.kind = "vectors -> itself (loop)"
    elif pick == 10:
        link("MEMORY.md", "/nonexistent/MEMORY.md")
        case.kind = "MEMORY.md -> a missing file (dangling)"
    elif pick == 11:
        link("memory.db", "gone.db")
        case.kind = "memory.db -> a missing file (dangling)"
    elif pick == 12:
        link("vectors/chroma.sqlite3", "../nowhere/chroma.sqlite3")
        case.kind = "vectors/chroma.sqlite3 -> a missing file (dangling)"
    elif pick == 13:
        link("MEMORY.md", "/dev/null")
        case.kind = "MEMORY.md -> /dev/null"
    elif pick == 14:
        link("USER.md", outside)
        case.kind = "USER.md -> a folder"
    else:
        linked = case.root / "linked-store"
        linked.symlink_to(store)
        case.path_arg = linked
        case.kind = "the store path given is a symlink to the store"
    case.confined = case.target != "memory.db"


def mutate_special(case: Case, rng: random.Random, templates: Templates) -> None:
    store = case.store
    pick = rng.randrange(9)

    def replace_with_dir(rel: str) -> None:
        path = store / rel
        shutil.rmtree(path) if path.is_dir() else path.unlink()
        path.mkdir()
        (path / "inner.md").write_text("- inside a folder named like a file\n")
        case.target = rel

    if pick == 0:
        (store / "MEMORY.md").unlink()
        os.mkfifo(store / "MEMORY.md")
        case.target, case.kind = "MEMORY.md", "MEMORY.md is a FIFO (nobody writes to it)"
    elif pick == 1:
        os.mkfifo(store / "memory" / "2026-11-01.md")
        case.target, case.kind = "memory/2026-11-01.md", "memory/2026-11-01.md is a FIFO"
    elif pick in (2, 3, 4):
        rel = ["MEMORY.md", "memory.db", "vectors/chroma.sqlite3"][pick - 2]
        replace_with_dir(rel)
        case.kind = f"{rel} is a folder"
    elif pick == 5:
        shutil.rmtree(store / "vectors")
        (store / "vectors").write_bytes(b"not a folder\n")
        case.target, case.kind = "vectors", "vectors is a file"
    elif pick == 6:
        shutil.rmtree(store / "memory")
        (store / "memory").write_bytes(b"- not a folder\n")
        case.target, case.kind = "memory", "memory is a file"
    elif pick == 7:
        name = os.fsdecode(b"2026-10-1\xff.md")
        (store / "memory" / name).write_bytes(b"- a note in a file whose name is not UTF-8\n")
        case.target, case.kind = "memory", "memory/ holds a file whose name is not valid UTF-8"
    else:
        (store / "memory" / "2026-02-30.md").write_bytes(b"- a day that does not exist\n")
        (store / "memory" / ("9" * 200 + ".md")).write_bytes(b"- a very long name\n")
        case.target, case.kind = "memory", "memory/ holds 2026-02-30.md and a 200-character name"
    case.confined = case.target != "memory.db"


def mutate_permissions(case: Case, rng: random.Random, templates: Templates) -> None:
    store = case.store
    candidates = ["memory.db", "MEMORY.md", "memory", "memory/2026-10-31.md", "vectors", "vectors/chroma.sqlite3",
                  ".", "USER.md"]
    candidates += [p.relative_to(store).as_posix() for p in (store / "vectors").iterdir() if p.is_dir()]
    rel = rng.choice(candidates)
    mode = rng.choice([0o000, 0o000, 0o444 if not (store / rel).is_dir() else 0o555, 0o200, 0o111])
    path = store / rel
    case.restore_modes.append((path, stat.S_IMODE(path.stat().st_mode)))
    os.chmod(path, mode)
    case.target = rel
    case.kind = f"chmod {mode:03o} {rel}"
    case.confined = rel not in ("memory.db", ".")


LOCKS = {
    "BEGIN EXCLUSIVE, WAL": ["PRAGMA journal_mode = WAL", "BEGIN EXCLUSIVE"],
    "BEGIN EXCLUSIVE, rollback journal": ["PRAGMA journal_mode = DELETE", "BEGIN EXCLUSIVE"],
    "locking_mode EXCLUSIVE, WAL": ["PRAGMA locking_mode = EXCLUSIVE", "BEGIN EXCLUSIVE",
                                    "UPDATE meta SET value = value WHERE 0", "COMMIT", "BEGIN EXCLUSIVE"],
    "a read transaction, rollback journal": ["PRAGMA journal_mode = DELETE", "BEGIN",
                                             "SELECT count(*) FROM memories"],
}


def mutate_locked(case: Case, rng: random.Random, templates: Templates) -> None:
    name = rng.choice(list(LOCKS))
    statements = LOCKS[name]
    if "journal_mode = DELETE" in statements[0]:  # switch the copy first: the holder then only locks
        con = sqlite3.connect(case.store / "memory.db", isolation_level=None)
        con.execute(statements[0])
        con.close()
        statements = statements[1:]
    hold(case, case.store / "memory.db", statements)
    case.target = "memory.db"
    case.kind = f"memory.db held by another process: {name}"


def hold(case: Case, db: Path, statements: list[str]) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLD_SCRIPT, str(db), *statements],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    line = holder.stdout.readline()
    assert line.strip() == "held", f"the lock holder did not start: {line!r}"
    case.holder = holder


# -- deep JSON, huge arguments, other encodings, unreadable folders, torn Chroma files -----------


def _deep_json(rng: random.Random) -> tuple[str, str]:
    """(what, text): a JSON value nested 1,000 levels deep or more (closed or not)."""
    depth = rng.choice([1_000, 1_001, 5_000, 100_000, 1_000_000])
    shape = rng.choice(["lists", "objects", "mixed", "unclosed", "in a list"])
    if shape == "lists":
        text = "[" * depth + "]" * depth
    elif shape == "objects":
        text = '{"a":' * depth + "1" + "}" * depth
    elif shape == "mixed":
        opens = [rng.choice(("[", '{"k":')) for _ in range(depth)]
        text = "".join(opens) + "0" + "".join("]" if o == "[" else "}" for o in reversed(opens))
    elif shape == "unclosed":
        text = "[" * depth
    else:
        text = '["global", ' + "[" * depth + "]" * depth + "]"
    return f"{shape} {depth:,} deep", text


DEEP_TARGETS = {
    "memories.metadata": "UPDATE memories SET metadata = ? WHERE id = ?",
    "memories.tags": "UPDATE memories SET tags = ? WHERE id = ?",
    "memories.derived_from": "UPDATE memories SET derived_from = ? WHERE id = ?",
    "memories.metadata and tags": "UPDATE memories SET metadata = ?1, tags = ?1 WHERE id = ?2",
    "scratchpad.value": "UPDATE scratchpad SET value = ? WHERE rowid IN (SELECT rowid FROM scratchpad ORDER BY rowid "
    "LIMIT 3) AND ? IS NOT NULL",
    "sessions.metadata": "UPDATE sessions SET metadata = ? WHERE ? IS NOT NULL",
    "entities.aliases": "UPDATE entities SET aliases = ? WHERE ? IS NOT NULL",
}


def mutate_deep_json(case: Case, rng: random.Random, templates: Templates) -> None:
    target = rng.choice(list(DEEP_TARGETS))
    what, text = _deep_json(rng)
    memory_id = rng.choice(templates.memory_ids)
    con = sqlite3.connect(case.store / "memory.db", isolation_level=None)
    try:
        con.execute(DEEP_TARGETS[target], (text, memory_id))
        if target.startswith("memories.") and rng.random() < 0.5:  # the same in its vector copy
            con.close()
            con = sqlite3.connect(case.store / "vectors" / "chroma.sqlite3", isolation_level=None)
            con.execute("UPDATE embedding_metadata SET string_value = ? WHERE key = 'tags' AND id = "
                        "(SELECT id FROM embeddings WHERE embedding_id = ?)", (text, memory_id))
            what += ", and as its vector copy's tags"
    finally:
        con.close()
    case.target, case.memory_id = "memory.db", memory_id
    case.read = rng.choice(["show", "show", "ls", "search", "export", "info"])
    case.kind = f"{target} of {memory_id}: JSON {what} ({len(text):,} characters)"


HUGE_IDS: dict[str, Callable[[random.Random], str]] = {
    "100,000-character memory.db id": lambda r: "m-" + "a" * 100_000,
    "100,000-character markdown id": lambda r: "md:MEMORY.md:" + "b" * 100_000,
    "100,000-character vector id": lambda r: "vec:memories:" + "".join(r.choice("xyzé€😀") for _ in range(100_000)),
    "an id one character over the bound": lambda r: "m-" + "c" * 4_199,
    "a 4,000-character id (under the bound)": lambda r: "m-" + "d" * 3_998,
    "10,000 multi-byte characters": lambda r: "ü" * 10_000,
    "a 100,000-character markdown path": lambda r: "md:" + "memory/" * 14_000 + "x.md:0",
}
HUGE_QUERIES: dict[str, Callable[[random.Random], str]] = {
    "a 100,000-character word": lambda r: "x" * 100_000,
    "5,000 words": lambda r: " ".join(f"w{i}" for i in range(5_000)),
    "100,000 LIKE metacharacters": lambda r: "%_\\" * 33_333,
    "a 1 MB query": lambda r: "webshop release " * 65_536,
    "5,000 words one of which matches": lambda r: " ".join(["webshop"] + [f"z{i}" for i in range(4_999)]),
}


def mutate_huge_args(case: Case, rng: random.Random, templates: Templates) -> None:
    """The store as the demo wrote it; the command line is what is hostile."""
    if rng.random() < 0.6:
        name = rng.choice(list(HUGE_IDS))
        case.memory_id, case.read = HUGE_IDS[name](rng), rng.choice(["show", "show", "search"])
        if case.read == "search":
            case.query = case.memory_id
        case.kind = f"show/rm given {name}"
    else:
        name = rng.choice(list(HUGE_QUERIES))
        case.query, case.read = HUGE_QUERIES[name](rng), "search"
        case.kind = f"search for {name}"
    case.target = "memory.db"


ENCODINGS = {
    "UTF-16 with a BOM": lambda t: t.encode("utf-16"),
    "UTF-16 BE with a BOM": lambda t: b"\xfe\xff" + t.encode("utf-16-be"),
    "UTF-16 LE without a BOM": lambda t: t.encode("utf-16-le"),
    "UTF-32": lambda t: t.encode("utf-32"),
    "Latin-1": lambda t: t.encode("latin-1", "replace"),
    "CP1252": lambda t: t.encode("cp1252", "replace"),
    "Shift-JIS": lambda t: t.encode("shift_jis", "replace"),
    "UTF-8 with one Latin-1 line": lambda t: t.encode() + "- Café über naïve\n".encode("latin-1"),
}
ENCODED_TEXT = "- Café opens at 08:00, über early\n- “Smart quotes” and – dashes\n- 東京 release notes\n"


def mutate_encodings(case: Case, rng: random.Random, templates: Templates) -> None:
    con = sqlite3.connect(case.store / "memory.db")
    copies = con.execute("SELECT id, md_file FROM memories WHERE md_file IS NOT NULL ORDER BY id").fetchall()
    con.close()
    if copies and rng.random() < 0.5:  # a file a memory.db row keeps a copy in: rm must refuse to write it
        case.memory_id, target = rng.choice(copies)
    else:
        target = rng.choice(["MEMORY.md", "USER.md", "learnings/errors.md", "memory/2026-11-01.md"])
    path = case.store / target
    name = rng.choice(list(ENCODINGS))
    text = (path.read_text(encoding="utf-8") if path.is_file() else "") + ENCODED_TEXT
    path.write_bytes(ENCODINGS[name](text))
    case.target = target
    case.kind = f"{target} saved as {name}" + (f" (memory.db's {case.memory_id} keeps a copy there)"
                                               if case.memory_id else "")


def _segment(store: Path) -> Path:
    return next(p for p in sorted((store / "vectors").iterdir()) if p.is_dir())


UNREADABLE_FOLDERS = ["vectors a file", "chroma.sqlite3 a folder", "chroma.sqlite3 a FIFO", "a segment a file",
                      "vectors a dangling link", "vectors a link to itself", "memory a file", "memory a dangling link",
                      "learnings a file", "vectors empty of chroma.sqlite3"]
UNREADABLE_MODES = ["chmod 000 vectors", "chmod 000 a segment", "chmod 000 memory", "chmod 000 learnings",
                    "chmod 300 vectors", "chmod 000 chroma.sqlite3"]  # (as root chmod denies nothing)


def mutate_unreadable(case: Case, rng: random.Random, templates: Templates) -> None:
    store = case.store
    pick = rng.choice(UNREADABLE_FOLDERS + ([] if running_as_root() else UNREADABLE_MODES))
    case.kind, case.target = pick, "vectors"

    def replace(path: Path, make: Callable[[Path], None]) -> None:
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        make(path)

    if pick == "vectors a file":
        replace(store / "vectors", lambda p: p.write_bytes(b"not a folder\n"))
    elif pick == "chroma.sqlite3 a folder":
        replace(store / "vectors" / "chroma.sqlite3", lambda p: p.mkdir())
    elif pick == "chroma.sqlite3 a FIFO":
        replace(store / "vectors" / "chroma.sqlite3", lambda p: os.mkfifo(p))
    elif pick == "a segment a file":
        replace(_segment(store), lambda p: p.write_bytes(b"\x00" * 100))
    elif pick == "vectors a dangling link":
        replace(store / "vectors", lambda p: p.symlink_to("vectors-gone"))
    elif pick == "vectors a link to itself":
        replace(store / "vectors", lambda p: p.symlink_to("vectors"))
    elif pick == "memory a file":
        replace(store / "memory", lambda p: p.write_bytes(b"- not a folder\n"))
        case.target = "memory"
    elif pick == "memory a dangling link":
        replace(store / "memory", lambda p: p.symlink_to("memory-gone"))
        case.target = "memory"
    elif pick == "learnings a file":
        replace(store / "learnings", lambda p: p.write_bytes(b"- not a folder\n"))
        case.target = "learnings/errors.md"
    elif pick == "vectors empty of chroma.sqlite3":
        (store / "vectors" / "chroma.sqlite3").unlink()
    else:
        mode_text, rel = pick.split(" ", 2)[1:]
        path = {"vectors": store / "vectors", "a segment": _segment(store), "memory": store / "memory",
                "learnings": store / "learnings", "chroma.sqlite3": store / "vectors" / "chroma.sqlite3"}[rel]
        case.restore_modes.append((path, stat.S_IMODE(path.stat().st_mode)))
        os.chmod(path, int(mode_text, 8))
        case.target = "memory" if rel in ("memory", "learnings") else "vectors"


TORN_FILES = ("chroma.sqlite3", "header.bin", "data_level0.bin", "link_lists.bin", "length.bin",
              "index_metadata.pickle")


def mutate_torn_chroma(case: Case, rng: random.Random, templates: Templates) -> None:
    """One file of the grown vectors/ as a writer killed half-way leaves it: cut at a point inside
    it, or the grown bytes up to that point over the demo's (the same segment before it grew)."""
    name = rng.choice(TORN_FILES)
    segment = _segment(case.store)
    path = case.store / "vectors" / name if name == "chroma.sqlite3" else segment / name
    old_path = templates.demo / path.relative_to(case.store)
    data = path.read_bytes()
    cut = rng.randrange(1, max(2, len(data)))
    if name == "chroma.sqlite3" and rng.random() < 0.5:
        cut = max(1, cut // 4096) * 4096  # at a page boundary, as a page-by-page writer stops
    how = rng.choice(["cut", "new over old", "old files, this one new"])
    if how == "cut" or not old_path.is_file():
        path.write_bytes(data[:cut])
        how = f"cut at byte {cut:,} of {len(data):,}"
    elif how == "new over old":
        old = old_path.read_bytes()
        path.write_bytes(data[:cut] + old[cut:])
        how = f"its first {cut:,} bytes new, the rest as before it grew ({len(old):,} bytes)"
    else:  # the writer replaced this file, not the others: each other file of the segment as before
        for other in sorted(segment.iterdir()):
            before = templates.demo / other.relative_to(case.store)
            if other != path and before.is_file():
                shutil.copyfile(before, other)
            elif other != path:
                other.unlink()
        how = "the only file of the segment written; the others as before the collection grew"
    case.target, case.kind = "vectors", f"{path.relative_to(case.store)}: {how}"


MUTATORS: dict[str, Callable[[Case, random.Random, Templates], None]] = {
    "sqlite": mutate_sqlite,
    "wal": mutate_wal,
    "chroma": mutate_chroma,
    "markdown": mutate_markdown,
    "foreign": mutate_foreign,
    "symlinks": mutate_symlinks,
    "special": mutate_special,
    "permissions": mutate_permissions,
    "locked": mutate_locked,
    "deep_json": mutate_deep_json,
    "huge_args": mutate_huge_args,
    "encodings": mutate_encodings,
    "unreadable": mutate_unreadable,
    "torn_chroma": mutate_torn_chroma,
}


# -- hashing ----------------------------------------------------------------------------------


def snapshot(root: Path) -> dict[str, str]:
    """Every entry under root (symlinks not followed): type, mode, and sha256 of file contents.
    SQLite's -shm files are left out: they are shared memory (a reader writes its read marks
    there), rebuilt from the -wal, never data."""
    state: dict[str, str] = {}
    if not os.path.lexists(root):
        return state
    for dirpath, dirnames, filenames in os.walk(root, onerror=lambda _e: None):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if rel.endswith("-shm"):
                continue
            try:
                st = os.lstat(path)
            except OSError:
                continue
            mode = f"{stat.S_IMODE(st.st_mode):o}"
            if stat.S_ISLNK(st.st_mode):
                state[rel] = "link -> " + os.readlink(path)
            elif stat.S_ISDIR(st.st_mode):
                state[rel] = f"dir {mode}"
            elif stat.S_ISREG(st.st_mode):
                state[rel] = f"file {mode} {_sha256(path)}"
            else:
                state[rel] = f"special {stat.S_IFMT(st.st_mode):o} {mode}"
    return state


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as exc:
        return f"unreadable ({exc.errno})"
    return digest.hexdigest()


def differences(before: dict[str, str], after: dict[str, str]) -> list[str]:
    changed = [f"{rel} changed" for rel in before if rel in after and before[rel] != after[rel]]
    changed += [f"{rel} removed" for rel in before if rel not in after]
    changed += [f"{rel} added" for rel in after if rel not in before]
    return sorted(changed)


# -- running the command line -----------------------------------------------------------------


@dataclass
class Ran:
    command: str
    argv: list[str]
    rc: int
    seconds: float
    cpu_seconds: float
    stdout: str
    stderr: str


def run_cli(argv: list[str]) -> Ran:
    """mnemoscope.app.cli.main(argv) in this process, with what it prints captured, including
    what native code writes to file descriptors 1 and 2."""
    from mnemoscope.app.cli import main

    # Streams like the real ones: a path that is not valid UTF-8 fails on stdout as it would.
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace", write_through=True)
    with tempfile.TemporaryFile() as fd_out, tempfile.TemporaryFile() as fd_err:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        os.dup2(fd_out.fileno(), 1)
        os.dup2(fd_err.fileno(), 2)
        started, cpu_started = time.monotonic(), time.process_time()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    rc = main(argv)
                except SystemExit as exc:  # argparse
                    rc = exc.code if isinstance(exc.code, int) else 2
                except BaseException as exc:  # noqa: BLE001 - escaped the CLI's guard: that is the finding
                    rc = -1
                    err.write(f"ESCAPED THE CLI GUARD: {type(exc).__name__}: {exc}\n")
                    import traceback

                    traceback.print_exc(file=err)
        finally:
            seconds, cpu_seconds = time.monotonic() - started, time.process_time() - cpu_started
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        fd_out.seek(0)
        fd_err.seek(0)
        native_out = fd_out.read().decode("utf-8", "replace")
        native_err = fd_err.read().decode("utf-8", "replace")
    text_out = out.buffer.getvalue().decode("utf-8", "replace")  # type: ignore[attr-defined]
    text_err = err.buffer.getvalue().decode("utf-8", "replace")  # type: ignore[attr-defined]
    return Ran(argv[0], argv, rc, seconds, cpu_seconds, text_out + native_out, text_err + native_err)


def problems_of(ran: Ran, case: Case, unlisted_id: str | None = None) -> list[tuple[str, str]]:
    """(failure kind, detail) for every way this run broke the bad-input contract. unlisted_id:
    an id the command was given without knowing the store holds it ("not found" is fine then)."""
    found = []
    message = ran.stderr.strip()
    if unlisted_id and _not_found(ran, unlisted_id):
        return []
    if any(mark in ran.stderr for mark in TRACE_MARKS):
        found.append(("traceback", message[-600:]))
    if ran.rc == -1:
        found.append(("escaped the guard", message[:300]))
    elif ran.rc == 3:
        found.append(("exit 3", message[:300]))
    elif ran.rc == 1:
        found.append(("exit 1", message[:300]))
    elif ran.rc not in (0, 2):
        found.append((f"exit {ran.rc}", message[:300]))
    if ran.rc != 0:
        lines = message.splitlines()
        if len(lines) != 1 or not lines[0].startswith("mnemoscope: "):
            found.append(("multi-line message", message[:300]))
    if too_slow(ran, case):
        found.append(("too slow", f"{ran.seconds:.1f} s, {ran.cpu_seconds:.1f} s of CPU (limit {case.limit:.0f} s)"))
    return found


def too_slow(ran: Ran, case: Case) -> bool:
    """Past the limit in wall time, and, so that a machine busy with other work does not count,
    computing for half of it at least, or waiting twice as long. A locked case waits by design:
    wall time alone."""
    if ran.seconds <= case.limit:
        return False
    if case.category == "locked":
        return True
    return ran.cpu_seconds > case.limit / 2 or ran.seconds > 2 * case.limit


def _not_found(ran: Ran, memory_id: str) -> bool:
    """ "No memory <id>" for that id (a long one shown by its start: command_runtime.say cuts it)."""
    shown = memory_id if len(memory_id) <= 200 else memory_id[:60]
    return ran.rc == 1 and ran.stderr.strip().startswith(f"mnemoscope: No memory {shown}")


def _listed_id(ls: Ran, case: Case, rng: random.Random) -> str | None:
    """An id ls listed: one from the file the case damaged when there is one."""
    if ls.rc != 0:
        return None
    try:
        memories = json.loads(ls.stdout)["memories"]
    except (ValueError, KeyError, TypeError):
        return None
    if not memories:
        return None
    aimed = [m for m in memories if case.target and str(m.get("source", {}).get("path", "")).startswith(case.target)]
    if not aimed and case.target in ("memory.db", "vectors"):
        aimed = [m for m in memories if m["id"].startswith("m-")]
    return rng.choice(aimed or memories)["id"]


READS = ("ls", "info", "show", "search", "export")
# Two commands a case keep 2,000 cases within minutes: a case aimed at a markdown file runs ls
# (it lists the ids of that file's memories), any other one read of READS in turn; then rm.
# MNEMOSCOPE_BAD_INPUT_READS=all runs every read on every case (about twice as long).
ALL_READS = os.environ.get("MNEMOSCOPE_BAD_INPUT_READS", "") == "all"


def commands_of(case: Case) -> tuple[str, ...]:
    if ALL_READS:
        reads = READS
    elif case.read is not None:
        reads = (case.read,)
    elif _aims_at_markdown(case):
        reads = ("ls",)
    else:
        reads = (READS[case.index % len(READS)],)
    return (*reads, "rm")


def argv_for(command: str, case: Case, memory_id: str) -> list[str]:
    path = str(case.path_arg or case.store)
    fmt = "jsonl" if case.index % 2 else "markdown"
    return {
        "info": ["info", path],
        # every memory when the case aimed at a markdown file (its ids are picked), else a few
        "ls": ["ls", path, "--json", "--limit", "300" if _aims_at_markdown(case) else "30", "--status", "all"],
        "show": ["show", path, memory_id],
        "search": ["search", path, case.query or SEARCH_QUERY, "--k", "5"],
        "export": ["export", path, str(case.root / "export" / f"out.{fmt}"), "--format", fmt],
        "rm": ["rm", path, memory_id],
    }[command]


def _aims_at_markdown(case: Case) -> bool:
    return bool(case.target) and (case.target.endswith(".md") or case.target == "memory")  # type: ignore[union-attr]


def run_case(case: Case, templates: Templates, on_begin: Callable[[str], None] = lambda _c: None) -> dict[str, Any]:
    """Every command on one case, checked; the result as plain data."""
    rng = random.Random(f"ids:{case.index}")
    (case.root / "export").mkdir(exist_ok=True)
    failures: list[dict[str, str]] = []
    runs: list[dict[str, Any]] = []
    before_store, before_outside = snapshot(case.store), snapshot(case.outside)
    # A row of the demo until ls lists what this store holds: damage may have taken that row
    # away, so "No memory <id>" (exit 1) is a right answer for it, and for it alone.
    memory_id, unlisted = case.memory_id or rng.choice(templates.memory_ids), True
    for command in commands_of(case):
        writes = command == "rm"
        argv = argv_for(command, case, memory_id)
        on_begin(command)
        ran = run_cli(argv)
        unlisted_id = memory_id if unlisted and command in ("show", "rm") else None
        kinds = problems_of(ran, case, unlisted_id)
        not_found = unlisted_id is not None and _not_found(ran, unlisted_id)
        if command == "ls" and case.memory_id is None:
            listed = _listed_id(ran, case, rng)
            if listed is not None:
                memory_id, unlisted = listed, False
        after_store, after_outside = snapshot(case.store), snapshot(case.outside)
        if not writes or ran.rc != 0:
            changed = differences(before_store, after_store)
            if changed:
                kinds.append(("input changed", "; ".join(changed[:6])))
        outside = differences(before_outside, after_outside)
        if outside:
            kinds.append(("outside written", "; ".join(outside[:6])))
        before_store, before_outside = after_store, after_outside
        if case.confined and not writes and ran.rc != 0 and not not_found:
            kinds.append(("rest unreadable", ran.stderr.strip()[:300]))
        shown = " ".join(a if len(a) <= 200 else f"{a[:60]}…({len(a):,} characters)" for a in argv)
        shown = shown.replace(str(case.root), "CASE")
        for kind, detail in kinds:
            failures.append({"kind": kind, "command": shown, "detail": detail})
        runs.append({"command": shown, "rc": ran.rc, "seconds": round(ran.seconds, 3),
                     "stderr": ran.stderr.strip()[:300], "unlisted_not_found": not_found})
    return {"index": case.index, "category": case.category, "kind": case.kind, "runs": runs, "failures": failures}


# -- the worker process -----------------------------------------------------------------------


def worker(templates: Templates, work: str, indices: list[int], seed: int, log_path: str) -> None:
    """Run cases one after the other, logging each command as it begins and each case's result
    as one JSON line, so that the parent can tell which case hung or killed the process."""
    with contextlib.suppress(ValueError, OSError):  # a corrupt HNSW header must not eat the machine
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
    # Imported once, before the first case's clock starts (the CLI itself imports them lazily).
    import chromadb  # noqa: F401
    import mnemoscope.app.cli  # noqa: F401
    import mnemoscope.storage.curation  # noqa: F401
    import mnemoscope.storage.native.workspace  # noqa: F401
    import mnemoscope.storage.store  # noqa: F401

    with open(log_path, "a", buffering=1) as log:
        for index in indices:
            root = Path(work) / f"case-{index}"

            def begin(command: str, index: int = index) -> None:
                log.write(json.dumps({"begin": index, "command": command, "at": time.time()}) + "\n")

            begin("generate")
            started = time.monotonic()
            case = build_case(index, templates, root, seed)
            log.write(json.dumps({"case": index, "category": case.category, "kind": case.kind}) + "\n")
            try:
                result = run_case(case, templates, begin)
            finally:
                case.release()
                remove_case(root)
            result["seconds"] = round(time.monotonic() - started, 3)
            log.write(json.dumps({"result": result}) + "\n")


def remove_case(root: Path) -> None:
    for dirpath, dirnames, _files in os.walk(root):
        for name in dirnames:
            path = os.path.join(dirpath, name)
            with contextlib.suppress(OSError):
                if not os.path.islink(path):
                    os.chmod(path, 0o755)
    with contextlib.suppress(OSError):
        os.chmod(root, 0o755)
    shutil.rmtree(root, ignore_errors=True)


def _main(argv: list[str]) -> int:
    import argparse
    from datetime import datetime, timezone

    from mnemoscope.storage.demo import write_demo

    parser = argparse.ArgumentParser(description="rebuild one generated bad input")
    parser.add_argument("index", type=int)
    parser.add_argument("dir", type=Path)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--run", action="store_true", help="also run the commands and print the checks")
    args = parser.parse_args(argv)
    scratch = args.dir / "templates"
    write_demo(scratch / "demo", now=datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)).close()
    templates = Templates.prepare(scratch / "demo", scratch)
    case = build_case(args.index, templates, args.dir / "case", args.seed)
    print(f"case {case.index} ({case.category}): {case.kind}\nstore: {case.store}")
    try:
        if args.run:
            result = run_case(case, templates)
            for run in result["runs"]:
                print(f"  {run['command']}: exit {run['rc']} in {run['seconds']} s  {run['stderr'][:200]}")
            for failure in result["failures"]:
                print(f"  FAILURE {failure['kind']}: {failure['command']}: {failure['detail'][:300]}")
        else:
            for command in commands_of(case):
                print("  mnemoscope " + " ".join(argv_for(command, case, "ID")))  # ID: one ls listed
            if case.holder is not None:
                input("the lock is held; press Enter to release it")
    finally:
        case.release()
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
