"""32-bit ARM unwinder: STACK CFI → frame pointer (iOS only) → stack scan (rust-minidump's order).

Under the Breakpad policy: STACK CFI is skipped on iOS, and the scan windows and
termination rule are Breakpad's.
"""

from __future__ import annotations

from inspector.core.minidump import CpuContext
from inspector.core.types import Cpu, Os
from inspector.core.unwind.cfi import cfi_strategy
from inspector.core.unwind.cpu import CpuDescription
from inspector.core.unwind.frame import FrameTrust, StackFrame
from inspector.core.unwind.options import WalkPolicy
from inspector.core.unwind.step import (
    BREAKPAD_SP,
    LEAF_TOLERANT_SP,
    NULL_INSTRUCTION,
    CpuUnwinder,
    StrategyResult,
    ThreadWalk,
    scan_from_stack_pointer,
    scan_opening,
    scanned_caller,
)
from inspector.core.unwind.trace import (
    FramePointerDetail,
    FramePointerProbe,
    Outcome,
    Strategy,
    StrategyAttempt,
)

# ---- the CPU --------------------------------------------------------------------------------

U32 = 0xFFFF_FFFF
ARM = CpuDescription(
    Cpu.ARM,
    word_size=4,
    instruction_pointer="pc",
    stack_pointer="sp",
    frame_pointer="fp",  # r11; rust-minidump uses it on iOS too
    callee_saved=("r4", "r5", "r6", "r7", "r8", "r9", "r10", "fp"),
    instruction_adjustment=2,
    link_register="lr",
)
POINTER_WIDTH = ARM.word_size

# ---- strategies -----------------------------------------------------------------------------

#: STACK CFI (rust-minidump).
caller_by_cfi = cfi_strategy


def _breakpad_cfi(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """STACK CFI, except on iOS where Breakpad does not use it."""
    if walk.env.os is Os.IOS:
        return StrategyResult.failed(
            StrategyAttempt(Strategy.CFI, Outcome.NOT_APPLICABLE, "Breakpad does not use CFI on iOS ARM")
        )
    return cfi_strategy(callee, walk)


def caller_by_frame_pointer(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """iOS only: fp' = *fp, pc = *(fp+4), sp' = fp+8, no further checks.

    Situation: elsewhere lr may be used as a general register, so the frame record is not
    trustworthy; iOS guarantees it. A zero fp yields (pc 0, sp unchanged) so that the
    post-checks end the walk.
    """
    strategy = Strategy.FRAME_POINTER
    ctx = callee.context
    if walk.env.os is not Os.IOS:
        return StrategyResult.failed(StrategyAttempt(strategy, Outcome.NOT_APPLICABLE, "only used on iOS"))
    last_fp, last_sp = ctx.get("fp"), ctx.get("sp")
    if last_fp is None or last_sp is None:
        return StrategyResult.failed(
            StrategyAttempt(strategy, Outcome.NOT_APPLICABLE, "fp or sp is not known")
        )
    if last_fp >= U32 - POINTER_WIDTH * 2:
        return StrategyResult.failed(
            StrategyAttempt(strategy, Outcome.FAILED, f"fp {last_fp:#x} would overflow")
        )
    if last_fp == 0:
        caller_fp, caller_pc, caller_sp = 0, 0, last_sp
        probe = FramePointerProbe(0, (), (), True)
    else:
        fp_word = walk.memory.word(last_fp, 4, "caller fp", "fp")
        pc_word = walk.memory.word(last_fp + 4, 4, "return address", "pc")
        read_fp, read_pc = fp_word[2], pc_word[2]
        ok = read_fp is not None and read_pc is not None
        probe = FramePointerProbe(0, (fp_word, pc_word), (), ok)
        if read_fp is None or read_pc is None:
            detail = FramePointerDetail("fp", last_fp, (probe,))
            return StrategyResult.failed(
                StrategyAttempt(strategy, Outcome.FAILED, "cannot read the frame record", detail)
            )
        caller_fp, caller_pc, caller_sp = read_fp, read_pc, last_fp + 8
    caller = CpuContext.from_registers(ctx.cpu, {"pc": caller_pc, "fp": caller_fp, "sp": caller_sp})
    detail = FramePointerDetail("fp", last_fp, (probe,))
    reason = "fp is 0: end of the chain" if last_fp == 0 else f"frame record at fp {last_fp:#x}"
    attempt = StrategyAttempt(strategy, Outcome.FOUND, reason, detail, caller)
    return StrategyResult((attempt,), caller, FrameTrust.FRAME_POINTER)


def caller_by_scan(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """Stack scan; no pre-filter and no fp recovery (as Breakpad)."""
    closed = scan_opening(callee, walk)
    if closed is not None:
        return closed
    cpu = callee.context.cpu
    return scanned_caller(
        scan_from_stack_pointer(callee, walk),
        lambda slot, pc: CpuContext.from_registers(cpu, {"pc": pc, "sp": slot + 4}),
    )


UNWINDER = CpuUnwinder(
    ARM,
    strategies={
        WalkPolicy.RUST_MINIDUMP: (caller_by_cfi, caller_by_frame_pointer, caller_by_scan),
        WalkPolicy.BREAKPAD: (_breakpad_cfi, caller_by_frame_pointer, caller_by_scan),
    },
    post_checks={
        WalkPolicy.RUST_MINIDUMP: (NULL_INSTRUCTION, LEAF_TOLERANT_SP),
        WalkPolicy.BREAKPAD: (NULL_INSTRUCTION, BREAKPAD_SP),
    },
)
