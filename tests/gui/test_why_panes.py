"""The Disassembly and Source panes and the analysis sentence of the Summary (issue 15).

The disassembly runs on an own crash whose executable is kept beside the dump
(tests/fixtures/crashes/analysis_null_write: Crashpad wrote no code, the module file gives it);
the source on the bundled sample, whose sources are in tools/crash-programs/.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from inspector.gui.main_window import MainWindow
from inspector.gui.models.listing_model import ListingModel
from inspector.gui.models.register_model import RegisterTableModel
from inspector.gui.session import FrameRef
from inspector.gui.settings import Settings
from inspector.resources import sample_binaries, sample_dump, sample_symbols
from tests.gui.conftest import MessageBoxes, make_window
from tests.gui.support import wait_analysis_over

REPO = Path(__file__).resolve().parents[2]
CASE = REPO / "tests" / "fixtures" / "crashes" / "analysis_null_write"
SYSTEM_SYMBOLS = REPO / "tests" / "fixtures" / "crashes" / "system-symbols"
SAMPLE_SOURCE = "tools/crash-programs/sample/render_farm.c"


def _case_window(qtbot: QtBot, settings: Settings, *paths: Path) -> MainWindow:
    if not (CASE / "analysis_null_write.dmp").is_file():
        pytest.skip("tests/fixtures/crashes/analysis_null_write is missing (made by tools/make-crashes)")
    window = make_window(qtbot, settings, session_symbol_paths=paths)
    wait_analysis_over(qtbot, window.session, lambda: window.open_dump(CASE / "analysis_null_write.dmp"))
    return window


@pytest.fixture
def with_binary(qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes) -> Iterator[MainWindow]:
    window = _case_window(qtbot, settings, CASE / "symbols", SYSTEM_SYMBOLS, CASE)
    yield window
    window.session.shutdown()


def _listing(qtbot: QtBot, window: MainWindow) -> ListingModel:
    pane = window.why.disassembly
    qtbot.waitUntil(lambda: pane.model.listing is not None, timeout=10_000)
    return pane.model


def _text(model: ListingModel, row: int, column: int) -> str:
    return str(model.index(row, column).data())


# ---- Disassembly ----


def test_disassembly_marks_the_crashing_instruction_with_its_operand_evaluated(
    qtbot: QtBot, with_binary: MainWindow
) -> None:
    model = _listing(qtbot, with_binary)
    listing = model.listing
    assert listing is not None and listing.message is None
    row = listing.marked_row
    assert row is not None
    assert _text(model, row, ListingModel.COL_INSTRUCTION) == "mov qword [rax + 0x10], rdi"
    assert _text(model, row, ListingModel.COL_ADDRESS).startswith("▶")
    # rax is null in the crashing context: the operand's address is the crash address
    assert "qword [rax + 0x10] = 0x0000000000000010" in _text(model, row, ListingModel.COL_VALUES)
    assert _text(model, row, ListingModel.COL_WHERE) == "write_limit + 0x7"
    title = with_binary.why.disassembly.title.text()
    assert "crashing instruction" in title and "crash_null_write" in title  # read from the module file
    assert "rax: from" in str(model.index(row, ListingModel.COL_VALUES).data(Qt.ItemDataRole.ToolTipRole))


def test_caller_frame_marks_the_call_and_names_its_target(qtbot: QtBot, with_binary: MainWindow) -> None:
    session = with_binary.session
    first = _listing(qtbot, with_binary).listing
    session.select_frame(FrameRef(session.selected_thread, 1))
    model = with_binary.why.disassembly.model
    qtbot.waitUntil(lambda: model.listing is not None and model.listing is not first, timeout=10_000)
    assert model.listing is not None
    row = model.listing.marked_row
    assert row is not None
    assert _text(model, row, ListingModel.COL_INSTRUCTION).startswith("call ")
    assert "→ write_limit + 0x0" in _text(model, row, ListingModel.COL_VALUES)
    assert "the call before the return address" in with_binary.why.disassembly.title.text()


def test_operand_links_select_the_address_in_stack_memory_and_the_register_in_registers(
    qtbot: QtBot, with_binary: MainWindow
) -> None:
    pane = with_binary.why.disassembly
    _listing(qtbot, with_binary)
    links = pane.links.text()
    assert 'href="register:rax"' in links and 'href="register:rdi"' in links
    # a register: Registers selects its row
    pane.follow_link("register:rdi")
    registers = with_binary.register_pane
    current = registers.view.currentIndex()
    assert current.isValid()
    assert current.siblingAtColumn(RegisterTableModel.COL_NAME).data() == "rdi"
    # an address in the thread's stack: Stack Memory shows and selects it
    sp = with_binary.session.selected_thread_view.stack_pointer  # type: ignore[union-attr]
    assert sp is not None
    pane.follow_link(f"address:{sp}")
    assert with_binary.memory_pane.model.row_for_address(sp) is not None
    # the crash address (0x10) was not captured: Stack Memory says so instead of showing something else
    pane.follow_link("address:16")
    assert "not in the memory captured" in with_binary.memory_pane.error.text()


def test_without_code_bytes_the_pane_says_why_and_what_would_help(
    qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes
) -> None:
    window = _case_window(qtbot, settings, CASE / "symbols", SYSTEM_SYMBOLS)  # not the folder with the binary
    try:
        model = _listing(qtbot, window)
        assert model.rowCount() == 0
        title = window.why.disassembly.title.text()
        assert "No code bytes" in title and "the dump holds no memory there" in title
        assert "crash_null_write: not on this machine" in title  # the paths tried
        assert "symbol path" in title  # what would help
    finally:
        window.session.shutdown()


# ---- Source ----


@pytest.fixture
def sample_window(
    qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes, monkeypatch: pytest.MonkeyPatch
) -> Iterator[MainWindow]:
    monkeypatch.chdir(REPO)  # the sample's symbols record paths relative to the repository
    window = make_window(qtbot, settings)
    wait_analysis_over(qtbot, window.session, lambda: window.open_dump(sample_dump()))
    yield window
    window.session.shutdown()


def _source_shown(qtbot: QtBot, window: MainWindow) -> None:
    pane = window.why.source
    qtbot.waitUntil(lambda: pane.excerpt is not None, timeout=10_000)


def test_source_shows_the_line_and_marks_the_inline_frames_lines(
    qtbot: QtBot, sample_window: MainWindow
) -> None:
    pane = sample_window.why.source
    _source_shown(qtbot, sample_window)
    # frame 0 of the renderer is render_tile (line 83) with blend_row (77) and store_pixel (70) inlined
    assert pane.marked_lines() == [83, 70, 77]  # the selected line, then the inline frames innermost first
    assert pane.title.text().endswith("render_farm.c : 83; 2 inline locations marked")
    cursor_line = pane.text.textCursor().block().text()
    assert cursor_line.lstrip().startswith("83 │")
    # highlighted by Pygments: the crash line's comment has a colour of its own
    excerpt = pane.excerpt
    assert excerpt is not None
    line_70 = excerpt.spans[70 - excerpt.first_line]
    assert any(span.italic or span.color for span in line_70)

    # the innermost inline frame: its own line is the selected one
    session = sample_window.session
    pane.excerpt = None
    session.select_frame(FrameRef(session.selected_thread, 0, 1))
    _source_shown(qtbot, sample_window)
    assert pane.marked_lines()[0] == 70


def test_missing_source_lists_the_paths_tried_and_a_mapping_finds_it(
    qtbot: QtBot, sample_window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pane = sample_window.why.source
    session = sample_window.session
    _source_shown(qtbot, sample_window)
    # elsewhere, the recorded relative path is not found: the pane says where it looked
    monkeypatch.chdir(tmp_path)
    pane.excerpt = None
    session.set_source_roots([("/build/src", str(tmp_path / "nowhere"))])
    qtbot.waitUntil(lambda: "Tried:" in pane.title.text(), timeout=10_000)
    title = pane.title.text()
    assert os.path.join(str(tmp_path), SAMPLE_SOURCE) in title
    assert os.path.join(str(tmp_path / "nowhere"), SAMPLE_SOURCE) in title
    assert pane.text.toPlainText() == ""
    # a source-root mapping to the checkout finds it again
    pane.excerpt = None
    session.set_source_roots([("tools", str(REPO / "tools"))])
    _source_shown(qtbot, sample_window)
    assert pane.marked_lines() == [83, 70, 77]  # the selected line, then the inline frames innermost first
    assert pane.title.text().startswith(str(REPO / SAMPLE_SOURCE))


# ---- Summary ----


def test_summary_says_why_it_crashed_in_one_sentence(qtbot: QtBot, with_binary: MainWindow) -> None:
    text = with_binary.summary_pane.text()
    assert "Why: write of 8 bytes to 0x10 — null pointer + 0x10" in text


def test_source_folders_set_in_preferences_reach_the_source_pane_and_are_saved(
    qtbot: QtBot, sample_window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pane = sample_window.why.source
    _source_shown(qtbot, sample_window)
    monkeypatch.chdir(tmp_path)  # the recorded relative path no longer resolves from here
    dialog = sample_window.preferences_dialog()
    qtbot.addWidget(dialog)
    dialog.source_roots.add_row("tools", str(REPO / "tools"))
    dialog.source_roots.add_row("/half/filled", "")  # incomplete rows are left out
    pane.excerpt = None
    sample_window.apply_preferences(dialog.preferences())
    assert sample_window.session.source_roots == (("tools", str(REPO / "tools")),)
    _source_shown(qtbot, sample_window)
    assert pane.title.text().startswith(str(REPO / SAMPLE_SOURCE))
    # saved: the next dialog starts from them
    again = sample_window.preferences_dialog()
    qtbot.addWidget(again)
    assert again.source_roots.roots() == (("tools", str(REPO / "tools")),)


def test_disassembly_numbers_frames_as_the_report_does(
    qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes
) -> None:
    """The sample's crashing frame is render_tile with two inline frames before it: the report (and
    Frames, Unwind, Registers) call it frame 2, and so does the Disassembly pane; store_pixel is 0."""
    window = make_window(qtbot, settings, session_symbol_paths=(sample_symbols(), sample_binaries()))
    wait_analysis_over(qtbot, window.session, lambda: window.open_dump(sample_dump()))
    session = window.session
    pane = window.why.disassembly
    session.select_frame(FrameRef(session.selected_thread, 0))
    qtbot.waitUntil(lambda: pane.model.listing is not None, timeout=10_000)
    assert pane.title.text().startswith("Frame 2: the crashing instruction"), pane.title.text()
    first = pane.model.listing
    submitted = []
    original_submit = pane.background.submit
    pane.background.submit = lambda *a, **k: submitted.append(a) or original_submit(*a, **k)  # type: ignore[method-assign]
    session.select_frame(FrameRef(session.selected_thread, 0, inline=1))
    qtbot.waitUntil(
        lambda: pane.title.text().startswith("Frame 0: the crashing instruction (▶)"), timeout=10_000
    )
    # the same physical frame: the same listing, retitled, not disassembled again
    assert pane.model.listing is first and not submitted
    pane.background.submit = original_submit  # type: ignore[method-assign]
    session.select_frame(FrameRef(session.selected_thread, 1))
    qtbot.waitUntil(lambda: pane.title.text().startswith("Frame 3: the call before"), timeout=10_000)
    window.session.shutdown()
