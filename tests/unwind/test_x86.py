"""x86 unwinding: frame pointers, scans, STACK WIN (frame data and FPO), STACK CFI, Breakpad's heuristics.

Modules: module1 at 0x40000000 and module2 at 0x50000000 (0x10000 bytes each); stacks start
at 0x80000000.
"""

from __future__ import annotations

from pathlib import Path

from inspector.core.types import Cpu, Os
from inspector.core.unwind import (
    CfiDetail,
    FrameTrust,
    Outcome,
    ScanDetail,
    StackWinDetail,
    Strategy,
    TerminationReason,
    WalkOptions,
    WalkPolicy,
)
from tests.synth.section import Label, Section
from tests.unwind.harness import UnwindCase, Walked

STACK_START = 0x80000000
MODULE1 = 0x40000000
MODULE2 = 0x50000000
ALL_X86 = frozenset({"eip", "esp", "ebp", "ebx", "esi", "edi", "eax", "ecx", "edx", "eflags"})
BREAKPAD = WalkOptions(policy=WalkPolicy.BREAKPAD)


def case(tmp_path: Path, symbols1: str | None = None, symbols2: str | None = None) -> UnwindCase:
    return (
        UnwindCase(tmp_path, Cpu.X86, Os.WINDOWS)
        .add_module(MODULE1, 0x10000, "module1", symbols1)
        .add_module(MODULE2, 0x10000, "module2", symbols2)
    )


def test_x86_frame_pointer_chain(tmp_path: Path) -> None:
    """A traditional frame: the caller's ebp saved just below the return address, ebp pointing at it."""
    frame0_ebp, frame1_ebp = Label(), Label()
    stack = Section(start=STACK_START).append_repeated(0, 12)
    stack.mark(frame0_ebp).d32(frame1_ebp).d32(0x40008679)
    stack.append_repeated(0, 8).mark(frame1_ebp).d32(0).d32(0)
    walk = case(tmp_path).walk(stack, eip=0x4000C7A5, esp=STACK_START, ebp=frame0_ebp.value)
    assert [f.trust for f in walk.frames] == [FrameTrust.CONTEXT, FrameTrust.FRAME_POINTER]
    f0, f1 = walk.frames
    assert f0.context.valid == ALL_X86 and f0.instruction == f0.return_address == 0x4000C7A5
    assert f1.context.valid == {"eip", "esp", "ebp"}
    assert (f1.instruction, f1.return_address) == (0x40008678, 0x40008679)
    assert (f1.context.get("esp"), f1.context.get("ebp")) == (frame0_ebp.value + 8, frame1_ebp.value)
    assert walk.attempts(1) == [
        (Strategy.CFI, Outcome.NOT_APPLICABLE),
        (Strategy.FRAME_POINTER, Outcome.FOUND),
    ]
    # frame 1's record holds 0, 0: the caller's eip is null and the walk ends there.
    assert walk.termination.reason is TerminationReason.NULL_INSTRUCTION


def test_x86_scan_after_bogus_frame_pointer(tmp_path: Path) -> None:
    """ebp points nowhere useful: scan for the return address and recover ebp from the word below it."""
    frame1_esp, frame1_ebp = Label(), Label()
    stack = Section(start=STACK_START)
    stack.d32(0xF065DC76).d32(0x46EE2167).d32(0xBAB023EC)  # locals: not return addresses
    stack.d32(frame1_ebp).d32(0x4000129D)  # saved ebp (ebp fails to point here), return address
    stack.mark(frame1_esp).append_repeated(0, 8).mark(frame1_ebp).d32(0).d32(0)
    walk = case(tmp_path).walk(stack, eip=0x4000F49D, esp=STACK_START, ebp=0xD43EED6E)
    assert [f.trust for f in walk.frames] == [FrameTrust.CONTEXT, FrameTrust.SCAN]
    f1 = walk.frames[1]
    assert f1.context.valid == {"eip", "esp", "ebp"}
    assert (f1.context.get("eip"), f1.context.get("esp"), f1.context.get("ebp")) == (
        0x4000129D,
        frame1_esp.value,
        frame1_ebp.value,
    )
    assert walk.attempts(1) == [
        (Strategy.CFI, Outcome.NOT_APPLICABLE),
        (Strategy.FRAME_POINTER, Outcome.FAILED),
        (Strategy.SCAN, Outcome.FOUND),
    ]
    scan = walk.chosen(1).detail
    assert isinstance(scan, ScanDetail)
    assert [c.accepted for c in scan.candidates] == [False, False, False, False, True]
    assert [c.passed for c in scan.frame_pointer_checks] == [True, True]


