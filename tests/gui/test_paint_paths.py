"""What the window does to stay responsive while a walk streams in (issue 18's GUI row): the
models answer paints without extra round trips, and still behave as Qt's model tester expects."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from PySide6.QtCore import QAbstractItemModel, QModelIndex, QRect, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPaintEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QApplication, QLabel, QStyleOptionViewItem, QTreeView
from pytestqt.qtbot import QtBot

from inspector.core.process import ProcessOptions, process, process_events
from inspector.gui.document import Document
from inspector.gui.main_window import MainWindow
from inspector.gui.models.frame_model import FrameTreeModel
from inspector.gui.models.module_model import ModuleFilterProxy, ModuleTableModel
from inspector.gui.panes.name_delegate import ShorteningDelegate
from inspector.gui.theme import Theme
from inspector.resources import sample_dump
from tests.gui.support import wait_analysis_over

CheckModel = Callable[[QAbstractItemModel], None]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "crashes"
M = FrameTreeModel


def test_frame_model_indexes_while_a_recursion_streams_in(
    check_model: CheckModel, qapp: QApplication
) -> None:
    case = FIXTURES / "cxx_templates"
    state = process(
        str(case / "cxx_templates.dmp"),
        ProcessOptions(
            symbol_paths=(str(case / "symbols"), str(FIXTURES / "system-symbols")), use_symbols_cache=False
        ),
    )
    frames = state.threads[0].frames[:60]  # 13 frames, then the recursion (the model tester is slow)
    model = FrameTreeModel(Theme.for_scheme(False, qapp.font()))
    check_model(model)  # watches every insert and removal below
    model.set_frames(0, frames[:5])
    for start in range(5, len(frames), 16):  # in batches, as the worker delivers them
        model.append_frames(frames[start : start + 16])

    (group,) = model.groups
    top = next(r for r in range(model.rowCount()) if model.group_of(model.index(r, 0)) is group)
    parent = model.index(top, 0)
    count = group.count
    assert count > 40 and model.rowCount(parent) == count
    child = model.index(count - 1, M.COL_FUNCTION, parent)
    assert child.isValid() and child.parent() == parent
    assert model.frame_ref_of(child) == (59, 0)  # the last frame streamed in, in the group
    # out of range: no index, whatever the level
    assert not model.index(count, 0, parent).isValid()
    assert not model.index(model.rowCount(), 0).isValid()
    assert not model.index(0, len(M.HEADERS)).isValid()
    assert not model.index(-1, 0).isValid()
    assert not model.index(0, 0, model.index(0, 0)).isValid()  # a plain row has no children
    assert not model.index(0, 0, model.index(0, 0, parent)).isValid()  # nor has a group's child
    assert not model.index(0, 0, model.index(top, 1)).isValid()  # children hang off column 0 only
    # roles the model never answers are None; the ones it does still answer
    first = model.index(0, M.COL_FUNCTION)
    assert first.data(Qt.ItemDataRole.BackgroundRole) is None
    assert first.data(Qt.ItemDataRole.CheckStateRole) is None
    assert first.data().startswith("engine::World<")
    assert parent.siblingAtColumn(M.COL_FUNCTION).data().startswith(f"{count} more calls of ")
    assert model.index(0, 0, QModelIndex()).data(Qt.ItemDataRole.DecorationRole) is not None


def test_the_stack_plot_keeps_its_label_plain_and_refits_for_another_thread(
    qtbot: QtBot, window: MainWindow
) -> None:
    wait_analysis_over(qtbot, window.session, lambda: window.open_dump(sample_dump()))
    plot = window.plot_pane
    item = plot.plot.getPlotItem()
    base = min(start for _, start, _ in plot.extents)
    # byte offsets, never scaled to an SI prefix: the tick labels are hex offsets of the real bytes
    assert f"bytes above {base:#x}" in plot.axis.labelString()
    assert plot.axis.autoSIPrefixScale == 1.0
    width = max(end for _, _, end in plot.extents) - base
    (x0, x1), (_, y1) = item.viewRange()
    assert x0 <= 0 and x1 >= width and y1 >= max(f for f, _, _ in plot.extents)

    item.setXRange(0, 8, padding=0)  # the user zooms in
    plot.redraw()  # e.g. more frames of the same thread: the zoom stays
    assert item.viewRange()[0][1] < width
    window.session.select_thread(0)  # another thread: the view fits its stack
    assert plot.extents
    base = min(start for _, start, _ in plot.extents)
    width = max(end for _, _, end in plot.extents) - base
    (x0, x1), _ = item.viewRange()
    assert x0 <= 0 and x1 >= width
    assert f"bytes above {base:#x}" in plot.axis.labelString()


def test_a_batch_of_symbol_states_repaints_the_module_rows_in_one_signal(
    check_model: CheckModel, qapp: QApplication, sample_document: Document
) -> None:
    model = ModuleTableModel(Theme.for_scheme(False, qapp.font()))
    proxy = ModuleFilterProxy()
    proxy.setSourceModel(model)
    check_model(proxy)
    model.set_document(sample_document)
    changes: list[tuple[int, int, int, int]] = []
    model.dataChanged.connect(
        lambda first, last, _roles=(): changes.append(
            (first.row(), last.row(), first.column(), last.column())
        )
    )
    model.symbols_changed([3, 1, 2, 99])  # 99: no such module
    M = ModuleTableModel
    assert changes == [(1, 3, M.COL_SYMBOLS, M.COL_MATCHED)]
    model.symbols_changed([])
    assert len(changes) == 1


LONG_NAME = "engine::World<engine::Vec<float, 3>, std::allocator<engine::Vec<float, 3> > >::step(double)"


def _name_cell() -> Callable[..., str]:
    """`shown(width, font=None)`: the text a `ShorteningDelegate` draws for LONG_NAME in a cell."""
    view = QTreeView()
    model = QStandardItemModel(1, 1)
    model.setItem(0, 0, QStandardItem(LONG_NAME))
    view.setModel(model)
    delegate = ShorteningDelegate(view)
    view.setItemDelegateForColumn(0, delegate)
    index = model.index(0, 0)

    def shown(width: int, font: QFont | None = None) -> str:
        option = QStyleOptionViewItem()
        option.initFrom(view)
        option.widget = view
        option.rect = QRect(0, 0, width, 20)
        if font is not None:
            option.font = font
            option.fontMetrics = QFontMetrics(font)
        delegate.initStyleOption(option, index)
        return option.text

    return shown


def test_shortened_names_follow_the_column_width_when_remembered(qapp: QApplication) -> None:
    shown = _name_cell()
    narrow, wide = shown(160), shown(2000)
    assert wide == LONG_NAME and narrow != LONG_NAME and len(narrow) < len(LONG_NAME)
    assert shown(160) == narrow and shown(2000) == wide  # answered again from what it remembers
    assert len(shown(60)) <= len(narrow)  # narrower still: a shorter form, not the remembered one


def test_shortened_names_are_measured_again_in_another_font(qapp: QApplication) -> None:
    """What the delegate remembers is for one font: a larger one fits fewer characters in the cell."""
    shown = _name_cell()
    small, large = QFont(qapp.font()), QFont(qapp.font())
    small.setPointSize(6)
    large.setPointSize(30)
    in_small = shown(400, small)
    in_large = shown(400, large)
    assert len(in_large) < len(in_small)
    assert shown(400, small) == in_small


def test_table_cells_are_enabled_selectable_and_read_only(
    qapp: QApplication, sample_document: Document
) -> None:
    """The table models leave their cells' flags to Qt (no call into Python per cell and paint)."""
    model = ModuleTableModel(Theme.for_scheme(False, qapp.font()))
    model.set_document(sample_document)
    flags = model.flags(model.index(0, ModuleTableModel.COL_SYMBOLS))
    assert flags & Qt.ItemFlag.ItemIsEnabled and flags & Qt.ItemFlag.ItemIsSelectable
    assert not flags & (
        Qt.ItemFlag.ItemIsEditable | Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsDragEnabled
    )
    outside = model.index(model.rowCount(), 0)
    assert not outside.isValid() and model.flags(outside) == Qt.ItemFlag.NoItemFlags
    assert not model.index(0, model.columnCount()).isValid()
    assert not model.index(0, 0, model.index(0, 0)).isValid()  # a table: no children


