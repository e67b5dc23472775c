"""Mnemoscope's own data folder: MNEMOSCOPE_HOME relocates it; otherwise the platform's user
data folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mnemoscope.storage.data_folder import data_folder


def test_mnemoscope_home_relocates_the_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "portable"))
    assert data_folder() == tmp_path / "portable"


def test_without_it_the_folder_is_the_platforms_user_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MNEMOSCOPE_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    assert data_folder() == tmp_path / "share" / "mnemoscope"
    monkeypatch.setenv("MNEMOSCOPE_HOME", "")  # empty: not set
    assert data_folder() == tmp_path / "share" / "mnemoscope"


@pytest.mark.skipif(sys.platform != "linux", reason="the XDG layout")
def test_the_folder_follows_the_environment_it_is_placed_by(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kept between calls (every write to a store asks), and asked again when HOME or XDG moves."""
    monkeypatch.delenv("MNEMOSCOPE_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "alice"))
    assert data_folder() == tmp_path / "alice" / ".local" / "share" / "mnemoscope"
    monkeypatch.setenv("HOME", str(tmp_path / "bob"))
    assert data_folder() == tmp_path / "bob" / ".local" / "share" / "mnemoscope"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_folder() == tmp_path / "xdg" / "mnemoscope"
