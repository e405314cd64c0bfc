"""AMD64 unwinding: the situations of rust-minidump's and Breakpad's amd64 unwinder tests, and ours.

Modules: module1 at 0x7400C0000000 and module2 at 0x7500B0000000 (0x10000 bytes each);
stacks start at 0x8000000080000000 (a non-canonical address: never a return address).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.types import Cpu, Os
from inspector.core.unwind import (
    CfiDetail,
    FramePointerDetail,
    FrameTrust,
    Outcome,
    RuleEffect,
    ScanDetail,
    Strategy,
    TerminationReason,
    WalkOptions,
    WalkPolicy,
)
from tests.synth.section import Label, Section
from tests.unwind.harness import UnwindCase, Walked

STACK_START = 0x8000000080000000
MODULE1 = 0x7400C0000000
MODULE2 = 0x7500B0000000
ALL_AMD64 = frozenset(
    {"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", *(f"r{i}" for i in range(8, 16)), "rip"}
)


def case(
    tmp_path: Path, symbols1: str | None = None, symbols2: str | None = None, os: Os = Os.LINUX
) -> UnwindCase:
    return (
        UnwindCase(tmp_path, Cpu.AMD64, os)
        .add_module(MODULE1, 0x10000, "module1", symbols1)
        .add_module(MODULE2, 0x10000, "module2", symbols2)
    )


def test_amd64_context_frame_only_without_stack_memory(tmp_path: Path) -> None:
    walk = case(tmp_path).walk(None, rip=MODULE1 + 0x200, rbp=0x8000000080000000)
    assert len(walk.frames) == 1
    frame = walk.frames[0]
    assert frame.trust is FrameTrust.CONTEXT and frame.found_by is None
    assert frame.module is not None and frame.module.code_file == "module1"
    assert frame.context.valid == ALL_AMD64
    assert walk.termination.reason is TerminationReason.NO_STACK_MEMORY


def test_amd64_frame_pointer_chain(tmp_path: Path) -> None:
    """The callee pushed the caller's rbp below the return address and points rbp at it."""
    return_address = MODULE2 + 0x110
    frame0_rbp, frame1_sp, frame1_rbp = Label(), Label(), Label()
    stack = Section(start=STACK_START)
    stack.append_repeated(0, 16)
    stack.d64(0x7400B0000000).d64(0x7500B0000000)  # junk that is not a return address
    stack.d64(MODULE1 + 0x1000).d64(MODULE2 + 0xAAAA)  # plausible, but not in functions
    stack.mark(frame0_rbp).d64(frame1_rbp).d64(return_address)
    stack.mark(frame1_sp).append_repeated(0, 32).mark(frame1_rbp).d64(0)
    walk = case(tmp_path).walk(stack, rip=MODULE1 + 0x200, rbp=frame0_rbp.value, rsp=STACK_START)

    assert [f.trust for f in walk.frames] == [FrameTrust.CONTEXT, FrameTrust.FRAME_POINTER]
    caller = walk.frames[1]
    assert caller.context.valid == {"rip", "rsp", "rbp"}
    assert (caller.context.get("rip"), caller.context.get("rsp"), caller.context.get("rbp")) == (
        return_address,
        frame1_sp.value,
        frame1_rbp.value,
    )
    assert caller.instruction == return_address - 1 and caller.return_address == return_address
    assert walk.attempts(1) == [
        (Strategy.CFI, Outcome.NOT_APPLICABLE),
        (Strategy.FRAME_POINTER, Outcome.FOUND),
    ]
    assert walk.step(1).attempts[0].reason == "module1 has no symbols"
    detail = walk.chosen(1).detail
    assert isinstance(detail, FramePointerDetail) and detail.value == frame0_rbp.value
    [probe] = detail.probes
    assert probe.accepted and [w.value for w in probe.reads] == [return_address, frame1_rbp.value]
    assert all(check.passed for check in probe.checks)
    assert [c.passed for c in walk.step(1).post_checks] == [True, True]
    # Frame 1's rbp record reads past the stack; the scan finds nothing in the zeros.
    assert walk.termination.reason is TerminationReason.NO_CALLER
    assert [a.outcome for a in walk.termination.failed_attempts] == [
        Outcome.NOT_APPLICABLE,
        Outcome.FAILED,
        Outcome.FAILED,
    ]


