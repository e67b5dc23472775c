"""Reading a store: info, ls, show, search, sessions, history, timeline, graph, salience and
scratchpad. Each opens the store read-only, so not a byte of it changes (scratchpad --set and
--delete excepted: one curation step)."""

from __future__ import annotations

import argparse
import dataclasses
from datetime import datetime
from pathlib import Path

# Light names only (mnemoscope.storage loads each on first use): these import no database library.
from mnemoscope.storage import Kind, Layer, MemoryQuery, NotFoundError, Order, Status
from mnemoscope.storage.salience import salience_kept, shown_salience
from mnemoscope.storage.timeutil import parse_time, utcnow

from .. import output
from ..arguments import STORE_HELP, store_argument
from ..command_runtime import UsageError, curator_of, emit, note, open_store_of, statuses_of
from . import CommandParsers

ORDER = 20


def date_argument(value: str) -> datetime:
    parsed = parse_time(value)
    if parsed is None:
        raise argparse.ArgumentTypeError(f"not a date: {value!r} (use YYYY-MM-DD or ISO 8601)")
    return parsed


def register(commands: CommandParsers) -> None:
    p = commands.add("info", "what a store holds: kinds, counts per kind/channel/layer, schema version", cmd_info,
                     looks_only=True)
    p.add_argument("path", type=store_argument, help=STORE_HELP)

    p = commands.add("ls", "list memories, filtered and ordered by the store", cmd_ls, looks_only=True)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("--channel", action="append", default=[], help="repeat for several")
    p.add_argument("--layer", action="append", default=[], choices=[x.value for x in Layer])
    p.add_argument("--kind", action="append", default=[], choices=[k.value for k in Kind])
    p.add_argument("--status", action="append", default=[], choices=[s.value for s in Status] + ["all"])
    p.add_argument("--since", type=date_argument, help="created on or after this date")
    p.add_argument("--until", type=date_argument, help="created before this date")
    p.add_argument("--contains", help="content contains this text")
    p.add_argument("--tag", action="append", default=[],
                   help="carries this tag (repeat: every one of them), where the store's tags can be counted")
    p.add_argument("--order", default="recent", choices=[o.value for o in Order])
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--offset", type=int, default=0)

    p = commands.add("show", "one memory with its provenance, copies and audit history", cmd_show, looks_only=True)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("id")

    p = commands.add("search", "keyword, vector or hybrid search: matches scored 0-1 (0.5 and up), weak ones "
                     "labelled; --like ID finds similar memories", cmd_search,
                     looks_only=True)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("query", nargs="?", default="")
    p.add_argument("--mode", default="hybrid", choices=["keyword", "vector", "hybrid"])
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--like", metavar="ID", help="memories whose stored vectors are nearest to ID's")
    p.add_argument("--channel", action="append", default=[])

    p = commands.add("timeline", "memory and turn counts per day, week or month", cmd_timeline, looks_only=True)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("--bin", default="day", choices=["day", "week", "month"])
    p.add_argument("--group-by", default="kind", choices=["kind", "layer", "channel"])
    p.add_argument("--since", type=date_argument)
    p.add_argument("--until", type=date_argument)
    p.add_argument("--events", metavar="BIN", help="also list the memories of one bin, e.g. 2026-W44")

    p = commands.add("graph", "the entity graph, or the ego graph around --center", cmd_graph, looks_only=True)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("--center", help="entity id or name")
    p.add_argument("--depth", type=int, default=1, choices=[1, 2, 3])
    p.add_argument("--type", action="append", default=[], help="relation type filter")
    p.add_argument("--channel", action="append", default=[])
    p.add_argument("--graphml", type=Path, metavar="FILE", help="also write GraphML here")

    p = commands.add("scratchpad", "sessions -> scratchpad keys -> values; with --session, --set or --delete one key "
                     "(one undoable step)", cmd_scratchpad, looks_only=True)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("--session")
    change = p.add_mutually_exclusive_group()
    change.add_argument("--set", metavar="KEY=VALUE",
                        help="set (or add) a key of --session; VALUE is stored as JSON when it parses as JSON, "
                        "else as text")
    change.add_argument("--delete", metavar="KEY", help="delete a key of --session")
    p.add_argument("--expect-value", metavar="VALUE",
                   help="with --set or --delete: refuse if the key no longer holds this value (as listed)")

    p = commands.add("sessions", "sessions, threads and conversations; with --session, that one's turns", cmd_sessions,
                     looks_only=True)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("--session")
    p.add_argument("--limit", type=int, default=200)
    p.add_argument("--offset", type=int, default=0)

    p = commands.add("salience", "effective salience: one memory's curve, or the store's histogram and at-risk list",
                     cmd_salience, looks_only=True)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("id", nargs="?")
    p.add_argument("--at", type=date_argument, help="evaluate at this date instead of now")

    p = commands.add("history", "the audit log, newest first", cmd_history, looks_only=True)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("--id", help="only steps touching this memory")
    p.add_argument("--limit", type=int, default=50)