STACK_WIN_BASIC = (
    "STACK WIN 4 aa85 176 0 0 4 10 4 0 1"
    " $T2 $esp .cbSavedRegs + = $T0 .raSearchStart = $eip $T0 ^ = $esp $T0 4 + ="
    " $ebx $T2 4  - ^ = $edi $T2 8  - ^ = $esi $T2 12 - ^ = $ebp $T2 16 - ^ =\n"
)


def _stack_win_stack() -> tuple[Section, Label, Label]:
    frame1_esp, frame1_ebp = Label(), Label()
    stack = Section(start=STACK_START)
    stack.d32(frame1_ebp).d32(0xA7120D1A).d32(0x630891BE).d32(0x9068A878)  # saved ebp, esi, edi, ebx
    stack.d32(0xA08EA45F).d32(0x40001350)  # a local, the return address
    stack.mark(frame1_esp).append_repeated(0, 12).mark(frame1_ebp).d32(0).d32(0)
    return stack, frame1_esp, frame1_ebp


def _check_stack_win_caller(walk: Walked, frame1_esp: Label, frame1_ebp: Label) -> None:
    assert [f.trust for f in walk.frames] == [FrameTrust.CONTEXT, FrameTrust.CFI]
    f1 = walk.frames[1]
    assert f1.context.valid == {"eip", "esp", "ebp", "ebx", "esi", "edi"}
    assert f1.return_address == 0x40001350
    assert (f1.context.get("esp"), f1.context.get("ebp")) == (frame1_esp.value, frame1_ebp.value)
    assert (f1.context.get("ebx"), f1.context.get("esi"), f1.context.get("edi")) == (
        0x9068A878,
        0xA7120D1A,
        0x630891BE,
    )


def test_x86_stack_win_program_string(tmp_path: Path) -> None:
    """STACK WIN frame data: the program computes the caller's registers from .raSearchStart."""
    stack, frame1_esp, frame1_ebp = _stack_win_stack()
    walk = case(tmp_path, STACK_WIN_BASIC).walk(stack, eip=0x4000AA85, esp=STACK_START, ebp=0xF052C1DE)
    _check_stack_win_caller(walk, frame1_esp, frame1_ebp)
    assert walk.attempts(1) == [(Strategy.STACK_WIN_FRAME_DATA, Outcome.FOUND)]
    detail = walk.chosen(1).detail
    assert isinstance(detail, StackWinDetail)
    assert detail.record.address == 0xAA85 and detail.program_source == "record"
    variables = dict(detail.variables)
    assert variables[".raSearchStart"] == STACK_START + 0x14  # esp + locals (4) + saved registers (0x10)
    assert (variables[".cbSavedRegs"], variables[".cbLocals"], variables[".cbParams"]) == (0x10, 4, 4)
    assert detail.evaluation is not None and detail.evaluation.ok
    assignments = [s.assignment for s in detail.evaluation.steps if s.assignment is not None]
    assert [name for name, _ in assignments] == ["$T2", "$T0", "$eip", "$esp", "$ebx", "$edi", "$esi", "$ebp"]
    first_read = detail.evaluation.reads[0]
    assert (first_read.address, first_read.value) == (STACK_START + 0x14, 0x40001350)


