"""File > Credentials… and the password question, against a real keyring; and the proof that no
secret reaches any file Mnemoscope writes.

The keyring is GNOME Keyring's Secret Service on a private bus (helpers.keyring_daemon), or
keyring's fail backend for "no keyring here".
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from helpers.keyring_daemon import (  # noqa: F401
    KeyringDaemon,
    isolated_env,
    keyring_daemon,
    no_keyring,
    run_mnemoscope,
    secret_service,
)
from mnemoscope.storage import credentials as keyring_store
from mnemoscope.storage.credentials import Credentials, Request
from mnemoscope.ui.dialogs.credentials_dialog import CredentialsDialog, PasswordDialog, ask_password
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.workers import finish_all
from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtWidgets import QApplication

NAME = "postgresql://bob@db.example:5432/agents"


@pytest.fixture
def window(qtbot, tmp_path: Path) -> MainWindow:
    win = MainWindow(QSettings(str(tmp_path / "mnemoscope-home" / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    return win


def open_credentials(qtbot, window: MainWindow) -> CredentialsDialog:
    file_menu = window.menuBar().actions()[0].menu()
    assert window.credentials_action in file_menu.actions()
    assert window.credentials_action.text() == "&Credentials…"
    window.credentials_action.trigger()
    dialog = window.findChild(CredentialsDialog, "credentials_dialog")
    assert dialog is not None
    with qtbot.waitSignal(dialog.status_read):
        pass
    return dialog


def store_through(qtbot, dialog: CredentialsDialog, name: str, value: str) -> None:
    dialog.name.clear()
    qtbot.keyClicks(dialog.name, name)
    qtbot.keyClicks(dialog.secret, value)
    assert dialog.store_button.isEnabled()
    with qtbot.waitSignal(dialog.stored):
        qtbot.mouseClick(dialog.store_button, Qt.MouseButton.LeftButton)


def test_the_dialog_stores_replaces_lists_and_forgets_a_secret(qtbot, secret_service: KeyringDaemon, window) -> None:  # noqa: F811
    dialog = open_credentials(qtbot, window)
    assert dialog.status.text().startswith("Keyring: secrets are kept in SecretService Keyring")
    assert dialog.names.count() == 0
    assert dialog.secret.echoMode() == dialog.secret.EchoMode.Password
    assert not dialog.store_button.isEnabled() and not dialog.forget_button.isEnabled()

    store_through(qtbot, dialog, "postgresql+psycopg://bob@db.example/agents", "hunter2")
    assert secret_service.items() == {NAME: "hunter2"}
    assert [dialog.names.item(i).text() for i in range(dialog.names.count())] == [NAME]
    assert dialog.secret.text() == ""
    assert dialog.message.text() == f"Stored the secret for {NAME} in the keyring: SecretService Keyring " \
        "(keyring.backends.SecretService.Keyring)."

    store_through(qtbot, dialog, NAME, "hunter3")
    assert secret_service.items() == {NAME: "hunter3"}
    assert dialog.names.count() == 1
    dialog.names.clearSelection()
    assert dialog.name.text() == NAME and not dialog.forget_button.isEnabled()
    row = dialog.names.visualItemRect(dialog.names.item(0))
    qtbot.mouseClick(dialog.names.viewport(), Qt.MouseButton.LeftButton, pos=row.center())
    assert dialog.names.currentItem().text() == NAME and dialog.forget_button.isEnabled()
    with qtbot.waitSignal(dialog.forgotten) as forgotten:
        qtbot.mouseClick(dialog.forget_button, Qt.MouseButton.LeftButton)
    assert forgotten.args == [NAME]
    assert secret_service.items() == {} and dialog.names.count() == 0
    assert dialog.message.text() == f"Deleted the secret for {NAME} from the keyring."
    dialog.close()


def test_the_dialog_lists_the_names_the_command_line_stored(qtbot, secret_service: KeyringDaemon, window) -> None:  # noqa: F811
    keyring_store.remember("embeddings:https://api.openai.com/v1", "sk-test")
    dialog = open_credentials(qtbot, window)
    assert [dialog.names.item(i).text() for i in range(dialog.names.count())] == ["embeddings:https://api.openai.com/v1"]
    dialog.close()


def test_without_a_keyring_the_dialog_says_why_and_stores_nothing(qtbot, no_keyring, window, tmp_path: Path) -> None:  # noqa: F811
    dialog = open_credentials(qtbot, window)
    assert dialog.status.text().startswith("No usable keyring: no OS keyring is available here (the active backend "
                                           "is fail Keyring")
    assert dialog.status.text().endswith("Mnemoscope asks for each secret every time it needs one.")
    qtbot.keyClicks(dialog.name, NAME)
    assert not dialog.secret.isEnabled()
    assert not dialog.store_button.isEnabled()
    assert "fail Keyring" in dialog.store_button.toolTip()
    dialog.close()
    assert not (tmp_path / "mnemoscope-home" / "credentials.json").exists()


def answer_when_asked(qtbot, respond: Callable[[PasswordDialog], None]) -> None:
    """Respond to the password dialog once it is up (it runs its own modal loop)."""

    def attempt() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, PasswordDialog):
            QTimer.singleShot(20, attempt)
            return
        respond(dialog)

    QTimer.singleShot(0, attempt)


def test_the_password_question_offers_to_remember_and_the_answer_is_kept_once_accepted(
    qtbot, secret_service: KeyringDaemon  # noqa: F811
) -> None:
    def respond(dialog: PasswordDialog) -> None:
        assert dialog.remember.isEnabled() and dialog.findChild(object, "remember_why_not") is None
        assert not dialog.ok_button.isEnabled()
        qtbot.keyClicks(dialog.password, "hunter2")
        qtbot.keyClick(dialog.remember, Qt.Key.Key_Space)
        assert dialog.remember.isChecked()
        qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)

    answer_when_asked(qtbot, respond)
    run = Credentials(ask_password)
    assert run.get(NAME).reveal() == "hunter2"
    assert secret_service.items() == {}
    assert "SecretService" in run.accepted(NAME)
    assert secret_service.items() == {NAME: "hunter2"}


def test_without_a_keyring_the_question_cannot_remember_and_says_why(qtbot, no_keyring) -> None:  # noqa: F811
    seen: dict[str, object] = {}

    def respond(dialog: PasswordDialog) -> None:
        seen["enabled"] = dialog.remember.isEnabled()
        seen["why"] = dialog.findChild(object, "remember_why_not").text()
        qtbot.keyClicks(dialog.password, "hunter2")
        dialog.remember.setChecked(True)
        qtbot.keyClick(dialog.password, Qt.Key.Key_Return)

    answer_when_asked(qtbot, respond)
    answer = ask_password(Request(NAME, f"Password for {NAME}", *keyring_store.keyring_status(), retry=False))
    assert answer is not None and answer.secret.reveal() == "hunter2" and not answer.remember
    assert seen["enabled"] is False
    assert str(seen["why"]).startswith("Not remembered: no OS keyring is available here")
    assert str(seen["why"]).endswith("It will be asked for each time.")


def test_a_cancelled_question_gives_nothing_and_a_refused_one_says_so(qtbot) -> None:
    def respond(dialog: PasswordDialog) -> None:
        assert dialog.findChild(object, "password_refused").text() == f"The secret for {NAME} was refused. Try again."
        qtbot.keyClicks(dialog.password, "typed")
        dialog.reject()

    answer_when_asked(qtbot, respond)
    assert ask_password(Request(NAME, "Password", can_remember=True, retry=True)) is None


# -- no secret in any file ---------------------------------------------------------------------------


def forms_of(secret: str) -> set[bytes]:
    """The secret's bytes as they could sit in a file: text, URL-quoted, base64 at every
    alignment, hex."""
    raw = secret.encode("utf-8")
    forms = {raw, quote(secret, safe="").encode(), quote_plus(secret).encode(), raw.hex().encode(),
             raw.hex().upper().encode(), secret.encode("utf-16-le"), json.dumps(secret).encode()}
    for pad in range(3):  # the secret at any offset of a base64-encoded blob
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(b"\0" * pad + raw)
            forms.add(encoded[4 if pad else 0:-4])  # without the groups its neighbours' bytes share
    return {form for form in forms if len(form) >= 8}


def test_no_secret_reaches_any_file_mnemoscope_writes(qtbot, secret_service: KeyringDaemon, tmp_path: Path) -> None:  # noqa: F811
    db_password = "pg-" + secrets.token_urlsafe(18)
    api_key = "sk-" + secrets.token_hex(20)
    token = "chroma-" + secrets.token_urlsafe(18)
    env = isolated_env(tmp_path, secret_service)
    store = tmp_path / "store"
    outputs: list[str] = []

    def cli(*argv: str, stdin: str | None = None) -> str:
        done = run_mnemoscope(env, *argv, stdin=stdin)
        outputs.extend([done.stdout, done.stderr])
        assert done.returncode == 0, done.stderr
        return done.stdout

    # Credentials stored from the command line: from stdin, and from a URL that carried its password.
    cli("credentials", "set", "postgresql+psycopg://bob@db.example/agents", "--password-stdin",
        stdin=db_password + "\n")
    cli("credentials", "set", f"embeddings:https://key:{quote(api_key)}@api.openai.com/v1", "--password-stdin",
        stdin=api_key + "\n")
    cli("credentials", "status")
    cli("credentials", "status", "--json")
    # The store: written, read, curated, undone, exported.
    cli("demo", str(store))
    first = json.loads(cli("ls", str(store), "--json", "--limit", "3"))["memories"][0]["id"]
    cli("edit", str(store), first, "--content", "edited while a password sat in the keyring", "--json")
    cli("undo", str(store))
    cli("history", str(store), "--json")
    cli("export", str(store), str(tmp_path / "exports" / "all.jsonl"), "--format", "jsonl")
    cli("export", str(store), str(tmp_path / "exports" / "all.md"), "--format", "markdown")
    cli("info", str(store))
    # The app, as its own process: opens the store and writes its settings (recent stores, geometry).
    env["QT_QPA_PLATFORM"] = "offscreen"
    cli(str(store), "--screenshot", str(tmp_path / "shot.png"))
    # The app in this process: a secret stored through the dialog, the window's settings written on close.
    win = MainWindow(QSettings(str(tmp_path / "mnemoscope-home" / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.store_opened):
        win.open_path(store)
    dialog = open_credentials(qtbot, win)
    store_through(qtbot, dialog, "http://chroma.example:8000", token)
    dialog.close()
    win.close()
    assert finish_all()  # the window's reads still running (a background scan) end, and with them the store's files settle

    assert secret_service.items() == {
        "postgresql://bob@db.example:5432/agents": db_password,
        "embeddings:https://key@api.openai.com/v1": api_key,
        "http://chroma.example:8000": token,
    }
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    names = {p.name for p in written}
    assert {"credentials.json", "settings.ini", "memory.db", "all.jsonl", "all.md", "shot.png"} <= names
    assert any(p.is_relative_to(tmp_path / "home") for p in written), "HOME held nothing: was it used?"
    settings_text = (tmp_path / "mnemoscope-home" / "settings.ini").read_text(encoding="utf-8")
    assert str(store) in settings_text  # the settings were written, with the recent store
    for value in (db_password, api_key, token):
        forms = forms_of(value)
        for path in written:
            try:
                data = path.read_bytes()
            except FileNotFoundError:  # a -wal or -shm its last connection removed since: no bytes left on disk
                continue
            found = [form for form in forms if form in data]
            assert not found, f"a secret's bytes ({found[0]!r}) are in {path}"
        for text in outputs:
            assert value not in text and quote(value, safe="") not in text
