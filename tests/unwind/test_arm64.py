"""ARM64 unwinding: frame pointers, pointer authentication, lr recovery for entry CFI, both context layouts.

Modules: module1 at 0x40000000 and module2 at 0x50000000; stacks start at 0x80000000.
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


def case(
    tmp_path: Path, symbols1: str | None = None, symbols2: str | None = None, *, old: bool = False
) -> UnwindCase:
    return (
        UnwindCase(tmp_path, Cpu.ARM64, Os.IOS, arm64_old=old)
        .add_module(MODULE1, 0x10000, "module1", symbols1)
        .add_module(MODULE2, 0x10000, "module2", symbols2)
    )


def _frame_record_stack(
    ret1: int, ret2: int, fp1_bits: int = 0, fp2_bits: int = 0
) -> tuple[Section, list[Label]]:
    frame1_sp, frame2_sp, frame0_fp, frame1_fp, frame2_fp = (Label() for _ in range(5))
    signed1, signed2 = Label(), Label()
    stack = Section(start=STACK_START).append_repeated(0, 64).d64(0xD).d64(0xF0000000)
    stack.mark(frame0_fp).d64(signed1).d64(ret1).mark(frame1_sp)
    stack.append_repeated(0, 64).d64(0xD).d64(0xF0000000)
    stack.mark(frame1_fp).d64(signed2).d64(ret2).mark(frame2_sp)
    stack.append_repeated(0, 64).d64(0xD).d64(0xF0000000).mark(frame2_fp).d64(0).d64(0)
    signed1.set(frame1_fp.value | fp1_bits)
    signed2.set(frame2_fp.value | fp2_bits)
    return stack, [frame0_fp, frame1_fp, frame2_fp, frame1_sp, frame2_sp]


#: rust-minidump after 0.25 (PR #1155): frame-pointer frames also get lr from the caller's record.
LR_RECOVERY = WalkOptions(arm64_lr_recovery=True)


@pytest.mark.parametrize("recovery", [False, True], ids=["0.25", "lr-recovery"])
@pytest.mark.parametrize("old", [False, True], ids=["new-layout", "old-layout"])
def test_arm64_frame_pointer(tmp_path: Path, old: bool, recovery: bool) -> None:
    """Assume normal frames: fp' = *fp, pc = *(fp+8), sp' = fp+16 (both context layouts).

    With `arm64_lr_recovery` (rust-minidump after 0.25) the caller's lr is read from its own
    frame record too; by default (0.25) it stays unknown and is not read.
    """
    ret1, ret2 = MODULE2 + 0x100, MODULE2 + 0x900
    stack, (frame0_fp, frame1_fp, frame2_fp, frame1_sp, frame2_sp) = _frame_record_stack(ret1, ret2)
    walk = case(tmp_path, old=old).walk(
        stack,
        options=WalkOptions(arm64_lr_recovery=recovery),
        pc=MODULE1 + 0x5510,
        lr=0x1FE0FE10,
        fp=frame0_fp.value,
        sp=STACK_START,
    )
    assert [f.trust for f in walk.frames] == [
        FrameTrust.CONTEXT,
        FrameTrust.FRAME_POINTER,
        FrameTrust.FRAME_POINTER,
    ]
    f1, f2 = walk.frames[1], walk.frames[2]
    assert f1.context.layout is walk.frames[0].context.layout
    lr = {"lr"} if recovery else set()
    assert f1.context.valid == {"pc", "fp", "sp", *lr}
    assert (f1.context.get("pc"), f1.context.get("sp"), f1.context.get("fp"), f1.context.get("lr")) == (
        ret1,
        frame1_sp.value,
        frame1_fp.value,
        ret2 if recovery else None,  # lr from the caller's own frame record
    )
    assert f1.instruction == ret1 - 4
    assert (f2.context.get("pc"), f2.context.get("sp"), f2.context.get("fp")) == (
        ret2,
        frame2_sp.value,
        frame2_fp.value,
    )
    assert f2.context.valid == {"pc", "fp", "sp", *lr}
    assert f2.context.get("lr") == (0 if recovery else None)  # frame 2's record: 0, 0
    detail = walk.chosen(1).detail
    assert isinstance(detail, FramePointerDetail)
    assert [w.role for w in detail.probes[0].reads] == [
        "caller fp",
        "return address",
        *(["caller lr (from the caller's frame record)"] if recovery else []),
    ]
    # frame 2's record holds pc 0: the frame-pointer step itself rejects it, and nothing else works
    assert walk.termination.reason is TerminationReason.NO_CALLER
    fp = walk.termination.failed_attempts[1]
    assert (fp.strategy, fp.reason) == (Strategy.FRAME_POINTER, "implausible return address")


def test_arm64_pac_signed_return_address(tmp_path: Path) -> None:
    """Pointer-authentication bits in saved lr/fp are masked off (47-bit user space)."""
    ret1, ret2 = MODULE2 + 0x100, MODULE2 + 0x900
    stack, (frame0_fp, frame1_fp, _, frame1_sp, _) = _frame_record_stack(
        ret1 | 0x0013_8000_0000_0000,
        ret2 | 0x1110_0000_0000_0000,
        0xA310_0000_0000_0000,
        0xF31E_8000_0000_0000,
    )
    walk = case(tmp_path).walk(
        stack, options=LR_RECOVERY, pc=MODULE1 + 0x5510, lr=0x1FE0FE10, fp=frame0_fp.value, sp=STACK_START
    )
    assert len(walk.frames) == 3
    f1 = walk.frames[1]
    assert (f1.context.get("pc"), f1.context.get("fp"), f1.context.get("sp")) == (
        ret1,
        frame1_fp.value,
        frame1_sp.value,
    )
    assert f1.context.get("lr") == ret2
    assert walk.frames[2].context.get("pc") == ret2
    read = walk.chosen(1).detail
    assert isinstance(read, FramePointerDetail)
    assert read.probes[0].reads[1].value == ret1 | 0x0013_8000_0000_0000  # the trace keeps the signed word


def test_arm64_cfi_pac_stripping(tmp_path: Path) -> None:
    symbols = "FUNC 4000 100 0 f\nSTACK CFI INIT 4000 100 .cfa: sp 16 + .ra: .cfa 8 - ^ x29: .cfa 16 - ^\n"
    frame1_sp = Label()
    stack = (
        Section(start=STACK_START)
        .d64(0x80000100 | 0xAB00_0000_0000_0000)
        .d64((MODULE2 + 0x104) | 0x0050_0000_0000_0000)
    )
    stack.mark(frame1_sp).append_repeated(0, 64)
    walk = case(tmp_path, symbols).walk(stack, pc=MODULE1 + 0x4010, sp=STACK_START)
    f1 = walk.frames[1]
    assert f1.trust is FrameTrust.CFI
    assert f1.context.valid >= {"pc", "sp", "fp"}
    assert (f1.context.get("pc"), f1.context.get("fp"), f1.context.get("sp")) == (
        MODULE2 + 0x104,
        0x80000100,
        frame1_sp.value,
    )


ENTRY_SYMBOLS = (
    "FUNC 1000 100 10 callee\nFUNC 2000 100 10 caller\nSTACK CFI INIT 2000 100 .cfa: sp 0 + .ra: x30\n"
)


def _lr_stack() -> tuple[Section, Label, Label, Label]:
    frame0_fp, frame1_sp, frame1_fp = Label(), Label(), Label()
    stack = Section(start=STACK_START).append_repeated(0, 64)
    stack.mark(frame0_fp).d64(frame1_fp).d64(MODULE1 + 0x2004).mark(frame1_sp)
    stack.append_repeated(0, 64).mark(frame1_fp).d64(0).d64(MODULE2 + 0x104).append_repeated(0, 64)
    return stack, frame0_fp, frame1_sp, frame1_fp


def test_arm64_lr_recovered_for_entry_cfi(tmp_path: Path) -> None:
    """rust-minidump PR #1155: an entry row `.ra: x30` reads the lr recovered from the frame record."""
    stack, frame0_fp, frame1_sp, _ = _lr_stack()
    symbols2 = "FUNC 100 100 10 grandcaller\nSTACK CFI INIT 100 100 .cfa: 0 .ra: 0\n"
    walk = case(tmp_path, ENTRY_SYMBOLS, symbols2).walk(
        stack, options=LR_RECOVERY, pc=MODULE1 + 0x1010, fp=frame0_fp.value, sp=STACK_START, lr=0x1FE0FE10
    )
    assert [f.trust for f in walk.frames] == [FrameTrust.CONTEXT, FrameTrust.FRAME_POINTER, FrameTrust.CFI]
    f2 = walk.frames[2]
    assert (f2.context.get("pc"), f2.context.get("sp"), f2.instruction) == (
        MODULE2 + 0x104,
        frame1_sp.value,
        MODULE2 + 0x100,
    )
    detail = walk.chosen(2).detail
    assert isinstance(detail, CfiDetail) and detail.note is None
    assert ("lr", MODULE2 + 0x104) in detail.callee_registers
    # sp did not change, but pc did and the caller came from CFI: allowed
    assert walk.step(2).post_checks[-1].passed
    # rust-minidump 0.25.0 (our default) did not recover lr: the entry row cannot be evaluated.
    old = case(tmp_path, ENTRY_SYMBOLS, symbols2).walk(
        stack,
        pc=MODULE1 + 0x1010,
        fp=frame0_fp.value,
        sp=STACK_START,
        lr=0x1FE0FE10,
    )
    assert old.frames[1].context.valid == {"pc", "fp", "sp"}
    assert old.attempts(2)[:2] == [(Strategy.CFI, Outcome.FAILED), (Strategy.FRAME_POINTER, Outcome.FOUND)]
    assert old.frames[2].trust is FrameTrust.FRAME_POINTER


