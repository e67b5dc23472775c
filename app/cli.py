"""The ``mnemoscope`` command line: global options and dispatch, a thin layer over ``storage``.

The commands live in ``app/commands``, one module per group (see its ``__init__``): the parser
is built from every module found there, so a module added there is a command here, in --help
and in the completion scripts, with no other file changed.

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
import importlib
import os
import pkgutil
import sys
import traceback
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from mnemoscope.storage import StoreError

from . import commands as commands_package
from .arguments import over_long_id
from .command_runtime import EXIT_BUG, EXIT_INPUT, say
from .commands import DEFAULT_ORDER, CommandParsers, Handler
from .completion import commands


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


def command_modules() -> list[ModuleType]:
    """The modules of app/commands, in the order their commands are listed: by ORDER, then name."""
    found = [
        importlib.import_module(f"{commands_package.__name__}.{info.name}")
        for info in pkgutil.iter_modules(commands_package.__path__)
        if not info.name.startswith("_")
    ]
    return sorted(found, key=lambda module: (getattr(module, "ORDER", DEFAULT_ORDER), module.__name__))


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
    registry = CommandParsers(parser, sub, common)
    for module in command_modules():
        module.register(registry)
    return parser


def command_handlers(parser: argparse.ArgumentParser) -> dict[str, Handler]:
    """Each command's name and the handler that runs it, in the order --help lists them."""
    return {name: command.get_default("handler") for name, command in commands(parser).items()}


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
    parser = build_parser()
    known = command_handlers(parser)
    if word is None or (word not in known and word not in ("-h", "--help", "--version")):
        if word is not None and (suggestion := _unknown_command(word, known)):
            say(suggestion)
            return EXIT_INPUT
        from .launcher import launch

        _configure_logging(verbosity, log_file)
        return _guard(lambda: launch(argv[first:]))
    args, extras = parser.parse_known_args(argv)
    if extras:
        _command_parser(parser, args).error(_unrecognized(extras, _command_parser(parser, args)))
    # -v before the command and -v after it add up (argparse keeps only the command's own count).
    _configure_logging(verbosity + _verbosity_of(argv[first + 1 :]), args.log_file)
    if (refusal := over_long_id(args)) is not None:  # before any store is opened: a pasted blob costs nothing
        say(refusal)
        return EXIT_INPUT
    return _guard(lambda: args.handler(args))


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


def _unknown_command(word: str, known: Iterable[str]) -> str | None:
    """A message for a word that is no command and no store but reads like a mistyped command."""
    import difflib

    if word.startswith("-") or "/" in word or "://" in word or Path(word).expanduser().exists():
        return None
    close = difflib.get_close_matches(word, known, n=1)
    return f"unknown command {word!r} (did you mean {close[0]!r}?)" if close else None


def _command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the command args ran (of its action, for credentials)."""
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


def _guard(run: Callable[[], int]) -> int:
    try:
        return run()
    except StoreError as exc:
        say(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        print("mnemoscope: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # the environment's: a permission, a missing or looping file, a full disk
        where = f" ({exc.filename})" if exc.filename else ""
        say(f"{exc.strerror or exc}{where}.")
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
        say(f"a library failed reading this store's files, which may be damaged ({exc}).")
        if os.environ.get("MNEMOSCOPE_DEBUG"):
            traceback.print_exc()
        return EXIT_INPUT
