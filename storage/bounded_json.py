"""JSON from stores other programs write, read within bounds: a value nested deeper than
MAX_DEPTH is refused as one unreadable value (TooDeep, a JSONDecodeError) instead of a
RecursionError that would fail every read of the store it is in (ls, show, export all build
every row they list). Every reader of a stored value uses loads() here instead of json.loads."""

from __future__ import annotations

import json
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
    """Whether more than limit brackets are ever open at once (strings skipped): a cheap bound,
    checked only for text that holds more than limit opening brackets at all."""
    raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    if raw.count("[") + raw.count("{") <= limit:
        return False
    depth, in_string, escaped = 0, False, False
    for ch in raw:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth -= 1
    return False
