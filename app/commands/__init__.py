"""The command line's commands, one module per group; ``app/cli.py`` finds them here.

A command module declares ``ORDER`` (where its commands come in ``mnemoscope --help``, 100 if left out; modules
of equal order come by name) and ``register(commands: CommandParsers)``, which adds each of its
commands' parsers with the handler that runs it. Adding a module here adds its commands to the
command line, its help and the shell completion scripts: no other file names them. (A module
whose name starts with an underscore is not a command module.)

Declaring parsers must stay light (``--help`` loads no database library): a module imports at
its top only argparse, the storage model's light names and ``app``'s own light modules; each
handler imports the parts of storage it runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

Handler = Callable[[argparse.Namespace], int]
DEFAULT_ORDER = 100


class CommandParsers:
    """The ``mnemoscope`` command line's subcommands, as a command module's ``register`` sees them.

    ``root`` is the whole command line's parser (the completion scripts are generated from it);
    ``common`` the options every store command takes after its name (--json, --read-only, ...).
    """

    def __init__(self, root: argparse.ArgumentParser, subparsers: argparse._SubParsersAction,
                 common: argparse.ArgumentParser) -> None:
        self.root = root
        self.common = common
        self._subparsers = subparsers

    def add(self, name: str, help_text: str, handler: Handler, *, looks_only: bool = False,
            description: str | None = None, common: bool = True) -> argparse.ArgumentParser:
        """A command's parser, run by handler. looks_only: a command that only reads, whose store
        is opened read-only (not a byte of it changes). common=False leaves out the common options
        (a command whose own subcommands take them, or that opens no store)."""
        parser: argparse.ArgumentParser = self._subparsers.add_parser(
            name, help=help_text, description=description or help_text, parents=[self.common] if common else [],
        )
        parser.set_defaults(handler=handler, looks_only=looks_only)
        return parser
