"""Packaging metadata a desktop or a software centre reads."""

from __future__ import annotations

import ast
import configparser
import os
import re
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP_ID = "io.github.mnemoscope.Mnemoscope"
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256)
HICOLOR = ROOT / "resources" / "icons" / "hicolor"


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


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None,
                    reason="desktop-file-validate is not installed (apt: desktop-file-utils; .ci/run installs it)")
def test_desktop_entry_is_valid_without_a_hint() -> None:
    done = subprocess.run(["desktop-file-validate", str(ROOT / "packaging" / f"{APP_ID}.desktop")],
                          capture_output=True, text=True)
    assert done.returncode == 0 and not (done.stdout + done.stderr).strip(), done.stdout + done.stderr


@pytest.mark.skipif(shutil.which("appstreamcli") is None,
                    reason="appstreamcli is not installed (apt: appstream; .ci/run installs it)")
def test_metainfo_is_valid_under_strict_validation_without_a_warning_or_info() -> None:
    done = subprocess.run(["appstreamcli", "validate", "--strict", "--no-net", "--pedantic",
                           str(ROOT / "packaging" / f"{APP_ID}.metainfo.xml")], capture_output=True, text=True)
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    assert not re.findall(r"^[EWI]: .*", report, re.MULTILINE), report
    # The one pedantic remark: AppStream would like a lowercase id; the reverse-DNS id with the
    # app's capitalised name is what the .desktop file and the icon are called.
    assert set(re.findall(r"^P: \S+ (\S+)", report, re.MULTILINE)) <= {"cid-contains-uppercase-letter"}, report


def test_metainfo_has_what_software_centres_require() -> None:
    tree = ET.parse(ROOT / "packaging" / f"{APP_ID}.metainfo.xml")
    assert tree.find("content_rating").get("type") == "oars-1.1"
    assert tree.findtext("developer_name")
    assert tree.find("url[@type='homepage']").text.startswith("https://")
    assert tree.findtext("icon") == APP_ID
    images = [image.text for image in tree.iter("image")]
    assert images and all(text.startswith("https://") for text in images)
    for text in images:  # every screenshot named is one the repository ships
        assert (ROOT / "resources" / "screenshots" / Path(text).name).is_file(), text
    assert all(release.find("description") is not None for release in tree.iter("release"))


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and header[12:16] == b"IHDR", f"{path} is not a PNG"
    return struct.unpack(">II", header[16:24])


@pytest.mark.parametrize("size", ICON_SIZES)
def test_the_icon_exists_at_each_size(size: int) -> None:
    assert _png_size(HICOLOR / f"{size}x{size}" / "apps" / f"{APP_ID}.png") == (size, size)


def test_the_icon_has_a_scalable_version() -> None:
    svg = ET.parse(HICOLOR / "scalable" / "apps" / f"{APP_ID}.svg").getroot()
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"


def test_the_bundle_entry_script_imports_the_cli_absolutely() -> None:
    spec = (ROOT / "packaging" / "mnemoscope.spec").read_text()
    scripts = re.findall(r'here / "([\w.]+\.py)"', spec)
    assert scripts == ["entry.py"], "the spec's Analysis should run packaging/entry.py"
    tree = ast.parse((ROOT / "packaging" / scripts[0]).read_text())
    imports = [node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert [(node.module, node.level) for node in imports] == [("mnemoscope.app.cli", 0)]


def test_the_license_ships_in_the_wheel_metadata() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "Copyright (c) 2026 The Mnemoscope developers" in text
    pyproject = (ROOT / "pyproject.toml").read_text()  # tomllib is Python 3.11+
    assert re.search(r'^license = "MIT"$', pyproject, re.MULTILINE)
    assert re.search(r'^license-files = \["LICENSE"\]$', pyproject, re.MULTILINE)


def test_the_bundle_script_is_executable() -> None:
    assert os.access(ROOT / "packaging" / "build-bundle", os.X_OK)
    assert os.access(ROOT / "packaging" / "render-icons", os.X_OK)

