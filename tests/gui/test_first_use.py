"""The window at first use (issue 21): readable names, one frame numbering, stack order, collapsed
recursions, triage marks, a stepper whose position shows and whose registers hold at each step —
on real crashes of ours (tests/fixtures/crashes)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QFontMetrics, QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QStyleOptionViewItem, QTabBar
from pytestqt.qtbot import QtBot

from inspector.core.explain import RegisterStatus
from inspector.gui.main_window import MainWindow
from inspector.gui.models.frame_model import FrameTreeModel
from inspector.gui.models.register_model import RegisterTableModel
from inspector.gui.session import FrameRef
from inspector.gui.settings import Settings
from inspector.resources import sample_dump
from tests.gui.conftest import MessageBoxes, make_window
from tests.gui.support import wait_analysis_over

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "crashes"
M = FrameTreeModel


def open_case(qtbot: QtBot, settings: Settings, name: str) -> MainWindow:
    window = make_window(
        qtbot, settings, session_symbol_paths=(FIXTURES / name / "symbols", FIXTURES / "system-symbols")
    )
    wait_analysis_over(qtbot, window.session, lambda: window.open_dump(FIXTURES / name / f"{name}.dmp"))
    return window


@pytest.fixture
def templates(qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes) -> Iterator[MainWindow]:
    window = open_case(qtbot, settings, "cxx_templates")
    yield window
    window.session.shutdown()


@pytest.fixture
def terminate(qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes) -> Iterator[MainWindow]:
    window = open_case(qtbot, settings, "cxx_terminate")
    yield window
    window.session.shutdown()


def report_lines(copied: str) -> dict[int, str]:
    """Frame number → the frame's line of a copied stack (`12  module!function …`)."""
    out = {}
    for line in copied.splitlines():
        match = re.match(r"^\s*(\d+)  (\S.*)$", line)
        if match:
            out[int(match.group(1))] = match.group(2)
    return out


def test_rows_are_the_copied_reports_frames_in_order_with_its_numbers(templates: MainWindow) -> None:
    pane = templates.frame_pane
    model = pane.model
    copied = report_lines(pane.copy_stack())
    pane.view.expandAll()
    seen = []
    for top in range(model.rowCount()):
        parent = model.index(top, 0)
        children = [model.index(r, 0, parent) for r in range(model.rowCount(parent))]
        for index in children or [parent]:
            number = int(index.data())
            function = index.siblingAtColumn(M.COL_FUNCTION).data()
            assert copied[number].startswith(f"scene_graph!{function}") or function in copied[number]
            seen.append(number)
        if children:  # the group row itself reads its range
            assert parent.data() == f"{children[0].data()}–{children[-1].data()}"
    assert seen == sorted(copied)  # every line of the report, once, in stack order
    # the first row is where the instruction is: the innermost inline function, as Threads says
    first = model.index(0, M.COL_FUNCTION).data()
    top_frame = templates.thread_pane.model.index(0, templates.thread_pane.model.COL_TOP).data()
    assert first.startswith("engine::World<") and top_frame.startswith("scene_graph!engine::World<")


def test_a_deep_recursion_is_one_collapsed_row(templates: MainWindow) -> None:
    model = templates.frame_pane.model
    (group,) = model.groups
    assert group.count == 299  # 300 equal frames: the first stays a row, the others collapse
    assert model.rowCount() == 13 + 1 + 5  # 13 rows above, the group, then run / main / libc / _start
    index = next(model.index(r, 0) for r in range(model.rowCount()) if model.group_of(model.index(r, 0)))
    text = index.siblingAtColumn(M.COL_FUNCTION).data()
    assert text.startswith("299 more calls of engine::SceneNode<") and text.endswith("(recursion)")
    view = templates.frame_pane.view
    proxy_index = templates.frame_pane.proxy.mapFromSource(index)
    assert not view.isExpanded(proxy_index)
    # selecting a frame inside it (e.g. from the stack plot) opens it and selects that row
    templates.session.select_frame(FrameRef(0, 100))
    assert view.isExpanded(proxy_index)
    current = templates.frame_pane.proxy.mapToSource(view.currentIndex())
    assert model.frame_ref_of(current) == (100, 0)


