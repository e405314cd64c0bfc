"""The main window: opening dumps (API, drop), symbol paths from drops, errors that keep the previous dump,
damaged dumps with their problems, layout persistence, keyboard navigation."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, QPoint, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from inspector.core.process import SymbolState
from inspector.core.unwind import WalkPolicy
from inspector.gui.main_window import MainWindow
from inspector.gui.models.module_model import ModuleTableModel
from inspector.gui.models.roles import AddressRole
from inspector.gui.settings import Settings
from inspector.resources import sample_dump, sample_symbols
from tests.gui.conftest import MessageBoxes, make_window
from tests.gui.support import load, wait_analysis_over

STACK_POINTER = 0x7FFFF75CFE88  # the crashing thread's rsp in the sample


def drop(window: MainWindow, paths: list[Path]) -> QDropEvent:
    """Drag `paths` over the window and drop them, as a file manager would."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    center = window.rect().center()  # QDragEnterEvent takes an integer QPoint on every PySide6 we support
    enter = QDragEnterEvent(
        center, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(window, enter)
    assert enter.isAccepted()
    assert not window.drop_overlay.isHidden()  # says what the drop will do
    assert window.drop_overlay.lines
    event = QDropEvent(
        QPointF(center),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(window, event)
    assert window.drop_overlay.isHidden()
    return event


def drop_and_wait(qtbot: QtBot, window: MainWindow, paths: list[Path]) -> QDropEvent:
    events: list[QDropEvent] = []
    wait_analysis_over(qtbot, window.session, lambda: events.append(drop(window, paths)))
    return events[0]


def test_opening_the_sample_fills_every_pane(qtbot: QtBot, window: MainWindow) -> None:
    # through the window's own open_dump (the menu, recent files and drops call it)
    wait_analysis_over(qtbot, window.session, lambda: window.open_dump(sample_dump()))
    assert window.windowTitle() == "sample.dmp — Crash Inspector"
    summary = window.summary_pane.text()
    for fact in (
        "SIGSEGV / SEGV_MAPERR at 0x0000000000000000",
        "Crashing thread: #2 renderer (thread id 11907)",
        "OS: Linux 6.18.44",
        "CPU: amd64 · family 26 model 2 stepping 1",
        "Process: pid 11905, up 0 s",
        "Symbols: all 2 modules with frames or scan hits have symbols",
        "sample.dmp — 13,560 bytes, written 2026-11-21 15:19:45 UTC",
    ):
        assert fact in summary, summary
    assert "Assertion" not in summary  # no assertion in this dump: the row is hidden
    # the crashing thread is selected in the threads pane, and the other panes follow it
    current = window.thread_pane.view.currentIndex()
    assert window.thread_pane.view.source_row(current) == 2
    assert window.memory_pane.title.text().startswith("Stack of thread #2 renderer: 0x00007ffff75cfe08")
    memory_current = window.memory_pane.view.currentIndex()
    assert memory_current.data(AddressRole) == STACK_POINTER
    assert window.register_pane.model.rowCount() == 17
    assert "exception record" in window.register_pane.title.text()
    symbols = [window.module_pane.model.index(r, ModuleTableModel.COL_SYMBOLS).data() for r in range(4)]
    assert symbols == ["loaded", "not needed", "loaded", "not needed"]
    assert window.status_text() == "sample.dmp: 3 threads, 4 modules"
    assert not window.progress_bar.isVisible() and not window.cancel_action.isEnabled()
    assert window.settings.recent_files[0] == sample_dump()


def test_selecting_a_thread_in_its_pane_updates_registers_and_memory(
    qtbot: QtBot, window: MainWindow
) -> None:
    load(qtbot, window.session, sample_dump())
    view = window.thread_pane.view
    view.setCurrentIndex(window.thread_pane.proxy.mapFromSource(window.thread_pane.model.index(1, 0)))
    assert window.session.selected_thread == 1
    assert window.register_pane.title.text() == "Frame 0 of thread #1 loader: registers from the thread list"
    assert window.frame_pane.model.rowCount() == 5
    assert window.memory_pane.title.text().startswith("Stack of thread #1 loader")
    # and back through the session: the view follows
    window.session.select_thread(0)
    assert view.source_row(view.currentIndex()) == 0


def test_a_dump_dropped_on_the_window_opens(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    copy = tmp_path / "from the bug tracker.dmp"
    copy.write_bytes(sample_dump().read_bytes())
    event = drop_and_wait(qtbot, window, [copy])
    assert event.isAccepted()
    doc = window.session.document
    assert doc is not None and doc.path == copy
    assert window.windowTitle().startswith("from the bug tracker.dmp")


def test_a_dropped_folder_becomes_a_saved_symbol_path_and_reruns_the_analysis(
    qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes
) -> None:
    window = make_window(qtbot, settings, session_symbol_paths=())
    window.settings.local_modules = False  # this machine's libc would give module 2 symbols
    window.push_symbol_settings()
    load(qtbot, window.session, sample_dump())
    doc = window.session.document
    assert doc is not None and doc.modules_lacking_symbols() == [0, 2, 3]  # scanned frames without symbols
    drop_and_wait(qtbot, window, [sample_symbols()])
    doc = window.session.document
    assert doc is not None and doc.modules_lacking_symbols() == []
    assert window.session.symbol_paths == (sample_symbols(),)
    # persisted: a fresh reader of the same INI file sees it
    stored = Settings(QSettings(settings.store.fileName(), QSettings.Format.IniFormat))
    assert stored.symbol_paths == [sample_symbols()]
    # the re-run walked with the new symbols: the crashing thread's callers come from CFI now
    assert window.frame_pane.model.frames[1].function_name == "render_worker_main"


def test_a_dropped_sym_file_is_used_for_its_module(
    qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes
) -> None:
    window = make_window(qtbot, settings, session_symbol_paths=())
    window.settings.local_modules = False  # this machine's libc would give module 2 symbols
    window.push_symbol_settings()
    load(qtbot, window.session, sample_dump())
    sym = next((sample_symbols() / "render_farm").rglob("*.sym"))
    drop_and_wait(qtbot, window, [sym])
    doc = window.session.document
    assert doc is not None and doc.symbols[0].state is SymbolState.LOADED
    assert 0 not in doc.modules_lacking_symbols() and 2 in doc.modules_lacking_symbols()
    assert doc.symbols[0].path == str(sym) and doc.symbols[0].found_by == "MODULE line"
    assert settings.symbol_paths == [sym]


def test_a_file_that_is_not_a_dump_shows_an_error_and_keeps_the_previous_dump(
    qtbot: QtBot, window: MainWindow, message_boxes: MessageBoxes, tmp_path: Path
) -> None:
    load(qtbot, window.session, sample_dump())
    before = window.session.document
    bad = tmp_path / "screenshot.png.dmp"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n not a dump")
    drop_and_wait(qtbot, window, [bad])
    assert message_boxes.titles == ["Cannot open dump"]
    text = message_boxes.shown[0][1]
    assert "not a minidump" in text and "sample.dmp is still shown" in text
    assert "Cannot open dump" in window.status_text()
    assert window.session.document is before
    assert window.windowTitle().startswith("sample.dmp")
    assert "SIGSEGV" in window.summary_pane.text()
    # the app keeps working
    load(qtbot, window.session, sample_dump())
    assert window.session.document is not before


def test_a_directory_or_a_vanished_file_is_an_error_too(
    qtbot: QtBot, window: MainWindow, message_boxes: MessageBoxes, tmp_path: Path
) -> None:
    load(qtbot, window.session, tmp_path)
    load(qtbot, window.session, tmp_path / "gone.dmp")
    assert message_boxes.titles == ["Cannot open dump", "Cannot open dump"]
    assert "is a directory" in message_boxes.shown[0][1]
    assert "no such file" in message_boxes.shown[1][1]
    assert window.session.document is None
    assert window.summary_pane.headline.text() == "No dump open"


def test_a_truncated_dump_opens_with_its_problems_listed(
    qtbot: QtBot, window: MainWindow, message_boxes: MessageBoxes, tmp_path: Path
) -> None:
    cut = tmp_path / "cut.dmp"
    cut.write_bytes(sample_dump().read_bytes()[:0x1D00])
    window.show()
    qtbot.waitExposed(window)
    modules = window.docks["modules"]
    assert not modules.visibleRegion().isEmpty()  # Modules is the front tab until problems appear
    load(qtbot, window.session, cut)
    assert message_boxes.shown == []  # damage is not an error: the dump opens
    problems = window.problem_pane.model.problems
    assert len(problems) >= 3
    assert all("outside the file" in p.message or p.code for p in problems)
    dock = window.docks["problems"]
    assert dock.windowTitle() == f"Problems ({len(problems)})"
    # brought to the front of its tab group
    qtbot.waitUntil(lambda: not dock.visibleRegion().isEmpty() and modules.visibleRegion().isEmpty())
    assert window.thread_pane.model.rowCount() == 3
    assert "not captured" in window.memory_pane.title.text()
    assert "problems (see Problems)" in window.status_text()


def test_the_layout_is_remembered(qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes) -> None:
    first = make_window(qtbot, settings)
    first.show()
    qtbot.waitExposed(first)
    first.docks["registers"].hide()
    first.resize(760, 560)  # the offscreen screen is 800x600: restoring clamps to it
    first.close()
    assert settings.window_state is not None and settings.window_geometry is not None
    second = make_window(qtbot, settings)
    second.show()
    qtbot.waitExposed(second)
    assert second.docks["registers"].isHidden()
    assert (second.width(), second.height()) == (760, 560)
    second.reset_layout()
    assert not second.docks["registers"].isHidden()


def test_alt_number_jumps_between_panes_and_ctrl_g_goes_to_an_address(
    qtbot: QtBot, window: MainWindow
) -> None:
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    load(qtbot, window.session, sample_dump())

    def focused_in(widget: QWidget) -> bool:
        focus = QApplication.focusWidget()
        return focus is not None and (focus is widget or widget.isAncestorOf(focus))

    for key, pane in (
        ("threads", window.thread_pane),
        ("memory", window.memory_pane),
        ("registers", window.register_pane),
        ("modules", window.module_pane),
        ("problems", window.problem_pane),
        ("summary", window.summary_pane),
    ):
        action = window.pane_actions[key]
        assert action.shortcut().toString().startswith("Alt+")
        action.trigger()
        qtbot.waitUntil(lambda pane=pane: focused_in(pane))
    window.go_to_address_action.trigger()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.memory_pane.go_to)
    qtbot.keyClicks(window.memory_pane.go_to, "rsp+0x20")
    qtbot.keyClick(window.memory_pane.go_to, Qt.Key.Key_Return)
    assert window.memory_pane.view.currentIndex().data(AddressRole) == STACK_POINTER + 0x20
    assert QApplication.focusWidget() is window.memory_pane.view


def test_go_to_address_across_regions_and_outside_the_dump(qtbot: QtBot, window: MainWindow) -> None:
    load(qtbot, window.session, sample_dump())
    pane = window.memory_pane
    pane.go_to.setText("0x7fffffffeaa0")  # thread 0's stack pointer: another region
    pane.go_to.returnPressed.emit()
    assert pane.title.text().startswith("Stack of thread #0 render_farm")
    assert pane.view.currentIndex().data(AddressRole) == 0x7FFFFFFFEAA0
    pane.go_to.setText("dead0000")
    pane.go_to.returnPressed.emit()
    assert pane.error.isVisibleTo(pane) and "not in the memory captured" in pane.error.text()
    assert "not in the memory captured" in window.status_text()
    pane.go_to.setText("zz top")
    pane.go_to.returnPressed.emit()
    assert "neither a hex number nor a register" in pane.error.text()


def test_double_clicking_a_register_shows_where_it_points(qtbot: QtBot, window: MainWindow) -> None:
    load(qtbot, window.session, sample_dump())
    window.session.select_thread(0)
    model = window.register_pane.model
    rsp = model.row_of("rsp")
    assert rsp is not None
    window.register_pane.view.doubleClicked.emit(model.index(rsp, 1))
    assert window.memory_pane.view.currentIndex().data(AddressRole) == 0x7FFFFFFFEAA0
    rip = model.row_of("rip")
    assert rip is not None
    window.register_pane.view.doubleClicked.emit(model.index(rip, 1))
    assert window.session.selected_module == 2  # libc.so.6


def test_the_missing_symbols_link_shows_those_modules(
    qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes
) -> None:
    window = make_window(qtbot, settings, session_symbol_paths=())
    window.settings.local_modules = False  # this machine's libc would give module 2 symbols
    window.push_symbol_settings()
    load(qtbot, window.session, sample_dump())
    summary = window.summary_pane.text()
    expected = "Symbols: no symbol paths are set: 3 of 3 modules with frames or scan hits lack symbols"
    assert expected in summary, summary
    assert "Add a symbol folder…" in summary
    label = window.summary_pane.values["symbols"]
    label.linkActivated.emit("missing-symbols")
    proxy = window.module_pane.proxy
    names = [proxy.index(r, ModuleTableModel.COL_NAME).data() for r in range(proxy.rowCount())]
    assert names == ["render_farm", "libc.so.6", "ld-linux-x86-64.so.2"]  # not the vdso: nothing is in it
    assert window.module_pane.lacking_only.isChecked()
    window.summary_pane.values["thread"].linkActivated.emit("thread:1")
    assert window.session.selected_thread == 1


def test_preferences_edit_the_saved_symbol_paths(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    load(qtbot, window.session, sample_dump())
    dialog = window.preferences_dialog()
    qtbot.addWidget(dialog)
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    dialog.add_paths([first, second])
    assert dialog.preferences().paths == (first, second)
    dialog.move_selected(-1)  # the last added is selected: move it up
    assert dialog.preferences().paths == (second, first)
    dialog.remove_selected()
    assert dialog.preferences().paths == (first,)
    dialog.cache_enabled.setChecked(True)
    dialog.cache_dir.setText(str(tmp_path / "cache"))
    wait_analysis_over(qtbot, window.session, lambda: window.apply_preferences(dialog.preferences()))
    assert window.settings.symbol_paths == [first]
    assert window.settings.effective_cache_dir() == tmp_path / "cache"
    assert window.session.symbol_paths == (first, sample_symbols())
    assert window.session.cache_dir == tmp_path / "cache"


def test_recent_files_menu(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    assert not window.recent_menu.isEnabled()
    copy = tmp_path / "other.dmp"
    copy.write_bytes(sample_dump().read_bytes())
    load(qtbot, window.session, sample_dump())
    load(qtbot, window.session, copy)
    labels = [a.text() for a in window.recent_menu.actions() if a.text()]
    assert labels[:2] == ["&1 other.dmp", "&2 sample.dmp"]
    recent_sample = window.recent_menu.actions()[1]
    wait_analysis_over(qtbot, window.session, recent_sample.trigger)
    doc = window.session.document
    assert doc is not None and doc.path == sample_dump()


def test_an_unexpected_exception_is_logged_and_shown_and_the_app_lives_on(
    window: MainWindow, message_boxes: MessageBoxes
) -> None:
    from inspector.gui.error_reporting import ExceptHook

    hook = ExceptHook(window.present_error)
    try:
        raise RuntimeError("a bug in a slot")
    except RuntimeError as exc:
        hook(RuntimeError, exc, exc.__traceback__)
    assert hook.count == 1
    assert message_boxes.titles == ["Unexpected error"]
    assert "a bug in a slot" in message_boxes.shown[0][1]


def test_a_drag_of_something_that_is_not_a_file_is_refused(window: MainWindow) -> None:
    mime = QMimeData()
    mime.setText("just text")
    enter = QDragEnterEvent(
        QPoint(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(window, enter)
    assert not enter.isAccepted()
    assert window.drop_overlay.isHidden()


def test_preferences_choose_the_walk_policy_and_the_dump_is_walked_again(
    qtbot: QtBot, window: MainWindow
) -> None:
    load(qtbot, window.session, sample_dump())
    dialog = window.preferences_dialog()
    qtbot.addWidget(dialog)
    assert dialog.policy_rust_minidump.isChecked()
    assert all(check.isEnabled() for check in dialog.walk_switches.values())
    dialog.policy_breakpad.setChecked(True)  # Breakpad's rules have none of rust-minidump's switches
    assert not any(check.isEnabled() for check in dialog.walk_switches.values())
    dialog.policy_rust_minidump.setChecked(True)
    dialog.walk_switches["extended_scan_after_cfi"].setChecked(True)
    dialog.policy_breakpad.setChecked(True)
    chosen = dialog.preferences().walk
    assert chosen.policy is WalkPolicy.BREAKPAD and chosen.extended_scan_after_cfi
    wait_analysis_over(qtbot, window.session, lambda: window.apply_preferences(dialog.preferences()))
    assert window.settings.walk_options == chosen
    doc = window.session.document
    assert doc is not None and doc.state.walk_options == chosen  # walked again, with Breakpad's rules