def test_x86_stack_win_overlapping_records(tmp_path: Path) -> None:
    """Overlapping STACK WIN records: the one starting at or just below the address is used."""
    symbols = (
        "STACK WIN 4 aa80 181 0 0 4 10 4 0 1 $eip .raSearchStart =\n"
        "STACK WIN 4 aa84 177 0 0 4 10 4 0 1 $eip .raSearchStart =\n"
        + STACK_WIN_BASIC
        + "STACK WIN 4 aa86 175 0 0 4 10 4 0 1 $eip .raSearchStart =\n"
    )
    stack, frame1_esp, frame1_ebp = _stack_win_stack()
    walk = case(tmp_path, symbols).walk(stack, eip=0x4000AA85, esp=STACK_START, ebp=0xF052C1DE)
    _check_stack_win_caller(walk, frame1_esp, frame1_ebp)
    detail = walk.chosen(1).detail
    assert isinstance(detail, StackWinDetail) and detail.record.address == 0xAA85


def test_x86_stack_win_grand_callee_parameter_size(tmp_path: Path) -> None:
    """The callee's frame holds its callee's arguments: their size comes from the grand callee's STACK WIN."""
    module2 = (
        "FUNC aa85 176 beef module2::whine\n"
        "STACK WIN 4 aa85 176 0 0 4 10 4 0 1"
        " $T2 $esp .cbLocals + .cbSavedRegs + = $T0 .raSearchStart = $eip $T0 ^ = $esp $T0 4 + ="
        " $ebp $T0 20 - ^ = $ebx $T0 8 - ^ =\n"
    )
    frame0_ebp, frame1_esp, frame2_esp, frame2_ebp = Label(), Label(), Label(), Label()
    stack = Section(start=STACK_START).append_repeated(0, 16)
    stack.mark(frame0_ebp).d32(0x6FA902E0).d32(0x5000AA95)  # saved ebp (not a frame pointer), return address
    stack.mark(frame1_esp).d32(0xBAA0CB7A).d32(0xBDC92F9F).d32(0x0B1D8442)  # 3 arguments to wheedle
    stack.d32(frame2_ebp).d32(0xB1B90A15).d32(0xF18E072D).d32(0x2558C7F3).d32(0x0365E25E)
    stack.d32(0x2A179E38)  # return address, in no module
    stack.mark(frame2_esp).append_repeated(0, 12).mark(frame2_ebp).d32(0).d32(0)
    walk = case(tmp_path, "FUNC 1000 100 c module1::wheedle\n", module2).walk(
        stack, eip=0x40001004, esp=STACK_START, ebp=frame0_ebp.value
    )
    assert [f.trust for f in walk.frames] == [FrameTrust.CONTEXT, FrameTrust.FRAME_POINTER, FrameTrust.CFI]
    f1, f2 = walk.frames[1], walk.frames[2]
    assert f1.function_name == "module2::whine" and f1.symbol is not None and f1.symbol.parameter_size == 4
    assert f2.return_address == 0x2A179E38 and f2.module is None
    assert (f2.context.get("esp"), f2.context.get("ebp"), f2.context.get("ebx")) == (
        frame2_esp.value,
        frame2_ebp.value,
        0x2558C7F3,
    )
    detail = walk.chosen(2).detail
    assert isinstance(detail, StackWinDetail)
    # the grand callee (module1::wheedle, FUNC parameter size 0xc) pushed 12 bytes of arguments
    assert dict(detail.variables)[".cbCalleeParams"] == 0xC


def test_x86_grand_callee_parameter_size_needs_symbols_rust_minidump_accepts(tmp_path: Path) -> None:
    """A grand callee named from a .sym rust-minidump rejects (no final newline) has no parameter size.

    rust-minidump has no function for such a frame, so `.cbCalleeParams` is 0; with
    `unwind_with_rejected_symbols` the file's FUNC gives 0xc as usual.
    """
    module2 = (
        "FUNC aa85 176 beef module2::whine\n"
        "STACK WIN 4 aa85 176 0 0 4 10 4 0 1 $T0 .raSearchStart = $eip $T0 ^ = $esp $T0 4 + =\n"
    )
    frame0_ebp = Label()
    stack = Section(start=STACK_START).append_repeated(0, 16)
    stack.mark(frame0_ebp).d32(0x6FA902E0).d32(0x5000AA95)  # saved ebp (not a frame pointer), return address
    for _ in range(16):
        stack.d32(0x2A179E38)  # wherever the return address is looked for, one (in no module) is there

    def callee_params(options: WalkOptions) -> int:
        walk = case(tmp_path, "FUNC 1000 100 c module1::wheedle", module2).walk(
            stack, options=options, eip=0x40001004, esp=STACK_START, ebp=frame0_ebp.value
        )
        assert walk.frames[0].function_name == "module1::wheedle"
        assert walk.frames[1].function_name == "module2::whine"
        assert walk.frames[2].return_address == 0x2A179E38
        detail = walk.chosen(2).detail
        assert isinstance(detail, StackWinDetail)
        value: int = dict(detail.variables)[".cbCalleeParams"]
        return value

    assert callee_params(WalkOptions()) == 0
    assert callee_params(WalkOptions(unwind_with_rejected_symbols=True)) == 0xC


