"""Every item model passes Qt's model tester; the hex model shows the sample's real stack bytes."""

from __future__ import annotations

import struct
from collections.abc import Callable

import pytest
from PySide6.QtCore import QAbstractItemModel, Qt
from PySide6.QtWidgets import QApplication

from inspector.core.minidump import MemoryRegion
from inspector.core.process import ModuleSymbolSummary, Problem, SymbolState
from inspector.core.symbols import DamageKind, DamageReport
from inspector.core.unwind import FrameTrust, StackFrame
from inspector.gui.document import AnalysisStatus, Document
from inspector.gui.lookups import describe_pointer
from inspector.gui.models.memory_model import FrameBand, HexMemoryModel, NoteKind, WordNote
from inspector.gui.models.module_model import ModuleFilterProxy, ModuleTableModel
from inspector.gui.models.problem_model import ProblemTableModel
from inspector.gui.models.register_model import RegisterTableModel
from inspector.gui.models.roles import AddressRole, IndexRole, ItemRole, SortRole
from inspector.gui.models.thread_model import ThreadTableModel
from inspector.gui.theme import Theme
from inspector.resources import sample_dump

CheckModel = Callable[[QAbstractItemModel], None]
DISPLAY = Qt.ItemDataRole.DisplayRole

#: The crashing thread's stack in the sample: where it is in memory and in the file (see `dump` output).
STACK_BASE = 0x7FFFF75CFE08
STACK_SIZE = 0x8B8
STACK_RVA = 0x2C40
STACK_POINTER = 0x7FFFF75CFE88


@pytest.fixture
def theme(qapp: QApplication) -> Theme:
    return Theme.for_scheme(False, qapp.font())


def cell(model: QAbstractItemModel, row: int, column: int, role: int = DISPLAY) -> object:
    return model.data(model.index(row, column), role)


def expected_word(address: int) -> int:
    """The word at `address` of the crashing thread's stack, read straight from the file."""
    raw = sample_dump().read_bytes()
    value: int = struct.unpack_from("<Q", raw, STACK_RVA + address - STACK_BASE)[0]
    return value


# ---- threads ----


def test_thread_model(check_model: CheckModel, theme: Theme, sample_document: Document) -> None:
    model = ThreadTableModel(theme)
    check_model(model)
    assert model.rowCount() == 0
    model.set_document(sample_document)
    assert model.rowCount() == 3 and model.columnCount() == 5
    M = ThreadTableModel
    assert [cell(model, r, M.COL_NAME) for r in range(3)] == ["render_farm", "loader", "renderer"]
    assert cell(model, 2, M.COL_INDEX) == "⚡ 2"  # the crashing thread is marked
    assert cell(model, 0, M.COL_INDEX) == "0"
    assert cell(model, 2, M.COL_ID) == "11907"
    assert cell(model, 2, M.COL_TOP) == "render_farm + 0x1758"
    assert cell(model, 2, M.COL_TOP, AddressRole) == 0x555555555758
    assert cell(model, 2, M.COL_FRAMES) == ""  # not walked in phase 1
    assert cell(model, 2, M.COL_NAME, Qt.ItemDataRole.ForegroundRole) == theme.crash
    assert cell(model, 1, M.COL_ID, SortRole) == 11906
    assert cell(model, 1, 0, IndexRole) == 1
    assert "Crashing thread: SIGSEGV / SEGV_MAPERR" in str(
        cell(model, 2, M.COL_NAME, Qt.ItemDataRole.ToolTipRole)
    )
    # what phase 2 will do as frames stream in
    context = sample_document.state.thread_starts[2].context
    assert context is not None
    for i in range(6):
        sample_document.add_frame(2, StackFrame(i, FrameTrust.SCAN, context, 0x1000, 0x1000))
    model.frames_changed(2)
    assert cell(model, 2, M.COL_FRAMES) == "6"
    model.set_document(None)
    assert model.rowCount() == 0


# ---- modules ----


