"""32-bit ARM unwinding: scans, the iOS frame pointer, CFI with ARM register names, leaf frames.

Modules: module1 at 0x40000000 and module2 at 0x50000000; stacks start at 0x80000000.
"""

from __future__ import annotations

from pathlib import Path

from inspector.core.types import Cpu, Os
from inspector.core.unwind import (
    CfiDetail,
    FrameTrust,
    Outcome,
    ScanDetail,
    Strategy,
    TerminationReason,
    WalkOptions,
    WalkPolicy,
)
from tests.synth.section import Label, Section
from tests.unwind.harness import UnwindCase

STACK_START = 0x80000000
MODULE1 = 0x40000000
MODULE2 = 0x50000000
FORWARDED = frozenset({"pc", "sp", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "fp"})


def case(tmp_path: Path, symbols1: str | None = None, os: Os = Os.ANDROID) -> UnwindCase:
    return (
        UnwindCase(tmp_path, Cpu.ARM, os)
        .add_module(MODULE1, 0x10000, "module1", symbols1)
        .add_module(MODULE2, 0x10000, "module2")
    )


def test_arm_scan(tmp_path: Path) -> None:
    """No CFI, no frame pointer off iOS: two callers by scanning, each with only pc and sp."""
    return_address1, return_address2 = MODULE2 + 0x100, MODULE2 + 0x900
    frame1_sp, frame2_sp = Label(), Label()
    stack = (
        Section(start=STACK_START).append_repeated(0, 16).d32(0x40090000).d32(0x60000000).d32(return_address1)
    )
    stack.mark(frame1_sp).append_repeated(0, 16).d32(0xF0000000).d32(0x0000000D).d32(return_address2)
    stack.mark(frame2_sp).append_repeated(0, 32)
    walk = case(tmp_path).walk(stack, pc=MODULE1 + 0x5510, fp=1, sp=STACK_START)
    assert [f.trust for f in walk.frames] == [FrameTrust.CONTEXT, FrameTrust.SCAN, FrameTrust.SCAN]
    f1, f2 = walk.frames[1], walk.frames[2]
    assert f1.context.valid == {"pc", "sp"} and f2.context.valid == {"pc", "sp"}
    assert (f1.context.get("pc"), f1.context.get("sp")) == (return_address1, frame1_sp.value)
    assert (f2.context.get("pc"), f2.context.get("sp")) == (return_address2, frame2_sp.value)
    assert f1.instruction == return_address1 - 2
    assert walk.attempts(1) == [
        (Strategy.CFI, Outcome.NOT_APPLICABLE),
        (Strategy.FRAME_POINTER, Outcome.NOT_APPLICABLE),
        (Strategy.SCAN, Outcome.FOUND),
    ]
    assert walk.step(1).attempts[1].reason == "only used on iOS"
    scan = walk.chosen(1).detail
    assert isinstance(scan, ScanDetail) and scan.word_size == 4
    assert [c.reason for c in scan.candidates][-3:] == [
        "not in any loaded module",
        "not in any loaded module",
        "in a module without usable symbols",
    ]


def test_arm_scan_first_frame_window(tmp_path: Path) -> None:
    """The context frame gets a 160-word scan; later frames 40."""
    return_address1, return_address2 = MODULE2 + 0x100, MODULE2 + 0x900
    frame1_sp, frame2_sp = Label(), Label()
    stack = Section(start=STACK_START).append_repeated(0, 150 * 4).d32(return_address1)
    stack.mark(frame1_sp).append_repeated(0, 50 * 4).d32(return_address2)  # beyond 40 words
    stack.mark(frame2_sp).append_repeated(0, 32)
    walk = case(tmp_path).walk(stack, pc=MODULE1 + 0x5510, fp=1, sp=STACK_START)
    assert [f.trust for f in walk.frames] == [FrameTrust.CONTEXT, FrameTrust.SCAN]
    assert walk.frames[1].context.get("pc") == return_address1
    failed = walk.termination.failed_attempts[-1].detail
    assert isinstance(failed, ScanDetail) and failed.window_words == 40 and len(failed.candidates) == 40


def test_arm_frame_pointer_ios(tmp_path: Path) -> None:
    """On iOS the frame record is trusted: fp' = *fp, pc = *(fp+4), sp' = fp+8."""
    return_address1, return_address2 = MODULE2 + 0x100, MODULE2 + 0x900
    frame0_fp, frame1_fp, frame2_fp, frame1_sp, frame2_sp = Label(), Label(), Label(), Label(), Label()
    stack = Section(start=STACK_START).append_repeated(0, 32).d32(0xD).d32(0xF0000000)
    stack.mark(frame0_fp).d32(frame1_fp).d32(return_address1).mark(frame1_sp)
    stack.append_repeated(0, 32).d32(0xD).d32(0xF0000000)
    stack.mark(frame1_fp).d32(frame2_fp).d32(return_address2).mark(frame2_sp)
    stack.append_repeated(0, 32).d32(0xD).d32(0xF0000000).mark(frame2_fp).d32(0).d32(0)
    walk = case(tmp_path, os=Os.IOS).walk(
        stack, pc=MODULE1 + 0x5510, lr=return_address1, fp=frame0_fp.value, sp=STACK_START
    )
    assert [f.trust for f in walk.frames] == [
        FrameTrust.CONTEXT,
        FrameTrust.FRAME_POINTER,
        FrameTrust.FRAME_POINTER,
    ]
    f1 = walk.frames[1]
    assert f1.context.valid == {"pc", "fp", "sp"}
    assert (f1.context.get("pc"), f1.context.get("sp"), f1.context.get("fp")) == (
        return_address1,
        frame1_sp.value,
        frame1_fp.value,
    )
    assert walk.frames[2].context.get("sp") == frame2_sp.value
    # frame 2's record is (0, 0): pc 0 ends the walk
    assert walk.termination.reason is TerminationReason.NULL_INSTRUCTION


