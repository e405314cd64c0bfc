"""A microdump in the window: its thread, frames, registers, CFI rows, stack memory and problems.

The synthetic arm crash of `tests/synth/microdump.py` (crash ← caller by STACK CFI ← libc.so),
opened from a `.txt` log as File › Open, a drop or the command line would (all go through
`MainWindow.open_dump`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from inspector.gui.main_window import MainWindow
from inspector.gui.models.register_model import RegisterTableModel
from inspector.gui.session import FrameRef
from inspector.gui.settings import Settings
from tests.gui.conftest import MessageBoxes, make_window
from tests.gui.support import load
from tests.synth.microdump import APP_BASE, STACK_START, arm_crash, brief_prefix, write_arm_crash_symbols

pytestmark = pytest.mark.gui


@pytest.fixture
def microdump_window(
    qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes, tmp_path: Path
) -> MainWindow:
    symbols = write_arm_crash_symbols(tmp_path / "symbols")
    window = make_window(qtbot, settings, session_symbol_paths=(symbols,))
    log = tmp_path / "logcat.txt"
    second = arm_crash(crash=(6, "SIGABRT", 0)).to_bytes(brief_prefix(4000))
    log.write_bytes(b"I/ActivityManager(  801): Start proc\n" + arm_crash().to_bytes() + second)
    load(qtbot, window.session, log)
    assert message_boxes.shown == []
    return window


def test_the_panes_show_the_microdump(microdump_window: MainWindow) -> None:
    window = microdump_window
    document = window.session.document
    assert document is not None and document.path.name == "logcat.txt"
    threads = window.thread_pane.model
    assert threads.rowCount() == 1 and threads.index(0, threads.COL_FRAMES).data() == "3"
    assert threads.index(0, threads.COL_TOP).data() == "app!crash"
    frames = window.frame_pane.model
    functions = [frames.index(r, frames.COL_FUNCTION).data() for r in range(frames.rowCount())]
    offsets = [frames.index(r, frames.COL_OFFSET).data() for r in range(frames.rowCount())]
    assert functions == ["crash", "caller", "libc.so + 0x1232"]
    assert offsets == ["+ 0x10", "+ 0xe", ""]
    assert [frames.index(r, frames.COL_TRUST).data() for r in range(3)] == ["context", "CFI", "CFI"]

    window.session.select_frame(FrameRef(0, 1))
    registers = window.register_pane.model
    row = registers.row_of("pc")
    assert row is not None
    assert registers.index(row, RegisterTableModel.COL_VALUE).data() == f"0x{APP_BASE + 0x2010:08x}"
    assert registers.index(row, RegisterTableModel.COL_SOURCE).data() == "CFI .ra: .cfa -4 + ^ (.ra)"
    root = window.unwind_pane.model.root
    assert root is not None
    assert "STACK CFI INIT 1000 .cfa: sp 8 + .ra: .cfa -4 + ^ r4: .cfa -8 + ^" in [
        n.text for n in root.walk()
    ]
    memory = window.memory_pane.model
    band = next(b for b in memory.frame_bands if b.frame_index == 1)
    assert (band.start, band.end) == (STACK_START + 0x108, STACK_START + 0x118)
    notes = {n.address: n for n in memory.notes("trace")}
    assert notes[STACK_START + 0x104].text == "return address of frame 0 → app!caller"


def test_a_microdump_without_its_crash_line_says_so(
    qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes, tmp_path: Path
) -> None:
    window = make_window(qtbot, settings, session_symbol_paths=())
    log = tmp_path / "logcat.txt"
    log.write_bytes(arm_crash(crash=None).to_bytes())
    load(qtbot, window.session, log)
    assert window.summary_pane.headline.text() == "Crash (no reason recorded) at 0x00000000"


def test_the_problems_pane_names_the_other_microdump(microdump_window: MainWindow) -> None:
    problems = microdump_window.problem_pane.model.problems
    assert [(p.where, p.code) for p in problems] == [("microdump", "MoreMicrodumps")]
    assert "the log holds 2 microdumps; this is microdump 0 (lines 2–15)" in problems[0].message
