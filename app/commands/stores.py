"""Finding, making and moving stores: demo, discover, init, import, export, map (a foreign SQLite
table read as memories) and embedder (the store's setting for its text queries and new vectors)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemoscope.storage import MemoryQuery, Order, Status

from .. import output
from ..arguments import STORE_HELP, store_argument
from ..command_runtime import UsageError, emit, open_store_of, statuses_of
from . import CommandParsers

if TYPE_CHECKING:
    from mnemoscope.storage import MemoryStore

ORDER = 10


def register(commands: CommandParsers) -> None:
    p = commands.add("demo", "write the demo workspace (all three store kinds) into DIR", cmd_demo)
    p.add_argument("dir", type=Path)

    p = commands.add("discover", "find memory stores: every supported tool's, under DIR (default: home and the tools' "
                     "usual places); nothing is written", cmd_discover, looks_only=True)
    p.add_argument("dir", type=Path, nargs="*")
    p.add_argument("--depth", type=int, default=4, help="how many folder levels below DIR to look (default 4)")

    # A subcommand, not flags on search: the embedder is the store's setting (saved once, like
    # 'map --save'), matched against its vectors when set; search stays a read that writes nothing.
    p = commands.add("embedder", "show or set the embedder of a store's text queries and new vectors: an "
                     "OpenAI-compatible endpoint, the local model, or the lexical hashing one; refused unless it is "
                     "the model (and dimension) that wrote the store's vectors", cmd_embedder)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--openai-compatible", metavar="URL",
                       help="the endpoint's base URL (OpenAI, Azure, Ollama, vLLM, LM Studio: ending in /v1); "
                       "its API key is read from the keyring as 'embeddings:URL', else from "
                       "MNEMOSCOPE_EMBEDDINGS_API_KEY, and never saved with the store")
    which.add_argument("--local", action="store_true",
                       help="WordLlama l2_supercat, offline, semantic (comes with the install)")
    which.add_argument("--hashing", action="store_true",
                       help="the lexical hashing embedder (tests and the demo; not semantic)")
    which.add_argument("--clear", action="store_true", help="forget the store's embedder")
    p.add_argument("--model", help="the model's name (with --openai-compatible)")
    p.add_argument("--dimensions", type=int, help="the vectors' length asked of the model (default: its own)")

    p = commands.add("export", "write memories to OUT ('-': standard output) as JSONL or CSV (every status) or "
                     "markdown (active ones), as they are read", cmd_export, looks_only=True)
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("out", type=Path)
    p.add_argument("--format", required=True, choices=["jsonl", "csv", "markdown"])
    p.add_argument("--status", action="append", default=[], choices=["all", *[s.value for s in Status]],
                   help="which statuses to write (default: all for jsonl and csv, active for markdown)")

    p = commands.add("import", "import any store this tool opens into a native workspace DEST (a folder, or a "
                     "PostgreSQL database's URL: its store is made there if missing; --vectors a Chroma server)",
                     cmd_import)
    p.add_argument("src", type=store_argument)
    p.add_argument("dest", type=store_argument)

    p = commands.add("init", "make an empty native store: a workspace folder, or the schema in an empty PostgreSQL "
                     "database (with --vectors, the native collection on a Chroma server)", cmd_init)
    p.add_argument("path", type=store_argument, help=STORE_HELP)

    p = commands.add("map", "read a table of a SQLite file no format recognises as memories: show the mapping of its "
                     "columns proposed, correct it, and --save it (every command then opens the file with it)", cmd_map)
    p.add_argument("path", type=Path)
    p.add_argument("--table", help="the table to read (default: the remembered one, else the likeliest)")
    p.add_argument("--map", dest="assign", default="", metavar="FIELD=COLUMN,...",
                   help="correct the mapping, e.g. content=body,created=ts (FIELD= unmaps a field)")
    p.add_argument("--save", action="store_true", help="remember the mapping for this file")
    p.add_argument("--forget", action="store_true", help="forget the mapping remembered for this file")


def cmd_demo(args: argparse.Namespace) -> int:
    from mnemoscope.storage.demo import write_demo

    target: Path = args.dir
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} is a file; give a new or empty folder for the demo.")
    if target.exists() and any(target.iterdir()):
        raise UsageError(f"{target} is not empty; the demo is written only into a new or empty folder.")
    with write_demo(target, progress=lambda step: print(f"demo: {step}", file=sys.stderr)) as store:
        return emit(args, store.info(), output.info)


def cmd_discover(args: argparse.Namespace) -> int:
    from mnemoscope.storage.detect.discover import discover

    if args.depth < 0:
        raise UsageError("--depth must not be negative.")
    for folder in args.dir:
        if not folder.exists():
            raise UsageError(f"{folder} does not exist.")
    found = discover(args.dir or None, max_depth=args.depth)
    return emit(args, {"stores": [f.to_dict() for f in found]}, output.discovered)


def cmd_embedder(args: argparse.Namespace) -> int:
    from mnemoscope.storage.embedders.choice import build_embedder

    kind = ("openai-compatible" if args.openai_compatible else "local" if args.local
            else "hashing" if args.hashing else None)
    if kind is None and not args.clear and (args.model or args.dimensions):
        raise UsageError("--model and --dimensions go with --openai-compatible, --local or --hashing.")
    with open_store_of(args, read_only=kind is None and not args.clear) as store:
        if kind is not None:
            embedder = build_embedder(kind, model=args.model, url=args.openai_compatible, dimensions=args.dimensions)
            # One text first: the endpoint is reachable, takes the key, and says its dimension.
            embedder.embed(["mnemoscope embedder check"])
            store.use_embedder(embedder)
        elif args.clear:
            store.use_embedder(None)
        return emit(args, embedder_state(store), output.embedder)


def embedder_state(store: MemoryStore) -> dict[str, Any]:
    """The store's embedder setting, and whether it runs here (what `embedder` prints)."""
    settings = store.settings
    current = store.embedder()
    return {
        "path": str(store.root),
        "embedder": {
            "model": settings.embedder, "url": settings.embedder_url, "dimensions": settings.embedder_dimensions,
        } if settings.embedder else None,
        "label": current.label if current is not None else None,
        "runs_here": current is not None,
        "collections": [r.to_dict() for r in store.recorded_embedders()],
    }


