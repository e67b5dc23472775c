"""The blocks of one scanned file, looked up by key and ordered by id without making them all.

A big file's plain bullets (see scan.py) are kept as runs of lines; their keys are computed in
bulk (numpy, loaded when a file's keys are first needed) and a run's lines become Blocks only
when asked for.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import itertools
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ...errors import UnsupportedError
from .blocks import Block, content_digest, normalized, split_key

if TYPE_CHECKING:  # numpy loads when a file's keys are first needed: a command that only starts needs none
    import numpy as np


@dataclass
class PlainRun:
    """Plain bullets on lines [start, stop) (0-based), under one heading."""

    start: int
    stop: int
    heading: str


class FileBlocks:
    """The blocks of one file in file order; plain bullets become Blocks only when asked for."""

    def __init__(
        self, rel: str, lines: list[bytes], items: list[Block | PlainRun], newline: bytes, unread_from: int | None = None
    ) -> None:
        self.rel = rel
        self.unread_from = unread_from  # 0-based line the scan stopped at (the file is too big to read whole)
        self.lines = lines
        self.items = items
        self.newline = newline
        self.starts = [0]
        for item in items:
            self.starts.append(self.starts[-1] + (item.stop - item.start if isinstance(item, PlainRun) else 1))
        self._keys: np.ndarray | None = None
        self._occurrences: np.ndarray | None = None
        self._blocks: list[Block] | None = None
        self._hidden: tuple[frozenset[str], frozenset[int]] | None = None

    def __len__(self) -> int:
        return self.starts[-1]

    def raw(self, i: int) -> Block:
        """Block i, as if its content were the first of its kind in the file (occurrence 1)."""
        k = bisect.bisect_right(self.starts, i) - 1
        item = self.items[k]
        if isinstance(item, Block):
            return item
        return self._plain(item.start + i - self.starts[k], item.heading)

    def _plain(self, line: int, heading: str) -> Block:
        text = self.lines[line].decode("utf-8")
        content = text[2 : len(text) - len(self.newline)]
        return Block(self.rel, line + 1, line + 1, text, content, heading)

    def contents(self) -> Iterator[str]:
        """Each block's content, in file order."""
        cut = slice(2, -len(self.newline) or None)
        for item in self.items:
            if isinstance(item, Block):
                yield item.content
            else:
                yield from (line[cut].decode("utf-8") for line in self.lines[item.start : item.stop])

    def keys(self) -> np.ndarray:
        """Each block's content key without its ~n, as the number its 12 hex digits spell
        (repeats of one content share it)."""
        if self._keys is None:
            cut = operator.itemgetter(slice(2, -len(self.newline) or None))
            digests = [
                content_digest(item.content)
                if isinstance(item, Block)
                else b"".join(map(_DIGEST, map(_sha1, map(cut, self.lines[item.start : item.stop]))))
                for item in self.items
            ]
            self._keys = _key_numbers(b"".join(digests))
        return self._keys

    def block(self, i: int) -> Block:
        return self.numbered([i])[0]

    def blocks(self) -> list[Block]:
        if self._blocks is None:
            self._blocks = self.numbered(range(len(self)))
        return self._blocks

    def numbered(self, indices: Sequence[int]) -> list[Block]:
        """Blocks by index, with their occurrence among the blocks of the same content (a page of
        a file of 100,000 equal bullets costs its own blocks, not the file's)."""
        occurrences = self.occurrences()
        return [self._numbered(i, int(occurrences[i])) for i in indices]

    def _numbered(self, i: int, occurrence: int) -> Block:
        block = self.raw(i)
        return replace(block, occurrence=occurrence) if occurrence > 1 else block

    def occurrences(self) -> np.ndarray:
        """Each block's occurrence among the blocks of its content (1 for the first), computed
        once per scan: a stable sort groups equal keys in file order."""
        if self._occurrences is None:
            import numpy as np

            keys = self.keys()
            order = np.argsort(keys, kind="stable")
            ordered = keys[order]
            first = np.ones(len(keys), dtype=bool)
            first[1:] = ordered[1:] != ordered[:-1]
            position = np.arange(len(keys))
            group_start = np.maximum.accumulate(np.where(first, position, 0))
            self._occurrences = np.empty(len(keys), dtype=np.int64)
            self._occurrences[order] = position - group_start + 1
        return self._occurrences

    def index_of(self, key: str) -> int | None:
        """The block whose key (with ~n) is key."""
        import numpy as np

        parts = split_key(key)
        if parts is None:
            return None
        digest, occurrence = parts
        same = np.flatnonzero(self.keys() == np.uint64(int(digest, 16)))
        return int(same[occurrence - 1]) if occurrence <= len(same) else None

    def beyond(self, record_id: str, descending: bool) -> list[int]:
        """The blocks whose ids come after record_id in id order (before it, descending)."""
        import numpy as np

        prefix = f"md:{self.rel}:"
        parts = split_key(record_id[len(prefix):]) if record_id.startswith(prefix) else None
        if parts is None:  # an id of another file (or no block's): all of this file's ids are on one side of it
            if record_id.startswith(prefix):
                return [i for i in range(len(self)) if (self.block(i).record_id < record_id) == descending]
            return list(range(len(self))) if (record_id < prefix) != descending else []
        digest, occurrence = parts
        keys, bound = self.keys(), np.uint64(int(digest, 16))
        orders = _id_order(np.append(self.occurrences(), occurrence))
        order, orders = orders[-1], orders[:-1]
        if descending:
            mask = (keys < bound) | ((keys == bound) & (orders < order))
        else:
            mask = (keys > bound) | ((keys == bound) & (orders > order))
        return np.flatnonzero(mask).tolist()

    def find_block(self, text: str, line: int, record_id: str) -> Block | None:
        """The block whose lines are exactly text: when the text repeats, the one record_id names,
        else the one nearest line (1-based, where it was read)."""
        found = self.find_text(text)
        if len(found) <= 1:
            return self.raw(found[0]) if found else None
        same = self.numbered(found)
        named = [b for b in same if b.record_id == record_id]
        if named:
            return named[0]
        return min(same, key=lambda b: abs(b.line - line))

    def insertion_point(self, at: int, line_count: int) -> int:
        """0-based line to insert at: at, moved past any block it would split (plain bullets are
        one line each, never split)."""
        at = min(max(at, 0), line_count)
        if self.unread_from is not None and at > self.unread_from:
            raise UnsupportedError(
                f"{self.rel} is too big to read whole; Mnemoscope adds nothing past line {self.unread_from + 1}, "
                "which it has not read. Nothing was written."
            )
        for block in self.items:
            if isinstance(block, Block) and block.line - 1 < at < block.end:
                return block.end
        return at

    def groups(self) -> list[tuple[str, int, int]]:
        """(heading, first, stop) of each stretch of blocks under one heading."""
        out: list[tuple[str, int, int]] = []
        for item, lo, hi in zip(self.items, self.starts, self.starts[1:], strict=False):
            if out and out[-1][0] == item.heading:
                out[-1] = (item.heading, out[-1][1], hi)
            else:
                out.append((item.heading, lo, hi))
        return out

    def top(self, k: int, descending: bool, among: Sequence[int] | None = None) -> list[Block]:
        """A few blocks that include the k with the highest (descending) or lowest ids among the
        blocks chosen (all by default, else indices in file order): every block whose key is one
        of the k best keys, so that repeats of one content (told apart by ~n) come in whole."""
        import numpy as np

        keys = self.keys()
        pool = keys if among is None else keys[list(among)]
        if k <= 0 or not len(pool):
            return []
        occurrences = self.occurrences()
        best = _extremes(pool, k, largest=descending)
        chosen = np.flatnonzero(np.isin(keys, np.fromiter(best, np.uint64, len(best))))
        if among is not None:
            chosen = chosen[np.isin(chosen, np.asarray(among))]
        chosen = self._k_per_content(chosen, k, descending)
        return [self._numbered(i, int(occurrences[i])) for i in chosen.tolist()]

    def _k_per_content(self, chosen: np.ndarray, k: int, descending: bool) -> np.ndarray:
        """chosen (indices) with many repeats of one content cut to the k with the best ids."""
        import numpy as np

        keys, occurrences = self.keys(), self.occurrences()
        values, counts = np.unique(keys[chosen], return_counts=True)
        for key in values[counts > k]:
            same = chosen[keys[chosen] == key]
            order = _id_order(occurrences[same])
            kept = same[np.argpartition(-order if descending else order, k - 1)[:k]]
            chosen = np.union1d(chosen[keys[chosen] != key], kept)
        return chosen

    def best(self, scored: list[tuple[int, int]], k: int) -> list[Block]:
        """A few of the (score, index) blocks that include the k best, highest score first and
        then lowest id: every block scored above the k-th score, and those at it whose key is
        one of the lowest keys there (of many repeats of one content, the k with the lowest ids)."""
        import numpy as np

        if k <= 0:
            return []
        if len(scored) <= k:
            return self.numbered([i for _, i in scored])
        bound = heapq.nlargest(k, (s for s, _ in scored))[-1]
        above = [i for s, i in scored if s > bound]
        tied = [i for s, i in scored if s == bound]
        tied_keys = self.keys()[tied]
        lowest = _extremes(tied_keys, k - len(above), largest=False)
        kept = np.isin(tied_keys, np.fromiter(lowest, np.uint64, len(lowest))).tolist()
        at_bound = self._k_per_content(np.asarray(list(itertools.compress(tied, kept)), dtype=np.int64), k, False)
        return self.numbered(sorted(above + at_bound.tolist()))

    def hidden(self, contents: frozenset[str]) -> frozenset[int]:
        """The blocks whose content (white space folded, case ignored) is one of contents."""
        if not contents:
            return frozenset()
        if self._hidden is None or self._hidden[0] != contents:
            found = frozenset(i for i, text in enumerate(self.contents()) if normalized(text) in contents)
            self._hidden = (contents, found)
        return self._hidden[1]

    def find_text(self, text: str) -> list[int]:
        """The blocks whose lines are exactly text."""
        wanted = text.encode("utf-8")
        found: list[int] = []
        for item, lo in zip(self.items, self.starts, strict=False):
            if isinstance(item, Block):
                if item.text == text:
                    found.append(lo)
                continue
            line = item.start - 1
            while True:
                try:
                    line = self.lines.index(wanted, line + 1, item.stop)
                except ValueError:
                    break
                found.append(lo + line - item.start)
        return found