def test_arm64_heuristic_lr_hidden_from_non_entry_cfi(tmp_path: Path) -> None:
    """The recovered lr is stale inside a function body: a non-entry row may not read it."""
    stack, frame0_fp, _, _ = _lr_stack()
    symbols = (
        "FUNC 1000 100 10 callee\nFUNC 1f00 200 10 caller\nSTACK CFI INIT 1f00 200 .cfa: sp 0 + .ra: x30\n"
    )
    walk = case(tmp_path, symbols).walk(
        stack, options=LR_RECOVERY, pc=MODULE1 + 0x1010, fp=frame0_fp.value, sp=STACK_START, lr=0x1FE0FE10
    )
    cfi = walk.step(2).attempts[0] if len(walk.frames) > 2 else walk.termination.failed_attempts[0]
    assert cfi.strategy is Strategy.CFI and cfi.outcome is Outcome.FAILED
    assert isinstance(cfi.detail, CfiDetail) and cfi.detail.note is not None
    assert "lr" not in dict(cfi.detail.callee_registers)


def test_arm64_scan(tmp_path: Path) -> None:
    """Scanning with symbols: a word in module2 outside any FUNC is skipped; values below 0x1000 too."""
    frame1_sp = Label()
    stack = (
        Section(start=STACK_START).append_repeated(0, 16).d64(0x0D).d64(MODULE2 + 0x8000).d64(MODULE2 + 0x104)
    )
    stack.mark(frame1_sp).append_repeated(0, 64)
    walk = case(tmp_path, symbols2="FUNC 100 100 0 marsupial\n").walk(
        stack, pc=MODULE1 + 0x5510, sp=STACK_START, fp=0
    )
    f1 = walk.frames[1]
    assert f1.trust is FrameTrust.SCAN and f1.context.valid == {"pc", "sp"}
    assert (f1.context.get("pc"), f1.context.get("sp"), f1.function_name) == (
        MODULE2 + 0x104,
        frame1_sp.value,
        "marsupial",
    )
    # fp 0 makes the frame-pointer step produce pc 0, which it rejects itself
    assert walk.attempts(1) == [
        (Strategy.CFI, Outcome.NOT_APPLICABLE),
        (Strategy.FRAME_POINTER, Outcome.FAILED),
        (Strategy.SCAN, Outcome.FOUND),
    ]
    scan = walk.chosen(1).detail
    assert isinstance(scan, ScanDetail)
    assert [c.reason for c in scan.candidates if not c.accepted][-2:] == [
        "outside 0x1000..=0xfffffffffffff",
        "no FUNC or PUBLIC symbol covers it",
    ]


