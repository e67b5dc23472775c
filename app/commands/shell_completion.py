"""completion: a bash, zsh or fish completion script, generated from the command line's own
parser (app/completion.py), so it names every command and flag there is."""

from __future__ import annotations

import argparse

from ..completion import SHELLS, script
from . import CommandParsers

ORDER = 60


def register(commands: CommandParsers) -> None:
    root = commands.root  # complete by the time the command runs

    def cmd_completion(args: argparse.Namespace) -> int:
        print(script(root, args.shell), end="")
        return 0

    p = commands.add("completion", "print a shell completion script (e.g. mnemoscope completion bash "
                     "> ~/.local/share/bash-completion/completions/mnemoscope)", cmd_completion,
                     description="Print a completion script for SHELL, generated from these commands and flags.",
                     common=False)
    p.add_argument("shell", choices=SHELLS)
