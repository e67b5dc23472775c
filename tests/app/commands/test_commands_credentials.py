"""mnemoscope credentials set/forget/status (app/commands/credentials.py), against a real keyring.

Each command runs as its own process with HOME, XDG dirs and MNEMOSCOPE_HOME in tmp_path, and the
keyring of helpers.keyring_daemon (GNOME Keyring's Secret Service) or keyring's fail backend.
The prompts run on a pseudo-terminal, as a person at a terminal sees them.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from helpers.keyring_daemon import FAIL_BACKEND, KeyringDaemon, isolated_env, keyring_daemon  # noqa: F401
from helpers.keyring_daemon import run_mnemoscope as mnemoscope
from helpers.pseudo_terminal import on_a_terminal

NAME = "postgresql://bob@db.example:5432/agents"
URL = "postgresql+psycopg://bob@db.example/agents"
EXE = str(shutil.which("mnemoscope", path=str(Path(sys.executable).parent)))


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


def test_the_handler_reports_an_unusable_keyring_and_refuses_to_forget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """cmd_credentials in this process, parsed by the parsers register() declares, on keyring's fail backend."""
    from helpers.keyring_daemon import use_backend_from_environment
    from mnemoscope.app.cli import build_parser
    from mnemoscope.app.commands.credentials import cmd_credentials
    from mnemoscope.storage.credentials import KeyringUnavailableError

    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", FAIL_BACKEND)
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "mnemoscope-home"))
    use_backend_from_environment()
    try:
        args = build_parser().parse_args(["credentials", "status", "--json"])
        assert args.handler is cmd_credentials
        assert cmd_credentials(args) == 0
        status = json.loads(capsys.readouterr().out)
        assert status["usable"] is False and status["names"] == [] and "fail" in status["backend"]
        with pytest.raises(KeyringUnavailableError, match="Nothing was stored or deleted for " + NAME):
            cmd_credentials(build_parser().parse_args(["credentials", "forget", URL]))
    finally:
        monkeypatch.undo()
        use_backend_from_environment()
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
