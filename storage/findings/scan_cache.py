"""A store's scan as it goes, remembered between sessions: the Findings tab's reads.

``scan_stream`` yields the findings in batches as the store's pages are scanned (the first within
a page or two of the start) and returns the same ScanReport ``scan_store`` gives. What each scan
found is kept in Mnemoscope's data folder (never beside the owner's files), one SQLite file per
store: every scanned memory's content digest and the findings in it. The next scan of that store
takes a memory's findings from there when its content digest is unchanged and scans only the
memories that changed or are new; when the store's change token is the one the last full scan
began and ended with (and the rules and allowed hosts are the same), it reads no memory at all.
The file is written beside itself and renamed into place when a scan completes: a cancelled scan
leaves the last one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sqlite3
import tempfile
import time
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..data_folder import data_folder
from .baseline import allowed_hosts
from .rules import RuleSet, default_rules, severity_rank
from .scanner import Finding, scan_text
from .store_scan import ScanReport, _marked, _texts, accepted_fingerprints

if TYPE_CHECKING:
    from ..store import MemoryStore

FOLDER = "findings-cache"
FORMAT = 2  # this file's layout: a file of another is not read
FIRST_BATCH_S = 0.0  # the first findings go out at once
BATCH_S = 0.05  # later ones gathered this long at most
PROGRESS_S = 0.2  # a batch with only the count of memories scanned, at least this often
CACHED_BATCH = 2_000
# After each page the scan lets go of the GIL and its core a moment: a window's UI thread waiting
# for the GIL gets it then, not only when the kernel gives the scan's thread a core back (on a
# loaded machine the worst UI-thread gaps while a scan ran went from 62-98 ms to 37-63 ms). About
# 5% of a scan's time (a page takes 10-20 ms).
PAGE_PAUSE_S = 0.001  # findings per batch when they all come from the cache
# Scans kept: the stores scanned or shown most recently (a file is about 40 bytes a memory, 40 MB
# at a million); older ones, and what a killed scan left half-written a day ago, are deleted.
KEPT = 16
PARTIAL_KEPT_S = 24 * 3600


@dataclass
class ScanBatch:
    """Findings found since the last batch (accepted ones marked), and how far the scan is."""

    findings: list[Finding] = field(default_factory=list)
    scanned: int = 0
    total: int = 0
    from_cache: bool = False  # every finding came from the last scan (the store unchanged since)


def cache_path(store: MemoryStore) -> Path:
    return data_folder() / FOLDER / f"{hashlib.sha256(store.location.encode('utf-8')).hexdigest()[:24]}.db"


def rules_digest(rules: RuleSet, hosts: Iterable[str]) -> str:
    """What a kept scan was found with: a rule whose pattern, needles, check or decoder changed
    (a new rules.json of the same version) finds other things, and the scan is not reused."""
    how = [[r.pattern.pattern, r.needles, r.check, r.decode, r.decoded_only, r.decoded_as, r.lowered] for r in rules.rules]
    text = json.dumps([FORMAT, rules.to_dict(), how, sorted(hosts)], sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def stable_token(store: MemoryStore) -> str:
    """The store's change token less what changes when nobody wrote: an empty -wal file (SQLite
    makes and empties one as connections open and close; files_token leaves out one that is gone)."""
    return _EMPTY_WAL.sub("", store.change_token())


_EMPTY_WAL = re.compile(r"/?[^/|:]+-wal:\d+:0(?=$|[/|])")


def content_digest(content: str) -> bytes:
    return hashlib.blake2b(content.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def scan_stream(
    store: MemoryStore, *, rules: RuleSet | None = None, cancelled: Callable[[], bool] | None = None,
    cache: Path | None = None,
) -> Generator[ScanBatch, None, ScanReport | None]:
    """Every finding in the store's active and archived memories, yielded as found (see the
    module); returns the whole report, as scan_store's, or None when cancelled."""
    rules = rules or default_rules()
    hosts = allowed_hosts(store)
    accepted = accepted_fingerprints(store)
    digest = rules_digest(rules, hosts)
    path = cache or cache_path(store)
    token = stable_token(store)
    old = _Cache.open(path, digest)
    try:
        if old is not None and old.complete_token() == token and token:
            return (yield from _from_cache(old, accepted, rules.version))
        return (yield from _scanning(store, old, path, digest, token, rules, hosts, accepted, cancelled))
    finally:
        if old is not None:
            old.close()


def _from_cache(old: _Cache, accepted: frozenset[str], version: int) -> Generator[ScanBatch, None, ScanReport]:
    scanned = old.scanned()
    report = ScanReport(version, scanned)
    batch: list[Finding] = []
    for found in old.all_found():
        batch += _marked(found, accepted)
        if len(batch) >= CACHED_BATCH:
            report.findings += batch
            yield ScanBatch(batch, scanned, scanned, True)
            batch = []
    report.findings += batch
    yield ScanBatch(batch, scanned, scanned, True)
    return _sorted(report)


