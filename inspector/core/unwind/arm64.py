"""ARM64 unwinder (both context layouts): STACK CFI → frame pointer → stack scan (rust-minidump's order).

rust-minidump's `arm64.rs` and `arm64_old.rs` are identical apart from the context type;
our `CpuContext` covers both layouts with the same register names, so one module serves
both. Every recovered pc, lr and fp is pointer-auth stripped (`WalkEnvironment.pointer_auth_mask`).

Under the Breakpad policy the frame-pointer step is Breakpad's: pc' = the callee's lr,
lr' = *(fp+8), and pointers are stripped only when the result lands in a module.
"""

from __future__ import annotations

from functools import partial

from inspector.core.minidump import CpuContext
from inspector.core.types import Cpu
from inspector.core.unwind.cfi import CallerRegisters, cfi_attempt
from inspector.core.unwind.cpu import CpuDescription
from inspector.core.unwind.frame import FrameTrust, StackFrame
from inspector.core.unwind.options import WalkPolicy
from inspector.core.unwind.step import (
    BREAKPAD_SP,
    NULL_INSTRUCTION,
    CpuUnwinder,
    PostCheck,
    StrategyResult,
    ThreadWalk,
    scan_from_stack_pointer,
    scan_opening,
    scanned_caller,
)
from inspector.core.unwind.trace import (
    CheckRow,
    FramePointerDetail,
    FramePointerProbe,
    Outcome,
    Strategy,
    StrategyAttempt,
    TerminationReason,
    Text,
    WordRow,
)

# ---- the CPU --------------------------------------------------------------------------------

U64 = (1 << 64) - 1
#: User-space code addresses: above the first page and below 2^52.
LOWEST_CODE_ADDRESS = 0x1000
HIGHEST_CODE_ADDRESS = 0x000F_FFFF_FFFF_FFFF


def is_non_canonical(pointer: int) -> bool:
    return not LOWEST_CODE_ADDRESS <= pointer <= HIGHEST_CODE_ADDRESS


def _prefilter(value: int) -> str | None:
    return "outside 0x1000..=0xfffffffffffff" if is_non_canonical(value) else None


