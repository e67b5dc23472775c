"""File > Connect to server…: a store on a server, named by its URL.

The native store on PostgreSQL (``postgresql+psycopg://USER@HOST/DATABASE``), a Chroma server
(``http(s)://HOST:PORT``, optionally ``?collection=NAME``), or both as one workspace. The password
field may stay empty: the keyring's is used, and the person is asked only if the server wants one.
What the dialog hands on holds the URL without any secret; the secret travels apart, as a Secret.
"""

from __future__ import annotations

from dataclasses import dataclass

from mnemoscope.storage.credentials import Secret
from mnemoscope.storage.detect.store_urls import CHROMA_SERVER, POSTGRESQL, LocationError, parse_location
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)


@dataclass(frozen=True)
class ServerRequest:
    """What to open: the store's URL and its vectors' (both without secrets), the password the
    person typed for the store (None: the keyring's, or ask), and whether to remember it."""

    url: str
    vectors: str | None
    password: Secret | None
    remember: bool
    read_only: bool


class ConnectDialog(QDialog):
    """Signals: connect_requested(object ServerRequest)."""

    connect_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Connect to server")
        self.url = QLineEdit()
        self.url.setObjectName("server_url")
        self.url.setPlaceholderText("postgresql+psycopg://user@host/database  or  http://host:8000")
        self.url.setAccessibleName("Store URL")
        self.vectors = QLineEdit()
        self.vectors.setObjectName("vectors_url")
        self.vectors.setPlaceholderText("optional: http://host:8000 (a Chroma server for a PostgreSQL store)")
        self.vectors.setAccessibleName("Vectors URL")
        self.password = QLineEdit()
        self.password.setObjectName("server_password")
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setPlaceholderText("empty: the keyring's, or asked for when needed")
        self.password.setAccessibleName("Password")
        self.remember = QCheckBox("&Remember the password in the keyring")
        self.remember.setObjectName("remember_password")
        self.read_only = QCheckBox("Open &read-only")
        self.read_only.setObjectName("connect_read_only")
        self.problem = QLabel()
        self.problem.setObjectName("connect_problem")
        self.problem.setWordWrap(True)
        self.problem.hide()
        form = QFormLayout()
        form.addRow("&Store:", self.url)
        form.addRow("&Vectors:", self.vectors)
        form.addRow("&Password:", self.password)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.remember)
        layout.addWidget(self.read_only)
        layout.addWidget(self.problem)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.connect_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.connect_button.setText("&Connect")
        self.connect_button.setEnabled(False)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.url.textChanged.connect(lambda text: self.connect_button.setEnabled(bool(text.strip())))
        self.resize(560, 0)

    def request(self) -> ServerRequest:
        """What the fields ask for; LocationError when a URL names nothing Mnemoscope opens."""
        store = parse_location(self.url.text().strip())
        if not store.is_server:
            raise LocationError(f"{store.text} is a path: open it with File > Open.")
        vectors_text = self.vectors.text().strip()
        vectors = parse_location(vectors_text) if vectors_text else None
        if vectors is not None and (vectors.kind != CHROMA_SERVER or store.kind != POSTGRESQL):
            raise LocationError("Vectors are a Chroma server's URL, given with a PostgreSQL store.")
        typed = self.password.text()
        password = Secret(typed) if typed else store.secret
        return ServerRequest(store.text, vectors.text if vectors else None, password,
                             self.remember.isChecked() and password is not None, self.read_only.isChecked())

    def accept(self) -> None:
        try:
            request = self.request()
        except LocationError as exc:
            self.problem.setText(str(exc))
            self.problem.show()
            return
        self.password.clear()
        super().accept()
        self.connect_requested.emit(request)
