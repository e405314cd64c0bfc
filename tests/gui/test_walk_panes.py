"""The panes that show the walk: Frames, Unwind, Registers with provenance, Stack Memory marks, the plot,
and the decision stepper — on the sample's crashing thread (#2 renderer: render_tile with two inlined
calls, then render_worker_main, start_thread, __clone3, every caller found by STACK CFI)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtCore import QAbstractItemModel, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from inspector.core.explain import NodeKind, Tone, build_frame_trace, frame_extents, stack_marks
from inspector.core.process import ProcessOptions, process
from inspector.core.report.human import render_human
from inspector.gui.main_window import MainWindow
from inspector.gui.models.frame_model import FrameTreeModel
from inspector.gui.models.memory_model import NoteKind
from inspector.gui.models.register_model import RegisterTableModel
from inspector.gui.models.trace_model import TraceTreeModel
from inspector.gui.session import FrameRef, TraceFocus
from inspector.gui.settings import Settings
from inspector.gui.theme import Theme
from inspector.resources import sample_dump, sample_symbols
from tests.gui.conftest import MessageBoxes, make_window
from tests.gui.support import wait_analysis_over

CheckModel = Callable[[QAbstractItemModel], None]
RETURN_ADDRESS_SLOT = 0x7FFFF75CFEA8  # where frame 0's .ra rule read render_worker_main's return address
INIT_ROW = "STACK CFI INIT 16d0 .cfa: $rsp 8 + .ra: .cfa -8 + ^"


@pytest.fixture
def walked(qtbot: QtBot, window: MainWindow) -> MainWindow:
    wait_analysis_over(qtbot, window.session, lambda: window.open_dump(sample_dump()))
    return window


def rows(model: QAbstractItemModel, column: int = 0, parent: Any = None) -> list[str]:
    from PySide6.QtCore import QModelIndex

    parent = parent or QModelIndex()
    return [str(model.index(r, column, parent).data()) for r in range(model.rowCount(parent))]


def register(model: RegisterTableModel, name: str, column: int) -> object:
    row = model.row_of(name)
    assert row is not None
    return model.index(row, column).data()


# ---- models ----


def test_frame_model_streams_frames_with_inline_children(check_model: CheckModel, qapp: QApplication) -> None:
    state = process(
        str(sample_dump()), ProcessOptions(symbol_paths=(str(sample_symbols()),), use_symbols_cache=False)
    )
    frames = state.threads[2].frames
    theme = Theme.for_scheme(False, qapp.font())
    model = FrameTreeModel(theme)
    check_model(model)
    model.set_frames(2, frames[:1])
    model.append_frames(frames[1:3])  # as the walk reports them
    model.append_frames(frames[3:])
    M = FrameTreeModel
    # one row per line of the report, in stack order: the crash is in store_pixel, inlined into
    # blend_row, inlined into render_tile (the physical frame); the numbers are the report's
    assert rows(model, M.COL_NUMBER) == ["0", "1", "2", "3", "4", "5"]
    assert rows(model, M.COL_FUNCTION) == [
        "store_pixel",
        "blend_row",
        "render_tile",
        "render_worker_main",
        "start_thread",
        "__clone3",
    ]
    assert rows(model, M.COL_OFFSET) == ["", "", "+ 0x88", "+ 0x51", "+ 0x304", "+ 0x2b"]
    assert rows(model, M.COL_SOURCE)[:3] == ["render_farm.c:70", "render_farm.c:77", "render_farm.c:83"]
    assert rows(model, M.COL_TRUST) == ["inlined", "inlined", "context", "CFI", "CFI", "CFI"]
    innermost = model.index(0, M.COL_FUNCTION)
    assert "innermost" in str(innermost.data(Qt.ItemDataRole.ToolTipRole))
    assert model.frame_ref_of(innermost) == (0, 1)  # inline depth 1 = the innermost
    assert model.frame_ref_of(model.index(2, 0)) == (0, 0)  # the physical frame after its inline frames
    assert model.frame_index(0, 2).row() == 1 and model.frame_index(1).row() == 3
    assert "call frame info" in str(model.index(3, M.COL_TRUST).data(Qt.ItemDataRole.ToolTipRole))
    assert model.index(0, M.COL_NUMBER).data(Qt.ItemDataRole.DecorationRole) is not None


def test_trace_model_of_render_worker_main(check_model: CheckModel, qapp: QApplication) -> None:
    state = process(
        str(sample_dump()), ProcessOptions(symbol_paths=(str(sample_symbols()),), use_symbols_cache=False)
    )
    stack = state.threads[2]
    theme = Theme.for_scheme(True, qapp.font())
    model = TraceTreeModel(theme)
    check_model(model)
    model.set_tree(build_frame_trace(stack.frames, 1))
    top = rows(model)
    assert top[0] == "1. STACK CFI"
    # frame 1 is #3 in the report (render_tile's two inline frames take #0 and #1)
    assert top[-1] == "→ frame 3: render_farm!render_worker_main [render_farm.c : 97 + 0x4]"
    cfi = model.index(0, 0)
    children = rows(model, 0, cfi)
    assert children[0] == "STACK CFI block of render_farm"
    assert ".ra: .cfa -8 + ^" in children and "$rbx: .cfa -40 + ^" in children
    # where the rules came from: the .sym file
    origin = model.index(children.index("rules from"), 1, cfi).data()
    assert origin.startswith(".sym file ") and origin.endswith("render_farm.sym"), origin
    block = model.index(0, 0, cfi)
    assert rows(model, 0, block)[0] == INIT_ROW
    in_force = model.index(4, 0, block)
    assert in_force.data() == "STACK CFI 16f0 .cfa: $rsp 40 + $rbx: .cfa -40 + ^"
    assert model.index(4, 1, block).data() == "in force"
    assert in_force.data(Qt.ItemDataRole.BackgroundRole) == theme.in_force
    ra = model.index(children.index(".ra: .cfa -8 + ^"), 0, cfi)
    assert rows(model, 0, ra) == [".cfa", "-8", "+", "^"]  # the evaluation, token by token
    assert model.index(3, 1, ra).data() == "[0x5555555557d2]   read [0x7ffff75cfea8] = 0x5555555557d2"
    # the last frame's trace says why the walk stopped, with every strategy that failed
    last = build_frame_trace(stack.frames, 3, termination=stack.termination)
    stop = last.children[-1]
    # __clone3 is where the thread started: the normal end of a stack, not a failure
    assert stop.kind is NodeKind.TERMINATION and stop.tone is Tone.PLAIN
    assert stop.text == "Walk ended: the bottom of the stack"
    assert [c.text for c in stop.children] == ["1. STACK CFI", "2. frame pointer", "3. stack scan"]
    assert all(c.tone is not Tone.BAD for c in stop.children)


# ---- the window ----


def test_threads_pane_fills_in_frame_counts_and_top_functions(walked: MainWindow) -> None:
    model = walked.thread_pane.model
    counts = [model.index(r, model.COL_FRAMES).data() for r in range(3)]
    tops = [model.index(r, model.COL_TOP).data() for r in range(3)]
    assert counts == ["6", "5", "4"]
    assert tops[2] == "render_farm!store_pixel"  # the innermost (inlined) function
    assert tops[0] == "libc.so.6!__futex_abstimed_wait_common"


def test_selecting_frame_1_updates_registers_unwind_memory_and_plot(walked: MainWindow) -> None:
    session = walked.session
    frames = walked.frame_pane
    frames.view.setCurrentIndex(frames.proxy.mapFromSource(frames.model.frame_index(1)))
    assert session.selected_frame == FrameRef(2, 1)
    # registers: the caller's, with where each came from and what changed from the callee
    model = walked.register_pane.model
    M = RegisterTableModel
    assert register(model, "rip", M.COL_VALUE) == "0x00005555555557d2"
    assert register(model, "rip", M.COL_SOURCE) == "CFI .ra: .cfa -8 + ^ (.ra)"
    assert register(model, "rsp", M.COL_SOURCE) == "CFI .cfa: $rsp 40 + (the CFA)"
    assert register(model, "rbx", M.COL_SOURCE) == "CFI $rbx: .cfa -40 + ^"
    assert register(model, "r14", M.COL_SOURCE) == "forwarded from the callee (callee-saved, no rule)"
    assert register(model, "rax", M.COL_STATE) == "unknown"
    theme = walked.theme
    assert register(model, "rip", Qt.ItemDataRole.ForegroundRole) is None
    rip_value = model.index(model.row_of("rip") or 0, M.COL_VALUE)
    assert rip_value.data(Qt.ItemDataRole.ForegroundRole) == theme.changed  # differs from frame 0's
    r14_value = model.index(model.row_of("r14") or 0, M.COL_VALUE)
    assert r14_value.data(Qt.ItemDataRole.ForegroundRole) != theme.changed
    # unwind: how frame 1 was found, with the INIT row of render_worker_main's block
    unwind = walked.unwind_pane
    assert unwind.shown_frame == (2, 1)
    root = unwind.model.root
    assert root is not None
    texts = [node.text for node in root.walk()]
    assert INIT_ROW in texts
    # memory: frame 1's part of the stack is the selected band, its start noted
    memory = walked.memory_pane
    assert memory.model.selected_band == 1
    band = next(b for b in memory.model.frame_bands if b.frame_index == 1)
    assert (band.start, band.end) == (0x7FFFF75CFEB0, 0x7FFFF75CFEE0)
    notes = {n.address: n for n in memory.model.notes("trace")}
    assert notes[RETURN_ADDRESS_SLOT].kind is NoteKind.RETURN_ADDRESS
    # render_tile is #2 in the report (its inline frames are #0 and #1)
    assert notes[RETURN_ADDRESS_SLOT].text == "return address of frame 2 → render_farm!render_worker_main"
    assert memory.view.currentIndex().data(0x0100 + 2) == 0x7FFFF75CFEB0  # AddressRole: frame 1's rsp
    # the plot: the selected bar is frame 1's
    plot = walked.plot_pane
    assert plot.selected_frame == 1
    assert [f for f, _, _ in plot.extents] == [0, 1, 2, 3]
    assert plot.bar_brush(1) == theme.code_pointer and plot.bar_brush(0) != theme.code_pointer


def test_a_rule_and_the_word_it_read_select_each_other(walked: MainWindow) -> None:
    session = walked.session
    session.select_frame(FrameRef(2, 1))
    unwind = walked.unwind_pane
    root = unwind.model.root
    assert root is not None
    ra_rule = next(n for n in root.walk() if n.text == ".ra: .cfa -8 + ^")
    unwind.view.setCurrentIndex(unwind.model.index_of(ra_rule))  # the user clicks the rule
    assert session.trace_focus == TraceFocus(2, 1, ra_rule.path)
    memory = walked.memory_pane
    assert memory.focused_words() == [RETURN_ADDRESS_SLOT]
    slot = memory.model.index_for_address(RETURN_ADDRESS_SLOT)
    assert slot.data(Qt.ItemDataRole.BackgroundRole) == walked.theme.focus_row
    assert memory.view.currentIndex() == slot
    # the registers show what was known once that rule was evaluated: the forwarded ones, rsp and rip
    registers = walked.register_pane.model
    assert registers.stepping
    assert register(registers, "rip", RegisterTableModel.COL_STATE) == "known"
    assert register(registers, "rip", RegisterTableModel.COL_SOURCE) == "CFI .ra: .cfa -8 + ^ (.ra)"
    assert register(registers, "rax", RegisterTableModel.COL_STATE) == "not yet"
    # rbx's own rule comes later: it is pending, with no value (not the callee's 0)
    assert register(registers, "rbx", RegisterTableModel.COL_STATE) == "pending"
    assert register(registers, "rbx", RegisterTableModel.COL_VALUE) == "…"
    assert register(registers, "r14", RegisterTableModel.COL_SOURCE) == (
        "forwarded from the callee (callee-saved, no rule)"
    )
    # and back: clicking a saved-register word selects the rule that read it
    saved_rbx = 0x7FFFF75CFE88
    memory.view.clicked.emit(memory.model.index_for_address(saved_rbx))
    node = unwind.current_node()
    assert node is not None and node.text == "$rbx: .cfa -40 + ^"
    assert memory.focused_words() == [saved_rbx]


def test_switching_theme_keeps_the_unwind_trees_expansion_and_current_line(walked: MainWindow) -> None:
    walked.session.select_frame(FrameRef(2, 1))
    unwind = walked.unwind_pane
    root = unwind.model.root
    assert root is not None
    folded = next(n for n in root.walk() if n.children and not n.expanded and n is not root)
    ancestors = set()
    node = folded.parent
    while node is not None:
        ancestors.add(id(node))
        node = node.parent
    unfolded = next(
        n for n in root.walk() if n.children and n.expanded and n is not root and id(n) not in ancestors
    )
    unwind.view.expand(unwind.model.index_of(folded))  # the user opens one line, closes another
    unwind.view.collapse(unwind.model.index_of(unfolded))
    current = unwind.model.index_of(folded.children[0])
    unwind.view.setCurrentIndex(current)
    unwind.set_theme(Theme.for_scheme(not walked.theme.dark))
    assert unwind.view.isExpanded(unwind.model.index_of(folded))
    assert not unwind.view.isExpanded(unwind.model.index_of(unfolded))
    assert unwind.current_node() is folded.children[0]


def test_go_to_a_register_uses_the_selected_frames_registers(walked: MainWindow) -> None:
    walked.session.select_frame(FrameRef(2, 1))
    memory = walked.memory_pane
    frame_1_rsp = 0x7FFFF75CFEB0
    doc = walked.session.document
    assert doc is not None and doc.frames(2)[0].context.stack_pointer != frame_1_rsp
    memory.go_to.setText("rsp+0x10")
    memory.go_to.returnPressed.emit()
    assert memory.view.currentIndex().data(0x0100 + 2) == frame_1_rsp + 0x10  # AddressRole
    assert memory.registers()["rsp"] == frame_1_rsp


def test_double_clicking_a_return_address_word_selects_its_module(walked: MainWindow) -> None:
    walked.session.select_frame(FrameRef(2, 1))
    memory = walked.memory_pane
    messages: list[str] = []
    memory.message.connect(messages.append)
    memory.view.doubleClicked.emit(memory.model.index_for_address(RETURN_ADDRESS_SLOT))
    assert walked.session.selected_module == 0  # render_farm, where render_worker_main is
    assert messages == ["0x00005555555557d2 is in render_farm + 0x17d2"]


def test_stepping_visits_every_decision_from_frame_0_to_the_last_and_back(walked: MainWindow) -> None:
    session = walked.session
    total = len(session.decisions())
    frames_seen: list[int] = []
    labels: list[str] = []
    for _ in range(total):
        walked.next_decision_action.trigger()
        position = session.decision_position()
        assert position is not None and position.total == total
        frames_seen.append(position.decision.frame)
        labels.append(walked.decision_label.text())
        ref = session.selected_frame
        assert ref is not None and ref.frame == position.decision.frame  # the Frames pane follows
        assert walked.unwind_pane.shown_frame == (2, position.decision.frame)
    assert frames_seen == sorted(frames_seen)
    assert sorted(set(frames_seen)) == [0, 1, 2, 3]
    # frames are named by the report's numbers: render_tile is #2 (after its two inline frames)
    assert labels[0].startswith(f"decision 1 of {total}: frame 2: Frame 2: render_farm!render_tile")
    assert labels[-1].startswith(f"decision {total} of {total}: frame 5")
    assert any(".ra: .cfa -8 + ^" in text for text in labels)
    assert any("Walk ended: the bottom of the stack" in text for text in labels)
    walked.next_decision_action.trigger()  # at the end it stays
    position = session.decision_position()
    assert position is not None and position.index == total - 1
    for expected in range(total - 2, -1, -1):
        walked.previous_decision_action.trigger()
        position = session.decision_position()
        assert position is not None and position.index == expected
    assert session.selected_frame == FrameRef(2, 0)


def test_next_and_previous_frame_keys(qtbot: QtBot, walked: MainWindow) -> None:
    session = walked.session
    assert session.selected_frame == FrameRef(2, 0)
    walked.next_frame_action.trigger()
    walked.next_frame_action.trigger()
    assert session.selected_frame == FrameRef(2, 2)
    walked.previous_frame_action.trigger()
    assert session.selected_frame == FrameRef(2, 1)
    assert walked.next_decision_action.shortcut().toString() == "F10"
    assert walked.previous_decision_action.shortcut().toString() == "Shift+F10"
    assert walked.next_frame_action.shortcut().toString() == "F11"


def test_copying_the_stack_gives_the_human_report(walked: MainWindow) -> None:
    state = process(
        str(sample_dump()), ProcessOptions(symbol_paths=(str(sample_symbols()),), use_symbols_cache=False)
    )
    report = render_human(state, brief=True).splitlines()
    start = report.index("Thread 2 renderer (crashed) - tid: 11907")
    expected = report[start : report.index("", start)]
    text = walked.frame_pane.copy_stack()
    assert text.splitlines() == expected
    assert QGuiApplication.clipboard().text() == text
    # one frame: its lines only, numbered as in the report
    frames = walked.frame_pane
    frames.view.setCurrentIndex(frames.proxy.mapFromSource(frames.model.frame_index(1)))
    one = frames.copy_selected().splitlines()
    assert one[0] == " 3  render_farm!render_worker_main [render_farm.c : 97 + 0x4]"
    assert one[-1] == "    Found by: call frame info"


def test_the_frame_filter_matches_inline_frames_too(walked: MainWindow) -> None:
    frames = walked.frame_pane
    frames.filter.setText("store_pixel")
    proxy = frames.proxy
    assert proxy.rowCount() == 1  # the inline frame's own row
    assert proxy.index(0, FrameTreeModel.COL_FUNCTION).data() == "store_pixel"
    frames.filter.setText("libc")
    assert proxy.rowCount() == 2
    frames.filter.setText("")
    assert proxy.rowCount() == 6


def test_scanned_frames_show_their_candidates(
    qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes
) -> None:
    window = make_window(qtbot, settings, session_symbol_paths=())
    wait_analysis_over(qtbot, window.session, lambda: window.open_dump(sample_dump()))
    window.session.select_frame(FrameRef(2, 1))
    registers = window.register_pane.model
    source = str(register(registers, "rip", RegisterTableModel.COL_SOURCE))
    assert source.startswith("stack scan: return address found at [0x")
    root = window.unwind_pane.model.root
    assert root is not None
    candidates = [n for n in root.walk() if n.kind is NodeKind.CANDIDATE]
    accepted = [n for n in candidates if "ACCEPTED" in n.result]
    assert len(accepted) == 1 and accepted[0].step
    kinds = {n.kind for n in window.memory_pane.model.notes("trace")}
    assert NoteKind.SCAN_ACCEPTED in kinds
    assert len(window.plot_pane.accepted.data) >= 1
    # stepping onto the accepted candidate highlights its word
    window.session.focus_trace(TraceFocus(2, 1, accepted[0].path))
    assert window.memory_pane.focused_words() == list(accepted[0].reads)


def test_clicking_a_bar_in_the_plot_selects_its_frame(walked: MainWindow) -> None:
    plot = walked.plot_pane
    center = plot.bar_center(2)
    assert center is not None
    assert plot.select_at(center) == 2
    assert walked.session.selected_frame == FrameRef(2, 2)
    assert plot.selected_frame == 2
    assert walked.unwind_pane.shown_frame == (2, 2)


def test_the_memory_pane_and_the_stack_plot_share_one_reading_of_the_walk(walked: MainWindow) -> None:
    """Both redraw on every frames_added: marks and frame extents are worked out once per walk state."""
    doc = walked.session.document
    assert doc is not None
    frames, termination = doc.frames(2), doc.termination(2)
    marks = doc.stack_marks(2)
    assert marks and marks == stack_marks(frames, termination)
    assert doc.stack_marks(2) is marks  # cached
    extents = doc.frame_extents(2, 0x7FFFF75D0000)
    assert extents == frame_extents(frames, 0x7FFFF75D0000)
    other = doc.frame_extents(2, None)  # the other pane's stack end does not evict the first
    assert doc.frame_extents(2, 0x7FFFF75D0000) is extents and doc.frame_extents(2, None) is other
