"""The terminal's side of credentials: a getpass prompt, or stdin with ``--password-stdin``.

A command that opens a URL makes one call, ``terminal_credentials(args.password_stdin)``, and
asks the returned ``Credentials`` for each secret: the keyring's when it holds one, else the
person is asked once on the terminal and offered to remember it. With ``--password-stdin`` each
secret asked for is one line of stdin, in the order asked (nothing is remembered); with neither
a terminal nor ``--password-stdin`` the command refuses, saying how to give the secret.
"""

from __future__ import annotations

import getpass
import sys
from typing import TextIO

from mnemoscope.storage import StoreError
from mnemoscope.storage.credentials import Answer, Credentials, Request, Secret, keyring_backend_name


class SecretNeededError(StoreError):
    exit_code = 2


def terminal_credentials(
    password_stdin: bool, *, stdin: TextIO | None = None, stderr: TextIO | None = None
) -> Credentials:
    """The Credentials of one command run on this terminal."""
    stdin = stdin or sys.stdin
    stderr = stderr or sys.stderr

    def ask(request: Request) -> Answer | None:
        if password_stdin:  # one line, once: a refused one is not read again
            return None if request.retry else Answer(read_secret_line(request.name, stdin))
        if not _interactive(stdin):
            raise SecretNeededError(
                f"The secret for {request.name} is needed and there is no terminal to ask on: store it with "
                f"'mnemoscope credentials set {request.name}', or give it on stdin with --password-stdin."
            )
        if request.retry:
            print(f"mnemoscope: the secret for {request.name} was refused; try again.", file=stderr)
        if not request.can_remember:
            print(f"mnemoscope: {request.why_not}.", file=stderr)
        value = Secret(getpass.getpass(f"{request.prompt}: ", stream=stderr))
        if not value:
            return None
        return Answer(value, remember=request.can_remember and _yes(
            f"Remember it in the keyring ({keyring_backend_name()})? [y/N] ", stdin, stderr))

    return Credentials(ask)


def read_new_secret(name: str, password_stdin: bool, *, stdin: TextIO | None = None,
                    stderr: TextIO | None = None) -> Secret:
    """The secret to store under name (credentials set): one line of stdin, or a prompt."""
    stdin = stdin or sys.stdin
    if password_stdin:
        return read_secret_line(name, stdin)
    if not _interactive(stdin):
        raise SecretNeededError("There is no terminal to ask for the secret on: give it on stdin with --password-stdin.")
    value = Secret(getpass.getpass(f"Secret for {name}: ", stream=stderr or sys.stderr))
    if not value:
        raise SecretNeededError(f"No secret was typed for {name}; nothing was stored.")
    return value


def read_secret_line(name: str, stdin: TextIO) -> Secret:
    """One line of stdin, without its line break."""
    line = stdin.readline()
    value = line[:-1] if line.endswith("\n") else line
    value = value[:-1] if value.endswith("\r") else value
    if not value:
        where = "stdin ended" if not line else "an empty line was read"
        raise SecretNeededError(f"--password-stdin: {where} where the secret for {name} was expected.")
    return Secret(value)


def _interactive(stdin: TextIO) -> bool:
    try:
        return stdin.isatty()
    except (AttributeError, ValueError):
        return False


def _yes(question: str, stdin: TextIO, stderr: TextIO) -> bool:
    print(question, end="", file=stderr, flush=True)
    return stdin.readline().strip().lower() in ("y", "yes")
