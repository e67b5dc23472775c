"""Rules over the whole tree that keep it readable, computed from the source files themselves:
no import cycle, no module over 800 lines, every foreign format in the one registry, every product
module a test module named for it."""

from __future__ import annotations

import ast
import pkgutil
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"storage": "mnemoscope.storage", "app": "mnemoscope.app", "ui": "mnemoscope.ui"}
MAX_LINES = 800
# The window is layout and wiring, the command line global options and dispatch.
SMALLER = {"ui/main_window.py": 450, "app/cli.py": 300}


def product_modules(folder: str) -> dict[str, Path]:
    """Module name -> file, for every module of one top-level folder."""
    found = {}
    for path in sorted((ROOT / folder).rglob("*.py")):
        parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join([PACKAGES[folder], *parts])] = path
    return found


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imported_modules(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The known modules a module imports anywhere in its body (in functions too: a lazy import is
    still a dependency), leaving out what only type checkers see."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    skipped = {id(n) for block in ast.walk(tree) if _type_checking_only(block) for n in ast.walk(block)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            module = (f"{base}.{node.module}" if node.module else base) if node.level else (node.module or "")
            targets = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_cycles(folder: str) -> list[list[str]]:
    modules = product_modules(folder)
    graph = nx.DiGraph()
    for name, path in modules.items():
        graph.add_node(name)
        graph.add_edges_from((name, target) for target in imported_modules(name, path, modules))
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


def test_storage_has_no_import_cycle() -> None:
    assert import_cycles("storage") == []


def test_the_cycle_finder_sees_a_lazy_import_cycle(tmp_path: Path) -> None:
    pkg = tmp_path / "storage"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import thing\n")
    (pkg / "b.py").write_text("def thing():\n    from . import a\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\n")
    known = {"mnemoscope.storage": pkg / "__init__.py", **{f"mnemoscope.storage.{m}": pkg / f"{m}.py" for m in "abc"}}
    assert imported_modules("mnemoscope.storage.b", pkg / "b.py", known) == {"mnemoscope.storage", "mnemoscope.storage.a"}
    assert imported_modules("mnemoscope.storage.c", pkg / "c.py", known) == set()


@pytest.mark.parametrize("folder", sorted(PACKAGES))
def test_no_module_is_over_its_size(folder: str) -> None:
    too_big = {}
    for path in product_modules(folder).values():
        rel = path.relative_to(ROOT).as_posix()
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > SMALLER.get(rel, MAX_LINES):
            too_big[rel] = lines
    assert too_big == {}


def test_every_format_module_is_registered_or_named_as_a_shared_part() -> None:
    from mnemoscope.storage import formats
    from mnemoscope.storage.formats import registry

    modules = {m.name for m in pkgutil.iter_modules(formats.__path__)}
    listed = [*registry.FORMATS, *registry.NOT_DETECTED, *registry.SHARED_PARTS]
    assert sorted(listed) == sorted(modules)
    assert len(set(listed)) == len(listed)
    for name in registry.FORMATS:  # each one the registry asks answers detect(path)
        module = __import__(f"mnemoscope.storage.formats.{name}", fromlist=["detect"])
        assert callable(module.detect), name


# What ui/ and app/ may import of storage: the public API and the views, finders and helpers made
# for callers. Everything else (sources, formats, native parts, the journal) stays behind the façade.
STORAGE_API = frozenset({
    "mnemoscope.storage",
    "mnemoscope.storage.atomic_file",
    "mnemoscope.storage.consistency",
    "mnemoscope.storage.credentials",
    "mnemoscope.storage.curation",
    "mnemoscope.storage.data_folder",
    "mnemoscope.storage.demo",
    "mnemoscope.storage.detect.discover",
    "mnemoscope.storage.detect.store_urls",
    "mnemoscope.storage.detect.table_mapping",
    "mnemoscope.storage.embedders.choice",
    "mnemoscope.storage.errors",
    "mnemoscope.storage.findings",
    "mnemoscope.storage.lazy_page",
    "mnemoscope.storage.model",
    "mnemoscope.storage.opening",
    "mnemoscope.storage.query",
    "mnemoscope.storage.recall",
    "mnemoscope.storage.retention",
    "mnemoscope.storage.salience",
    "mnemoscope.storage.timeutil",
    "mnemoscope.storage.transfer",
    "mnemoscope.storage.views.embedding_map",
    "mnemoscope.storage.views.graph",
    "mnemoscope.storage.views.relevance",
    "mnemoscope.storage.views.salience",
    "mnemoscope.storage.views.scratchpad",
    "mnemoscope.storage.views.search",
    "mnemoscope.storage.views.timeline",
})


@pytest.mark.parametrize("folder", ["ui", "app"])
def test_ui_and_app_import_only_the_storage_api(folder: str) -> None:
    storage = product_modules("storage")
    used = {
        target: name
        for name, path in product_modules(folder).items()
        for target in imported_modules(name, path, storage)
    }
    assert {target: name for target, name in used.items() if target not in STORAGE_API} == {}


# MemoryStore's parts (_sources, _workspace, _journal) are private: reached through its methods
# only. The façade owns them and the Curator is its write half. (Opening assembles StoreParts,
# whose public fields are named sources and journal: they are not a store's.)
PARTS = frozenset({"_sources", "_workspace", "_journal", "sources", "workspace", "journal"})
# The façade, its curator, and the store's recovery of unfinished steps (split out of store.py).
PART_OWNERS = frozenset({"storage/store.py", "storage/curation.py", "storage/recovery.py"})


def part_reads(path: Path) -> list[str]:
    """Where a module reads .sources, .workspace or .journal of anything but itself."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path.relative_to(ROOT).as_posix()}:{node.lineno} .{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in PARTS
        # its own parts, and a StoreEvent's field (event.journal: whether the journal moved)
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls", "event", "parts"))
    ]


def test_nothing_outside_the_facade_reaches_for_its_parts() -> None:
    found = [
        read
        for folder in PACKAGES
        for path in product_modules(folder).values()
        if path.relative_to(ROOT).as_posix() not in PART_OWNERS
        for read in part_reads(path)
    ]
    assert found == []


# Tests mirror the tree: each product module has a test module named for it, test_<name>.py or,
# where that name is taken, test_<parent>_<name>.py, anywhere under tests/ (test basenames are
# unique there: the test folders are no packages).
TESTS = ROOT / "tests"
UNTESTED_BY_NAME = ("storage/native/db/migrations/",)  # Alembic's revisions: tested through migrate.py


def names_for_its_test_module(path: Path) -> set[str]:
    """The names a module's test module may have (a dunder module, __main__, without its underscores)."""
    names = {path.stem, path.stem.strip("_")} - {""}
    return {f"test_{n}.py" for n in names} | {f"test_{path.parent.name}_{n}.py" for n in names}


def modules_without_a_test_module() -> list[str]:
    have = {p.name for p in TESTS.rglob("test_*.py")}
    return [
        rel
        for folder in PACKAGES
        for path in product_modules(folder).values()
        if path.name != "__init__.py"
        and not (rel := path.relative_to(ROOT).as_posix()).startswith(UNTESTED_BY_NAME)
        and not names_for_its_test_module(path) & have
    ]


def test_a_test_module_is_named_for_its_module_or_its_folder_and_module() -> None:
    assert names_for_its_test_module(ROOT / "storage/findings/baseline.py") == {
        "test_baseline.py", "test_findings_baseline.py"}
    assert names_for_its_test_module(ROOT / "app/__main__.py") == {
        "test___main__.py", "test_main.py", "test_app___main__.py", "test_app_main.py"}


def test_every_product_module_has_a_test_module_named_for_it() -> None:
    assert modules_without_a_test_module() == []
