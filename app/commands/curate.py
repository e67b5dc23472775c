"""Curating memories: edit, promote, rm, reinforce, reembed, restore, undo and redo. Each is one
undoable curation step on a store opened for writing (promote --candidates only lists)."""

from __future__ import annotations

import argparse
from typing import Any

# Light names only (mnemoscope.storage loads each on first use): these import no database library.
from mnemoscope.storage import Layer, MemoryQuery, NotFoundError, Status

from .. import output
from ..arguments import STORE_HELP, store_argument
from ..command_runtime import UsageError, curator_of, emit, emit_outcome, open_store_of
from . import CommandParsers

ORDER = 30


def selection_arguments(p: argparse.ArgumentParser) -> None:
    """The --match-* flags that select memories instead of naming their ids."""
    p.add_argument("--match-channel", action="append", default=[], help="instead of ids: every memory in this channel")
    p.add_argument("--match-layer", action="append", default=[], choices=[x.value for x in Layer])
    p.add_argument("--match-contains", help="instead of ids: every memory whose text contains this")
    p.add_argument("--match-status", action="append", default=[], choices=[x.value for x in Status],
                   help="with --match-*: these statuses (default active; deleted for restore)")


def selected(args: argparse.Namespace, store: Any, default_status: Status = Status.ACTIVE) -> list[str]:
    """The ids named, or every memory the --match-* filter selects (never both)."""
    filtered = bool(args.match_channel or args.match_layer or args.match_contains)
    if args.id and filtered:
        raise UsageError("Give memory ids or --match-* filters, not both.")
    if not filtered:
        if not args.id:
            raise UsageError("Give one or more memory ids, or --match-channel/--match-layer/--match-contains.")
        return list(args.id)
    query = MemoryQuery(
        channels=tuple(args.match_channel),
        layers=tuple(Layer(x) for x in args.match_layer),
        statuses=tuple(Status(x) for x in args.match_status) or (default_status,),
        contains=args.match_contains,
    )
    ids = [m.id for m in store.page(query, limit=store.count(query))]
    if not ids:
        raise NotFoundError("No memory matches those filters; nothing was changed.")
    return ids


def register(commands: CommandParsers) -> None:
    p = commands.add("edit", "edit memories' content, tags, layer, channel or salience (every copy; several ids: "
                     "one step)", cmd_edit)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("id", nargs="*")
    selection_arguments(p)
    p.add_argument("--content")
    p.add_argument("--tag", action="append", help="repeat for several; replaces the tags")
    p.add_argument("--layer", choices=[x.value for x in Layer])
    p.add_argument("--channel")
    p.add_argument("--salience", type=float)
    p.add_argument("--expect-revision", help="refuse if the memory's revision is no longer this")

    p = commands.add("promote", "promote project memories to _global (a linked copy; daily-log bullet -> "
                     "MEMORY.md); several: one step", cmd_promote)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("id", nargs="*")
    selection_arguments(p)
    p.add_argument("--to", default="_global")
    p.add_argument("--reason", default="")
    p.add_argument("--force", action="store_true",
                   help="promote memories below the store's thresholds too (the journal records which they missed)")
    p.add_argument("--candidates", action="store_true",
                   help="list the project facts that meet the thresholds instead (nothing is written)")

    p = commands.add("rm", "delete memories (soft, restorable; several ids or a filter: one undoable step); --purge "
                     "removes them for good (cannot be undone)", cmd_rm)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("id", nargs="*")
    selection_arguments(p)
    p.add_argument("--purge", action="store_true",
                   help="remove for good: every copy, and the text wherever the store or the journal kept it (the "
                        "owner's log, index leftovers, earlier steps' snapshots); the journal keeps only that the "
                        "purge happened. Cannot be undone or restored")

    p = commands.add("reinforce", "count one more access now (pin memories against decay)", cmd_reinforce)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("id", nargs="*")
    selection_arguments(p)

    p = commands.add("reembed", "recompute every vector marked stale with the store's embedder (one undoable step)",
                     cmd_reembed)
    p.add_argument("path", type=store_argument, help=STORE_HELP)

    p = commands.add("restore", "restore deleted or archived memories", cmd_restore)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("id", nargs="*")
    selection_arguments(p)

    p = commands.add("undo", "undo the last curation step", cmd_undo)
    p.add_argument("path", type=store_argument, help=STORE_HELP)

    p = commands.add("redo", "redo the last undone step", cmd_redo)
    p.add_argument("path", type=store_argument, help=STORE_HELP)


def cmd_edit(args: argparse.Namespace) -> int:
    with open_store_of(args) as store:
        outcome = curator_of(store).edit(
            selected(args, store),
            content=args.content,
            tags=args.tag,
            layer=args.layer,
            channel=args.channel,
            salience=args.salience,
            expected_revision=args.expect_revision,
        )
        return emit_outcome(args, outcome)


def cmd_promote(args: argparse.Namespace) -> int:
    if args.candidates:
        if args.id or args.force:
            raise UsageError("--candidates lists; give ids (and --force) without it to promote.")
        with open_store_of(args, read_only=True) as store:
            thresholds = store.settings.promotion
            found = store.promotion_candidates()
            data = {
                "thresholds": {"confidence": thresholds.confidence, "access_count": thresholds.access_count,
                               "conversations": thresholds.conversations},
                "candidates": [{**m.to_dict(), "promotion": thresholds.check(m)} for m in found],
            }
            return emit(args, data, output.promotion_candidates)
    with open_store_of(args) as store:
        outcome = curator_of(store).promote(selected(args, store), to=args.to, reason=args.reason, force=args.force)
        return emit_outcome(args, outcome)


def cmd_rm(args: argparse.Namespace) -> int:
    with open_store_of(args) as store:
        return emit_outcome(args, curator_of(store).delete(selected(args, store), purge=args.purge))


def cmd_reinforce(args: argparse.Namespace) -> int:
    with open_store_of(args) as store:
        return emit_outcome(args, curator_of(store).reinforce(selected(args, store)))


def cmd_reembed(args: argparse.Namespace) -> int:
    from ..progress import Progress

    with open_store_of(args) as store:
        return emit_outcome(args, curator_of(store).reembed(progress=Progress("reembed")))


def cmd_restore(args: argparse.Namespace) -> int:
    with open_store_of(args) as store:
        return emit_outcome(args, curator_of(store).restore(selected(args, store, Status.DELETED)))


def cmd_undo(args: argparse.Namespace) -> int:
    with open_store_of(args) as store:
        return emit_outcome(args, curator_of(store).undo())


def cmd_redo(args: argparse.Namespace) -> int:
    with open_store_of(args) as store:
        return emit_outcome(args, curator_of(store).redo())