def test_long_names_are_shortened_to_fit_never_cut_in_the_middle(templates: MainWindow, qtbot: QtBot) -> None:
    templates.resize(1366, 768)
    templates.show()
    qtbot.waitExposed(templates)
    qtbot.wait(50)  # the default layout is applied once the window has its size
    view = templates.frame_pane.view
    delegate = view.itemDelegateForColumn(M.COL_FUNCTION)

    readable = 0
    for row in range(10):
        index = templates.frame_pane.proxy.index(row, M.COL_FUNCTION)
        option = QStyleOptionViewItem()
        option.initFrom(view)
        option.rect = view.visualRect(index)
        option.widget = view
        delegate.initStyleOption(option, index)
        full = index.data()
        assert option.text != full or len(full) < 40  # long names are shortened
        metrics = QFontMetrics(option.font)
        if metrics.horizontalAdvance(option.text) <= option.rect.width() - 8:
            readable += 1
        # the whole name is still in the tooltip and the copy
        assert full in index.data(Qt.ItemDataRole.ToolTipRole)
    assert readable >= 8


def test_guesses_and_the_first_frame_of_your_code_are_marked(terminate: MainWindow) -> None:
    model = terminate.frame_pane.model
    rows = {
        model.index(r, M.COL_FUNCTION).data(): model.index(r, M.COL_FUNCTION) for r in range(model.rowCount())
    }
    guess = rows["__cxa_throw_bad_array_new_length"]
    assert guess.data(Qt.ItemDataRole.FontRole).italic()
    assert "A guess: the module's symbols name no function" in guess.data(Qt.ItemDataRole.ToolTipRole)
    far = rows["_Unwind_GetTextRelBase"]  # 0x1ed3 past the PUBLIC below it
    assert far.data(Qt.ItemDataRole.FontRole).italic()
    # `_start` is a PUBLIC name a few bytes in, in our binary whose symbols have FUNCs: not a guess
    start = rows["_start"]
    assert start.data(Qt.ItemDataRole.FontRole) is None or not start.data(Qt.ItemDataRole.FontRole).italic()
    assert "A guess" not in start.data(Qt.ItemDataRole.ToolTipRole)
    own = next(index for name, index in rows.items() if name.startswith("parse_number("))
    assert own.data(Qt.ItemDataRole.FontRole).bold()
    assert "first frame in your code" in own.data(Qt.ItemDataRole.ToolTipRole)
    assert model.frames[model.first_own_frame].function_name.startswith("parse_number(")


def test_guesses_on_the_sample(window: MainWindow, qtbot: QtBot) -> None:
    """The sample's libc.so.6.sym has PUBLIC names only, but from libc's full symbol table: its names
    are a few hundred bytes below the addresses at most and are not marked; FUNC names never are."""
    wait_analysis_over(qtbot, window.session, lambda: window.open_dump(sample_dump()))
    window.session.select_thread(0)
    model = window.frame_pane.model
    marked = {}
    for r in range(model.rowCount()):
        index = model.index(r, M.COL_FUNCTION)
        font = index.data(Qt.ItemDataRole.FontRole)
        frame = model.frames[model.frame_ref_of(index)[0]]
        marked[frame.function_name] = (font is not None and font.italic(), frame.module.code_file)
    assert (
        "__pthread_clockjoin_ex" in marked
    )  # libc: a PUBLIC name 0x132 bytes below, in a module without FUNCs
    assert not marked["main"][0]  # a FUNC of render_farm
    assert not any(guess for guess, _module in marked.values()), marked


def test_the_normal_end_of_a_stack_is_not_an_error(terminate: MainWindow) -> None:
    title = terminate.frame_pane.title.text()
    assert "walk stopped" not in title and title.endswith("down to _start")


def test_the_stepper_position_always_has_room(window: MainWindow, qtbot: QtBot) -> None:
    wait_analysis_over(qtbot, window.session, lambda: window.open_dump(sample_dump()))
    window.resize(1366, 768)
    window.show()
    qtbot.waitExposed(window)
    window.next_decision_action.trigger()
    label = window.decision_label
    assert label.text().startswith("decision 1 of ")
    assert label.isVisible()
    assert label.width() >= QFontMetrics(label.font()).horizontalAdvance("decision 1 of 74: frame 2")