def _windows_frame_pointer_stack() -> tuple[Section, Label, Label, Label, int]:
    return_address = MODULE2 + 0x110
    frame0_rbp, frame1_sp, frame1_rbp = Label(), Label(), Label()
    stack = Section(start=STACK_START)
    stack.append_repeated(0, 16).d64(0xB0000000).d64(0xB0000000)
    stack.mark(frame0_rbp).d64(0xC0001000).d64(0xB000AAAA)  # rbp points into the middle of the frame
    stack.d64(frame1_rbp).d64(return_address)
    stack.mark(frame1_sp).append_repeated(0, 32).mark(frame1_rbp).d64(0)
    return stack, frame0_rbp, frame1_sp, frame1_rbp, return_address


def test_amd64_windows_frame_pointer_offsets(tmp_path: Path) -> None:
    """rust-minidump 0.26: on Windows the frame record may sit up to 240 bytes above rbp."""
    stack, frame0_rbp, frame1_sp, frame1_rbp, return_address = _windows_frame_pointer_stack()
    walk = case(tmp_path, os=Os.WINDOWS).walk(
        stack,
        options=WalkOptions.rust_minidump_main(),
        rip=MODULE1 + 0x200,
        rbp=frame0_rbp.value,
        rsp=STACK_START,
    )
    caller = walk.frames[1]
    assert caller.trust is FrameTrust.FRAME_POINTER
    assert caller.context.valid == {"rip", "rsp", "rbp"}
    assert (caller.context.get("rip"), caller.context.get("rsp"), caller.context.get("rbp")) == (
        return_address,
        frame1_sp.value,
        frame1_rbp.value,
    )
    detail = walk.chosen(1).detail
    assert isinstance(detail, FramePointerDetail)
    assert [(p.offset, p.accepted) for p in detail.probes] == [(0, False), (16, True)]
    assert not detail.probes[0].checks[0].passed  # 0xB000AAAA < caller rsp: not a frame record


def test_amd64_windows_frame_pointer_not_used_by_rust_minidump_0_25(tmp_path: Path) -> None:
    stack, frame0_rbp, frame1_sp, _, return_address = _windows_frame_pointer_stack()
    walk = case(tmp_path, os=Os.WINDOWS).walk(
        stack, rip=MODULE1 + 0x200, rbp=frame0_rbp.value, rsp=STACK_START
    )
    assert walk.attempts(1) == [
        (Strategy.CFI, Outcome.NOT_APPLICABLE),
        (Strategy.FRAME_POINTER, Outcome.NOT_APPLICABLE),
        (Strategy.SCAN, Outcome.FOUND),
    ]
    assert walk.frames[1].trust is FrameTrust.SCAN
    assert walk.frames[1].context.get("rip") == return_address
    assert walk.frames[1].context.get("rsp") == frame1_sp.value


def test_amd64_scan_without_symbols(tmp_path: Path) -> None:
    """Without symbols any word inside a module is a return address; three frames by scanning."""
    return_address1, return_address2 = MODULE2 + 0x100, MODULE2 + 0x900
    frame1_sp, frame2_sp, frame1_rbp = Label(), Label(), Label()
    stack = Section(start=STACK_START)
    stack.append_repeated(0, 16).d64(0x7400B0000000).d64(0x7500D0000000).d64(return_address1)
    stack.mark(frame1_sp).append_repeated(0, 16).d64(0x7400B0000000).d64(0x7500D0000000)
    stack.mark(frame1_rbp).d64(STACK_START)  # where a saved rbp would be, but bogus
    stack.d64(return_address2)
    stack.mark(frame2_sp).append_repeated(0, 32)
    walk = case(tmp_path).walk(stack, rip=MODULE1 + 0x200, rbp=frame1_rbp.value, rsp=STACK_START)

    assert [f.trust for f in walk.frames] == [FrameTrust.CONTEXT, FrameTrust.SCAN, FrameTrust.SCAN]
    f1, f2 = walk.frames[1], walk.frames[2]
    assert f1.context.valid == {"rip", "rsp", "rbp"}
    assert (f1.context.get("rip"), f1.context.get("rsp"), f1.context.get("rbp")) == (
        return_address1,
        frame1_sp.value,
        frame1_rbp.value,
    )
    assert f2.context.valid == {"rip", "rsp"}
    assert (f2.context.get("rip"), f2.context.get("rsp")) == (return_address2, frame2_sp.value)
    scan = walk.chosen(1).detail
    assert isinstance(scan, ScanDetail) and scan.window_words == 160  # from the context frame
    assert [(c.accepted, c.reason) for c in scan.candidates] == [
        (False, "null"),
        (False, "null"),
        (False, "not in any loaded module"),
        (False, "not in any loaded module"),
        (True, "in a module without usable symbols"),
    ]
    scan2 = walk.chosen(2).detail
    assert isinstance(scan2, ScanDetail) and scan2.window_words == 40
    assert [c.reason for c in scan2.candidates if not c.accepted][-1] == "not a canonical address"
    # The bogus saved rbp (below the return address) is not recovered.
    assert [c.passed for c in scan2.frame_pointer_checks] == [False, False]


