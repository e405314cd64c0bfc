"""The Threads search looks through every frame of every thread; no match says so and clears Frames."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from inspector.gui.main_window import MainWindow
from inspector.gui.session import FrameRef
from inspector.resources import sample_dump
from tests.gui.support import load


def shown_threads(window: MainWindow) -> list[int]:
    pane = window.thread_pane
    return [pane.view.source_row(pane.proxy.index(r, 0)) for r in range(pane.proxy.rowCount())]


def test_search_finds_a_frame_deep_in_another_thread(qtbot: QtBot, window: MainWindow) -> None:
    load(qtbot, window.session, sample_dump())
    assert window.session.selected_thread == 2  # the crashing thread
    pane = window.thread_pane
    # the main thread's second frame; its top frame is a futex wait
    pane.filter.setText("clockjoin")
    assert shown_threads(window) == [0]
    # the selection follows to the matching frame, and Frames shows that thread, not the crashing one
    assert window.session.selected_frame == FrameRef(0, 1)
    assert window.frame_pane.model.thread_index == 0
    assert pane.no_match.text() == "1 of 3 threads have a frame matching “clockjoin”"
    pane.filter.setText("Thumbnail_Loader")  # any case
    assert shown_threads(window) == [1]
    assert window.session.selected_frame == FrameRef(1, 2)


def test_search_finds_inlined_functions(qtbot: QtBot, window: MainWindow) -> None:
    load(qtbot, window.session, sample_dump())
    window.thread_pane.filter.setText("store_pixel")  # only an inlined frame of thread 2 has it
    assert shown_threads(window) == [2]


def test_search_by_module_and_source_file(qtbot: QtBot, window: MainWindow) -> None:
    load(qtbot, window.session, sample_dump())
    pane = window.thread_pane
    pane.filter.setText("render_farm.c")  # a source file: only frames with line records hold it
    assert 2 in shown_threads(window)
    ref = window.session.selected_frame
    assert ref is not None and ref.thread == 2  # the selected thread matches: it stays
    pane.filter.setText("futex")  # the top frame of threads 0 and 1; the selected thread 2 has none
    assert shown_threads(window) == [0, 1]
    assert window.session.selected_frame == FrameRef(0, 0)
    pane.filter.setText("libc.so.6 + 0x")  # nothing: every libc frame has a function name
    assert shown_threads(window) == []


def test_no_match_says_so_and_frames_shows_no_filtered_out_thread(qtbot: QtBot, window: MainWindow) -> None:
    load(qtbot, window.session, sample_dump())
    pane = window.thread_pane
    pane.filter.setText("no_such_function_anywhere")
    assert shown_threads(window) == []
    assert not pane.no_match.isHidden()
    assert pane.no_match.text() == "No match: no frame of any thread contains “no_such_function_anywhere”"
    assert window.session.selected_thread == -1
    assert window.frame_pane.model.thread_index == -1
    assert window.frame_pane.model.frames == []
    # clearing the search brings every thread back
    pane.filter.setText("")
    assert pane.no_match.isHidden()
    doc = window.session.document
    assert doc is not None and len(shown_threads(window)) == doc.thread_count
    assert window.session.selected_thread == 2  # the crashing thread again
    assert window.frame_pane.model.thread_index == 2