def cmd_info(args: argparse.Namespace) -> int:
    with open_store_of(args, unfinished_ok=True) as store:  # (its problems name the step)
        return emit(args, store.info(), output.info)


def cmd_ls(args: argparse.Namespace) -> int:
    if args.limit < 0 or args.offset < 0:
        raise UsageError("--limit and --offset must not be negative.")
    query = MemoryQuery(
        channels=tuple(args.channel),
        layers=tuple(Layer(x) for x in args.layer),
        kinds=tuple(Kind(k) for k in args.kind),
        statuses=statuses_of(args.status),
        since=args.since,
        until=args.until,
        contains=args.contains,
        order=Order(args.order),
    )
    with open_store_of(args) as store:
        query = dataclasses.replace(query, decay=store.settings.salience)  # effective_salience: the store's decay
        if args.tag:
            tagged = store.tagged(tuple(args.tag), query)
            if tagged is None:
                raise UsageError(f"{store.location} cannot be filtered by tag (its tags are not counted here).")
        if args.tag and not tagged:
            total, memories = 0, []
        else:
            query = dataclasses.replace(query, ids=tuple(tagged)) if args.tag else query
            total = store.count(query)
            memories = store.page(query, limit=args.limit, offset=args.offset)
        data = {
            "total": total,
            "offset": args.offset,
            "limit": args.limit,
            # (a salience the owner keeps none of is None, not Memory's default)
            "memories": [{**m.to_dict(), "salience": shown_salience(m)} for m in memories],
        }
        return emit(args, data, output.memory_table)


def cmd_show(args: argparse.Namespace) -> int:
    with open_store_of(args) as store:
        memory = store.get(args.id)
        data = memory.to_dict()
        data["copies"] = store.copies(memory.id)
        model = store.settings.salience
        now = model.effective_shown(memory, utcnow())
        data["salience"] = shown_salience(memory)  # None where the owner keeps none
        data["salience_now"] = round(now, 6) if now is not None else None
        data["salience_decay"] = salience_kept(memory).decay
        data["salience_formula"] = model.formula_of(memory)
        data["promotion"] = store.settings.promotion.check(memory)
        data["relations"] = [r.to_dict() for r in store.relations(touching=memory.id)]
        data["history"] = [e.to_dict() for e in store.history(target=memory.id)]
        data["owner_history"] = store.owner_history(memory.id)
        return emit(args, data, output.memory_detail)


def cmd_search(args: argparse.Namespace) -> int:
    from mnemoscope.storage.views.search import search, similar

    query = MemoryQuery(channels=tuple(args.channel))
    with open_store_of(args) as store:
        if args.like:
            result = similar(store, args.like, k=args.k, query=query)
        elif not args.query.strip():
            raise UsageError("Give a QUERY, or --like ID.")
        else:
            result = search(store, args.query, mode=args.mode, k=args.k, query=query)
        for notice in result.notices:
            note(args, notice)
        return emit(args, result.to_dict(), output.search_results)