def test_amd64_scan_skips_non_code_word(tmp_path: Path) -> None:
    """With symbols, words in a module but outside every FUNC/PUBLIC are not return addresses."""
    return_address = MODULE2 + 0x110
    frame1_rsp, frame1_rbp = Label(), Label()
    stack = Section(start=STACK_START)
    stack.append_repeated(0, 16).d64(0x7400B0000000).d64(0x7500B0000000)
    stack.d64(MODULE1 + 0x1000).d64(MODULE2 + 0xAAAA).d64(return_address)
    stack.mark(frame1_rsp).append_repeated(0, 32).mark(frame1_rbp)
    walk = case(tmp_path, "FUNC 100 400 10 monotreme\n", "FUNC 100 400 10 marsupial\n").walk(
        stack, rip=MODULE1 + 0x200, rbp=frame1_rbp.value, rsp=STACK_START
    )
    assert len(walk.frames) == 2
    caller = walk.frames[1]
    assert caller.trust is FrameTrust.SCAN and caller.function_name == "marsupial"
    assert caller.context.valid == {"rip", "rsp", "rbp"}
    assert (caller.context.get("rip"), caller.context.get("rsp"), caller.context.get("rbp")) == (
        return_address,
        frame1_rsp.value,
        frame1_rbp.value,
    )
    scan = walk.chosen(1).detail
    assert isinstance(scan, ScanDetail)
    rejected = [(c.value, c.module, c.reason) for c in scan.candidates if not c.accepted and c.value]
    assert rejected == [
        (0x7400B0000000, None, "not in any loaded module"),
        (0x7500B0000000, None, "not in any loaded module"),  # value - 1 is below module2
        (MODULE1 + 0x1000, "module1", "no FUNC or PUBLIC symbol covers it"),
        (MODULE2 + 0xAAAA, "module2", "no FUNC or PUBLIC symbol covers it"),
    ]
    accepted = scan.accepted
    assert accepted is not None and (accepted.symbol, accepted.reason) == ("marsupial", "inside a function")
    assert [c.passed for c in scan.frame_pointer_checks] == [False, True]  # rbp kept: above the caller's rsp


CFI_SYMBOLS = (
    "FUNC 4000 1000 10 enchiridion\n"
    "STACK CFI INIT 4000 100 .cfa: $rsp 8 + .ra: .cfa 8 - ^\n"
    "STACK CFI 4001 .cfa: $rsp 16 + $rbx: .cfa 16 - ^\n"
    "STACK CFI 4002 $r12: $rbx\n"
    "STACK CFI 4003 .cfa: $rsp 40 + $r13: .cfa 32 - ^\n"
    "STACK CFI 4005 .ra: $r13\n"
    "STACK CFI 4006 .cfa: $rbp 16 + $rbp: .cfa 24 - ^\n"
    "FUNC 5000 1000 10 epictetus\n"
    "STACK CFI INIT 5000 1000 .cfa: $rsp .ra 0\n"
)
CFI_REGISTERS = {
    "rsp": STACK_START,
    "rbp": 0x68995B1DE4700266,
    "rbx": 0x5A5BEEB38DE23BE8,
    "r12": 0xED1B02E8CC0FC79C,
    "r13": 0x1D20AD8ACACBE930,
    "r14": 0xE94CFFC2F7ADAA28,
    "r15": 0xB638D17D8DA413B5,
}
CALLER_VALID = {"rip", "rbx", "rbp", "rsp", "r12", "r13", "r14", "r15"}


