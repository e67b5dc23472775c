"""The built wheel installs one import package, mnemoscope, and every module of the tree."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_holds_only_mnemoscope_and_every_module(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", str(ROOT), "-w", str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("mnemoscope-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    dist_info = "-".join(wheel.name.split("-")[:2]) + ".dist-info"
    assert {n.split("/")[0] for n in names} == {"mnemoscope", dist_info}
    expected = {
        f"mnemoscope/{p.relative_to(ROOT).as_posix()}"
        for folder in ("storage", "app", "ui")
        for p in (ROOT / folder).rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert expected <= set(names), sorted(expected - set(names))
    data_files = {  # package data read at run time (findings rules, the migrations' template)
        f"mnemoscope/{p.relative_to(ROOT).as_posix()}"
        for folder in ("storage", "app", "ui")
        for p in (ROOT / folder).rglob("*")
        if p.is_file() and p.suffix in (".json", ".mako") and "__pycache__" not in p.parts
    }
    assert data_files <= set(names), sorted(data_files - set(names))
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "mnemoscope = mnemoscope.app.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
    # Help > Mnemoscope Help and Help > Store formats read the README from the installed metadata.
    metadata = zipfile.ZipFile(wheel).read(f"{dist_info}/METADATA").decode()
    assert "## Stores other tools wrote" in metadata and "## The command line" in metadata
