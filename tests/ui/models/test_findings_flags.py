"""The memories table's Findings flags, scanned off the UI thread (ui/models/findings_flags.py): a
shown row's flag is unknown until its scan comes back from a worker, the rows asked for during one
paint are scanned in one batch, a row read again at the same revision is not scanned again, and
another baseline (a finding accepted) makes every flag unknown until scanned under it."""

from __future__ import annotations

from pathlib import Path

from helpers.sessions import open_session
from mnemoscope.storage import Curator, MemoryQuery, open_store
from mnemoscope.storage.findings import memory_findings
from mnemoscope.ui.models.findings_flags import FindingsFlags

KEY = "The OpenAI key is sk-proj-Q3v9XkLm2R8tY7wPz4NcB1hJ6fGs0aDe for the bot."


def test_flags_come_from_a_worker_in_one_batch_and_are_kept_by_revision_and_baseline(qtbot, demo_path: Path) -> None:
    with open_store(demo_path) as store:
        key_id = store.add_memory(KEY, channel="_global")
    with open_session(qtbot, demo_path) as session:
        store = session.store
        flags = FindingsFlags(session)
        with qtbot.waitSignal(flags.state_changed):
            flags.load_state()
        shown = [store.get(key_id), *store.page(MemoryQuery(), 15)]
        scanned: list[set[str]] = []
        flags.scanned.connect(scanned.append)
        assert [flags.known(m) for m in shown] == [None] * len(shown)  # asked: on a worker, after this paint
        qtbot.waitUntil(lambda: bool(scanned))
        assert scanned == [{m.id for m in shown}]  # one batch
        assert [f.category for f in flags.known(shown[0]) or ()] == ["secret"]
        assert all(flags.known(m) == tuple(memory_findings(m)) for m in shown)
        with qtbot.assertNotEmitted(flags.scanned, wait=200):  # the same revisions: nothing to scan again
            assert all(flags.known(m) is not None for m in shown)

        Curator(store).accept_findings(list(flags.known(shown[0]) or ()))  # into the store's baseline
        with qtbot.waitSignal(flags.state_changed):
            flags.load_state()
        assert flags.known(shown[0]) is None  # scanned again under the new baseline
        qtbot.waitUntil(lambda: len(scanned) == 2)
        assert flags.known(shown[0]) == ()  # accepted: no open finding, no flag