def _cfi_walk(tmp_path: Path, stack: Section, rip: int, **overrides: int) -> Walked:
    registers = {**CFI_REGISTERS, **overrides}
    return case(tmp_path, CFI_SYMBOLS).walk(stack, rip=rip, **registers)


def _check_cfi_caller(walk: Walked, frame1_rsp: int, **expected: int) -> None:
    assert [f.trust for f in walk.frames] == [FrameTrust.CONTEXT, FrameTrust.CFI]
    caller = walk.frames[1]
    assert caller.context.valid == CALLER_VALID
    values = {**CFI_REGISTERS, "rip": MODULE1 + 0x5510, "rsp": frame1_rsp, **expected}
    for name in CALLER_VALID:
        assert caller.context.get(name) == values[name], name
    assert caller.function_name == "epictetus"
    # epictetus's rules have no .ra: the walk ends after CFI, frame pointer and scan fail.
    assert walk.termination.reason is TerminationReason.NO_CALLER
    failed = walk.termination.failed_attempts[0]
    assert failed.strategy is Strategy.CFI and failed.reason == "the rules have no .ra rule"


def test_amd64_cfi_at_function_entry(tmp_path: Path) -> None:
    frame1_rsp = Label()
    stack = Section(start=STACK_START).d64(MODULE1 + 0x5510).mark(frame1_rsp).append_repeated(0, 1000)
    walk = _cfi_walk(tmp_path, stack, MODULE1 + 0x4000)
    _check_cfi_caller(walk, frame1_rsp.value)
    detail = walk.chosen(1).detail
    assert isinstance(detail, CfiDetail)
    assert detail.init is not None and detail.init.address == 0x4000 and detail.rows_applied == ()
    assert detail.forwarded == ("r12", "r13", "r14", "r15", "rbp", "rbx")
    cfa, ra = detail.evaluations
    assert (cfa.register, cfa.effect, cfa.result.value) == (".cfa", RuleEffect.CFA, STACK_START + 8)
    assert (ra.register, ra.effect, ra.result.value) == (".ra", RuleEffect.RETURN_ADDRESS, MODULE1 + 0x5510)
    assert [(r.address, r.value) for r in ra.result.reads] == [(STACK_START, MODULE1 + 0x5510)]
    assert [step.token for step in ra.result.steps] == [".cfa", "8", "-", "^"]


def test_amd64_cfi_with_pushed_registers(tmp_path: Path) -> None:
    """A delta row: the callee pushed rbx, so the CFA moved and rbx is read back from the frame."""
    frame1_rsp = Label()
    stack = Section(start=STACK_START)
    stack.d64(0x5A5BEEB38DE23BE8).d64(MODULE1 + 0x5510).mark(frame1_rsp).append_repeated(0, 1000)
    walk = _cfi_walk(tmp_path, stack, MODULE1 + 0x4001, rbx=0xBE0487D2F9EB13B0)
    _check_cfi_caller(walk, frame1_rsp.value)
    detail = walk.chosen(1).detail
    assert isinstance(detail, CfiDetail)
    assert [row.address for row in detail.rows_applied] == [0x4001]
    rbx = next(e for e in detail.evaluations if e.register == "rbx")
    assert rbx.effect is RuleEffect.SET and rbx.result.value == 0x5A5BEEB38DE23BE8
    assert [(r.address, r.value) for r in rbx.result.reads] == [(STACK_START, 0x5A5BEEB38DE23BE8)]


def test_amd64_cfi_register_saved_in_another_register(tmp_path: Path) -> None:
    """`$r12: $rbx`: the caller's r12 lives in the callee's rbx (weird, but permitted)."""
    frame1_rsp = Label()
    stack = Section(start=STACK_START)
    stack.d64(0x5A5BEEB38DE23BE8).d64(MODULE1 + 0x5510).mark(frame1_rsp).append_repeated(0, 1000)
    walk = _cfi_walk(tmp_path, stack, MODULE1 + 0x4002, rbx=0xED1B02E8CC0FC79C, r12=0xB0118DE918A4BCEB)
    _check_cfi_caller(walk, frame1_rsp.value)


