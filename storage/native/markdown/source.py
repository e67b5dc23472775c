"""The markdown files of one workspace folder as a source: read, plan and write their blocks.

MarkdownSource lists a workspace's markdown files (files.py), scans each into blocks (scan.py,
file_blocks.py) and answers counts, pages, searches and ids (``md:<file>:<key>``, blocks.py)
from them. Writes splice only a block's lines and replace the file atomically; every other byte
stays as it was. A parse is cached per file and reused while the file is unchanged.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ...atomic_file import rewrite
from ...detect.looks import is_dir, is_file, names
from ...errors import ConflictError, NotFoundError, NothingToDoError, UnreadableStoreError, UnsupportedError
from ...model import GLOBAL_CHANNEL, Kind, Memory, SourceRef, Status
from ...query import MemoryQuery, Order, sort_key
from ...salience import NOT_KEPT, declare_salience
from ...source import (
    DELETE,
    EDIT,
    PROMOTE,
    PURGE,
    Capabilities,
    Change,
    Plan,
    PlanContext,
    Snapshot,
    bin_by,
    count_by,
    keyword_rank,
    matches,
    page_of,
    revision_of,
    summed,
)
from .blocks import (
    Block,
    content_key,
    normalized,
    parse_record_id,
    record_id_for,
    render_block,
)
from .file_blocks import FileBlocks
from .file_index import SETTLED_NS, FileIndex, FileSummary, Token, now_ns, summarize, token_of
from .files import (
    BOM_BYTES,
    LEARNINGS_FILES,
    MEMORY_DIRS,
    MEMORY_FILE,
    ROOT_FILES,
    daily_date,
    file_or_unreadable,
    inside,
    layer_for,
    markdown_files_under,
    refuse_unwritable,
    require_utf8,
    unlisted_folder,
)
from .scan import MAX_PARSED_BYTES, MAX_SCANNED_BLOCKS, quick_groups, scan

CHANNEL_HEADING = re.compile(r"^(?:project|channel)\s*[:=]\s*(\S+)", re.IGNORECASE)

HASHTAG = re.compile(r"(?<![\w#&])#([A-Za-z][\w/-]*)")
# Files up to this size are compared by content, not only by stat, before a cached parse is reused.
_REHASH_BELOW = 1 << 20
_KEEP_SCANNED_BELOW = 64 << 20  # a write re-reads the file: bytes equal to the last read reuse its scan
# Scanned files kept in memory, the most recently used (a workspace of a thousand daily logs is
# counted from its files' summaries, and only the files a page shows are scanned and kept).
_KEEP_PARSED_FILES = 64
_KEEP_PARSED_BYTES = 64 << 20  # (the most recent file is kept, whatever its size)
_DATED_ORDERS = (Order.RECENT, Order.CREATED, Order.ACCESSED)  # a block's date is its file's: pages go file by file
_NO_FILE = FileSummary((0, 0, 0, 0), (), None, settled=False)
# A markdown block keeps no salience (SOUL.md, AGENTS.md, USER.md, MEMORY.md, a daily log...): it
# shows none and is never at risk nor a cleanup candidate. (Memory.salience keeps its default.)
declare_salience(Kind.MARKDOWN.value, NOT_KEPT, "workspace markdown")


def channel_of(heading: str) -> str:
    """The channel of the blocks under heading: a "project: X" (or "channel = X") heading's X."""
    m = CHANNEL_HEADING.match(heading)
    return m.group(1) if m else GLOBAL_CHANNEL


