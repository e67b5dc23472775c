"""Tools > Check store…: the planted inconsistencies are listed by kind with counts, a kind's
Repair button clears it as one step, and Edit > Undo brings it back."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.consistency_damage import plant_damage
from mnemoscope.ui.dialogs.check_dialog import CheckDialog
from mnemoscope.ui.main_window import MainWindow
from PySide6.QtCore import QSettings, Qt


@pytest.fixture
def planted(demo_path: Path) -> dict[str, str]:
    return plant_damage(demo_path)


@pytest.fixture
def window(qtbot, demo_path: Path, planted: dict[str, str], tmp_path: Path):
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.store_opened):
        win.open_path(demo_path)
    yield win
    win.close_store()


def _open_check(qtbot, win: MainWindow) -> CheckDialog:
    assert win.check_action.isEnabled()
    win.check_action.trigger()
    dialog = win.findChild(CheckDialog, "check_dialog")
    assert dialog is not None and dialog.isVisible()
    qtbot.waitUntil(lambda: dialog.report is not None and dialog.again_button.isEnabled())
    return dialog


def test_the_dialog_lists_every_planted_kind_with_its_count(qtbot, window: MainWindow, planted) -> None:
    dialog = _open_check(qtbot, window)
    assert dialog.counts() == dict.fromkeys(planted, 1)
    assert f"{len(planted)} inconsistencies" in dialog.status.text()
    # a Repair button for each kind with a safe repair, advice for the others
    assert set(dialog.repair_buttons) == set(planted) - {"orphan-bullet"}
    button = dialog.findChild(type(dialog.again_button), "repair_missing-fts")
    assert button is not None and button.accessibleName().startswith("Repair")
    first = dialog.tree.topLevelItem(0)
    first.setExpanded(True)
    assert first.childCount() == 1 and ":" in first.child(0).text(0)


def test_repair_clears_a_kind_and_undo_restores_it(qtbot, window: MainWindow, planted) -> None:
    dialog = _open_check(qtbot, window)
    with qtbot.waitSignal(dialog.checked):  # the check that follows the repair
        qtbot.mouseClick(dialog.repair_buttons["missing-vector"], Qt.MouseButton.LeftButton)
    assert "missing-vector" not in dialog.counts()
    assert dialog.counts() == dict.fromkeys(set(planted) - {"missing-vector"}, 1)
    assert window.session.steps.undo is not None and window.session.steps.undo.operation == "repair"
    with qtbot.waitSignal(dialog.checked):
        window.curation.undo_action.trigger()
    assert dialog.counts() == dict.fromkeys(planted, 1)


def test_repairing_every_safe_kind_leaves_only_what_needs_a_person(qtbot, window: MainWindow, planted) -> None:
    dialog = _open_check(qtbot, window)
    for kind in ["missing-fts", "stale-fts", "stale-vector", "vector-metadata-mismatch", "missing-bullet"]:
        with qtbot.waitSignal(dialog.checked):
            qtbot.mouseClick(dialog.repair_buttons[kind], Qt.MouseButton.LeftButton)
        assert kind not in dialog.counts()
    assert set(dialog.counts()) == {"missing-vector", "orphan-vector", "orphan-bullet", "text-mismatch"}
    dialog.close()
