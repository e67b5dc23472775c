"""Packaging metadata a desktop or a software centre reads."""

from __future__ import annotations

import configparser
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP_ID = "io.github.mnemoscope.Mnemoscope"


def test_desktop_entry_launches_the_console_script() -> None:
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(ROOT / "packaging" / f"{APP_ID}.desktop")
    section = entry["Desktop Entry"]
    assert section["Type"] == "Application" and section["Exec"].split()[0] == "mnemoscope"
    assert section["Icon"] == APP_ID


def test_metainfo_names_the_desktop_entry() -> None:
    tree = ET.parse(ROOT / "packaging" / f"{APP_ID}.metainfo.xml")
    assert tree.findtext("id") == APP_ID
    assert tree.find("launchable").text == f"{APP_ID}.desktop"


def test_packaging_is_not_a_python_package() -> None:
    # A packaging/__init__.py would shadow PyPA's "packaging" module.
    assert not (ROOT / "packaging" / "__init__.py").exists()