def cmd_timeline(args: argparse.Namespace) -> int:
    from mnemoscope.storage.views.timeline import bin_bounds, events, timeline

    query = MemoryQuery(statuses=(), since=args.since, until=args.until)
    with open_store_of(args) as store:
        data = timeline(store, bin=args.bin, group_by=args.group_by, query=query)
        if args.events:
            try:
                start, end = bin_bounds(args.events, args.bin)
            except ValueError:
                raise UsageError(f"{args.events!r} is not a {args.bin} bin (see the BIN column).") from None
            data["events"] = {
                "bin": args.events,
                "memories": [m.to_dict() for m in events(store, start, end, query=MemoryQuery(statuses=()))],
            }
        return emit(args, data, output.timeline)


def cmd_graph(args: argparse.Namespace) -> int:
    from mnemoscope.storage.views.graph import graph_view, to_json, write_graphml

    with open_store_of(args) as store:
        graph, info = graph_view(
            store, center=args.center, depth=args.depth, relation_types=args.type, channels=args.channel
        )
        if args.graphml:
            write_graphml(graph, args.graphml)
            info["graphml"] = str(args.graphml)
        return emit(args, to_json(graph, info), output.graph)


def cmd_scratchpad(args: argparse.Namespace) -> int:
    from mnemoscope.storage.views.scratchpad import scratchpad

    if args.set is not None or args.delete is not None:
        return _scratch_step(args)
    if args.expect_value is not None:
        raise UsageError("--expect-value goes with --set or --delete.")
    with open_store_of(args) as store:
        sessions = scratchpad(store, args.session)
        if args.session and not sessions:
            raise NotFoundError(f"No session {args.session}.")
        return emit(args, {"sessions": sessions}, output.scratchpad)


def _scratch_step(args: argparse.Namespace) -> int:
    """scratchpad --set / --delete: one curation step on a store opened for writing."""
    from mnemoscope.storage.curation import scratch_value

    if not args.session:
        raise UsageError("Give the session whose scratchpad to change with --session.")
    key = text = ""
    if args.set is not None:
        key, equals, text = args.set.partition("=")
        if not equals or not key:
            raise UsageError(f"--set takes KEY=VALUE, not {args.set!r}.")
    # writing: scratchpad is a reading command (opened read-only) unless it sets or deletes a key.
    with open_store_of(args, writing=True) as store:
        curator = curator_of(store)
        if args.set is not None:
            outcome = curator.set_scratch(args.session, key, scratch_value(text), expected=args.expect_value)
        else:
            outcome = curator.delete_scratch(args.session, args.delete, expected=args.expect_value)
        for message in outcome.notes:
            note(args, message)
        return emit(args, outcome.to_dict(), output.scratch_outcome)


def cmd_sessions(args: argparse.Namespace) -> int:
    with open_store_of(args) as store:
        sessions = store.sessions()
        if not args.session:
            return emit(args, {"sessions": [s.to_dict() for s in sessions]}, output.sessions)
        session = next((s for s in sessions if s.id == args.session), None)
        if session is None:
            raise NotFoundError(f"No session {args.session} in {store.location}.")
        turns = store.turns(session.id, limit=args.limit, offset=args.offset)
        data = {"session": session.to_dict(), "turns": [t.to_dict() for t in turns]}
        return emit(args, data, output.sessions)


def cmd_salience(args: argparse.Namespace) -> int:
    from mnemoscope.storage.views.salience import salience_of, salience_overview

    with open_store_of(args) as store:
        if args.id:
            return emit(args, salience_of(store, args.id, args.at), output.salience_one)
        return emit(args, salience_overview(store, args.at), output.salience_overview)


def cmd_history(args: argparse.Namespace) -> int:
    with open_store_of(args) as store:
        entries = store.history(limit=args.limit, target=args.id)
        owners = store.owner_history(args.id)[-args.limit:][::-1] if args.id else store.owner_audit(args.limit)
        return emit(args, {"entries": [e.to_dict() for e in entries], "owner_audit": owners}, output.history)
