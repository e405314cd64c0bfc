"""Our own real x86-64 crashes (tools/make-crashes, `analysis_*`): the crashing instruction and its accesses.

Crashpad's dumps hold no code, so the instruction comes from the crashed executable kept
beside each dump (debug info stripped, build id intact), found through the symbol path and
checked against the dump's build id. Without it there is no instruction, and the report says why.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.core.analysis import AccessType, CodeOrigin, MemoryAccess, ModuleFileCode
from inspector.core.process import ProcessOptions, ProcessState, process
from inspector.core.report.human import render_human
from inspector.core.report.json_report import json_document

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "crashes"
R, W = AccessType.READ, AccessType.WRITE

#: case -> (crash reason, instruction, [(access type, address, size)], adjusted address)
EXPECTED = {
    "null_read": (
        "SIGSEGV / SEGV_MAPERR",
        "mov rax, qword [rax + 0x8]",
        [(R, 0x8, 8)],
        ("null-pointer", 0x8),
    ),
    "null_write": (
        "SIGSEGV / SEGV_MAPERR",
        "mov qword [rax + 0x10], rdi",
        [(W, 0x10, 8)],
        ("null-pointer", 0x10),
    ),
    "non_canonical": (
        "SIGSEGV / SI_KERNEL",
        "mov rax, qword [rax]",
        [(R, 0xDEAD000000001000, 8)],
        ("non-canonical", 0xDEAD000000001000),
    ),
    "null_call": (
        "SIGSEGV / SEGV_MAPERR",
        "call qword [rax + 0x8]",
        [(R, 0x8, 8), (W, None, 8)],  # the return address's slot: rsp - 8
        ("null-pointer", 0x8),
    ),
    "div_zero": ("SIGFPE / FPE_INTDIV", "idiv ecx", [], None),
    "stack_push": ("SIGSEGV / SEGV_ACCERR", "push rbp", [(W, None, 8)], None),
}


def _state(case: str, *, with_binary: bool = True) -> ProcessState:
    folder = FIXTURES / f"analysis_{case}"
    dump = folder / f"analysis_{case}.dmp"
    if not dump.is_file():
        pytest.skip(f"{dump} is missing (made by tools/make-crashes)")
    options = ProcessOptions(symbol_paths=(folder / "symbols", folder), use_symbols_cache=False)
    if not with_binary:
        options = ProcessOptions(
            symbol_paths=(folder / "symbols",), use_symbols_cache=False, code_providers=()
        )
    return process(dump, options)


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_crashing_instruction(case: str) -> None:
    reason, text, accesses, adjusted = EXPECTED[case]
    state = _state(case)
    assert state.crash is not None and state.crash.reason == reason
    analysis = state.analysis
    assert analysis is not None and analysis.instruction is not None
    assert analysis.instruction.instruction.text == text
    frame0 = state.threads[state.requesting_thread or 0].frames[0]
    sp = frame0.context.stack_pointer
    assert sp is not None
    got = analysis.instruction.memory_accesses
    assert got is not None
    assert [(a.access_type, a.address, a.size) for a in got] == [
        (kind, sp - 8 if address is None else address, size) for kind, address, size in accesses
    ]
    shown = analysis.adjusted_address
    assert (None if shown is None else (shown.kind.value, shown.value)) == adjusted
    assert analysis.inconsistencies == ()
    source = analysis.code_source
    assert source is not None and source.origin is CodeOrigin.MODULE_FILE
    assert source.path == str(FIXTURES / f"analysis_{case}" / f"crash_{case}")
    assert source.module == f"crash_{case}"


@pytest.mark.parametrize("case", ["null_read", "null_write", "stack_push"])
def test_the_access_is_where_the_kernel_said_the_fault_was(case: str) -> None:
    state = _state(case)
    assert state.analysis is not None and state.analysis.instruction is not None
    accesses = state.analysis.instruction.memory_accesses
    assert accesses and state.crash is not None
    assert accesses[0].address == state.crash.address


def test_stack_overflow_pushes_below_the_stack_of_its_thread() -> None:
    state = _state("stack_push")
    crashed = state.threads[state.requesting_thread or 0]
    assert crashed.stack_region is not None and state.crash is not None
    # the push writes 8 bytes below the lowest byte of the thread's stack that the dump holds
    assert state.crash.address < crashed.stack_region.start
    assert state.analysis is not None and state.analysis.instruction is not None
    assert state.analysis.instruction.instruction_pointer_update is not None
    assert not isinstance(state.analysis.instruction.instruction_pointer_update, MemoryAccess)


def test_reports_say_where_the_code_came_from() -> None:
    state = _state("null_call")
    info = json.loads(json.dumps(json_document(state)))["crash_info"]
    assert info["instruction"] == "call qword [rax + 0x8]"
    assert info["inspector_code_source"]["from"] == "module file"
    assert info["adjusted_address"] == {"kind": "null-pointer", "offset": "0x0000000000000008"}
    text = render_human(state)
    assert (
        "Crash address: 0x0000000000000008 **\n    ** Null pointer detected with offset: 0x0000000000000008\n"
        in text
    )
    assert "Crashing instruction: `call qword [rax + 0x8]`\n" in text


def test_without_the_binary_there_is_no_instruction_and_the_report_says_why() -> None:
    state = _state("null_read", with_binary=False)
    assert state.analysis is not None and state.analysis.instruction is None
    source = state.analysis.code_source
    assert source is not None and source.origin is CodeOrigin.NONE
    assert source.note == "the dump holds no memory there"
    # rust-minidump's answer for this dump: no instruction, a flip of 0x8 to null
    info = json.loads(json.dumps(json_document(state)))["crash_info"]
    assert info["instruction"] is None
    assert [f["address"] for f in info["possible_bit_flips"]] == ["0x0000000000000000"]


def test_a_binary_of_another_build_is_not_used(tmp_path: Path) -> None:
    other = tmp_path / "crash_null_read"
    other.write_bytes((FIXTURES / "analysis_null_write" / "crash_null_write").read_bytes())
    finder = ModuleFileCode(paths=lambda module: [str(other)])
    folder = FIXTURES / "analysis_null_read"
    state = process(
        folder / "analysis_null_read.dmp", ProcessOptions(use_symbols_cache=False, code_providers=(finder,))
    )
    assert state.analysis is not None and state.analysis.instruction is None
    assert state.analysis.code_source is not None
    note = state.analysis.code_source.note or ""
    assert f"{other}: another build" in note