class MarkdownSource:
    """The markdown files of one workspace folder."""

    kind = Kind.MARKDOWN
    format = "markdown"
    label = "workspace markdown"

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._cache: OrderedDict[str, tuple[tuple[int, ...], FileBlocks]] = OrderedDict()
        self._cache_lock = threading.Lock()  # the window reads on several threads
        self._last_scan: dict[str, tuple[bytes, FileBlocks]] = {}
        self._mirrors: set[tuple[str, str]] = set()
        self._mirror_files: frozenset[str] = frozenset()
        self._listed: set[str] = set()  # files the last listing found inside the workspace, no link on the way
        self._summaries: dict[str, FileSummary] = {}
        self._index = FileIndex(self.root)
        # Files that could not be read (not UTF-8, no permission), by the state they were in: each
        # costs its own entries, not the store, until it changes.
        self._unreadable: dict[str, tuple[Token | None, str]] = {}
        # Every file is summarized on open (an unreadable one fails here, not later); a file whose
        # summary an earlier open kept, unchanged since, is not read.
        self._summarized(self.files())

    @staticmethod
    def detect(path: Path) -> float:
        if not is_dir(path):
            return 0.0
        listed = names(path)
        if any(name in listed and is_file(path / name) for name in ROOT_FILES):
            return 1.0
        if "learnings" in listed and any(is_file(path / rel) for rel in LEARNINGS_FILES):
            return 0.9
        for d in MEMORY_DIRS:
            if d in listed and is_dir(path / d) and any(name.endswith(".md") for name in names(path / d)):
                return 0.9
        return 0.0

    @classmethod
    def open(cls, path: Path) -> MarkdownSource:
        return cls(path)

    def close(self) -> None:
        self._cache.clear()
        self._last_scan.clear()
        self._summaries.clear()

    seeks = True  # page() takes after=: a walk through a big file reads each block once

    def capabilities(self, record_id: str | None = None) -> Capabilities:
        return Capabilities(
            editable_fields=("content",),
            can_promote=True,
            can_soft_delete=True,
            keyword_search=True,
        )

    def set_mirrors(self, pairs: set[tuple[str, str]]) -> None:
        """(file, content) pairs that are copies of memories kept in memory.db."""
        self._mirrors = {(f, normalized(c)) for f, c in pairs}
        self._mirror_files = frozenset(f for f, _ in self._mirrors)

    # -- files -------------------------------------------------------------------

    def files(self) -> list[str]:
        return [rel for rel in self._listing()[0] if not self._unreadable_now(rel)]

    def _unreadable_now(self, rel: str) -> bool:
        """Whether rel could not be read and is as it was then (a changed file is tried again)."""
        if rel not in self._unreadable:
            return False
        if self._token(rel) == self._unreadable[rel][0]:
            return True
        del self._unreadable[rel]
        return False

    def unreadable(self) -> dict[str, str]:
        """The workspace's files that cannot be read as they are now, and why."""
        return {rel: reason for rel, (_t, reason) in sorted(self._unreadable.items()) if self._unreadable_now(rel)}

    def _token(self, rel: str) -> Token | None:
        path = self._path(rel)
        try:
            return token_of(path.stat()) if path is not None else None
        except OSError:
            return None

    def problems(self) -> list[str]:
        left_out = self._listing()[1]
        files = self.files()
        unread = [(rel, self._summary(rel).unread_from) for rel in files]
        unreadable = [f"{reason.rstrip('.')}: its entries are not listed, and a step that would write it is refused"
                      for reason in self.unreadable().values()]
        return left_out + unreadable + [
            f"{rel} is too big to read whole: its blocks from line {line + 1} on are not listed "
            f"(Mnemoscope reads up to {MAX_SCANNED_BLOCKS:,} blocks that are not plain bullets, and "
            f"{MAX_PARSED_BYTES >> 20} MB of other markdown, per file)"
            for rel, line in unread
            if line is not None
        ]

    def _listing(self) -> tuple[list[str], list[str]]:
        """The workspace's markdown files, and why any other one was left out: a file or folder
        that links outside the workspace is neither read nor written."""
        candidates = [name for name in ROOT_FILES if file_or_unreadable(self.root / name)]
        candidates += [rel for rel in LEARNINGS_FILES if file_or_unreadable(self.root / rel)]
        left_out: list[str] = []
        trusted: set[str] = set()
        for d in MEMORY_DIRS:
            folder = self.root / d
            if not os.path.isdir(folder):
                continue
            if why := unlisted_folder(self.root, d):
                left_out.append(why)
                continue
            linked, plain = markdown_files_under(self.root, d)
            candidates += sorted(linked + plain)
            trusted.update(plain)
        found = []
        for rel in candidates:
            if rel != rel.encode("utf-8", "replace").decode("utf-8"):
                shown = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
                left_out.append(f"{shown!r} is not a UTF-8 file name; it is neither read nor written")
            elif rel not in trusted and inside(self.root, rel) is None:
                left_out.append(f"{rel} links to a file outside {self.root}; it is neither read nor written")
            else:
                found.append(rel)
        self._listed = trusted
        return found, left_out

    def _path(self, rel: str) -> Path | None:
        """rel's path, None when it leaves the workspace (a file the last listing found with no
        link on its way is not resolved again)."""
        return self.root / rel if rel in self._listed else inside(self.root, rel)

    def blocks(self, rel: str) -> list[Block]:
        return self._parsed(rel).blocks()

    def _parsed(self, rel: str) -> FileBlocks:
        return self._stat_and_parse(rel)[1]

    def _stat_and_parse(self, rel: str) -> tuple[os.stat_result | None, FileBlocks]:
        """rel's stat (taken before it was read; None: no such file) and its blocks."""
        path = self._path(rel)
        if path is None:
            return None, FileBlocks(rel, [], [], b"\n")
        try:
            st = path.stat()
        except (FileNotFoundError, NotADirectoryError):  # (a folder on its way is a file now)
            self._forget(rel)
            return None, FileBlocks(rel, [], [], b"\n")
        key: tuple[int, ...] = (st.st_mtime_ns, st.st_size, st.st_ino)
        cached = self._cache.get(rel)
        data = None
        if st.st_size <= _REHASH_BELOW:
            # Timestamps are coarse (a few ms): an agent's same-size rewrite can keep them.
            data = path.read_bytes()
            key = (*key, hash(data))
        if cached and cached[0] == key:
            with self._cache_lock:
                if rel in self._cache:
                    self._cache.move_to_end(rel)
            return st, cached[1]
        data = path.read_bytes() if data is None else data
        require_utf8(data, rel)
        parsed = scan(data.removeprefix(BOM_BYTES), rel)
        with self._cache_lock:
            self._cache[rel] = (key, parsed)
            self._cache.move_to_end(rel)
            self._last_scan[rel] = (data, parsed) if len(data) <= _KEEP_SCANNED_BELOW else (b"", parsed)
            self._keep_recent()
        return st, parsed

    def _keep_recent(self) -> None:
        """Forget the least recently used scans past what is kept in memory (the lock held)."""
        held = sum(key[1] for key, _ in self._cache.values())
        while len(self._cache) > 1 and (len(self._cache) > _KEEP_PARSED_FILES or held > _KEEP_PARSED_BYTES):
            rel, (key, _) = self._cache.popitem(last=False)
            self._last_scan.pop(rel, None)
            held -= key[1]

    def _forget(self, rel: str) -> None:
        with self._cache_lock:
            self._cache.pop(rel, None)
            self._last_scan.pop(rel, None)
            self._summaries.pop(rel, None)

    def _summary(self, rel: str) -> FileSummary:
        """How many blocks rel holds under each heading: kept from an earlier read while the file
        is unchanged (this process's, or an earlier open's), else read now; a file that cannot
        be read is noted (files() leaves it out) and holds none."""
        try:
            return self._read_summary(rel)
        except (UnreadableStoreError, OSError) as exc:
            reason = str(exc) if isinstance(exc, UnreadableStoreError) else f"{rel} cannot be read ({exc.strerror})"
            self._unreadable[rel] = (self._token(rel), reason)
            return _NO_FILE

    def _read_summary(self, rel: str) -> FileSummary:
        path = self._path(rel)
        token = self._token(rel)
        if token is not None:
            known = self._summaries.get(rel) or self._index.get(rel, token)
            if known is not None and known.token == token and known.settled:
                self._summaries[rel] = known
                return known
        read_at = now_ns()
        quick = self._quick_summary(rel, path, read_at) if path is not None and rel not in self._cache else None
        if quick is not None:
            return quick
        st, parsed = self._stat_and_parse(rel)
        if st is None:
            return _NO_FILE
        summary = summarize(parsed, st, read_at)
        if summary.settled:
            self._summaries[rel] = summary
            self._index.put(rel, summary)
        return summary

    def _quick_summary(self, rel: str, path: Path, read_at: int) -> FileSummary | None:
        """rel's summary found without scanning it into blocks (a daily log's lines are plain
        bullets, headings and blank lines), for a file settled since its last change (whose
        summary is kept): others are scanned, and their scans kept for the next call."""
        try:
            with path.open("rb") as handle:
                st = os.fstat(handle.fileno())
                if not (read_at - st.st_mtime_ns > SETTLED_NS and read_at - st.st_ctime_ns > SETTLED_NS):
                    return None
                data = handle.read()
        except OSError:
            return None
        require_utf8(data, rel)
        groups = quick_groups(data.removeprefix(BOM_BYTES))
        if groups is None:
            return None
        summary = FileSummary(token_of(st), tuple(groups), None, settled=True)
        self._summaries[rel] = summary
        self._index.put(rel, summary)
        return summary

    def _summarized(self, rels: Sequence[str]) -> list[FileSummary]:
        """The summaries of rels (every file of the workspace); those read now are kept for the
        next open, and those of files gone are dropped."""
        found = [self._summary(rel) for rel in rels]
        self._index.forget_except(rels)
        self._index.save()
        return found

    def _scan(self, rel: str, data: bytes) -> FileBlocks:
        """The blocks of data (BOM removed): the last read's when these are the bytes it scanned."""
        scanned, parsed = self._last_scan.get(rel, (None, None))
        if parsed is not None and scanned is not None and scanned.removeprefix(BOM_BYTES) == data:
            return parsed
        return scan(data, rel)

    def describe(self) -> dict[str, Any]:
        return {"format": self.format, "label": self.label, "path": str(self.root)}

    def change_token(self) -> str:
        parts = []
        for rel in self.files():
            try:
                st = (self.root / rel).stat()
            except OSError:
                continue
            parts.append(f"{rel}:{st.st_mtime_ns}:{st.st_size}")
        return "markdown:" + hashlib.sha1("|".join(parts).encode("utf-8")).hexdigest()[:16]

    # -- memories ------------------------------------------------------------------

    def memory(self, block: Block) -> Memory:
        date = self._file_date(block.path)
        return Memory(
            id=block.record_id,
            source=SourceRef(
                Kind.MARKDOWN,
                f"{block.path}:{block.line}-{block.end}",
                path=block.path,
                line_start=block.line,
                line_end=block.end,
            ),
            layer=layer_for(block.path),
            channel=channel_of(block.heading),
            content=block.content,
            created_at=date,
            updated_at=date,
            last_accessed=date,
            tags=tuple(dict.fromkeys(HASHTAG.findall(block.content))),
            metadata={"heading": block.heading} if block.heading else {},
            status=Status.ACTIVE,
            revision=revision_of(block.snapshot()),
        )

    def _file_date(self, rel: str) -> datetime:
        """The date of rel's blocks: a daily log's day, else the file's last change (to the second)."""
        date = daily_date(rel)
        if date is None:
            cached = self._cache.get(rel)
            try:
                mtime_ns = cached[0][0] if cached else (self.root / rel).stat().st_mtime_ns
            except OSError:  # gone since it was listed: it holds no block
                mtime_ns = 0
            date = datetime.fromtimestamp(mtime_ns // 1_000_000_000, timezone.utc)
        return date

    def _sample(self, rel: str, heading: str, date: datetime | None = None) -> Memory:
        """What the blocks of rel under heading share, as a query filters and counts them (all
        but content, tags and id)."""
        date = self._file_date(rel) if date is None else date
        return Memory(
            id=f"md:{rel}:", source=SourceRef(Kind.MARKDOWN, rel, path=rel), layer=layer_for(rel),
            channel=channel_of(heading), content="", created_at=date, updated_at=date, last_accessed=date,
            metadata={"heading": heading} if heading else {}, status=Status.ACTIVE,
        )

    def _selected(self, query: MemoryQuery, rels: Sequence[str] | None = None,
                  named: dict[str, set[int]] | None = None) -> Iterator[tuple[FileBlocks, Memory, Sequence[int]]]:
        """Per file (of rels, default all) and heading, one of its memories (they differ in nothing
        a query filters or orders by but content and id) and the blocks there the query selects;
        copies of memory.db memories left out. named: the blocks query.ids names, per file."""
        if not query.wants_kind(self.kind):
            return
        probe = replace(query, contains=None, ids=())
        needle = query.contains.lower() if query.contains else None
        if query.ids and named is None:
            named = self._blocks_named(query.ids)
        for rel in self.files() if rels is None else rels:
            if named is not None and rel not in named:
                continue
            if needle is not None and not self._may_contain(rel, needle):
                continue
            parsed = self._parsed(rel)
            hidden = self._left_out(parsed)
            texts = list(parsed.contents()) if needle is not None else []
            only = named[rel] if named is not None else None
            date = self._file_date(rel)
            for heading, lo, hi in parsed.groups():
                sample = self._sample(rel, heading, date)
                if not matches(sample, probe):
                    continue
                picked: Sequence[int] = range(lo, hi)
                if hidden or needle is not None or only is not None:
                    picked = [
                        i for i in picked if i not in hidden and (needle is None or needle in texts[i].lower())
                        and (only is None or i in only)
                    ]
                if picked:
                    yield parsed, sample, picked

    def _tallies(self, query: MemoryQuery, rels: Sequence[str] | None = None,
                 named: dict[str, set[int]] | None = None) -> Iterator[tuple[str, str, int]]:
        """Per file (of rels, default all) and heading, how many blocks there the query selects:
        from the file's summary where the query needs no block's text (no text or id filter, no
        copy of a memory.db memory in the file), else from its blocks. Only a heading's channel
        tells its blocks apart from the file's others in what a query filters."""
        if not query.wants_kind(self.kind):
            return
        if query.contains or query.ids:
            named = self._blocks_named(query.ids) if query.ids and named is None else named
            for parsed, sample, picked in self._selected(query, rels, named):
                yield parsed.rel, sample.metadata.get("heading", ""), len(picked)
            return
        anywhere = replace(query, channels=())
        for rel in self.files() if rels is None else rels:
            if self._hides(rel):
                for _parsed, sample, picked in self._selected(query, [rel]):
                    yield rel, sample.metadata.get("heading", ""), len(picked)
            elif matches(self._sample(rel, ""), anywhere):
                for heading, n in self._summary(rel).groups:
                    if not query.channels or channel_of(heading) in query.channels:
                        yield rel, heading, n

    def _sampled(self, query: MemoryQuery) -> Iterator[tuple[Memory, int]]:
        """One memory per file and channel, and how many blocks there the query selects."""
        found: dict[tuple[str, str], tuple[Memory, int]] = {}
        for rel, heading, n in self._tallies(query):
            key = (rel, channel_of(heading))
            sample, before = found.get(key) or (self._sample(rel, heading), 0)
            found[key] = (sample, before + n)
        yield from found.values()

    def _hides(self, rel: str) -> bool:
        """Whether some blocks of rel may be no memories of this source (_left_out): such a file
        is counted from its blocks, not its summary."""
        return rel in self._mirror_files

    def _may_contain(self, rel: str, needle: str) -> bool:
        """False when no block of rel can hold needle (lower case), found without scanning: a
        needle within one line is within the bytes of an ASCII file's line (a block's content is
        its lines less markers, indentation and endings)."""
        if "\n" in needle or "\r" in needle or rel in self._cache:
            return True
        path = self._path(rel)
        try:
            data = path.read_bytes() if path is not None else b""
        except OSError:
            return True
        return not data.isascii() or (needle.isascii() and needle.encode("ascii") in data.lower())

    def _left_out(self, parsed: FileBlocks) -> frozenset[int]:
        """The blocks of a file that are no memories of this source: copies of memory.db memories
        (a format's workspace adds its owner's template text)."""
        return parsed.hidden(frozenset(c for f, c in self._mirrors if f == parsed.rel))

    def _blocks_named(self, ids: Sequence[str]) -> dict[str, set[int]]:
        """Per file, the blocks those of ids that are markdown blocks name."""
        named: dict[str, set[int]] = {}
        files = set(self.files())
        for record_id in ids:
            parsed_id = parse_record_id(record_id) if self.owns(record_id) else None
            if parsed_id is not None and parsed_id[0] in files:
                i = self._parsed(parsed_id[0]).index_of(parsed_id[1])
                if i is not None:
                    named.setdefault(parsed_id[0], set()).add(i)
        return named

    def count(self, query: MemoryQuery) -> int:
        total = sum(n for _, _, n in self._tallies(query))
        self._index.save()
        return total

    def _selected_by_file(self, query: MemoryQuery, rels: Sequence[str] | None = None,
                          named: dict[str, set[int]] | None = None) -> Iterator[tuple[FileBlocks, list[int] | None]]:
        """Per file, the blocks the query selects, in file order (None: all of them)."""
        chosen: dict[str, tuple[FileBlocks, list[Sequence[int]]]] = {}
        for parsed, _, picked in self._selected(query, rels, named):
            chosen.setdefault(parsed.rel, (parsed, []))[1].append(picked)
        for parsed, picks in chosen.values():
            everything = sum(map(len, picks)) == len(parsed)
            yield parsed, None if everything else [i for picked in picks for i in picked]

    def page(self, query: MemoryQuery, limit: int, offset: int = 0, after: Memory | None = None) -> list[Memory]:
        """Files are taken in the query's order, a run of files at a time (files whose blocks
        may interleave in that order): a run before offset (or before `after`, a seek) is
        counted from the files' summaries and passed over; only the files of the page's runs are
        scanned and only their first blocks become memories."""
        if limit <= 0 or not query.wants_kind(self.kind):
            return []
        if after is not None:  # counted from after: no run before offset to pass over by counts
            limit, offset, skip = offset + limit, 0, offset
        named = self._blocks_named(query.ids) if query.ids else None
        files = [rel for rel in self.files() if named is None or rel in named]
        found: list[Memory] = []
        passed = taken = 0  # blocks in the runs passed over, and in those read
        key = sort_key(query.order, query.decay)
        for run in self._runs(files, query):
            side = self._side_of(run, key, after, query.descending) if after is not None else 1
            if side < 0:
                continue
            n = sum(count for _, _, count in self._tallies(query, run, named))
            if not n:
                continue
            if not found and passed + n <= offset:
                passed += n
                continue
            wanted = offset - passed + limit
            for parsed, among in self._selected_by_file(query, run, named):
                if side == 0 and after is not None:  # the run `after` is in: only the blocks beyond it
                    beyond = parsed.beyond(after.id, query.descending)
                    among = beyond if among is None else sorted(set(among) & set(beyond))
                found += map(self.memory, parsed.top(wanted, query.descending, among))
            taken += n
            if taken >= wanted and (after is None or len(found) >= wanted):
                break
        self._index.save()
        if after is not None:
            return page_of(found, query, limit, 0)[skip:]
        return page_of(found, query, limit, offset - passed)

    def _side_of(self, run: list[str], key: Any, after: Memory, descending: bool) -> int:
        """Where a run's blocks stand against `after` in the query's order: -1 all before it, 1
        all beyond it, 0 the run it is in (its blocks share all of their sort key but the id)."""
        first, bound = key(self._sample(run[0], ""))[0], key(after)[0]
        if first == bound:
            return 0
        return -1 if (first > bound) == descending else 1

    def _runs(self, files: list[str], query: MemoryQuery) -> list[list[str]]:
        """files in runs, in the query's order: every block of a run comes before every block of
        the next one. By date, a run is the files of one date; by stored salience (which no block
        keeps: they come in id order, ``md:<file>:<key>``), one file, or several whose ids may
        interleave (a file named as another's name plus ':'); else one run of them all."""
        if query.order in _DATED_ORDERS:
            by_date: dict[datetime, list[str]] = {}
            for rel in files:
                by_date.setdefault(self._file_date(rel), []).append(rel)
            return [by_date[d] for d in sorted(by_date, reverse=query.descending)]
        if query.order is Order.SALIENCE:
            runs: list[list[str]] = []
            for rel in sorted(files, key=lambda r: r + ":"):
                if runs and (rel + ":").startswith(runs[-1][-1] + ":"):
                    runs[-1].append(rel)
                else:
                    runs.append([rel])
            return runs[::-1] if query.descending else runs
        return [files]

    def get(self, memory_id: str) -> Memory | None:
        block = self.block_for(memory_id)
        return self.memory(block) if block else None

    def revisions(self, ids: Sequence[str]) -> dict[str, str]:
        """The revision of each block of ids still in its file (copies of memory.db memories left
        out, as pages leave them), from one pass over the files that hold them."""
        return {m.id: m.revision for m in self.page(MemoryQuery(ids=tuple(ids), statuses=()), len(ids))}

    def counts_by(self, column: str, query: MemoryQuery = MemoryQuery(statuses=())) -> dict[str, int]:
        return summed(
            {key: n * picked for key, n in count_by([sample], column).items()}
            for sample, picked in self._sampled(query)
        )

    def bin_counts(self, query: MemoryQuery, bin_format: str, group_by: str) -> dict[tuple[str, str], int]:
        return summed(
            {key: n * picked for key, n in bin_by([sample], bin_format, group_by).items()}
            for sample, picked in self._sampled(query)
        )

    def keyword_search(self, text_query: str, query: MemoryQuery, k: int) -> list[Memory]:
        words = [w.lower() for w in re.findall(r"\w+", text_query)]
        hits: list[Memory] = []
        for parsed, among in self._selected_by_file(query):
            texts = [text.lower() for text in parsed.contents()]
            indices = range(len(parsed)) if among is None else among
            scores = [(sum(texts[i].count(w) for w in words), i) for i in indices]
            hits += map(self.memory, parsed.best([(s, i) for s, i in scores if s], k))
        return keyword_rank(hits, text_query, k)

    def daily_files(self) -> list[str]:
        return [rel for rel in self.files() if daily_date(rel) is not None]

    # -- the write primitive -----------------------------------------------------------

    def owns(self, record_id: str) -> bool:
        return record_id.startswith("md:")

    def block_for(self, record_id: str) -> Block | None:
        parsed_id = parse_record_id(record_id)
        if parsed_id is None:
            return None
        rel, key = parsed_id
        if rel not in self.files():
            return None
        parsed = self._parsed(rel)
        i = parsed.index_of(key)
        return None if i is None else parsed.block(i)

    def read_record(self, record_id: str) -> Snapshot | None:
        block = self.block_for(record_id)
        return block.snapshot() if block else None

    def find_copy(self, rel: str, content: str) -> Block | None:
        """The first block of rel whose content is content (none outside the workspace)."""
        parsed = self._parsed(rel)
        wanted = normalized(content)
        i = next((i for i, text in enumerate(parsed.contents()) if normalized(text) == wanted), None)
        return None if i is None else parsed.block(i)

    def prepare_write(self, changes: Sequence[Change]) -> None:
        """Refuse, before a step writes anything, a file in a folder this user cannot write in."""
        for rel in sorted({str((c.before or c.after or {}).get("path")) for c in changes}):
            refuse_unwritable(self.root, rel)

    def write_record(
        self, record_id: str, expected: Snapshot | None, new: Snapshot | None
    ) -> Snapshot | None:
        target = expected or new
        assert target is not None
        rel = target["path"]
        path = self._inside(rel)
        result: dict[str, Snapshot | None] = {}

        def splice(original: bytes) -> bytes:
            """Our change applied to the file as it is now (run again if an agent wrote meanwhile)."""
            require_utf8(original, rel)
            data = original.removeprefix(BOM_BYTES)
            bom = original[: len(original) - len(data)]
            parsed = self._scan(rel, data)
            lines = list(parsed.lines)
            if expected is not None:
                block = parsed.find_block(expected["text"], int(expected.get("line") or 0), record_id)
                if block is None:
                    raise ConflictError(
                        f"{rel} changed since it was read: the lines of {record_id} are no longer "
                        "there; nothing was written. Reload and try again."
                    )
                lines[block.line - 1 : block.end] = _byte_lines(new["text"]) if new else []
                # Where the lines were when written, so that undo puts them back there.
                expected["line"] = block.line
                result["snapshot"] = {"path": rel, "line": block.line, "text": new["text"]} if new else None
            else:
                assert new is not None
                at = parsed.insertion_point(int(new["line"]) - 1, len(lines))
                if at > 0 and not lines[at - 1].endswith((b"\n", b"\r")):
                    lines[at - 1] += b"\r\n" if b"\r\n" in data else b"\n"
                lines[at:at] = _byte_lines(new["text"])
                result["snapshot"] = {"path": rel, "line": at + 1, "text": new["text"]}
            return bom + b"".join(lines)

        try:
            rewrite(path, splice, lines_appended_commute=True)
        finally:
            self._forget(rel)
        return result["snapshot"]

    # -- planning ------------------------------------------------------------------------

    def plan(self, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
        snap = self.read_record(memory.id)
        if snap is None:
            raise NotFoundError(f"No memory {memory.id} in {self.root}.")
        if operation == EDIT:
            return self.plan_edit(memory.id, snap, fields["content"])
        if operation in (DELETE, PURGE):
            return Plan([Change(memory.id, snap, None)])
        if operation == PROMOTE:
            return self.plan_promote(memory, snap)
        raise UnsupportedError(f"{memory.id} is a markdown block, which keeps no access count, status or vector.")

    def plan_edit(self, record_id: str, snap: Snapshot, content: str) -> Plan:
        """New lines for a block, shaped like the old ones; refuses to make two blocks of one
        file say the same thing (their ids would be told apart by order only)."""
        new_text = render_block(snap["text"], content)
        if new_text == snap["text"]:
            return Plan()
        rel = snap["path"]
        twin = self.find_same(rel, content)
        if twin is not None and twin.record_id != record_id:
            raise UnsupportedError(
                f"{rel} already says that at line {twin.line} ({twin.record_id}); delete this one instead."
            )
        return Plan([Change(record_id, snap, {**snap, "text": new_text})], new_id=record_id_for(rel, content))

    def plan_promote(self, memory: Memory, snap: Snapshot) -> Plan:
        """A daily-log entry (or a project section's) moves into MEMORY.md."""
        if memory.source.path == MEMORY_FILE:
            raise NothingToDoError(f"{memory.id} is already curated in {MEMORY_FILE}.")
        if daily_date(memory.source.path) is None and memory.channel == GLOBAL_CHANNEL:
            raise UnsupportedError(
                f"{memory.id} is in {memory.source.path}; only daily-log entries "
                "(memory/YYYY-MM-DD.md) or project sections are promoted to MEMORY.md."
            )
        return self.plan_move_to_memory_file(memory.id, snap, memory.content)

    def plan_move_to_memory_file(self, record_id: str, snap: Snapshot, content: str) -> Plan:
        removal = Change(record_id, snap, None)
        added = self.plan_add_to_memory_file(content)
        if not added.changes:
            return Plan([removal], new_id=added.new_id, notes=[f"{MEMORY_FILE} already held it; the entry was removed."])
        return Plan([removal, *added.changes], new_id=added.new_id)

    def plan_add_to_memory_file(self, content: str) -> Plan:
        """A bullet appended to MEMORY.md; no change where MEMORY.md already says it (new_id names that bullet)."""
        already = self.find_same(MEMORY_FILE, content)
        if already is not None:
            return Plan([], new_id=already.record_id)
        line = self.append_bullet_position(MEMORY_FILE)
        inserted = {"path": MEMORY_FILE, "line": line, "text": self.bullet_for(MEMORY_FILE, content)}
        new_id = record_id_for(MEMORY_FILE, content)
        return Plan([Change(new_id, None, inserted)], new_id=new_id)

    def find_same(self, rel: str, content: str) -> Block | None:
        """The first block of rel whose content is content (white space folded)."""
        if not (self.root / rel).is_file():
            return None
        parsed = self._parsed(rel)
        i = parsed.index_of(content_key(content))
        return None if i is None else parsed.block(i)

    def _inside(self, rel: str) -> Path:
        """rel as a path inside the workspace; anything that would leave it is refused."""
        path = inside(self.root, rel)
        if path is None:
            raise UnsupportedError(f"{rel!r} is not a file inside {self.root}; nothing was written.")
        return path

    def bullet_for(self, rel: str, content: str) -> str:
        """A bullet of content as rel would hold it: ending its lines as rel's lines end (CRLF in a
        file written on Windows), LF in a new or one-line file."""
        return render_block("- x" + self.line_ending(rel), content)

    def line_ending(self, rel: str) -> str:
        """How rel's lines end: its first line ending ("\n" where it has none, or no file)."""
        path = inside(self.root, rel)
        if path is None or not path.is_file():
            return "\n"
        for line in self._parsed(rel).lines:
            if line.endswith(b"\r\n"):
                return "\r\n"
            if line.endswith((b"\n", b"\r")):
                return line[-1:].decode("ascii")
        return "\n"

    def append_bullet_position(self, rel: str) -> int:
        """The 1-based line where a bullet appended to rel would start."""
        path = self._inside(rel)
        if not path.exists():
            return 1
        data = path.read_bytes()
        require_utf8(data, rel)
        return len(data.removeprefix(BOM_BYTES).splitlines()) + 1


def _byte_lines(text: str) -> list[bytes]:
    return text.encode("utf-8").splitlines(keepends=True)
