"""Fixtures for the GUI tests: temporary settings, a session on the worker thread, the main window."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QAbstractItemModel, QSettings
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from inspector.app import AppWindows
from inspector.core.process import DumpLoaded, ProcessOptions, ProcessState, process_events
from inspector.gui.document import Document
from inspector.gui.main_window import MainWindow
from inspector.gui.session import Session
from inspector.gui.settings import Settings
from inspector.resources import sample_dump, sample_symbols


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings in an INI file of the test's own, with the symbol index cache off."""
    store = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    s = Settings(store)
    s.symbol_cache_enabled = False
    s.sync()
    return s


@pytest.fixture
def settings_file(tmp_path: Path) -> Path:
    """An INI file for `--settings` of an app run in a child process, with the symbol index cache off."""
    ini = tmp_path / "settings.ini"
    ini.write_text("[symbols]\ncache_enabled=false\n")
    return ini


@pytest.fixture
def session(qtbot: QtBot) -> Iterator[Session]:
    s = Session(symbol_paths=[sample_symbols()], cache_dir=None)
    yield s
    s.shutdown()


@dataclass
class MessageBoxes:
    """Message boxes the window tried to show (none is actually opened: nothing can block a test)."""

    shown: list[tuple[str, str]] = field(default_factory=list)

    @property
    def titles(self) -> list[str]:
        return [title for title, _ in self.shown]


@pytest.fixture
def message_boxes(monkeypatch: pytest.MonkeyPatch) -> MessageBoxes:
    boxes = MessageBoxes()

    def record(box: QMessageBox) -> None:
        boxes.shown.append((box.windowTitle(), box.text()))

    monkeypatch.setattr(QMessageBox, "open", record)
    monkeypatch.setattr(QMessageBox, "exec", lambda box: record(box) or 0)
    return boxes


def make_window(
    qtbot: QtBot, settings: Settings, *, session_symbol_paths: tuple[Path, ...] = (sample_symbols(),)
) -> MainWindow:
    session = Session(cache_dir=None)
    window = MainWindow(session, settings, session_symbol_paths=session_symbol_paths)
    window.push_symbol_settings()
    qtbot.addWidget(window)  # closed at teardown: saves the layout and stops the worker
    return window


@pytest.fixture
def window(qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes) -> Iterator[MainWindow]:
    w = make_window(qtbot, settings)
    yield w
    w.session.shutdown()


@pytest.fixture(scope="session")
def sample_state() -> ProcessState:
    """The sample dump's state before any walk (the core's `DumpLoaded`; no worker), for model tests."""
    options = ProcessOptions(symbol_paths=(sample_symbols(),), use_symbols_cache=False)
    events = process_events(sample_dump(), options)
    first = next(events)
    events.close()
    assert isinstance(first, DumpLoaded)
    return first.state


@pytest.fixture
def sample_document(sample_state: ProcessState) -> Document:
    return Document(sample_state)


@pytest.fixture
def check_model(qtmodeltester: Any) -> Iterator[Callable[[QAbstractItemModel], None]]:
    """Check a model with Qt's `QAbstractItemModelTester` (pytest-qt fails the test on its warnings) and
    with pytest-qt's Python port (which asserts). Both keep watching the model: call before changing it."""
    python_testers: list[Any] = []

    def check(model: QAbstractItemModel) -> None:
        qtmodeltester.check(model)
        tester = type(qtmodeltester)(None)  # pytest-qt's ModelTester (import it only once Qt is set up)
        tester.check(model, force_py=True)
        python_testers.append(tester)

    yield check
    for tester in python_testers:
        tester._cleanup()


@pytest.fixture
def windows(qtbot: QtBot, settings: Settings) -> Iterator[AppWindows]:
    """The app's window manager, as `main()` makes it; every window it made is closed at the end."""
    manager = AppWindows(settings, interactive=False, color_scheme="system")
    yield manager
    for window in list(manager.windows):
        window.close()
    manager.shutdown()
