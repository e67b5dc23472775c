"""What every command's handler shares: the store its arguments name, opened as the command
needs; its result printed as one JSON document or as text; log lines, messages and usage errors.

Light at import (``--help`` loads it through the command modules): storage is imported by the
functions that open a store.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mnemoscope.storage import Status, StoreError

from . import output

if TYPE_CHECKING:
    from mnemoscope.storage import Curator, MemoryStore

EXIT_INPUT = 2  # bad usage, or input that cannot be read or written as it is
EXIT_BUG = 3


class UsageError(StoreError):
    exit_code = EXIT_INPUT


def open_store_of(
    args: argparse.Namespace, *, read_only: bool = False, writing: bool = False, unfinished_ok: bool = False
) -> MemoryStore:
    """The store args.path names; read-only when asked for, or for a command that only looks
    (unless it is writing after all, as scratchpad --set). unfinished_ok: a read-only open of a
    store a killed step left half-applied goes on (to report it) instead of refusing."""
    from mnemoscope.storage import open_store

    from .terminal_credentials import terminal_credentials

    looking = getattr(args, "looks_only", False) and not writing
    store = open_store(
        args.path, read_only=read_only or args.read_only or looking,
        credentials=terminal_credentials(args.password_stdin), vectors=args.vectors, unfinished_ok=unfinished_ok,
    )
    mode = "read-only" if store.read_only else "for writing"
    log(f"opened {store.location} ({', '.join(kind.value for kind in store.kinds)}) {mode}")
    if getattr(args, "command", None) != "info":  # info lists them under its count
        for part in store.unread():
            note(args, part.line)
    return store


def curator_of(store: MemoryStore) -> Curator:
    from mnemoscope.storage import Curator

    return Curator(store)


def emit(args: argparse.Namespace, data: Any, human: Callable[[Any], str]) -> int:
    """Print data: as one JSON document with --json, else as human(data)'s text. Exit 0."""
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    else:
        text = human(data)
        if text:
            print(text)
    return 0


def emit_outcome(args: argparse.Namespace, outcome: Any) -> int:
    """A curation step done: logged, its notes on stderr (unless --json), its summary printed."""
    data = outcome.to_dict()
    log(f"curation step: {output.outcome(data)}")
    for text in outcome.notes:
        note(args, text)
    return emit(args, data, output.outcome)


def note(args: argparse.Namespace, text: str) -> None:
    """A note about the result on stderr; --json prints the document alone."""
    if not args.json:
        print(f"note: {text}", file=sys.stderr)


def statuses_of(values: list[str]) -> tuple[Status, ...]:
    """--status words as a query's statuses: none for "all", active when none is given."""
    if "all" in values:
        return ()
    return tuple(Status(v) for v in values) or (Status.ACTIVE,)


def log(message: str) -> None:
    """An INFO line of the command line's log, a URL's password scrubbed."""
    import logging

    from mnemoscope.storage.credentials import scrubbed

    logging.getLogger("mnemoscope.cli").info("%s", scrubbed(message))


LONGEST_WORD = 200  # a longer run without a space (a pasted id, a blob) is shown cut, with its length


def say(message: str) -> None:
    """A message for the user: one line on stderr, whatever line breaks the text held, a word over
    LONGEST_WORD characters cut to its start and its length."""
    from mnemoscope.storage.credentials import scrubbed  # a URL's password never reaches the terminal

    words = [w if len(w) <= LONGEST_WORD else f"{w[:60]}…({len(w):,} characters)" for w in scrubbed(message).split()]
    print("mnemoscope: " + " ".join(words), file=sys.stderr)