def _scanning(
    store: MemoryStore, old: _Cache | None, path: Path, digest: str, token: str, rules: RuleSet,
    hosts: tuple[str, ...], accepted: frozenset[str], cancelled: Callable[[], bool] | None,
) -> Generator[ScanBatch, None, ScanReport | None]:
    report = ScanReport(rules.version, 0)
    new = _Cache.create(path, digest)
    done = False
    pending: list[Finding] = []
    last_yield, yielded_any, total = time.monotonic(), False, 0
    try:
        for texts, total in _texts(store, None):
            if cancelled is not None and cancelled():
                return None
            known = old.known(m for m, _c in texts) if old is not None else {}
            digests, found_rows = [], []
            for memory_id, content in texts:
                d = content_digest(content)
                digests.append((memory_id, d))
                was = known.get(memory_id)
                found = was[1] if was is not None and was[0] == d else scan_text(memory_id, content, rules, hosts)
                if found:
                    found_rows.append((memory_id, found))
                    pending += _marked(found, accepted)
            new.add(digests, found_rows)
            time.sleep(PAGE_PAUSE_S)
            report.scanned += len(texts)
            now = time.monotonic()
            wait = BATCH_S if yielded_any else FIRST_BATCH_S
            if (pending and now - last_yield >= wait) or now - last_yield >= PROGRESS_S:
                report.findings += pending
                yield ScanBatch(pending, report.scanned, total)
                pending, last_yield, yielded_any = [], now, yielded_any or bool(pending)
        report.findings += pending
        yield ScanBatch(pending, report.scanned, max(total, report.scanned))
        new.finish(token if stable_token(store) == token else "", report.scanned)
        done = True
        return _sorted(report)
    finally:
        if not done:
            new.discard()


def _sorted(report: ScanReport) -> ScanReport:
    report.findings.sort(key=lambda f: (severity_rank(f.severity), f.memory_id, f.start, f.rule))
    return report


class _Cache:
    """One store's scan file: meta (format, rules digest, token, scanned), digests (id ->
    content digest) and found (id -> its findings as JSON)."""

    def __init__(self, conn: sqlite3.Connection, path: Path, temp: Path | None = None) -> None:
        self.conn, self.path, self.temp = conn, path, temp

    @classmethod
    def open(cls, path: Path, digest: str) -> _Cache | None:
        """The last scan's file, if there is one made with these rules and hosts."""
        if not path.exists():
            return None
        try:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            meta = dict(conn.execute("SELECT key, value FROM meta"))
        except sqlite3.Error:
            return None
        if meta.get("rules") != digest:
            conn.close()
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # used now: kept before the scans of stores not shown for longer
        return cls(conn, path)

    @classmethod
    def create(cls, path: Path, digest: str) -> _Cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=path.name + ".", suffix=".partial", dir=path.parent)
        os.close(fd)
        conn = sqlite3.connect(name, check_same_thread=False)
        conn.executescript(
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
            # Rows appended as the scan reads them (in no order of id); indexed once, at the end.
            "CREATE TABLE digests (id TEXT NOT NULL, digest BLOB NOT NULL);"
            "CREATE TABLE found (id TEXT NOT NULL, findings TEXT NOT NULL);"
        )
        conn.execute("INSERT INTO meta VALUES ('rules', ?)", (digest,))
        return cls(conn, path, Path(name))

    def complete_token(self) -> str:
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'token'").fetchone()
        return row[0] if row else ""

    def scanned(self) -> int:
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'scanned'").fetchone()
        return int(row[0]) if row else 0

    def all_found(self) -> Iterable[list[Finding]]:
        for (text,) in self.conn.execute("SELECT findings FROM found"):
            yield _decoded(text)

    def known(self, ids: Iterable[str]) -> dict[str, tuple[bytes, list[Finding]]]:
        """The digest and findings the last scan kept for each of these ids it saw."""
        wanted = list(ids)
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        out: dict[str, tuple[bytes, list[Finding]]] = {i: (d, []) for i, d in self.conn.execute(f"SELECT id, digest FROM digests WHERE id IN ({marks})", wanted)}
        for i, text in self.conn.execute(f"SELECT id, findings FROM found WHERE id IN ({marks})", wanted):
            if i in out:
                out[i] = (out[i][0], _decoded(text))
        return out

    def add(self, digests: list[tuple[str, bytes]], found: list[tuple[str, list[Finding]]]) -> None:
        self.conn.executemany("INSERT INTO digests VALUES (?, ?)", digests)
        self.conn.executemany("INSERT INTO found VALUES (?, ?)",
                              [(i, json.dumps([_encoded(f) for f in fs])) for i, fs in found])

    def finish(self, token: str, scanned: int) -> None:
        """Keep this scan as the store's: token, when the store did not change while it ran."""
        self.conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [("token", token), ("scanned", str(scanned))])
        self.conn.execute("CREATE INDEX digests_id ON digests (id)")
        self.conn.execute("CREATE INDEX found_id ON found (id)")
        self.conn.commit()
        self.conn.close()
        assert self.temp is not None
        os.replace(self.temp, self.path)
        forget_old_scans(self.path.parent)

    def discard(self) -> None:
        self.conn.close()
        if self.temp is not None:
            self.temp.unlink(missing_ok=True)

    def close(self) -> None:
        self.conn.close()


def forget_old_scans(folder: Path) -> None:
    """Delete the scans of all but the KEPT stores used last, and .partial files older than
    PARTIAL_KEPT_S (a scan killed half-way). A file another process still reads stays readable
    to it (POSIX); one that cannot be deleted is left for next time."""
    try:
        entries = [(e.stat().st_mtime, e) for e in os.scandir(folder) if e.is_file()]
    except OSError:
        return
    scans = sorted((item for item in entries if item[1].name.endswith(".db")), key=lambda item: item[0], reverse=True)
    stale = time.time() - PARTIAL_KEPT_S
    gone = [e for _t, e in scans[KEPT:]] + [e for t, e in entries if e.name.endswith(".partial") and t < stale]
    for entry in gone:
        with contextlib.suppress(OSError):
            os.unlink(entry.path)


_FIELDS = ("fingerprint", "rule", "category", "severity", "title", "memory_id", "start", "end", "excerpt")


def _encoded(finding: Finding) -> list[Any]:
    return [getattr(finding, name) for name in _FIELDS]


def _decoded(text: str) -> list[Finding]:
    return [Finding(*values) for values in json.loads(text)]
