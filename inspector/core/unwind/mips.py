"""MIPS unwinder (32- and 64-bit): STACK CFI → stack scan (rust-minidump's order; no frame pointer).

MIPS32 works in 4-byte words (rust-minidump's Mips32Context), MIPS64 in 8-byte words.
"""

from __future__ import annotations

from inspector.core.minidump import CpuContext
from inspector.core.unwind.cfi import cfi_strategy
from inspector.core.unwind.frame import FrameTrust, StackFrame
from inspector.core.unwind.scan import scan_stack
from inspector.core.unwind.step import (
    CallerSearch,
    CpuUnwinder,
    PostCheck,
    StrategyResult,
    ThreadWalk,
    breakpad_sp_check,
    first_success,
    instruction_check,
    leaf_tolerant_sp,
    scanned_caller,
)
from inspector.core.unwind.trace import Outcome, Strategy, StrategyAttempt

# ---- constants ------------------------------------------------------------------------------

PROGRAM_COUNTER = "pc"
STACK_POINTER = "sp"
CALLEE_SAVED_REGS = ("s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "gp", "sp", "fp")
INSTRUCTION_ADJUSTMENT = 8
#: The scan covers 1024 bytes of stack (256 words on MIPS32, 128 on MIPS64).
MAX_STACK_SIZE = 1024
#: MIPS32 callers reserve 4 argument words below the return address; skipped after frame 0.
MIN_ARGS = 4


def _prefilter(value: int) -> str | None:
    return "below 0x1000" if value < 0x1000 else None


def caller_by_cfi(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    return cfi_strategy(callee, walk, stack_pointer=STACK_POINTER, forwarded=CALLEE_SAVED_REGS)


def caller_by_scan(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """Scan 1024 bytes; on MIPS32, after the context frame, skip the 4 argument words first."""
    strategy = Strategy.SCAN
    ctx = callee.context
    sp = ctx.get(STACK_POINTER)
    if sp is None:
        return StrategyResult.failed(StrategyAttempt(strategy, Outcome.NOT_APPLICABLE, "sp is not known"))
    if not walk.scan_allowed:
        return StrategyResult.failed(
            StrategyAttempt(strategy, Outcome.NOT_APPLICABLE, walk.scan_disabled_reason)
        )
    width = walk.env.width
    count = MAX_STACK_SIZE // width
    start = sp & ((1 << (8 * width)) - 1)  # MIPS32 reads its 64-bit registers as 32-bit
    if width == 4 and callee.trust is not FrameTrust.CONTEXT:
        start += MIN_ARGS * width
        count -= MIN_ARGS
        if start > 0xFFFF_FFFF:
            return StrategyResult.failed(StrategyAttempt(strategy, Outcome.FAILED, "sp + 16 overflows"))
    result = scan_stack(walk.env, walk.memory, start=start, words=count, width=width, prefilter=_prefilter)
    return scanned_caller(
        result, lambda slot, pc: CpuContext.from_registers(ctx.cpu, {"pc": pc, "sp": slot + width})
    )


def find_caller(callee: StackFrame, grand_callee: StackFrame | None, walk: ThreadWalk) -> CallerSearch:
    return first_success([lambda: caller_by_cfi(callee, walk), lambda: caller_by_scan(callee, walk)])


def post_checks(
    callee: StackFrame, caller: CpuContext, trust: FrameTrust, walk: ThreadWalk
) -> list[PostCheck]:
    if walk.env.options.breakpad:
        return [instruction_check(caller), breakpad_sp_check(callee, caller)]
    return [instruction_check(caller), leaf_tolerant_sp(callee, caller)]


UNWINDER = CpuUnwinder(find_caller, post_checks, INSTRUCTION_ADJUSTMENT)
