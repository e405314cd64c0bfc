"""The Modules pane says how each module's symbols were matched: by debug id, by code id, or not at all."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from inspector.gui.main_window import MainWindow
from inspector.gui.models.module_model import ModuleTableModel
from inspector.gui.settings import Settings
from inspector.resources import sample_dump, sample_symbols
from tests.gui.conftest import MessageBoxes, make_window
from tests.gui.support import load

WINDOWS = Path(__file__).resolve().parents[1] / "fixtures" / "windows-crashes"
M = ModuleTableModel


def column(window: MainWindow, col: int, role: int = Qt.ItemDataRole.DisplayRole) -> dict[str, object]:
    model = window.module_pane.model
    return {
        str(model.index(row, M.COL_NAME).data()): model.index(row, col).data(role)
        for row in range(model.rowCount())
    }


@pytest.fixture
def windows_window(qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes) -> Iterator[MainWindow]:
    w = make_window(qtbot, settings, session_symbol_paths=(WINDOWS / "symbols",))
    yield w
    w.session.shutdown()


def test_a_wine_dump_shows_modules_matched_by_code_id(qtbot: QtBot, windows_window: MainWindow) -> None:
    load(qtbot, windows_window.session, WINDOWS / "O2" / "worker_fault.dmp")
    assert M.HEADERS[M.COL_MATCHED] == "Matched by"
    matched = column(windows_window, M.COL_MATCHED)
    assert matched == {
        "crashlab.exe": "code id",
        "ntdll.dll": "code id",
        "kernel32.dll": "code id",
        "kernelbase.dll": "code id",
        "msvcrt.dll": "code id",
        # not needed by the walk: never looked up, so neither matched nor "not matched"
        "dbghelp.dll": "",
        "zlib1.dll": "",
        "ucrtbase.dll": "",
    }
    tooltip = str(column(windows_window, M.COL_SYMBOLS, Qt.ItemDataRole.ToolTipRole)["crashlab.exe"])
    assert "found by INFO CODE_ID line" in tooltip
    assert "Matched by code file and code id (crashlab.exe " in tooltip
    assert column(windows_window, M.COL_DEBUG_ID)["crashlab.exe"] == ""  # the dump has none


def test_the_sample_shows_modules_matched_by_debug_id_or_not_at_all(
    qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes, tmp_path: Path
) -> None:
    window = make_window(qtbot, settings, session_symbol_paths=(sample_symbols(),))
    try:
        load(qtbot, window.session, sample_dump())
        matched = column(window, M.COL_MATCHED)
        assert matched["render_farm"] == "debug id"
        assert matched["libc.so.6"] == "debug id"
        tooltip = str(column(window, M.COL_MATCHED, Qt.ItemDataRole.ToolTipRole)["render_farm"])
        assert "Matched by debug id (render_farm C45AC8E94E82B725B3C5363770E51DB30)" in tooltip
        # without symbols the modules the walk needed were looked up and not matched
        empty = tmp_path / "empty"
        empty.mkdir()
        window.session.set_symbol_paths([empty], reanalyze=False)
        load(qtbot, window.session, sample_dump())
        assert column(window, M.COL_MATCHED)["render_farm"] == "not matched"
    finally:
        window.session.shutdown()
