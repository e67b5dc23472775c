"""app/progress.py: a redrawn line on a terminal, only the final summary when redirected."""

from __future__ import annotations

import io


def test_progress_redraws_one_line_on_a_terminal() -> None:
    from mnemoscope.app.progress import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    progress = Progress("reembed", stream=terminal)
    for done in (1, 2, 3):
        progress(done, 3)
    assert terminal.getvalue() == "\rreembed 1/3\rreembed 2/3\rreembed 3/3\n"
    redirected = io.StringIO()
    progress = Progress("reembed", stream=redirected)
    for done in (1, 2, 3):
        progress(done, 3)
    assert redirected.getvalue() == "reembed 3/3\n"


def test_a_bar_fills_with_the_work_done_and_an_empty_total_is_full() -> None:
    from mnemoscope.app.progress import BAR_WIDTH, Progress

    redirected = io.StringIO()
    progress = Progress("import", bar=True, stream=redirected)
    progress(3, 4)
    assert redirected.getvalue() == ""  # redirected: only the last line
    progress(4, 4)
    progress(4, 4)  # after the last one, nothing more
    assert redirected.getvalue() == f"import [{'#' * BAR_WIDTH}] 4/4\n"
    empty = io.StringIO()
    Progress("import", bar=True, stream=empty)(0, 0)
    assert empty.getvalue() == f"import [{'#' * BAR_WIDTH}] 0/0\n"


def test_a_closed_stream_is_not_a_terminal() -> None:
    from mnemoscope.app.progress import Progress

    closed = io.StringIO()
    closed.close()
    assert Progress("check", stream=closed).interactive is False
