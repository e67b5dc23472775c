"""JSON from stores other programs write, read within bounds: a value nested deeper than
MAX_DEPTH is refused as one unreadable value (TooDeep, a JSONDecodeError) instead of a
RecursionError that would fail every read of the store it is in (ls, show, export all build
every row they list). Every reader of a stored value uses loads() here instead of json.loads."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

MAX_DEPTH = 64  # deeper than any memory metadata a tool writes; far under Python's recursion limit


class TooDeep(json.JSONDecodeError):
    """A JSON value nested deeper than MAX_DEPTH: a JSONDecodeError, so that every reader that
    takes bad JSON as one unreadable value takes this one so too."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "", 0)
        self.message = message

    def __str__(self) -> str:
        return self.message


def loads(text: str | bytes) -> Any:
    """json.loads, refusing (TooDeep) a value nested deeper than MAX_DEPTH; JSONDecodeError as json's."""
    if _opens_deeper_than(text, MAX_DEPTH):
        raise TooDeep(f"nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text)
    except RecursionError:
        raise TooDeep(f"nested deeper than {MAX_DEPTH} levels") from None


def _opens_deeper_than(text: str | bytes, limit: int) -> bool:
    """Whether more than limit brackets are ever open at once (strings skipped): a cheap bound. A
    regex (in C) steps over each string whole and stops at each bracket: a value nested deep is
    told at its first limit + 1 brackets, and a long string costs one step, whatever its length."""
    raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    if len(raw) <= limit:
        return False
    if len(raw) > 1 << 20:  # a big value is read again and again in one command (a row, its copies)
        return _big_opens_deeper_than(raw, limit)
    return _scan(raw, limit)


@functools.lru_cache(maxsize=4)
def _big_opens_deeper_than(raw: str, limit: int) -> bool:
    return raw.count("[") + raw.count("{") > limit and _scan(raw, limit)


def _scan(raw: str, limit: int) -> bool:
    depth = 0
    for found in _TOKEN.finditer(raw):
        ch = found.group()[0]
        if ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth -= 1
    return False


# A string (its escapes stepped over; an unclosed one runs to the end), or a bracket.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)
