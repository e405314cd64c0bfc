"""Missing symbols are said where they show, with the way out: the Summary's action, Problems that do not
call a dump without symbols clean, and the Modules pane's context menu."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from inspector.gui.main_window import MainWindow
from inspector.gui.settings import Settings
from inspector.resources import sample_dump, sample_symbols
from tests.gui.conftest import MessageBoxes, make_window
from tests.gui.support import load, wait_analysis_over

RENDER_FARM_DEBUG_ID = "C45AC8E94E82B725B3C5363770E51DB30"


@pytest.fixture
def bare_window(qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes) -> MainWindow:
    """A window with no symbol path at all, as on first use."""
    window = make_window(qtbot, settings, session_symbol_paths=())
    load(qtbot, window.session, sample_dump())
    return window


def _action(menu: object, text: str) -> object:
    actions = {a.text(): a for a in menu.actions()}  # type: ignore[attr-defined]
    assert text in actions, list(actions)
    return actions[text]


def test_without_symbol_paths_the_summary_and_problems_say_so(bare_window: MainWindow) -> None:
    summary = bare_window.summary_pane.text()
    assert "no symbol paths are set" in summary
    assert "Add a symbol folder…" in summary
    problems = bare_window.problem_pane
    assert not problems.empty.isHidden()
    assert "No problems" not in problems.empty.text()
    assert "No symbol paths are set, so no symbols were read" in problems.empty.text()


def test_the_summary_action_adds_a_folder_and_walks_again(
    qtbot: QtBot, bare_window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(sample_symbols()))
    link = bare_window.summary_pane.values["symbols"]
    wait_analysis_over(qtbot, bare_window.session, lambda: link.linkActivated.emit("add-symbols"))
    summary = bare_window.summary_pane.text()
    assert "no symbol paths are set" not in summary and "Add a symbol folder" not in summary, summary
    assert "have symbols" in summary
    assert bare_window.problem_pane.empty.text() == "No problems: the dump and its symbols read cleanly."


def test_problems_with_a_symbol_path_that_lacks_the_files(
    qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes, tmp_path: Path
) -> None:
    window = make_window(qtbot, settings, session_symbol_paths=(tmp_path,))
    # this machine's own libc may match the dump's (same image): the count must not depend on the host
    window.settings.local_modules = False
    window.push_symbol_settings()
    load(qtbot, window.session, sample_dump())
    text = window.problem_pane.empty.text()
    assert text == (
        "No damage found in the dump or its symbol files, but 3 modules with frames lack symbols "
        "(see Modules)."
    )


def test_problems_say_one_module_lacks_symbols_in_the_singular(
    qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes, tmp_path: Path
) -> None:
    # only the crashing program's .sym file is missing: the walk's other frames have symbols
    store = tmp_path / "store"
    for sym in sample_symbols().rglob("*.sym"):
        if not sym.name.startswith("render_farm"):
            target = store / sym.relative_to(sample_symbols())
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(sym.read_bytes())
    window = make_window(qtbot, settings, session_symbol_paths=(store,))
    window.settings.local_modules = False
    window.push_symbol_settings()
    load(qtbot, window.session, sample_dump())
    lacking = window.session.document.modules_lacking_symbols()  # type: ignore[union-attr]
    assert len(lacking) == 1, lacking
    assert window.problem_pane.empty.text() == (
        "No damage found in the dump or its symbol files, but 1 module with frames lacks symbols "
        "(see Modules)."
    )


def test_module_context_menu_copies_what_finds_the_symbols(bare_window: MainWindow) -> None:
    doc = bare_window.session.document
    assert doc is not None
    module = doc.state.modules[0].module
    menu = bare_window.module_pane.context_menu(module)
    clipboard = QGuiApplication.clipboard()
    expected = {
        "Copy Debug ID": RENDER_FARM_DEBUG_ID,
        "Copy Code ID": "e9c85ac4824e25b7b3c5363770e51db381969de5",
        "Copy Expected Symbol Path": f"render_farm/{RENDER_FARM_DEBUG_ID}/render_farm.sym",
        "Copy Expected Symbol Path by Code ID": (
            "render_farm/E9C85AC4824E25B7B3C5363770E51DB381969DE5/render_farm.sym"
        ),
    }
    for text, value in expected.items():
        clipboard.clear()
        _action(menu, text).trigger()  # type: ignore[attr-defined]
        assert clipboard.text() == value, text


def test_module_context_menu_adds_symbol_paths(
    qtbot: QtBot, bare_window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    def choose(*args: object, **kwargs: object) -> str:
        asked.append("folder")
        return str(sample_symbols())

    monkeypatch.setattr(QFileDialog, "getExistingDirectory", choose)
    menu = bare_window.module_pane.context_menu(None)  # also on the empty part of the list
    assert "Copy Debug ID" not in [a.text() for a in menu.actions()]
    action = _action(menu, "Add Symbol Folder…")
    wait_analysis_over(qtbot, bare_window.session, action.trigger)  # type: ignore[attr-defined]
    assert asked == ["folder"]
    doc = bare_window.session.document
    assert doc is not None and doc.symbols[0].loaded


def test_a_module_without_ids_has_its_copies_disabled(bare_window: MainWindow) -> None:
    doc = bare_window.session.document
    assert doc is not None
    module = replace(doc.state.modules[0].module, debug_identifier=None, code_id="")
    menu = bare_window.module_pane.context_menu(module)
    for text in ("Copy Debug ID", "Copy Code ID", "Copy Expected Symbol Path"):
        assert not _action(menu, text).isEnabled()  # type: ignore[attr-defined]
