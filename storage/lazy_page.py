"""A page of memories that decodes each row the first time it is read.

A table asks for a few hundred rows and shows a few dozen; decoding a row into a Memory (times,
JSON columns, its revision) costs several times what SQLite takes to return it. A LazyPage
holds the rows as the database returned them and decodes one when it is read, as
QSqlQueryModel reads a record only when a view asks for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

from .model import Memory


class LazyPage(Sequence[Memory]):
    __slots__ = ("_rows", "_decode", "_decoded", "_id_at", "_revision", "_content_at", "_as_dict")

    def __init__(self, rows: Sequence[Any], decode: Callable[[Any], Memory], id_at: int | None = None,
                 revision: Callable[[Any], str] | None = None, content_at: int | None = None,
                 as_dict: Callable[[Any], dict[str, Any]] | None = None) -> None:
        """rows as the store returned them, decode(row) the Memory of one; id_at, when given,
        the index of the memory's id in a row (ids() then decodes nothing); revision, when given,
        a row's Memory.revision from the row itself (revisions() then decodes nothing);
        content_at, with id_at, the index of its content (texts() then decodes nothing); as_dict,
        when given, a row's Memory.to_dict() from the row itself (dicts() then decodes nothing)."""
        self._rows = rows
        self._decode = decode
        self._decoded: list[Memory | None] = [None] * len(rows)
        self._id_at = id_at
        self._revision = revision
        self._content_at = content_at
        self._as_dict = as_dict

    def dicts(self) -> Iterator[dict[str, Any]]:
        """Each memory's to_dict(), in order (an export writes these)."""
        as_dict = self._as_dict
        for index, row in enumerate(self._rows):
            memory = self._decoded[index]
            if memory is None and as_dict is not None:
                yield as_dict(row)
            else:
                yield self[index].to_dict()

    def revisions(self) -> list[str]:
        """The memories' revisions, in order."""
        if self._revision is None:
            return [memory.revision for memory in self]
        return [self._revision(row) for row in self._rows]

    def ids(self) -> list[str]:
        """The memories' ids, in order."""
        if self._id_at is None:
            return [memory.id for memory in self]
        at = self._id_at
        return [row[at] for row in self._rows]

    def texts(self) -> list[tuple[str, str]]:
        """The memories' (id, content), in order."""
        if self._id_at is None or self._content_at is None:
            return [(memory.id, memory.content) for memory in self]
        at, content_at = self._id_at, self._content_at
        return [(row[at], row[content_at]) for row in self._rows]

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> Memory: ...

    @overload
    def __getitem__(self, index: slice) -> list[Memory]: ...

    def __getitem__(self, index: int | slice) -> Memory | list[Memory]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._rows)))]
        memory = self._decoded[index]
        if memory is None:
            memory = self._decoded[index] = self._decode(self._rows[index])
        return memory

    def __iter__(self) -> Iterator[Memory]:
        for index in range(len(self._rows)):
            yield self[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to a list, so unhashable like one

    def __repr__(self) -> str:
        return f"<LazyPage of {len(self._rows)} memories>"


def page_ids(page: Sequence[Memory]) -> list[str]:
    """The ids of a page's memories, without decoding a LazyPage's rows."""
    return page.ids() if isinstance(page, LazyPage) else [memory.id for memory in page]


def page_revisions(page: Sequence[Memory]) -> list[str]:
    """The revisions of a page's memories, without decoding a LazyPage's rows where it can."""
    return page.revisions() if isinstance(page, LazyPage) else [memory.revision for memory in page]


def changed_positions(old: Sequence[Memory], new: Sequence[Memory]) -> list[int]:
    """The positions where new holds another memory than old, or another version of it. Two
    LazyPages compare the rows as the store returned them, decoding nothing."""
    if isinstance(old, LazyPage) and isinstance(new, LazyPage):
        pairs: Iterator[tuple[Any, Any]] = zip(old._rows, new._rows, strict=False)
    else:
        pairs = zip(old, new, strict=False)
    changed = [n for n, (was, now) in enumerate(pairs) if was != now]
    return changed + list(range(min(len(old), len(new)), max(len(old), len(new))))


def page_texts(page: Sequence[Memory]) -> list[tuple[str, str]]:
    """The (id, content) of a page's memories, without decoding a LazyPage's rows."""
    return page.texts() if isinstance(page, LazyPage) else [(memory.id, memory.content) for memory in page]
