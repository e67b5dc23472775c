"""Every command-line example of the README's "The command line" section runs, as written, on the
demo workspace (as sqlite-utils tests its docs): a README that drifts from the program fails here.

Each line starting with ``mnemoscope `` in the section's ``sh`` blocks is run in-process through
``app.cli.main``, in README order on one demo store: ``~/mnemo-demo`` is the demo the README's own
``mnemoscope demo`` line writes into tmp; optional ``[...]`` parts are given; the placeholders in
capitals are filled in from the store (a memory's id from ``ls``, a session's from ``sessions``,
a finding's fingerprint from ``scan``).
"""

from __future__ import annotations

import json
import logging
import re
import shlex
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from mnemoscope.app.cli import main

README = Path(__file__).resolve().parents[2] / "README.md"

# Lines the test cannot run here, with why (matched by a substring of the line).
SKIPPED = {
    "postgresql+psycopg://": "needs a PostgreSQL server",
    "http://chroma.example": "needs a Chroma server",
    "credentials set": "needs an OS keyring and a secret typed in",
}
# Optional flags left out, with why.
LEFT_OUT = {"--purge": "a purged memory is gone for good: the restore example after it would have nothing to restore"}
# What the README's "..." stands for. The edit's content plants a secret and an email address, so
# that the scan examples after it have findings to report (exit 1), accept and redact.
ELLIPSIS = {"--content": "Deploy with AKIAIOSFODNN7EXAMPLE, ask dana@example.com", "--reason": "shared fact"}
# Examples documented to exit 1 (a linter's "found something"); every other one exits 0.
EXITS_1 = {
    "reembed": "the demo's embedder runs here, so no edit leaves a vector stale: nothing to do is exit 1",
    "scan": "the edit example plants secrets, injection and hidden text: scan reports them and exits 1",
}


def readme_examples() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## The command line\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)
    lines = [line.strip() for block in blocks for line in block.splitlines()]
    return [cmd.strip() for line in lines for cmd in line.split(" ; ") if cmd.strip().startswith("mnemoscope ")]


EXAMPLES = readme_examples()


def test_the_section_has_the_examples_this_test_expects() -> None:
    commands = {shlex.split(line, comments=True)[1] for line in EXAMPLES}
    assert len(EXAMPLES) >= 35
    assert {"demo", "ls", "show", "scratchpad", "sessions", "scan", "check", "undo", "completion"} <= commands
    assert not [line for line in EXAMPLES if "s-2026" in line.split("#")[0]], "demo session ids depend on the date"


def words(line: str) -> list[str]:
    """The line's arguments: comments dropped, optional [...] parts given, `...` repeats left out."""
    out: list[str] = []
    for token in shlex.split(line, comments=True)[1:]:
        token = token.removeprefix("[").removesuffix("]").removesuffix("]")
        if token == "..." and out and out[-1] in ELLIPSIS:
            out.append(ELLIPSIS[out[-1]])
        elif token and token != "..." and token not in LEFT_OUT:
            out.append(token)
    return out


class Demo:
    def __init__(self, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.home = home
        self.path = home / "mnemo-demo"
        self.capsys = capsys

    def run(self, argv: list[str]) -> tuple[int, str, str]:
        self.capsys.readouterr()
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
        out, err = self.capsys.readouterr()
        return code, out, err

    def json(self, *argv: str) -> dict:
        code, out, err = self.run([*argv, "--json"])
        assert code in (0, 1), err
        return json.loads(out)

    def memory_id(self, command: str) -> str:
        if command == "restore":
            deleted = self.json("ls", str(self.path), "--status", "deleted", "--limit", "1")["memories"]
            return deleted[0]["id"]
        if command == "redact":
            return self.finding()["memory_id"]
        if command == "promote":
            candidates = self.json("promote", str(self.path), "--candidates")["candidates"]
            if candidates:
                return candidates[0]["id"]
        listed = self.json("ls", str(self.path), "--order", "created", "--limit", "200")["memories"]
        return next(m["id"] for m in listed if m["id"].startswith("m-"))

    def finding(self) -> dict:
        return self.json("scan", str(self.path))["findings"][0]

    def session(self) -> str:
        return self.json("sessions", str(self.path))["sessions"][0]["id"]

    def notes_db(self) -> Path:
        path = self.home / "bot" / "notes.db"
        if not path.exists():
            path.parent.mkdir(parents=True)
            with sqlite3.connect(path) as db:
                db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, ts TEXT)")
                db.executemany("INSERT INTO notes (body, ts) VALUES (?, ?)",
                               [("likes short answers", "2026-09-01T10:00:00"), ("uses rust", "2026-09-02T10:00:00")])
            db.close()
        return path


def filled(argv: list[str], demo: Demo) -> list[str]:
    """The placeholders of one example replaced by what the demo store holds."""
    command = argv[0]
    home = str(demo.home)
    values: dict[str, Callable[[], str]] = {
        "ID": lambda: demo.memory_id(command),
        "SESSION": demo.session,
        "FINGERPRINT": lambda: demo.finding()["fingerprint"],
        "DIR": lambda: home,
        "T": lambda: "notes",
        "~/bot/notes.db": lambda: str(demo.notes_db()),
        "~/other-agent-workspace": lambda: str(demo.path),
    }
    out = []
    for word in argv:
        if word in values:
            word = values[word]()
        elif word.startswith("KEY="):
            word = "done=" + word.partition("=")[2]
        elif word.startswith("~/"):
            word = home + word[1:]
        out.append(word)
    return out


@pytest.fixture(autouse=True)
def _fresh_logging() -> Iterator[None]:
    """The -v --log-file example configures the root logger as a new process would: undone
    after the test, whether it passed or not."""
    yield
    root = logging.getLogger()
    for handler in root.handlers[:]:
        handler.close()
        root.removeHandler(handler)
    root.setLevel(logging.WARNING)


def test_every_readme_example_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # discover looks under home: this one, not the machine's
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / ".local" / "share"))
    monkeypatch.chdir(tmp_path)  # files the examples write (dana.graphml, out.jsonl) land here
    demo = Demo(tmp_path, capsys)
    ran, failures = 0, []
    for line in EXAMPLES:
        if any(marker in line for marker in SKIPPED):
            continue
        argv = words(line)
        redirect = None
        if ">" in argv:
            at = argv.index(">")
            argv, redirect = argv[:at], filled(argv[at + 1:], demo)[0]
        try:
            argv = filled(argv, demo)
        except (IndexError, StopIteration, KeyError) as exc:
            failures.append(f"{line}\n  no value in the demo for a placeholder: {exc!r}")
            continue
        expected = 1 if argv[0] in EXITS_1 and not {"--accept", "--rules"} & set(argv) else 0
        code, out, err = demo.run(argv)
        ran += 1
        if code != expected:
            failures.append(f"{line}\n  ran: {shlex.join(argv)}\n  exit {code}, expected {expected}: {err.strip()}")
        elif redirect:
            assert out.strip(), f"{line}: nothing to write to {redirect}"
    assert not failures, "\n".join(failures)
    assert ran >= 30
    assert (tmp_path / "dana.graphml").exists() and (tmp_path / "out.jsonl").exists()
    assert (tmp_path / "merged-workspace" / "memory.db").exists()
    assert "opened" in (tmp_path / "mnemoscope.log").read_text(encoding="utf-8")