def test_arm64_frame_pointer_loop_stops(tmp_path: Path) -> None:
    frame0_fp = Label()
    stack = (
        Section(start=STACK_START).append_repeated(0, 32).mark(frame0_fp).d64(frame0_fp).d64(MODULE2 + 0x100)
    )
    stack.append_repeated(0, 64)
    walk = case(tmp_path).walk(stack, pc=MODULE1 + 0x5510, fp=frame0_fp.value, sp=STACK_START, lr=0)
    assert len(walk.frames) == 2
    assert walk.termination.reason is TerminationReason.STACK_POINTER_NOT_INCREASING


def test_arm64_breakpad_frame_pointer_uses_lr(tmp_path: Path) -> None:
    """Breakpad: the caller's pc is the callee's lr; the frame record gives the caller's lr."""
    ret1, ret2 = MODULE2 + 0x100, MODULE2 + 0x900
    stack, (frame0_fp, frame1_fp, _, frame1_sp, _) = _frame_record_stack(ret1, ret2)
    walk = case(tmp_path).walk(
        stack,
        options=WalkOptions(policy=WalkPolicy.BREAKPAD),
        pc=MODULE1 + 0x5510,
        lr=MODULE1 + 0x6000,
        fp=frame0_fp.value,
        sp=STACK_START,
    )
    f1 = walk.frames[1]
    assert f1.trust is FrameTrust.FRAME_POINTER
    assert (f1.context.get("pc"), f1.context.get("lr"), f1.context.get("sp"), f1.context.get("fp")) == (
        MODULE1 + 0x6000,
        ret1,
        frame1_sp.value,
        frame1_fp.value,
    )


def test_arm64_breakpad_pointer_auth_strip_keeps_only_pointers_into_a_module(tmp_path: Path) -> None:
    """Breakpad: mask with the top module's end smeared down; keep the stripped pointer only in a module."""
    signed_into_module2 = (MODULE2 + 0x100) | 0x0013_8000_0000_0000
    signed_elsewhere = 0x6000_0000 | 0x1110_0000_0000_0000  # strips to 0x60000000: in no module
    stack, (frame0_fp, *_) = _frame_record_stack(signed_into_module2, signed_elsewhere)
    walk = case(tmp_path).walk(
        stack,
        options=WalkOptions(policy=WalkPolicy.BREAKPAD),
        pc=MODULE1 + 0x5510,
        lr=MODULE1 + 0x6000,
        fp=frame0_fp.value,
        sp=STACK_START,
    )
    assert walk.frames[1].context.get("lr") == MODULE2 + 0x100
    assert walk.frames[2].context.get("pc") == MODULE2 + 0x100
    assert walk.frames[2].context.get("lr") == signed_elsewhere
