"""app/commands is the command line's registry: a module dropped into the package is a command,
listed by --help and the completion scripts and run by `mnemoscope`, with no other file changed.
Checked on a copy of the package in a temporary folder, in a fresh interpreter importing the copy."""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mnemoscope.app.cli import build_parser, command_handlers, command_modules
from mnemoscope.app.commands import CommandParsers

ROOT = Path(__file__).resolve().parents[2]

THROWAWAY = '''"""greet: a throwaway command, added by tests/app/test_commands_registry.py."""

import argparse

from ..command_runtime import emit


def register(commands):
    p = commands.add("greet", "say hello to NAME (a throwaway command)", cmd_greet, looks_only=True)
    p.add_argument("name")
    p.add_argument("--loud", action="store_true")


def cmd_greet(args: argparse.Namespace) -> int:
    greeting = f"hello {args.name}" + ("!" if args.loud else "")
    return emit(args, {"greeting": greeting}, lambda data: data["greeting"])
'''

# A fresh interpreter that imports the copy: -I ignores PYTHONPATH and the user's site folder, the
# copy's folder goes first on sys.path, and the package must come from there (the editable
# install's finder, which maps mnemoscope.app onto this checkout, must not answer).
RUN_COPY = """
import runpy, sys
copy = sys.argv.pop(1)
sys.path.insert(0, copy)
import mnemoscope.app, mnemoscope.app.commands, mnemoscope.storage
for package in (mnemoscope.app, mnemoscope.app.commands, mnemoscope.storage):
    assert package.__file__.startswith(copy), package.__file__
sys.argv[0] = "mnemoscope"
runpy.run_module("mnemoscope.app", run_name="__main__", alter_sys=True)
"""


def _hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mnemoscope package (storage/, app/) copied as <tmp>/mnemoscope/..., plus one command module."""
    top = tmp_path_factory.mktemp("copy")
    for folder in ("storage", "app"):
        shutil.copytree(ROOT / folder, top / "mnemoscope" / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (top / "mnemoscope" / "app" / "commands" / "greet.py").write_text(THROWAWAY, encoding="utf-8")
    return top


def run_copy(copy: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    # -B: no bytecode written into the copy, whose files are compared with the originals.
    return subprocess.run([sys.executable, "-I", "-B", "-c", RUN_COPY, str(copy), *argv],
                          capture_output=True, text=True, timeout=120)


def test_a_command_module_added_to_the_package_is_listed_and_runs(copy: Path) -> None:
    helped = run_copy(copy, "--help")
    assert helped.returncode == 0, helped.stderr
    assert "greet" in helped.stdout and "say hello to NAME (a throwaway command)" in helped.stdout
    # Without an ORDER, after every module that declares one: the completion command stays before it.
    assert helped.stdout.index("    completion") < helped.stdout.index("    greet")

    ran = run_copy(copy, "greet", "world", "--loud")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "hello world!\n"
    as_json = run_copy(copy, "greet", "world", "--json")
    assert as_json.returncode == 0 and '"greeting": "hello world"' in as_json.stdout, as_json.stderr

    completed = run_copy(copy, "completion", "bash")
    assert completed.returncode == 0 and "greet) opts=\"" in completed.stdout, completed.stderr
    assert "--loud" in completed.stdout
    mistyped = run_copy(copy, "gret")
    assert mistyped.returncode == 2 and "did you mean 'greet'?" in mistyped.stderr


def test_no_other_file_of_the_copy_changed(copy: Path) -> None:
    copied = _hashes(copy / "mnemoscope")
    originals = {f"{folder}/{name}": digest for folder in ("storage", "app")
                 for name, digest in _hashes(ROOT / folder).items()}
    assert copied.pop("app/commands/greet.py")
    assert copied == originals


def test_this_checkout_has_no_greet_command() -> None:
    assert "greet" not in command_handlers(build_parser())


def test_command_modules_come_by_order_then_name() -> None:
    modules = command_modules()
    names = [m.__name__.rsplit(".", 1)[1] for m in modules]
    assert names == ["stores", "read", "recall", "retention", "curate", "checks", "credentials", "shell_completion"]
    orders = [m.ORDER for m in modules]
    assert orders == sorted(orders)


def test_every_command_has_a_handler_and_a_described_parser() -> None:
    parser = build_parser()
    handlers = command_handlers(parser)
    assert len(handlers) == 32
    for name, handler in handlers.items():
        assert callable(handler), name
    from mnemoscope.app.completion import commands

    for name, command in commands(parser).items():
        assert command.description, name


def test_command_parsers_add_a_command_with_its_handler_and_the_common_options() -> None:
    root = argparse.ArgumentParser(prog="probe")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true")
    registry = CommandParsers(root, root.add_subparsers(dest="command"), common)

    def handler(args: argparse.Namespace) -> int:
        return 7

    looked = registry.add("look", "look at it", handler, looks_only=True)
    looked.add_argument("thing")
    registry.add("bare", "no common options", handler, common=False, description="Longer words.")
    args = root.parse_args(["look", "x", "--json"])
    assert (args.handler(args), args.looks_only, args.json, args.thing) == (7, True, True, "x")
    args = root.parse_args(["bare"])
    assert args.looks_only is False and not hasattr(args, "json")
    with pytest.raises(SystemExit):
        root.parse_args(["bare", "--json"])
    assert registry.root is root and registry.common is common