def test_the_window_fits_the_screen_it_opens_on(window: MainWindow) -> None:
    screen = window.screen() or QGuiApplication.primaryScreen()
    available = screen.availableGeometry()
    assert window.width() <= available.width() and window.height() <= available.height()


def test_registers_at_each_step_hold_their_values_then_or_are_pending(
    window: MainWindow, qtbot: QtBot
) -> None:
    """Every decision of the sample's walk: a register shown known has the value and the source the
    core's state gives at that step; one whose rule comes later is pending, with no value."""
    wait_analysis_over(qtbot, window.session, lambda: window.open_dump(sample_dump()))
    session = window.session
    model = window.register_pane.model
    decisions = session.decisions()
    pending_seen = 0
    for _ in decisions:
        window.next_decision_action.trigger()
        node = session.focused_node()
        assert node is not None
        state = node.registers if node.step else None
        if state is None:
            continue
        for row in range(model.rowCount()):
            name = model.index(row, RegisterTableModel.COL_NAME).data()
            value = model.index(row, RegisterTableModel.COL_VALUE).data()
            status = state.status(name)
            if status is RegisterStatus.KNOWN:
                assert int(value, 16) == state.known[name].value, name
                assert model.index(row, RegisterTableModel.COL_SOURCE).data() == state.known[name].how
            else:
                assert value == "…", name
                expected = "pending" if status is RegisterStatus.PENDING else "not yet"
                assert model.index(row, RegisterTableModel.COL_STATE).data() == expected
                pending_seen += status is RegisterStatus.PENDING
                # never highlighted as changed: it has no value yet
                assert model.index(row, RegisterTableModel.COL_VALUE).data(
                    Qt.ItemDataRole.ForegroundRole
                ) == (window.theme.muted)
    assert pending_seen > 0
    # at frame 1's $r13 rule rbx is pending (its own rule comes later), not the callee's value
    session.select_frame(FrameRef(2, 1))
    root = window.unwind_pane.model.root
    assert root is not None
    r13 = next(n for n in root.walk() if n.text.startswith("$r13:"))
    window.unwind_pane.view.setCurrentIndex(window.unwind_pane.model.index_of(r13))
    row = model.row_of("rbx")
    assert row is not None
    assert model.index(row, RegisterTableModel.COL_STATE).data() == "pending"
    assert model.index(row, RegisterTableModel.COL_VALUE).data() == "…"
    assert model.index(row, RegisterTableModel.COL_SOURCE).data() == ""


def test_the_stack_layout_numbers_frames_as_the_report(templates: MainWindow, qtbot: QtBot) -> None:
    """Its frame axis reads the copied report's numbers (inline frames take numbers of their own)."""
    plot = templates.plot_pane
    templates.session.select_thread(0)
    plot.redraw()
    copied = report_lines(templates.frame_pane.copy_stack())
    axis = plot.frame_axis
    frames = templates.frame_pane.model.frames
    rows = [0, 1, 2, 150, len(frames) - 1]
    labels = axis.tickStrings([float(r) for r in rows], 1.0, 1.0)
    assert labels[:2] == ["9", "11"]  # nine inline frames before physical frame 0, one before frame 1
    for row, label in zip(rows, labels, strict=True):
        function = frames[row].function_name or ""
        assert function[:30] in copied[int(label)], (row, label)
    assert axis.tickStrings([0.5], 1.0, 0.5) == [""]  # no frame between rows
    assert "(frame 9's stack pointer)" in plot.plot.getPlotItem().getAxis("bottom").labelText


def test_the_summary_calls_a_stack_overflow_one_on_evidence_only(
    qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes, templates: MainWindow
) -> None:
    # a 300-deep recursion that crashed on a null write: deep, but not an overflow
    assert "Stack overflow" not in templates.summary_pane.text()
    assert templates.summary_pane.overflow.isHidden()
    # a push below the end of a thread's stack
    window = open_case(qtbot, settings, "analysis_stack_push")
    try:
        summary = window.summary_pane
        assert not summary.overflow.isHidden()
        lines = summary.text().splitlines()
        assert lines[1] == (
            "Stack overflow: the crash address is 8 bytes below the stack pointer: the thread ran out "
            "of stack 37 frames deep"
        ), lines
        crashing = window.session.document.crashing_thread
        assert crashing is not None
        frames = window.thread_pane.model.index(crashing.index, window.thread_pane.model.COL_FRAMES)
        assert frames.data() == "37 ⚠ overflow"
        header = window.thread_pane.view.horizontalHeader()
        width = QFontMetrics(window.thread_pane.view.font()).horizontalAdvance("37 ⚠ overflow")
        assert header.sectionSize(window.thread_pane.model.COL_FRAMES) >= width  # not cut to "37 …low"
    finally:
        window.session.shutdown()


