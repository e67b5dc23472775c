"""File > Credentials…: the secrets Mnemoscope keeps in the OS keyring, and the password question.

The dialog lists the names of the credentials stored through Mnemoscope (names only: the values
stay in the keyring), stores or replaces one, forgets one, and says which keyring is in use or
why none can be. Every keyring call runs on a worker: an OS keyring may wait on its daemon.

``ask_password(request)`` is the question the code that opens a URL asks when the keyring holds
nothing: a masked field and a "remember in the keyring" box, disabled with the reason when there
is no usable keyring. It fits ``storage.credentials.Credentials(ask=...)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mnemoscope.storage import StoreError
from mnemoscope.storage import credentials as keyring_store
from mnemoscope.storage.credentials import Answer, KeyringStatus, Request, Secret
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..workers import ASKED, start_worker


class CredentialsDialog(QDialog):
    """Signals: status_read(object KeyringStatus), stored(str name), forgotten(str name), failed(str message)."""

    status_read = Signal(object)
    stored = Signal(str)
    forgotten = Signal(str)
    failed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Credentials")
        self.keyring: KeyringStatus | None = None
        self.status = QLabel("Looking for the keyring…")
        self.status.setObjectName("keyring_status")
        self.status.setWordWrap(True)
        self.names = QListWidget()
        self.names.setObjectName("credential_names")
        self.names.itemSelectionChanged.connect(self._on_names_selection_changed)
        self.forget_button = QPushButton("&Forget")
        self.forget_button.setObjectName("forget_button")
        self.forget_button.clicked.connect(self.forget_selected)
        self.name = QLineEdit()
        self.name.setObjectName("credential_name")
        self.name.setPlaceholderText("postgresql://user@host:5432/db, http://host:8000, embeddings:https://host/v1")
        self.secret = QLineEdit()
        self.secret.setObjectName("credential_secret")
        self.secret.setEchoMode(QLineEdit.EchoMode.Password)
        self.store_button = QPushButton("&Store")
        self.store_button.setObjectName("store_button")
        self.store_button.clicked.connect(self.store_entered)
        self.name.textChanged.connect(self._update_buttons)
        self.secret.textChanged.connect(self._update_buttons)
        self.message = QLabel("")
        self.message.setObjectName("credentials_message")
        self.message.setWordWrap(True)

        stored_row = QHBoxLayout()
        stored_row.addWidget(self.names, 1)
        stored_row.addWidget(self.forget_button, 0, Qt.AlignmentFlag.AlignTop)
        form = QFormLayout()
        form.addRow("Name or URL", self.name)
        form.addRow("Password or key", self.secret)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        buttons.addButton(self.store_button, QDialogButtonBox.ButtonRole.ActionRole)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addWidget(QLabel("Stored through Mnemoscope (names only; the secrets stay in the keyring):"))
        layout.addLayout(stored_row)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self.resize(620, 420)
        self._busy = False
        self._update_buttons()
        self.refresh()

    def refresh(self) -> None:
        self._run(_read_status)

    def store_entered(self) -> None:
        """Store (or replace) the secret typed for the name typed; the field is emptied at once."""
        name = keyring_store.credential_name(self.name.text().strip())
        value = Secret(self.secret.text())
        self.secret.clear()
        self._run(_store, name, value)

    def forget_selected(self) -> None:
        item = self.names.currentItem()
        if item is not None:
            self._run(_forget, item.text())

    def _run(self, func: Any, *args: Any) -> None:
        self._busy = True
        self._update_buttons()
        start_worker(func, *args, on_result=self._on_worker_result, on_error=self._on_worker_error,
                     priority=ASKED)

    def _on_worker_result(self, result: _Done) -> None:
        event, detail, status, names = result.event, result.name, result.status, result.names
        self._busy = False
        self.keyring = status
        self.status.setText(("Keyring: " if status.usable else "No usable keyring: ") + status.why + (
            "" if status.usable else ". Mnemoscope asks for each secret every time it needs one."))
        chosen = detail if event == "stored" else None
        self.names.clear()
        self.names.addItems(names)
        for row in range(self.names.count()):
            if self.names.item(row).text() == chosen:
                self.names.setCurrentRow(row)
        self._update_buttons()
        if event == "stored":
            self.message.setText(f"Stored the secret for {detail} in the keyring: {result.backend}.")
            self.stored.emit(detail)
        elif event == "forgotten":
            self.message.setText(f"Deleted the secret for {detail} from the keyring.")
            self.forgotten.emit(detail)
        self.status_read.emit(status)

    def _on_worker_error(self, exc: BaseException) -> None:
        self._busy = False
        text = str(exc) if isinstance(exc, StoreError) else f"Internal error ({type(exc).__name__}). Please report it."
        self.message.setText(text)
        self._update_buttons()
        self.failed.emit(text)

    def _on_names_selection_changed(self) -> None:
        item = self.names.currentItem()
        if item is not None and item.isSelected():
            self.name.setText(item.text())
        self._update_buttons()

    def _update_buttons(self) -> None:
        usable = bool(self.keyring and self.keyring.usable) and not self._busy
        self.store_button.setEnabled(usable and bool(self.name.text().strip()) and bool(self.secret.text()))
        self.forget_button.setEnabled(usable and bool(self.names.selectedItems()))
        why = "" if usable or self.keyring is None else self.keyring.why
        self.store_button.setToolTip(why)
        self.secret.setEnabled(self.keyring is None or self.keyring.usable)


@dataclass(frozen=True)
class _Done:
    """What a keyring worker did (event, name, backend) and the keyring's state after it."""

    event: str
    name: str
    backend: str
    status: KeyringStatus
    names: list[str]


