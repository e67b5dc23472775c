"""A program run on a pseudo-terminal, as a person at a terminal sees it: each prompt waited for,
its reply typed."""

from __future__ import annotations

import os
import pty
import select
import signal
import time


def on_a_terminal(argv: list[str], env: dict[str, str], conversation: list[tuple[str, str]]) -> tuple[int, str]:
    """Run argv on a pseudo-terminal: wait for each prompt, type its reply; the exit code and all shown."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: becomes the program
        try:
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    shown = ""
    try:
        for prompt, reply in conversation:
            shown += _read_until(fd, prompt, shown)
            os.write(fd, (reply + "\n").encode())
        shown += _read_until(fd, None, shown)
    finally:
        status = _reap(pid)
        os.close(fd)
    return os.waitstatus_to_exitcode(status), shown.replace("\r\n", "\n")


def _reap(pid: int, seconds: float = 30) -> int:
    """The program's wait status; a program still running after the conversation failed (waiting
    for a reply that will not come) is killed, so that the test fails instead of hanging."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    return os.waitpid(pid, 0)[1]


def _read_until(fd: int, prompt: str | None, before: str) -> str:
    got = ""
    deadline = time.monotonic() + 60
    waiting = select.poll()  # not select(): after a long test run the descriptor may be above 1023
    waiting.register(fd, select.POLLIN)
    while prompt is None or prompt not in got:
        if time.monotonic() > deadline:
            raise AssertionError(f"no {prompt!r} on the terminal; it showed {before + got!r}")
        if not waiting.poll(500):
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the program ended and closed the terminal
            chunk = b""
        if not chunk:
            if prompt is None:
                break
            raise AssertionError(f"the program ended before {prompt!r}; it showed {before + got!r}")
        got += chunk.decode("utf-8", "replace")
    return got