def test_amd64_cfi_return_address_in_register(tmp_path: Path) -> None:
    """`.ra: $r13`: the return address was moved into r13; r13 itself was saved in the frame."""
    frame1_rsp = Label()
    stack = Section(start=STACK_START)
    stack.d64(0xDD5A48C848C774CB).d64(0x1D20AD8ACACBE930)  # saved r13
    stack.d64(0xF2DD8CE4D9AB0B1F).d64(0x5A5BEEB38DE23BE8)  # saved rbx
    stack.d64(0x0A5C3B8F22A6C6F3)  # garbage return address: .ra comes from r13
    stack.mark(frame1_rsp).append_repeated(0, 1000)
    walk = _cfi_walk(
        tmp_path,
        stack,
        MODULE1 + 0x4005,
        rbx=0xED1B02E8CC0FC79C,
        r12=0x26E007B341ACFEBD,
        r13=MODULE1 + 0x5510,
    )
    _check_cfi_caller(walk, frame1_rsp.value)
    detail = walk.chosen(1).detail
    assert isinstance(detail, CfiDetail)
    assert dict(detail.rules)[".ra"] == "$r13"


def test_amd64_cfi_frame_pointer_rule(tmp_path: Path) -> None:
    """`.cfa: $rbp 16 +`: after the prologue the CFA is computed from the frame pointer."""
    frame1_rsp, frame0_rbp = Label(), Label()
    stack = Section(start=STACK_START)
    stack.d64(0x043C6DFCEB91AA34).d64(0x1D20AD8ACACBE930)  # garbage, saved r13
    stack.d64(0x68995B1DE4700266).mark(frame0_rbp)  # saved rbp; the frame pointer points here
    stack.d64(0x5A5BEEB38DE23BE8).d64(0xF015EE516AD89EAB)  # saved rbx, garbage
    stack.mark(frame1_rsp).append_repeated(0, 1000)
    walk = _cfi_walk(
        tmp_path,
        stack,
        MODULE1 + 0x4006,
        rbp=frame0_rbp.value,
        rbx=0xED1B02E8CC0FC79C,
        r12=0x26E007B341ACFEBD,
        r13=MODULE1 + 0x5510,
    )
    _check_cfi_caller(walk, frame1_rsp.value)
    detail = walk.chosen(1).detail
    assert isinstance(detail, CfiDetail)
    assert dict(detail.rules)[".cfa"] == "$rbp 16 +"
    assert [row.address for row in detail.rows_applied] == [0x4001, 0x4002, 0x4003, 0x4005, 0x4006]


def test_amd64_sp_not_increasing_stops(tmp_path: Path) -> None:
    """CFI that leaves rsp unchanged: the caller is rejected and the walk ends (no endless loop)."""
    symbols = "FUNC 100 100 0 spin\nSTACK CFI INIT 100 100 .cfa: $rsp .ra: .cfa ^\n"
    stack = Section(start=STACK_START).d64(MODULE1 + 0x180).append_repeated(0, 64)
    walk = case(tmp_path, symbols).walk(stack, rip=MODULE1 + 0x120, rsp=STACK_START)
    assert len(walk.frames) == 1
    termination = walk.termination
    assert termination.reason is TerminationReason.STACK_POINTER_NOT_INCREASING
    step = termination.step
    assert step is not None and step.chosen == 0
    assert step.attempts[0].strategy is Strategy.CFI and step.attempts[0].outcome is Outcome.REJECTED
    assert [c.passed for c in step.post_checks] == [True, False]


def test_amd64_null_return_address_ends_walk(tmp_path: Path) -> None:
    symbols = "FUNC 100 100 0 start\nSTACK CFI INIT 100 100 .cfa: $rsp 8 + .ra: .cfa 8 - ^\n"
    stack = Section(start=STACK_START).d64(0x0).append_repeated(0, 64)
    walk = case(tmp_path, symbols).walk(stack, rip=MODULE1 + 0x120, rsp=STACK_START)
    assert len(walk.frames) == 1
    assert walk.termination.reason is TerminationReason.NULL_INSTRUCTION
    assert walk.termination.step is not None
    assert [c.passed for c in walk.termination.step.post_checks] == [False]


