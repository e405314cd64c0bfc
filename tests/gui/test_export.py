"""Reports from the window: File › Export Report writes what `stackwalk` prints for the same dump (JSON,
text, HTML); Copy All Threads; the Threads and Unwind context menus; View › Dark Mode; the status
message for a register followed into a module."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from inspector.core.process import ProcessState
from inspector.core.report.human import render_human
from inspector.gui import window_extras
from inspector.gui.main_window import MainWindow
from inspector.gui.models.register_model import RegisterTableModel
from inspector.gui.session import FrameRef
from inspector.resources import sample_dump, sample_symbols
from tests.gui.conftest import MessageBoxes
from tests.gui.support import load


def export(qtbot: QtBot, window: MainWindow, path: Path) -> None:
    """Export to `path` and wait until the exports' thread wrote it."""
    assert window.extras.export_report(path)
    qtbot.waitUntil(lambda: window.extras.exporting is None, timeout=30000)


def cli_report(*flags: str, dump: Path | None = None) -> str:
    command = [
        sys.executable,
        "-m",
        "inspector",
        "stackwalk",
        "--no-symbols-cache",
        *flags,
        str(dump or sample_dump()),
        str(sample_symbols()),
    ]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize(("suffix", "flag"), [(".json", "--json"), (".txt", "--human"), (".html", "--html")])
def test_export_equals_the_cli(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, suffix: str, flag: str
) -> None:
    load(qtbot, window.session, sample_dump())
    path = tmp_path / f"report{suffix}"
    export(qtbot, window, path)
    assert path.read_text(encoding="utf-8") == cli_report(flag)
    assert str(path) in window.status_text()


