"""A build folder of binaries dropped on the window: it becomes a symbol path, the dump is walked
again with the names and CFI its binaries give, and the Unwind pane says where each rule came from."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from inspector.core.explain import TraceNode
from inspector.core.unwind import FrameTrust
from inspector.gui.main_window import MainWindow
from inspector.gui.session import FrameRef
from inspector.gui.settings import Settings
from tests.gui.conftest import MessageBoxes, make_window
from tests.gui.support import load
from tests.gui.test_main_window import drop_and_wait

pytest.importorskip("symbolic", reason="reading objects needs the symbolic package")

CASE = Path(__file__).resolve().parents[1] / "fixtures" / "crashes" / "libc_abort"
BUILD = CASE / "binaries"


def _named_frames(window: MainWindow) -> int:
    doc = window.session.document
    assert doc is not None
    return sum(1 for t in doc.threads() for f in doc.frames(t.index) if f.function_name)


def _ledger_symbols(window: MainWindow) -> str | None:
    doc = window.session.document
    assert doc is not None
    index = next(i for i, e in enumerate(doc.state.modules) if e.module.code_file.endswith("/ledger"))
    return doc.symbols[index].source


@pytest.fixture
def bare(qtbot: QtBot, settings: Settings) -> MainWindow:
    settings.local_modules = False  # only what the user gives, not this machine's libc
    window = make_window(qtbot, settings, session_symbol_paths=())
    window.session.local_modules = False
    load(qtbot, window.session, CASE / "libc_abort.dmp")
    return window


def test_a_dropped_build_folder_becomes_a_symbol_path_and_the_walk_gains_names(
    qtbot: QtBot, bare: MainWindow, settings: Settings, message_boxes: MessageBoxes
) -> None:
    before = _named_frames(bare)
    assert _ledger_symbols(bare) is None
    drop_and_wait(qtbot, bare, [BUILD])
    assert bare.session.symbol_paths == (BUILD,)
    assert settings.symbol_paths == [BUILD]
    assert _ledger_symbols(bare) == "DWARF in the binary (symbol path)"
    assert _named_frames(bare) > before
    doc = bare.session.document
    assert doc is not None
    crashing = doc.crashing_thread
    assert crashing is not None
    names = [f.function_name for f in doc.frames(crashing.index)]
    assert "main" in names, names


def _find(node: TraceNode, text: str) -> TraceNode | None:
    return next((n for n in node.walk() if n.text == text), None)


def test_the_unwind_pane_says_where_each_cfi_rule_came_from(qtbot: QtBot, bare: MainWindow) -> None:
    drop_and_wait(qtbot, bare, [BUILD])
    doc = bare.session.document
    assert doc is not None
    labelled = 0
    for thread in doc.threads():
        frames = doc.frames(thread.index)
        for i, frame in enumerate(frames):
            # a frame found by CFI was found with the rules of its callee's module
            if i == 0 or frame.trust is not FrameTrust.CFI:
                continue
            bare.session.select_frame(FrameRef(thread.index, i))
            assert bare.unwind_pane.shown_frame == (thread.index, i)
            origin = _find(bare.unwind_pane.model.root, "rules from")
            assert origin is not None, f"thread {thread.index} frame {i}"
            callee = frames[i - 1].module
            assert callee is not None and callee.filename == "ledger"  # the only module with symbols
            assert origin.result == f".eh_frame of {BUILD / 'ledger'} (symbol path)"
            labelled += 1
    assert labelled > 0