def test_amd64_frame_pointer_overflow(tmp_path: Path) -> None:
    stack = Section(start=STACK_START).append_repeated(0, 64)
    walk = case(tmp_path).walk(stack, rip=MODULE1 + 0x200, rbp=0xFFFF_FFFF_FFFF_FFF0, rsp=STACK_START)
    assert len(walk.frames) == 1
    fp = walk.termination.failed_attempts[1]
    assert fp.strategy is Strategy.FRAME_POINTER and "would overflow" in fp.reason


def test_amd64_scan_extended_after_cfi(tmp_path: Path) -> None:
    """After a CFI frame rust-minidump (PR #1087) scans 160 words, skipping JIT frames; 0.25.0 scans 40."""
    return_address = MODULE2 + 0x110
    frame1_rsp = Label()
    stack = Section(start=STACK_START).d64(MODULE1 + 0x5510).mark(frame1_rsp)
    for i, fill in enumerate((0, 1, 2, 3)):  # four undetectable "JIT" frames
        stack.append_repeated(fill, 256).d64(0x900000000000 + (0xA << (4 * i)))
    stack.d64(0x900000000001).d64(0x900000000002).d64(0x900000000003).d64(return_address)
    stack.append_repeated(0, 1000)
    registers = {**CFI_REGISTERS}
    both = case(tmp_path, CFI_SYMBOLS, "FUNC 100 400 10 marsupial\n")
    released = both.walk(stack, rip=MODULE1 + 0x4000, **registers)
    assert [f.trust for f in released.frames] == [FrameTrust.CONTEXT, FrameTrust.CFI]
    scan = released.termination.failed_attempts[-1].detail
    assert isinstance(scan, ScanDetail) and scan.window_words == 40
    main = both.walk(stack, options=WalkOptions.rust_minidump_main(), rip=MODULE1 + 0x4000, **registers)
    assert [f.trust for f in main.frames] == [FrameTrust.CONTEXT, FrameTrust.CFI, FrameTrust.SCAN]
    assert main.frames[2].context.get("rip") == return_address
    scan = main.chosen(2).detail
    assert isinstance(scan, ScanDetail) and scan.window_words == 160


def test_amd64_leaf_function(tmp_path: Path) -> None:
    """Breakpad, Windows x64: a leaf function without unwind info is unwound by simulating a return."""
    return_address = MODULE2 + 0x200
    frame1_rsp = Label()
    stack = Section(start=STACK_START).d64(return_address).mark(frame1_rsp).append_repeated(0, 64)
    registers = {"rip": MODULE1 + 0x200, "rsp": STACK_START, "rbx": 0x1234, "rbp": 0x5678}
    leaf = case(tmp_path, os=Os.WINDOWS).walk(
        stack, options=WalkOptions(policy=WalkPolicy.BREAKPAD), **registers
    )
    caller = leaf.frames[1]
    assert caller.trust is FrameTrust.LEAF
    assert caller.trust.description == "simulating a return from leaf function"
    assert caller.context.valid == ALL_AMD64  # a leaf keeps every register
    assert (caller.context.get("rip"), caller.context.get("rsp"), caller.context.get("rbx")) == (
        return_address,
        frame1_rsp.value,
        0x1234,
    )
    assert leaf.attempts(1) == [(Strategy.CFI, Outcome.NOT_APPLICABLE), (Strategy.LEAF, Outcome.FOUND)]
    detail = leaf.chosen(1).detail
    assert isinstance(detail, ScanDetail) and detail.window_words == 2 and detail.purpose == "leaf return"
    # rust-minidump has no leaf step: its scan finds the same word, trust `scan`.
    plain = case(tmp_path, os=Os.WINDOWS).walk(stack, **registers)
    assert plain.frames[1].trust is FrameTrust.SCAN
    assert plain.frames[1].context.get("rip") == return_address