def cmd_export(args: argparse.Namespace) -> int:
    from mnemoscope.storage.atomic_file import atomic_text_writer
    from mnemoscope.storage.transfer import check_export_target, export_store

    to_stdout = str(args.out) == "-"
    if not to_stdout:
        check_export_target(args.out)
    with open_store_of(args) as store:
        statuses = statuses_of(args.status or (["active"] if args.format == "markdown" else ["all"]))
        query = MemoryQuery(statuses=statuses, order=Order.CREATED)
        if to_stdout:
            n = export_store(store, sys.stdout, args.format, query)
            sys.stdout.flush()
        else:
            with atomic_text_writer(args.out) as out:  # the file appears whole, written as it is read
                n = export_store(store, out, args.format, query)
        counted = [s.value for s in statuses] or ["all"]
        data = {"exported": n, "format": args.format, "out": "-" if to_stdout else str(args.out), "statuses": counted}
    if to_stdout:  # standard output holds the memories: the summary goes to stderr
        print(json.dumps(data) if args.json else output.exported(data), file=sys.stderr)
        return 0
    return emit(args, data, output.exported)


def cmd_import(args: argparse.Namespace) -> int:
    from mnemoscope.storage.transfer import import_store

    from ..progress import Progress
    from ..terminal_credentials import terminal_credentials

    if isinstance(args.src, Path) and not args.src.exists():
        raise UsageError(f"{args.src} does not exist.")
    summary = import_store(args.src, args.dest, progress=Progress("import", bar=True), vectors=args.vectors,
                           credentials=terminal_credentials(args.password_stdin))
    return emit(args, summary.to_dict(), output.imported)


def cmd_init(args: argparse.Namespace) -> int:
    from mnemoscope.storage import create_workspace

    from ..terminal_credentials import terminal_credentials

    with create_workspace(args.path, vectors=args.vectors, credentials=terminal_credentials(args.password_stdin)) as store:
        data = {"path": store.location, "kinds": [kind.value for kind in store.kinds]}
    return emit(args, data, lambda d: f"Made an empty native store at {d['path']} ({', '.join(d['kinds'])}).")


def cmd_map(args: argparse.Namespace) -> int:
    from mnemoscope.storage.detect.table_mapping import (
        checked,
        corrected,
        parse_assignments,
        preview,
        propose_mapping,
        remembered_mapping,
    )
    from mnemoscope.storage.opening import remember_mapping

    path = args.path.expanduser()
    if args.forget:
        kept = remember_mapping(path, None)
        return emit(args, {"path": str(path), "forgotten": True, "mappings": str(kept)},
                    lambda d: f"Forgot the mapping of {d['path']} (kept in {d['mappings']}).")
    start = remembered_mapping(path) if args.table is None else None
    if start is None or (args.table and args.table != start.table):
        start = propose_mapping(path, args.table)
    mapping = checked(path, corrected(start, parse_assignments(args.assign)))
    saved = remember_mapping(path, mapping) if args.save else None
    data = {
        "path": str(path), "table": mapping.table, "mapping": mapping.to_dict()["columns"],
        "writable": mapping.writable, "preview": preview(path, mapping),
        "saved_to": str(saved) if saved else None,
    }
    return emit(args, data, output.table_mapping)
