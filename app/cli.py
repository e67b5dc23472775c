"""The ``mnemoscope`` command line: a thin layer over ``storage``.

Exit codes: 0 done; 1 refused (not found, conflict, read-only, nothing to do);
2 bad usage, or input that cannot be used as it is (corrupt, foreign, locked by another
program, not permitted); 3 an internal error (a bug: please report it).

Start-up is kept short: ``--help`` and ``--version`` load only the storage model (plain
enums and dataclasses); each command imports the parts of storage it runs (open_store,
Curator, the views), so SQLAlchemy and Chroma are loaded only by a command on a store
that holds them.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Light names only (mnemoscope.storage loads each on first use): these import no database library.
from mnemoscope.storage import Kind, Layer, MemoryQuery, NotFoundError, Order, Status, StoreError
from mnemoscope.storage.timeutil import parse_time, utcnow

from . import output
from .arguments import STORE_HELP, store_argument

if TYPE_CHECKING:
    from mnemoscope.storage import Curator, MemoryStore

COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {}
EXIT_INPUT = 2  # bad usage, or input that cannot be read or written as it is
EXIT_BUG = 3


def command(name: str):
    def register(func: Callable[[argparse.Namespace], int]):
        COMMANDS[name] = func
        return func

    return register


class UsageError(StoreError):
    exit_code = 2


def _date(value: str) -> datetime:
    parsed = parse_time(value)
    if parsed is None:
        raise argparse.ArgumentTypeError(f"not a date: {value!r} (use YYYY-MM-DD or ISO 8601)")
    return parsed


class _VersionAction(argparse.Action):
    """--version: the installed distribution's version, looked up only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(f"{parser.prog} {package_version()}")
        parser.exit()


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mnemoscope")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print one JSON document")
    common.add_argument(
        "--read-only", action="store_true",
        help="refuse every write up front (commands that only read never write anyway)",
    )
    common.add_argument(
        "--vectors", metavar="URL",
        help="a Chroma server (http(s)://HOST:PORT[/?collection=NAME]) holding the vectors of a PostgreSQL store",
    )
    common.add_argument(
        "--password-stdin", action="store_true",
        help="read each password or API key asked for from stdin, one line each, instead of a prompt",
    )
    _logging_args(common, default=argparse.SUPPRESS)  # after the command too; never overriding the one before it
    app_usage, app_help = _app_help()
    parser = argparse.ArgumentParser(
        prog="mnemoscope",
        description="See and fix what your AI agents remember.\n"
        "Run 'mnemoscope' or 'mnemoscope PATH' to open the desktop app (its flags are listed below).",
        epilog=app_help,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    _logging_args(parser, default=None)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # Set after the subparsers, whose prog ("mnemoscope ls") argparse derives from the usage.
    parser.usage = f"%(prog)s [-h] [--version] [-v] [--log-file FILE] COMMAND ...\n       {app_usage}"

    def add(name: str, help_text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help_text, description=help_text, parents=[common])

    p = add("demo", "write the demo workspace (all three store kinds) into DIR")
    p.add_argument("dir", type=Path)

    p = add("discover", "find memory stores: every supported tool's, under DIR (default: home and the tools' usual "
            "places); nothing is written")
    p.add_argument("dir", type=Path, nargs="*")
    p.add_argument("--depth", type=int, default=4, help="how many folder levels below DIR to look (default 4)")

    p = add("info", "what a store holds: kinds, counts per kind/channel/layer, schema version")
    p.add_argument("path", type=store_argument, help=STORE_HELP)

    p = add("ls", "list memories, filtered and ordered by the store")
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("--channel", action="append", default=[], help="repeat for several")
    p.add_argument("--layer", action="append", default=[], choices=[x.value for x in Layer])
    p.add_argument("--kind", action="append", default=[], choices=[k.value for k in Kind])
    p.add_argument("--status", action="append", default=[], choices=[s.value for s in Status] + ["all"])
    p.add_argument("--since", type=_date, help="created on or after this date")
    p.add_argument("--until", type=_date, help="created before this date")
    p.add_argument("--contains", help="content contains this text")
    p.add_argument("--order", default="recent", choices=[o.value for o in Order])
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--offset", type=int, default=0)

    p = add("show", "one memory with its provenance, copies and audit history")
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("id")

    p = add("search", "keyword, vector or hybrid (RRF) search; --like ID finds similar memories")
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("query", nargs="?", default="")
    p.add_argument("--mode", default="hybrid", choices=["keyword", "vector", "hybrid"])
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--like", metavar="ID", help="memories whose stored vectors are nearest to ID's")
    p.add_argument("--channel", action="append", default=[])

    # A subcommand, not flags on search: the embedder is the store's setting (saved once, like
    # 'map --save'), matched against its vectors when set; search stays a read that writes nothing.
    p = add("embedder", "show or set the embedder of a store's text queries and new vectors: an OpenAI-compatible "
            "endpoint, the local model, or the lexical hashing one; refused unless it is the model (and "
            "dimension) that wrote the store's vectors")
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--openai-compatible", metavar="URL",
                       help="the endpoint's base URL (OpenAI, Azure, Ollama, vLLM, LM Studio: ending in /v1); "
                       "its API key is read from the keyring as 'embeddings:URL', else from "
                       "MNEMOSCOPE_EMBEDDINGS_API_KEY, and never saved with the store")
    which.add_argument("--local", action="store_true",
                       help="WordLlama l2_supercat, offline (pip install 'mnemoscope[embed-local]')")
    which.add_argument("--hashing", action="store_true",
                       help="the lexical hashing embedder (tests and the demo; not semantic)")
    which.add_argument("--clear", action="store_true", help="forget the store's embedder")
    p.add_argument("--model", help="the model's name (with --openai-compatible)")
    p.add_argument("--dimensions", type=int, help="the vectors' length asked of the model (default: its own)")

    p = add("timeline", "memory and turn counts per day, week or month")
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("--bin", default="day", choices=["day", "week", "month"])
    p.add_argument("--group-by", default="kind", choices=["kind", "layer", "channel"])
    p.add_argument("--since", type=_date)
    p.add_argument("--until", type=_date)
    p.add_argument("--events", metavar="BIN", help="also list the memories of one bin, e.g. 2026-W44")

    p = add("graph", "the entity graph, or the ego graph around --center")
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("--center", help="entity id or name")
    p.add_argument("--depth", type=int, default=1, choices=[1, 2, 3])
    p.add_argument("--type", action="append", default=[], help="relation type filter")
    p.add_argument("--channel", action="append", default=[])
    p.add_argument("--graphml", type=Path, metavar="FILE", help="also write GraphML here")

    p = add("scratchpad", "sessions -> scratchpad keys -> values; with --session, --set or --delete one key "
            "(one undoable step)")
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("--session")
    change = p.add_mutually_exclusive_group()
    change.add_argument("--set", metavar="KEY=VALUE",
                        help="set (or add) a key of --session; VALUE is stored as JSON when it parses as JSON, "
                        "else as text")
    change.add_argument("--delete", metavar="KEY", help="delete a key of --session")
    p.add_argument("--expect-value", metavar="VALUE",
                   help="with --set or --delete: refuse if the key no longer holds this value (as listed)")

    p = add("sessions", "sessions, threads and conversations; with --session, that one's turns")
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("--session")
    p.add_argument("--limit", type=int, default=200)
    p.add_argument("--offset", type=int, default=0)

    p = add("salience", "effective salience: one memory's curve, or the store's histogram and at-risk list")
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("id", nargs="?")
    p.add_argument("--at", type=_date, help="evaluate at this date instead of now")

    p = add("edit", "edit memories' content, tags, layer, channel or salience (every copy; several ids: one step)")
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("id", nargs="*")
    _selection_args(p)
    p.add_argument("--content")
    p.add_argument("--tag", action="append", help="repeat for several; replaces the tags")
    p.add_argument("--layer", choices=[x.value for x in Layer])
    p.add_argument("--channel")
    p.add_argument("--salience", type=float)
    p.add_argument("--expect-revision", help="refuse if the memory's revision is no longer this")

    p = add("promote", "promote project memories to _global (a linked copy; daily-log bullet -> MEMORY.md); "
            "several: one step")
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("id", nargs="*")
    _selection_args(p)
    p.add_argument("--to", default="_global")
    p.add_argument("--reason", default="")
    p.add_argument("--force", action="store_true",
                   help="promote memories below the store's thresholds too (the journal records which they missed)")
    p.add_argument("--candidates", action="store_true",
                   help="list the project facts that meet the thresholds instead (nothing is written)")

    p = add("rm", "delete memories (soft, restorable; several ids or a filter: one undoable step); --purge removes them for good")
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("id", nargs="*")
    _selection_args(p)
    p.add_argument("--purge", action="store_true")

    p = add("reinforce", "count one more access now (pin memories against decay)")
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("id", nargs="*")
    _selection_args(p)

    p = add("reembed", "recompute every vector marked stale with the store's embedder (one undoable step)")
    p.add_argument("path", type=store_argument, help=STORE_HELP)

    p = add("restore", "restore deleted or archived memories")
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("id", nargs="*")
    _selection_args(p)

    p = add("undo", "undo the last curation step")
    p.add_argument("path", type=store_argument, help=STORE_HELP)

    p = add("redo", "redo the last undone step")
    p.add_argument("path", type=store_argument, help=STORE_HELP)

    p = add("check", "compare every copy of every memory (rows, vectors, markdown bullets, the full-text index, "
            "other tools' indexes); exit 1 when an inconsistency is found")
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    fix = p.add_mutually_exclusive_group()
    fix.add_argument("--repair", nargs="+", metavar="KIND",
                     help="repair the findings of these kinds (one undoable step), then check again")
    fix.add_argument("--repair-all", action="store_true",
                     help="repair every kind found that has a safe repair (one undoable step), then check again")

    p = add("scan", "findings: secrets, prompt injection, hidden text and PII in a store's memories, grouped by "
            "severity; exit 1 when there is a new one at or above --severity (like a linter)")
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("--all", action="store_true", help="also list the findings accepted into the store's baseline")
    p.add_argument("--severity", default="low", choices=["high", "medium", "low"],
                   help="list (and fail on) findings at or above this severity (default low)")
    p.add_argument("--rules", action="store_true", help="list the rules and their version instead")
    p.add_argument("--accept", nargs="+", metavar="FINGERPRINT",
                   help="accept these findings into the store's baseline (one undoable step)")
    p.add_argument("--allow-host", action="append", default=[], metavar="HOST",
                   help="save HOST (and its subdomains) in the store's link allow-list; repeat for several")

    p = add("redact", "replace a finding's span (or --span START:END) of a memory's content with [REDACTED], "
            "in every copy (one undoable step)")
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("id")
    which_span = p.add_mutually_exclusive_group(required=True)
    which_span.add_argument("--finding", metavar="FINGERPRINT", help="the finding whose span to redact (see scan)")
    which_span.add_argument("--span", metavar="START:END", help="character offsets into the memory's content")

    p = add("history", "the audit log, newest first")
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("--id", help="only steps touching this memory")
    p.add_argument("--limit", type=int, default=50)

    p = add("export", "write memories to OUT as JSONL (every status) or markdown (active ones)")
    p.add_argument("path", type=store_argument, help=STORE_HELP)
    p.add_argument("out", type=Path)
    p.add_argument("--format", required=True, choices=["jsonl", "markdown"])
    p.add_argument("--status", action="append", default=[], choices=["all", *[s.value for s in Status]],
                   help="which statuses to write (default: all for jsonl, active for markdown)")

    p = add("import", "import any store this tool opens into a native workspace DEST (a folder, or a PostgreSQL "
            "database's URL: its store is made there if missing; --vectors a Chroma server)")
    p.add_argument("src", type=store_argument)
    p.add_argument("dest", type=store_argument)

    p = add("init", "make an empty native store: a workspace folder, or the schema in an empty PostgreSQL database "
            "(with --vectors, the native collection on a Chroma server)")
    p.add_argument("path", type=store_argument, help=STORE_HELP)

    p = add("map", "read a table of a SQLite file no format recognises as memories: show the mapping of its "
            "columns proposed, correct it, and --save it (every command then opens the file with it)")
    p.add_argument("path", type=Path)
    p.add_argument("--table", help="the table to read (default: the remembered one, else the likeliest)")
    p.add_argument("--map", dest="assign", default="", metavar="FIELD=COLUMN,...",
                   help="correct the mapping, e.g. content=body,created=ts (FIELD= unmaps a field)")
    p.add_argument("--save", action="store_true", help="remember the mapping for this file")
    p.add_argument("--forget", action="store_true", help="forget the mapping remembered for this file")

    p = sub.add_parser("credentials", help="passwords and API keys, kept only in the OS keyring",
                       description="Passwords and API keys, kept only in the OS keyring (never in a file). "
                       "NAME is a store URL (its password is left out) or a name like embeddings:https://host/v1.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    q = actions.add_parser("set", help="store a secret for NAME (asked for, or one line of stdin with "
                           "--password-stdin)", parents=[common])
    q.add_argument("name")
    q = actions.add_parser("forget", help="delete the secret stored for NAME", parents=[common])
    q.add_argument("name")
    actions.add_parser("status", help="the keyring backend, whether it is usable, and the names stored",
                       parents=[common])

    from .completion import SHELLS

    p = sub.add_parser("completion", help="print a shell completion script (e.g. mnemoscope completion bash "
                       "> ~/.local/share/bash-completion/completions/mnemoscope)",
                       description="Print a completion script for SHELL, generated from these commands and flags.")
    p.add_argument("shell", choices=SHELLS)
    return parser


def _logging_args(parser: argparse.ArgumentParser, default: Any) -> None:
    parser.add_argument("-v", "--verbose", action="count", default=default,
                        help="log what is done to stderr: -v at INFO, -vv at DEBUG (default: warnings only)")
    parser.add_argument("--log-file", type=Path, metavar="FILE", default=default,
                        help="also append the log to FILE (INFO, or DEBUG with -vv)")


def _app_help() -> tuple[str, str]:
    """The launcher's usage line and help, from its own parser: every flag `mnemoscope [PATH]` takes."""
    from .launcher import build_launcher_parser

    app = build_launcher_parser()
    usage = " ".join(app.format_usage().split()[1:]).replace(" [-h]", "", 1)
    text = app.format_help().split("\n\n", 1)[1]  # its description and flags, without the usage
    lines = [line for line in text.splitlines() if not line.lstrip().startswith(("-h, --help", "show this help"))]
    return usage, "opening the app:\n" + "\n".join(f"  {line}" if line else "" for line in lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    verbosity, log_file, first = _global_options(argv)
    word = argv[first] if first < len(argv) else None
    if word is None or (word not in COMMANDS and word not in ("-h", "--help", "--version")):
        if word is not None and (suggestion := _unknown_command(word)):
            _say(suggestion)
            return EXIT_INPUT
        from .launcher import launch

        _configure_logging(verbosity, log_file)
        return _guard(lambda: launch(argv[first:]))
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:
        _command_parser(parser, args).error(_unrecognized(extras, _command_parser(parser, args)))
    # -v before the command and -v after it add up (argparse keeps only the command's own count).
    _configure_logging(verbosity + _verbosity_of(argv[first + 1 :]), args.log_file)
    return _guard(lambda: COMMANDS[args.command](args))


def _verbosity_of(words: Sequence[str]) -> int:
    count = 0
    for word in words:
        if word == "--":
            break
        if word == "--verbose" or (word.startswith("-v") and set(word[1:]) == {"v"}):
            count += 1 if word == "--verbose" else len(word) - 1
    return count


def _global_options(argv: Sequence[str]) -> tuple[int, Path | None, int]:
    """-v/--verbose and --log-file given before the command (or the app's PATH): how verbose,
    which log file, and the index of the first word after them."""
    verbosity, log_file, i = 0, None, 0
    while i < len(argv):
        word = argv[i]
        if word == "--verbose" or (word.startswith("-v") and set(word[1:]) == {"v"}):
            verbosity += _verbosity_of([word])
        elif word == "--log-file" and i + 1 < len(argv):
            log_file = Path(argv[i + 1])
            i += 1
        elif word.startswith("--log-file="):
            log_file = Path(word.partition("=")[2])
        else:
            break
        i += 1
    return verbosity, log_file, i


def _unknown_command(word: str) -> str | None:
    """A message for a word that is no command and no store but reads like a mistyped command."""
    import difflib

    if word.startswith("-") or "/" in word or "://" in word or Path(word).expanduser().exists():
        return None
    close = difflib.get_close_matches(word, COMMANDS, n=1)
    return f"unknown command {word!r} (did you mean {close[0]!r}?)" if close else None


def _command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the command args ran (of its action, for credentials)."""
    from .completion import commands

    chosen = commands(parser).get(args.command, parser)
    return commands(chosen).get(getattr(args, "action", None) or "", chosen)


def _unrecognized(extras: Sequence[str], parser: argparse.ArgumentParser) -> str:
    import difflib

    from .completion import flags

    known = [f for f in flags(parser) if f.startswith("--")]
    guesses = [
        close[0] for word in extras if word.startswith("--")
        for close in [difflib.get_close_matches(word.partition("=")[0], known, n=1)] if close
    ]
    hint = f" (did you mean {' '.join(guesses)}?)" if guesses else ""
    return f"unrecognized arguments: {' '.join(extras)}{hint}"


def _configure_logging(verbosity: int, log_file: Path | None) -> None:
    """Only when asked (-v, --log-file): else Python's default, warnings and errors on stderr."""
    if not verbosity and log_file is None:
        return
    import logging

    level = logging.DEBUG if verbosity >= 2 else logging.INFO
    terminal = logging.StreamHandler(sys.stderr)
    terminal.setLevel(level if verbosity else logging.WARNING)
    terminal.setFormatter(logging.Formatter("mnemoscope: %(levelname)s %(name)s: %(message)s"))
    handlers: list[logging.Handler] = [terminal]
    if log_file is not None:
        written = logging.FileHandler(log_file.expanduser(), encoding="utf-8")
        written.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handlers.append(written)
    logging.basicConfig(level=level, handlers=handlers, force=True)


def _log(message: str) -> None:
    """An INFO line of the command line's log, a URL's password scrubbed."""
    import logging

    from mnemoscope.storage.credentials import scrubbed

    logging.getLogger("mnemoscope.cli").info("%s", scrubbed(message))


@command("completion")
def cmd_completion(args: argparse.Namespace) -> int:
    from .completion import script

    print(script(build_parser(), args.shell), end="")
    return 0


def _guard(run: Callable[[], int]) -> int:
    try:
        return run()
    except StoreError as exc:
        _say(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        print("mnemoscope: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # the environment's: a permission, a missing or looping file, a full disk
        where = f" ({exc.filename})" if exc.filename else ""
        _say(f"{exc.strerror or exc}{where}.")
        return EXIT_INPUT
    except Exception as exc:  # our bug: a crash report, not a user message
        print(f"mnemoscope: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        if os.environ.get("MNEMOSCOPE_DEBUG"):
            traceback.print_exc()
        else:
            print("mnemoscope: set MNEMOSCOPE_DEBUG=1 for the traceback, and please report it.", file=sys.stderr)
        return EXIT_BUG
    except BaseException as exc:
        if type(exc).__name__ != "PanicException":  # SystemExit, GeneratorExit: not ours to stop
            raise
        # A native library (Chroma's Rust core) gave up on the store's files: they are damaged.
        _say(f"a library failed reading this store's files, which may be damaged ({exc}).")
        if os.environ.get("MNEMOSCOPE_DEBUG"):
            traceback.print_exc()
        return EXIT_INPUT


def _say(message: str) -> None:
    """A message for the user: one line on stderr, whatever line breaks the text held."""
    from mnemoscope.storage.credentials import scrubbed  # a URL's password never reaches the terminal

    print("mnemoscope: " + " ".join(scrubbed(message).split()), file=sys.stderr)


# Commands that only look: they open the store read-only, so not a byte of it changes.
READ_COMMANDS = {
    "info", "ls", "show", "search", "timeline", "graph", "scratchpad", "sessions", "salience", "history", "export",
    "discover",
}


def _open(args: argparse.Namespace, *, read_only: bool = False, writing: bool = False) -> MemoryStore:
    """The store args.path names; read-only when asked for, or for a command that only looks
    (unless it is writing after all, as scratchpad --set)."""
    from mnemoscope.storage import open_store

    from .terminal_credentials import terminal_credentials

    looking = args.command in READ_COMMANDS and not writing
    store = open_store(
        args.path, read_only=read_only or args.read_only or looking,
        credentials=terminal_credentials(args.password_stdin), vectors=args.vectors,
    )
    mode = "read-only" if store.read_only else "for writing"
    _log(f"opened {store.location} ({', '.join(kind.value for kind in store.kinds)}) {mode}")
    return store


def _curator(store: MemoryStore) -> Curator:
    from mnemoscope.storage import Curator

    return Curator(store)


def _emit(args: argparse.Namespace, data: Any, human: Callable[[Any], str]) -> int:
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    else:
        text = human(data)
        if text:
            print(text)
    return 0


@command("map")
def cmd_map(args: argparse.Namespace) -> int:
    from mnemoscope.storage import table_mapping

    path = args.path.expanduser()
    if args.forget:
        kept = table_mapping.remember_mapping(path, None)
        return _emit(args, {"path": str(path), "forgotten": True, "mappings": str(kept)},
                     lambda d: f"Forgot the mapping of {d['path']} (kept in {d['mappings']}).")
    start = table_mapping.remembered_mapping(path) if args.table is None else None
    if start is None or (args.table and args.table != start.table):
        start = table_mapping.propose_mapping(path, args.table)
    mapping = table_mapping.checked(path, table_mapping.corrected(start, table_mapping.parse_assignments(args.assign)))
    saved = table_mapping.remember_mapping(path, mapping) if args.save else None
    data = {
        "path": str(path), "table": mapping.table, "mapping": mapping.to_dict()["columns"],
        "writable": mapping.writable, "preview": table_mapping.preview(path, mapping),
        "saved_to": str(saved) if saved else None,
    }
    return _emit(args, data, output.table_mapping)


# -- reading ------------------------------------------------------------------------------


@command("demo")
def cmd_demo(args: argparse.Namespace) -> int:
    from mnemoscope.storage.demo import write_demo

    target: Path = args.dir
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} is a file; give a new or empty folder for the demo.")
    if target.exists() and any(target.iterdir()):
        raise UsageError(f"{target} is not empty; the demo is written only into a new or empty folder.")
    with write_demo(target, progress=lambda step: print(f"demo: {step}", file=sys.stderr)) as store:
        return _emit(args, store.info(), output.info)


@command("discover")
def cmd_discover(args: argparse.Namespace) -> int:
    from mnemoscope.storage.discover import discover

    if args.depth < 0:
        raise UsageError("--depth must not be negative.")
    for folder in args.dir:
        if not folder.exists():
            raise UsageError(f"{folder} does not exist.")
    found = discover(args.dir or None, max_depth=args.depth)
    return _emit(args, {"stores": [f.to_dict() for f in found]}, output.discovered)


@command("info")
def cmd_info(args: argparse.Namespace) -> int:
    with _open(args) as store:
        return _emit(args, store.info(), output.info)


def _statuses(values: list[str]) -> tuple[Status, ...]:
    if "all" in values:
        return ()
    return tuple(Status(v) for v in values) or (Status.ACTIVE,)


@command("ls")
def cmd_ls(args: argparse.Namespace) -> int:
    if args.limit < 0 or args.offset < 0:
        raise UsageError("--limit and --offset must not be negative.")
    query = MemoryQuery(
        channels=tuple(args.channel),
        layers=tuple(Layer(x) for x in args.layer),
        kinds=tuple(Kind(k) for k in args.kind),
        statuses=_statuses(args.status),
        since=args.since,
        until=args.until,
        contains=args.contains,
        order=Order(args.order),
    )
    with _open(args) as store:
        query = dataclasses.replace(query, decay=store.settings.salience)  # effective_salience: the store's decay
        total = store.count(query)
        memories = store.page(query, limit=args.limit, offset=args.offset)
        data = {
            "total": total,
            "offset": args.offset,
            "limit": args.limit,
            "memories": [m.to_dict() for m in memories],
        }
        return _emit(args, data, output.memory_table)


@command("show")
def cmd_show(args: argparse.Namespace) -> int:
    with _open(args) as store:
        memory = store.get(args.id)
        data = memory.to_dict()
        data["copies"] = store.copies(memory.id)
        data["salience_now"] = round(store.settings.salience.effective(memory, utcnow()), 6)
        data["promotion"] = store.settings.promotion.check(memory)
        data["relations"] = [r.to_dict() for r in store.relations(touching=memory.id)]
        data["history"] = [e.to_dict() for e in store.journal.history(target=memory.id)]
        data["owner_history"] = store.owner_history(memory.id)
        return _emit(args, data, output.memory_detail)


@command("search")
def cmd_search(args: argparse.Namespace) -> int:
    from mnemoscope.storage.views.search import search, similar

    query = MemoryQuery(channels=tuple(args.channel))
    with _open(args) as store:
        if args.like:
            result = similar(store, args.like, k=args.k, query=query)
        elif not args.query.strip():
            raise UsageError("Give a QUERY, or --like ID.")
        else:
            result = search(store, args.query, mode=args.mode, k=args.k, query=query)
        for notice in result.notices:
            if not args.json:
                print(f"note: {notice}", file=sys.stderr)
        return _emit(args, result.to_dict(), output.search_results)


@command("embedder")
def cmd_embedder(args: argparse.Namespace) -> int:
    from mnemoscope.storage.embedding import build_embedder

    kind = ("openai-compatible" if args.openai_compatible else "local" if args.local
            else "hashing" if args.hashing else None)
    if kind is None and not args.clear and (args.model or args.dimensions):
        raise UsageError("--model and --dimensions go with --openai-compatible, --local or --hashing.")
    with _open(args, read_only=kind is None and not args.clear) as store:
        if kind is not None:
            embedder = build_embedder(kind, model=args.model, url=args.openai_compatible, dimensions=args.dimensions)
            # One text first: the endpoint is reachable, takes the key, and says its dimension.
            embedder.embed(["mnemoscope embedder check"])
            store.use_embedder(embedder)
        elif args.clear:
            store.use_embedder(None)
        return _emit(args, _embedder_state(store), output.embedder)


def _embedder_state(store: MemoryStore) -> dict[str, Any]:
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


@command("timeline")
def cmd_timeline(args: argparse.Namespace) -> int:
    from mnemoscope.storage.views.timeline import bin_bounds, events, timeline

    query = MemoryQuery(statuses=(), since=args.since, until=args.until)
    with _open(args) as store:
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
        return _emit(args, data, output.timeline)


@command("graph")
def cmd_graph(args: argparse.Namespace) -> int:
    from mnemoscope.storage.views.graph import graph_view, to_json, write_graphml

    with _open(args) as store:
        graph, info = graph_view(
            store, center=args.center, depth=args.depth, relation_types=args.type, channels=args.channel
        )
        if args.graphml:
            write_graphml(graph, args.graphml)
            info["graphml"] = str(args.graphml)
        return _emit(args, to_json(graph, info), output.graph)


@command("scratchpad")
def cmd_scratchpad(args: argparse.Namespace) -> int:
    from mnemoscope.storage.views.overview import scratchpad

    if args.set is not None or args.delete is not None:
        return _scratch_step(args)
    if args.expect_value is not None:
        raise UsageError("--expect-value goes with --set or --delete.")
    with _open(args) as store:
        sessions = scratchpad(store, args.session)
        if args.session and not sessions:
            raise NotFoundError(f"No session {args.session}.")
        return _emit(args, {"sessions": sessions}, output.scratchpad)


def _scratch_step(args: argparse.Namespace) -> int:
    """scratchpad --set / --delete: one curation step on a store opened for writing."""
    from mnemoscope.storage.curation import scratch_value

    if not args.session:
        raise UsageError("Give the session whose scratchpad to change with --session.")
    if args.set is not None:
        key, equals, text = args.set.partition("=")
        if not equals or not key:
            raise UsageError(f"--set takes KEY=VALUE, not {args.set!r}.")
    # Not _open: scratchpad is a reading command (opened read-only) unless it sets or deletes a key.
    with _open(args, writing=True) as store:
        curator = _curator(store)
        if args.set is not None:
            outcome = curator.set_scratch(args.session, key, scratch_value(text), expected=args.expect_value)
        else:
            outcome = curator.delete_scratch(args.session, args.delete, expected=args.expect_value)
        for note in outcome.notes:
            if not args.json:
                print(f"note: {note}", file=sys.stderr)
        return _emit(args, outcome.to_dict(), output.scratch_outcome)


@command("sessions")
def cmd_sessions(args: argparse.Namespace) -> int:
    with _open(args) as store:
        sessions = store.sessions()
        if not args.session:
            return _emit(args, {"sessions": [s.to_dict() for s in sessions]}, output.sessions)
        session = next((s for s in sessions if s.id == args.session), None)
        if session is None:
            raise NotFoundError(f"No session {args.session} in {store.location}.")
        turns = store.turns(session.id, limit=args.limit, offset=args.offset)
        data = {"session": session.to_dict(), "turns": [t.to_dict() for t in turns]}
        return _emit(args, data, output.sessions)


@command("salience")
def cmd_salience(args: argparse.Namespace) -> int:
    from mnemoscope.storage.views.overview import salience_of, salience_overview

    with _open(args) as store:
        if args.id:
            return _emit(args, salience_of(store, args.id, args.at), output.salience_one)
        return _emit(args, salience_overview(store, args.at), output.salience_overview)


# -- curation -------------------------------------------------------------------------------


def _outcome(args: argparse.Namespace, outcome: Any) -> int:
    data = outcome.to_dict()
    _log(f"curation step: {output.outcome(data)}")
    for note in outcome.notes:
        if not args.json:
            print(f"note: {note}", file=sys.stderr)
    return _emit(args, data, output.outcome)


def _selection_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--match-channel", action="append", default=[], help="instead of ids: every memory in this channel")
    p.add_argument("--match-layer", action="append", default=[], choices=[x.value for x in Layer])
    p.add_argument("--match-contains", help="instead of ids: every memory whose text contains this")
    p.add_argument("--match-status", action="append", default=[], choices=[x.value for x in Status],
                   help="with --match-*: these statuses (default active; deleted for restore)")


def _selected(args: argparse.Namespace, store: Any, default_status: Status = Status.ACTIVE) -> list[str]:
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


@command("edit")
def cmd_edit(args: argparse.Namespace) -> int:
    with _open(args) as store:
        outcome = _curator(store).edit(
            _selected(args, store),
            content=args.content,
            tags=args.tag,
            layer=args.layer,
            channel=args.channel,
            salience=args.salience,
            expected_revision=args.expect_revision,
        )
        return _outcome(args, outcome)


@command("promote")
def cmd_promote(args: argparse.Namespace) -> int:
    if args.candidates:
        if args.id or args.force:
            raise UsageError("--candidates lists; give ids (and --force) without it to promote.")
        with _open(args, read_only=True) as store:
            thresholds = store.settings.promotion
            found = store.promotion_candidates()
            data = {
                "thresholds": {"confidence": thresholds.confidence, "access_count": thresholds.access_count,
                               "conversations": thresholds.conversations},
                "candidates": [{**m.to_dict(), "promotion": thresholds.check(m)} for m in found],
            }
            return _emit(args, data, output.promotion_candidates)
    with _open(args) as store:
        outcome = _curator(store).promote(_selected(args, store), to=args.to, reason=args.reason, force=args.force)
        return _outcome(args, outcome)


@command("rm")
def cmd_rm(args: argparse.Namespace) -> int:
    with _open(args) as store:
        return _outcome(args, _curator(store).delete(_selected(args, store), purge=args.purge))


@command("reinforce")
def cmd_reinforce(args: argparse.Namespace) -> int:
    with _open(args) as store:
        return _outcome(args, _curator(store).reinforce(_selected(args, store)))


@command("reembed")
def cmd_reembed(args: argparse.Namespace) -> int:
    from .progress import Progress

    with _open(args) as store:
        return _outcome(args, _curator(store).reembed(progress=Progress("reembed")))


@command("restore")
def cmd_restore(args: argparse.Namespace) -> int:
    with _open(args) as store:
        return _outcome(args, _curator(store).restore(_selected(args, store, Status.DELETED)))


@command("undo")
def cmd_undo(args: argparse.Namespace) -> int:
    with _open(args) as store:
        return _outcome(args, _curator(store).undo())


@command("redo")
def cmd_redo(args: argparse.Namespace) -> int:
    with _open(args) as store:
        return _outcome(args, _curator(store).redo())


@command("check")
def cmd_check(args: argparse.Namespace) -> int:
    """Exit 0 clean, 1 inconsistent (after a repair: what is left), 2 when the check itself failed."""
    from mnemoscope.storage import NothingToDoError
    from mnemoscope.storage.consistency import check

    from .progress import Progress

    repairing = bool(args.repair or args.repair_all)
    try:
        with _open(args, read_only=not repairing) as store:
            report = check(store, progress=Progress("check"))
            data: dict[str, Any] = {"found": report.to_dict(), "repair": None}
            if repairing and not report.clean:
                try:
                    outcome = _curator(store).repair(report, args.repair or None)
                except NothingToDoError as exc:  # none of those kinds was found: the report stands
                    _say(str(exc))
                else:
                    report = check(store)
                    data["repair"] = outcome.to_dict()
            data.update(report.to_dict())
    except StoreError as exc:
        raise CheckFailed(str(exc)) from exc
    _emit(args, data, output.consistency)
    return 0 if report.clean else 1


class CheckFailed(StoreError):
    exit_code = EXIT_INPUT


@command("scan")
def cmd_scan(args: argparse.Namespace) -> int:
    from mnemoscope.storage import findings

    if args.rules:
        return _emit(args, findings.default_rules().to_dict(), output.finding_rules)
    with _open(args, read_only=not (args.accept or args.allow_host)) as store:
        if args.allow_host:
            store.require_writable()
            findings.save_allowed_hosts(store.journal, (*findings.allowed_hosts(store.journal), *args.allow_host))
        if args.accept:
            return _outcome(args, _curator(store).accept_findings(args.accept))
        report = findings.scan_store(store)
        _emit(args, report.to_dict(include_accepted=args.all, severity=args.severity), output.findings)
        return 1 if report.shown(severity=args.severity) else 0


@command("redact")
def cmd_redact(args: argparse.Namespace) -> int:
    from mnemoscope.storage import findings

    with _open(args) as store:
        if args.finding:
            found = findings.find_findings(store, [args.finding], memory_ids=[args.id])[0]
            start, end = found.start, found.end
        else:
            try:
                start, end = (int(x) for x in args.span.split(":"))
            except ValueError:
                raise UsageError(f"--span takes START:END character offsets, not {args.span!r}.") from None
        return _outcome(args, _curator(store).redact(args.id, start, end, finding=args.finding or ""))


@command("history")
def cmd_history(args: argparse.Namespace) -> int:
    with _open(args) as store:
        entries = store.journal.history(limit=args.limit, target=args.id)
        return _emit(args, {"entries": [e.to_dict() for e in entries]}, output.history)


# -- credentials ----------------------------------------------------------------------------


@command("credentials")
def cmd_credentials(args: argparse.Namespace) -> int:
    from mnemoscope.storage import credentials

    from .terminal_credentials import read_new_secret

    usable, why = credentials.keyring_status()
    if args.action == "status":
        data = {"usable": usable, "why": why, "backend": credentials.keyring_backend_name(),
                "names": credentials.stored_names(), "names_file": str(credentials.names_file())}
        return _emit(args, data, output.credentials_status)
    name = credentials.credential_name(args.name)
    if not usable:
        raise credentials.KeyringUnavailableError(
            f"No usable keyring: {why}. Nothing was stored or deleted for {name}; "
            "its secret will be asked for each time it is needed."
        )
    if args.action == "set":
        backend = credentials.remember(name, read_new_secret(name, args.password_stdin))
        return _emit(args, {"name": name, "stored_in": backend}, output.credential_stored)
    if not credentials.forget(name):
        raise NotFoundError(f"The keyring held no secret for {name}; nothing was deleted.")
    return _emit(args, {"name": name, "forgotten": True}, output.credential_forgotten)


# -- moving data ----------------------------------------------------------------------------


@command("export")
def cmd_export(args: argparse.Namespace) -> int:
    from mnemoscope.storage.atomic_file import atomic_write_bytes
    from mnemoscope.storage.transfer import check_export_target, export_jsonl, export_markdown

    check_export_target(args.out)
    with _open(args) as store:
        buffer = io.StringIO()
        writer = export_jsonl if args.format == "jsonl" else export_markdown
        statuses = _statuses(args.status or (["all"] if args.format == "jsonl" else ["active"]))
        n = writer(store, buffer, MemoryQuery(statuses=statuses, order=Order.CREATED))
        atomic_write_bytes(args.out, buffer.getvalue().encode("utf-8"))
        counted = [s.value for s in statuses] or ["all"]
        data = {"exported": n, "format": args.format, "out": str(args.out), "statuses": counted}
        return _emit(args, data, output.exported)


@command("init")
def cmd_init(args: argparse.Namespace) -> int:
    from mnemoscope.storage import create_workspace

    from .terminal_credentials import terminal_credentials

    with create_workspace(args.path, vectors=args.vectors, credentials=terminal_credentials(args.password_stdin)) as store:
        data = {"path": store.location, "kinds": [kind.value for kind in store.kinds]}
    return _emit(args, data, lambda d: f"Made an empty native store at {d['path']} ({', '.join(d['kinds'])}).")


@command("import")
def cmd_import(args: argparse.Namespace) -> int:
    from mnemoscope.storage.transfer import import_store

    from .progress import Progress

    if isinstance(args.src, Path) and not args.src.exists():
        raise UsageError(f"{args.src} does not exist.")
    from .terminal_credentials import terminal_credentials

    summary = import_store(args.src, args.dest, progress=Progress("import", bar=True), vectors=args.vectors,
                           credentials=terminal_credentials(args.password_stdin))
    return _emit(args, summary.to_dict(), output.imported)