_DIGEST = operator.methodcaller("digest")
try:  # CPython's own SHA-1 starts a hash sooner than OpenSSL's: it counts for millions of short bullets
    from _sha1 import sha1 as _sha1
except ImportError:  # a Python built without it
    _sha1 = hashlib.sha1


def _key_numbers(digests: bytes) -> np.ndarray:
    """The first 6 bytes (12 hex digits) of each 20-byte SHA-1 digest, as unsigned integers."""
    import numpy as np

    count = len(digests) // 20
    padded = np.zeros((count, 8), np.uint8)
    padded[:, 2:] = np.frombuffer(digests, np.uint8).reshape(count, 20)[:, :6]
    return padded.view(">u8").ravel().astype(np.uint64)


def _extremes(keys: np.ndarray, k: int, largest: bool) -> set[int]:
    """The distinct values among the k largest (or smallest) of keys."""
    import numpy as np

    if k <= 0:
        return set()
    if k < len(keys):
        keys = np.partition(keys, len(keys) - k)[len(keys) - k :] if largest else np.partition(keys, k - 1)[:k]
    return set(keys.tolist())


def _id_order(occurrences: np.ndarray) -> np.ndarray:
    """A number per occurrence that sorts as the ids' ``~n`` suffixes do as text: the first (no
    suffix) before all, then ~10 before ~100 before ~2 (each padded to one width, shorter first)."""
    import numpy as np

    occurrence = occurrences.astype(np.int64)
    digits = np.floor(np.log10(np.maximum(occurrence, 1))).astype(np.int64) + 1
    width = int(digits.max())
    order = occurrence * 10 ** (width - digits) * (width + 1) + digits
    return np.where(occurrence <= 1, -1, order)

