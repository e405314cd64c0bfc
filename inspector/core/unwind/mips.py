"""MIPS unwinder (32- and 64-bit): STACK CFI → stack scan (rust-minidump's order; no frame pointer).

MIPS32 works in 4-byte words (rust-minidump's Mips32Context), MIPS64 in 8-byte words.
"""

from __future__ import annotations

from inspector.core.minidump import CpuContext
from inspector.core.record import replace
from inspector.core.types import Cpu
from inspector.core.unwind.cfi import cfi_strategy
from inspector.core.unwind.cpu import CpuDescription
from inspector.core.unwind.frame import FrameTrust, StackFrame
from inspector.core.unwind.options import WalkPolicy
from inspector.core.unwind.scan import scan_stack
from inspector.core.unwind.step import (
    BREAKPAD_SP,
    LEAF_TOLERANT_SP,
    NULL_INSTRUCTION,
    CpuUnwinder,
    StrategyResult,
    ThreadWalk,
    scan_opening,
    scanned_caller,
)
from inspector.core.unwind.trace import Outcome, Strategy, StrategyAttempt

# ---- the CPU --------------------------------------------------------------------------------

#: The scan covers 1024 bytes of stack (256 words on MIPS32, 128 on MIPS64).
MAX_STACK_SIZE = 1024
#: MIPS32 callers reserve 4 argument words below the return address; skipped after frame 0.
MIN_ARGS = 4


def _prefilter(value: int) -> str | None:
    return "below 0x1000" if value < 0x1000 else None


MIPS32 = CpuDescription(
    Cpu.MIPS,
    word_size=4,  # rust-minidump's Mips32Context: 64-bit registers read as 32-bit words
    instruction_pointer="pc",
    stack_pointer="sp",
    frame_pointer=None,  # rust-minidump does not unwind MIPS by frame pointer
    callee_saved=("s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "gp", "sp", "fp"),
    instruction_adjustment=8,
    link_register="ra",
    scan_prefilter=_prefilter,
)
MIPS64 = replace(MIPS32, cpu=Cpu.MIPS64, word_size=8)

# ---- strategies -----------------------------------------------------------------------------

#: STACK CFI, as every CPU.
caller_by_cfi = cfi_strategy


def caller_by_scan(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """Scan 1024 bytes; on MIPS32, after the context frame, skip the 4 argument words first."""
    closed = scan_opening(callee, walk)
    if closed is not None:
        return closed
    cpu = walk.cpu
    ctx = callee.context
    width = cpu.word_size
    count = MAX_STACK_SIZE // width
    start = ctx.value("sp") & cpu.word_mask  # MIPS32 reads its 64-bit registers as 32-bit
    if width == 4 and callee.trust is not FrameTrust.CONTEXT:
        start += MIN_ARGS * width
        count -= MIN_ARGS
        if start > 0xFFFF_FFFF:
            return StrategyResult.failed(StrategyAttempt(Strategy.SCAN, Outcome.FAILED, "sp + 16 overflows"))
    result = scan_stack(
        walk.env, walk.memory, start=start, words=count, width=width, prefilter=cpu.scan_prefilter
    )
    return scanned_caller(
        result, lambda slot, pc: CpuContext.from_registers(ctx.cpu, {"pc": pc, "sp": slot + width})
    )


_STRATEGIES = {
    WalkPolicy.RUST_MINIDUMP: (caller_by_cfi, caller_by_scan),
    WalkPolicy.BREAKPAD: (caller_by_cfi, caller_by_scan),
}
_POST_CHECKS = {
    WalkPolicy.RUST_MINIDUMP: (NULL_INSTRUCTION, LEAF_TOLERANT_SP),
    WalkPolicy.BREAKPAD: (NULL_INSTRUCTION, BREAKPAD_SP),
}
UNWINDER = CpuUnwinder(MIPS32, _STRATEGIES, _POST_CHECKS)
UNWINDER_64 = CpuUnwinder(MIPS64, _STRATEGIES, _POST_CHECKS)
