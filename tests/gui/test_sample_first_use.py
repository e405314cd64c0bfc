"""Started with no dump, the window shows the bundled sample with its own executable as a symbol path:
the dump holds no code bytes, so the crashing instruction and its memory access come from that file."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from inspector.app import AppWindows
from inspector.resources import sample_binaries, sample_dump
from tests.gui.support import wait_analysis_over


def test_the_sample_explains_its_crashing_instruction(qtbot: QtBot, windows: AppWindows) -> None:
    window = windows.create(None, [])
    qtbot.addWidget(window)
    wait_analysis_over(qtbot, window.session, lambda: window.open_dump(sample_dump()))
    doc = window.session.document
    assert doc is not None
    analysis = doc.state.analysis
    assert analysis is not None and analysis.instruction is not None
    assert analysis.instruction.instruction.text == "mov dword [r10 + rdx * 4], eax"
    assert analysis.code_source is not None and analysis.code_source.path == str(
        sample_binaries() / "render_farm"
    )
    summary = window.summary_pane.text()
    assert "write of 4 bytes to 0x0" in summary, summary
    assert "crashing instruction not available" not in summary


def test_a_dump_asked_for_does_not_get_the_sample_binaries(qtbot: QtBot, windows: AppWindows) -> None:
    window = windows.create(sample_dump(), [])
    qtbot.addWidget(window)
    wait_analysis_over(qtbot, window.session, lambda: window.open_dump(sample_dump()))
    doc = window.session.document
    assert doc is not None and doc.state.analysis is not None
    assert doc.state.analysis.instruction is None