def _read_status() -> _Done:
    return _Done("status", "", "", keyring_store.keyring_status(), keyring_store.stored_names())


def _store(name: str, value: Secret) -> _Done:
    backend = keyring_store.remember(name, value)
    return _Done("stored", name, backend, keyring_store.keyring_status(), keyring_store.stored_names())


def _forget(name: str) -> _Done:
    if not keyring_store.forget(name):
        raise StoreError(f"The keyring held no secret for {name}; it is no longer listed.")
    return _Done("forgotten", name, "", keyring_store.keyring_status(), keyring_store.stored_names())


class PasswordDialog(QDialog):
    """The password (or API key) for one credential, and whether to remember it in the keyring."""

    def __init__(self, request: Request, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("password_dialog")
        self.setWindowTitle("Password needed")
        self.request = request
        layout = QVBoxLayout(self)
        if request.retry:
            refused = QLabel(f"The secret for {request.name} was refused. Try again.")
            refused.setObjectName("password_refused")
            layout.addWidget(refused)
        prompt = QLabel(request.prompt)
        prompt.setWordWrap(True)
        layout.addWidget(prompt)
        self.password = QLineEdit()
        self.password.setObjectName("password")
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        layout.addWidget(self.password)
        self.remember = QCheckBox("&Remember in the keyring")
        self.remember.setObjectName("remember")
        self.remember.setEnabled(request.can_remember)
        layout.addWidget(self.remember)
        if not request.can_remember:
            self.remember.setToolTip(request.why_not)
            why = QLabel(f"Not remembered: {request.why_not}. It will be asked for each time.")
            why.setObjectName("remember_why_not")
            why.setWordWrap(True)
            layout.addWidget(why)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setEnabled(False)
        self.password.textChanged.connect(lambda text: self.ok_button.setEnabled(bool(text)))
        self.resize(440, 0)

    def answer(self) -> Answer | None:
        if self.result() != QDialog.DialogCode.Accepted or not self.password.text():
            return None
        return Answer(Secret(self.password.text()), remember=self.remember.isEnabled() and self.remember.isChecked())


def ask_password(request: Request, parent: QWidget | None = None) -> Answer | None:
    """Ask for one secret (modal); None when the person cancels."""
    dialog = PasswordDialog(request, parent)
    dialog.exec()
    answer = dialog.answer()
    dialog.password.clear()
    dialog.deleteLater()
    return answer
