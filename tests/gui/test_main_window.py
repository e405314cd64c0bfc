"""The main window opens the bundled sample and says what it shows."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from inspector.gui.main_window import MainWindow
from inspector.resources import sample_dump


def test_window_is_titled_crash_inspector_and_shows_the_sample(qtbot: QtBot) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    window.open_dump(sample_dump())
    assert "Crash Inspector" in window.windowTitle()
    assert sample_dump().name in window.summary_text()
    assert f"{sample_dump().stat().st_size:,} bytes" in window.summary_text()
