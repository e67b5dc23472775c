"""The command line as a well-behaved citizen: --help lists every flag (the app's too), a typo gets
a suggestion, progress writes no carriage returns into redirected output, -v and --log-file log.
(The completion scripts: tests/app/commands/test_shell_completion.py.)"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mnemoscope.app.cli import main
from mnemoscope.app.launcher import build_launcher_parser

EXE = shutil.which("mnemoscope", path=str(Path(sys.executable).parent))


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def _fresh_logging() -> Iterator[None]:
    """main() configures the root logger as a fresh process would: undone after each test."""
    yield
    _reset_logging()


def _reset_logging() -> None:
    root = logging.getLogger()
    for handler in root.handlers[:]:
        handler.close()
        root.removeHandler(handler)
    root.setLevel(logging.WARNING)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("conventions") / "demo"
    assert main(["demo", str(path)]) == 0
    return path


def test_help_lists_the_apps_flags_from_the_launchers_parser(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--help"], capsys)
    assert code == 0
    app_flags = [s for a in build_launcher_parser()._actions for s in a.option_strings if s not in ("-h", "--help")]
    assert {"--demo", "--screenshot", "--view", "--theme"} <= set(app_flags)
    for flag in [*app_flags, "--verbose", "--log-file", "--version"]:
        assert flag in out, flag
    assert "opening the app:" in out and "COMMAND" in out.splitlines()[0]


@pytest.mark.parametrize(("typo", "meant"), [("lss", "ls"), ("serach", "search"), ("udno", "undo")])
def test_a_mistyped_command_gets_a_suggestion_and_exit_2(typo: str, meant: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run([typo], capsys)
    assert code == 2
    assert f"unknown command '{typo}' (did you mean '{meant}'?)" in err
    assert out == ""


def test_an_existing_folder_named_like_a_command_is_opened_not_corrected(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lss").mkdir()
    code, _, err = run(["lss"], capsys)
    assert "did you mean" not in err  # the launcher's message about the empty folder instead
    assert code == 2


def test_a_mistyped_flag_gets_a_suggestion(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["ls", str(demo), "--limt", "3"], capsys)
    assert code == 2
    assert "unrecognized arguments: --limt 3 (did you mean --limit?)" in err
    assert err.startswith("usage: mnemoscope ls")


def _stderr_of(argv: list[str]) -> str:
    assert EXE
    done = subprocess.run([EXE, *argv], capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    return done.stderr


def test_redirected_progress_is_one_summary_line_without_carriage_returns(demo: Path, tmp_path: Path) -> None:
    err = _stderr_of(["check", str(demo)])
    assert "\r" not in err
    assert [line for line in err.splitlines() if line.startswith("check ")] == [err.strip().splitlines()[-1]]
    err = _stderr_of(["import", str(demo), str(tmp_path / "merged")])
    assert "\r" not in err
    summary = [line for line in err.splitlines() if line.startswith("import [")]
    assert len(summary) == 1 and summary[0].endswith(tuple(f"{n}/{n}" for n in range(1, 10_000)))


def test_verbose_logs_the_store_opened_to_stderr(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["-v", "info", str(demo)], capsys)
    assert code == 0 and out
    assert f"INFO mnemoscope.cli: opened {demo} (sqlite, chroma, markdown) read-only" in err
    _reset_logging()  # as in a new process
    code, _, err = run(["info", str(demo)], capsys)
    assert code == 0 and "INFO" not in err


def test_verbose_before_and_after_the_command_add_up(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import logging

    for argv in (["-v", "info", str(demo), "-v"], ["info", str(demo), "-vv"], ["-vv", "info", str(demo)]):
        code, _, err = run(argv, capsys)
        assert code == 0, err
        assert logging.getLogger().level == logging.DEBUG, argv  # -v twice: DEBUG
        _reset_logging()
    run(["info", str(demo), "-v"], capsys)
    assert logging.getLogger().level == logging.INFO
    _reset_logging()


def test_log_file_records_the_curation_step(demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "mnemoscope.log"
    listed = run(["ls", str(demo), "--kind", "sqlite", "--limit", "1", "--json"], capsys)[1]
    memory_id = json.loads(listed)["memories"][0]["id"]
    code, _, err = run(["reinforce", str(demo), memory_id, "--log-file", str(log)], capsys)
    assert code == 0, err
    text = log.read_text(encoding="utf-8")
    assert f"opened {demo}" in text and "for writing" in text
    assert "reinforce done (journal #" in text and memory_id in text
    assert "INFO" not in err  # the file gets the INFO lines; stderr only warnings without -v


def test_tables_line_up_wide_characters_by_terminal_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rich.cells import cell_len

    (tmp_path / "MEMORY.md").write_text("- 東京で予算会議をする予定です、田中さんと一緒に 🎌 and a long English tail to clip\n"
                                        "- plain fact about the budget meeting\n", encoding="utf-8")
    code, out, err = run(["ls", str(tmp_path)], capsys)
    assert code == 0, err
    header, rule, *rows = out.splitlines()[:4]
    start = cell_len(header[: header.index("CONTENT")])
    for row in rows:
        content = row.split("  ")[-1]
        assert cell_len(row[: row.rindex(content)]) == start  # the CONTENT column starts at one column
        assert cell_len(content) <= 60
