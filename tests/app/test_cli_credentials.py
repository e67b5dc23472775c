"""mnemoscope credentials set/forget/status, and the terminal's questions, against a real keyring.

Each command runs as its own process with HOME, XDG dirs and MNEMOSCOPE_HOME in tmp_path, and the
keyring of helpers.keyring_daemon (GNOME Keyring's Secret Service) or keyring's fail backend.
The prompts run on a pseudo-terminal, as a person at a terminal sees them.
"""

from __future__ import annotations

import io
import json
import os
import pty
import select
import signal
import shutil
import sys
import time
from pathlib import Path

import pytest
from helpers.keyring_daemon import FAIL_BACKEND, KeyringDaemon, isolated_env, keyring_daemon  # noqa: F401
from helpers.keyring_daemon import run_mnemoscope as mnemoscope

from mnemoscope.app.terminal_credentials import SecretNeededError, terminal_credentials

NAME = "postgresql://bob@db.example:5432/agents"
URL = "postgresql+psycopg://bob@db.example/agents"
EXE = str(shutil.which("mnemoscope", path=str(Path(sys.executable).parent)))


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


def test_set_stores_the_secret_from_stdin_in_the_secret_service_and_forget_deletes_it(
    keyring_daemon: KeyringDaemon, tmp_path: Path  # noqa: F811
) -> None:
    keyring_daemon.clear()
    env = isolated_env(tmp_path, keyring_daemon)
    done = mnemoscope(env, "credentials", "set", URL, "--password-stdin", stdin="hunter2 with spaces\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"Stored the secret for {NAME} in the keyring: SecretService Keyring " \
        "(keyring.backends.SecretService.Keyring).\n"
    assert keyring_daemon.items() == {NAME: "hunter2 with spaces"}

    status = mnemoscope(env, "credentials", "status", "--json")
    data = json.loads(status.stdout)
    assert data["usable"] and "SecretService" in data["backend"] and data["names"] == [NAME]
    assert "hunter2" not in status.stdout + status.stderr
    shown = mnemoscope(env, "credentials", "status").stdout
    assert "  usable: secrets are kept in SecretService Keyring" in shown and NAME in shown

    forgotten = mnemoscope(env, "credentials", "forget", NAME)
    assert forgotten.returncode == 0, forgotten.stderr
    assert forgotten.stdout == f"Deleted the secret for {NAME} from the keyring.\n"
    assert keyring_daemon.items() == {}
    again = mnemoscope(env, "credentials", "forget", NAME)
    assert again.returncode == 1
    assert again.stderr == f"mnemoscope: The keyring held no secret for {NAME}; nothing was deleted.\n"
    assert json.loads(mnemoscope(env, "credentials", "status", "--json").stdout)["names"] == []


def test_set_asks_on_the_terminal_without_echoing(keyring_daemon: KeyringDaemon, tmp_path: Path) -> None:  # noqa: F811
    keyring_daemon.clear()
    env = isolated_env(tmp_path, keyring_daemon)
    code, shown = on_a_terminal([EXE, "credentials", "set", "embeddings:https://api.openai.com/v1/"], env,
                                [("Secret for embeddings:https://api.openai.com/v1: ", "sk-test-123")])
    assert code == 0, shown
    assert "sk-test-123" not in shown
    assert "Stored the secret for embeddings:https://api.openai.com/v1 in the keyring: SecretService" in shown
    assert keyring_daemon.items() == {"embeddings:https://api.openai.com/v1": "sk-test-123"}


def test_without_a_keyring_set_refuses_and_writes_nothing(tmp_path: Path) -> None:
    env = isolated_env(tmp_path, None)
    done = mnemoscope(env, "credentials", "set", URL, "--password-stdin", stdin="hunter2\n")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("mnemoscope: No usable keyring: no OS keyring is available here (the active "
                                  "backend is fail Keyring (keyring.backends.fail.Keyring)).")
    assert f"Nothing was stored or deleted for {NAME}; its secret will be asked for each time it is needed." \
        in done.stderr
    assert "hunter2" not in done.stderr
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []

    status = mnemoscope(env, "credentials", "status")
    assert status.returncode == 0
    assert "not usable: no OS keyring is available here" in status.stdout
    assert "secrets are asked for each time they are needed" in status.stdout
    assert mnemoscope(env, "credentials", "forget", NAME).returncode == 1


def test_set_without_a_terminal_or_password_stdin_says_how(keyring_daemon: KeyringDaemon, tmp_path: Path) -> None:  # noqa: F811
    done = mnemoscope(isolated_env(tmp_path, keyring_daemon), "credentials", "set", URL)
    assert done.returncode == 2
    assert done.stderr == "mnemoscope: There is no terminal to ask for the secret on: give it on stdin with " \
        "--password-stdin.\n"


def test_a_url_command_asks_once_and_remembers_when_told(keyring_daemon: KeyringDaemon, tmp_path: Path) -> None:  # noqa: F811
    """What a command opening a URL does with the one call it makes, on a terminal."""
    keyring_daemon.clear()
    env = isolated_env(tmp_path, keyring_daemon)
    program = (
        "from mnemoscope.app.terminal_credentials import terminal_credentials\n"
        "run = terminal_credentials(password_stdin=False)\n"
        f"clean, name, first = run.for_url({URL!r})\n"
        f"assert run.for_url({URL!r})[2] is first\n"
        "print('opened', clean, first)\n"
        "print('remembered in', run.accepted(name))\n"
    )
    code, shown = on_a_terminal([sys.executable, "-c", program], env, [
        (f"Password for {URL}: ", "hunter2"),
        ("Remember it in the keyring (SecretService Keyring", "y"),
    ])
    assert code == 0, shown
    assert f"opened {URL} ********" in shown and "remembered in SecretService Keyring" in shown
    assert "hunter2" not in shown
    assert keyring_daemon.items() == {NAME: "hunter2"}

    code, shown = on_a_terminal([sys.executable, "-c", program], env, [])  # the next run asks nothing
    assert code == 0, shown
    assert "Password" not in shown and f"opened {URL} ********" in shown


def test_without_a_keyring_a_url_command_asks_each_time_and_offers_nothing(tmp_path: Path) -> None:
    env = isolated_env(tmp_path, None)
    program = (
        "from mnemoscope.app.terminal_credentials import terminal_credentials\n"
        f"print('got', bool(terminal_credentials(password_stdin=False).get({NAME!r})))\n"
    )
    for _run in range(2):
        code, shown = on_a_terminal([sys.executable, "-c", program], env, [(f"Password for {NAME}: ", "hunter2")])
        assert code == 0, shown
        assert "mnemoscope: no OS keyring is available here (the active backend is fail Keyring" in shown
        assert "Remember" not in shown and "got True" in shown and "hunter2" not in shown
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_password_stdin_gives_one_line_per_secret_asked_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", FAIL_BACKEND)
    from helpers.keyring_daemon import use_backend_from_environment

    use_backend_from_environment()
    try:
        run = terminal_credentials(True, stdin=io.StringIO("db-pass\r\napi key with spaces\n"), stderr=io.StringIO())
        assert run.get(NAME).reveal() == "db-pass"
        assert run.get("embeddings:https://api.openai.com/v1").reveal() == "api key with spaces"
        assert run.get(NAME).reveal() == "db-pass"  # asked once per run
        with pytest.raises(SecretNeededError, match="stdin ended where the secret for http://chroma:8000 was expected"):
            run.get("http://chroma:8000")
        with pytest.raises(SecretNeededError, match="mnemoscope credentials set http://chroma:8000"):
            terminal_credentials(False, stdin=io.StringIO(""), stderr=io.StringIO()).get("http://chroma:8000")
    finally:
        monkeypatch.undo()
        use_backend_from_environment()