def test_export_through_the_dialog_picks_the_format_by_filter(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load(qtbot, window.session, sample_dump())
    chosen = tmp_path / "crash-report"  # no suffix: the filter decides
    monkeypatch.setattr(
        QFileDialog,
        "getSaveFileName",
        lambda *a, **k: (str(chosen), "JSON, rust-minidump's schema (*.json)"),
    )
    assert window.extras.export_action.isEnabled()
    window.extras.export_action.trigger()
    qtbot.waitUntil(lambda: window.extras.exporting is None, timeout=30000)
    assert chosen.read_text(encoding="utf-8") == cli_report("--json")


def test_the_html_report_of_a_damaged_dump_leads_with_the_damage(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    cut = tmp_path / "cut.dmp"
    cut.write_bytes(sample_dump().read_bytes()[:3000])
    load(qtbot, window.session, cut)
    path = tmp_path / "cut.html"
    export(qtbot, window, path)
    html = path.read_text(encoding="utf-8")
    assert html == cli_report("--html", dump=cut)
    assert html.index("Crash reason unknown: the exception stream is damaged") < html.index('class="damage"')
    assert html.index('class="damage"') < html.index("<h2>Threads</h2>")
    assert "written on request" not in html
    # self-contained: nothing is fetched from elsewhere
    for outside in ("http://", "https://", "<script", "<link", "src="):
        assert outside not in html


def test_copy_all_threads(qtbot: QtBot, window: MainWindow) -> None:
    load(qtbot, window.session, sample_dump())
    QGuiApplication.clipboard().setText("")
    assert window.extras.copy_all_threads()
    # rendered off the GUI thread, then put on the clipboard
    qtbot.waitUntil(lambda: QGuiApplication.clipboard().text() != "", timeout=30000)
    text = QGuiApplication.clipboard().text()
    assert window.statusBar().currentMessage() == "Copied 3 threads"
    doc = window.session.document
    assert doc is not None
    assert text.startswith("Thread 2 renderer (crashed) - tid: 11907\n")
    for line in ("Thread 0 render_farm - tid: 11905", "Thread 1 loader - tid: 11906"):
        assert line in text
    assert text in render_human(doc.state)  # the report's threads, exactly


def test_threads_context_menu(qtbot: QtBot, window: MainWindow) -> None:
    load(qtbot, window.session, sample_dump())
    pane = window.thread_pane
    row = pane.proxy.mapFromSource(pane.model.index(1, 0))
    point = pane.view.visualRect(row).center()
    menu = window.extras.thread_menu(point)
    actions = {a.text(): a for a in menu.actions()}
    assert {"Copy Thread 1's Stack", "Copy &All Threads", "&Export Report…"} <= set(actions), list(actions)
    actions["Copy Thread 1's Stack"].trigger()
    copied = QGuiApplication.clipboard().text()
    assert copied.startswith("Thread 1 loader - tid: 11906\n")
    assert "thumbnail_loader_main" in copied


def test_unwind_context_menu_copies_the_trace(qtbot: QtBot, window: MainWindow) -> None:
    load(qtbot, window.session, sample_dump())
    window.session.select_frame(FrameRef(2, 1))
    menu = window.extras.unwind_menu(window.unwind_pane.view.rect().center())
    actions = {a.text(): a for a in menu.actions()}
    assert {"Copy Line", "Copy Whole Trace", "Expand All", "Collapse All"} <= set(actions)
    actions["Copy Whole Trace"].trigger()
    trace = QGuiApplication.clipboard().text()
    assert "STACK CFI" in trace, trace
    human_trace = cli_report("--human", "--trace")
    for line in trace.strip().splitlines():
        assert line.strip() in human_trace, line


def test_dark_mode_toggle(qtbot: QtBot, window: MainWindow) -> None:
    action = window.extras.dark_mode_action
    assert action.isCheckable()
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    assert action in view_menu.actions()
    light = window.theme.dark
    try:
        action.trigger()
        qtbot.waitUntil(lambda: window.theme.dark != light)
        assert action.isChecked() == window.theme.dark
        assert window.color_scheme == ("dark" if window.theme.dark else "light")
        # kept for the next start (app.main reads it when --color-scheme is not given)
        assert window.settings.color_scheme == window.color_scheme
        action.trigger()
        qtbot.waitUntil(lambda: window.theme.dark == light)
        assert window.settings.color_scheme == ("dark" if light else "light")
    finally:
        QGuiApplication.styleHints().unsetColorScheme()  # the next tests follow the system again


def test_a_register_followed_into_a_module_says_so(qtbot: QtBot, window: MainWindow) -> None:
    load(qtbot, window.session, sample_dump())
    window.session.select_frame(FrameRef(2, 0))
    model = window.register_pane.model
    rip = model.row_of("rip")
    assert rip is not None
    window.register_pane.view.doubleClicked.emit(model.index(rip, RegisterTableModel.COL_VALUE))
    assert "is in render_farm" in window.status_text(), window.status_text()


def test_export_waits_for_the_walk(window: MainWindow, tmp_path: Path) -> None:
    assert not window.extras.export_action.isEnabled()  # nothing open
    assert not window.extras.export_report(tmp_path / "r.html")


def test_export_renders_off_the_gui_thread(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report is rendered and written on the exports' thread; the GUI thread only starts it and
    hears back (a slow render never freezes the window)."""
    load(qtbot, window.session, sample_dump())
    threads = []
    release = threading.Event()
    real = window_extras.REPORT_FORMATS[".json"]

    def slow_json(state: ProcessState) -> str:
        threads.append(threading.current_thread())
        release.wait(10)  # held until the GUI thread has shown it is free
        return real[1](state)

    monkeypatch.setitem(window_extras.REPORT_FORMATS, ".json", (real[0], slow_json))
    path = tmp_path / "report.json"
    assert window.extras.export_report(path)
    # export_report returned while the render is still held: the GUI thread goes on
    qtbot.waitUntil(lambda: bool(threads))
    assert not path.exists() and "Saving the report" in window.status_text()
    assert not window.extras.export_action.isEnabled()
    assert not window.extras.export_report(tmp_path / "second.json")  # one at a time
    release.set()
    qtbot.waitUntil(lambda: window.extras.exporting is None, timeout=30000)
    assert threads[0] is not threading.main_thread()
    assert path.read_text(encoding="utf-8") == cli_report("--json")
    assert f"Report saved to {path}" in window.status_text()
    assert window.extras.export_action.isEnabled()


def test_export_to_a_folder_that_cannot_be_written_says_so(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, message_boxes: MessageBoxes
) -> None:
    load(qtbot, window.session, sample_dump())
    path = tmp_path / "missing-folder" / "report.txt"
    export(qtbot, window, path)
    assert message_boxes.titles == ["Cannot save the report"]
    assert str(path) in message_boxes.shown[0][1]