def test_arm_frame_pointer_loop_stops(tmp_path: Path) -> None:
    """A frame record pointing at itself: sp does not grow after the first unwind, so the walk ends."""
    return_address1 = MODULE2 + 0x100
    frame0_fp = Label()
    stack = Section(start=STACK_START).append_repeated(0, 32).d32(0xD).d32(0xF0000000)
    stack.mark(frame0_fp).d32(frame0_fp).d32(return_address1).append_repeated(0, 64)
    walk = case(tmp_path, os=Os.IOS).walk(
        stack, pc=MODULE1 + 0x5510, lr=return_address1, fp=frame0_fp.value, sp=STACK_START
    )
    assert len(walk.frames) == 2
    assert walk.termination.reason is TerminationReason.STACK_POINTER_NOT_INCREASING


ARM_CFI = (
    "FUNC 4000 1000 10 enchiridion\n"
    "STACK CFI INIT 4000 100 .cfa: sp 0 + .ra: lr\n"
    "STACK CFI 4001 .cfa: sp 12 + r4: .cfa 12 - ^ r11: .cfa 8 - ^ .ra: .cfa 4 - ^\n"
    "FUNC 5000 1000 10 epictetus\n"
    "STACK CFI INIT 5000 1000 .cfa: 0 .ra: 0\n"
)


def test_arm_cfi_leaf_keeps_sp(tmp_path: Path) -> None:
    """A leaf at its entry: `.cfa: sp 0 +`, `.ra: lr`. sp may stay equal for the context frame's caller."""
    stack = Section(start=STACK_START).append_repeated(0, 64)
    registers = {
        "pc": MODULE1 + 0x4000,
        "lr": MODULE1 + 0x5510,
        "sp": STACK_START,
        "r4": 0xB5D55E68,
        "fp": 0x8112E110,
    }
    walk = case(tmp_path, ARM_CFI).walk(stack, **registers)
    assert [f.trust for f in walk.frames] == [FrameTrust.CONTEXT, FrameTrust.CFI]
    f1 = walk.frames[1]
    assert f1.context.valid == FORWARDED  # pc/sp from .ra/.cfa, r4-r10 and fp forwarded
    assert (f1.context.get("pc"), f1.context.get("sp"), f1.context.get("r4")) == (
        MODULE1 + 0x5510,
        STACK_START,
        0xB5D55E68,
    )
    checks = walk.step(1).post_checks
    assert checks[1].passed and "equal allowed" in checks[1].description
    detail = walk.chosen(1).detail
    assert isinstance(detail, CfiDetail) and dict(detail.rules)[".ra"] == "lr"


def test_arm_cfi_register_aliases(tmp_path: Path) -> None:
    """CFI rules name r11 (the frame pointer); the caller's fp comes back under its canonical name."""
    frame1_sp = Label()
    stack = Section(start=STACK_START).d32(0x635ADC9F).d32(0xBE6A6C0F).d32(MODULE1 + 0x5510).mark(frame1_sp)
    stack.append_repeated(0, 64)
    registers = {"pc": MODULE1 + 0x4001, "lr": 0x1, "sp": STACK_START, "r4": 0x1, "fp": 0x2}
    walk = case(tmp_path, ARM_CFI).walk(stack, **registers)
    f1 = walk.frames[1]
    assert f1.context.valid == FORWARDED
    assert (f1.context.get("r4"), f1.context.get("fp"), f1.context.get("sp")) == (
        0x635ADC9F,
        0xBE6A6C0F,
        frame1_sp.value,
    )


def test_arm_breakpad_skips_cfi_on_ios(tmp_path: Path) -> None:
    """Breakpad does not use STACK CFI for iOS ARM (it relies on the r7 frame chain)."""
    stack = Section(start=STACK_START).append_repeated(0, 64)
    registers = {"pc": MODULE1 + 0x4000, "lr": MODULE1 + 0x5510, "sp": STACK_START, "fp": 0}
    bp = case(tmp_path, ARM_CFI, os=Os.IOS).walk(
        stack, options=WalkOptions(policy=WalkPolicy.BREAKPAD), **registers
    )
    assert len(bp.frames) == 1
    cfi = bp.termination.failed_attempts[0]
    assert (cfi.strategy, cfi.outcome) == (Strategy.CFI, Outcome.NOT_APPLICABLE)
    assert cfi.reason == "Breakpad does not use CFI on iOS ARM"
    rust = case(tmp_path, ARM_CFI, os=Os.IOS).walk(stack, **registers)
    assert rust.frames[1].trust is FrameTrust.CFI