def test_x86_stack_win_fpo(tmp_path: Path) -> None:
    """FPO data (STACK WIN 0): the return address sits above locals and saved registers; ebp was saved."""
    symbols = "FUNC e8a8 100 0 module1::discombobulated\nSTACK WIN 0 e8a8 100 0 0 8 8 10 0 0 1\n"
    frame1_esp, frame1_ebp = Label(), Label()
    stack = Section(start=STACK_START)
    stack.d32(frame1_ebp).d32(0x7C521352)  # saved ebp, another saved register
    stack.append_repeated(0x42, 0x10).d32(0x40009B5B)  # locals, return address
    stack.mark(frame1_esp).d32(0xF60EA7FC).mark(frame1_ebp).d32(0).d32(0)
    walk = case(tmp_path, symbols).walk(stack, eip=0x4000E8B8, esp=STACK_START, ebp=0x12345678)
    assert [f.trust for f in walk.frames] == [FrameTrust.CONTEXT, FrameTrust.CFI]
    f1 = walk.frames[1]
    assert f1.context.valid == {"eip", "esp", "ebp", "ebx", "esi", "edi"}  # ebx/esi/edi stay forwarded
    assert (f1.return_address, f1.context.get("esp"), f1.context.get("ebp")) == (
        0x40009B5B,
        frame1_esp.value,
        frame1_ebp.value,
    )
    detail = walk.chosen(1).detail
    assert isinstance(detail, StackWinDetail) and detail.program_source == "FPO data (no program)"
    assert [(w.role, w.address) for w in detail.reads] == [
        ("return address", STACK_START + 0x18),
        ("saved ebp", STACK_START),
    ]


def test_x86_stack_win_fpo_leftover_return_address(tmp_path: Path) -> None:
    """An FPO system call returned without popping: the word equal to the context eip is skipped."""
    symbols = "FUNC e8a8 100 0 ntdll::syscall\nSTACK WIN 0 e8a8 100 0 0 0 0 0 0 0 0\n"
    frame1_esp = Label()
    stack = Section(start=STACK_START).d32(0x4000E8B8).d32(0x40009B5B).mark(frame1_esp).append_repeated(0, 16)
    walk = case(tmp_path, symbols).walk(stack, eip=0x4000E8B8, esp=STACK_START, ebp=0x80000008)
    f1 = walk.frames[1]
    assert (f1.return_address, f1.context.get("esp")) == (0x40009B5B, frame1_esp.value)
    detail = walk.chosen(1).detail
    assert isinstance(detail, StackWinDetail)
    assert [c.passed for c in detail.checks] == [False]
    assert [w.role for w in detail.reads] == ["return address", "return address (after a leftover one)"]


X86_CFI_SYMBOLS = (
    "FUNC 4000 1000 10 enchiridion\n"
    "STACK CFI INIT 4000 100 .cfa: $esp 4 + .ra: .cfa 4 - ^\n"
    "STACK CFI 4001 .cfa: $esp 8 + $ebx: .cfa 8 - ^\n"
    "STACK CFI 4002 $esi: $ebx\n"
    "STACK CFI 4003 .cfa: $esp 20 + $edi: .cfa 16 - ^\n"
    "STACK CFI 4005 .ra: $edi\n"
    "STACK CFI 4006 .cfa: $ebp 8 + $ebp: .cfa 12 - ^\n"
    "FUNC 5000 1000 10 epictetus\n"
    "STACK CFI INIT 5000 1000 .cfa: $esp .ra 0\n"
)
X86_CFI_REGISTERS = {
    "esp": STACK_START,
    "ebp": 0xC0D4AAB9,
    "ebx": 0x60F20CE6,
    "esi": 0x53D1379D,
    "edi": 0xAFBAE234,
}