def test_module_model_and_its_filter(
    check_model: CheckModel, theme: Theme, sample_document: Document
) -> None:
    model = ModuleTableModel(theme)
    proxy = ModuleFilterProxy()
    proxy.setSourceModel(model)
    check_model(model)
    check_model(proxy)
    model.set_document(sample_document)
    M = ModuleTableModel
    assert model.rowCount() == 4
    assert cell(model, 0, M.COL_BASE) == "0x0000555555554000"
    assert cell(model, 0, M.COL_END) == "0x0000555555568c18"
    assert cell(model, 2, M.COL_NAME) == "libc.so.6"
    assert cell(model, 2, M.COL_DEBUG_ID) == "EC61AC938E5A39B16F9FBD350E3169A50"
    assert cell(model, 0, M.COL_SYMBOLS) == "pending"  # the analysis is running, nothing looked up yet
    assert cell(model, 0, M.COL_NAME, Qt.ItemDataRole.FontRole) == theme.bold  # the main module

    loaded = ModuleSymbolSummary(SymbolState.LOADED, path=str(sample_dump().parent / "x.sym"))
    missing = ModuleSymbolSummary(
        SymbolState.MISSING, tried=("/syms/linux-vdso.so.1/ID/linux-vdso.so.1.sym",)
    )
    damage = DamageReport(counts={DamageKind.BAD_FUNC: 3})
    damaged = ModuleSymbolSummary(SymbolState.DAMAGED, path=str(sample_dump()), damage=damage)
    for i, state in enumerate([loaded, missing, damaged]):
        sample_document.set_symbols(i, state)
    model.symbols_changed([0, 1, 2])
    assert cell(model, 0, M.COL_SYMBOLS) == "loaded"
    assert cell(model, 0, M.COL_SYMBOL_FILE) == loaded.path
    assert cell(model, 1, M.COL_SYMBOLS) == "missing"
    assert cell(model, 1, M.COL_SYMBOL_FILE) == "tried /syms/linux-vdso.so.1/ID/linux-vdso.so.1.sym"
    assert "/syms/linux-vdso.so.1/ID/linux-vdso.so.1.sym" in str(
        cell(model, 1, M.COL_SYMBOLS, Qt.ItemDataRole.ToolTipRole)
    )
    assert cell(model, 2, M.COL_SYMBOLS) == "damaged (3 lines)"
    assert cell(model, 1, M.COL_SYMBOLS, Qt.ItemDataRole.ForegroundRole) == theme.crash
    sample_document.status = AnalysisStatus.FINISHED
    model.refresh_status()
    assert cell(model, 3, M.COL_SYMBOLS) == "not needed"  # the walk is over and never asked for it
    sample_document.status = AnalysisStatus.CANCELLED
    assert cell(model, 3, M.COL_SYMBOLS) == "not loaded"

    proxy.set_lacking_only(True)
    assert proxy.rowCount() == 0  # no frame is in any module yet: none lacks symbols the walk needed
    context = sample_document.state.thread_starts[2].context
    assert context is not None
    vdso = sample_document.state.modules[1].module.base + 0x10
    sample_document.add_frame(2, StackFrame(0, FrameTrust.CONTEXT, context, vdso, vdso, module_index=1))
    proxy.set_lacking_only(False)
    proxy.set_lacking_only(True)
    assert [proxy.index(r, M.COL_NAME).data() for r in range(proxy.rowCount())] == ["linux-vdso.so.1"]
    proxy.set_lacking_only(False)
    proxy.setFilterFixedString("ld-linux")
    assert proxy.rowCount() == 1
    proxy.setFilterFixedString("")
    proxy.sort(M.COL_BASE, Qt.SortOrder.DescendingOrder)
    assert proxy.index(0, M.COL_NAME).data() == "ld-linux-x86-64.so.2"


# ---- registers ----


