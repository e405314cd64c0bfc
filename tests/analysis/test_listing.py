"""The disassembly listing around a frame's instruction (the Disassembly pane's data) and the
analysis sentence (the Summary's): on own real crashes and synthetic ARM64 / x86-64 code."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from inspector.core.analysis.from_dump import module_file_finder
from inspector.core.analysis.listing import BEFORE, Listing, disassemble_around, register_lookup
from inspector.core.analysis.model import CodeOrigin
from inspector.core.process import ProcessOptions, ProcessState, process
from inspector.core.report.analysis_text import analysis_sentence, shown_analysis
from inspector.core.types import Cpu
from tests.analysis.conftest import analyse, crash_dump

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "crashes"
PC = 0x5555_0000_1000


def _case(case: str, *, with_binary: bool = True) -> ProcessState:
    folder = FIXTURES / f"analysis_{case}"
    dump = folder / f"analysis_{case}.dmp"
    if not dump.is_file():
        pytest.skip(f"{dump} is missing (made by tools/make-crashes)")
    paths = (folder / "symbols", folder) if with_binary else (folder / "symbols",)
    return process(dump, ProcessOptions(symbol_paths=paths, use_symbols_cache=False))


def _listing_of(state: ProcessState, frame_index: int, *, with_binary: bool = True) -> Listing:
    frame = state.threads[state.requesting_thread or 0].frames[frame_index]
    folder = Path(str(state.path)).parent
    return disassemble_around(
        cpu=state.system.cpu,
        address=frame.instruction,
        context=frame.context,
        memory=state.memory,
        module=frame.module,
        providers=(module_file_finder((folder,) if with_binary else ()),),
        function_start=frame.function_base,
    )


def test_real_crash_listing_from_the_module_file() -> None:
    state = _case("null_call")
    listing = _listing_of(state, 0)
    assert listing.origin is CodeOrigin.MODULE_FILE
    row = listing.marked_row
    line = listing.lines[row]
    assert line.text == "call qword [rax + 0x8]"
    [operand] = line.memory
    assert (operand.address, operand.registers, operand.unknown) == (0x8, ("rax",), ())
    # the lines before decode from the function's start, without a gap, up to the marked one
    lines = listing.lines
    for before, after in itertools.pairwise(lines[: row + 1]):
        assert before.address + len(before.raw) == after.address


def test_real_caller_listing_marks_the_call_with_unknown_registers() -> None:
    state = _case("null_call")
    listing = _listing_of(state, 1)
    line = listing.lines[listing.marked_row]
    frame = state.threads[state.requesting_thread or 0].frames[1]
    assert line.address <= frame.instruction < line.address + len(line.raw)
    assert line.instruction.flow.value in ("call", "indirect call")
    # a caller frame knows only the registers the unwind recovered: rax is not one of them
    unknowns = {r for ln in listing.lines for v in ln.memory for r in v.unknown}
    assert "rax" in unknowns
    assert frame.context.get("rax") is None


def test_no_code_bytes_says_what_was_tried_and_what_would_help() -> None:
    state = _case("null_write", with_binary=False)
    listing = _listing_of(state, 0, with_binary=False)
    assert listing.lines == ()
    message = listing.message
    assert "the dump holds no memory there" in message and "crash_null_write: not on this machine" in message
    assert "Put the module's file (crash_null_write, the same build) in a symbol path" in message


def test_arm64_listing_evaluates_word_registers_and_names_branch_targets(tmp_path: Path) -> None:
    code = bytes.fromhex(
        "1f2003d5"  # nop
        "01000094"  # bl PC-4+4 = PC
        "080440b9"  # ldr w8, [x0, #4]   <- the crash, x0 = 0x1000
        "e10b40b9"  # ldr w1, [sp, #8]
    )
    path = crash_dump(
        tmp_path, None, cpu=Cpu.ARM64, registers={"x0": 0x1000}, pc=PC, extra_memory=[(PC - 8, code)]
    )
    state = analyse(path)
    frame = state.threads[0].frames[0]
    listing = disassemble_around(
        cpu=Cpu.ARM64,
        address=PC,
        context=frame.context,
        memory=state.memory,
        module=None,
        symbolize=lambda a: "target" if a == PC else None,
    )
    assert listing.origin is CodeOrigin.DUMP
    assert [ln.text for ln in listing.lines] == [
        "nop",
        "bl #0x555500001000",
        "ldr w8, [x0, #4]",
        "ldr w1, [sp, #8]",
    ]
    assert listing.marked_row == 2
    assert listing.lines[1].branch_target == "target"
    assert listing.lines[2].memory[0].address == 0x1004
    assert listing.lines[3].memory[0].address == frame.context.get("sp") + 8


def test_x86_listing_without_symbols_finds_instruction_boundaries(tmp_path: Path) -> None:
    """No function start: the sweep that lands on the crashing instruction is the one kept."""
    body = bytes.fromhex(
        "4889e58b45080f1f440000488b4710"
    )  # mov rbp, rsp; mov eax, [rbp+8]; nop; mov rax, [rdi+0x10]
    pad = bytes.fromhex("90") * (BEFORE * 8)
    path = crash_dump(
        tmp_path, None, registers={"rdi": 0}, extra_memory=[(0x401000 - len(pad) - 11, pad + body)]
    )
    state = analyse(path)
    frame = state.threads[0].frames[0]
    listing = disassemble_around(
        cpu=Cpu.AMD64, address=0x401000, context=frame.context, memory=state.memory, module=None
    )
    marked = listing.lines[listing.marked_row]
    assert marked.text == "mov rax, qword [rdi + 0x10]"
    assert marked.memory[0].address == 0x10
    assert [ln.text for ln in listing.lines][listing.marked_row - 3 : listing.marked_row] == [
        "mov rbp, rsp",
        "mov eax, dword [rbp + 0x8]",
        "nop dword [rax + rax * 1]",
    ]
    # eax reads as rax's low half (the context knows only the full register)
    lookup = register_lookup(Cpu.AMD64, frame.context)
    rsp = frame.context.get("rsp")
    assert frame.context.get("esp") is None and rsp is not None
    assert lookup("esp") == rsp & 0xFFFF_FFFF
    assert lookup("xmm0") is None  # not a register the context has


@pytest.mark.parametrize(
    ("case", "sentence"),
    [
        ("null_write", "write of 8 bytes to 0x10 — null pointer + 0x10"),
        ("null_read", "read of 8 bytes from 0x8 — null pointer + 0x8"),
        (
            "non_canonical",
            "read of 8 bytes from 0xdead000000001000 — non-canonical address 0xdead000000001000",
        ),
        ("div_zero", "`idiv ecx` accesses no memory"),
    ],
)
def test_analysis_sentence(case: str, sentence: str) -> None:
    state = _case(case)
    assert state.crash is not None
    got = analysis_sentence(
        shown_analysis(state.analysis, all_cpus=True), hex, crash_address=state.crash.address
    )
    assert got == sentence


def test_analysis_sentence_without_code_names_the_likeliest_bit_flip() -> None:
    state = _case("null_write", with_binary=False)
    got = analysis_sentence(state.analysis, hex)
    assert got is not None
    assert got.startswith(
        "crashing instruction not available (no code bytes in the dump or a module file found)"
    )
    assert got.endswith("possible bit flip: 0x0, confidence 0.438")
    assert analysis_sentence(None, hex) is None
