"""A damaged dump gets an honest Summary: damage first, no "written on request" guess, no empty plot axes.

The dumps are the sample cut short in the test: at 3,000 bytes the exception stream lies beyond the
end of the file; at 8,000 bytes every stream is read but the threads' stacks are cut off (the sample
is 13.5 KB: this is the "cut at 30 KB" of a larger dump, where the streams survive and the stacks
do not).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from inspector.core.process import ProcessOptions, process
from inspector.core.process.damage import dump_damage
from inspector.gui.main_window import MainWindow
from inspector.resources import sample_dump, sample_symbols
from tests.gui.support import load


def _cut(tmp_path: Path, size: int) -> Path:
    path = tmp_path / f"cut-{size}.dmp"
    path.write_bytes(sample_dump().read_bytes()[:size])
    return path


@pytest.fixture
def cut_3000(tmp_path: Path) -> Path:
    return _cut(tmp_path, 3000)


@pytest.fixture
def cut_stacks(tmp_path: Path) -> Path:
    return _cut(tmp_path, 8000)


def test_core_damage_of_a_dump_cut_before_its_exception(cut_3000: Path) -> None:
    state = process(cut_3000, ProcessOptions(symbol_paths=(sample_symbols(),), use_symbols_cache=False))
    damage = dump_damage(state)
    assert state.crash is None
    assert damage.exception_unreadable
    assert damage.headline() == "Crash reason unknown: the exception stream is damaged"
    assert damage.stacks_cut == (0, 1, 2)
    assert "module list" in damage.damaged_streams
    assert damage.text().startswith(
        "The dump is cut short: parts of it lie beyond the end of the file (3,000 bytes)."
    )


def test_core_damage_of_the_intact_sample_is_none() -> None:
    state = process(sample_dump(), ProcessOptions(symbol_paths=(sample_symbols(),), use_symbols_cache=False))
    damage = dump_damage(state)
    assert not damage.damaged
    assert damage.text() == ""
    assert damage.headline() is None
    assert not any(start.stack_cut for start in state.thread_starts)


def test_summary_of_a_dump_cut_at_3000_bytes_says_the_exception_is_damaged(
    qtbot: QtBot, window: MainWindow, cut_3000: Path
) -> None:
    load(qtbot, window.session, cut_3000)
    summary = window.summary_pane.text()
    assert "written on request" not in summary
    assert "Crashing thread: none" not in summary
    lines = summary.splitlines()
    # damage leads: the warning is the first thing the Summary says
    assert lines[0].startswith("⚠ The dump is cut short"), summary
    assert "Its exception stream cannot be read" in lines[0]
    assert lines[1] == "Crash reason unknown: the exception stream is damaged"
    assert "Crashing thread: unknown (the dump is damaged where the exception would say)" in summary
    window.show()
    window.docks["problems"].hide()
    window.summary_pane.damage.linkActivated.emit("problems")
    qtbot.waitUntil(window.problem_pane.isVisible)


def test_summary_of_a_dump_whose_stacks_are_cut_leads_with_the_damage(
    qtbot: QtBot, window: MainWindow, cut_stacks: Path
) -> None:
    load(qtbot, window.session, cut_stacks)
    summary = window.summary_pane.text()
    lines = summary.splitlines()
    assert lines[0].startswith("⚠ The dump is cut short"), summary
    assert "3 threads (0, 1, 2) lost all or part of their stack" in lines[0]
    assert lines[1] == "SIGSEGV / SEGV_MAPERR at 0x0000000000000000"  # the crash itself was read
    # the crashing thread has only its context frame and no stack: the plot says why, with no axes
    window.session.select_thread(2)
    plot = window.plot_pane
    assert plot.plot.isHidden()
    assert plot.title.text() == (
        "No frames to place on the stack: this thread's stack is cut off in the dump (see Problems)"
    )


def test_the_plot_comes_back_for_a_thread_with_frames(
    qtbot: QtBot, window: MainWindow, cut_stacks: Path
) -> None:
    load(qtbot, window.session, cut_stacks)
    window.session.select_thread(2)
    assert window.plot_pane.plot.isHidden()
    window.session.select_thread(0)  # part of its stack is in the file: frames found
    assert not window.plot_pane.plot.isHidden()
    assert window.plot_pane.extents


def test_an_intact_dump_shows_no_damage_warning(qtbot: QtBot, window: MainWindow) -> None:
    load(qtbot, window.session, sample_dump())
    assert window.summary_pane.damage.isHidden()
    assert window.summary_pane.text().splitlines()[0] == "SIGSEGV / SEGV_MAPERR at 0x0000000000000000"