def test_register_model(check_model: CheckModel, theme: Theme, sample_document: Document) -> None:
    model = RegisterTableModel(theme)
    check_model(model)
    thread = sample_document.state.thread_starts[2]
    assert thread.context is not None
    model.set_context(sample_document, thread.context)
    names = [cell(model, r, 0) for r in range(model.rowCount())]
    assert names[:4] == ["rax", "rdx", "rcx", "rbx"] and "rip" in names and len(names) == 17
    rip = model.row_of("rip")
    rsp = model.row_of("rsp")
    assert rip is not None and rsp is not None
    assert cell(model, rip, RegisterTableModel.COL_VALUE) == "0x0000555555555758"
    assert cell(model, rip, RegisterTableModel.COL_STATE) == "known"
    assert cell(model, rip, RegisterTableModel.COL_SOURCE) == "valid"
    assert cell(model, rip, RegisterTableModel.COL_POINTS_TO) == "render_farm + 0x1758"
    assert cell(model, rsp, RegisterTableModel.COL_POINTS_TO) == "stack of #2 renderer"
    assert cell(model, rsp, RegisterTableModel.COL_VALUE, AddressRole) == STACK_POINTER

    # a caller frame's context knows only some registers (phase 2); the rest read as unknown
    partial = thread.context.with_registers({"rip": 0x555555555800, "rsp": STACK_POINTER + 8})
    model.set_context(sample_document, partial, provenance={"rip": "from the stack at rsp"})
    rax = model.row_of("rax")
    assert rax is not None
    assert cell(model, rax, RegisterTableModel.COL_STATE) == "unknown"
    assert cell(model, rax, RegisterTableModel.COL_VALUE, AddressRole) is None
    assert cell(model, rax, 0, Qt.ItemDataRole.ForegroundRole) == theme.muted
    rip = model.row_of("rip")
    assert rip is not None and cell(model, rip, RegisterTableModel.COL_SOURCE) == "from the stack at rsp"
    assert cell(model, rax, RegisterTableModel.COL_SOURCE) == ""
    model.set_context(None, None)
    assert model.rowCount() == 0


# ---- problems ----


def test_problem_model(check_model: CheckModel, theme: Theme) -> None:
    model = ProblemTableModel(theme)
    check_model(model)
    problems = [
        Problem("dump", "BadRva", "thread[1] stack is outside the file", 0x2C0, "ThreadListStream (0x3)"),
        Problem("symbol path", "SymbolPath", "/nowhere: does not exist", where="/nowhere"),
    ]
    model.set_problems(problems)
    assert model.rowCount() == 2
    assert cell(model, 1, ProblemTableModel.COL_MESSAGE) == "/nowhere: does not exist"
    assert cell(model, 0, ProblemTableModel.COL_WHERE) == "ThreadListStream (0x3) at 0x2c0"
    assert cell(model, 0, ProblemTableModel.COL_CODE) == "BadRva"
    assert cell(model, 0, 0, ItemRole) == problems[0]
    model.set_problems([])
    assert model.rowCount() == 0


# ---- stack memory ----


@pytest.fixture
def hex_model(theme: Theme, sample_document: Document) -> HexMemoryModel:
    model = HexMemoryModel(theme)
    stack = sample_document.state.thread_starts[2].stack
    assert stack is not None and stack.base == STACK_BASE and stack.size == STACK_SIZE
    model.set_region(stack, pointer_width=8, describe_pointer=lambda v: describe_pointer(sample_document, v))
    return model


def test_hex_model_passes_the_model_tester(
    check_model: CheckModel, theme: Theme, sample_document: Document
) -> None:
    model = HexMemoryModel(theme)
    check_model(model)
    stack = sample_document.state.thread_starts[2].stack
    model.set_region(stack, pointer_width=8, describe_pointer=lambda v: describe_pointer(sample_document, v))
    model.set_notes("registers", [WordNote(STACK_POINTER, "← rsp", NoteKind.STACK_POINTER)])
    model.set_words_per_row(2)
    model.set_frame_bands([FrameBand(STACK_POINTER, STACK_POINTER + 0x40, 0)], selected=0)
    model.set_region(None)
    assert model.rowCount() == 0