def _x86_cfi(tmp_path: Path, stack: Section, eip: int, **overrides: int) -> Walked:
    return case(tmp_path, X86_CFI_SYMBOLS).walk(stack, eip=eip, **{**X86_CFI_REGISTERS, **overrides})


def _check_x86_cfi(walk: Walked, frame1_esp: int) -> None:
    assert [f.trust for f in walk.frames] == [FrameTrust.CONTEXT, FrameTrust.CFI]
    f1 = walk.frames[1]
    assert f1.context.valid == {"eip", "esp", "ebp", "ebx", "esi", "edi"}
    expected = {**X86_CFI_REGISTERS, "eip": 0x40005510, "esp": frame1_esp}
    assert {name: f1.context.get(name) for name in expected} == expected


def test_x86_cfi_at_function_entry(tmp_path: Path) -> None:
    frame1_esp = Label()
    stack = Section(start=STACK_START).d32(0x40005510).mark(frame1_esp).append_repeated(0, 1000)
    walk = _x86_cfi(tmp_path, stack, 0x40004000)
    _check_x86_cfi(walk, frame1_esp.value)
    assert walk.attempts(1) == [(Strategy.CFI, Outcome.FOUND)]


def test_x86_cfi_with_pushed_registers(tmp_path: Path) -> None:
    frame1_esp = Label()
    stack = Section(start=STACK_START)
    stack.d32(0x56EC3DB7).d32(0xAFBAE234).d32(0x53D67131).d32(0x60F20CE6).d32(0x40005510)
    stack.mark(frame1_esp).append_repeated(0, 1000)
    walk = _x86_cfi(tmp_path, stack, 0x40004003, ebx=0x53D1379D, esi=0xA97F229D, edi=0xB05CC997)
    _check_x86_cfi(walk, frame1_esp.value)
    detail = walk.chosen(1).detail
    assert isinstance(detail, CfiDetail)
    assert [row.address for row in detail.rows_applied] == [0x4001, 0x4002, 0x4003]
    esi = next(e for e in detail.evaluations if e.register == "esi")
    assert esi.expression == "$ebx" and esi.result.value == 0x53D1379D


def test_x86_breakpad_stack_win_program_failure_scan(tmp_path: Path) -> None:
    """Breakpad: a STACK WIN program that fails is replaced by a scan from esp (trust `scan`)."""
    frame1_esp = Label()
    stack = (
        Section(start=STACK_START)
        .append_repeated(0x2A, 16)
        .d32(0x50007CE9)
        .mark(frame1_esp)
        .append_repeated(0, 8)
    )
    symbols1 = "STACK WIN 4 c8c 111 0 0 4 10 4 0 1 bad program string\n"
    symbols2 = "FUNC 7c38 accf 0 module2::function\nSTACK WIN 4 7c38 accf 0 0 4 10 4 0 1 $eip 0 = $ebp 0 =\n"
    walk = case(tmp_path, symbols1, symbols2).walk(
        stack, options=BREAKPAD, eip=0x40000C9C, esp=STACK_START, ebp=0x2AE314CD
    )
    assert [f.trust for f in walk.frames] == [FrameTrust.CONTEXT, FrameTrust.SCAN]
    f1 = walk.frames[1]
    assert f1.context.valid == {"eip", "esp", "ebp"}
    assert (f1.return_address, f1.context.get("esp")) == (0x50007CE9, frame1_esp.value)
    detail = walk.chosen(1).detail
    assert isinstance(detail, StackWinDetail)
    assert detail.evaluation is not None and not detail.evaluation.ok
    assert [s.purpose for s in detail.searches] == [
        "aligned return-address slot",
        "return address (program failed)",
        "saved ebp (searched downwards)",
    ]
    # rust-minidump has no such fallback: its STACK WIN fails, then CFI, then the frame pointer.
    plain = case(tmp_path, symbols1, symbols2).walk(stack, eip=0x40000C9C, esp=STACK_START, ebp=0x2AE314CD)
    assert plain.attempts(1)[0] == (Strategy.STACK_WIN_FRAME_DATA, Outcome.FAILED)