ARM64 = CpuDescription(
    Cpu.ARM64,
    word_size=8,
    instruction_pointer="pc",
    stack_pointer="sp",
    frame_pointer="fp",  # x29
    callee_saved=("x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "fp"),
    instruction_adjustment=4,
    link_register="lr",  # x30
    scan_prefilter=_prefilter,
)
POINTER_WIDTH = ARM64.word_size

# ---- strategies -----------------------------------------------------------------------------


def caller_by_cfi(callee: StackFrame, walk: ThreadWalk, *, breakpad: bool = False) -> StrategyResult:
    """STACK CFI, then pointer-auth stripping of the caller's pc, lr and fp.

    Situation (rust-minidump PR #1155): dump_syms ≥ 2.3.6 emits function-entry rows
    `.ra: x30`; a caller found by the frame pointer has an lr recovered from the next frame
    record, which is right at a function entry but stale anywhere else. Handling: such a
    heuristic lr is readable by the rules only when the INIT row starts exactly at the
    instruction. `breakpad`: Breakpad's variant (its pointer-auth stripping, no heuristic lr).
    """
    ctx = callee.context
    env = walk.env
    if not ctx.is_valid("sp"):
        return StrategyResult.failed(StrategyAttempt(Strategy.CFI, Outcome.NOT_APPLICABLE, "sp is not known"))
    heuristic_lr = not breakpad and callee.trust is FrameTrust.FRAME_POINTER and env.options.arm64_lr_recovery
    strip = env.breakpad_pointer_auth_strip if breakpad else env.strip_pointer_auth

    def strip_pointers(caller: CallerRegisters) -> None:
        for name in ("pc", "lr", "fp"):
            if name == "pc" or name in caller.valid:
                caller.values[name] = strip(caller.raw(name))

    attempt, caller = cfi_attempt(
        callee,
        walk,
        forwarded=ARM64.callee_saved,
        entry_only=frozenset({"lr", "x30"}) if heuristic_lr else frozenset(),
        adjust=strip_pointers,
    )
    if caller is None:
        return StrategyResult.failed(attempt)
    return StrategyResult((attempt,), caller, FrameTrust.CFI)


def caller_by_frame_pointer(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """Assume a normal (non-leaf) frame: fp' = *fp, pc = *(fp+8), sp' = fp+16; no stack checks.

    Situation: without CFI, leaf functions cannot be told from normal ones; assuming a
    normal frame costs at worst the leaf's caller, and keeps the rest in sync. A zero fp
    yields (pc 0, sp unchanged) so the post-checks end the walk. rust-minidump ≥ 0.26 also
    recovers the caller's lr from the caller's own frame record (*(fp'+8)) for a later
    function-entry CFI row. A pc outside user space is rejected.
    """
    strategy = Strategy.FRAME_POINTER
    env = walk.env
    ctx = callee.context
    last_fp, last_sp = ctx.get("fp"), ctx.get("sp")
    if last_fp is None or last_sp is None:
        return StrategyResult.failed(
            StrategyAttempt(strategy, Outcome.NOT_APPLICABLE, "fp or sp is not known")
        )
    if last_fp >= U64 - POINTER_WIDTH * 2:
        return StrategyResult.failed(
            StrategyAttempt(strategy, Outcome.FAILED, f"fp {last_fp:#x} would overflow")
        )
    reads: tuple[WordRow, ...] = ()
    if last_fp == 0:
        caller_fp, caller_pc, caller_sp = 0, 0, last_sp
    else:
        fp_word = walk.memory.word(last_fp, 8, "caller fp", "fp")
        pc_word = walk.memory.word(last_fp + 8, 8, "return address", "pc")
        reads = (fp_word, pc_word)
        read_fp, read_pc = fp_word[2], pc_word[2]
        if read_fp is None or read_pc is None:
            detail = FramePointerDetail("fp", last_fp, (FramePointerProbe(0, reads, (), False),))
            return StrategyResult.failed(
                StrategyAttempt(strategy, Outcome.FAILED, "cannot read the frame record", detail)
            )
        caller_fp, caller_pc, caller_sp = read_fp, read_pc, last_fp + 16
    caller_fp = env.strip_pointer_auth(caller_fp)
    caller_pc = env.strip_pointer_auth(caller_pc)
    caller_lr = None
    if env.options.arm64_lr_recovery and caller_fp != 0 and caller_fp + 8 <= U64:
        lr_word = walk.memory.word(caller_fp + 8, 8, "caller lr (from the caller's frame record)", "lr")
        reads += (lr_word,)
        if lr_word[2] is not None:
            caller_lr = env.strip_pointer_auth(lr_word[2])
    plausible = not is_non_canonical(caller_pc)
    checks: tuple[CheckRow, ...] = (
        (("return address {:#x} is in 0x1000..=0xfffffffffffff", caller_pc), plausible),
    )
    probe = FramePointerProbe(0, reads, checks, plausible)
    detail = FramePointerDetail("fp", last_fp, (probe,))
    if not plausible:
        return StrategyResult.failed(
            StrategyAttempt(strategy, Outcome.FAILED, "implausible return address", detail)
        )
    registers = {"pc": caller_pc, "fp": caller_fp, "sp": caller_sp}
    if caller_lr is not None:
        registers["lr"] = caller_lr
    caller = CpuContext.from_registers(ctx.cpu, registers, layout=ctx.layout)
    why: Text = "fp is 0: end of the chain" if last_fp == 0 else ("frame record at fp {:#x}", last_fp)
    attempt = StrategyAttempt(strategy, Outcome.FOUND, why, detail, caller)
    return StrategyResult((attempt,), caller, FrameTrust.FRAME_POINTER)


def _breakpad_frame_pointer(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """Breakpad's arm64 frame pointer: pc' = callee lr, fp' = *fp, lr' = *(fp+8), sp' = fp+16.

    (Breakpad's extra repair of an unknown callee lr from the callee's frame record,
    CorrectRegLRByFramePointer, is not modelled: without a valid lr this step fails.)
    """
    strategy = Strategy.FRAME_POINTER
    env = walk.env
    ctx = callee.context
    lr = ctx.get("lr")
    last_fp = ctx.value("fp")
    if lr is None:
        return StrategyResult.failed(
            StrategyAttempt(strategy, Outcome.NOT_APPLICABLE, "the callee's lr is not known")
        )
    reads: tuple[WordRow, ...] = ()
    caller_fp = caller_lr = 0
    if last_fp:
        fp_word = walk.memory.word(last_fp, 8, "caller fp", "fp")
        lr_word = walk.memory.word((last_fp + 8) & U64, 8, "caller lr", "lr")
        reads = (fp_word, lr_word)
        read_fp, read_lr = fp_word[2], lr_word[2]
        if read_fp is None or read_lr is None:
            detail = FramePointerDetail("fp", last_fp, (FramePointerProbe(0, reads, (), False),))
            return StrategyResult.failed(
                StrategyAttempt(strategy, Outcome.FAILED, "cannot read the frame record", detail)
            )
        caller_fp, caller_lr = read_fp, read_lr
    caller_lr = env.breakpad_pointer_auth_strip(caller_lr)
    caller_sp = (last_fp + 16) & U64 if last_fp else ctx.value("sp")
    caller = ctx.with_registers({"pc": lr, "lr": caller_lr, "fp": caller_fp, "sp": caller_sp})
    detail = FramePointerDetail("fp", last_fp, (FramePointerProbe(0, reads, (), True),))
    attempt = StrategyAttempt(strategy, Outcome.FOUND, ("pc from the callee's lr {:#x}", lr), detail, caller)
    return StrategyResult((attempt,), caller, FrameTrust.FRAME_POINTER)


def caller_by_scan(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    closed = scan_opening(callee, walk)
    if closed is not None:
        return closed
    ctx = callee.context
    return scanned_caller(
        scan_from_stack_pointer(callee, walk),
        lambda slot, pc: CpuContext.from_registers(ctx.cpu, {"pc": pc, "sp": slot + 8}, layout=ctx.layout),
    )


def stack_pointer_check(
    callee: StackFrame, caller: CpuContext, trust: FrameTrust, walk: ThreadWalk
) -> CheckRow:
    """sp must not decrease; an unchanged sp is allowed only in narrow cases.

    Situation: an arm64 leaf function or a function-entry CFI row (`.cfa: sp`) leaves sp
    unchanged. Handling (rust-minidump ≥ 0.26): equal sp is accepted if pc changed and
    the callee is the context frame or the caller came from CFI, so the allowance cannot
    repeat a frame forever (0.25: only when unwinding the context frame).
    """
    old, new = callee.context.value("sp"), caller.value("sp")
    if new != old:
        return (("caller sp {:#x} is not below callee sp {:#x}", new, old), new > old)
    context_leaf = callee.trust is FrameTrust.CONTEXT
    if walk.env.options.arm64_lr_recovery:
        pc_changed = caller.value("pc") != callee.context.value("pc")
        allowed = pc_changed and (context_leaf or trust is FrameTrust.CFI)
        text = f"caller sp equals callee sp {old:#x}: allowed only if pc changed and (context frame or CFI)"
    else:
        allowed = context_leaf
        text = f"caller sp equals callee sp {old:#x}: allowed only when unwinding the context frame"
    return (text, allowed)


#: rust-minidump's arm64 stack-pointer rule as a termination guard
ARM64_SP = PostCheck(stack_pointer_check, TerminationReason.STACK_POINTER_NOT_INCREASING)


UNWINDER = CpuUnwinder(
    ARM64,
    strategies={
        WalkPolicy.RUST_MINIDUMP: (caller_by_cfi, caller_by_frame_pointer, caller_by_scan),
        WalkPolicy.BREAKPAD: (partial(caller_by_cfi, breakpad=True), _breakpad_frame_pointer, caller_by_scan),
    },
    post_checks={
        WalkPolicy.RUST_MINIDUMP: (NULL_INSTRUCTION, ARM64_SP),
        WalkPolicy.BREAKPAD: (NULL_INSTRUCTION, BREAKPAD_SP),
    },
)