def test_hex_model_words_and_ascii_match_the_file(hex_model: HexMemoryModel) -> None:
    m = hex_model
    assert m.rowCount() == STACK_SIZE // 8 and m.columnCount() == 4
    assert [m.headerData(c, Qt.Orientation.Horizontal) for c in range(4)] == [
        "Address",
        "+0",
        "ASCII",
        "Notes",
    ]
    for row in range(m.rowCount()):
        address = STACK_BASE + 8 * row
        assert cell(m, row, 0) == f"0x{address:016x}"
        assert cell(m, row, 1) == f"{expected_word(address):016x}"
        assert cell(m, row, 1, ItemRole) == expected_word(address)
        assert cell(m, row, 1, AddressRole) == address
    # the word at the crashing thread's stack pointer: a pointer into render_farm
    row = m.row_for_address(STACK_POINTER)
    assert row == 16
    assert cell(m, row, 1) == "0000555555558148"
    assert cell(m, row, 2) == "H.UUUU.."  # 48 81 55 55 55 55 00 00
    assert cell(m, row, 3) == "→ render_farm + 0x4148"
    raw = sample_dump().read_bytes()[STACK_RVA : STACK_RVA + 8]
    assert cell(m, 0, 2) == "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in raw)


def test_hex_model_notes_layers_and_frame_bands(hex_model: HexMemoryModel, theme: Theme) -> None:
    m = hex_model
    sp_row = m.row_for_address(STACK_POINTER)
    assert sp_row is not None
    m.set_notes("registers", [WordNote(STACK_POINTER, "← rsp", NoteKind.STACK_POINTER)])
    assert cell(m, sp_row, 3) == "← rsp   → render_farm + 0x4148"
    assert cell(m, sp_row, 0, Qt.ItemDataRole.BackgroundRole) == theme.sp_row
    # phase 2: the trace adds its own layer without disturbing the registers layer
    m.set_notes(
        "trace", [WordNote(STACK_POINTER + 0x20, "return address of frame 2", NoteKind.RETURN_ADDRESS)]
    )
    assert cell(m, sp_row + 4, 3).startswith("return address of frame 2")  # type: ignore[union-attr]
    m.set_notes("trace", [])
    assert m.notes("trace") == [] and len(m.notes("registers")) == 1
    m.set_frame_bands(
        [
            FrameBand(STACK_POINTER + 0x40, STACK_POINTER + 0x80, 1),
            FrameBand(STACK_POINTER, STACK_POINTER + 0x40, 0),
        ],
        selected=1,
    )
    assert cell(m, sp_row + 1, 0, Qt.ItemDataRole.BackgroundRole) == theme.band_even
    assert cell(m, sp_row + 8, 0, Qt.ItemDataRole.BackgroundRole) == theme.band_selected
    assert cell(m, sp_row + 20, 0, Qt.ItemDataRole.BackgroundRole) is None


def test_hex_model_several_words_per_row(hex_model: HexMemoryModel) -> None:
    m = hex_model
    m.set_words_per_row(2)
    assert m.bytes_per_row == 16 and m.columnCount() == 5
    assert m.headerData(2, Qt.Orientation.Horizontal) == "+8"
    row = m.row_for_address(STACK_POINTER + 8)
    assert row is not None and m.row_address(row) == STACK_POINTER  # SP is 16-byte aligned: a row start
    assert cell(m, row, 1) == "0000555555558148"
    assert cell(m, row, 2) == f"{expected_word(STACK_POINTER + 8):016x}"
    assert cell(m, row, 2, AddressRole) == STACK_POINTER + 8
    assert str(cell(m, row, 4)).startswith("+0: → render_farm + 0x4148")
    index = m.index_for_address(STACK_POINTER + 8)
    assert (index.row(), index.column()) == (row, 2)


def test_hex_model_partial_last_word_and_32_bit(theme: Theme) -> None:
    m = HexMemoryModel(theme)
    data = bytes(range(1, 13))
    m.set_region(MemoryRegion(0x1000, 12, memoryview(data), 0), pointer_width=8)
    assert m.rowCount() == 2
    assert cell(m, 0, 1) == "0807060504030201"
    assert cell(m, 1, 1) == "????????0c0b0a09"  # only 4 of the 8 bytes are captured
    assert cell(m, 1, 1, ItemRole) is None
    m.set_region(MemoryRegion(0x1000, 12, memoryview(data), 0), pointer_width=4)
    assert m.rowCount() == 3 and cell(m, 2, 1) == "0c0b0a09" and cell(m, 0, 0) == "0x00001000"
    with pytest.raises(ValueError):
        m.set_region(None, pointer_width=2)
