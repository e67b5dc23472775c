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
    __slots__ = ("_rows", "_decode", "_decoded")

    def __init__(self, rows: Sequence[Any], decode: Callable[[Any], Memory]) -> None:
        self._rows = rows
        self._decode = decode
        self._decoded: list[Memory | None] = [None] * len(rows)

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
