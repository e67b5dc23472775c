"""credentials set/forget/status: passwords and API keys, kept only in the OS keyring (never in
a file). The terminal's prompts are app/terminal_credentials.py's."""

from __future__ import annotations

import argparse

from mnemoscope.storage import NotFoundError

from .. import output
from ..command_runtime import emit
from . import CommandParsers

ORDER = 50


def register(commands: CommandParsers) -> None:
    p = commands.add("credentials", "passwords and API keys, kept only in the OS keyring", cmd_credentials,
                     description="Passwords and API keys, kept only in the OS keyring (never in a file). NAME is a "
                     "store URL (its password is left out) or a name like embeddings:https://host/v1.", common=False)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    q = actions.add_parser("set", help="store a secret for NAME (asked for, or one line of stdin with "
                           "--password-stdin)", parents=[commands.common])
    q.add_argument("name")
    q = actions.add_parser("forget", help="delete the secret stored for NAME", parents=[commands.common])
    q.add_argument("name")
    actions.add_parser("status", help="the keyring backend, whether it is usable, and the names stored",
                       parents=[commands.common])


def cmd_credentials(args: argparse.Namespace) -> int:
    from mnemoscope.storage import credentials

    from ..terminal_credentials import read_new_secret

    usable, why = credentials.keyring_status()
    if args.action == "status":
        data = {"usable": usable, "why": why, "backend": credentials.keyring_backend_name(),
                "names": credentials.stored_names(), "names_file": str(credentials.names_file())}
        return emit(args, data, output.credentials_status)
    name = credentials.credential_name(args.name)
    if not usable:
        raise credentials.KeyringUnavailableError(
            f"No usable keyring: {why}. Nothing was stored or deleted for {name}; "
            "its secret will be asked for each time it is needed."
        )
    if args.action == "set":
        backend = credentials.remember(name, read_new_secret(name, args.password_stdin))
        return emit(args, {"name": name, "stored_in": backend}, output.credential_stored)
    if not credentials.forget(name):
        raise NotFoundError(f"The keyring held no secret for {name}; nothing was deleted.")
    return emit(args, {"name": name, "forgotten": True}, output.credential_forgotten)
