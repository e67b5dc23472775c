"""app/commands/shell_completion.py: `mnemoscope completion SHELL` prints a script that is valid and
names every command and each command's flags."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from mnemoscope.app.cli import build_parser, command_handlers, main

COMMANDS = list(command_handlers(build_parser()))


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    out, err = capsys.readouterr()
    return code, out, err


def test_bash_completion_is_valid_and_lists_every_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, script, _ = run(["completion", "bash"], capsys)
    assert code == 0
    path = tmp_path / "mnemoscope.bash"
    path.write_text(script, encoding="utf-8")
    assert subprocess.run(["bash", "-n", str(path)], capture_output=True).returncode == 0
    probe = subprocess.run(
        ["bash", "-c", f'source {path}; COMP_WORDS=(mnemoscope ""); COMP_CWORD=1; _mnemoscope; '
         'echo "${COMPREPLY[@]}"; COMP_WORDS=(mnemoscope ls --li); COMP_CWORD=2; _mnemoscope; echo "${COMPREPLY[@]}"'],
        capture_output=True, text=True, check=True,
    )
    first, flags = probe.stdout.splitlines()
    assert set(COMMANDS) <= set(first.split())
    assert flags.split() == ["--limit"]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_completion_name_every_command(shell: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, script, _ = run(["completion", shell], capsys)
    assert code == 0
    for name in COMMANDS:
        assert f" {name}" in script, name
    if shell == "fish":
        assert "__fish_seen_subcommand_from ls' -l limit" in script


def test_the_command_prints_the_script_of_the_whole_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    from mnemoscope.app.commands import shell_completion
    from mnemoscope.app.completion import script

    parser = build_parser()
    args = parser.parse_args(["completion", "fish"])
    assert args.handler(args) == 0
    assert capsys.readouterr().out == script(build_parser(), "fish")
    assert shell_completion.ORDER > max(m.ORDER for m in _others())
    code, _, err = run(["completion", "tcsh"], capsys)
    assert code == 2 and "invalid choice: 'tcsh'" in err


def _others() -> list:
    from mnemoscope.app.cli import command_modules

    return [m for m in command_modules() if not m.__name__.endswith(".shell_completion")]
