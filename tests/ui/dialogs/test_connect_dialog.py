"""The connect dialog turns its fields into one ServerRequest (never a path), and says what is
wrong with a URL it cannot open."""

from __future__ import annotations

from mnemoscope.ui.dialogs.connect_dialog import ConnectDialog, ServerRequest


def test_a_server_url_is_requested_and_a_path_is_refused(qtbot) -> None:
    dialog = ConnectDialog()
    qtbot.addWidget(dialog)
    dialog.open()
    dialog.url.setText("/some/folder")
    with qtbot.assertNotEmitted(dialog.connect_requested):
        dialog.accept()
    assert "is a path" in dialog.problem.text() and dialog.isVisible()
    dialog.url.setText("postgresql+psycopg://agent@db.example/memories")
    dialog.vectors.setText("http://chroma.example:8000")
    dialog.password.setText("s3cret")
    with qtbot.waitSignal(dialog.connect_requested) as requested:
        dialog.accept()
    request = requested.args[0]
    assert isinstance(request, ServerRequest)
    assert request.url.startswith("postgresql+psycopg://agent@db.example") and "s3cret" not in request.url
    assert request.vectors is not None and request.vectors.startswith("http://chroma.example:8000")
    assert request.password is not None and dialog.password.text() == ""  # the field keeps no secret
