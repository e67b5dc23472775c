"""Fixtures shared by every test: real stores in temp folders, no mocks."""

from __future__ import annotations

import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest
from mnemoscope.storage.demo import write_demo

DEMO_NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="session", autouse=True)
def _own_data_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Mnemoscope's data folder (verdicts, mappings) in the session's temp folder, never the user's,
    unless the run names one."""
    os.environ.setdefault("MNEMOSCOPE_HOME", str(tmp_path_factory.mktemp("mnemoscope-home")))


@pytest.fixture(scope="session")
def _demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "demo"
    write_demo(path, now=DEMO_NOW).close()
    return path


@pytest.fixture
def demo_path(_demo_template: Path, tmp_path: Path) -> Path:
    """A fresh copy of the demo workspace (memory.db + vectors/ + markdown) per test."""
    target = tmp_path / "demo"
    shutil.copytree(_demo_template, target)
    return target


@pytest.fixture
def markdown_only(demo_path: Path, tmp_path: Path) -> Path:
    """A workspace holding only markdown files."""
    target = tmp_path / "md-only"
    shutil.copytree(demo_path, target, ignore=shutil.ignore_patterns("memory.db*", "vectors"))
    return target


@pytest.fixture
def sqlite_only(demo_path: Path, tmp_path: Path) -> Path:
    """A folder holding only memory.db."""
    target = tmp_path / "sqlite-only"
    target.mkdir()
    shutil.copy2(demo_path / "memory.db", target / "memory.db")
    return target


@pytest.fixture
def chroma_only(demo_path: Path, tmp_path: Path) -> Path:
    """A bare Chroma persistent directory (the demo's vectors, no memory.db beside it)."""
    target = tmp_path / "chroma-only"
    shutil.copytree(demo_path / "vectors", target)
    return target
