"""app/terminal_credentials.py: the terminal's questions for a command's secrets (a getpass prompt,
or one line of stdin each with --password-stdin), against a real keyring or keyring's fail backend.
The prompts run on a pseudo-terminal, as a person at a terminal sees them."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from helpers.keyring_daemon import FAIL_BACKEND, KeyringDaemon, isolated_env, keyring_daemon  # noqa: F401
from helpers.pseudo_terminal import on_a_terminal
from mnemoscope.app.terminal_credentials import (
    SecretNeededError,
    read_new_secret,
    read_secret_line,
    terminal_credentials,
)

NAME = "postgresql://bob@db.example:5432/agents"
URL = "postgresql+psycopg://bob@db.example/agents"


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


def test_a_secret_line_keeps_its_spaces_and_drops_its_line_break() -> None:
    assert read_secret_line(NAME, io.StringIO("  two words \r\nnext\n")).reveal() == "  two words "
    assert read_secret_line(NAME, io.StringIO("last line without a break")).reveal() == "last line without a break"
    with pytest.raises(SecretNeededError, match="an empty line was read where the secret for"):
        read_secret_line(NAME, io.StringIO("\n"))
    with pytest.raises(SecretNeededError, match="stdin ended where the secret for"):
        read_secret_line(NAME, io.StringIO(""))


def test_a_new_secret_comes_from_stdin_or_needs_a_terminal() -> None:
    assert read_new_secret(NAME, True, stdin=io.StringIO("s3cret\n")).reveal() == "s3cret"
    with pytest.raises(SecretNeededError, match="no terminal to ask for the secret on"):
        read_new_secret(NAME, False, stdin=io.StringIO("s3cret\n"), stderr=io.StringIO())


def test_a_secret_asked_for_on_a_terminal_is_not_echoed(tmp_path: Path) -> None:
    env = isolated_env(tmp_path, None)
    program = (
        "from mnemoscope.app.terminal_credentials import read_new_secret\n"
        f"print('length', len(read_new_secret({NAME!r}, False).reveal()))\n"
    )
    code, shown = on_a_terminal([sys.executable, "-c", program], env, [(f"Secret for {NAME}: ", "hunter2")])
    assert code == 0, shown
    assert "length 7" in shown and "hunter2" not in shown
