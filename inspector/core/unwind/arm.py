"""32-bit ARM unwinder: STACK CFI → frame pointer (iOS only) → stack scan (rust-minidump's order).

Under the Breakpad policy: STACK CFI is skipped on iOS, and the scan windows and
termination rule are Breakpad's.
"""

from __future__ import annotations

from inspector.core.minidump import CpuContext
from inspector.core.types import Os
from inspector.core.unwind.cfi import cfi_strategy
from inspector.core.unwind.frame import FrameTrust, StackFrame
from inspector.core.unwind.scan import scan_stack, scan_words
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
from inspector.core.unwind.trace import (
    FramePointerDetail,
    FramePointerProbe,
    Outcome,
    Strategy,
    StrategyAttempt,
)

# ---- constants ------------------------------------------------------------------------------

POINTER_WIDTH = 4
U32 = 0xFFFF_FFFF
PROGRAM_COUNTER = "pc"
STACK_POINTER = "sp"
FRAME_POINTER = "fp"  # r11; rust-minidump uses it on iOS too
LINK_REGISTER = "lr"
CALLEE_SAVED_REGS = ("r4", "r5", "r6", "r7", "r8", "r9", "r10", "fp")
INSTRUCTION_ADJUSTMENT = 2


def caller_by_cfi(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    if walk.env.options.breakpad and walk.env.os is Os.IOS:
        return StrategyResult.failed(
            StrategyAttempt(Strategy.CFI, Outcome.NOT_APPLICABLE, "Breakpad does not use CFI on iOS ARM")
        )
    return cfi_strategy(callee, walk, stack_pointer=STACK_POINTER, forwarded=CALLEE_SAVED_REGS)


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
    last_fp, last_sp = ctx.get(FRAME_POINTER), ctx.get(STACK_POINTER)
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
        fp_word = walk.memory.word(last_fp, 4, "caller fp")
        pc_word = walk.memory.word(last_fp + 4, 4, "return address")
        ok = fp_word.value is not None and pc_word.value is not None
        probe = FramePointerProbe(0, (fp_word, pc_word), (), ok)
        if fp_word.value is None or pc_word.value is None:
            detail = FramePointerDetail(FRAME_POINTER, last_fp, (probe,))
            return StrategyResult.failed(
                StrategyAttempt(strategy, Outcome.FAILED, "cannot read the frame record", detail)
            )
        caller_fp, caller_pc, caller_sp = fp_word.value, pc_word.value, last_fp + 8
    caller = CpuContext.from_registers(ctx.cpu, {"pc": caller_pc, "fp": caller_fp, "sp": caller_sp})
    detail = FramePointerDetail(FRAME_POINTER, last_fp, (probe,))
    reason = "fp is 0: end of the chain" if last_fp == 0 else f"frame record at fp {last_fp:#x}"
    attempt = StrategyAttempt(strategy, Outcome.FOUND, reason, detail, tuple(caller.valid_registers()))
    return StrategyResult((attempt,), caller, FrameTrust.FRAME_POINTER)


def caller_by_scan(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """Stack scan; no pre-filter and no fp recovery (as Breakpad)."""
    strategy = Strategy.SCAN
    ctx = callee.context
    last_sp = ctx.get(STACK_POINTER)
    if last_sp is None:
        return StrategyResult.failed(StrategyAttempt(strategy, Outcome.NOT_APPLICABLE, "sp is not known"))
    if not walk.scan_allowed:
        return StrategyResult.failed(
            StrategyAttempt(strategy, Outcome.NOT_APPLICABLE, walk.scan_disabled_reason)
        )
    result = scan_stack(
        walk.env, walk.memory, start=last_sp, words=scan_words(walk.env, callee.trust), width=4
    )
    return scanned_caller(
        result, lambda slot, pc: CpuContext.from_registers(ctx.cpu, {"pc": pc, "sp": slot + 4})
    )


def find_caller(callee: StackFrame, grand_callee: StackFrame | None, walk: ThreadWalk) -> CallerSearch:
    return first_success(
        [
            lambda: caller_by_cfi(callee, walk),
            lambda: caller_by_frame_pointer(callee, walk),
            lambda: caller_by_scan(callee, walk),
        ]
    )


def post_checks(
    callee: StackFrame, caller: CpuContext, trust: FrameTrust, walk: ThreadWalk
) -> list[PostCheck]:
    if walk.env.options.breakpad:
        return [instruction_check(caller), breakpad_sp_check(callee, caller)]
    return [instruction_check(caller), leaf_tolerant_sp(callee, caller)]


UNWINDER = CpuUnwinder(find_caller, post_checks, INSTRUCTION_ADJUSTMENT)