def test_growing_the_window_gives_the_room_to_frames_not_modules(templates: MainWindow, qtbot: QtBot) -> None:
    window = templates
    window.resize(1366, 768)
    window.show()
    qtbot.waitExposed(window)
    qtbot.wait(50)  # the default layout is applied once the window has its size
    docks = window.docks
    before = {key: docks[key].height() for key in ("frames", "modules", "threads")}
    widths = {key: docks[key].width() for key in ("frames", "unwind", "memory")}
    assert window.default_layout.active  # the default layout, as at first start
    window.resize(1900, 1050)
    # the shares are applied again once the layout has handed out the new room
    qtbot.waitUntil(lambda: docks["frames"].height() - before["frames"] >= 150, timeout=3000)
    grown = {key: docks[key].height() - before[key] for key in before}
    # Modules keeps its share (13 % of the height: a few rows); the frames get the height
    assert grown["modules"] <= 0.13 * (1050 - 768) + 8, grown
    assert grown["frames"] >= 150 and grown["frames"] > 4 * grown["modules"], grown
    wider = {key: docks[key].width() - widths[key] for key in widths}
    assert all(w >= 90 for w in wider.values()), wider  # Frames, Unwind and Stack Memory share the width
    # the bottom tabs stay on one row
    bars = [b for b in window.findChildren(QTabBar) if b.isVisible() and b.count() >= 2]
    tab_texts = [[b.tabText(i) for i in range(b.count())] for b in bars]
    bottom = next(b for b, texts in zip(bars, tab_texts, strict=True) if "Modules" in texts)
    assert bottom.height() <= 2 * bottom.fontMetrics().height() + 4


def test_a_layout_the_user_arranged_is_left_alone(templates: MainWindow, qtbot: QtBot) -> None:
    window = templates
    window.resize(1366, 768)
    window.show()
    qtbot.waitExposed(window)
    qtbot.wait(50)
    assert window.default_layout.active
    # dragging a separator: the press lands on the window itself, under a split cursor
    window.setCursor(Qt.CursorShape.SplitVCursor)
    between = QPoint(200, window.docks["modules"].geometry().top() - 2)
    QTest.mousePress(window, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, between)
    QTest.mouseRelease(window, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, between)
    window.unsetCursor()
    assert not window.default_layout.active
    window.resizeDocks([window.docks["modules"]], [260], Qt.Orientation.Vertical)  # what they chose
    qtbot.wait(20)
    chosen = window.docks["modules"].height()
    window.resize(1900, 1050)
    qtbot.wait(50)
    assert window.docks["modules"].height() >= chosen  # not shrunk back to the default share
    # View › Reset Layout brings the default back, and it follows the window again
    window.reset_layout_action.trigger()
    qtbot.wait(50)
    assert window.default_layout.active and window.docks["modules"].height() < chosen


def test_threads_keep_their_rows_when_the_summary_grows(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    """A damaged dump's warning makes the Summary taller: Threads still shows its threads."""
    wait_analysis_over(qtbot, window.session, lambda: window.open_dump(sample_dump()))
    window.resize(1366, 768)
    window.show()
    qtbot.waitExposed(window)
    qtbot.wait(50)
    summary_before = window.docks["summary"].height()
    cut = tmp_path / "cut.dmp"
    cut.write_bytes(sample_dump().read_bytes()[:8000])  # the stacks are cut: a warning of two lines
    wait_analysis_over(qtbot, window.session, lambda: window.open_dump(cut))
    qtbot.wait(50)
    assert window.docks["summary"].height() > summary_before + 20
    threads = window.session.document.thread_count  # type: ignore[union-attr]
    assert window.docks["threads"].height() >= window.thread_pane.height_for_rows(threads) - 4
