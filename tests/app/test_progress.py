"""app/progress.py: a redrawn line on a terminal; when redirected, a line per interval and the summary."""

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


def test_a_long_job_logs_a_plain_line_every_interval_when_redirected() -> None:
    import time

    from mnemoscope.app.progress import Progress

    log = io.StringIO()
    progress = Progress("import", stream=log, interval_s=0.05)
    progress(1, 4)
    assert log.getvalue() == ""  # within the first interval: nothing yet
    time.sleep(0.06)
    progress(2, 4)
    progress(3, 4)  # the next line waits for the next interval
    progress(4, 4)
    assert log.getvalue() == "import 2/4\nimport 4/4\n"
    assert "\r" not in log.getvalue()
