"""app/completion.py: completion scripts generated from a parser, with its commands and flags."""

from __future__ import annotations

import argparse
import shutil
import subprocess

import pytest
from mnemoscope.app.completion import SHELLS, commands, flags, script


def probe_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mnemoscope")
    parser.add_argument("-v", "--verbose", action="count")
    sub = parser.add_subparsers(dest="command")
    first = sub.add_parser("look", description="look at it's contents\nsecond line")
    first.add_argument("--deep", action="store_true", help="all the way down")
    sub.add_parser("fix", description="fix it")
    return parser


def test_commands_and_flags_come_from_the_parser_in_order() -> None:
    parser = probe_parser()
    assert list(commands(parser)) == ["look", "fix"]
    assert flags(parser) == ["-h", "--help", "-v", "--verbose"]
    assert flags(commands(parser)["look"]) == ["-h", "--help", "--deep"]
    assert commands(commands(parser)["fix"]) == {}


def test_bash_script_completes_commands_then_each_commands_flags(tmp_path) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash here")
    path = tmp_path / "probe.bash"
    path.write_text(script(probe_parser(), "bash"), encoding="utf-8")
    done = subprocess.run(
        [bash, "-c", f'source {path}; COMP_WORDS=(mnemoscope ""); COMP_CWORD=1; _mnemoscope; echo "${{COMPREPLY[@]}}"; '
         'COMP_WORDS=(mnemoscope -v look --d); COMP_CWORD=3; _mnemoscope; echo "${COMPREPLY[@]}"'],
        capture_output=True, text=True, check=True,
    )
    first, second = done.stdout.splitlines()
    assert first.split() == ["look", "fix", "-h", "--help", "-v", "--verbose"]
    assert second.split() == ["--deep"]


def test_zsh_loads_bash_completion_and_fish_quotes_descriptions() -> None:
    assert script(probe_parser(), "zsh").startswith("autoload -U +X bashcompinit && bashcompinit\n")
    fish = script(probe_parser(), "fish")
    assert "-f -a look -d 'look at it\\'s contents second line'" in fish
    assert "__fish_seen_subcommand_from look' -l deep -d 'all the way down'" in fish
    assert "__fish_use_subcommand' -s v" in fish
    assert SHELLS == ("bash", "zsh", "fish")