def test_x86_breakpad_cfi_scan_rescue_and_ebp_recovery(tmp_path: Path) -> None:
    """Breakpad: the program's eip is in no module, so it rescans (trust `cfi_scan`) and re-finds ebp."""
    frame0_ebp, frame1_ebp, frame1_esp = Label(), Label(), Label()
    stack = Section(start=STACK_START).append_repeated(0x2A, 8)
    stack.mark(frame0_ebp).d32(0x3D937B2B).d32(0x17847F5B)  # alleged saved ebp and return address: garbage
    stack.d32(frame1_ebp).d32(0x2B2B2B2B).d32(0x2C2C2C2C).d32(0x5000D000)  # the real ones
    stack.mark(frame1_esp).mark(frame1_ebp).d32(0x2D2D2D2D)
    symbols1 = "STACK WIN 4 6e6 e7 0 0 0 8 4 0 1 $eip $ebp 4 + ^ = $esp $ebp 8 + = $ebp $ebp ^ =\n"
    symbols2 = "FUNC cfdb 8406 0 module2::function\nSTACK WIN 4 cfdb 8406 0 0 0 0 0 0 1 $eip 0 = $ebp 0 =\n"
    walk = case(tmp_path, symbols1, symbols2).walk(
        stack, options=BREAKPAD, eip=0x40000700, esp=STACK_START, ebp=frame0_ebp.value
    )
    assert [f.trust for f in walk.frames] == [FrameTrust.CONTEXT, FrameTrust.CFI_SCAN]
    f1 = walk.frames[1]
    assert f1.trust.description == "call frame info with scanning"
    assert f1.context.valid == {"eip", "esp", "ebp"}
    assert (f1.return_address, f1.context.get("esp"), f1.context.get("ebp")) == (
        0x5000D000,
        frame1_esp.value,
        frame1_ebp.value,
    )
    attempt = walk.chosen(1)
    assert attempt.strategy is Strategy.CFI_SCAN
    detail = attempt.detail
    assert isinstance(detail, StackWinDetail)
    rescue = detail.searches[1]
    assert rescue.purpose == "return address (eip not in a module)" and rescue.start == STACK_START + 16
    ebp_search = detail.searches[2]
    assert ebp_search.accepted is not None and ebp_search.accepted.value == frame1_ebp.value
    # rust-minidump takes the program's answer as it is: garbage eip 0x17847f5b, then stops.
    plain = case(tmp_path, symbols1, symbols2).walk(
        stack, eip=0x40000700, esp=STACK_START, ebp=frame0_ebp.value
    )
    assert plain.frames[1].return_address == 0x17847F5B and plain.frames[1].module is None


def test_x86_breakpad_frame_pointer_scan_repairs_ebp_chain(tmp_path: Path) -> None:
    """Breakpad's "EBP at base": an unreadable frame record falls back to a scan that restores ebp."""
    frame1_esp, frame1_ebp = Label(), Label()
    stack = Section(start=STACK_START).d32(0xF065DC76).d32(0x46EE2167).d32(0xBAB023EC)
    stack.d32(frame1_ebp).d32(0x4000129D).mark(frame1_esp).append_repeated(0, 8).mark(frame1_ebp).d32(0).d32(
        0
    )
    walk = case(tmp_path).walk(stack, options=BREAKPAD, eip=0x4000F49D, esp=STACK_START, ebp=0xD43EED6E)
    assert walk.attempts(1)[-2:] == [(Strategy.FRAME_POINTER, Outcome.FAILED), (Strategy.SCAN, Outcome.FOUND)]
    f1 = walk.frames[1]
    assert (f1.context.get("eip"), f1.context.get("esp"), f1.context.get("ebp")) == (
        0x4000129D,
        frame1_esp.value,
        frame1_ebp.value,
    )
    scan = walk.chosen(1).detail
    assert isinstance(scan, ScanDetail) and scan.window_words == 161
    assert [c.passed for c in scan.frame_pointer_checks] == [True]