def test_amd64_scan_window_breakpad_161_words(tmp_path: Path) -> None:
    """Breakpad's scan loop is inclusive: from the context frame it looks at 161 words, not 160."""
    return_address = MODULE2 + 0x200
    stack = Section(start=STACK_START).append_repeated(0, 160 * 8).d64(return_address).append_repeated(0, 64)
    rust = case(tmp_path).walk(stack, rip=MODULE1 + 0x200, rsp=STACK_START)
    assert len(rust.frames) == 1
    scan = rust.termination.failed_attempts[-1].detail
    assert isinstance(scan, ScanDetail) and len(scan.candidates) == 160
    breakpad = case(tmp_path).walk(
        stack, options=WalkOptions(policy=WalkPolicy.BREAKPAD), rip=MODULE1 + 0x200, rsp=STACK_START
    )
    assert [f.trust for f in breakpad.frames] == [FrameTrust.CONTEXT, FrameTrust.SCAN]
    scan = breakpad.chosen(1).detail
    assert isinstance(scan, ScanDetail) and scan.window_words == 161 and len(scan.candidates) == 161


def test_amd64_breakpad_frame_pointer_needs_aligned_rbp(tmp_path: Path) -> None:
    return_address = MODULE2 + 0x110
    frame0_rbp, frame1_rbp = Label(), Label()
    stack = Section(start=STACK_START).append_repeated(0, 8)
    stack.mark(frame0_rbp).d64(frame1_rbp).d64(return_address).append_repeated(0, 32).mark(frame1_rbp).d64(0)
    options = WalkOptions(policy=WalkPolicy.BREAKPAD)
    aligned = case(tmp_path).walk(
        stack, options=options, rip=MODULE1 + 0x200, rbp=frame0_rbp.value, rsp=STACK_START
    )
    assert aligned.frames[1].trust is FrameTrust.FRAME_POINTER
    odd = case(tmp_path).walk(
        stack, options=options, rip=MODULE1 + 0x200, rbp=frame0_rbp.value + 4, rsp=STACK_START
    )
    fp = odd.step(1).attempts[1]
    assert fp.strategy is Strategy.FRAME_POINTER and fp.reason == "rbp is not 8-aligned"
    assert odd.frames[1].trust is FrameTrust.SCAN


@pytest.mark.parametrize("limit", [1, 3])
def test_amd64_frame_limit_stops_walk(tmp_path: Path, limit: int) -> None:
    """A hard cap on frames: the walk stops with a clear termination."""
    stack = Section(start=STACK_START)
    links = [Label() for _ in range(6)]
    for i, link in enumerate(links):
        stack.mark(link)
        stack.d64(links[i + 1] if i + 1 < len(links) else 0).d64(MODULE2 + 0x100 + i).append_repeated(0, 16)
    walk = case(tmp_path).walk(
        stack,
        options=WalkOptions(max_frames=limit),
        rip=MODULE1 + 0x200,
        rbp=links[0].value,
        rsp=STACK_START - 8,
    )
    assert len(walk.frames) == limit
    assert walk.termination.reason is TerminationReason.MAX_FRAMES
    assert walk.termination.message == f"stopped after {limit} frames (the frame limit)"


def test_amd64_breakpad_scanned_frame_limit(tmp_path: Path) -> None:
    """Breakpad stops scanning after max_frames_scanned_ (2^14) scanned frames; here 2."""
    stack = Section(start=STACK_START)
    for i in range(8):
        stack.d64(MODULE2 + 0x100 + 0x10 * i)
    stack.append_repeated(0, 64)
    options = WalkOptions(policy=WalkPolicy.BREAKPAD, max_scanned_frames=2)
    walk = case(tmp_path).walk(stack, options=options, rip=MODULE1 + 0x200, rsp=STACK_START, rbp=1)
    assert [f.trust for f in walk.frames] == [FrameTrust.CONTEXT, FrameTrust.SCAN, FrameTrust.SCAN]
    scan = walk.termination.failed_attempts[-1]
    assert (scan.strategy, scan.outcome) == (Strategy.SCAN, Outcome.NOT_APPLICABLE)
    assert scan.reason == "scanning is disabled after 2 scanned frames"
    unlimited = case(tmp_path).walk(stack, rip=MODULE1 + 0x200, rsp=STACK_START, rbp=1)
    assert len(unlimited.frames) == 9


def test_frame_limits_per_policy() -> None:
    assert WalkOptions().frame_limit == 100_000 and WalkOptions().scanned_frame_limit is None
    breakpad = WalkOptions(policy=WalkPolicy.BREAKPAD)
    assert (breakpad.frame_limit, breakpad.scanned_frame_limit) == (1 << 20, 1 << 14)