def test_a_new_document_is_shown_first_and_its_thread_selected_in_the_next_slice(
    qtbot: QtBot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = window.session
    steps = [0]  # how many times the session has applied a step of events so far
    apply = session.apply

    def counting_apply(generation: int, events: Iterable[object]) -> None:
        steps[0] += 1
        apply(generation, events)

    monkeypatch.setattr(session, "apply", counting_apply)
    seen: list[tuple[str, int, int]] = []
    session.document_changed.connect(lambda: seen.append(("document", session.selected_thread, steps[0])))
    session.thread_selected.connect(lambda index: seen.append(("thread", index, steps[0])))
    wait_analysis_over(qtbot, session, lambda: window.open_dump(sample_dump()))
    doc = session.document
    assert doc is not None and doc.crashing_thread is not None
    crashing = doc.crashing_thread.index
    # the window is rebuilt with no thread selected (and painted so, since the slice ends there),
    # then the crashing thread is selected by a later step
    (kind, selected, shown_in), (kind2, thread, selected_in) = seen[:2]
    assert (kind, selected) == ("document", -1) and (kind2, thread) == ("thread", crashing)
    assert selected_in > shown_in
    assert session.selected_frame is not None and session.selected_frame.thread == crashing


def test_the_first_frame_is_selected_in_a_slice_after_the_one_that_selects_the_thread(
    qtbot: QtBot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even when the whole walk arrives in one batch: the thread's panes paint in one turn, the first
    frame's (Registers, Stack Memory, Unwind, Disassembly) in a later one."""
    session = window.session
    events = list(process_events(sample_dump(), ProcessOptions(use_symbols_cache=False)))
    order: list[str] = []
    start = session._queue_timer.start
    monkeypatch.setattr(session._queue_timer, "start", lambda *a: (order.append("slice ends"), start(*a)))
    session.thread_selected.connect(lambda _: order.append("thread"))
    session.frame_selected.connect(lambda ref: order.append("frame") if ref is not None else None)
    session._on_events(session.runner.generation, events)  # as the worker delivers a batch
    qtbot.waitUntil(lambda: "frame" in order)
    thread = order.index("thread")
    assert "slice ends" in order[thread : order.index("frame")]


def test_a_walk_steps_aside_while_the_window_paints_and_docks_do_not_slide(
    qtbot: QtBot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window tells the walk when it paints: a paint of any docked pane happens inside it."""
    runner = window.session.runner
    calls: list[str] = []
    monkeypatch.setattr(runner, "window_work_started", lambda: calls.append("started"))
    monkeypatch.setattr(runner, "window_work_done", lambda: calls.append("done"))

    class Probe(QLabel):
        def paintEvent(self, event: QPaintEvent) -> None:
            calls.append("paint")
            super().paintEvent(event)

    probe = Probe("probe")
    window.statusBar().addWidget(probe)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: "paint" in calls)  # the first paint, when the window is exposed
    qtbot.wait(50)
    calls.clear()
    probe.update()
    qtbot.waitUntil(lambda: "paint" in calls)
    qtbot.waitUntil(lambda: calls.count("started") == calls.count("done"))
    paint = calls.index("paint")
    assert calls[:paint].count("started") > calls[:paint].count("done")  # painted while the walk was held
    # docks that slid to each new layout repainted the whole window a dozen times per change
    assert not window.isAnimated()