def test_x86_frame_pointer_overflow(tmp_path: Path) -> None:
    stack = Section(start=STACK_START).append_repeated(0, 16)
    walk = case(tmp_path).walk(stack, eip=0x40000200, esp=STACK_START, ebp=0xFFFFFFF8)
    fp = walk.termination.failed_attempts[1]
    assert fp.strategy is Strategy.FRAME_POINTER and "would overflow" in fp.reason


def test_x86_breakpad_deep_walk_keeps_the_innermost_callee_parameter_size(tmp_path: Path) -> None:
    """Breakpad: `.cbCalleeParams` is the innermost frame's parameter size at every depth.

    Frame 0 has no frame info, frame 1 is in a function with 8 bytes of parameters, every
    deeper frame in one with 12: from frame 2 on the size stays 8 however deep the walk goes
    (the walker looks at each frame once). The frames are those of the rust-minidump policy.
    """
    depth = 300
    program = "$T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ = $esp $T0 8 + ="
    symbols1 = (
        f"FUNC 1000 100 8 outer\nSTACK WIN 4 1000 100 0 0 8 0 0 0 1 {program}\n"
        f"FUNC 2000 100 c recurse\nSTACK WIN 4 2000 100 0 0 c 0 0 0 1 {program}\n"
    )
    labels = [Label() for _ in range(depth + 1)]
    stack = Section(start=STACK_START).append_repeated(0, 4)
    for i in range(depth):
        stack.mark(labels[i]).d32(labels[i + 1]).d32(MODULE1 + (0x1010 if i == 0 else 0x2010))
    stack.mark(labels[depth]).d32(0).d32(0)
    registers = {"eip": MODULE1 + 0x500, "esp": STACK_START, "ebp": labels[0].value}
    walk = case(tmp_path, symbols1).walk(stack, options=BREAKPAD, **registers)
    plain = case(tmp_path, symbols1).walk(stack, **registers)

    def frames(walked: Walked) -> list[tuple[FrameTrust, int, int | None, int | None]]:
        return [
            (f.trust, f.return_address, f.context.get("esp"), f.context.get("ebp")) for f in walked.frames
        ]

    assert len(walk.frames) == depth + 1
    assert walk.termination.reason is TerminationReason.NULL_INSTRUCTION
    assert frames(walk) == frames(plain)
    assert [f.context.get("ebp") for f in walk.frames[1:]] == [label.value for label in labels[1:]]
    sizes = []
    for index in range(2, depth + 1):
        detail = walk.chosen(index).detail
        assert isinstance(detail, StackWinDetail)
        sizes.append(dict(detail.variables)[".cbCalleeParams"])
    assert sizes == [0] + [8] * (depth - 2)


def test_x86_scanned_frame_limit_under_the_default_policy(tmp_path: Path) -> None:
    """`max_scanned_frames` stops scanning on x86 too, not only under the Breakpad policy."""
    stack = Section(start=STACK_START)
    for i in range(8):
        stack.d32(MODULE2 + 0x100 + 0x10 * i)
    stack.append_repeated(0, 64)
    options = WalkOptions(max_scanned_frames=2)
    walk = case(tmp_path).walk(stack, options=options, eip=MODULE1 + 0x200, esp=STACK_START, ebp=1)
    assert [f.trust for f in walk.frames] == [FrameTrust.CONTEXT, FrameTrust.SCAN, FrameTrust.SCAN]
    scan = walk.termination.failed_attempts[-1]
    assert (scan.strategy, scan.outcome) == (Strategy.SCAN, Outcome.NOT_APPLICABLE)
    assert scan.reason == "scanning is disabled after 2 scanned frames"
    unlimited = case(tmp_path).walk(stack, eip=MODULE1 + 0x200, esp=STACK_START, ebp=1)
    assert len(unlimited.frames) == 9
